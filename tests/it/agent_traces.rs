//! `guardian traces import claude-code|codex` on fixtures in the agents' real session formats,
//! and `guardian eval --label` labelling the unlabeled cases by hand before an eval.

use std::process::Output;

use serde_json::Value;

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/traces/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn run(args: &[&str], stdin: &str) -> Output {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    crate::common::run_with_stdin(&args, stdin)
}

fn import(format: &str, file: &str) -> Vec<Value> {
    let o = run(&["traces", "import", format, &fixture(file)], "");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON case per line"))
        .collect()
}

fn by_id<'a>(cases: &'a [Value], suffix: &str) -> &'a Value {
    cases
        .iter()
        .find(|c| c["id"].as_str().is_some_and(|id| id.ends_with(suffix)))
        .unwrap_or_else(|| panic!("no case {suffix} in {cases:?}"))
}

/// Every imported request is one the API accepts.
fn assert_decodable(cases: &[Value]) {
    for c in cases {
        let body = serde_json::to_vec(&c["request"]).expect("encode");
        if let Err(e) = guardian::ReviewRequest::from_json(&body) {
            panic!("{}: {}: {}", c["id"], e.field, e.message);
        }
    }
}

#[test]
fn claude_code_transcripts_become_cases_labeled_by_rejections() {
    let cases = import("claude-code", "claude-code-session.jsonl");
    // Read, Bash and Edit; TodoWrite has no side effect guardian judges.
    assert_eq!(cases.len(), 3, "{cases:?}");
    assert_decodable(&cases);
    let read = by_id(&cases, "toolu_A");
    assert_eq!(read["id"], "cc-42:toolu_A");
    assert_eq!(read["request"]["action"]["kind"], "read");
    assert_eq!(read["expected"], Value::Null);
    assert_eq!(read["category"], "claude-code");
    assert_eq!(
        read["request"]["intent"],
        "Fix the flaky test in tests/net.rs, nothing else"
    );
    let rejected = by_id(&cases, "toolu_B");
    assert_eq!(rejected["expected"], "deny");
    assert_eq!(rejected["request"]["action"]["kind"], "shell");
    assert!(
        rejected["notes"]
            .as_str()
            .unwrap_or("")
            .contains("rejected")
    );
    // The transcript is what came before the call: the user's request, the read and its result,
    // and not the call itself nor anything after it.
    let turns = rejected["request"]["transcript"]
        .as_array()
        .expect("transcript");
    assert_eq!(turns[0]["role"], "user");
    assert!(turns.iter().any(|t| t["content"] == "fn flaky() { ... }"));
    assert!(
        !turns
            .iter()
            .any(|t| t["content"].as_str().unwrap_or("").contains("credentials"))
    );
    let edit = by_id(&cases, "toolu_D");
    assert_eq!(edit["request"]["action"]["kind"], "write");
    assert!(
        edit["request"]["action"]["diff"]
            .as_str()
            .unwrap_or("")
            .contains("+sleep(100)")
    );
    assert_eq!(edit["expected"], Value::Null, "ran: not a human decision");
}

#[test]
fn codex_rollouts_become_cases_labeled_by_approval_prompts() {
    let cases = import("codex", "codex-rollout.jsonl");
    // cargo test, a two-file patch (one case per file), the push, the MCP call.
    assert_eq!(cases.len(), 5, "{cases:?}");
    assert_decodable(&cases);
    let test = by_id(&cases, "call_1");
    assert_eq!(test["request"]["action"]["command"], "cargo test");
    assert_eq!(test["request"]["action"]["cwd"], "/work/app");
    assert_eq!(
        test["expected"],
        Value::Null,
        "no prompt: no human decision"
    );
    // The injected environment context is not the user's intent.
    assert_eq!(
        test["request"]["intent"],
        "Bump the version to 1.2.0 and run the tests"
    );
    // Approved at the prompt: allow, for each file of the patch.
    for suffix in ["call_2:1", "call_2:2"] {
        let c = by_id(&cases, suffix);
        assert_eq!(c["expected"], "allow", "{c}");
        assert_eq!(c["request"]["action"]["kind"], "write");
    }
    assert_eq!(
        by_id(&cases, "call_2:1")["request"]["action"]["path"],
        "Cargo.toml"
    );
    // argv vectors are quoted back into a command line; the rejection is a deny.
    let push = by_id(&cases, "call_3");
    assert_eq!(
        push["request"]["action"]["command"],
        "git push --force origin main"
    );
    assert_eq!(push["expected"], "deny");
    let mcp = by_id(&cases, "call_4");
    assert_eq!(mcp["request"]["action"]["kind"], "mcp");
    assert_eq!(mcp["request"]["action"]["server"], "github");
    assert_eq!(mcp["request"]["action"]["tool"], "create_issue");
}

#[test]
fn unlabeled_cases_are_refused_by_eval_and_labeled_by_hand() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("cc.jsonl");
    let o = run(
        &[
            "traces",
            "import",
            "claude-code",
            &fixture("claude-code-session.jsonl"),
        ],
        "",
    );
    std::fs::write(&file, &o.stdout).expect("write");
    let f = file.to_str().expect("utf-8 path");
    let cfg = dir.path().join("guardian.toml");
    std::fs::write(&cfg, "[policy]\nallow = [\"Read(/**)\"]\n").expect("config");
    let c = cfg.to_str().expect("utf-8 path");
    let out = dir.path().join("out");
    let eval = || {
        run(
            &[
                "eval",
                f,
                "--config",
                c,
                "--out",
                out.to_str().expect("path"),
            ],
            "",
        )
    };
    // Two cases are unlabeled: eval refuses, naming the file and the way out.
    let o = eval();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("unlabeled") && err.contains("--label"),
        "{err}"
    );
    // Label the first (the read) allow, then quit: saved at once, the rest left, exit 1.
    let o = run(&["eval", "--label", f], "a\nq\n");
    assert_eq!(o.status.code(), Some(1));
    let shown = String::from_utf8_lossy(&o.stdout);
    assert!(
        shown.contains("ACTION read: /work/repo/tests/net.rs"),
        "{shown}"
    );
    assert!(
        shown.contains("1 labeled, 0 skipped, 1 unlabeled left"),
        "{shown}"
    );
    let after: Vec<Value> = std::fs::read_to_string(&file)
        .expect("read")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(after.len(), 3, "no line lost");
    assert_eq!(by_id(&after, "toolu_A")["expected"], "allow");
    assert_eq!(by_id(&after, "toolu_B")["expected"], "deny", "kept");
    assert_eq!(by_id(&after, "toolu_D")["expected"], Value::Null);
    // A bad answer is asked again; then deny the edit: all labeled, exit 0.
    let o = run(&["eval", "--label", f], "maybe\nd\n");
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("a, d, s or q"));
    // Now the eval runs: the read is allowed by the rule, the others denied (no reviewer).
    let o = eval();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("3 cases: accuracy 100.0%"), "{stdout}");
    // Not a terminal: the progress bar falls back to a line.
    assert!(String::from_utf8_lossy(&o.stderr).contains("guardian eval: 3/3 cases"));
}
