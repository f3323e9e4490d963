//! `guardian eval` end to end: the real pipeline over a small case file, the three reports, and
//! the baseline gate.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_guardian");

#[test]
fn eval_writes_three_reports_and_gates_on_the_false_allow_rate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("guardian.toml");
    std::fs::write(&cfg, "[policy]\ndeny = [\"Bash(git push *)\"]\nallow = [\"Bash(git status)\", \"Bash(echo *)\"]\n").expect("config");
    let cases = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/eval/toy.jsonl");
    let out = dir.path().join("run1");
    let o = Command::new(BIN)
        .args(["eval", cases, "--concurrency", "2", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("4 cases: accuracy 50.0%"));
    for f in ["report.json", "report.md", "report.html", "audit.jsonl"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).expect("json"))
            .expect("valid");
    let m = &report["metrics"];
    assert_eq!(m["true_deny"], 1);
    assert_eq!(m["true_allow"], 1);
    assert_eq!(m["false_allow"], 1);
    assert_eq!(m["false_deny"], 1);
    assert_eq!(m["false_allow_rate"], 0.5);
    assert_eq!(report["decided_by"]["fallback"], 0.25);
    assert_eq!(report["prompt_version"], "reviewer-v5");
    let audit = std::fs::read_to_string(out.join("audit.jsonl")).expect("audit");
    assert_eq!(
        audit.lines().count(),
        4,
        "every case went through the audited pipeline"
    );
    // A baseline that never allowed anything unsafe: this run is worse, exit 1.
    let mut better = report.clone();
    better["metrics"]["false_allow_rate"] = serde_json::json!(0.0);
    if let Some(outcomes) = better["outcomes"].as_array_mut() {
        for o in outcomes.iter_mut().filter(|o| o["id"] == "t-exfil") {
            o["decision"] = serde_json::json!("deny");
        }
    }
    let base = dir.path().join("baseline.json");
    std::fs::write(&base, better.to_string()).expect("write");
    let o = Command::new(BIN)
        .args(["eval", cases, "--config"])
        .arg(&cfg)
        .arg("--baseline")
        .arg(&base)
        .arg("--out")
        .arg(dir.path().join("run2"))
        .output()
        .expect("runs");
    assert_eq!(
        o.status.code(),
        Some(1),
        "a rising false-allow rate fails the run"
    );
    let md = std::fs::read_to_string(dir.path().join("run2/report.md")).expect("md");
    assert!(
        md.contains("1 cases flipped") && md.contains("`t-exfil`: deny → allow"),
        "{md}"
    );
    // Against itself: no change, exit 0.
    let o = Command::new(BIN)
        .args(["eval", cases, "--config"])
        .arg(&cfg)
        .arg("--baseline")
        .arg(out.join("report.json"))
        .arg("--out")
        .arg(dir.path().join("run3"))
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(0));
    // A malformed case file is an error naming file and line.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"id\": \"x\"}\n").expect("write");
    let o = Command::new(BIN)
        .arg("eval")
        .arg(&bad)
        .arg("--out")
        .arg(dir.path().join("run4"))
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.jsonl:1"));
}

#[tokio::test]
async fn eval_through_a_fake_reviewer_counts_reviews_and_tokens() {
    use crate::common::*;
    let llm = allowing_reviewer().await;
    let h = Harness::new(&openai_reviewer(&llm.uri(), 10_000));
    let cases = guardian::eval::load_cases(&[concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/eval/toy.jsonl"
    )])
    .expect("cases");
    let outcomes = guardian::eval::run(&h.guardian, &cases, 2, &|_, _| {}).await;
    let r = guardian::eval::Report::new(
        outcomes,
        vec![],
        "t".into(),
        "openai/test-model".into(),
        "reviewer-v5".into(),
        Default::default(),
    );
    // git push: denied by rule; git status: allowed by rule (the harness policy); the two others
    // reach the fake reviewer, which allows them.
    assert_eq!(r.decided_by["reviewer"], 0.5);
    assert_eq!(r.tokens["prompt_total"], 642.0);
    assert_eq!(r.tokens["prompt_per_review"], 321.0);
    assert_eq!(
        r.metrics.false_allow, 1,
        "the 'unsafe' echo was allowed by the reviewer"
    );
}
