//! `guardian install`: the snippet merged into real-looking settings files of each agent, without
//! losing a key, with a backup, idempotent, and `--dry-run` writing nothing. The result holds the
//! README's snippet exactly.

use std::path::{Path, PathBuf};

use crate::common::run_with_stdin;
use serde_json::Value;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/install")
            .join(name),
    )
    .expect("fixture")
}

fn snippet(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("integrations")
            .join(name),
    )
    .expect("snippet")
}

/// Runs `guardian install <agent> --project <dir> --command guardian <extra…>`.
fn install(agent: &str, dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<String> = ["install", agent, "--project"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(dir.display().to_string());
    args.extend(["--command".to_string(), "guardian".to_string()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = run_with_stdin(&args, "");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn backups(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".bak"))
        .collect()
}

/// Every key path of a JSON value (objects only), for "nothing was lost" checks.
fn keys(v: &Value, prefix: &str, out: &mut Vec<String>) {
    if let Some(m) = v.as_object() {
        for (k, child) in m {
            let p = format!("{prefix}/{k}");
            out.push(p.clone());
            keys(child, &p, out);
        }
    }
}

#[test]
fn claude_code_settings_keep_every_key_and_gain_the_readme_hook() {
    let dir = tempfile::tempdir().expect("tempdir");
    let settings = dir.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("parent")).expect("mkdir");
    let before = fixture("claude-settings.json");
    std::fs::write(&settings, &before).expect("write");

    // A dry run prints the change and writes nothing.
    let out = install("claude-code", dir.path(), &["--dry-run"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("would change"));
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), before);
    assert!(backups(settings.parent().expect("dir")).is_empty());

    install("claude-code", dir.path(), &[]);
    let after: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("JSON");
    let old: Value = serde_json::from_str(&before).expect("JSON");
    let (mut want, mut got) = (Vec::new(), Vec::new());
    keys(&old, "", &mut want);
    keys(&after, "", &mut got);
    for k in &want {
        assert!(got.contains(k), "lost {k}");
    }
    assert_eq!(after["permissions"], old["permissions"]);
    // The user's own PreToolUse hook stays first; guardian's is the README snippet exactly.
    let pre = after["hooks"]["PreToolUse"].as_array().expect("array");
    assert_eq!(pre.len(), 2);
    assert_eq!(pre[0], old["hooks"]["PreToolUse"][0]);
    let readme: Value =
        serde_json::from_str(&snippet("claude-code/settings.command.json")).expect("JSON");
    assert_eq!(pre[1], readme["hooks"]["PreToolUse"][0]);
    // Each prompt's mandate compiled before the first tool call: the same hook.
    assert_eq!(
        after["hooks"]["UserPromptSubmit"],
        readme["hooks"]["UserPromptSubmit"]
    );
    // The old file was backed up.
    let baks = backups(settings.parent().expect("dir"));
    assert_eq!(baks.len(), 1);
    assert_eq!(std::fs::read_to_string(&baks[0]).expect("read"), before);

    // Installing again changes nothing and makes no new backup.
    let text = std::fs::read_to_string(&settings).expect("read");
    let out = install("claude-code", dir.path(), &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing changed"));
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), text);
    assert_eq!(backups(settings.parent().expect("dir")).len(), 1);

    // The HTTP hook replaces guardian's entry in place instead of adding a second one.
    install("claude-code", dir.path(), &["--hook", "http"]);
    let after: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("JSON");
    let pre = after["hooks"]["PreToolUse"].as_array().expect("array");
    assert_eq!(pre.len(), 2);
    let readme: Value =
        serde_json::from_str(&snippet("claude-code/settings.http.json")).expect("JSON");
    assert_eq!(pre[1], readme["hooks"]["PreToolUse"][0]);
    assert_eq!(
        after["hooks"]["UserPromptSubmit"], readme["hooks"]["UserPromptSubmit"],
        "replaced in place, not added twice"
    );
}

#[test]
fn a_missing_settings_file_is_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    install("claude-code", dir.path(), &["--unreviewed", "ask"]);
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".claude/settings.json")).expect("created"),
    )
    .expect("JSON");
    assert_eq!(
        v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "guardian hook claude-code --server http://127.0.0.1:8700 --unreviewed ask"
    );
    assert!(backups(&dir.path().join(".claude")).is_empty());
}

#[test]
fn codex_config_keeps_comments_and_tables_and_gains_the_readme_hooks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join(".codex/config.toml");
    std::fs::create_dir_all(cfg.parent().expect("parent")).expect("mkdir");
    let before = fixture("codex-config.toml");
    std::fs::write(&cfg, &before).expect("write");
    let out = install("codex", dir.path(), &[]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("/hooks"),
        "the trust step is named"
    );
    let text = std::fs::read_to_string(&cfg).expect("read");
    // Comments and every original line survive.
    for line in before.lines().filter(|l| !l.trim().is_empty()) {
        assert!(text.contains(line), "lost line {line:?}:\n{text}");
    }
    let v: toml::Value = toml::from_str(&text).expect("valid TOML");
    assert_eq!(v["features"]["hooks"].as_bool(), Some(true));
    assert_eq!(v["features"]["web_search_request"].as_bool(), Some(true));
    assert_eq!(
        v["hooks"]["PostToolUse"][0]["matcher"].as_str(),
        Some("apply_patch")
    );
    assert_eq!(
        v["profiles"]["ci"]["approval_policy"].as_str(),
        Some("never")
    );
    // guardian's hooks are the README snippet's.
    let readme: toml::Value = toml::from_str(&snippet("codex/config.toml")).expect("TOML");
    for event in ["PreToolUse", "PermissionRequest"] {
        assert_eq!(v["hooks"][event], readme["hooks"][event], "{event}");
    }
    assert_eq!(backups(cfg.parent().expect("dir")).len(), 1);
    // Idempotent.
    install("codex", dir.path(), &[]);
    assert_eq!(std::fs::read_to_string(&cfg).expect("read"), text);
    assert_eq!(backups(cfg.parent().expect("dir")).len(), 1);
}

#[test]
fn opencode_config_asks_where_guardian_answers_and_keeps_user_patterns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("opencode.json");
    std::fs::write(&cfg, fixture("opencode.json")).expect("write");
    let out = install("opencode", dir.path(), &[]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        stdout.contains("git status"),
        "allowed patterns are named: {stdout}"
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(&cfg).expect("read")).expect("JSON");
    let p = &v["permission"];
    assert_eq!(p["edit"], "ask");
    assert_eq!(p["webfetch"], "ask");
    assert_eq!(p["external_directory"], "ask");
    // A leading catch-all, the user's own patterns after it (OpenCode: the last match wins).
    let bash: Vec<(&String, &Value)> = p["bash"].as_object().expect("object").iter().collect();
    assert_eq!(bash[0].0, "*");
    assert_eq!(bash[0].1, "ask");
    assert_eq!(p["bash"]["rm *"], "deny");
    assert_eq!(p["read"]["*.env"], "deny");
    assert_eq!(v["mcp"]["docs"]["enabled"], true);
    let before = std::fs::read_to_string(&cfg).expect("read");
    install("opencode", dir.path(), &[]);
    assert_eq!(std::fs::read_to_string(&cfg).expect("read"), before);
}

#[test]
fn a_file_that_is_not_what_the_agent_reads_is_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let settings = dir.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("parent")).expect("mkdir");
    std::fs::write(&settings, "{\"hooks\": [] }").expect("write");
    let out = run_with_stdin(
        &[
            "install".into(),
            "claude-code".into(),
            "--project".into(),
            dir.path().display().to_string(),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was changed"));
    assert_eq!(
        std::fs::read_to_string(&settings).expect("read"),
        "{\"hooks\": [] }"
    );
}

/// The fenced blocks of `lang` in the documentation (the README and docs/*.md).
fn readme_blocks(lang: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(root.join("README.md")).expect("README");
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    for d in docs {
        text.push_str(&std::fs::read_to_string(d).expect("doc"));
    }
    let open = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find(&open) {
        let body = &rest[i + open.len()..];
        let end = body.find("```").unwrap_or(body.len());
        out.push(body[..end].to_string());
        rest = &body[end..];
    }
    out
}

/// The README shows the snippets `guardian install` writes, not a drifting copy.
#[test]
fn the_readme_shows_the_snippet_files() {
    let files: Vec<Value> = [
        "claude-code/settings.command.json",
        "claude-code/settings.http.json",
    ]
    .iter()
    .map(|f| serde_json::from_str(&snippet(f)).expect("JSON"))
    .collect();
    let shown: Vec<Value> = readme_blocks("json")
        .iter()
        .filter(|b| b.contains("\"hooks\""))
        .map(|b| serde_json::from_str(b).expect("README hook snippets are JSON"))
        .collect();
    assert_eq!(shown.len(), 2, "{shown:?}");
    for f in &files {
        assert!(shown.contains(f), "the README does not show {f}");
    }
    let codex: toml::Value = toml::from_str(&snippet("codex/config.toml")).expect("TOML");
    let shown = readme_blocks("toml")
        .into_iter()
        .find(|b| b.contains("[[hooks.PreToolUse]]"))
        .expect("the README shows the Codex snippet");
    let shown: toml::Value = toml::from_str(&shown).expect("TOML");
    assert_eq!(shown, codex);
    // And the configuration reference's full example is a valid config.
    let reference = readme_blocks("toml")
        .into_iter()
        .find(|b| b.starts_with("[server]"))
        .expect("the configuration reference");
    let cfg = guardian::Config::parse(&reference, "README.md").expect("the README example parses");
    assert_eq!(cfg.hooks.unreviewed, guardian::config::Unreviewed::Deny);
}

/// `--trust` records guardian's Codex hooks as trusted in `$CODEX_HOME/config.toml`, keyed by the
/// hooks file and group, with Codex's own hash (the e2e suite checks Codex agrees).
#[test]
fn codex_trust_is_recorded_in_the_user_config() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("repo");
    let codex_home = dir.path().join("codex-home");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::fs::create_dir_all(&codex_home).expect("mkdir");
    std::fs::write(codex_home.join("config.toml"), "model = \"m\"\n").expect("write");
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_guardian"))
            .args([
                "install",
                "codex",
                "--trust",
                "--command",
                "guardian",
                "--project",
            ])
            .arg(&project)
            .env("CODEX_HOME", &codex_home)
            .output()
            .expect("runs")
    };
    let out = run();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let user: toml::Value =
        toml::from_str(&std::fs::read_to_string(codex_home.join("config.toml")).expect("read"))
            .expect("TOML");
    assert_eq!(user["model"].as_str(), Some("m"), "nothing else lost");
    let state = user["hooks"]["state"].as_table().expect("hooks.state");
    let hooks_file = project.join(".codex/config.toml");
    let key = format!("{}:pre_tool_use:0:0", hooks_file.display());
    let want = guardian::integrations::install::codex_hook_hash(
        "pre_tool_use",
        "Bash|apply_patch|mcp__.*",
        "guardian hook codex --server http://127.0.0.1:8700",
        120,
    );
    assert_eq!(
        state[&key]["trusted_hash"].as_str(),
        Some(want.as_str()),
        "{state:?}"
    );
    let key = format!("{}:permission_request:0:0", hooks_file.display());
    assert!(state.contains_key(&key), "{state:?}");
    // Idempotent.
    let before = std::fs::read_to_string(codex_home.join("config.toml")).expect("read");
    let out = run();
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing changed"));
    assert_eq!(
        std::fs::read_to_string(codex_home.join("config.toml")).expect("read"),
        before
    );
}

/// Without `--command`, the hook runs `guardian-hook` (the 2 MB hook binary cargo builds beside
/// guardian) rather than `guardian hook`; installing again finds it as guardian's own hook and
/// changes nothing, and a hook written by `guardian hook` earlier is replaced, not doubled.
#[test]
fn install_prefers_the_small_hook_binary_beside_guardian() {
    let small = std::path::Path::new(env!("CARGO_BIN_EXE_guardian-hook"))
        .canonicalize()
        .expect("guardian-hook is built");
    for agent in ["claude-code", "codex"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let run = |extra: &[&str]| {
            let mut args = vec![
                "install".to_string(),
                agent.to_string(),
                "--project".to_string(),
                dir.path().display().to_string(),
            ];
            args.extend(extra.iter().map(|s| s.to_string()));
            let out = run_with_stdin(&args, "");
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        run(&["--command", "guardian"]);
        let said = run(&[]);
        assert!(said.contains(&small.display().to_string()), "{said}");
        let settings = match agent {
            "claude-code" => dir.path().join(".claude/settings.json"),
            _ => dir.path().join(".codex/config.toml"),
        };
        let text = std::fs::read_to_string(&settings).expect("settings");
        let expected = format!("{} {agent} --server http://127.0.0.1:8700", small.display());
        assert!(text.contains(&expected), "{text}");
        assert!(
            !text.contains(" hook "),
            "the `guardian hook` entry was replaced: {text}"
        );
        assert!(run(&[]).contains("already installed"), "idempotent");
    }
}
