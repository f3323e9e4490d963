//! Escalations: a request to run outside the sandbox, or with extra paths or network access, is
//! never allowed by a rule, gets a fresh review that knows what it asks for, and every extra path
//! must be allowed on its own. Through the API (`escalation`), Codex's PermissionRequest
//! (`approval_context`) and Claude Code's `dangerouslyDisableSandbox`.

use crate::common::*;
use serde_json::{Value, json};

/// A Codex PermissionRequest for `command` with an `approval_context`.
fn codex_permission(command: &str, ctx: Value) -> Value {
    json!({"session_id": "cx-1", "transcript_path": null, "cwd": "/work/repo",
           "hook_event_name": "PermissionRequest", "model": "gpt-5.3-codex",
           "permission_mode": "default", "turn_id": "t1", "tool_name": "Bash",
           "tool_input": {"command": command}, "approval_context": ctx})
}

fn behavior(v: &Value) -> &str {
    v["hookSpecificOutput"]["decision"]["behavior"]
        .as_str()
        .unwrap_or("")
}

async fn codex_hook(h: &Harness, body: &Value) -> Value {
    let (status, out) = h
        .call(
            "POST",
            "/v1/hooks/codex",
            Some(body.to_string().into_bytes()),
        )
        .await;
    assert_eq!(status, 200);
    out
}

#[tokio::test]
async fn require_escalated_is_never_rule_allowed_and_gets_a_fresh_review() {
    let reviewer = allowing_reviewer().await;
    let h = Harness::new(&format!(
        "{}memory_ttl_s = 600\n",
        openai_reviewer(&reviewer.uri(), 5_000)
    ));
    let ctx = json!({"sandbox_permissions": "require_escalated",
                     "justification": "git needs to write the index outside the sandbox"});
    // `git status` is rule-allowed inside the sandbox; outside it, the reviewer decides.
    let out = codex_hook(&h, &codex_permission("git status", ctx.clone())).await;
    assert_eq!(behavior(&out), "allow", "{out}");
    let recs = h.audit_records();
    let last = recs.last().expect("a record");
    assert_eq!(last["decided_by"], "reviewer", "{last}");
    assert_eq!(last["escalation"]["kind"], "unsandboxed");
    // The prompt states the escalation as a fact and fences the agent's justification.
    let sent = reviewer.received_requests().await.expect("recorded");
    let prompt = String::from_utf8_lossy(&sent[0].body).to_string();
    assert!(prompt.contains("WITHOUT the sandbox"), "{prompt}");
    // Blind evidence (the default) leaves the agent's own justification out.
    assert!(!prompt.contains("git needs to write the index"), "{prompt}");
    // No session memory for escalations: the same request is reviewed again.
    codex_hook(&h, &codex_permission("git status", ctx)).await;
    let calls = reviewer.received_requests().await.expect("recorded").len();
    assert_eq!(calls, 2, "an escalation is never answered from memory");
    // Deny rules come first: a denied command is denied by the rule, the reviewer not asked.
    let out = codex_hook(
        &h,
        &codex_permission(
            "git push origin main",
            json!({"sandbox_permissions": "require_escalated"}),
        ),
    )
    .await;
    assert_eq!(behavior(&out), "deny");
    assert_eq!(
        h.audit_records().last().expect("record")["decided_by"],
        "rule"
    );
    assert_eq!(
        reviewer.received_requests().await.expect("recorded").len(),
        2
    );
}

#[tokio::test]
async fn without_a_reviewer_an_escalation_is_denied_even_when_a_rule_allows_the_command() {
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    for ctx in [
        json!({"sandbox_permissions": "require_escalated"}),
        // Network access for a command: not rule-allowed either.
        json!({"sandbox_permissions": "with_additional_permissions",
               "additional_permissions": {"network": {"enabled": true}}}),
        // No approval_context at all: taken as the widest request.
        Value::Null,
    ] {
        let mut body = codex_permission("git status", ctx.clone());
        if ctx.is_null() {
            body.as_object_mut()
                .expect("object")
                .remove("approval_context");
        }
        let out = codex_hook(&h, &body).await;
        assert_eq!(behavior(&out), "deny", "{ctx}: {out}");
        assert_eq!(
            h.audit_records().last().expect("record")["decided_by"],
            "fallback"
        );
    }
    // use_default asks for nothing beyond the sandbox: the rule decides.
    let out = codex_hook(
        &h,
        &codex_permission("git status", json!({"sandbox_permissions": "use_default"})),
    )
    .await;
    assert_eq!(behavior(&out), "allow", "{out}");
    // A kind guardian does not know is a deny naming the field.
    let out = codex_hook(
        &h,
        &codex_permission("git status", json!({"sandbox_permissions": "everything"})),
    )
    .await;
    assert_eq!(behavior(&out), "deny");
    assert!(
        out.to_string()
            .contains("approval_context.sandbox_permissions"),
        "{out}"
    );
}

#[tokio::test]
async fn every_additional_path_must_be_allowed() {
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    let extra = |read: Value, write: Value| {
        json!({"sandbox_permissions": "with_additional_permissions",
               "justification": "needs the sources",
               "additional_permissions": {"file_system": {"read": read, "write": write}}})
    };
    // A read of src/ (Read(./src/**) allows it) for a rule-allowed command: allowed, and each
    // path is audited as its own read.
    let out = codex_hook(
        &h,
        &codex_permission(
            "git status",
            extra(json!(["/work/repo/src/lib.rs"]), json!([])),
        ),
    )
    .await;
    assert_eq!(behavior(&out), "allow", "{out}");
    let recs = h.audit_records();
    assert!(
        recs.iter().any(|r| r["action"]["kind"] == "read"
            && r["action"]["path"] == "/work/repo/src/lib.rs"
            && r["decision"] == "allow"),
        "{recs:?}"
    );
    // A write to a protected path (authorized_keys) makes the whole request a deny.
    let out = codex_hook(
        &h,
        &codex_permission(
            "git status",
            extra(
                json!(["/work/repo/src/lib.rs"]),
                json!(["/home/dev/.ssh/authorized_keys"]),
            ),
        ),
    )
    .await;
    assert_eq!(behavior(&out), "deny", "{out}");
    let recs = h.audit_records();
    let keys = recs
        .iter()
        .find(|r| r["action"]["path"] == "/home/dev/.ssh/authorized_keys")
        .expect("the extra write path is reviewed and audited");
    assert_eq!(keys["action"]["kind"], "write");
    assert_eq!(keys["decision"], "deny", "{keys}");
    // A denied read (Read(./.env)) too.
    let out = codex_hook(
        &h,
        &codex_permission("git status", extra(json!(["/work/repo/.env"]), json!([]))),
    )
    .await;
    assert_eq!(behavior(&out), "deny", "{out}");
    // Paths that are not strings are refused, naming the field.
    let out = codex_hook(
        &h,
        &codex_permission("git status", extra(json!([1]), json!([]))),
    )
    .await;
    assert_eq!(behavior(&out), "deny");
    assert!(out.to_string().contains("file_system.read"), "{out}");
}

#[tokio::test]
async fn the_api_takes_escalations_and_names_bad_fields() {
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    let mut body = shell("git status");
    let (_, out) = h.review(body.clone()).await;
    assert_eq!(out["decision"], "allow");
    body["escalation"] = json!({"kind": "unsandboxed", "justification": "please"});
    let (status, out) = h.review(body.clone()).await;
    assert_eq!(status, 200);
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["decided_by"], "fallback");
    assert_eq!(out["unreviewed"], true, "no reviewer could answer: {out}");
    // An escalation naming two paths is three reviews, each audited once.
    let before = h.audit_records().len();
    body["escalation"] = json!({"kind": "additional_permissions",
        "read": ["/work/repo/src/a.rs"], "write": ["/work/repo/src/b.rs"]});
    h.review(body.clone()).await;
    let recs = h.audit_records();
    assert_eq!(recs.len() - before, 3, "{:?}", &recs[before..]);
    // A protected extra write is never rule-allowed: with no reviewer, denied.
    body["escalation"] =
        json!({"kind": "additional_permissions", "write": ["/work/repo/.git/hooks/pre-commit"]});
    let (_, out) = h.review(body.clone()).await;
    assert_eq!(out["decision"], "deny", "{out}");
    assert!(
        out["message"].as_str().unwrap_or("").contains(".git/hooks"),
        "{out}"
    );
    // An extra read a deny rule matches is a rule deny, never softened into a question.
    body["escalation"] = json!({"kind": "additional_permissions", "read": ["/work/repo/.env"]});
    let (_, out) = h.review(body.clone()).await;
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["decided_by"], "rule", "{out}");
    assert!(out.get("unreviewed").is_none(), "{out}");
    body["escalation"] = json!({"kind": "additional_permissions", "write": [""]});
    let (status, out) = h.review(body.clone()).await;
    assert_eq!(status, 400);
    assert_eq!(out["error"]["field"], "escalation.write[0]");
    body["escalation"] = json!({"kind": "root"});
    let (status, out) = h.review(body).await;
    assert_eq!(status, 400);
    assert!(
        out["error"]["field"]
            .as_str()
            .unwrap_or("")
            .starts_with("escalation"),
        "{out}"
    );
}

#[tokio::test]
async fn claude_code_dangerously_disable_sandbox_is_an_escalation() {
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    let input = |disable: bool| {
        json!({"session_id": format!("cc-{disable}"), "transcript_path": null, "cwd": "/work/repo",
               "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "git status", "dangerouslyDisableSandbox": disable}})
    };
    let decision = |v: &Value| {
        v["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let (_, out) = h
        .call(
            "POST",
            "/v1/hooks/claude-code",
            Some(input(false).to_string().into_bytes()),
        )
        .await;
    assert_eq!(decision(&out), "allow", "{out}");
    let (_, out) = h
        .call(
            "POST",
            "/v1/hooks/claude-code",
            Some(input(true).to_string().into_bytes()),
        )
        .await;
    assert_eq!(decision(&out), "deny", "{out}");
    // At a terminal, the unreviewed escalation is a question to the user instead.
    let (_, out) = h
        .call(
            "POST",
            "/v1/hooks/claude-code?unreviewed=ask",
            Some(input(true).to_string().into_bytes()),
        )
        .await;
    assert_eq!(decision(&out), "ask", "{out}");
    let last = h.audit_records().pop().expect("record");
    assert_eq!(last["deferred_to_user"], true, "{last}");
    assert_eq!(last["escalation"]["kind"], "unsandboxed");
}

/// Requests that must all be allowed (a patch's files, an escalation's paths): the first deny
/// answers, and the reviews still running finish anyway, so every one of them is audited.
#[tokio::test]
async fn after_the_first_deny_the_other_reviews_still_finish_and_are_audited() {
    let reviewer = fake_reviewer(
        wiremock::ResponseTemplate::new(200)
            .set_body_json(completion(&verdict("low", "high", "allow")))
            .set_delay(std::time::Duration::from_millis(400)),
    )
    .await;
    let h = Harness::new(&openai_reviewer(&reviewer.uri(), 5_000));
    let write = |path: &str| {
        guardian::ReviewRequest::from_json(
            json!({"action": {"kind": "write", "path": path, "cwd": "/work/repo"},
                   "session": {"id": "patch-1", "workspace_roots": ["/work/repo"]}})
            .to_string()
            .as_bytes(),
        )
        .expect("valid")
    };
    let resp = h
        .guardian
        .review_all(
            vec![
                write("/work/repo/notes-a.txt"),
                guardian::ReviewRequest::from_json(
                    shell("git push origin main").to_string().as_bytes(),
                )
                .expect("valid"),
                write("/work/repo/notes-b.txt"),
            ],
            "test",
            guardian::config::Unreviewed::Deny,
        )
        .await;
    assert_eq!(resp.decision, guardian::Decision::Deny);
    assert_eq!(resp.decided_by, guardian::DecidedBy::Rule, "{resp:?}");
    // The two reviewer-bound files are still reviewed and recorded.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let recs = h.audit_records();
        let paths: Vec<&str> = recs
            .iter()
            .filter_map(|r| r["action"]["path"].as_str())
            .collect();
        if recs.len() == 3 && paths.len() == 2 {
            assert!(paths.contains(&"/work/repo/notes-a.txt"), "{paths:?}");
            assert!(paths.contains(&"/work/repo/notes-b.txt"), "{paths:?}");
            assert_eq!(
                recs.iter()
                    .filter(|r| r["decided_by"] == "reviewer")
                    .count(),
                2
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "only {} of 3 requests audited: {paths:?}",
            recs.len()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn with_full_evidence_the_justification_is_fenced_evidence() {
    let reviewer = allowing_reviewer().await;
    let h = Harness::new(&format!(
        "{}evidence = \"full\"\n",
        openai_reviewer(&reviewer.uri(), 5_000)
    ));
    let ctx = json!({"sandbox_permissions": "require_escalated",
                     "justification": "git needs to write the index outside the sandbox"});
    let out = codex_hook(&h, &codex_permission("git status", ctx)).await;
    assert_eq!(behavior(&out), "allow", "{out}");
    let sent = reviewer.received_requests().await.expect("recorded");
    let prompt = String::from_utf8_lossy(&sent[0].body).to_string();
    assert!(
        prompt.contains("BEGIN UNTRUSTED AGENT JUSTIFICATION"),
        "{prompt}"
    );
    assert!(prompt.contains("git needs to write the index"), "{prompt}");
}
