//! The code each cargo-fuzz target runs, one function per target, shared by the targets in
//! `fuzz/fuzz_targets/` and by the stable replay test `tests/fuzz_corpus.rs` (which includes this
//! file with `#[path]`, since the main package cannot depend on this crate). Keep it that way:
//! a target's body is one call to its function here, so the fuzzer and the replay test can never
//! drift apart. Every function must return normally for any input: errors are fine, panics,
//! aborts and hangs are bugs in guardian.
//!
//! Nothing here may touch the filesystem or the network, whatever the input says: `[policy]
//! import` files are not followed and a hook input's `transcript_path` is dropped.

use std::sync::LazyLock;

use guardian::ReviewRequest;
use guardian::config::{Config, DEFAULT_POLICY, DEFAULT_POLICY_NAME};
use guardian::integrations::claude_code::{self, HookInput, Translation};
use guardian::normalize::{self, NormalizedAction, shell, shell_text};
use guardian::policy::protect::Protections;
use guardian::policy::{self, Policy, Settings, import, rule};
use guardian::request::Action;
use guardian::verdict::Effect;

/// The code of one target: it gets the raw input and must return normally.
pub type Target = fn(&[u8]);

/// Every target: its name (the directory of its corpus) and its function.
pub const TARGETS: &[(&str, Target)] = &[
    ("shell_normalize", shell_normalize),
    ("policy_parse", policy_parse),
    ("policy_import", policy_import),
    ("request_decode", request_decode),
];

/// The embedded default policy (it has no `[policy] import`, so compiling it reads no file).
static DEFAULT_POLICY_COMPILED: LazyLock<Policy> = LazyLock::new(|| {
    let cfg = Config::parse(DEFAULT_POLICY, DEFAULT_POLICY_NAME)
        .expect("the embedded default policy parses");
    Policy::from_config(&cfg, Vec::new()).expect("the embedded default policy compiles")
});

/// Actions a fuzzed policy is evaluated on, so its matchers run too.
fn sample_actions() -> [Action; 6] {
    [
        Action::Shell {
            command: "git push --force origin main && cat .env > /tmp/x".into(),
            cwd: None,
        },
        Action::Read {
            path: "~/.ssh/id_rsa".into(),
            cwd: None,
            recursive: false,
        },
        Action::Write {
            path: "src/lib.rs".into(),
            cwd: None,
            content: None,
            diff: None,
        },
        Action::fetch("https://sub.example.com/x"),
        Action::Fetch {
            url: "https://sub.example.com/x".into(),
            method: Some("POST".into()),
            headers: [("Authorization".to_string(), "Bearer t".to_string())].into(),
            body: Some("{}".into()),
        },
        Action::Mcp {
            server: "github".into(),
            tool: "create_issue".into(),
            arguments: serde_json::Value::Null,
        },
    ]
}

/// `shell_normalize`: the input as a shell command line (lossy UTF-8), taken apart by
/// `guardian::normalize::shell::analyze`, read textually by `shell_text::deny_candidates`, and
/// judged by the default policy.
///
/// Also checks guardian's central promise: a line that is not fully understood (parse error,
/// unknowns, a dynamic command, remote code) is never allowed by a rule.
pub fn shell_normalize(data: &[u8]) {
    let command = String::from_utf8_lossy(data);
    let analysis = shell::analyze(&command);
    let _ = shell_text::deny_candidates(&command);
    let not_static = analysis.parse_error.is_some()
        || !analysis.unknowns.is_empty()
        || !analysis.remote_code.is_empty()
        || analysis.commands.iter().any(|c| c.dynamic.is_some());
    let ctx = policy::example_context();
    let (evaluation, _steps) =
        DEFAULT_POLICY_COMPILED.explain(&NormalizedAction::Shell(analysis), &ctx);
    assert!(
        !(not_static && evaluation.effect == Effect::Allow),
        "a command line that is not statically understood was allowed by a rule: {command:?}"
    );
}

/// `policy_parse`: the input as config text (lossy UTF-8) through `Config::parse`; each line
/// also through the rule parser `policy::rule::parse`. A config that parses is compiled with
/// `Policy::compile` (not `Policy::from_config`, which reads the `[policy] import` files) and
/// evaluated on a few sample actions.
pub fn policy_parse(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let _ = rule::parse(line);
    }
    let Ok(cfg) = Config::parse(&text, "fuzz.toml") else {
        return;
    };
    let _ = cfg.imports();
    let Ok(protections) = Protections::new(
        &cfg.policy.protect_read,
        &cfg.policy.protect_write,
        Vec::new(),
    ) else {
        return;
    };
    let settings = Settings {
        default: cfg.policy.default,
        outside_workspace: cfg.policy.outside_workspace,
        remote_code: cfg.policy.remote_code,
        protections,
    };
    let Ok(compiled) = Policy::compile(&cfg.rule_specs(), settings) else {
        return;
    };
    let _ = compiled.listing();
    let ctx = policy::example_context();
    for action in sample_actions() {
        let _ = compiled.explain(&normalize::normalize(&action, &ctx), &ctx);
    }
}

/// `policy_import`: the input (lossy UTF-8) as a Codex `.rules` file (`import::import_codex`)
/// and, when it is JSON, as Claude Code settings (`import::import_claude`) and an OpenCode
/// config (`import::import_opencode`); every import that succeeds is printed with
/// `import::to_toml`.
pub fn policy_import(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut results = vec![import::import_codex(&text, "fuzz.rules")];
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) {
        results.push(import::import_claude(&json, "settings.json"));
        results.push(import::import_opencode(&json, "opencode.json"));
    }
    for imported in results.into_iter().flatten() {
        let _ = import::to_toml(&imported);
    }
}

/// `request_decode`: the raw bytes as an API v1 body (`ReviewRequest::from_json`), normalised
/// and judged by the default policy when they decode; and as a Claude Code / Codex hook input
/// (`serde_json` into `HookInput`, then `integrations::claude_code::translate`).
pub fn request_decode(data: &[u8]) {
    if let Ok(request) = ReviewRequest::from_json(data) {
        let ctx = policy::example_context();
        let action = normalize::normalize(&request.action, &ctx);
        let _ = DEFAULT_POLICY_COMPILED.evaluate(&action, &ctx);
    }
    if let Ok(mut hook) = serde_json::from_slice::<HookInput>(data) {
        // `translate` reads the transcript file the input names; never follow it here.
        hook.transcript_path = None;
        if let Ok(Translation::Review(requests)) = claude_code::translate(&hook) {
            for request in &requests {
                let _ = request.validate();
            }
        }
    }
}
