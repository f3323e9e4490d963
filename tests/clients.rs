//! The minimal Python and shell clients in integrations/, against a real server.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_guardian");

fn start_server(dir: &Path) -> (std::process::Child, String) {
    let cfg = dir.join("guardian.toml");
    std::fs::write(
        &cfg,
        format!("[policy]\ndeny = [\"Bash(git push *)\"]\nallow = [\"Bash(git status)\"]\n[audit]\npath = \"{}\"\n", dir.join("a.jsonl").display()),
    )
    .expect("config");
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&cfg)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawns");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let addr = lines
        .by_ref()
        .take(50)
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("guardian listening on ").map(str::to_string))
        .expect("address");
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

fn run(program: &str, script: &str, server: &str, words: &[&str]) -> (Option<i32>, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let out = Command::new(program)
        .arg(path)
        .args(["--server", server, "--"])
        .args(words)
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn python_and_shell_clients_allow_deny_and_fail_closed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut server, addr) = start_server(dir.path());
    for (program, script) in [
        ("python3", "integrations/python/guardian_client.py"),
        ("bash", "integrations/shell/guardian-review.sh"),
    ] {
        let (code, out) = run(program, script, &addr, &["git", "status"]);
        assert_eq!(code, Some(0), "{script}: {out}");
        assert!(out.contains("\"decision\":\"allow\""), "{script}: {out}");
        let (code, out) = run(program, script, &addr, &["git", "push", "origin", "main"]);
        assert_eq!(code, Some(1), "{script}: {out}");
        assert!(out.contains("Bash(git push *)"));
    }
    let _ = server.kill();
    let _ = server.wait();
    for (program, script) in [
        ("python3", "integrations/python/guardian_client.py"),
        ("bash", "integrations/shell/guardian-review.sh"),
    ] {
        let (code, _) = run(program, script, &addr, &["git", "status"]);
        assert_eq!(
            code,
            Some(2),
            "{script} must fail closed when the server is down"
        );
    }
}
