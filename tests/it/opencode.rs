//! The OpenCode bridge against a fake OpenCode server on loopback: SSE `permission.asked` events
//! in, `POST /permission/:id/reply` out, pending requests answered on connect, reconnection.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use axum::extract::{Path, State};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

#[derive(Clone, Default)]
struct Fake {
    replies: Arc<Mutex<Vec<(String, Value)>>>,
    connections: Arc<Mutex<usize>>,
}

fn asked(id: &str, permission: &str, patterns: &[&str], metadata: Value) -> String {
    let event = json!({"type": "permission.asked", "properties": {
        "id": id, "sessionID": "ses_1", "permission": permission, "patterns": patterns,
        "metadata": metadata, "always": [], "tool": {"messageID": "m1", "callID": "c1"}}});
    format!("data: {event}\n\n")
}

async fn events(State(f): State<Fake>) -> impl IntoResponse {
    let n = {
        let mut c = f.connections.lock().expect("lock");
        *c += 1;
        *c
    };
    // The first connection delivers two requests (and unrelated events) then drops;
    // the second delivers one more, proving the bridge reconnects.
    let body = if n == 1 {
        format!(
            "data: {}\n\n{}{}",
            json!({"type": "server.connected", "properties": {}}),
            asked(
                "per_1",
                "bash",
                &["git push origin main"],
                json!({"command": "git push origin main"})
            ),
            asked("per_2", "bash", &["git status"], json!({})),
        )
    } else if n == 2 {
        asked(
            "per_3",
            "edit",
            &["/work/repo/.git/hooks/pre-commit"],
            json!({"filepath": "/work/repo/.git/hooks/pre-commit"}),
        )
    } else {
        String::new()
    };
    ([("content-type", "text/event-stream")], body)
}

async fn pending(State(f): State<Fake>) -> Json<Value> {
    // A request asked while nobody was listening.
    if *f.connections.lock().expect("lock") == 1 {
        Json(
            json!([{"id": "per_0", "sessionID": "ses_1", "permission": "webfetch", "patterns": ["https://pastebin.com/raw/x"],
            "metadata": {"url": "https://pastebin.com/raw/x"}, "always": []}]),
        )
    } else {
        Json(json!([]))
    }
}

/// The session's messages, as OpenCode's `GET /session/:id/message` lists them.
async fn messages(Path(id): Path<String>) -> Json<Value> {
    if id != "ses_1" {
        return Json(json!([]));
    }
    Json(json!([
        {"info": {"id": "msg_1", "sessionID": "ses_1", "role": "user"},
         "parts": [{"type": "text", "text": "Fix the failing test in src/lib.rs"}]},
        {"info": {"id": "msg_2", "sessionID": "ses_1", "role": "assistant"},
         "parts": [{"type": "text", "text": "I will look at the test."},
                   {"type": "tool", "tool": "bash", "state": {"input": {"command": "git status"}}}]}
    ]))
}

async fn reply(
    State(f): State<Fake>,
    Path(id): Path<String>,
    Json(body): Json<Value>,
) -> Json<Value> {
    f.replies.lock().expect("lock").push((id, body));
    Json(json!(true))
}

/// Serves a fake OpenCode on a free loopback port; its address.
async fn serve(app: Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

#[tokio::test]
async fn bridge_answers_every_permission_request() {
    let fake = Fake::default();
    let app = Router::new()
        .route("/event", get(events))
        .route("/permission", get(pending))
        .route("/permission/{id}/reply", post(reply))
        .route("/session/{id}/message", get(messages))
        .with_state(fake.clone());
    let addr = serve(app).await;

    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    let decider = Arc::new(guardian::integrations::mcp::InProcess(
        h.guardian.clone(),
        "opencode",
    ));
    let bridge = Arc::new(
        guardian::integrations::opencode::Bridge::new(
            &format!("http://{addr}"),
            Some("/work/repo".into()),
            decider,
        )
        .expect("bridge"),
    );
    let task = tokio::spawn(bridge.run());
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        if fake.replies.lock().expect("lock").len() >= 4 || std::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    task.abort();
    let mut replies = fake.replies.lock().expect("lock").clone();
    replies.sort_by(|a, b| a.0.cmp(&b.0));
    let ids: Vec<&str> = replies.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        vec!["per_0", "per_1", "per_2", "per_3"],
        "every request answered exactly once: {replies:?}"
    );
    let get = |id: &str| {
        replies
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, b)| b.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        get("per_0")["reply"],
        "reject",
        "no rule allows the fetch and no reviewer: reject"
    );
    assert_eq!(get("per_1")["reply"], "reject");
    assert!(
        get("per_1")["message"]
            .as_str()
            .unwrap_or("")
            .contains("Bash(git push *)")
    );
    assert_eq!(get("per_2"), json!({"reply": "once"}));
    assert_eq!(
        get("per_3")["reply"],
        "reject",
        "a git hook write is protected"
    );
    assert!(
        *fake.connections.lock().expect("lock") >= 2,
        "the bridge reconnected"
    );
    // The decisions were audited as OpenCode's, asked by the bridge.
    let recs = h.audit_records();
    assert!(recs.iter().all(|r| r["agent"] == "opencode"));
    assert!(recs.iter().all(|r| r["client"] == "opencode"), "{recs:?}");
    // The session's first user message is the intent the reviewer sees.
    assert!(
        recs.iter()
            .filter(|r| r["session_id"] == "ses_1")
            .all(|r| r["intent"] == "Fix the failing test in src/lib.rs"),
        "{recs:?}"
    );
    assert!(recs.iter().any(|r| r["session_id"] == "ses_1"));
}

#[test]
fn permission_kinds_map_to_actions() {
    use guardian::integrations::opencode::{PermissionRequest, actions};
    let p = |permission: &str, patterns: &[&str], metadata: Value| PermissionRequest {
        id: "x".into(),
        session_id: None,
        permission: permission.into(),
        patterns: patterns.iter().map(|s| s.to_string()).collect(),
        metadata,
    };
    let a = actions(
        &p("bash", &["git", "push"], json!({"command": "git push"})),
        Some("/w"),
    )
    .expect("maps");
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].kind(), "shell");
    let a = actions(&p("external_directory", &["/etc/*"], json!({})), Some("/w")).expect("maps");
    assert_eq!(
        a[0],
        guardian::Action::Read {
            path: "/etc".into(),
            cwd: Some("/w".into()),
            recursive: false,
        }
    );
    assert_eq!(
        actions(
            &p("webfetch", &[], json!({"url": "https://x.example"})),
            None
        )
        .expect("maps")[0]
            .kind(),
        "fetch"
    );
    // An edit carries OpenCode's diff, so its change is judged, not the file.
    let diff = "--- a/ci.yml\n+++ b/ci.yml\n-  timeout-minutes: 30\n+  timeout-minutes: 60\n";
    assert_eq!(
        actions(
            &p(
                "edit",
                &["/w/.github/workflows/ci.yml"],
                json!({"filepath": "/w/.github/workflows/ci.yml", "diff": diff})
            ),
            Some("/w")
        )
        .expect("maps")[0],
        guardian::Action::Write {
            path: "/w/.github/workflows/ci.yml".into(),
            cwd: Some("/w".into()),
            content: None,
            diff: Some(diff.into()),
        }
    );
    assert!(actions(&p("doom_loop", &["x"], json!({})), None).is_err());
    assert!(actions(&p("mystery", &["x"], json!({})), None).is_err());
}

#[test]
fn the_readme_opencode_config_only_asks_what_the_bridge_understands() {
    use guardian::integrations::opencode::{PermissionRequest, actions};
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("integrations/opencode/opencode.json"),
    )
    .expect("snippet");
    let cfg: Value = serde_json::from_str(&text).expect("json");
    let perms = cfg["permission"].as_object().expect("permission map");
    assert!(!perms.is_empty());
    for (kind, value) in perms {
        assert_eq!(
            value, "ask",
            "{kind}: the bridge only sees what OpenCode asks about"
        );
        let p = PermissionRequest {
            id: "x".into(),
            session_id: None,
            permission: kind.clone(),
            patterns: vec!["https://example.com/x".into()],
            metadata: json!({}),
        };
        assert!(
            actions(&p, Some("/w")).is_ok(),
            "the bridge cannot translate {kind}"
        );
    }
}

/// What the bridge answers per mode: a rule deny is always a reject; what nothing could review, a
/// doom loop and an unknown kind are rejected headless and left to the user's prompt at a
/// terminal; no-op kinds pass; `external_directory` is reviewed as an extra permission.
#[tokio::test]
async fn the_bridge_defers_to_the_user_only_when_nothing_could_review() {
    use guardian::config::Unreviewed;
    use guardian::integrations::opencode::{PermissionRequest, Reply, decide, requests};
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    let decider = guardian::integrations::mcp::InProcess(h.guardian.clone(), "opencode");
    let p = |permission: &str, patterns: &[&str], metadata: Value| PermissionRequest {
        id: "x".into(),
        session_id: Some(format!("ses-{}", patterns.join(","))),
        permission: permission.into(),
        patterns: patterns.iter().map(|s| s.to_string()).collect(),
        metadata,
    };
    let push = p(
        "bash",
        &["git push *"],
        json!({"command": "git push origin main"}),
    );
    let commit = p(
        "bash",
        &["git commit *"],
        json!({"command": "git commit -m x"}),
    );
    let looping = p("doom_loop", &["bash"], json!({"tool": "bash", "input": {}}));
    let mystery = p("mystery", &["x"], json!({}));
    for mode in [Unreviewed::Deny, Unreviewed::Ask] {
        let r = decide(&push, &decider, Some("/work/repo"), mode).await;
        assert!(
            matches!(r, Reply::Reject(ref m) if m.contains("Bash(git push *)")),
            "{mode:?}: {r:?}"
        );
        for asked in [&commit, &looping, &mystery] {
            let r = decide(asked, &decider, Some("/work/repo"), mode).await;
            match mode {
                Unreviewed::Deny => {
                    assert!(matches!(r, Reply::Reject(_)), "{}: {r:?}", asked.permission)
                }
                Unreviewed::Ask => {
                    assert!(matches!(r, Reply::Leave(_)), "{}: {r:?}", asked.permission)
                }
            }
        }
        for noop in ["todowrite", "question", "task"] {
            let r = decide(&p(noop, &["*"], json!({})), &decider, None, mode).await;
            assert_eq!(r, Reply::Once, "{noop}");
        }
    }
    let ext = requests(
        &p(
            "external_directory",
            &["/etc/*"],
            json!({"filepath": "/etc/hosts", "parentDir": "/etc"}),
        ),
        Some("/work/repo"),
    )
    .expect("maps");
    assert_eq!(ext.len(), 1);
    assert_eq!(
        ext[0].escalation.as_ref().map(|e| e.kind),
        Some(guardian::request::EscalationKind::AdditionalPermissions)
    );
    // The deferred question is audited as such.
    let recs = h.audit_records();
    assert!(
        recs.iter()
            .any(|r| r["deferred_to_user"] == true && r["action"]["command"] == "git commit -m x"),
        "{recs:?}"
    );
    // So are the requests that never became an action: one record per mode, rejected (Deny)
    // or left to the user (Ask).
    for (permission, error) in [("doom_loop", "repeated_call"), ("mystery", "unknown_tool")] {
        let of: Vec<&Value> = recs
            .iter()
            .filter(|r| r["action"]["tool"] == permission)
            .collect();
        assert_eq!(of.len(), 2, "{permission}: {recs:?}");
        for r in &of {
            assert_eq!(r["error"], error, "{r}");
            assert_eq!(r["agent"], "opencode", "{r}");
            assert_eq!(r["decision"], "deny", "{r}");
        }
        assert_eq!(
            of.iter().filter(|r| r["deferred_to_user"] == true).count(),
            1,
            "{permission}: the Ask mode's record says the user was asked"
        );
    }
}

/// An event stream that connects but never delivers (as one opened in `opencode serve`'s first
/// moments can): pending requests are still answered, by the bridge's own listing of them, and
/// the silent stream is reconnected.
#[tokio::test]
async fn a_silent_event_stream_leaves_no_request_unanswered() {
    #[derive(Clone, Default)]
    struct Silent {
        replies: Arc<Mutex<Vec<(String, Value)>>>,
        connections: Arc<Mutex<usize>>,
    }
    async fn events(State(f): State<Silent>) -> impl IntoResponse {
        *f.connections.lock().expect("lock") += 1;
        // Headers, then nothing, ever.
        let body = axum::body::Body::from_stream(futures::stream::pending::<
            Result<axum::body::Bytes, std::io::Error>,
        >());
        ([("content-type", "text/event-stream")], body)
    }
    async fn pending(State(f): State<Silent>) -> Json<Value> {
        let answered = f
            .replies
            .lock()
            .expect("lock")
            .iter()
            .any(|(id, _)| id == "per_9");
        if answered {
            Json(json!([]))
        } else {
            Json(
                json!([{"id": "per_9", "sessionID": "ses_9", "permission": "bash",
                "patterns": ["git push origin main"], "metadata": {"command": "git push origin main"},
                "always": []}]),
            )
        }
    }
    async fn reply(
        State(f): State<Silent>,
        Path(id): Path<String>,
        Json(body): Json<Value>,
    ) -> Json<Value> {
        f.replies.lock().expect("lock").push((id, body));
        Json(json!(true))
    }
    let fake = Silent::default();
    let app = Router::new()
        .route("/event", get(events))
        .route("/permission", get(pending))
        .route("/permission/{id}/reply", post(reply))
        .with_state(fake.clone());
    let addr = serve(app).await;
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    let decider = Arc::new(guardian::integrations::mcp::InProcess(
        h.guardian.clone(),
        "opencode",
    ));
    let bridge = Arc::new(
        guardian::integrations::opencode::Bridge::new(
            &format!("http://{addr}"),
            Some("/work/repo".into()),
            decider,
        )
        .expect("bridge")
        .with_timing(Duration::from_millis(200), Duration::from_millis(800)),
    );
    let task = tokio::spawn(bridge.run());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < deadline
        && (fake.replies.lock().expect("lock").is_empty()
            || *fake.connections.lock().expect("lock") < 2)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    task.abort();
    let replies = fake.replies.lock().expect("lock").clone();
    assert_eq!(replies.len(), 1, "answered exactly once: {replies:?}");
    assert_eq!(replies[0].1["reply"], "reject");
    assert!(
        *fake.connections.lock().expect("lock") >= 2,
        "the silent stream was reconnected"
    );
}
