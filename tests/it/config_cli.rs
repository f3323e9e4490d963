//! Configs as a new user writes them: layering on the default policy (`[policy] extends`),
//! `guardian init`, paths relative to the config file, the state directory without a config,
//! and the command line's hygiene (a closed stdout, quoting of `-- words`).

use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_guardian");

use crate::common::guardian_in as run;

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "not JSON: {} / {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn a_config_that_extends_the_default_keeps_its_rules_and_adds_its_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(
        d.join("mine.toml"),
        "[policy]\nextends = \"default\"\ndeny = [\"Bash(make deploy *)\"]\n\n[reviewer]\nbackend = \"none\"\n",
    )
    .expect("write");
    // The default's deny still holds, and the new rule too.
    let out = run(
        d,
        &[
            "check",
            "--config",
            "mine.toml",
            "--",
            "git push --force origin main",
        ],
    );
    assert_eq!(json(&out)["decided_by"], "rule");
    assert_eq!(json(&out)["decision"], "deny");
    let out = run(
        d,
        &["check", "--config", "mine.toml", "--", "make deploy prod"],
    );
    assert_eq!(json(&out)["rule"]["source"], "mine.toml:3");
    // And a default allow.
    let out = run(d, &["check", "--config", "mine.toml", "--", "git status"]);
    assert_eq!(json(&out)["decision"], "allow");
    let listing =
        String::from_utf8_lossy(&run(d, &["policy", "--config", "mine.toml"]).stdout).to_string();
    assert!(listing.contains("extending default"), "{listing}");
    assert!(listing.contains("policies/default.toml"), "{listing}");
    // Without extends: only its own rules, and `guardian policy` says so.
    std::fs::write(
        d.join("alone.toml"),
        "[policy]\ndeny = [\"Bash(make deploy *)\"]\n",
    )
    .expect("write");
    let listing =
        String::from_utf8_lossy(&run(d, &["policy", "--config", "alone.toml"]).stdout).to_string();
    assert!(
        listing.contains("does not extend the default policy"),
        "{listing}"
    );
    assert!(!listing.contains("policies/default.toml"), "{listing}");
    // The built-in protections hold either way: a protected write is never rule-allowed.
    std::fs::write(d.join("alone.toml"), "[policy]\nallow = [\"Edit(//**)\"]\n").expect("write");
    let out = run(
        d,
        &[
            "check",
            "--config",
            "alone.toml",
            "--",
            "echo x > .git/hooks/pre-commit",
        ],
    );
    assert_eq!(json(&out)["decision"], "deny");
    assert_eq!(json(&out)["decided_by"], "fallback");
}

#[test]
fn extends_chains_resolve_relative_to_the_file_and_cycles_are_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("team")).expect("mkdir");
    std::fs::write(
        d.join("team/base.toml"),
        "[policy]\nextends = \"default\"\ndeny = [\"Bash(terraform apply *)\"]\n",
    )
    .expect("write");
    std::fs::write(
        d.join("mine.toml"),
        "[policy]\nextends = \"team/base.toml\"\nallow = [\"Bash(make lint)\"]\n",
    )
    .expect("write");
    let out = run(
        d,
        &["check", "--config", "mine.toml", "--", "terraform apply"],
    );
    assert_eq!(json(&out)["rule"]["source"], "team/base.toml:3");
    let out = run(d, &["check", "--config", "mine.toml", "--", "make lint"]);
    assert_eq!(json(&out)["decision"], "allow");
    std::fs::write(d.join("a.toml"), "[policy]\nextends = \"b.toml\"\n").expect("write");
    std::fs::write(d.join("b.toml"), "[policy]\nextends = \"a.toml\"\n").expect("write");
    let out = run(d, &["policy", "--config", "a.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("policy.extends"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn init_writes_a_config_that_extends_the_default() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let out = run(d, &["init"]);
    assert_eq!(out.status.code(), Some(0));
    let text = std::fs::read_to_string(d.join("guardian.toml")).expect("written");
    assert!(text.contains("extends = \"default\""));
    assert!(
        text.contains("# [reviewer]"),
        "the reviewer section is commented"
    );
    let out = run(d, &["check", "--config", "guardian.toml", "--", "rm -rf /"]);
    assert_eq!(json(&out)["decision"], "deny");
    // It never overwrites without --force.
    std::fs::write(d.join("guardian.toml"), "# mine\n").expect("write");
    assert_eq!(run(d, &["init"]).status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(d.join("guardian.toml")).expect("read"),
        "# mine\n"
    );
    assert_eq!(run(d, &["init", "--force"]).status.code(), Some(0));
}

#[test]
fn audit_paths_are_relative_to_the_config_or_in_the_state_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("conf")).expect("mkdir");
    std::fs::create_dir_all(d.join("repo")).expect("mkdir");
    std::fs::write(
        d.join("conf/guardian.toml"),
        "[policy]\nallow = [\"Bash(ls)\"]\n\n[audit]\npath = \"logs/audit.jsonl\"\n",
    )
    .expect("write");
    std::fs::create_dir_all(d.join("conf/logs")).expect("mkdir");
    let cfg = d.join("conf/guardian.toml");
    let cfg = cfg.to_str().expect("utf-8");
    let out = run(&d.join("repo"), &["check", "--config", cfg, "--", "ls"]);
    assert_eq!(json(&out)["decision"], "allow");
    assert!(
        d.join("conf/logs/audit.jsonl").is_file(),
        "next to the config"
    );
    assert!(
        !d.join("repo/logs").exists(),
        "never in the working directory"
    );
    // verify and query find the same file from anywhere.
    let out = run(d, &["audit", "verify", "--config", cfg]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 records"));
    // Without a config: the state directory, not the working directory.
    let out = Command::new(BIN)
        .args(["check", "--", "git status"])
        .current_dir(d.join("repo"))
        .env("XDG_STATE_HOME", d.join("state"))
        .env("GUARDIAN_NO_LOCAL_MODEL", "1")
        .output()
        .expect("runs");
    assert_eq!(json(&out)["decision"], "allow");
    assert!(d.join("state/guardian/guardian-audit.jsonl").is_file());
    assert!(!d.join("repo/guardian-audit.jsonl").exists());
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(BIN)
        .arg("policy")
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    // Read nothing and close the pipe, like `| head -0`.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("waits");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(101), "a panic exits 101");
}

#[test]
fn check_words_keep_their_quoting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(
        d.join("g.toml"),
        "[policy]\ndeny = [\"Bash(rm -rf *)\"]\nallow = [\"Bash(bash *)\", \"Bash(rm *)\"]\n",
    )
    .expect("write");
    // bash -c 'rm -rf /': the script is one word, not `bash -c rm` plus arguments.
    let out = run(
        d,
        &[
            "check", "--config", "g.toml", "--", "bash", "-c", "rm -rf /",
        ],
    );
    let v = json(&out);
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(v["rule"]["pattern"], "Bash(rm -rf *)");
}
