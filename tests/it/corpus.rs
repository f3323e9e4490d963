//! The bypass corpus (`tests/corpus/*.toml`): every case through the policy and through the whole
//! pipeline (no reviewer configured), checking decision and decided_by.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use guardian::Guardian;
use guardian::config::Config;
use guardian::policy::testing;
use guardian::request::{Action, ReviewRequest, SessionInfo};
use guardian::verdict::{DecidedBy, Decision, Effect};

fn corpus_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("tests/corpus")
        .expect("tests/corpus exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn corpus_is_large_and_every_case_passes_the_policy() {
    let mut total = 0;
    let mut failures = Vec::new();
    for f in corpus_files() {
        let results =
            testing::run_file(&f, &guardian::policy::Policy::empty()).expect("corpus loads");
        total += results.len();
        for r in results.into_iter().filter(|r| !r.passed) {
            failures.push(format!(
                "{}: expected {}, got {} {:?} ({})",
                r.name,
                r.expected,
                r.got.as_str(),
                r.got_rule,
                r.reason
            ));
        }
    }
    assert!(total >= 200, "the corpus has only {total} cases");
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn guardian_for(
    file: &Path,
    policy: &guardian::config::PolicyConfig,
    text: &str,
    audit: &Path,
    home: &Path,
) -> Arc<Guardian> {
    let mut cfg = Config::with_policy(policy.clone(), &file.display().to_string(), text);
    cfg.audit.path = audit.to_path_buf();
    Arc::new(
        Guardian::from_config(cfg)
            .expect("guardian builds")
            .with_home(Some(home.to_path_buf())),
    )
}

#[tokio::test]
async fn every_case_through_the_whole_pipeline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    let mut total = 0;
    for f in corpus_files() {
        let text = std::fs::read_to_string(&f).expect("readable");
        let (file, _) = testing::load(&f).expect("corpus loads");
        // One service per (policy, home directory), as a deployment would have.
        let mut guardians: BTreeMap<(String, PathBuf), Arc<Guardian>> = BTreeMap::new();
        let default_policy = guardian::config::PolicyConfig::default();
        for case in &file.case {
            total += 1;
            let (action, ctx) = case.action_and_context().expect("valid case");
            let name = case.policy.clone().unwrap_or_default();
            let home = ctx.home.clone().unwrap_or_default();
            let pc = file.policies.get(&name).unwrap_or(&default_policy);
            let audit = dir.path().join(format!("{name}-{}.jsonl", guardians.len()));
            let g = guardians
                .entry((name.clone(), home.clone()))
                .or_insert_with(|| guardian_for(&f, pc, &text, &audit, &home))
                .clone();
            let cwd = Some(ctx.cwd.display().to_string());
            let action = match action {
                Action::Shell { command, cwd: None } => Action::Shell { command, cwd },
                Action::Read {
                    path,
                    cwd: None,
                    recursive,
                } => Action::Read {
                    path,
                    cwd,
                    recursive,
                },
                Action::Write {
                    path,
                    cwd: None,
                    content,
                    diff,
                } => Action::Write {
                    path,
                    cwd,
                    content,
                    diff,
                },
                other => other,
            };
            let req = ReviewRequest {
                action,
                session: Some(SessionInfo {
                    id: Some("corpus".into()),
                    agent: Some("corpus".into()),
                    workspace_roots: ctx
                        .workspace_roots
                        .iter()
                        .map(|r| r.display().to_string())
                        .collect(),
                    sandbox: None,
                    home: None,
                    grants: Vec::new(),
                }),
                intent: None,
                transcript: Vec::new(),
                retry: None,
                strict: false,
                escalation: None,
            };
            let resp = g.review(req, "corpus").await;
            let (want_decision, want_by) = match case.expect {
                Effect::Allow => (Decision::Allow, DecidedBy::Rule),
                Effect::Deny => (Decision::Deny, DecidedBy::Rule),
                Effect::Ask => (Decision::Deny, DecidedBy::Fallback),
            };
            let rule_ok = case
                .rule
                .as_ref()
                .is_none_or(|want| resp.rule.as_ref().map(|r| &r.pattern) == Some(want));
            if resp.decision != want_decision || resp.decided_by != want_by || !rule_ok {
                failures.push(format!(
                    "{}: expected {:?}/{:?} {:?}, got {:?}/{:?} {:?}: {}",
                    case.name,
                    want_decision,
                    want_by,
                    case.rule,
                    resp.decision,
                    resp.decided_by,
                    resp.rule.as_ref().map(|r| &r.pattern),
                    resp.rationale
                ));
            }
        }
    }
    assert!(total >= 200);
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
