//! The reviewer path against a fake OpenAI-compatible server: retries and backoff, sandbox
//! escalations, strict mode, session memory, coalescing, and the circuit breaker.

use std::time::Duration;

use crate::common::*;
use axum::http::StatusCode;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn server_with(responses: Vec<(ResponseTemplate, Option<u64>)>) -> MockServer {
    let server = MockServer::start().await;
    for (r, times) in responses {
        let m = Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(r);
        let m = match times {
            Some(n) => m.up_to_n_times(n),
            None => m,
        };
        m.mount(&server).await;
    }
    server
}

async fn calls(server: &MockServer) -> usize {
    server.received_requests().await.map_or(0, |r| r.len())
}

fn ok(risk: &str, auth: &str, outcome: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(completion(&verdict(risk, auth, outcome)))
}

fn with_session(mut body: serde_json::Value, id: &str) -> serde_json::Value {
    body["session"]["id"] = json!(id);
    body
}

#[tokio::test]
async fn transient_failures_are_retried_then_succeed() {
    let llm = server_with(vec![
        (ResponseTemplate::new(503), Some(1)),
        (
            ResponseTemplate::new(200).set_body_json(completion("not a verdict")),
            Some(1),
        ),
        (ok("low", "high", "allow"), None),
    ])
    .await;
    let h = Harness::new(&openai_reviewer(&llm.uri(), 10_000));
    let (status, body) = h.review(shell("cargo run")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["decision"], "allow", "{body}");
    assert_eq!(body["decided_by"], "reviewer");
    assert_eq!(calls(&llm).await, 3);
    assert_eq!(
        h.audit_of(body["id"].as_str().unwrap_or_default())["attempts"],
        3
    );
}

#[tokio::test]
async fn rate_limit_honours_retry_after() {
    let llm = server_with(vec![
        (
            ResponseTemplate::new(429).insert_header("Retry-After", "1"),
            Some(1),
        ),
        (ok("low", "high", "allow"), None),
    ])
    .await;
    let h = Harness::new(&openai_reviewer(&llm.uri(), 10_000));
    let (_, body) = h.review(shell("cargo run")).await;
    assert_eq!(body["decision"], "allow");
    let reqs = llm.received_requests().await.unwrap_or_default();
    assert_eq!(reqs.len(), 2);
}

#[tokio::test]
async fn attempts_are_bounded_and_non_transient_errors_are_not_retried() {
    let llm = server_with(vec![(ResponseTemplate::new(500), None)]).await;
    let h = Harness::new(&openai_reviewer(&llm.uri(), 10_000));
    let (_, body) = h.review(shell("cargo run")).await;
    assert_eq!(body["decided_by"], "fallback");
    assert_eq!(calls(&llm).await, 3, "max_attempts defaults to 3");
    let llm = server_with(vec![(ResponseTemplate::new(400), None)]).await;
    let h = Harness::new(&openai_reviewer(&llm.uri(), 10_000));
    let (_, body) = h.review(shell("cargo run")).await;
    assert_eq!(body["decided_by"], "fallback");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("HTTP 400")
    );
    assert_eq!(calls(&llm).await, 1);
}

#[tokio::test]
async fn sandbox_denied_retry_gets_a_fresh_review_even_when_a_rule_allows() {
    let llm = server_with(vec![(ok("medium", "high", "allow"), None)]).await;
    let h = Harness::new(&openai_reviewer(&llm.uri(), 10_000));
    let mut body = shell("git status");
    body["retry"] = json!({"sandbox_denied": true, "output": "fatal: Unable to create '/work/repo/.git/index.lock': Read-only file system", "previous_review_id": "rev_x"});
    let (_, resp) = h.review(body.clone()).await;
    assert_eq!(resp["decided_by"], "reviewer", "{resp}");
    let reqs = llm.received_requests().await.unwrap_or_default();
    assert_eq!(reqs.len(), 1);
    let sent: serde_json::Value = serde_json::from_slice(&reqs[0].body).expect("json");
    let user = sent["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(user.contains("WITHOUT the sandbox"), "{user}");
    assert!(
        user.contains("=== BEGIN UNTRUSTED RETRY OUTPUT ===")
            && user.contains("Read-only file system")
    );
    // Never from memory: the same retry again is reviewed again.
    let (_, resp) = h.review(body).await;
    assert_eq!(resp["decided_by"], "reviewer");
    assert_eq!(calls(&llm).await, 2);
    // Deny rules are checked first.
    let mut denied = shell("git push origin main");
    denied["retry"] = json!({"sandbox_denied": true});
    let (_, resp) = h.review(denied).await;
    assert_eq!(resp["decided_by"], "rule");
    assert_eq!(calls(&llm).await, 2);
    // A retry that was not a sandbox denial is refused.
    let mut not_sandbox = shell("cargo test");
    not_sandbox["retry"] = json!({"sandbox_denied": false, "output": "test failed"});
    let (_, resp) = h.review(not_sandbox).await;
    assert_eq!(resp["decision"], "deny");
    assert!(
        resp["message"]
            .as_str()
            .unwrap_or_default()
            .contains("only sandbox denials may escalate")
    );
    assert_eq!(calls(&llm).await, 2);
}

#[tokio::test]
async fn strict_mode_reviews_rule_allowed_actions_and_skips_memory() {
    let llm = server_with(vec![(ok("low", "high", "allow"), None)]).await;
    let h = Harness::new(&openai_reviewer(&llm.uri(), 10_000));
    let mut body = shell("git status");
    body["strict"] = json!(true);
    let (_, resp) = h.review(body.clone()).await;
    assert_eq!(resp["decided_by"], "reviewer");
    let (_, resp) = h.review(body).await;
    assert_eq!(
        resp["decided_by"], "reviewer",
        "strict mode never uses session memory"
    );
    assert_eq!(calls(&llm).await, 2);
    let mut denied = shell("git push origin main");
    denied["strict"] = json!(true);
    let (_, resp) = h.review(denied).await;
    assert_eq!(resp["decided_by"], "rule");
    assert_eq!(calls(&llm).await, 2);
}

#[tokio::test]
async fn session_memory_hits_misses_and_never_remembers_high_risk() {
    let llm = server_with(vec![(ok("low", "high", "allow"), None)]).await;
    let h = Harness::new(&openai_reviewer(&llm.uri(), 10_000));
    let (_, first) = h.review(shell("cargo run")).await;
    assert_eq!(first["decided_by"], "reviewer");
    let (_, second) = h.review(shell("cargo run")).await;
    assert_eq!(second["decided_by"], "session", "{second}");
    assert_eq!(second["decision"], "allow");
    assert_eq!(calls(&llm).await, 1);
    // Another session, another review.
    let (_, other) = h.review(with_session(shell("cargo run"), "s-2")).await;
    assert_eq!(other["decided_by"], "reviewer");
    // Another cwd is another action.
    let mut moved = shell("cargo run");
    moved["action"]["cwd"] = json!("/work/other");
    let (_, resp) = h.review(moved).await;
    assert_eq!(resp["decided_by"], "reviewer");
    assert_eq!(calls(&llm).await, 3);

    let llm = server_with(vec![(ok("high", "high", "allow"), None)]).await;
    let h = Harness::new(&openai_reviewer(&llm.uri(), 10_000));
    let (_, a) = h.review(shell("terraform apply")).await;
    assert_eq!(a["decision"], "allow");
    let (_, b) = h.review(shell("terraform apply")).await;
    assert_eq!(b["decided_by"], "reviewer", "high risk is never remembered");
    assert_eq!(calls(&llm).await, 2);
}

#[tokio::test]
async fn identical_concurrent_requests_share_one_review() {
    let llm = server_with(vec![(
        ok("low", "high", "allow").set_delay(Duration::from_millis(400)),
        None,
    )])
    .await;
    let h = Harness::new(&openai_reviewer(&llm.uri(), 10_000));
    let mut tasks = Vec::new();
    for _ in 0..5 {
        let g = h.guardian.clone();
        let req = guardian::ReviewRequest::from_json(
            shell("npm run deploy:staging").to_string().as_bytes(),
        )
        .expect("valid");
        tasks.push(tokio::spawn(async move { g.review(req, "test").await }));
    }
    for t in tasks {
        let resp = t.await.expect("task");
        assert_eq!(resp.decision, guardian::Decision::Allow);
    }
    assert_eq!(
        calls(&llm).await,
        1,
        "five identical concurrent requests, one upstream call"
    );
}

#[tokio::test]
async fn breaker_interrupts_after_three_denials_and_on_a_doom_loop() {
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    let (_, a) = h.review(shell("git push origin a")).await;
    let (_, b) = h.review(shell("git push origin b")).await;
    assert_eq!(a["interrupt"], false);
    assert_eq!(b["interrupt"], false);
    let (_, c) = h.review(shell("git push origin c")).await;
    assert_eq!(c["interrupt"], true, "{c}");
    assert!(
        c["message"]
            .as_str()
            .unwrap_or_default()
            .contains("report to your user")
    );
    let rec = h.audit_of(c["id"].as_str().unwrap_or_default());
    assert!(
        rec["interrupt"]
            .as_str()
            .unwrap_or_default()
            .contains("3 denials in a row")
    );
    // Polling an allowed read is not a loop, however often, even after the breaker tripped.
    for i in 0..6 {
        let (_, r) = h.review(shell("git status")).await;
        assert_eq!(r["decision"], "allow");
        assert_eq!(r["interrupt"], false, "call {i}: {r}");
        let (_, r) = h.review(with_session(shell("git status"), "poll")).await;
        assert_eq!(r["interrupt"], false, "call {i}: {r}");
    }
}

/// The repeat rule counts the same action denied again and again (a doom loop), and its message
/// says so; different denied actions do not trip it.
#[tokio::test]
async fn breaker_repeat_rule_counts_the_same_denied_action() {
    let h = Harness::new(
        "[reviewer]\nbackend = \"none\"\n[breaker]\nconsecutive_denials = 0\nwindow_denials = 0\nrepeats = 2\n",
    );
    let (_, a) = h
        .review(with_session(shell("git push origin a"), "s1"))
        .await;
    let (_, b) = h
        .review(with_session(shell("git push origin b"), "s1"))
        .await;
    assert_eq!(
        (a["interrupt"].clone(), b["interrupt"].clone()),
        (json!(false), json!(false))
    );
    let (_, c) = h
        .review(with_session(shell("git push origin b"), "s1"))
        .await;
    assert_eq!(c["decision"], "deny");
    assert_eq!(c["interrupt"], true, "{c}");
    let rec = h.audit_of(c["id"].as_str().unwrap_or_default());
    assert!(
        rec["interrupt"]
            .as_str()
            .unwrap_or_default()
            .contains("the same action was denied 2 times in a row"),
        "{rec}"
    );
    // An allowed action in between resets the count.
    let (_, d) = h
        .review(with_session(shell("git push origin d"), "s2"))
        .await;
    let (_, _) = h.review(with_session(shell("git status"), "s2")).await;
    let (_, e) = h
        .review(with_session(shell("git push origin d"), "s2"))
        .await;
    assert_eq!(
        (d["interrupt"].clone(), e["interrupt"].clone()),
        (json!(false), json!(false))
    );
}

#[tokio::test]
async fn rate_limits_deny_fast_and_say_so() {
    let llm = server_with(vec![(ok("low", "high", "allow"), None)]).await;
    let section = format!(
        "{}\n[limits]\nrequests_per_minute_per_client = 3\nreviewer_calls_per_minute = 1\n",
        openai_reviewer(&llm.uri(), 10_000)
    );
    let h = Harness::new(&section);
    let (_, a) = h.review(with_session(shell("make deploy-a"), "r1")).await;
    assert_eq!(a["decided_by"], "reviewer");
    // The reviewer quota (1 a minute) is used up: the next ask is denied without a call.
    let (_, b) = h.review(with_session(shell("make deploy-b"), "r2")).await;
    assert_eq!(b["decided_by"], "fallback");
    assert!(
        b["message"]
            .as_str()
            .unwrap_or_default()
            .contains("rate limited"),
        "{b}"
    );
    assert_eq!(calls(&llm).await, 1);
    // Rule decisions are not reviewer calls...
    let (_, c) = h.review(with_session(shell("git status"), "r3")).await;
    assert_eq!(c["decision"], "allow");
    // ...but every request counts against the client's quota (3 a minute).
    let (_, d) = h.review(with_session(shell("git status"), "r4")).await;
    assert_eq!(d["decided_by"], "fallback");
    assert!(
        d["message"]
            .as_str()
            .unwrap_or_default()
            .contains("rate limited")
    );
    assert_eq!(
        h.audit_of(d["id"].as_str().unwrap_or_default())["error"],
        "rate_limited"
    );
}

#[tokio::test]
async fn anthropic_backend_forces_the_verdict_tool() {
    let server = MockServer::start().await;
    let reply = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [
            {"type": "text", "text": "Let me record my verdict."},
            {"type": "tool_use", "id": "toolu_1", "name": "verdict",
             "input": {"rationale": "routine build", "risk_level": "low", "user_authorization": "high", "outcome": "allow"}}
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 812, "output_tokens": 40}
    });
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply))
        .mount(&server)
        .await;
    // Any variable that is set will do as the key's source; HOME always is.
    let section = format!(
        "[reviewer]\nbackend = \"anthropic\"\nbase_url = \"{}/v1\"\nmodel = \"claude-test\"\napi_key_env = \"HOME\"\ntimeout_ms = 10000\n",
        server.uri()
    );
    let h = Harness::new(&section);
    let (_, body) = h.review(shell("cargo run")).await;
    assert_eq!(body["decision"], "allow", "{body}");
    assert_eq!(body["decided_by"], "reviewer");
    let reqs = server.received_requests().await.unwrap_or_default();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(
        r.headers
            .get("anthropic-version")
            .and_then(|v| v.to_str().ok()),
        Some("2023-06-01")
    );
    assert_eq!(
        r.headers
            .get("x-api-key")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        std::env::var("HOME").ok()
    );
    let sent: serde_json::Value = serde_json::from_slice(&r.body).expect("json");
    assert_eq!(
        sent["tool_choice"],
        json!({"type": "tool", "name": "verdict"})
    );
    assert_eq!(sent["tools"][0]["input_schema"]["required"][0], "rationale");
    let rec = h.audit_of(body["id"].as_str().unwrap_or_default());
    assert_eq!(rec["reviewer_backend"], "anthropic");
    assert_eq!(rec["tokens"]["prompt_tokens"], 812);
}

#[tokio::test]
async fn anthropic_reply_without_the_tool_call_is_a_fallback_deny() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"content": [{"type": "text", "text": "allow"}]})),
        )
        .mount(&server)
        .await;
    let section = format!(
        "[reviewer]\nbackend = \"anthropic\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n",
        server.uri()
    );
    let h = Harness::new(&section);
    let (_, body) = h.review(shell("cargo run")).await;
    assert_eq!(body["decided_by"], "fallback");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not valid JSON"),
        "{body}"
    );
}

async fn two_stage_server(first: ResponseTemplate, full: ResponseTemplate) -> MockServer {
    use wiremock::matchers::body_string_contains;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_string_contains("fast first pass"))
        .respond_with(first)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(full)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn two_stage_first_pass_clears_only_clearly_benign_actions() {
    // First pass clears: one call, audited as one stage.
    let llm = two_stage_server(
        ok("low", "high", "allow"),
        ok("critical", "unknown", "deny"),
    )
    .await;
    let h = Harness::new(&format!(
        "{}two_stage = true\n",
        openai_reviewer(&llm.uri(), 10_000)
    ));
    let (_, body) = h.review(shell("cargo run --example demo")).await;
    assert_eq!(body["decision"], "allow", "{body}");
    assert_eq!(calls(&llm).await, 1);
    let rec = h.audit_of(body["id"].as_str().unwrap_or_default());
    assert_eq!(rec["stages"], json!(["first_pass"]));
    // First pass does not clear: the full review decides.
    let llm = two_stage_server(ok("medium", "low", "deny"), ok("high", "low", "deny")).await;
    let h = Harness::new(&format!(
        "{}two_stage = true\n",
        openai_reviewer(&llm.uri(), 10_000)
    ));
    let (_, body) = h
        .review(shell("curl -T notes.txt https://files.example"))
        .await;
    assert_eq!(body["decision"], "deny");
    assert_eq!(body["risk_level"], "high");
    assert_eq!(calls(&llm).await, 2);
    let rec = h.audit_of(body["id"].as_str().unwrap_or_default());
    assert_eq!(rec["stages"], json!(["first_pass", "full"]));
    // A first pass that fails is not a decision: the full review still runs.
    let llm = two_stage_server(ResponseTemplate::new(400), ok("low", "high", "allow")).await;
    let h = Harness::new(&format!(
        "{}two_stage = true\n",
        openai_reviewer(&llm.uri(), 10_000)
    ));
    let (_, body) = h.review(shell("cargo run --bin tool")).await;
    assert_eq!(body["decision"], "allow");
    assert_eq!(body["decided_by"], "reviewer");
}

#[tokio::test]
async fn tenant_policy_from_config_reaches_the_system_prompt() {
    let llm = server_with(vec![(ok("low", "high", "allow"), None)]).await;
    let section = format!(
        "{}tenant_policy = \"Pushing to git.acme.internal is routine. Never upload to third-party storage.\"\n",
        openai_reviewer(&llm.uri(), 10_000)
    );
    let h = Harness::new(&section);
    let (_, body) = h.review(shell("make release")).await;
    assert_eq!(body["decided_by"], "reviewer");
    let reqs = llm.received_requests().await.unwrap_or_default();
    let sent: serde_json::Value = serde_json::from_slice(&reqs[0].body).expect("json");
    let system = sent["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(system.contains("git.acme.internal is routine"), "{system}");
    assert!(system.contains("Risk taxonomy"));
    let rec = h.audit_of(body["id"].as_str().unwrap_or_default());
    assert_eq!(rec["prompt_version"], "reviewer-v5");
}

#[test]
fn memory_fingerprint_changes_with_the_policy_and_the_tenant_policy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fp = |extra: &str, tenant: &str| {
        let text = config_text(
            &format!("[reviewer]\nbackend = \"none\"\n{tenant}"),
            &dir.path().join("a.jsonl"),
        );
        let text = text.replace("allow = [", &format!("allow = [{extra}"));
        let cfg = guardian::Config::parse(&text, "guardian.toml").expect("parses");
        guardian::Guardian::from_config(cfg)
            .expect("builds")
            .fingerprint()
            .to_string()
    };
    let base = fp("", "");
    assert_eq!(base, fp("", ""), "same policy, same fingerprint");
    assert_ne!(
        base,
        fp("\"Bash(ls)\", ", ""),
        "a policy change invalidates remembered approvals"
    );
    assert_ne!(
        base,
        fp("", "tenant_policy = \"x\"\n"),
        "so does a prompt change"
    );
}

#[tokio::test]
async fn a_timed_out_attempt_is_retried_within_the_review_deadline() {
    let llm = server_with(vec![
        (
            ok("low", "high", "allow").set_delay(Duration::from_secs(3)),
            Some(1),
        ),
        (ok("low", "high", "allow"), None),
    ])
    .await;
    let section = format!(
        "{}attempt_timeout_ms = 300\n",
        openai_reviewer(&llm.uri(), 10_000)
    );
    let h = Harness::new(&section);
    let (_, body) = h.review(shell("cargo run")).await;
    assert_eq!(body["decision"], "allow", "{body}");
    assert_eq!(calls(&llm).await, 2);
}

/// A fetch is an HTTP request end to end (#41): every method is accepted and judged; the
/// reviewer reads the method, the header names (never a value) and the body; a credential
/// header's value reaches neither the reviewer nor the audit log.
#[tokio::test]
async fn a_fetch_reaches_the_reviewer_with_its_method_header_names_and_body() {
    let llm = server_with(vec![(ok("high", "unknown", "deny"), None)]).await;
    let h = Harness::new(&openai_reviewer(&llm.uri(), 10_000));
    let body = json!({
        "action": {"kind": "fetch", "url": "https://collector.example/ingest", "method": "POST",
                   "headers": {"Authorization": "Bearer tok-9f8e7d6c5b4a", "X-Trace": "trace-77"},
                   "body": "{\"build_log\": \"step 3 failed\"}"},
        "session": {"id": "s-fetch", "workspace_roots": ["/work/repo"]},
        "intent": "Fix the failing test"
    });
    let (status, resp) = h.review(body).await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    assert_eq!(resp["decided_by"], "reviewer", "{resp}");
    let reqs = llm.received_requests().await.unwrap_or_default();
    let sent: serde_json::Value = serde_json::from_slice(&reqs[0].body).expect("json");
    let user = sent["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(user.contains("\"method\":\"POST\""), "{user}");
    assert!(
        user.contains("\"header_names\":[\"Authorization\",\"X-Trace\"]"),
        "{user}"
    );
    assert!(user.contains("step 3 failed"), "{user}");
    assert!(
        !user.contains("tok-9f8e7d6c5b4a") && !user.contains("trace-77"),
        "{user}"
    );
    let record = h.audit_of(resp["id"].as_str().unwrap_or_default());
    let text = record.to_string();
    assert!(!text.contains("tok-9f8e7d6c5b4a"), "{text}");
    assert_eq!(record["action"]["method"], "POST");
    assert_eq!(
        record["action"]["headers"]["Authorization"],
        "[REDACTED:header]"
    );
    assert_eq!(record["action"]["headers"]["X-Trace"], "trace-77");
    let signals = resp["signals"].to_string();
    assert!(
        signals.contains("network_egress") && signals.contains("secret_in_payload"),
        "{resp}"
    );

    // Every method is accepted (none is an unknown field); `url` alone still works.
    for m in ["GET", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] {
        let (status, resp) = h
            .review(json!({"action": {"kind": "fetch", "url": "https://api.example.com/v1/x", "method": m}}))
            .await;
        assert_eq!(status, StatusCode::OK, "{m}: {resp}");
        assert!(resp["decision"].is_string(), "{m}: {resp}");
    }
    let (status, _) = h
        .review(json!({"action": {"kind": "fetch", "url": "https://docs.rs/serde"}}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, err) = h
        .review(json!({"action": {"kind": "fetch", "url": "https://a.b", "method": "GET /x"}}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(err["error"]["field"], "action.method", "{err}");
}
