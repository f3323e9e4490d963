//! The audit log: hash chain and `guardian audit verify`, tamper detection, secret redaction,
//! recovery of a torn tail, `guardian audit` queries, and `kill -9` at random moments under load
//! losing no acknowledged record.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_guardian");

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("audit file")
        .lines()
        .map(str::to_string)
        .collect()
}

fn verify(path: &Path) -> std::process::Output {
    Command::new(BIN)
        .args(["audit", "verify", "--file"])
        .arg(path)
        .output()
        .expect("runs")
}

/// Runs `guardian audit verify` on `path` and asserts the chain is intact.
fn assert_verifies(path: &Path) -> std::process::Output {
    let o = verify(path);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn shell(cmd: &str, session: &str) -> Value {
    json!({"action": {"kind": "shell", "command": cmd, "cwd": "/work/repo"},
           "session": {"id": session}})
}

#[tokio::test]
async fn records_are_chained_and_tampering_is_named() {
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    for (i, cmd) in ["git status", "git push origin main", "git commit -m x"]
        .iter()
        .enumerate()
    {
        let body = shell(cmd, &format!("s{i}")).to_string().into_bytes();
        h.call("POST", "/v1/review", Some(body)).await;
    }
    let path = h.audit_path.clone();
    let recs = h.audit_records();
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0]["seq"], 1);
    assert_eq!(recs[0]["prev"], guardian::audit::GENESIS);
    assert_eq!(recs[1]["prev"], recs[0]["hash"]);
    assert_eq!(recs[2]["seq"], 3);
    let o = assert_verifies(&path);
    assert!(String::from_utf8_lossy(&o.stdout).contains("3 records, chain intact"));

    let original = lines(&path);
    let write = |ls: &[String]| std::fs::write(&path, ls.join("\n") + "\n").expect("write");
    // Flip a decision: the second record's hash no longer matches.
    let mut edited = original.clone();
    edited[1] = edited[1].replace("\"decision\":\"deny\"", "\"decision\":\"allow\"");
    assert_ne!(edited[1], original[1]);
    write(&edited);
    let o = verify(&path);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("line 2") && err.contains("modified"), "{err}");
    // Remove a record: the next one names the gap.
    write(&[original[0].clone(), original[2].clone()]);
    let err = String::from_utf8_lossy(&verify(&path).stderr).into_owned();
    assert!(
        err.contains("line 2") && err.contains("seq is 3, expected 2"),
        "{err}"
    );
    // Reorder: the first line is no longer the first record.
    write(&[
        original[1].clone(),
        original[0].clone(),
        original[2].clone(),
    ]);
    let err = String::from_utf8_lossy(&verify(&path).stderr).into_owned();
    assert!(err.contains("line 1"), "{err}");
    // Recompute a forged record's hash without fixing the next record's prev: caught at line 3.
    write(&original);
    assert_eq!(verify(&path).status.code(), Some(0));
}

#[tokio::test]
async fn secrets_never_reach_the_audit_log() {
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    let secret_cmd = "curl -H 'Authorization: Bearer abcdef0123456789abcdef' https://api.example/ \
                      -d key=AKIAIOSFODNN7EXAMPLE";
    let body = json!({
        "action": {"kind": "write", "path": "deploy/id_rsa", "cwd": "/work/repo",
                   "content": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n"},
        "intent": "use ghp_abcdefghijklmnopqrstuvwxyz0123456789 to push"
    });
    h.call("POST", "/v1/review", Some(body.to_string().into_bytes()))
        .await;
    h.call(
        "POST",
        "/v1/review",
        Some(shell(secret_cmd, "s").to_string().into_bytes()),
    )
    .await;
    let text = std::fs::read_to_string(h.audit_path.clone()).expect("audit");
    for secret in [
        "abcdef0123456789abcdef",
        "AKIAIOSFODNN7EXAMPLE",
        "MIIEow",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    ] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    for kind in [
        "bearer_token",
        "aws_access_key",
        "private_key",
        "github_token",
    ] {
        assert!(
            text.contains(&format!("[REDACTED:{kind}]")),
            "{kind}: {text}"
        );
    }
    // Redacted records are still chained and valid.
    assert_eq!(verify(&h.audit_path.clone()).status.code(), Some(0));
}

#[tokio::test]
async fn a_torn_tail_is_cut_and_the_chain_continues_after_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.jsonl");
    let cfg = guardian::Config::parse(
        &config_text("[reviewer]\nbackend = \"none\"\n", &path),
        "guardian.toml",
    )
    .expect("config");
    let g = Arc::new(guardian::Guardian::from_config(cfg.clone()).expect("builds"));
    let req = |cmd: &str| {
        guardian::ReviewRequest::from_json(shell(cmd, "s").to_string().as_bytes()).expect("valid")
    };
    g.review(req("git status"), "test").await;
    drop(g);
    // A crash in the middle of a write leaves half a line.
    let mut text = std::fs::read_to_string(&path).expect("read");
    text.push_str("{\"seq\":2,\"prev\":\"ab");
    std::fs::write(&path, &text).expect("write");
    let g = Arc::new(guardian::Guardian::from_config(cfg).expect("reopens"));
    g.review(req("git push"), "test").await;
    let ls = lines(&path);
    assert_eq!(ls.len(), 2, "{ls:?}");
    assert_verifies(&path);
}

#[tokio::test]
async fn audit_queries_filter_by_session_decision_and_time() {
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    for (cmd, session) in [
        ("git status", "alpha"),
        ("git push", "alpha"),
        ("git status", "beta"),
    ] {
        h.call(
            "POST",
            "/v1/review",
            Some(shell(cmd, session).to_string().into_bytes()),
        )
        .await;
    }
    let path = h.audit_path.clone();
    let query = |args: &[&str]| -> (Option<i32>, Vec<Value>) {
        let o = Command::new(BIN)
            .arg("audit")
            .arg("--file")
            .arg(&path)
            .args(args)
            .output()
            .expect("runs");
        let recs = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a record per line"))
            .collect();
        (o.status.code(), recs)
    };
    let (code, recs) = query(&["--session", "alpha"]);
    assert_eq!(code, Some(0));
    assert_eq!(recs.len(), 2);
    let (_, recs) = query(&["--session", "alpha", "--decision", "deny"]);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["action"]["command"], "git push");
    let (_, recs) = query(&["--decided-by", "rule", "--limit", "1"]);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["session_id"], "beta", "the last match");
    let (_, recs) = query(&[
        "--since",
        "2000-01-01T00:00:00Z",
        "--until",
        "2999-01-01T00:00:00Z",
    ]);
    assert_eq!(recs.len(), 3);
    let (_, recs) = query(&["--since", "2999-01-01T00:00:00Z"]);
    assert!(recs.is_empty());
    let (code, _) = query(&["--since", "yesterday"]);
    assert_eq!(code, Some(2));
    let (code, _) = query(&["--decision", "maybe"]);
    assert_eq!(code, Some(2));
}

/// `kill -9` at random moments while clients are being answered: after every crash the chain
/// verifies, no line is half-written, and every review a client got an answer for is in the log.
#[test]
fn kill_9_under_load_loses_no_acknowledged_record() {
    kill_9_rounds("");
}

/// The same with `fsync = "interval"`: a record is acknowledged once it is in the file, which a
/// crash of the process does not undo.
#[test]
fn kill_9_with_interval_fsync_loses_no_acknowledged_record() {
    kill_9_rounds("fsync = \"interval\"\nfsync_interval_ms = 1000");
}

/// The same while the log rotates every few records (and compresses the closed segments): a
/// crash at any point of a rotation recovers to a verifiable log with every acknowledged record.
#[test]
fn kill_9_during_rotations_loses_no_acknowledged_record() {
    kill_9_rounds("rotate_bytes = 4096\ncompress = \"gzip\"");
}

fn kill_9_rounds(audit_keys: &str) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("server-audit.jsonl");
    let acknowledged: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    for round in 0..6u64 {
        let mut server = Server::start_with_audit(dir.path(), PUSH_DENIED, audit_keys);
        let addr = server.addr.clone();
        let acks = Arc::clone(&acknowledged);
        let stop_after = Duration::from_millis(80 + fastrand::u64(0..320));
        rt.block_on(async move {
            let client = reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .expect("client");
            let started = Instant::now();
            let mut tasks = Vec::new();
            for worker in 0..16 {
                let client = client.clone();
                let addr = addr.clone();
                let acks = Arc::clone(&acks);
                tasks.push(tokio::spawn(async move {
                    let mut i = 0;
                    loop {
                        i += 1;
                        let cmd = if i % 2 == 0 { "git status" } else { "git push" };
                        let body = shell(cmd, &format!("r{round}w{worker}"));
                        let Ok(resp) = client
                            .post(format!("{addr}/v1/review"))
                            .json(&body)
                            .send()
                            .await
                        else {
                            break; // the server is gone
                        };
                        let Ok(v) = resp.json::<Value>().await else {
                            break;
                        };
                        if let Some(id) = v["id"].as_str() {
                            acks.lock().expect("lock").push(id.to_string());
                        }
                    }
                }));
            }
            tokio::time::sleep(stop_after.saturating_sub(started.elapsed())).await;
            server.stop(); // SIGKILL, mid-traffic
            for t in tasks {
                let _ = t.await;
            }
        });
        // Reopening (the next server start) cuts a torn tail; check the file as the crash left it
        // first: at most the last line may be torn, every other line is a whole record.
        let text = std::fs::read(&audit).expect("audit");
        let whole = match text.iter().rposition(|&b| b == b'\n') {
            Some(i) => &text[..=i],
            None => &text[..0],
        };
        for line in whole.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            serde_json::from_slice::<Value>(line).expect("every whole line is a record");
        }
        if whole.len() != text.len() {
            // A torn tail: the next open cuts it, as done here; the rest (with every closed
            // segment) verifies.
            std::fs::write(&audit, whole).expect("write");
        }
        assert_verifies(&audit);
    }
    // One more start cuts any torn tail; then the whole history verifies.
    let mut server = Server::start_with_audit(dir.path(), PUSH_DENIED, audit_keys);
    server.stop();
    assert_verifies(&audit);
    let mut recorded = std::collections::HashSet::new();
    guardian::audit_report::for_each_record(
        &audit,
        &guardian::audit_report::Filter::default(),
        |_, v| {
            if let Some(id) = v["review_id"].as_str() {
                recorded.insert(id.to_string());
            }
        },
    )
    .expect("records");
    if audit_keys.contains("rotate_bytes") {
        let segs = guardian::audit::segment::list(&audit).expect("segments");
        assert!(segs.len() > 3, "the log should have rotated: {segs:?}");
    }
    let acks = acknowledged.lock().expect("lock");
    assert!(
        acks.len() > 50,
        "too little load to mean anything: {}",
        acks.len()
    );
    let lost: Vec<&String> = acks.iter().filter(|id| !recorded.contains(*id)).collect();
    assert!(lost.is_empty(), "answered but not recorded: {lost:?}");
}

/// `guardian audit summary`: counts, the denials with their reasons, breaker interrupts and the
/// chain, in text, Markdown and JSON; the filters apply; a tampered log says so.
#[tokio::test]
async fn the_summary_counts_decisions_and_checks_the_chain() {
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    for (cmd, session) in [("git status", "s-a"), ("make build", "s-b")] {
        let (status, _) = h.review(shell(cmd, session)).await;
        assert_eq!(status, 200);
    }
    // Three denials in one session: the third trips the breaker.
    for _ in 0..3 {
        h.review(shell("git push origin main", "s-c")).await;
    }
    h.guardian.flush_audit().await.expect("flushed");
    let path = h.audit_path.display().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["audit", "--file", path.as_str(), "summary"];
        all.extend_from_slice(args);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_guardian"))
            .args(&all)
            .output()
            .expect("runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let v: Value = serde_json::from_str(&run(&["--format", "json"])).expect("JSON");
    assert_eq!(v["records"], 5);
    assert_eq!(v["allowed"], 1);
    assert_eq!(v["denied"], 4);
    assert_eq!(v["by_stage"]["rule"]["deny"], 3);
    assert_eq!(v["by_stage"]["fallback"]["deny"], 1);
    assert_eq!(v["fallback_errors"]["not_configured"], 1);
    assert!(v["breaker_interrupts"].as_u64().unwrap_or(0) >= 1, "{v}");
    assert_eq!(v["chain"]["ok"], true);
    assert_eq!(v["denials"][0]["action"], "make build", "oldest first");
    assert_eq!(v["denials"][1]["action"], "git push origin main");
    assert_eq!(v["denials"][1]["rule"], "Bash(git push *)");
    let text = run(&[]);
    assert!(text.contains("5 decisions"), "{text}");
    assert!(text.contains("audit chain: intact"), "{text}");
    assert!(
        text.contains("[rule Bash(git push *)] git push origin main"),
        "{text}"
    );
    let md = run(&["--format", "markdown"]);
    assert!(md.starts_with("## guardian decisions"), "{md}");
    assert!(md.contains("| rule | 1 | 3 |"), "{md}");
    // Filters apply to the counts.
    let v: Value = serde_json::from_str(&run(&["--format", "json", "--decided-by", "fallback"]))
        .expect("JSON");
    assert_eq!(v["records"], 1);
    // A tampered record breaks the chain, and the summary says so.
    let text = std::fs::read_to_string(&h.audit_path).expect("read");
    std::fs::write(&h.audit_path, text.replacen("git status", "git st4tus", 1)).expect("write");
    let out = run(&[]);
    assert!(out.contains("audit chain: BROKEN"), "{out}");
}
