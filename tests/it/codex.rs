//! Codex hooks: its PreToolUse shapes (Bash, apply_patch patches, MCP) through /v1/hooks/codex,
//! and the README's config.toml command against a real server.

use std::path::Path;

use crate::common::*;
use axum::http::StatusCode;
use serde_json::{Value, json};

fn fixture(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/codex")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(p).expect("fixture")).expect("JSON")
}

/// Codex's reading of a PreToolUse answer: `deny`, or `none` for `{}` (no objection: Codex
/// rejects `permissionDecision: "allow"` without `updatedInput`).
fn decision(v: &Value) -> &str {
    if v.as_object().is_some_and(|m| m.is_empty()) {
        return "none";
    }
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("")
}

const EDITS: &str = "[reviewer]\nbackend = \"none\"\n";

#[tokio::test]
async fn codex_shapes_are_translated_and_decided() {
    let h = Harness::new(EDITS);
    let call = |body: Value| {
        let h = &h;
        async move {
            let (status, out) = h
                .call(
                    "POST",
                    "/v1/hooks/codex",
                    Some(body.to_string().into_bytes()),
                )
                .await;
            assert_eq!(status, StatusCode::OK);
            out
        }
    };
    assert_eq!(
        decision(&call(fixture("pretooluse-bash.json")).await),
        "deny"
    );
    // A patch touching src/ and a git hook: the hook write is protected, so the patch is denied.
    let out = call(fixture("pretooluse-apply-patch.json")).await;
    assert_eq!(decision(&out), "deny");
    assert_eq!(
        decision(&call(fixture("pretooluse-mcp.json")).await),
        "deny"
    );
    let recs = h.audit_records();
    assert!(recs.iter().all(|r| r["agent"] == "codex"), "{recs:?}");
    assert_eq!(recs[0]["session_id"], "019a-thread");
    let patch_recs: Vec<&Value> = recs
        .iter()
        .filter(|r| r["action"]["kind"] == "write")
        .collect();
    assert_eq!(patch_recs[0]["action"]["path"], "src/lib.rs");
    assert!(
        patch_recs[0]["action"]["diff"]
            .as_str()
            .unwrap_or("")
            .contains("+    let n = s.chars().count();")
    );
}

/// A router over the test policy with `allow`/`deny` rules added, and its audit file's folder.
fn codex_router(allow: &str, deny: &str) -> (tempfile::TempDir, axum::Router) {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = config_text(EDITS, &dir.path().join("a.jsonl"))
        .replace("allow = [", &format!("allow = [{allow}"))
        .replace("deny  = [", &format!("deny  = [{deny}"));
    let cfg = guardian::Config::parse(&text, "guardian.toml").expect("parses");
    let g = std::sync::Arc::new(guardian::Guardian::from_config(cfg).expect("builds"));
    (dir, guardian::server::router(g))
}

/// POSTs a hook input to `/v1/hooks/codex`; hooks always answer 200.
async fn post_hook(router: &axum::Router, body: Value) -> Value {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let req = axum::http::Request::builder()
        .method("POST")
        .uri("/v1/hooks/codex")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body.to_string()))
        .expect("request");
    let resp = router.clone().oneshot(req).await.expect("answer");
    assert_eq!(resp.status(), StatusCode::OK);
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    serde_json::from_slice::<Value>(&bytes).expect("json")
}

#[tokio::test]
async fn every_file_of_a_patch_must_be_allowed() {
    let (_dir, router) = codex_router("\"Edit(./src/**)\", ", "");
    // src/lib.rs, and a move from src/old.rs to src/new.rs: all inside Edit(./src/**).
    assert_eq!(
        decision(&post_hook(&router, fixture("pretooluse-apply-patch-src.json")).await),
        "none"
    );
    // The same with a git hook added: denied.
    assert_eq!(
        decision(&post_hook(&router, fixture("pretooluse-apply-patch.json")).await),
        "deny"
    );
}

/// The files of a patch are reviewed together: three files needing the reviewer, which takes
/// 1 s per answer, fit a 2.5 s request backstop (one after the other they would take 3 s and be
/// cut off, a denial).
#[tokio::test]
async fn the_files_of_a_patch_are_reviewed_together() {
    let reviewer = fake_reviewer(
        wiremock::ResponseTemplate::new(200)
            .set_body_json(completion(&verdict("low", "high", "allow")))
            .set_delay(std::time::Duration::from_millis(1000)),
    )
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let text = config_text(
        &format!(
            "{}memory_ttl_s = 0\n",
            openai_reviewer(&reviewer.uri(), 20_000)
        ),
        &dir.path().join("a.jsonl"),
    )
    .replace("[server]\n", "[server]\nrequest_timeout_ms = 2500\n");
    let cfg = guardian::Config::parse(&text, "guardian.toml").expect("parses");
    let g = std::sync::Arc::new(guardian::Guardian::from_config(cfg).expect("builds"));
    let router = guardian::server::router(g);
    let patch = "*** Begin Patch\n*** Update File: a.rs\n@@\n-a\n+b\n*** Update File: b.rs\n@@\n-a\n+b\n*** Update File: c.rs\n@@\n-a\n+b\n*** End Patch\n";
    let input = json!({"session_id": "s", "cwd": "/work/repo", "hook_event_name": "PreToolUse",
                       "tool_name": "apply_patch", "tool_input": {"command": patch}});
    let out = post_hook(&router, input).await;
    assert_eq!(decision(&out), "none", "{out}");
    let calls = reviewer.received_requests().await.expect("recorded").len();
    assert_eq!(calls, 3, "one review per file");
}

#[test]
fn the_readme_codex_config_blocks_through_a_real_server() {
    let snippet: toml::Value = toml::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("integrations/codex/config.toml"),
        )
        .expect("snippet"),
    )
    .expect("valid TOML");
    let group = &snippet["hooks"]["PreToolUse"][0];
    assert_eq!(group["matcher"].as_str(), Some("Bash|apply_patch|mcp__.*"));
    let command = group["hooks"][0]["command"].as_str().expect("command");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Server::start(dir.path(), PUSH_DENIED);
    let addr = server.addr.clone();
    let mut words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    let pos = words
        .iter()
        .position(|w| w == "--server")
        .expect("--server");
    words[pos + 1] = addr;
    let run = |input: &Value| run_with_stdin(&words[1..], &input.to_string());
    let out = run(&fixture("pretooluse-bash.json"));
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(decision(&answer), "deny");
    // The PermissionRequest hook runs the same command: a network approval for a host no rule
    // allows is denied in PermissionRequest's output shape.
    let perm = &snippet["hooks"]["PermissionRequest"][0];
    assert_eq!(perm["matcher"].as_str(), Some("Bash"));
    assert_eq!(perm["hooks"][0]["command"].as_str(), Some(command));
    let out = run(&fixture("permissionrequest-network-unknown.json"));
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(answer["hookSpecificOutput"]["decision"]["behavior"], "deny");
    server.stop();
    let out = run(&fixture("pretooluse-bash.json"));
    assert_eq!(out.status.code(), Some(2), "server down: the hook blocks");
}

/// Codex network-access approvals (`network_approval_context: {host, protocol}`, inside
/// `tool_input` or beside it): the command and the host must both be allowed.
#[tokio::test]
async fn network_access_approvals_judge_the_host() {
    let (dir, router) = codex_router(
        "\"Bash(pip install *)\", \"WebFetch(domain:pypi.org)\", ",
        "\"WebFetch(domain:pastebin.com)\", ",
    );
    let behavior = |v: &Value| {
        v["hookSpecificOutput"]["decision"]["behavior"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    // pip install reaching pypi.org: both allowed by rules.
    let out = post_hook(&router, fixture("permissionrequest-network-pypi.json")).await;
    assert_eq!(behavior(&out), "allow", "{out}");
    // The same command asking for pastebin.com (context beside tool_input): the host is denied.
    let out = post_hook(&router, fixture("permissionrequest-network-paste.json")).await;
    assert_eq!(behavior(&out), "deny", "{out}");
    assert!(out.to_string().contains("pastebin.com"), "{out}");
    // An unknown host over SOCKS5: no rule allows it, no reviewer: denied.
    let out = post_hook(&router, fixture("permissionrequest-network-unknown.json")).await;
    assert_eq!(behavior(&out), "deny", "{out}");
    // Without the network context the same command is allowed: the host is what decided.
    let mut plain = fixture("permissionrequest-network-unknown.json");
    plain["tool_input"] = serde_json::json!({"command": "pip install requests"});
    assert_eq!(behavior(&post_hook(&router, plain).await), "allow");
    // A context without a host is refused with a deny naming the field.
    let mut bad = fixture("permissionrequest-network-pypi.json");
    bad["tool_input"]["network_approval_context"] = serde_json::json!({"protocol": "https"});
    let out = post_hook(&router, bad).await;
    assert_eq!(behavior(&out), "deny");
    assert!(
        out.to_string().contains("network_approval_context.host"),
        "{out}"
    );
    let text = std::fs::read_to_string(dir.path().join("a.jsonl")).expect("audit");
    assert!(text.contains("\"url\":\"https://pypi.org/\""), "{text}");
    assert!(
        text.contains("\"url\":\"socks5://unknown-mirror.example/\""),
        "{text}"
    );
}

/// A Codex hook's `transcript_path` names the session's rollout: its user messages reach the
/// reviewer as the intent and transcript (Claude Code's transcript format is not the only one).
#[tokio::test]
async fn the_codex_rollout_reaches_the_reviewer() {
    let reviewer = allowing_reviewer().await;
    let h = Harness::new(&openai_reviewer(&reviewer.uri(), 5_000));
    let rollout = h.dir.path().join("rollout-2026-11-30.jsonl");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces/codex-rollout.jsonl"),
        &rollout,
    )
    .expect("copy");
    let input = json!({"session_id": "cx-r", "transcript_path": rollout.display().to_string(),
        "cwd": "/work/repo", "hook_event_name": "PreToolUse", "model": "m", "turn_id": "t",
        "tool_name": "Bash", "tool_input": {"command": "make build"}, "tool_use_id": "c1"});
    let (status, _) = h
        .call(
            "POST",
            "/v1/hooks/codex",
            Some(input.to_string().into_bytes()),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let rec = h.audit_records().pop().expect("record");
    let intent = rec["intent"]
        .as_str()
        .expect("the intent comes from the rollout");
    assert!(!intent.is_empty());
    let sent = reviewer.received_requests().await.expect("recorded");
    let prompt = String::from_utf8_lossy(&sent[0].body).to_string();
    assert!(prompt.contains("BEGIN UNTRUSTED USER INTENT"), "{prompt}");
    assert!(!prompt.contains("environment_context"), "{prompt}");
}
