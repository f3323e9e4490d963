//! The `guardian` binary: `check`, `policy` and `serve`, run as a user would run them.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_guardian");

fn write_config(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("guardian.toml");
    let text = format!(
        "[policy]\ndeny = [\"Bash(git push *)\"]\nallow = [\"Bash(git status)\"]\n\n[reviewer]\nbackend = \"none\"\n\n[audit]\npath = \"{}\"\n",
        dir.join("audit.jsonl").display()
    );
    std::fs::write(&path, text).expect("write config");
    path
}

#[test]
fn check_words_denied_by_rule_exits_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = write_config(dir.path());
    let out = Command::new(BIN)
        .args(["check", "--config"])
        .arg(&cfg)
        .args(["--", "git", "push", "origin", "main"])
        .current_dir(dir.path())
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let resp: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(resp["decision"], "deny");
    assert_eq!(resp["decided_by"], "rule");
    assert_eq!(resp["rule"]["pattern"], "Bash(git push *)");
    assert!(
        resp["rule"]["source"]
            .as_str()
            .unwrap_or_default()
            .ends_with("guardian.toml:2")
    );
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).expect("audit written");
    assert_eq!(audit.lines().count(), 1);
    assert!(audit.contains("\"client\":\"cli\""));
}

#[test]
fn check_stdin_allowed_exits_0_and_bad_input_exits_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = write_config(dir.path());
    let run = |stdin: &str| {
        let mut child = Command::new(BIN)
            .args(["check", "--config"])
            .arg(&cfg)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawns");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .expect("write stdin");
        child.wait_with_output().expect("runs")
    };
    let out = run(r#"{"action":{"kind":"shell","command":"git status","cwd":"/tmp"}}"#);
    assert_eq!(out.status.code(), Some(0));
    let resp: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(resp["decision"], "allow");
    // Needs review, but there is no reviewer: deny by fallback.
    let out = run(r#"{"action":{"kind":"shell","command":"make deploy","cwd":"/tmp"}}"#);
    assert_eq!(out.status.code(), Some(1));
    let resp: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(resp["decided_by"], "fallback");
    let out = run(r#"{"action":{"kind":"shell","comand":"ls"}}"#);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("action.comand"));
}

#[test]
fn bad_config_exits_2_with_a_precise_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "[policy]\ndeny = [\"Bahs(rm *)\"]\n").expect("write");
    let out = Command::new(BIN)
        .args(["check", "--config"])
        .arg(&cfg)
        .args(["--", "ls"])
        .current_dir(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml:2") && err.contains("Bahs"), "{err}");
    let out = Command::new(BIN)
        .args(["policy", "--config", "/nonexistent/guardian.toml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn policy_prints_rules_with_sources() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = write_config(dir.path());
    let out = Command::new(BIN)
        .args(["policy", "--config"])
        .arg(&cfg)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let deny = text
        .lines()
        .find(|l| l.starts_with("deny"))
        .expect("a deny line");
    assert!(
        deny.contains("Bash(git push *)") && deny.contains("guardian.toml:2"),
        "{deny}"
    );
    // The embedded default policy loads too.
    let out = Command::new(BIN).arg("policy").output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("policies/default.toml:"));
}

#[test]
fn serve_answers_over_real_http() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = write_config(dir.path());
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&cfg)
        .current_dir(dir.path())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawns");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let mut addr = None;
    for line in lines.by_ref().take(50) {
        let line = line.expect("line");
        if let Some(a) = line.strip_prefix("guardian listening on ") {
            addr = Some(a.to_string());
            break;
        }
    }
    let addr = addr.expect("server printed its address");
    // Close our end of its log pipe: the service must keep answering without a reader.
    drop(lines);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let result = rt.block_on(async {
        let client = reqwest::Client::new();
        let resp = client
            .post(format!("{addr}/v1/review"))
            .json(&serde_json::json!({"action": {"kind": "shell", "command": "git push origin main"}}))
            .send()
            .await?;
        let status = resp.status();
        let body: serde_json::Value = resp.json().await?;
        Ok::<_, reqwest::Error>((status, body))
    });
    let _ = child.kill();
    let _ = child.wait();
    let (status, body) = result.expect("HTTP round trip");
    assert_eq!(status, 200);
    assert_eq!(body["decision"], "deny");
    assert_eq!(body["decided_by"], "rule");
}

/// `guardian-hook` parses its few options by hand: the forms clap accepted still work, and every
/// usage error is a block (exit 2) that says what was wrong, never a silent allow.
#[test]
fn guardian_hook_arguments_are_checked_and_a_usage_error_blocks() {
    let hook = env!("CARGO_BIN_EXE_guardian-hook");
    // No input: a usage error exits before reading it.
    let run = |args: &[&str]| {
        Command::new(hook)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("runs")
    };
    let help = run(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    for option in ["<AGENT>", "--server", "--timeout", "--unreviewed"] {
        assert!(text.contains(option), "help lacks {option}: {text}");
    }
    let version = run(&["-V"]);
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("guardian-hook {}", env!("CARGO_PKG_VERSION"))
    );
    for (args, says) in [
        (&[][..], "<AGENT> was not provided"),
        (&["cursor"][..], "invalid value 'cursor' for '<AGENT>'"),
        (&["codex", "--timeout", "soon"][..], "invalid value 'soon'"),
        (
            &["codex", "--unreviewed=allow"][..],
            "possible values: deny, ask",
        ),
        (
            &["codex", "--server"][..],
            "a value is required for '--server",
        ),
        (
            &["codex", "--verbose"][..],
            "unexpected argument '--verbose'",
        ),
        (
            &["codex", "claude-code"][..],
            "unexpected argument 'claude-code'",
        ),
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed an answer");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // `--opt=value` is read like `--opt value`: an unreachable server is a block naming it.
    let out = run(&["claude-code", "--server=http://127.0.0.1:9", "--timeout=2"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("127.0.0.1:9"), "{err}");
}

/// `guardian health` (the image's HEALTHCHECK): 0 while /healthz says "ok"; 1 when the session
/// store is down (degraded) unless `--live`; 1 when nothing answers.
#[test]
fn health_exits_0_when_ok_1_when_degraded_or_unreachable() {
    let health = |url: &str, more: &[&str]| {
        std::process::Command::new(BIN)
            .args(["health", "--url", url])
            .args(more)
            .output()
            .expect("runs")
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let ok = crate::common::Server::start(dir.path(), "");
    let out = health(&format!("{}/healthz", ok.addr), &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"ok\""));

    // A Redis store on a port where nothing listens: the replica serves, degraded.
    let dir2 = tempfile::tempdir().expect("tempdir");
    let degraded = crate::common::Server::start_with_audit(
        dir2.path(),
        "",
        "[session]\nstore = \"redis\"\nredis_url = \"redis://127.0.0.1:1/0\"\ndeadline_ms = 100\n",
    );
    let url = format!("{}/healthz", degraded.addr);
    let out = health(&url, &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("degraded"));
    assert_eq!(health(&url, &["--live"]).status.code(), Some(0));

    let mut gone = ok;
    let addr = gone.addr.clone();
    gone.stop();
    let out = health(&format!("{addr}/healthz"), &["--timeout-ms", "500"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
}
