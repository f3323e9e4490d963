//! Replays the cargo-fuzz corpus on stable Rust, so CI catches a regression on any saved input
//! without nightly or cargo-fuzz.
//!
//! This file owns the replay: every file of `fuzz/corpus/<target>/` (hand-made seeds and whatever
//! fuzzing added) and of `fuzz/artifacts/<target>/` (crash reproducers cargo-fuzz saved) goes
//! through the target's code under `catch_unwind`, and must not panic. The code itself is not
//! here: it is `fuzz/src/lib.rs`, included below with `#[path]` (this package cannot depend on
//! the fuzz crate), and each `fuzz/fuzz_targets/<target>.rs` is a one-line call to the same
//! function, so the fuzzer and this test always run the same thing. Inputs that still crash
//! guardian are kept in `fuzz/corpus-crashes/` until fixed (see fuzz/README.md).

#[path = "../../fuzz/src/lib.rs"]
mod targets;

use std::any::Any;
use std::path::{Path, PathBuf};

use guardian::config::{Config, DEFAULT_POLICY, DEFAULT_POLICY_NAME};
use guardian::integrations::claude_code::{self, HookInput, Translation};
use guardian::normalize::shell;
use guardian::policy::{Policy, example_context, import};
use guardian::request::Action;
use guardian::verdict::Effect;
use guardian::{ReviewRequest, normalize};

/// Seeds each target's corpus must hold, so the replay cannot pass on an empty directory.
const MIN_SEEDS: usize = 5;

/// The replay thread's stack: tokio's default for its worker and blocking-pool threads, where
/// the server runs this code. Set explicitly so `RUST_MIN_STACK` cannot change the verdict.
const STACK_BYTES: usize = 2 * 1024 * 1024;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The regular files of `dir`, sorted; none when it does not exist.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn seed(target: &str, name: &str) -> Vec<u8> {
    let path = fuzz_dir().join("corpus").join(target).join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("seed {} is missing: {e}", path.display()))
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into())
}

/// Runs every corpus and artifact file of `target` through its code; returns how many ran.
fn replay(target: &'static str) -> usize {
    let run = targets::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, run)| *run)
        .unwrap_or_else(|| panic!("{target} is not in fuzz/src/lib.rs TARGETS"));
    let mut files = files_in(&fuzz_dir().join("corpus").join(target));
    files.extend(files_in(&fuzz_dir().join("artifacts").join(target)));
    let count = files.len();
    let panics = std::thread::Builder::new()
        .name(format!("replay-{target}"))
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let mut panics = Vec::new();
            for path in &files {
                let data = std::fs::read(path).expect("readable corpus file");
                if let Err(payload) = std::panic::catch_unwind(|| run(&data)) {
                    panics.push(format!("{}: {}", path.display(), panic_message(&*payload)));
                }
            }
            panics
        })
        .expect("spawn the replay thread")
        .join()
        .expect("the replay thread itself does not panic");
    assert!(
        panics.is_empty(),
        "{target}: {} input(s) panicked:\n{}",
        panics.len(),
        panics.join("\n")
    );
    count
}

#[test]
fn every_target_has_a_seed_corpus_and_an_entry_point() {
    let mut corpus_dirs: Vec<String> = std::fs::read_dir(fuzz_dir().join("corpus"))
        .expect("fuzz/corpus exists")
        .map(|e| {
            e.expect("readable entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    corpus_dirs.sort();
    let mut names: Vec<String> = targets::TARGETS
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    names.sort();
    assert_eq!(corpus_dirs, names, "one corpus directory per target");
    let manifest =
        std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml exists");
    for (name, _) in targets::TARGETS {
        let seeds = files_in(&fuzz_dir().join("corpus").join(name));
        assert!(
            seeds.len() >= MIN_SEEDS,
            "fuzz/corpus/{name} holds {} files, fewer than {MIN_SEEDS}",
            seeds.len()
        );
        let entry = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
        let text = std::fs::read_to_string(&entry)
            .unwrap_or_else(|e| panic!("{} is missing: {e}", entry.display()));
        assert!(
            text.contains(&format!("guardian_fuzz::{name}(data);")),
            "{} must call guardian_fuzz::{name}(data), the code this test replays",
            entry.display()
        );
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "fuzz/Cargo.toml has no [[bin]] for {name}"
        );
    }
}

#[test]
fn shell_normalize_corpus_does_not_panic() {
    assert!(replay("shell_normalize") >= MIN_SEEDS);
}

#[test]
fn policy_parse_corpus_does_not_panic() {
    assert!(replay("policy_parse") >= MIN_SEEDS);
}

#[test]
fn policy_import_corpus_does_not_panic() {
    assert!(replay("policy_import") >= MIN_SEEDS);
}

#[test]
fn request_decode_corpus_does_not_panic() {
    assert!(replay("request_decode") >= MIN_SEEDS);
}

#[test]
fn shell_seeds_are_understood_as_expected() {
    let lossy = |name: &str| String::from_utf8_lossy(&seed("shell_normalize", name)).into_owned();
    let cfg = Config::parse(DEFAULT_POLICY, DEFAULT_POLICY_NAME).expect("default policy parses");
    let policy = Policy::from_config(&cfg, Vec::new()).expect("default policy compiles");
    let ctx = example_context();
    let judge = |command: &str| {
        let action = Action::Shell {
            command: command.to_string(),
            cwd: None,
        };
        policy
            .evaluate(&normalize::normalize(&action, &ctx), &ctx)
            .effect
    };
    assert_eq!(judge(&lossy("simple_status")), Effect::Allow);
    let piped = shell::analyze(&lossy("curl_pipe_sh"));
    assert!(!piped.remote_code.is_empty(), "{piped:?}");
    assert_eq!(judge(&lossy("curl_pipe_sh")), Effect::Deny);
    let deep = shell::analyze(&lossy("parens_500"));
    assert!(deep.parse_error.is_some(), "500 open brackets are refused");
    assert_ne!(judge(&lossy("parens_500")), Effect::Allow);
    // A wrapper nested deeper than the parser follows is still denied on its text.
    assert_eq!(judge(&lossy("sh_c_9_deep")), Effect::Deny);
}

#[test]
fn config_seeds_parse_as_expected() {
    let text = |name: &str| String::from_utf8_lossy(&seed("policy_parse", name)).into_owned();
    let excerpt = Config::parse(&text("default_excerpt.toml"), "default_excerpt.toml")
        .expect("the default policy excerpt parses");
    assert!(excerpt.rule_specs().len() > 10);
    Config::parse(&text("rule_tables.toml"), "rule_tables.toml").expect("rule tables parse");
    assert!(Config::parse(&text("unterminated_table.toml"), "u.toml").is_err());
    assert!(Config::parse(&text("deep_arrays.toml"), "d.toml").is_err());
    assert!(Config::parse(&text("remote_code_allow.toml"), "r.toml").is_err());
    assert!(
        Config::parse(&text("nul_and_invalid_utf8.toml"), "n.toml").is_err(),
        "a raw NUL inside a TOML string is an error"
    );
}

#[test]
fn import_seeds_translate_as_expected() {
    let text = |name: &str| String::from_utf8_lossy(&seed("policy_import", name)).into_owned();
    let codex = import::import_codex(&text("codex_basic.rules"), "codex_basic.rules")
        .expect("the basic Codex rules import");
    assert_eq!(codex.rules.len(), 1);
    assert_eq!(codex.rules[0].pattern, "Bash(git push *)");
    assert_eq!(codex.rules[0].effect, Effect::Deny);
    assert!(import::import_codex(&text("codex_unterminated.rules"), "u.rules").is_err());
    let json: serde_json::Value =
        serde_json::from_str(&text("claude_settings.json")).expect("the Claude seed is JSON");
    let claude = import::import_claude(&json, "settings.json").expect("Claude settings import");
    assert_eq!(claude.rules.len(), 7);
    let json: serde_json::Value =
        serde_json::from_str(&text("opencode_v2.json")).expect("the OpenCode seed is JSON");
    import::import_opencode(&json, "opencode.json").expect("OpenCode v2 permissions import");
}

#[test]
fn request_seeds_decode_as_expected() {
    let request = ReviewRequest::from_json(&seed("request_decode", "api_shell_valid.json"))
        .expect("a valid review request decodes");
    assert!(
        matches!(&request.action, Action::Shell { command, .. } if command == "git status"),
        "{:?}",
        request.action
    );
    let invalid = ReviewRequest::from_json(&seed("request_decode", "api_invalid_utf8.json"));
    assert!(invalid.is_err(), "invalid UTF-8 is an error, not a panic");
    let deep = ReviewRequest::from_json(&seed("request_decode", "api_deep_nesting.json"));
    assert!(
        deep.is_err(),
        "1000 nested arrays hit serde_json's recursion limit"
    );
    assert_eq!(
        ReviewRequest::from_json(&seed("request_decode", "api_unknown_field.json"))
            .expect_err("unknown fields are refused")
            .field,
        "action.colour"
    );
    let hook: HookInput = serde_json::from_slice(&seed(
        "request_decode",
        "hook_cc_permissionrequest-bash.json",
    ))
    .expect("the Claude Code fixture is a hook input");
    let Translation::Review(requests) =
        claude_code::translate(&hook).expect("a Bash hook translates")
    else {
        panic!("a Bash call is reviewed, not passed");
    };
    let actions: Vec<&Action> = requests.iter().map(|r| &r.action).collect();
    let expected = Action::Shell {
        command: "git push origin main".into(),
        cwd: Some("/work/repo".into()),
    };
    assert_eq!(actions, [&expected]);
}
