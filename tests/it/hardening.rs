//! The HTTP service under hostile clients and operations: bearer auth, load shedding, size and
//! time limits, slowloris, 10k idle connections, hostile bodies, graceful shutdown (in process
//! and by SIGTERM), and the Prometheus metrics.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use axum::http::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const TOKEN: &str = "s3cret-token-for-ci";

/// A service with the common test policy; `extra` may hold `[server]` keys (merged into the
/// config's `[server]` table) and other tables after them.
fn guardian(extra: &str, reviewer: &str, dir: &std::path::Path) -> Arc<guardian::Guardian> {
    let base = config_text(reviewer, &dir.join("a.jsonl"));
    let text = match extra.strip_prefix("[server]\n") {
        Some(keys) => {
            // Keys up to the next table go into [server]; the rest is appended.
            let (server_keys, rest) = match keys.find("\n[") {
                Some(i) => (&keys[..=i], &keys[i + 1..]),
                None => (keys, ""),
            };
            format!(
                "{}\n{rest}",
                base.replacen("[server]\n", &format!("[server]\n{server_keys}"), 1)
            )
        }
        None => format!("{base}\n{extra}"),
    };
    let cfg = guardian::Config::parse(&text, "guardian.toml").expect("config parses");
    Arc::new(guardian::Guardian::from_config(cfg).expect("builds"))
}

async fn send(
    router: &axum::Router,
    method: &str,
    uri: &str,
    auth: Option<&str>,
    body: &str,
) -> (StatusCode, axum::http::HeaderMap, Value) {
    let bearer = auth.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("content-type", "application/json")];
    if let Some(b) = &bearer {
        headers.push(("authorization", b));
    }
    let (status, headers, bytes) =
        crate::common::send(router, method, uri, &headers, body.to_string()).await;
    let v = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, headers, v)
}

const STATUS: &str = r#"{"action":{"kind":"shell","command":"git status","cwd":"/work/repo"}}"#;

#[tokio::test]
async fn bearer_tokens_gate_every_route_but_healthz() {
    let dir = tempfile::tempdir().expect("tempdir");
    let digest = hex::encode(Sha256::digest(TOKEN.as_bytes()));
    let g = guardian(
        &format!("[[auth.tokens]]\nclient = \"ci-bot\"\nsha256 = \"{digest}\"\n"),
        "[reviewer]\nbackend = \"none\"\n",
        dir.path(),
    );
    let router = guardian::server::router(Arc::clone(&g));
    let (status, headers, body) = send(&router, "POST", "/v1/review", None, STATUS).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(headers.contains_key("www-authenticate"));
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("Bearer")
    );
    let (status, ..) = send(&router, "POST", "/v1/review", Some("wrong"), STATUS).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _, body) = send(&router, "POST", "/v1/review", Some(TOKEN), STATUS).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["decision"], "allow");
    for path in ["/v1/policy", "/metrics", "/openapi.json"] {
        let (status, ..) = send(&router, "GET", path, None, "").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
    }
    let (status, ..) = send(&router, "GET", "/healthz", None, "").await;
    assert_eq!(status, StatusCode::OK);
    // A hook without a token: Claude Code would proceed on an error status, so it is a 200 deny
    // in the event's own shape.
    let hook = json!({"hook_event_name": "PermissionRequest", "session_id": "s", "cwd": "/work/repo",
                      "tool_name": "Bash", "tool_input": {"command": "git status"}});
    let (status, _, body) = send(
        &router,
        "POST",
        "/v1/hooks/claude-code",
        None,
        &hook.to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body["hookSpecificOutput"]["hookEventName"],
        "PermissionRequest"
    );
    assert_eq!(body["hookSpecificOutput"]["decision"]["behavior"], "deny");
    // The audit names the authenticated client, not what the request claims.
    let claimed = r#"{"action":{"kind":"shell","command":"git status","cwd":"/work/repo"},"session":{"agent":"root"}}"#;
    send(&router, "POST", "/v1/review", Some(TOKEN), claimed).await;
    let audit = std::fs::read_to_string(dir.path().join("a.jsonl")).expect("audit");
    let recs: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(recs.len(), 2, "only authenticated requests were decided");
    assert!(recs.iter().all(|r| r["client"] == "ci-bot"), "{recs:?}");
    let (_, _, metrics) = send(&router, "GET", "/metrics", Some(TOKEN), "").await;
    let text = metrics.as_str().unwrap_or("").to_string();
    assert!(
        text.contains("guardian_http_auth_failures_total 6"),
        "{text}"
    );
}

#[test]
fn a_token_in_clear_is_refused_at_startup() {
    let text = "[[auth.tokens]]\nclient = \"ci\"\nsha256 = \"hunter2\"\n";
    let err = guardian::Config::parse(text, "guardian.toml")
        .expect_err("not a digest")
        .to_string();
    assert!(err.contains("auth.tokens[0].sha256"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn past_the_concurrency_cap_requests_are_shed_with_retry_after() {
    let slow = fake_reviewer(
        wiremock::ResponseTemplate::new(200)
            .set_body_json(completion(&verdict("low", "high", "allow")))
            .set_delay(Duration::from_millis(1500)),
    )
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let g = guardian(
        "[server]\nmax_concurrent_requests = 2\n[limits]\nreviewer_concurrency = 8\n",
        &openai_reviewer(&slow.uri(), 10_000),
        dir.path(),
    );
    let router = guardian::server::router(g);
    let mut tasks = Vec::new();
    for i in 0..6 {
        let router = router.clone();
        tasks.push(tokio::spawn(async move {
            let body = format!(
                r#"{{"action":{{"kind":"shell","command":"make deploy-{i}","cwd":"/work/repo"}}}}"#
            );
            let started = Instant::now();
            let r = send(&router, "POST", "/v1/review", None, &body).await;
            (r, started.elapsed())
        }));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut answered = 0;
    let mut shed = 0;
    for t in tasks {
        let ((status, headers, body), took) = t.await.expect("task");
        match status {
            StatusCode::OK => answered += 1,
            StatusCode::SERVICE_UNAVAILABLE => {
                shed += 1;
                assert_eq!(headers["retry-after"], "1");
                assert!(
                    took < Duration::from_millis(500),
                    "shed at once, not queued"
                );
                assert!(
                    body["error"]["message"]
                        .as_str()
                        .unwrap_or("")
                        .contains("in flight")
                );
            }
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!((answered, shed), (2, 4));
}

#[test]
fn config_is_validated_with_the_key_named() {
    for (text, key) in [
        (
            "[server]\nmax_header_bytes = 100\n",
            "server.max_header_bytes",
        ),
        (
            "[server]\nmax_concurrent_requests = 0\n",
            "server.max_concurrent_requests",
        ),
        (
            "[audit]\nredact_patterns = [\"(\"]\n",
            "audit.redact_patterns",
        ),
        ("[audit]\nfsync = \"sometimes\"\n", "fsync"),
        (
            "[audit]\nfsync = \"interval\"\nfsync_interval_ms = 0\n",
            "audit.fsync_interval_ms",
        ),
        (
            "[[auth.tokens]]\nclient = \"a\"\nsha256 = \"0000000000000000000000000000000000000000000000000000000000000000\"\n[[auth.tokens]]\nclient = \"a\"\nsha256 = \"1111111111111111111111111111111111111111111111111111111111111111\"\n",
            "auth.tokens[1].client",
        ),
    ] {
        let err = guardian::Config::parse(text, "guardian.toml")
            .expect_err(key)
            .to_string();
        assert!(err.contains(key), "{key}: {err}");
    }
}

/// A real listener with `serve_until`, stopped by the returned sender.
async fn start(
    g: Arc<guardian::Guardian>,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(guardian::server::serve_until(g, listener, async {
        let _ = rx.await;
    }));
    (addr, tx, handle)
}

async fn raw(addr: &str, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(request).await.expect("write");
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

fn post(body: &str) -> Vec<u8> {
    format!(
        "POST /v1/review HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn slow_and_hostile_clients_do_not_stop_the_others() {
    let dir = tempfile::tempdir().expect("tempdir");
    let g = guardian(
        "[server]\nheader_read_timeout_ms = 500\nbody_read_timeout_ms = 700\nmax_body_bytes = 65536\n",
        "[reviewer]\nbackend = \"none\"\n",
        dir.path(),
    );
    let (addr, stop, handle) = start(g).await;
    // Slowloris: 50 connections that never finish their request head.
    let mut slow = Vec::new();
    for _ in 0..50 {
        let mut s = TcpStream::connect(&addr).await.expect("connect");
        s.write_all(b"POST /v1/review HTTP/1.1\r\nhost: x\r\n")
            .await
            .expect("write");
        slow.push(s);
    }
    // Meanwhile a normal client is answered.
    let answer = raw(&addr, &post(STATUS)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"decision\":\"allow\""), "{answer}");
    // The slow heads are cut off after header_read_timeout_ms.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    for mut s in slow {
        let mut buf = [0u8; 512];
        let n = tokio::time::timeout(Duration::from_secs(2), s.read(&mut buf))
            .await
            .expect("the server closed the slow connection")
            .unwrap_or(0);
        let text = String::from_utf8_lossy(&buf[..n]);
        assert!(n == 0 || text.starts_with("HTTP/1.1 408"), "{text}");
    }
    // A body that drips in: 408 after body_read_timeout_ms.
    let mut s = TcpStream::connect(&addr).await.expect("connect");
    s.write_all(b"POST /v1/review HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{")
        .await
        .expect("write");
    let started = Instant::now();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(3));
    // An oversized head: 431. An oversized body: 413.
    let big_header = format!(
        "GET /healthz HTTP/1.1\r\nhost: x\r\nx-junk: {}\r\n\r\n",
        "a".repeat(40_000)
    );
    let answer = raw(&addr, big_header.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    let answer = raw(&addr, &post(&"x".repeat(70_000))).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    // Deeply nested JSON, invalid UTF-8, a shell command nested 400 deep: clear 400s or denies.
    let answer = raw(&addr, &post(&"[".repeat(60_000))).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let mut bad = post("{\"action\":{\"kind\":\"shell\",\"command\":\"ls XX\"}}");
    let at = bad.len() - 5;
    bad[at] = 0xff;
    bad[at + 1] = 0xfe;
    let answer = raw(&addr, &bad).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let deep =
        json!({"action": {"kind": "shell", "command": "if ".repeat(400), "cwd": "/work/repo"}});
    let answer = raw(&addr, &post(&deep.to_string())).await;
    assert!(answer.contains("\"decision\":\"deny\""), "{answer}");
    // Still serving.
    let answer = raw(&addr, &post(STATUS)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let _ = stop.send(());
    handle.await.expect("task").expect("clean shutdown");
}

/// Raises this process's open-file limit (inherited by the server it starts) to `want`, within
/// the hard limit; fails, never skips, when the hard limit is too low for the test.
fn raise_fd_limit(want: u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed to them.
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    assert_eq!(got, 0, "getrlimit");
    assert!(
        lim.rlim_max >= want,
        "this test needs {want} open files; the hard limit is {} (raise it with ulimit -Hn)",
        lim.rlim_max
    );
    if lim.rlim_cur < want {
        lim.rlim_cur = want;
        // SAFETY: as above.
        let set = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
        assert_eq!(set, 0, "setrlimit");
    }
}

#[test]
fn ten_thousand_idle_connections_do_not_stop_the_service() {
    raise_fd_limit(12_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), PUSH_DENIED);
    let addr = server.addr.trim_start_matches("http://").to_string();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        use futures::StreamExt;
        let conns: Vec<TcpStream> = futures::stream::iter(0..10_000)
            .map(|_| {
                let addr = addr.clone();
                async move { TcpStream::connect(&addr).await.ok() }
            })
            .buffer_unordered(256)
            .filter_map(|c| async move { c })
            .collect()
            .await;
        assert!(conns.len() >= 9_000, "only {} connected", conns.len());
        let answer = raw(&addr, &post(STATUS)).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        drop(conns);
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_finishes_in_flight_reviews_then_denies_the_rest() {
    let slow = fake_reviewer(
        wiremock::ResponseTemplate::new(200)
            .set_body_json(completion(&verdict("low", "high", "allow")))
            .set_delay(Duration::from_millis(800)),
    )
    .await;
    for (grace_ms, expect) in [(3000, "allow"), (200, "deny")] {
        let dir = tempfile::tempdir().expect("tempdir");
        let g = guardian(
            &format!("[server]\nshutdown_grace_ms = {grace_ms}\n"),
            &openai_reviewer(&slow.uri(), 10_000),
            dir.path(),
        );
        let (addr, stop, handle) = start(Arc::clone(&g)).await;
        let body = r#"{"action":{"kind":"shell","command":"make deploy","cwd":"/work/repo"}}"#;
        let request = tokio::spawn({
            let addr = addr.clone();
            async move { raw(&addr, &post(body)).await }
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        let _ = stop.send(());
        let answer = request.await.expect("task");
        assert!(
            answer.contains(&format!("\"decision\":\"{expect}\"")),
            "grace {grace_ms}: {answer}"
        );
        handle.await.expect("task").expect("clean shutdown");
        // No longer accepting.
        assert!(TcpStream::connect(&addr).await.is_err());
        // Whatever was answered is on disk.
        let audit = std::fs::read_to_string(dir.path().join("a.jsonl")).expect("audit");
        let rec: Value =
            serde_json::from_str(audit.lines().last().expect("a record")).expect("json");
        assert_eq!(rec["decision"], expect);
        if expect == "deny" {
            assert_eq!(rec["error"], "shutting_down");
        }
    }
}

#[test]
fn sigterm_stops_the_binary_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Server::start(dir.path(), PUSH_DENIED);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let addr = server.addr.trim_start_matches("http://").to_string();
    let answer = rt.block_on(raw(&addr, &post(STATUS)));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let pid = server.child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    let started = Instant::now();
    let status = loop {
        if let Some(s) = server.child.try_wait().expect("wait") {
            break s;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "did not exit");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
    let audit = dir.path().join("server-audit.jsonl");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_guardian"))
        .args(["audit", "verify", "--file"])
        .arg(&audit)
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(0));
}

#[tokio::test]
async fn metrics_count_decisions_errors_and_latency() {
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    let router = guardian::server::router(h.guardian.clone());
    send(&router, "POST", "/v1/review", None, STATUS).await;
    let push = r#"{"action":{"kind":"shell","command":"git push","cwd":"/work/repo"}}"#;
    send(&router, "POST", "/v1/review", None, push).await;
    let commit = r#"{"action":{"kind":"shell","command":"git commit -m x","cwd":"/work/repo"}}"#;
    send(&router, "POST", "/v1/review", None, commit).await;
    let (status, headers, body) = send(&router, "GET", "/metrics", None, "").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap_or("")
            .starts_with("application/openmetrics-text")
    );
    let text = body.as_str().unwrap_or("");
    for line in [
        "guardian_decisions_total{decided_by=\"rule\",decision=\"allow\"} 1",
        "guardian_decisions_total{decided_by=\"rule\",decision=\"deny\"} 1",
        "guardian_decisions_total{decided_by=\"fallback\",decision=\"deny\"} 1",
        "guardian_errors_total{kind=\"not_configured\"} 1",
        "guardian_review_duration_seconds_count 3",
        "# TYPE guardian_reviewer_latency_seconds histogram",
        "guardian_http_shed_total 0",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
}

#[test]
fn the_hook_command_sends_guardian_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let digest = hex::encode(Sha256::digest(TOKEN.as_bytes()));
    let policy =
        format!("{PUSH_DENIED}\n[[auth.tokens]]\nclient = \"laptop\"\nsha256 = \"{digest}\"\n");
    let server = Server::start(dir.path(), &policy);
    let input = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/work/repo",
                       "tool_name": "Bash", "tool_input": {"command": "git status"}})
    .to_string();
    let run = |token: Option<&str>| {
        use std::io::Write;
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_guardian"));
        cmd.args(["hook", "claude-code", "--server", &server.addr])
            .env_remove("GUARDIAN_TOKEN")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        if let Some(t) = token {
            cmd.env("GUARDIAN_TOKEN", t);
        }
        let mut child = cmd.spawn().expect("spawns");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("runs");
        serde_json::from_slice::<Value>(&out.stdout).expect("hook output")
    };
    let with = run(Some(TOKEN));
    assert_eq!(
        with["hookSpecificOutput"]["permissionDecision"], "allow",
        "{with}"
    );
    let without = run(None);
    assert_eq!(without["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(without.to_string().contains("Bearer"), "{without}");
    let audit = std::fs::read_to_string(dir.path().join("server-audit.jsonl")).expect("audit");
    assert_eq!(
        audit.lines().count(),
        1,
        "the unauthenticated call decided nothing"
    );
    assert!(audit.contains("\"client\":\"laptop\""));
}

/// A log pipe nobody reads fills after a few hundred `decided` lines; requests must still be
/// answered (the log is written from a background thread, not from the request).
#[test]
fn a_stalled_log_pipe_does_not_stall_requests() {
    use std::io::BufRead;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("guardian.toml");
    std::fs::write(
        &cfg,
        format!(
            "[policy]\nallow = [\"Bash(git status)\"]\n[limits]\nrequests_per_minute_per_client = 0\n[audit]\npath = \"{}\"\nfsync = \"interval\"\n",
            dir.path().join("a.jsonl").display()
        ),
    )
    .expect("config");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_guardian"))
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&cfg)
        .env("GUARDIAN_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawns");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut addr = None;
    for _ in 0..50 {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        if let Some(a) = line.trim().strip_prefix("guardian listening on ") {
            addr = Some(a.to_string());
            break;
        }
    }
    let addr = addr.expect("the server printed its address");
    // From here on nobody reads stderr (the pipe stays open: `stderr` is alive until the end).
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let answered = rt.block_on(async {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client");
        let mut answered = 0;
        // ~400 bytes of log each: 3,000 lines are far more than a 64 KiB pipe holds.
        for _ in 0..3000 {
            let ok = client
                .post(format!("{addr}/v1/review"))
                .header("content-type", "application/json")
                .body(STATUS)
                .send()
                .await
                .is_ok_and(|r| r.status() == StatusCode::OK);
            if !ok {
                break;
            }
            answered += 1;
        }
        answered
    });
    let _ = child.kill();
    let _ = child.wait();
    drop(stderr);
    assert_eq!(answered, 3000);
}
