//! Each importer on the examples of its own format's documentation.

use super::*;
use crate::normalize::{NormalizedAction, normalize};
use crate::policy::{Policy, example_context};
use crate::request::Action;

fn compile(imported: &Imported) -> Policy {
    Policy::compile(&imported.rules, Policy::empty().settings().clone())
        .expect("translated rules compile")
}

fn shell(p: &Policy, cmd: &str) -> Effect {
    let ctx = example_context();
    let action = normalize(
        &Action::Shell {
            command: cmd.into(),
            cwd: None,
        },
        &ctx,
    );
    p.evaluate(&action, &ctx).effect
}

fn file(p: &Policy, path: &str, write: bool) -> Effect {
    let ctx = example_context();
    let a = if write {
        NormalizedAction::Write(ctx.resolve(path))
    } else {
        NormalizedAction::Read(ctx.resolve(path))
    };
    p.evaluate(&a, &ctx).effect
}

#[test]
fn claude_code_settings_from_its_docs() {
    let json: Value = serde_json::from_str(
        r#"{
          "permissions": {
            "allow": ["Bash(npm run lint)", "Bash(npm run test:*)", "Read(~/.zshrc)"],
            "deny": ["Bash(curl:*)", "Read(./.env)", "Read(./.env.*)", "Read(./secrets/**)", "WebSearch"],
            "additionalDirectories": ["../docs/"]
          }
        }"#,
    )
    .expect("json");
    let imported = import_claude(&json, "settings.json").expect("imports");
    assert_eq!(imported.rules.len(), 7, "{:?}", imported.rules);
    assert!(
        imported.rules.iter().any(
            |r| r.source == "settings.json: permissions.deny[0]" && r.pattern == "Bash(curl:*)"
        )
    );
    assert!(imported.warnings.iter().any(|w| w.contains("WebSearch")));
    assert!(
        imported
            .warnings
            .iter()
            .any(|w| w.contains("additionalDirectories"))
    );
    let p = compile(&imported);
    assert_eq!(shell(&p, "npm run test -- --watch"), Effect::Allow);
    assert_eq!(shell(&p, "npm run lint"), Effect::Allow);
    assert_eq!(shell(&p, "curl https://example.com"), Effect::Deny);
    assert_eq!(shell(&p, "npm run lint && curl x.example"), Effect::Deny);
    assert_eq!(file(&p, "secrets/prod/key.pem", false), Effect::Deny);
    assert_eq!(file(&p, ".env.local", false), Effect::Deny);
}

#[test]
fn opencode_v1_map_from_its_docs() {
    let json: Value = serde_json::from_str(
        r#"{
          "$schema": "https://opencode.ai/config.json",
          "permission": {
            "bash": {"*": "ask", "git *": "allow", "npm *": "allow", "rm *": "deny", "grep *": "allow"},
            "edit": {"*": "deny", "packages/web/src/content/docs/*.mdx": "allow"},
            "external_directory": {"~/projects/personal/**": "allow"},
            "doom_loop": "ask"
          }
        }"#,
    )
    .expect("json");
    let imported = import_opencode(&json, "opencode.json").expect("imports");
    let patterns: Vec<&str> = imported.rules.iter().map(|r| r.pattern.as_str()).collect();
    for want in [
        "Bash(git *)",
        "Bash(npm *)",
        "Bash(rm *)",
        "Bash(grep *)",
        "Edit(packages/web/src/content/docs/*.mdx)",
        "Read(~/projects/personal/**)",
        "Edit(~/projects/personal/**)",
    ] {
        assert!(patterns.contains(&want), "{want} missing from {patterns:?}");
    }
    assert!(
        imported
            .warnings
            .iter()
            .any(|w| w.contains("default = \"deny\"")),
        "catch-all deny must be reported: {:?}",
        imported.warnings
    );
    let p = compile(&imported);
    assert_eq!(shell(&p, "git status"), Effect::Allow);
    assert_eq!(shell(&p, "rm -rf build"), Effect::Deny);
    assert_eq!(shell(&p, "git status && rm x"), Effect::Deny);
    assert_eq!(shell(&p, "cargo build"), Effect::Ask);
    assert_eq!(
        file(&p, "packages/web/src/content/docs/intro.mdx", true),
        Effect::Allow
    );
}

#[test]
fn opencode_last_match_wins_differences_are_reported() {
    let json: Value = serde_json::from_str(
        r#"{"permission": {"bash": {"git push *": "deny", "git push --dry-run *": "allow"}}}"#,
    )
    .expect("json");
    let imported = import_opencode(&json, "opencode.json").expect("imports");
    assert!(
        imported
            .warnings
            .iter()
            .any(|w| w.contains("git push --dry-run") && w.contains("stricter")),
        "{:?}",
        imported.warnings
    );
    let p = compile(&imported);
    assert_eq!(
        shell(&p, "git push --dry-run origin"),
        Effect::Deny,
        "guardian keeps the stricter decision"
    );
}

#[test]
fn opencode_v2_array_from_its_docs() {
    let text = r#"{
      "$schema": "https://opencode.ai/config.json",
      // ask before shell commands, allow git inspection, block pushes
      "permissions": [
        { "action": "shell", "resource": "*", "effect": "ask" },
        { "action": "shell", "resource": "git status *", "effect": "allow" },
        { "action": "shell", "resource": "git diff *", "effect": "allow" },
        { "action": "shell", "resource": "git push *", "effect": "deny" },
        { "action": "read", "resource": "*.env", "effect": "deny" },
      ],
    }"#;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("opencode.jsonc");
    std::fs::write(&path, text).expect("write");
    let imported = import_file(&path).expect("imports");
    assert_eq!(imported.format, "OpenCode config");
    let p = compile(&imported);
    assert_eq!(shell(&p, "git status"), Effect::Allow);
    assert_eq!(shell(&p, "git push origin main"), Effect::Deny);
    assert_eq!(file(&p, "config/prod.env", false), Effect::Deny);
}

#[test]
fn codex_rules_from_its_docs() {
    let text = r#"
# Prompt before running commands with the prefix `gh pr view` outside the sandbox.
prefix_rule(
    # The prefix to match.
    pattern = ["gh", "pr", "view"],
    decision = "prompt",
    justification = "Viewing PRs is allowed with approval",
    match = [
        "gh pr view 7888",
        "gh pr view --repo openai/codex",
        "gh pr view 7888 --json title,body,comments",
    ],
    not_match = [
        # Does not match because the `pattern` must be an exact prefix.
        "gh pr --repo openai/codex view 7888",
    ],
)

prefix_rule(
    pattern = ["git", ["push", "fetch"]],
    decision = "forbidden",  # allow | prompt | forbidden
    match = [["git", "push", "origin", "main"]],
    not_match = [["git", "status"]],
)

prefix_rule(pattern = ["cargo", "test"])
"#;
    let imported = import_codex(text, "default.rules").expect("imports");
    let patterns: Vec<&str> = imported.rules.iter().map(|r| r.pattern.as_str()).collect();
    assert_eq!(
        patterns,
        vec![
            "Bash(gh pr view *)",
            "Bash(git push *)",
            "Bash(git fetch *)",
            "Bash(cargo test *)"
        ]
    );
    assert_eq!(imported.rules[0].effect, Effect::Ask);
    assert_eq!(imported.rules[0].source, "default.rules:3");
    assert_eq!(imported.rules[1].effect, Effect::Deny);
    assert_eq!(
        imported.rules[3].effect,
        Effect::Allow,
        "decision defaults to allow"
    );
    let p = compile(&imported);
    assert_eq!(shell(&p, "git fetch origin"), Effect::Deny);
    assert_eq!(shell(&p, "timeout 5 git push"), Effect::Deny);
    assert_eq!(shell(&p, "cargo test --workspace"), Effect::Allow);
    // A failing example is an import error, as in Codex.
    let bad = r#"prefix_rule(pattern = ["git", "push"], match = ["git status"])"#;
    assert!(
        import_codex(bad, "bad.rules")
            .unwrap_err()
            .to_string()
            .contains("does not match")
    );
    assert!(import_codex("load('x')", "x.rules").is_err());
    assert!(import_codex("prefix_rule(pattern = [\"a\"], bogus = \"x\")", "x.rules").is_err());
}
