//! The minimal Python and shell clients in integrations/, against a real server.

use std::path::Path;
use std::process::Command;

use crate::common::{PUSH_DENIED, Server};

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
    let mut server = Server::start(dir.path(), PUSH_DENIED);
    let addr = server.addr.clone();
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
    server.stop();
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
