//! Fault injection: a reviewer that hangs, resets connections, answers 5xx or 429, garbage,
//! truncated JSON, a schema-valid verdict with an extra field, a 10 MB body, or drips its answer
//! byte by byte, for every action kind. Every cell must be a deny by fallback, within a bounded
//! time, and recorded in the audit log; no cell may ever allow.

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How the fake reviewer misbehaves.
#[derive(Debug, Clone, Copy)]
enum Fault {
    Hang,
    Reset,
    Status500,
    Status429,
    Garbage,
    TruncatedJson,
    ExtraField,
    TenMegabytes,
    SlowDrip,
}

const ALL: [Fault; 9] = [
    Fault::Hang,
    Fault::Reset,
    Fault::Status500,
    Fault::Status429,
    Fault::Garbage,
    Fault::TruncatedJson,
    Fault::ExtraField,
    Fault::TenMegabytes,
    Fault::SlowDrip,
];

fn chat_completion(content: &str) -> String {
    json!({
        "id": "x", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}
    })
    .to_string()
}

fn http(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A raw TCP "LLM server" with one fault, on loopback. Returns its base URL.
async fn faulty_reviewer(fault: Fault) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                // Read the request head (and whatever of the body arrives with it).
                let mut buf = vec![0u8; 64 * 1024];
                let _ = tokio::time::timeout(Duration::from_millis(200), sock.read(&mut buf)).await;
                match fault {
                    Fault::Hang => tokio::time::sleep(Duration::from_secs(3600)).await,
                    Fault::Reset => {
                        // SO_LINGER 0: the close sends a TCP reset, which is the point here.
                        #[allow(deprecated)]
                        let _ = sock.set_linger(Some(Duration::ZERO));
                        drop(sock);
                    }
                    Fault::Status500 => {
                        let _ = sock
                            .write_all(&http("500 Internal Server Error", "{}"))
                            .await;
                    }
                    Fault::Status429 => {
                        let _ = sock.write_all(&http("429 Too Many Requests", "{}")).await;
                    }
                    Fault::Garbage => {
                        let _ = sock
                            .write_all(&http("200 OK", "<html>bad gateway</html>"))
                            .await;
                    }
                    Fault::TruncatedJson => {
                        let full = chat_completion(
                            r#"{"rationale":"fine","risk_level":"low","user_authorization":"high","outcome":"allow"}"#,
                        );
                        let cut = &full[..full.len() / 2];
                        let head = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{cut}",
                            full.len()
                        );
                        let _ = sock.write_all(head.as_bytes()).await;
                        drop(sock);
                    }
                    Fault::ExtraField => {
                        let body = chat_completion(
                            r#"{"rationale":"fine","risk_level":"low","user_authorization":"high","outcome":"allow","override":"allow everything"}"#,
                        );
                        let _ = sock.write_all(&http("200 OK", &body)).await;
                    }
                    Fault::TenMegabytes => {
                        let verdict = format!(
                            r#"{{"rationale":"{}","risk_level":"low","user_authorization":"high","outcome":"allow"}}"#,
                            "a".repeat(10 * 1024 * 1024)
                        );
                        let _ = sock
                            .write_all(&http("200 OK", &chat_completion(&verdict)))
                            .await;
                    }
                    Fault::SlowDrip => {
                        let body = chat_completion(
                            r#"{"rationale":"fine","risk_level":"low","user_authorization":"high","outcome":"allow"}"#,
                        );
                        for b in http("200 OK", &body) {
                            if sock.write_all(&[b]).await.is_err() {
                                return;
                            }
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    }
                }
            });
        }
    });
    format!("http://{addr}")
}

/// One action of each kind, none of which a rule decides (the test policy asks for them).
fn actions() -> Vec<(&'static str, Value)> {
    vec![
        (
            "shell",
            json!({"kind": "shell", "command": "make deploy", "cwd": "/work/repo"}),
        ),
        (
            "read",
            json!({"kind": "read", "path": "/srv/data/report.csv", "cwd": "/work/repo"}),
        ),
        (
            "write",
            json!({"kind": "write", "path": "src/lib.rs", "cwd": "/work/repo", "content": "x"}),
        ),
        (
            "fetch",
            json!({"kind": "fetch", "url": "https://example.org/docs"}),
        ),
        (
            "mcp",
            json!({"kind": "mcp", "server": "github", "tool": "create_issue", "arguments": {"t": 1}}),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_reviewer_fault_for_every_action_kind_is_a_bounded_deny() {
    // A review deadline of 1.5 s (retries included): every cell must answer well within 5 s.
    let bound = Duration::from_secs(5);
    let mut cells = Vec::new();
    for fault in ALL {
        let base = faulty_reviewer(fault).await;
        let h = Harness::new(&format!(
            "{}max_attempts = 2\n",
            openai_reviewer(&base, 1500)
        ));
        for (kind, action) in actions() {
            let started = Instant::now();
            let (status, resp) = h
                .review(json!({"action": action, "session": {"id": format!("{fault:?}-{kind}")}}))
                .await;
            let took = started.elapsed();
            assert_eq!(status, 200, "{fault:?}/{kind}");
            assert_eq!(resp["decision"], "deny", "{fault:?}/{kind}: {resp}");
            assert_eq!(resp["decided_by"], "fallback", "{fault:?}/{kind}: {resp}");
            assert!(took < bound, "{fault:?}/{kind} took {took:?}");
            cells.push((fault, kind, took));
        }
        let recs = h.audit_records();
        assert_eq!(recs.len(), 5, "{fault:?}: every decision recorded");
        assert!(
            recs.iter()
                .all(|r| r["decision"] == "deny" && r["error"].is_string()),
            "{fault:?}: {recs:?}"
        );
        // A hang is reported as a timeout, not as a risky action.
        if matches!(fault, Fault::Hang | Fault::SlowDrip) {
            assert!(
                recs.iter().all(|r| r["error"] == "timeout"),
                "{fault:?}: {recs:?}"
            );
        }
    }
    assert_eq!(cells.len(), ALL.len() * 5);
}
