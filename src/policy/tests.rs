use super::*;
use crate::normalize::shell;
use std::path::PathBuf;

fn policy(deny: &[&str], ask: &[&str], allow: &[&str]) -> Policy {
    let mut specs = Vec::new();
    for (effect, list) in [
        (Effect::Deny, deny),
        (Effect::Ask, ask),
        (Effect::Allow, allow),
    ] {
        for (i, p) in list.iter().enumerate() {
            specs.push(RuleSpec {
                effect,
                pattern: p.to_string(),
                source: format!("test:{i}"),
                ..RuleSpec::default()
            });
        }
    }
    Policy::compile(&specs, Policy::empty().settings.clone()).expect("compiles")
}

fn ctx() -> Context {
    Context {
        cwd: PathBuf::from("/work/repo"),
        workspace_roots: vec![PathBuf::from("/work/repo")],
        home: Some(PathBuf::from("/home/u")),
        git_dirs: Vec::new(),
    }
}

fn shell_effect(p: &Policy, cmd: &str) -> Effect {
    p.evaluate(&NormalizedAction::Shell(shell::analyze(cmd)), &ctx())
        .effect
}

#[test]
fn deny_beats_allow_in_any_part() {
    let p = policy(
        &["Bash(git push *)"],
        &["Bash(git commit *)"],
        &["Bash(git *)", "Bash(git status)"],
    );
    assert_eq!(shell_effect(&p, "git status"), Effect::Allow);
    assert_eq!(shell_effect(&p, "git push origin main"), Effect::Deny);
    assert_eq!(
        shell_effect(&p, "git status && git push origin main"),
        Effect::Deny
    );
    assert_eq!(shell_effect(&p, "git status; git push"), Effect::Deny);
    assert_eq!(shell_effect(&p, "echo hi | git push"), Effect::Deny);
    assert_eq!(shell_effect(&p, "g'i't push"), Effect::Deny);
    assert_eq!(shell_effect(&p, "git  push   origin"), Effect::Deny);
    assert_eq!(shell_effect(&p, "git commit -m x"), Effect::Ask);
}

#[test]
fn compound_allowed_only_when_every_part_is() {
    let p = policy(&[], &[], &["Bash(git status *)", "Bash(git diff *)"]);
    assert_eq!(shell_effect(&p, "git status && git diff"), Effect::Allow);
    assert_eq!(shell_effect(&p, "git status && rm -rf x"), Effect::Ask);
    assert_eq!(shell_effect(&p, "git status $(id)"), Effect::Ask);
    assert_eq!(shell_effect(&p, "git status > /tmp/x"), Effect::Ask);
}

#[test]
fn files_of_shell_commands_meet_file_rules() {
    let p = policy(
        &["Read(./.env)"],
        &[],
        &["Bash(echo *)", "Bash(cat *)", "Edit(./src/**)"],
    );
    assert_eq!(shell_effect(&p, "cat .env"), Effect::Deny);
    assert_eq!(shell_effect(&p, "cat < .env"), Effect::Deny);
    assert_eq!(shell_effect(&p, "echo x > src/a.txt"), Effect::Allow);
    assert_eq!(shell_effect(&p, "echo x > build.sh"), Effect::Ask);
    assert_eq!(shell_effect(&p, "cat README.md"), Effect::Allow);
    assert_eq!(
        shell_effect(&p, "cat /etc/passwd"),
        Effect::Ask,
        "outside the workspace"
    );
    assert_eq!(
        shell_effect(&p, "cat ~/.ssh/id_rsa"),
        Effect::Ask,
        "protected"
    );
}

#[test]
fn nothing_matched_is_ask_and_rule_is_reported() {
    let p = policy(&["Read(./.env)"], &[], &["Read(./**)"]);
    let c = ctx();
    let e = p.evaluate(&NormalizedAction::Read(c.resolve(".env")), &c);
    assert_eq!(e.effect, Effect::Deny);
    assert_eq!(
        e.rule.as_ref().map(|r| r.pattern.as_str()),
        Some("Read(./.env)")
    );
    let e = p.evaluate(&NormalizedAction::Read(c.resolve("src/lib.rs")), &c);
    assert_eq!(e.effect, Effect::Allow);
    // Protected even though Read(./**) matches.
    let e = p.evaluate(&NormalizedAction::Read(c.resolve("app/.env.local")), &c);
    assert_eq!(e.effect, Effect::Ask);
    let e = p.evaluate(&NormalizedAction::Write(c.resolve("src/lib.rs")), &c);
    assert_eq!(e.effect, Effect::Ask);
}

#[test]
fn bad_rules_and_examples_are_reported_with_source() {
    let specs = vec![RuleSpec {
        effect: Effect::Deny,
        pattern: "Bahs(x)".into(),
        source: "g.toml:3".into(),
        ..RuleSpec::default()
    }];
    let errs = Policy::compile(&specs, Policy::empty().settings.clone()).unwrap_err();
    assert!(errs[0].to_string().starts_with("g.toml:3"));
    let specs = vec![RuleSpec {
        effect: Effect::Deny,
        pattern: "Bash(git push *)".into(),
        source: "g.toml:9".into(),
        matches: vec![
            "git push origin main".into(),
            "sudo git push".into(),
            "git status".into(),
        ],
        not_matches: vec!["git pull".into()],
        justification: None,
    }];
    let errs = Policy::compile(&specs, Policy::empty().settings.clone()).unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].to_string().contains("git status"));
}
