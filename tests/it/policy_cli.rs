//! `guardian policy explain | test | import`, `[policy] import` and rule examples, run as a user
//! would run them.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_guardian");

use crate::common::guardian_in as run;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write");
}

const CONFIG: &str = r#"[policy]
deny = ["Bash(git push *)", "Read(./.env)"]
allow = ["Bash(git status)", "Bash(echo *)", "Edit(./src/**)"]
"#;

#[test]
fn explain_shows_commands_wrappers_targets_and_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "guardian.toml", CONFIG);
    let o = run(
        dir.path(),
        &[
            "policy",
            "explain",
            "--config",
            "guardian.toml",
            "--cwd",
            "/work/repo",
            "--",
            "git",
            "status",
            "&&",
            "sudo",
            "timeout",
            "5",
            "git",
            "push",
            "origin",
            "main",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.contains("command `git status`"), "{out}");
    assert!(
        out.contains("command `git push origin main`")
            && out.contains("wrappers removed: sudo, timeout"),
        "{out}"
    );
    assert!(out.contains("PRIVILEGED"), "{out}");
    assert!(
        out.contains("Bash(git push *) MATCHES (guardian.toml:2)"),
        "{out}"
    );
    assert!(out.contains("decision: deny by Bash(git push *)"), "{out}");
    let explain = |extra: &[&str]| {
        let mut args = vec![
            "policy",
            "explain",
            "--config",
            "guardian.toml",
            "--cwd",
            "/work/repo",
        ];
        args.extend_from_slice(extra);
        stdout(&run(dir.path(), &args))
    };
    let out = explain(&["--verbose", "--", "echo x > build.sh"]);
    assert!(out.contains("writes: /work/repo/build.sh"), "{out}");
    assert!(out.contains("Edit(./src/**) no"), "{out}");
    assert!(out.contains("decision: ask"), "{out}");
    // Without --verbose, the rules that did not match are not listed one by one.
    let out = explain(&["--", "echo x > build.sh"]);
    assert!(out.contains("writes: /work/repo/build.sh"), "{out}");
    assert!(!out.contains("Edit(./src/**) no"), "{out}");
    assert!(out.contains("decision: ask"), "{out}");
    // A file outside the workspace is named as such.
    let out = explain(&["--", "cat /etc/hosts"]);
    assert!(out.contains("outside the workspace: /etc/hosts"), "{out}");
}

#[test]
fn policy_test_passes_and_fails_like_opa_test() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "guardian.toml", CONFIG);
    write(
        dir.path(),
        "cases.toml",
        r#"
[[case]]
name = "push denied"
command = "git status; git push"
expect = "deny"
rule = "Bash(git push *)"

[[case]]
name = "status allowed"
command = "git status"
expect = "allow"

[[case]]
name = "env read denied"
action = { kind = "read", path = ".env" }
expect = "deny"
"#,
    );
    let o = run(
        dir.path(),
        &["policy", "test", "--config", "guardian.toml", "cases.toml"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("3 passed, 0 failed"));
    write(
        dir.path(),
        "bad.toml",
        "[[case]]\nname = \"wrong on purpose\"\ncommand = \"git push\"\nexpect = \"allow\"\n",
    );
    let o = run(
        dir.path(),
        &["policy", "test", "--config", "guardian.toml", "bad.toml"],
    );
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("FAIL")
            && out.contains("wrong on purpose")
            && out.contains("0 passed, 1 failed"),
        "{out}"
    );
}

#[test]
fn import_prints_translated_rules_for_each_format() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "settings.json",
        r#"{"permissions": {"deny": ["Bash(curl:*)"], "allow": ["Bash(npm run lint)"]}}"#,
    );
    write(
        dir.path(),
        "opencode.json",
        r#"{"permission": {"bash": {"*": "ask", "git *": "allow", "rm *": "deny"}}}"#,
    );
    write(
        dir.path(),
        "default.rules",
        "prefix_rule(pattern = [\"git\", [\"push\", \"fetch\"]], decision = \"forbidden\")\n",
    );
    let o = run(dir.path(), &["policy", "import", "settings.json"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).contains("\"Bash(curl:*)\",  # settings.json: permissions.deny[0]"),
        "{}",
        stdout(&o)
    );
    let o = run(dir.path(), &["policy", "import", "opencode.json"]);
    assert!(stdout(&o).contains("\"Bash(rm *)\""), "{}", stdout(&o));
    let o = run(dir.path(), &["policy", "import", "default.rules"]);
    let out = stdout(&o);
    assert!(
        out.contains("\"Bash(git push *)\"") && out.contains("\"Bash(git fetch *)\""),
        "{out}"
    );
    // The printed snippet is itself a valid guardian.toml.
    write(dir.path(), "translated.toml", &out);
    let o = run(dir.path(), &["policy", "--config", "translated.toml"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn config_imports_and_rule_examples() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "settings.json",
        r#"{"permissions": {"deny": ["Bash(curl:*)"]}}"#,
    );
    write(
        dir.path(),
        "guardian.toml",
        r#"[policy]
import = ["settings.json"]
allow = ["Bash(git status)"]

[[policy.rule]]
rule = "Bash(terraform destroy *)"
effect = "deny"
match = ["terraform destroy -auto-approve", "sudo terraform destroy"]
not_match = ["terraform plan"]
justification = "infrastructure is changed through CI only"
"#,
    );
    let o = run(dir.path(), &["policy", "--config", "guardian.toml"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = stdout(&o);
    assert!(
        out.contains("Bash(curl:*)") && out.contains("settings.json: permissions.deny[0]"),
        "{out}"
    );
    assert!(
        out.contains("Bash(terraform destroy *)") && out.contains("guardian.toml:5"),
        "{out}"
    );
    let o = run(
        dir.path(),
        &[
            "check",
            "--config",
            "guardian.toml",
            "--",
            "curl",
            "https://example.com",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    // A rule whose example fails stops the config from loading, naming the line.
    write(
        dir.path(),
        "bad.toml",
        "[[policy.rule]]\nrule = \"Bash(git push *)\"\neffect = \"deny\"\nmatch = [\"git pull\"]\n",
    );
    let o = run(dir.path(), &["policy", "--config", "bad.toml"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.toml:1") && err.contains("git pull"),
        "{err}"
    );
}

/// The embedded default policy's own cases (`policies/default.tests.toml`) pass, and the count
/// shows every case ran.
#[test]
fn the_default_policy_passes_its_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = root.join("policies/default.tests.toml");
    let n = std::fs::read_to_string(&cases)
        .expect("cases")
        .matches("[[case]]")
        .count();
    assert!(n >= 10, "{n}");
    let o = Command::new(BIN)
        .args(["policy", "test"])
        .arg(&cases)
        .current_dir(root)
        .env("GUARDIAN_NO_LOCAL_MODEL", "1")
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains(&format!("{n} passed, 0 failed")),
        "{}",
        stdout(&o)
    );
}

/// An import naming a device or a FIFO is a startup error that names it, never a hang (reading
/// `/dev/zero` used to fill memory forever).
#[test]
fn an_import_that_is_not_a_regular_file_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("rules.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    for target in ["/dev/zero".to_string(), fifo.display().to_string()] {
        write(
            dir.path(),
            "guardian.toml",
            &format!("[policy]\nimport = [\"{target}\"]\n"),
        );
        let o = run(dir.path(), &["policy", "--config", "guardian.toml"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(0), "{target}");
        assert!(
            err.contains(&format!("cannot import {target}: not a regular file")),
            "{target}: {err}"
        );
    }
}

/// `policy explain` lists the risk signals beside the rules.
#[test]
fn explain_lists_the_risk_signals() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(
        dir.path(),
        &[
            "policy", "explain", "--", "git", "push", "--force", "origin", "main",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("risk signals"), "{text}");
    assert!(text.contains("remote_history (critical)"), "{text}");
    let out = run(dir.path(), &["policy", "explain", "--", "git", "status"]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("risk signals"));
}

/// `policy explain` names the option that kept an allowed tool from being allowed by its rule,
/// and a user's rule that names the option allows it.
#[test]
fn explain_names_the_option_a_rule_does_not_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(
        dir.path(),
        &["policy", "explain", "--", "rg", "--pre", "/tmp/evil", "foo"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("decision: ask"), "{text}");
    assert!(
        text.contains("`--pre` runs a program on every file it searches"),
        "{text}"
    );
    assert!(text.contains("Bash(rg *) does not name `--pre`"), "{text}");
    // What --pre runs is judged as a command of its own.
    assert!(text.contains("command `/tmp/evil` [rg --pre]"), "{text}");

    write(
        dir.path(),
        "guardian.toml",
        "[policy]\nallow = [\"Bash(rg *)\", \"Bash(rg --pre ./bin/pdf2txt *)\", \"Bash(./bin/pdf2txt *)\"]\n",
    );
    let named = |args: &[&str]| {
        let mut all = vec!["policy", "explain", "--config", "guardian.toml", "--"];
        all.extend_from_slice(args);
        String::from_utf8_lossy(&run(dir.path(), &all).stdout).into_owned()
    };
    // The rule names --pre, but what --pre runs is still never allowed by a rule.
    let text = named(&["rg", "--pre", "./bin/pdf2txt", "foo"]);
    assert!(
        text.contains("Bash(rg --pre ./bin/pdf2txt *) names `--pre`"),
        "{text}"
    );
    assert!(text.contains("decision: ask"), "{text}");
    let text = named(&["rg", "-n", "TODO", "src"]);
    assert!(text.contains("decision: allow"), "{text}");
}
