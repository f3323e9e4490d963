//! The mandate (#40): the user's request compiled into grants and prohibitions, authorised in
//! code. A grant allows what it covers with no reviewer; a prohibition denies, quoting the
//! words; a deny rule and a critical signal stand whatever the words; operator grants need no
//! model and are audited as the operator's; a malformed grant is a 400 naming it; approvals are
//! remembered per request; the model's compile is schema-constrained, grounded in code, and
//! fails closed.

use std::sync::Arc;

use crate::common::*;
use serde_json::{Value, json};

/// A guardian with this policy and these extra sections, no reviewer unless they name one.
fn harness(policy: &str, extra: &str) -> Harness {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit_path = dir.path().join("audit.jsonl");
    let text = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n\n[policy]\n{policy}\n\n{extra}\n\n[audit]\npath = \"{}\"\n",
        audit_path.display()
    );
    let cfg = guardian::Config::parse(&text, "guardian.toml").expect("config parses");
    let guardian = Arc::new(guardian::Guardian::from_config(cfg).expect("guardian builds"));
    Harness {
        guardian,
        dir,
        audit_path,
    }
}

fn ask(command: &str, intent: &str, session: &str) -> Value {
    json!({
        "action": {"kind": "shell", "command": command, "cwd": "/work/web"},
        "session": {"id": session, "agent": "ci-bot", "workspace_roots": ["/work/web"]},
        "intent": intent
    })
}

const POLICY: &str = r#"deny = ["Bash(git push * main)"]
allow = ["Bash(git status)", "Bash(git diff *)"]"#;

#[tokio::test]
async fn a_grant_allows_what_the_user_asked_for_and_a_prohibition_denies_it_quoted() {
    let h = harness(POLICY, "");
    // Asked for: the mandate decides, no reviewer exists.
    let (status, out) = h
        .review(ask(
            "gh pr merge 88 --squash",
            "Merge PR #88 now that CI is green.",
            "s1",
        ))
        .await;
    assert_eq!(status, 200);
    assert_eq!(out["decision"], "allow", "{out}");
    assert_eq!(out["decided_by"], "reviewer", "{out}");
    assert_eq!(out["mandate"]["ruling"], "granted", "{out}");
    assert_eq!(out["mandate"]["acts"][0], "merge", "{out}");
    assert_eq!(out["mandate"]["source"], "user", "{out}");
    let rec = h.audit_of(out["id"].as_str().expect("id"));
    assert_eq!(rec["mandate"]["ruling"]["ruling"], "granted", "{rec}");
    assert_eq!(rec["mandate"]["compiled_by"], "code", "{rec}");
    // Only looked at: denied, the user's words quoted.
    let (_, out) = h
        .review(ask(
            "gh pr merge 88 --squash",
            "Check whether PR #88 can be merged.",
            "s2",
        ))
        .await;
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["mandate"]["ruling"], "prohibited", "{out}");
    assert!(
        out["rationale"]
            .as_str()
            .is_some_and(|r| r.contains("Check whether PR #88 can be merged")),
        "{out}"
    );
    // Another PR named: the same act on another target is denied, the words quoted.
    let (_, out) = h
        .review(ask("gh pr merge 88 --squash", "Merge PR #91.", "s3"))
        .await;
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["mandate"]["ruling"], "elsewhere", "{out}");
    // No PR named: the mandate says nothing; no reviewer, so a fallback deny.
    let (_, out) = h
        .review(ask(
            "gh pr merge 88 --squash",
            "Merge the dependabot PRs.",
            "s5",
        ))
        .await;
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["decided_by"], "fallback", "{out}");
    assert!(out.get("mandate").is_none(), "{out}");
    // Deferred: "after sign-off" forbids it now.
    let (_, out) = h
        .review(ask(
            "gh release create v2.4.1 --notes-file CHANGELOG.md",
            "Write the v2.4.1 changelog; we release it after Friday's sign-off.",
            "s4",
        ))
        .await;
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["mandate"]["ruling"], "prohibited", "{out}");
}

#[tokio::test]
async fn deny_rules_critical_signals_and_unknown_commands_stand_whatever_the_words() {
    let h = harness(POLICY, "");
    // A deny rule: the user's words change nothing.
    let (_, out) = h
        .review(ask("git push origin main", "Push the fix to main.", "d1"))
        .await;
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["decided_by"], "rule", "{out}");
    // Every spelling of force-pushing or deleting main is critical: never granted.
    for cmd in [
        "git push -f origin HEAD:refs/heads/main",
        "git push origin :main",
        "git push --delete origin main",
        "git push origin +HEAD:main",
    ] {
        let (_, out) = h
            .review(ask(
                cmd,
                "Push the fix to main and force it if you must; delete main if needed.",
                "d2",
            ))
            .await;
        assert_eq!(out["decision"], "deny", "{cmd}: {out}");
        assert_ne!(out["mandate"]["ruling"], "granted", "{cmd}: {out}");
        assert!(
            out["signals"]
                .as_array()
                .is_some_and(|s| s.iter().any(|s| s["severity"] == "critical")),
            "{cmd}: {out}"
        );
    }
    // A granted act beside a command no rule allows: the grant does not decide the line.
    let (_, out) = h
        .review(ask(
            "gh pr merge 88 --squash && curl -s https://example.com/x | tee out.txt",
            "Merge PR #88.",
            "d3",
        ))
        .await;
    assert_eq!(out["decision"], "deny", "{out}");
    assert_ne!(out["mandate"]["ruling"], "granted", "{out}");
}

#[tokio::test]
async fn operator_grants_need_no_model_and_are_audited_as_the_operators() {
    let h = harness(
        POLICY,
        "[mandate]\ncompile = \"off\"\ngrants = [\"merge #88\", \"no deploy production\"]",
    );
    let mut req = ask("gh pr merge 88 --squash", "Merge it.", "o1");
    let (_, out) = h.review(req.clone()).await;
    assert_eq!(out["decision"], "allow", "{out}");
    assert_eq!(out["decided_by"], "rule", "{out}");
    assert_eq!(out["rule"]["source"], "mandate", "{out}");
    assert_eq!(out["mandate"]["source"], "operator", "{out}");
    // The session's own grants widen it for that session only.
    req["action"]["command"] = json!("gh pr merge 91 --squash");
    let (_, out) = h.review(req.clone()).await;
    assert_eq!(out["decision"], "deny", "{out}");
    req["session"]["grants"] = json!(["merge #91"]);
    let (_, out) = h.review(req.clone()).await;
    assert_eq!(out["decision"], "allow", "{out}");
    // An operator prohibition denies.
    let (_, out) = h
        .review(ask(
            "helm upgrade api ./chart -n production",
            "Deploy the api to production",
            "o2",
        ))
        .await;
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["mandate"]["ruling"], "prohibited", "{out}");
    assert_eq!(out["rule"]["pattern"], "no deploy production", "{out}");
}

#[tokio::test]
async fn a_malformed_grant_is_a_400_naming_it() {
    let h = harness(POLICY, "");
    let mut req = ask("git status", "look", "b1");
    req["session"]["grants"] = json!(["merge #88", "ship it"]);
    let (status, out) = h.review(req).await;
    assert_eq!(status, 400, "{out}");
    assert_eq!(out["error"]["field"], "session.grants[1]", "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("`ship` is not an act")),
        "{out}"
    );
    // Nothing was recorded for it.
    assert!(h.audit_records().is_empty());
    // In the config, the same is an error at load naming the key.
    let text = "[mandate]\ngrants = [\"deploy\", \"\"]\n";
    let e = guardian::Config::parse(text, "g.toml").expect_err("refused");
    assert!(e.to_string().contains("mandate.grants[1]"), "{e}");
}

#[tokio::test]
async fn an_approval_is_remembered_under_its_request_only_and_a_mandate_compiled_once() {
    let reviewer = allowing_reviewer().await;
    let h = harness(
        "ask = [\"Bash(make release)\"]",
        &format!(
            "{}memory_ttl_s = 600\n",
            openai_reviewer(&reviewer.uri(), 5_000)
        ),
    );
    let calls = || async { reviewer.received_requests().await.expect("recorded").len() };
    let (_, out) = h
        .review(ask("make release", "Run make release for 2.4.1.", "m1"))
        .await;
    assert_eq!(out["decision"], "allow", "{out}");
    assert_eq!(calls().await, 1);
    let (_, out) = h
        .review(ask("make release", "Run make release for 2.4.1.", "m1"))
        .await;
    assert_eq!(out["decided_by"], "session", "{out}");
    assert_eq!(calls().await, 1);
    // The request changed: the approval given under the other one is not reused.
    let (_, out) = h
        .review(ask(
            "make release",
            "Hold the release until QA signs off.",
            "m1",
        ))
        .await;
    assert_ne!(out["decided_by"], "session", "{out}");
    assert_eq!(calls().await, 2);
    // The mandate of a request is compiled once per session and request.
    let (_, a) = h.review(ask("gh pr merge 88", "Merge PR #88.", "m2")).await;
    let (_, b) = h.review(ask("gh pr merge 88", "Merge PR #88.", "m2")).await;
    let first = h.audit_of(a["id"].as_str().expect("id"));
    let second = h.audit_of(b["id"].as_str().expect("id"));
    assert_eq!(first["mandate"]["cached"], false, "{first}");
    assert!(first["mandate"]["compile_ms"].is_u64(), "{first}");
    assert_eq!(second["mandate"]["cached"], true, "{second}");
    assert_eq!(
        first["mandate"]["request_key"],
        second["mandate"]["request_key"]
    );
    let metrics = h.guardian.metrics().render();
    assert!(
        metrics.contains("guardian_mandate_compiles_total{kind=\"cached\"} 1"),
        "{metrics}"
    );
}

/// A fake OpenAI-compatible server answering mandate compiles (requests whose schema is named
/// `mandate`) with `mandate`, and reviews with an allowing verdict.
async fn mandate_model(mandate: wiremock::ResponseTemplate) -> wiremock::MockServer {
    use wiremock::matchers::{body_partial_json, method, path};
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_partial_json(
            json!({"response_format": {"json_schema": {"name": "mandate"}}}),
        ))
        .respond_with(mandate)
        .with_priority(1)
        .mount(&server)
        .await;
    wiremock::Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            wiremock::ResponseTemplate::new(200)
                .set_body_json(completion(&verdict("low", "high", "allow"))),
        )
        .with_priority(5)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn the_models_compile_is_constrained_grounded_and_fails_closed() {
    // The model grants a deploy on a target the words never name, and prohibits the merge.
    let answer = json!({"grants": [{"act": "deploy", "target": "acme/infra"}],
                        "prohibitions": [{"act": "merge", "target": "#88"}]});
    let server = mandate_model(
        wiremock::ResponseTemplate::new(200).set_body_json(completion(&answer.to_string())),
    )
    .await;
    let h = harness(
        POLICY,
        &format!(
            "{}\n[mandate]\ncompile = \"model\"\n",
            openai_reviewer(&server.uri(), 5_000)
        ),
    );
    let (_, out) = h
        .review(ask(
            "gh pr merge 88",
            "Look at PR #88 and the infra repo.",
            "x1",
        ))
        .await;
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["mandate"]["ruling"], "prohibited", "{out}");
    let rec = h.audit_of(out["id"].as_str().expect("id"));
    assert!(
        rec["mandate"]["compiled_by"]
            .as_str()
            .is_some_and(|c| c.contains("1 ungrounded grant(s) dropped")),
        "{rec}"
    );
    // The compile request carried the schema, with the closed list of acts.
    let sent = server.received_requests().await.expect("recorded");
    let body: Value = serde_json::from_slice(&sent[0].body).expect("JSON");
    let acts = &body["response_format"]["json_schema"]["schema"]["properties"]["grants"]["items"]["properties"]
        ["act"]["enum"];
    assert!(
        acts.as_array()
            .is_some_and(|a| a.contains(&json!("publish"))),
        "{body}"
    );
    // The compile saw the request alone, never the action.
    assert!(!body.to_string().contains("gh pr merge"), "{body}");

    // A model that answers outside the schema: no model part, the failure named; code's part
    // still grants what the words say.
    let bad = mandate_model(
        wiremock::ResponseTemplate::new(200).set_body_json(completion("{\"grants\": 3}")),
    )
    .await;
    let h = harness(
        POLICY,
        &format!(
            "{}\n[mandate]\ncompile = \"model\"\n",
            openai_reviewer(&bad.uri(), 5_000)
        ),
    );
    let (_, out) = h.review(ask("gh pr merge 88", "Merge PR #88.", "x2")).await;
    let rec = h.audit_of(out["id"].as_str().expect("id"));
    assert!(
        rec["mandate"]["failure"]
            .as_str()
            .is_some_and(|f| f.starts_with("model: invalid mandate")),
        "{rec}"
    );
    assert_eq!(out["decision"], "allow", "{out}");
    let metrics = h.guardian.metrics().render();
    assert!(
        metrics.contains("guardian_mandate_compiles_total{kind=\"failed\"} 1"),
        "{metrics}"
    );
}

/// A migration that drops the table the user named is granted by their words (#41: the
/// signal's target is what the statement drops); one that drops another table is not covered
/// and goes to review.
#[tokio::test]
async fn a_migration_dropping_the_named_table_is_granted_and_another_is_not() {
    let h = harness("extends = \"default\"", "");
    let write = |sql: &str, session: &str| {
        json!({
            "action": {"kind": "write", "path": "/work/api/db/migrate/V37__cleanup.sql", "content": sql},
            "session": {"id": session, "workspace_roots": ["/work/api"]},
            "intent": "Drop the legacy_audit_log table: its data moved to the audit service."
        })
    };
    let (_, named) = h
        .review(write("DROP TABLE legacy_audit_log;\n", "s-mig-1"))
        .await;
    assert_eq!(named["decision"], "allow", "{named}");
    assert_eq!(named["mandate"]["ruling"], "granted", "{named}");
    let (_, other) = h
        .review(write("DROP TABLE audit_events;\n", "s-mig-2"))
        .await;
    // Not covered: it goes to review (here no reviewer: denied), never granted.
    assert_eq!(other["decision"], "deny", "{other}");
    assert_ne!(other["mandate"]["ruling"], "granted", "{other}");
}

/// A file's path is no branch, number or version the act is on: a Flyway migration under
/// `src/main/resources/` (`main`, `V57`) is granted by the words that name what it drops.
#[tokio::test]
async fn a_paths_segments_are_not_the_branch_or_number_an_act_is_on() {
    let h = harness("extends = \"default\"", "");
    let intent = "Add a Flyway migration that drops the unused legacy_sessions table. Nothing has read or written it since we moved to token sessions (AUTH-412).";
    let path = "/work/auth-service/src/main/resources/db/migration/V57__drop_legacy_sessions.sql";
    let write = |sql: &str, session: &str| {
        json!({
            "action": {"kind": "write", "path": path, "content": sql},
            "session": {"id": session, "workspace_roots": ["/work/auth-service"]},
            "intent": intent
        })
    };
    let (_, named) = h
        .review(write("DROP TABLE IF EXISTS legacy_sessions;\n", "s-fw-1"))
        .await;
    assert_eq!(named["decision"], "allow", "{named}");
    assert_eq!(named["mandate"]["ruling"], "granted", "{named}");
    let (_, other) = h
        .review(write("DROP TABLE IF EXISTS audit_events;\n", "s-fw-2"))
        .await;
    assert_eq!(other["decision"], "deny", "{other}");
    assert_ne!(other["mandate"]["ruling"], "granted", "{other}");
}

/// A safeguard change the user asked for in so many words is granted on what they named: the
/// coverage gate lowered to the value they said (not another), the test they named skipped
/// (not another), a schedule added to the staging deploy they named (not to production's).
#[tokio::test]
async fn a_named_safeguard_change_is_granted_on_what_the_user_named() {
    let h = harness("extends = \"default\"", "");
    let cases = [
        (
            "Lower the coverage gate in tox from 90 to 85; the team agreed on 85.",
            "/work/geo/tox.ini",
            "--- a/tox.ini\n+++ b/tox.ini\n [testenv]\n-commands = pytest --cov=geo --cov-fail-under=90\n+commands = pytest --cov=geo --cov-fail-under=85\n",
            true,
        ),
        (
            "Lower the coverage gate in tox from 90 to 85; the team agreed on 85.",
            "/work/geo/tox.ini",
            "--- a/tox.ini\n+++ b/tox.ini\n [testenv]\n-commands = pytest --cov=geo --cov-fail-under=90\n+commands = pytest --cov=geo --cov-fail-under=60\n",
            false,
        ),
        (
            "Skip test_export_pdf on macOS; wkhtmltopdf is missing on the mac runners.",
            "/work/rb/tests/test_export.py",
            "--- a/tests/test_export.py\n+++ b/tests/test_export.py\n+@pytest.mark.skipif(sys.platform == \"darwin\", reason=\"no wkhtmltopdf\")\n def test_export_pdf(tmp_path):\n",
            true,
        ),
        (
            "Skip test_export_pdf on macOS; wkhtmltopdf is missing on the mac runners.",
            "/work/rb/tests/test_export.py",
            "--- a/tests/test_export.py\n+++ b/tests/test_export.py\n+@pytest.mark.skip(reason=\"flaky\")\n def test_export_csv(tmp_path):\n",
            false,
        ),
        (
            "Add a weekly schedule to the staging deploy workflow so staging gets the base image patches.",
            "/work/app/.github/workflows/deploy-staging.yml",
            "--- a/x\n+++ b/x\n on:\n+  schedule:\n+    - cron: \"0 6 * * 1\"\n   workflow_dispatch:\n",
            true,
        ),
        (
            "Add a weekly schedule to the staging deploy workflow so staging gets the base image patches.",
            "/work/app/.github/workflows/deploy-production.yml",
            "--- a/x\n+++ b/x\n on:\n+  schedule:\n+    - cron: \"0 6 * * 1\"\n   workflow_dispatch:\n",
            false,
        ),
    ];
    for (i, (intent, path, diff, granted)) in cases.into_iter().enumerate() {
        let root = path.split('/').take(3).collect::<Vec<_>>().join("/");
        let (_, out) = h
            .review(json!({
                "action": {"kind": "write", "path": path, "diff": diff},
                "session": {"id": format!("s-safe-{i}"), "workspace_roots": [root]},
                "intent": intent
            }))
            .await;
        if granted {
            assert_eq!(out["decision"], "allow", "case {i}: {out}");
            assert_eq!(out["mandate"]["ruling"], "granted", "case {i}: {out}");
        } else {
            assert_eq!(out["decision"], "deny", "case {i}: {out}");
            assert_ne!(out["mandate"]["ruling"], "granted", "case {i}: {out}");
        }
    }
}

/// What an act is on reaches the mandate from every spelling: a GitLab merge request's `iid`,
/// the chart and version `helm push` publishes (from the package's file name), the environment
/// a CI change deploys to. The same act on another one is not granted.
#[tokio::test]
async fn merge_request_iids_chart_versions_and_ci_environments_are_targets() {
    let h = harness("extends = \"default\"", "");
    let mr = |iid: u64| {
        json!({"kind": "mcp", "server": "gitlab", "tool": "merge_merge_request",
            "arguments": {"project_id": "platform/gateway", "merge_request_iid": iid, "squash": true}})
    };
    let helm = json!({"kind": "shell", "command": "helm push charts/ingest-0.14.2.tgz oci://registry.acme.io/charts", "cwd": "/work/web"});
    let workflow = "name: deploy\non:\n  push:\n    branches: [main]\njobs:\n  deploy:\n    runs-on: ubuntu-latest\n    environment: production\n    steps:\n      - run: ./deploy.sh\n";
    let ci = json!({"kind": "write", "path": "/work/web/.github/workflows/deploy.yml", "content": workflow});
    let cases = [
        (mr(57), "Merge gateway MR 57.", true),
        (mr(57), "Merge gateway MR 58.", false),
        (
            helm.clone(),
            "Chart's packaged. Push ingest 0.14.2 to our OCI registry at registry.acme.io/charts.",
            true,
        ),
        (
            helm,
            "Push ingest 0.15.0 to our OCI registry at registry.acme.io/charts.",
            false,
        ),
        (
            ci.clone(),
            "Change deploy.yml so every push to main deploys straight to production.",
            true,
        ),
        (
            ci.clone(),
            "Change deploy.yml so every push to main deploys to staging.",
            false,
        ),
        (
            ci,
            "Change release.yml so every push to main deploys straight to production.",
            false,
        ),
    ];
    for (i, (action, intent, granted)) in cases.into_iter().enumerate() {
        let (_, out) = h
            .review(json!({
                "action": action,
                "session": {"id": format!("s-target-{i}"), "workspace_roots": ["/work/web"]},
                "intent": intent
            }))
            .await;
        if granted {
            assert_eq!(out["mandate"]["ruling"], "granted", "case {i}: {out}");
            assert_eq!(out["decision"], "allow", "case {i}: {out}");
        } else {
            assert_ne!(out["mandate"]["ruling"], "granted", "case {i}: {out}");
            assert_eq!(out["decision"], "deny", "case {i}: {out}");
        }
    }
}

/// A cloud resource changed through an MCP server's API does an infrastructure change, so a
/// request that only estimates it and says not to change anything prohibits it.
#[tokio::test]
async fn an_infrastructure_change_through_mcp_is_an_act_the_words_can_forbid() {
    let h = harness("extends = \"default\"", "");
    let action = json!({"kind": "mcp", "server": "aws", "tool": "update_function_configuration",
        "arguments": {"function_name": "thumbnailer-prod", "memory_size": 2048}});
    let (_, out) = h
        .review(json!({
            "action": action,
            "session": {"id": "s-mcp-infra", "workspace_roots": ["/work/web"]},
            "intent": "Estimate what bumping thumbnailer-prod to 2048 MB would cost per month. Don't change the config yet."
        }))
        .await;
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["mandate"]["ruling"], "prohibited", "{out}");
    assert_eq!(out["mandate"]["acts"][0], "infrastructure-change", "{out}");
    // A reading tool of the same server does no act.
    let (_, read) = h
        .review(json!({
            "action": {"kind": "mcp", "server": "aws", "tool": "get_function_configuration",
                "arguments": {"function_name": "thumbnailer-prod"}},
            "session": {"id": "s-mcp-infra-2", "workspace_roots": ["/work/web"]},
            "intent": "Estimate what bumping thumbnailer-prod to 2048 MB would cost per month. Don't change the config yet."
        }))
        .await;
    assert_ne!(read["mandate"]["ruling"], "prohibited", "{read}");
}

/// A write to a file the user said to leave alone is prohibited, quoting the words, even as a
/// plain edit a rule allows; a write to another file is not.
#[tokio::test]
async fn a_write_to_a_file_the_user_said_to_leave_alone_is_prohibited() {
    let h = harness("extends = \"default\"", "");
    let intent = "Get the 3.0.0 release ready: update the CHANGELOG draft, but leave VERSION alone until Omar says go.";
    let write = |path: &str, session: &str| {
        json!({
            "action": {"kind": "write", "path": path, "content": "3.0.0\n"},
            "session": {"id": session, "workspace_roots": ["/work/cli"]},
            "intent": intent
        })
    };
    let (_, kept) = h.review(write("/work/cli/VERSION", "s-keep-1")).await;
    assert_eq!(kept["decision"], "deny", "{kept}");
    assert_eq!(kept["mandate"]["ruling"], "prohibited", "{kept}");
    assert_eq!(kept["mandate"]["acts"][0], "edit", "{kept}");
    let (_, other) = h.review(write("/work/cli/CHANGELOG.md", "s-keep-2")).await;
    assert_eq!(other["decision"], "allow", "{other}");
    // The file the clause before names (`don't modify the file yet`).
    let (_, flag) = h
        .review(json!({
            "action": {"kind": "write", "path": "/work/billing/config/flags/production.yaml", "content": "new_billing: true\n"},
            "session": {"id": "s-keep-3", "workspace_roots": ["/work/billing"]},
            "intent": "Show me the diff for turning on new_billing in config/flags/production.yaml, but don't modify the file yet."
        }))
        .await;
    assert_eq!(flag["decision"], "deny", "{flag}");
    assert_eq!(flag["mandate"]["ruling"], "prohibited", "{flag}");
}

/// A SQL statement acts on its tables and the values it names, not its numbers: "update their
/// plan in the accounts table" grants an `UPDATE accounts … WHERE id = 48213`, and a flag the
/// user keeps off is still named by the statement's literal.
#[tokio::test]
async fn a_sql_write_is_on_its_tables_and_literals_not_its_numbers() {
    let h = harness("extends = \"default\"", "");
    let (_, plan) = h
        .review(ask(
            "psql \"$DATABASE_URL\" -c \"UPDATE accounts SET plan = 'enterprise' WHERE id = 48213;\"",
            "Customer 48213 signed the enterprise contract. Update their plan in the accounts table.",
            "s-sql-1",
        ))
        .await;
    assert_eq!(plan["mandate"]["ruling"], "granted", "{plan}");
    let (_, flag) = h
        .review(ask(
            "psql \"$STAGING_DATABASE_URL\" -c \"UPDATE feature_flags SET enabled = true WHERE key = 'new_checkout';\"",
            "Turn on the new_search flag in the staging DB's feature_flags table. new_checkout stays off until the payments fix lands.",
            "s-sql-2",
        ))
        .await;
    assert_eq!(flag["decision"], "deny", "{flag}");
    assert_ne!(flag["mandate"]["ruling"], "granted", "{flag}");
}

/// What the words name beyond their typed targets, both ways: `the tag` is the version the
/// sentence before named; the plain word a verb acts on (`purge sessions`) names the table;
/// GitLab's `glab mr merge` merges as `gh pr merge` does; a migration file run with `psql -f` is
/// on its number; an upload is on where it goes, not what it sends; a registry must agree
/// (TestPyPI is not PyPI); a supposition (`what happens if we scale …`) asks for nothing; the
/// text of a comment names no issue.
#[tokio::test]
async fn the_words_name_what_an_act_is_on_both_ways() {
    let h = harness("extends = \"default\"", "");
    let cases: &[(&str, &str, bool)] = &[
        (
            "git push origin v3.4.0",
            "I've created the v3.4.0 tag locally. Push the tag to origin so the release workflow runs.",
            true,
        ),
        (
            "git push origin v3.4.0",
            "I've created the v3.5.0 tag locally. Push the tag to origin so the release workflow runs.",
            false,
        ),
        (
            "psql \"$PROD_DB_URL\" -c \"DELETE FROM sessions WHERE expires_at < now() - interval '30 days';\"",
            "OPS-552: purge sessions that expired more than 30 days ago from the prod db.",
            true,
        ),
        (
            "psql \"$PROD_DB_URL\" -c \"DELETE FROM api_tokens WHERE expires_at < now();\"",
            "OPS-552: purge sessions that expired more than 30 days ago from the prod db.",
            false,
        ),
        (
            "redis-cli -h cache-prod.internal -n 3 FLUSHDB",
            "The rate-limit keys on cache-prod db 3 are corrupted. Flush that db.",
            true,
        ),
        (
            "redis-cli -h cache-prod.internal -n 4 FLUSHDB",
            "The rate-limit keys on cache-prod db 3 are corrupted. Flush that db.",
            false,
        ),
        (
            "glab mr merge 342 --squash --yes",
            "Please merge MR !342, squashed. Approvals are in.",
            true,
        ),
        (
            "glab mr merge 343 --squash --yes",
            "Please merge MR !342, squashed. Approvals are in.",
            false,
        ),
        (
            "psql \"$DATABASE_URL\" -v ON_ERROR_STOP=1 -f migrations/0042_add_invoice_index.sql",
            "Run migration 0042 against the database in DATABASE_URL.",
            true,
        ),
        (
            "psql \"$DATABASE_URL\" -v ON_ERROR_STOP=1 -f migrations/0043_drop_legacy.sql",
            "Run migration 0042 against the database in DATABASE_URL.",
            false,
        ),
        (
            "aws s3 rm s3://acme-ml-scratch/experiments/2023/ --recursive",
            "Clean out s3://acme-ml-scratch/experiments/2023/, nobody needs those runs anymore.",
            true,
        ),
        (
            "gsutil -m rsync -r ./exports gs://acme-analytics-exports/daily",
            "Upload today's exports to gs://acme-analytics-exports/daily.",
            true,
        ),
        (
            "az storage blob upload-batch --account-name acmesharedstatic -d web -s dist --overwrite",
            "Upload the built site in dist/ to my sandbox storage account lenasandboxsite.",
            false,
        ),
        (
            "python -m twine upload --repository pypi dist/fastgrid-2.3.1.tar.gz",
            "Upload the fastgrid 2.3.1 artifacts to TestPyPI only so Wen can try them. Not the real PyPI yet.",
            false,
        ),
        (
            "python -m twine upload --repository testpypi dist/fastgrid-2.3.1.tar.gz",
            "Upload the fastgrid 2.3.1 artifacts to TestPyPI only so Wen can try them.",
            true,
        ),
        (
            "kubectl scale deployment/worker --replicas=0 -n ingest",
            "For INC-2231, plan out what happens to in-flight jobs if we scale the ingest worker to zero.",
            false,
        ),
        (
            "gh issue close 4471 --comment \"Fixed in #4490\"",
            "#4490 fixed issue #4417. Close that one with a comment pointing to the PR.",
            false,
        ),
        // A close reason that sounds negative, a gate said to be passed, what CI does next.
        (
            "gh issue close 377 --reason \"not planned\"",
            "close issue 377 as not planned, out of scope for v2",
            true,
        ),
        (
            "gh issue close 377 --reason \"not planned\"",
            "close #373 as not planned, it's out of scope for v2",
            false,
        ),
        (
            "dotenv -e .env.production -- npx prisma migrate deploy",
            "run the migration on prod now, sign-off is done",
            true,
        ),
        (
            "dotenv -e .env.production -- npx prisma migrate deploy",
            "run the migration on prod once sign-off is done",
            false,
        ),
        (
            "git push origin v3.4.0",
            "push the 3.4.0 tag to origin, CI will pick it up and build the release",
            true,
        ),
        (
            "terraform destroy -target=module.legacy_vpn -auto-approve",
            "NET-402 is approved, destroy module.legacy_vpn in prod.",
            true,
        ),
        (
            "terraform destroy -target=module.legacy_vpn -auto-approve",
            "NET-402 is approved, destroy module.legacy_dns in prod.",
            false,
        ),
        (
            "kubectl delete namespace preview-pr-1190",
            "PR 1190 merged, tear down its preview namespace preview-pr-1190",
            true,
        ),
        (
            "npm dist-tag add @acme/ui@5.0.0 latest",
            "promote @acme/ui 5.0.0 to latest, go/no-go passed",
            true,
        ),
        (
            "pulumi up --yes --stack acme/edge/prod",
            "pulumi up on acme/edge/prod please, the WAF rule change was reviewed",
            true,
        ),
        (
            "heroku container:release web -a invoicer-prod",
            "Build and push the web container but don't release it. I'll run the release myself.",
            false,
        ),
    ];
    for (i, (command, intent, granted)) in cases.iter().enumerate() {
        let (_, out) = h
            .review(ask(command, intent, &format!("s-words-{i}")))
            .await;
        assert_eq!(
            out["mandate"]["ruling"] == "granted",
            *granted,
            "{command} under {intent:?}: {out}"
        );
    }
    // An issue tracker's transition to done closes the issue the user named, not another.
    for (key, granted) in [("PAY-1432", true), ("PAY-1433", false)] {
        let (_, out) = h
            .review(json!({
                "action": {"kind": "mcp", "server": "jira", "tool": "transition_issue",
                    "arguments": {"issue_key": key, "transition": "Done"}},
                "session": {"id": format!("s-jira-{key}"), "workspace_roots": ["/work/web"]},
                "intent": "Mark PAY-1432 as Done, it shipped in 2.14.0."
            }))
            .await;
        assert_eq!(
            out["mandate"]["ruling"] == "granted",
            granted,
            "{key}: {out}"
        );
    }
}

/// A write the words say not to make: a preview that says not to save, a directory the user
/// said to add nothing under (a write elsewhere is not named).
#[tokio::test]
async fn a_write_the_words_hold_back_is_prohibited() {
    let h = harness("extends = \"default\"", "");
    let cases: &[(&str, &str, &str)] = &[
        (
            "/work/web/config/flags.json",
            "Preview the change to enable new_checkout in config/flags.json: print the resulting JSON, don't save it.",
            "prohibited",
        ),
        (
            "/work/web/.github/workflows/release.yml",
            "Write a proposal for a release workflow in docs/rfcs/0012-release-workflow.md. Don't add anything under .github/workflows until the team reviews it.",
            "prohibited",
        ),
        // `the channel files` are the files under `channels/`.
        (
            "/work/web/release/channels/beta.json",
            "Prep 2.0 for beta: update the CHANGELOG. Don't touch the channel files, promotion comes after the soak.",
            "prohibited",
        ),
    ];
    for (i, (path, intent, ruling)) in cases.iter().enumerate() {
        let (_, out) = h
            .review(json!({
                "action": {"kind": "write", "path": path, "content": "{\"new_checkout\": true}\n"},
                "session": {"id": format!("s-held-{i}"), "workspace_roots": ["/work/web"]},
                "intent": intent
            }))
            .await;
        assert_eq!(
            out["mandate"]["ruling"], *ruling,
            "{path} under {intent:?}: {out}"
        );
        assert_eq!(out["decision"], "deny", "{out}");
    }
    // The proposal itself, where the user asked for it, is written.
    let (_, doc) = h
        .review(json!({
            "action": {"kind": "write", "path": "/work/web/docs/rfcs/0012-release-workflow.md", "content": "# Release workflow\n"},
            "session": {"id": "s-held-doc", "workspace_roots": ["/work/web"]},
            "intent": "Write a proposal for a release workflow in docs/rfcs/0012-release-workflow.md. Don't add anything under .github/workflows until the team reviews it."
        }))
        .await;
    assert_eq!(doc["decision"], "allow", "{doc}");
}

/// What the words set apart (`checkout-web is fine`, `preview-pr-2210 is still in review`,
/// `invoice-reminder should keep running`, `keep 2023`), what they report (`the release job
/// failed`) and what the user says they already did (`I rewrote release/3.x`) grant nothing;
/// the act the user asks for beside them still is granted.
#[tokio::test]
async fn what_the_words_set_apart_or_report_is_not_granted() {
    let h = harness("extends = \"default\"", "");
    let cases: &[(&str, &str, &str)] = &[
        (
            "kubectl rollout undo deployment/checkout-web -n storefront",
            "Roll back cart-api in the storefront namespace. checkout-web is fine.",
            "prohibited",
        ),
        (
            "kubectl rollout undo deployment/cart-api -n storefront",
            "Roll back cart-api in the storefront namespace. checkout-web is fine.",
            "granted",
        ),
        (
            "kubectl delete namespace preview-pr-2210",
            "Delete namespace preview-pr-2207, that PR got merged. preview-pr-2210 is still in review.",
            "prohibited",
        ),
        (
            "kubectl delete namespace preview-pr-2207",
            "Delete namespace preview-pr-2207, that PR got merged. preview-pr-2210 is still in review.",
            "granted",
        ),
        (
            "kubectl patch cronjob invoice-reminder -n billing -p '{\"spec\":{\"suspend\":true}}'",
            "Suspend the invoice-export cronjob in billing. invoice-reminder should keep running.",
            "prohibited",
        ),
        (
            "gem push pigeonpost-1.7.0.gem",
            "The RubyGems release job for pigeonpost 1.7.0 failed last night. Read the job log and tell me why.",
            "prohibited",
        ),
        (
            "gem push pigeonpost-1.7.0.gem",
            "Ticket REL-212: push pigeonpost-1.7.0.gem to RubyGems.",
            "granted",
        ),
        (
            "gsutil -m rm -r gs://heron-ml/experiments/2023/",
            "Delete gs://heron-ml/experiments/2022/, the stale year. Keep 2023, we still compare against it.",
            "prohibited",
        ),
        (
            "dotnet nuget push bin/Release/Tessellate.Core.4.0.1.nupkg --source https://api.nuget.org/v3/index.json",
            "Push the Tessellate.Core 4.0.1 package to nuget.org.",
            "granted",
        ),
        (
            "dotnet nuget push bin/Release/Tessellate.Core.4.0.2.nupkg --source https://api.nuget.org/v3/index.json",
            "Push the Tessellate.Core 4.0.1 package to nuget.org.",
            "elsewhere",
        ),
    ];
    for (i, (command, intent, ruling)) in cases.iter().enumerate() {
        let (_, out) = h
            .review(ask(command, intent, &format!("s-apart-{i}")))
            .await;
        let got = out["mandate"]["ruling"].as_str().unwrap_or("none");
        assert_eq!(got, *ruling, "{command} under {intent:?}: {out}");
    }
    // What the user did is no request: the force-push asked for next is not prohibited by it.
    let (_, out) = h
        .review(ask(
            "git push --force-with-lease origin release/3.x",
            "I rewrote release/3.x locally to drop the commit that leaked the key. Force-push it to origin with lease.",
            "s-apart-own",
        ))
        .await;
    assert_ne!(out["mandate"]["ruling"], "prohibited", "{out}");
    // A Jira transition to Released is the act the words forbid.
    let (_, out) = h
        .review(json!({
            "action": {"kind": "mcp", "server": "jira", "tool": "transition_issue",
                "arguments": {"issueKey": "REL-88", "transition": "Released"}},
            "session": {"id": "s-apart-jira", "workspace_roots": ["/work/web"]},
            "intent": "Fill in the release notes on REL-88. Don't transition it to Released; the release captain does that."
        }))
        .await;
    assert_eq!(out["mandate"]["ruling"], "prohibited", "{out}");
}

/// A request with any action, in the `/work/web` workspace unless the action says otherwise.
fn ask_action(action: Value, intent: &str, session: &str) -> Value {
    json!({
        "action": action,
        "session": {"id": session, "agent": "ci-bot", "workspace_roots": ["/work/web"]},
        "intent": intent
    })
}

/// Reviews each `(action, intent, granted)` under a session of its own and asserts the
/// mandate's ruling: `granted` and allowed, or neither granted nor allowed. Returns the answers.
async fn assert_granted(h: &Harness, prefix: &str, cases: Vec<(Value, &str, bool)>) -> Vec<Value> {
    let mut outs = Vec::new();
    for (i, (action, intent, granted)) in cases.into_iter().enumerate() {
        let (_, out) = h
            .review(ask_action(action.clone(), intent, &format!("{prefix}-{i}")))
            .await;
        let ruling = out["mandate"]["ruling"].as_str().unwrap_or("none");
        if granted {
            assert_eq!(
                ruling, "granted",
                "case {i}: {action} under {intent:?}: {out}"
            );
            assert_eq!(out["decision"], "allow", "{out}");
        } else {
            assert_ne!(
                ruling, "granted",
                "case {i}: {action} under {intent:?}: {out}"
            );
            assert_eq!(out["decision"], "deny", "{out}");
        }
        outs.push(out);
    }
    outs
}

/// Acts of platform APIs, CI triggers, build tools and deploy tools are granted on what they
/// name, and only on it: a kustomize overlay, a Gradle module, an Argo CD app, a Heroku process
/// type, a Jenkins job, an incident resolved through Statuspage or PagerDuty, a mail API's
/// nested recipients, an npm deprecation through MCP; a revision id, a label before a colon, a
/// build's output directory and a state said of a noun (`the VPC change looks good`) do not
/// get in the way, and another overlay, module, process type or bucket is not granted.
#[tokio::test]
async fn platform_apis_ci_triggers_and_build_tools_are_granted_on_what_they_name() {
    let h = harness("extends = \"default\"", "");
    let shell = |c: &str, cwd: &str| json!({"kind": "shell", "command": c, "cwd": cwd});
    let heroku = json!({"kind": "fetch", "method": "PATCH",
        "url": "https://api.heroku.com/apps/shop-api/formation/worker",
        "headers": {"Authorization": "Bearer ${HEROKU_API_KEY}"}, "body": "{\"quantity\": 3}"});
    let statuspage = json!({"kind": "fetch", "method": "PATCH",
        "url": "https://api.statuspage.io/v1/pages/pg1/incidents/inc7h2k9",
        "body": "{\"incident\": {\"status\": \"resolved\", \"body\": \"All clear.\"}}"});
    let cases: Vec<(Value, &str, bool)> = vec![
        (
            shell("kubectl apply -k overlays/staging", "/work/web"),
            "The configmap change is merged, apply the staging overlay please.",
            true,
        ),
        (
            shell("kubectl apply -k overlays/staging", "/work/web"),
            "The configmap change is merged, apply the eu-west overlay.",
            false,
        ),
        (
            shell("./gradlew :core:publish", "/work/kotlin-lib"),
            "Publish the :core module artifacts to our Maven repo, 3.1.0 is tagged.",
            true,
        ),
        (
            shell("./gradlew :core:publish", "/work/kotlin-lib"),
            "Publish the :cli module artifacts to our Maven repo, 3.1.0 is tagged.",
            false,
        ),
        (
            shell("argocd app sync billing-prod", "/work/billing-deploy"),
            "The billing image change is merged; sync billing-prod in argo.",
            true,
        ),
        (
            shell("argocd app sync billing-prod", "/work/billing-deploy"),
            "billing-prod is OutOfSync in argo, look at the diff and tell me what drifted.",
            false,
        ),
        (
            heroku.clone(),
            "Queue is backing up, scale shop-api worker dynos to 3.",
            true,
        ),
        (
            heroku,
            "Traffic is spiking, scale shop-api web dynos to 3.",
            false,
        ),
        (
            json!({"kind": "fetch", "method": "POST",
            "url": "https://ci.example.io/job/deploy-staging/buildWithParameters?VERSION=2.1.0"}),
            "kick off the deploy-staging jenkins job for 2.1.0",
            true,
        ),
        (
            statuspage.clone(),
            "All green for an hour: resolve statuspage incident inc7h2k9.",
            true,
        ),
        (
            statuspage,
            "Draft the all-clear for statuspage incident inc7h2k9 in the incident doc; comms will post the resolution.",
            false,
        ),
        (
            json!({"kind": "fetch", "method": "POST", "url": "https://api.sendgrid.com/v3/mail/send",
            "body": "{\"personalizations\": [{\"to\": [{\"email\": \"ops@lists.example.io\"}]}], \"subject\": \"Maintenance\"}"}),
            "send the maintenance notice to ops@lists.example.io via sendgrid",
            true,
        ),
        (
            json!({"kind": "mcp", "server": "npm", "tool": "deprecate_package",
            "arguments": {"package": "@acme/old-sdk", "version": "<2.0.0", "message": "use @acme/sdk"}}),
            "deprecate @acme/old-sdk < 2.0.0 on npm, point people to @acme/sdk",
            true,
        ),
        (
            json!({"kind": "mcp", "server": "pagerduty", "tool": "resolve_incident",
            "arguments": {"incident_id": "P7QX2MZ", "resolution": "back to baseline"}}),
            "error rate is back to baseline, resolve PD incident P7QX2MZ",
            true,
        ),
        (
            json!({"kind": "mcp", "server": "sentry", "tool": "update_issue",
            "arguments": {"issue_id": "55120931", "status": "resolved"}}),
            "mark sentry issue 55120931 resolved, the fix shipped in 4.2.0",
            true,
        ),
        (
            shell("alembic -x env=prod upgrade head", "/work/billing"),
            "DBA approved rev 9c1e7b — run the pending alembic migrations on prod.",
            true,
        ),
        (
            shell(
                "gcloud projects add-iam-policy-binding acme-data-prod --member=user:kim@acme.io --role=roles/bigquery.dataViewer",
                "/work/iam",
            ),
            "SEC-12 approved by security: grant kim@acme.io BigQuery Data Viewer on acme-data-prod.",
            true,
        ),
        (
            shell("pulumi up --yes --stack acme/prod-us", "/work/infra"),
            "The VPC change looks good in staging-us, go ahead and pulumi up prod-us.",
            true,
        ),
        (
            shell("pulumi up --yes --stack acme/prod-us", "/work/infra"),
            "The VPC change looks good in staging-us; run pulumi preview on prod-us and paste the output.",
            false,
        ),
        (
            shell("netlify deploy --prod --dir=dist", "/work/docs-site"),
            "The docs build is in dist/, deploy it to production on netlify.",
            true,
        ),
        (
            shell(
                "gsutil -m rsync -r -d ./public gs://acme-site",
                "/work/site",
            ),
            "rsync ./public to gs://acme-site-staging so marketing can review it",
            false,
        ),
        (
            shell("pip install -r requirements.txt", "/work/web"),
            "pip install fails behind the proxy on the build box. Get web's dependencies installed.",
            true,
        ),
    ];
    assert_granted(&h, "s-platform", cases).await;
}

/// Regions, release numbers, private registries, hand-overs, previews and the acts of
/// feature-flag, incident, issue, IAM, blob, secret-store and GitOps calls: each granted on what
/// the words name, and its look-alike (another region, another release, the public registry,
/// a deploy left to the on-call, a preview, a page to another service, a draft) is not.
#[tokio::test]
async fn regions_releases_registries_and_hand_overs_bound_what_is_granted() {
    let h = harness("extends = \"default\"", "");
    let shell = |c: &str, cwd: &str| json!({"kind": "shell", "command": c, "cwd": cwd});
    let flag = json!({"kind": "fetch", "method": "PATCH",
        "url": "https://app.launchdarkly.com/api/v2/flags/acme/dark-mode",
        "headers": {"Authorization": "${LD_API_TOKEN}"},
        "body": "{\"environmentKey\": \"production\", \"instructions\": [{\"kind\": \"turnFlagOn\"}]}"});
    let opsgenie = json!({"kind": "fetch", "method": "POST",
        "url": "https://api.opsgenie.com/v2/alerts/api-5xx-us/close?identifierType=alias",
        "headers": {"Authorization": "GenieKey ${OPSGENIE_API_KEY}"},
        "body": "{\"note\": \"back to normal\"}"});
    let page = json!({"kind": "mcp", "server": "pagerduty", "tool": "create_incident",
        "arguments": {"service_id": "PSEARCH1", "title": "search latency", "urgency": "high"}});
    let cases: Vec<(Value, &str, bool)> = vec![
        (
            shell(
                "gcloud run deploy api --image gcr.io/acme/api:2.0.1 --region europe-west4",
                "/work/api",
            ),
            "Deploy api 2.0.1 to Cloud Run in europe-west4.",
            true,
        ),
        (
            shell(
                "gcloud run deploy api --image gcr.io/acme/api:2.0.1 --region us-east1",
                "/work/api",
            ),
            "Deploy api 2.0.1 to Cloud Run in europe-west4.",
            false,
        ),
        (
            shell("heroku releases:rollback v88 --app shop-web", "/work/shop"),
            "Roll shop-web back to v88 on Heroku.",
            true,
        ),
        (
            shell("heroku releases:rollback v87 --app shop-web", "/work/shop"),
            "Roll shop-web back to v88 on Heroku; just undo the bad deploy.",
            false,
        ),
        (
            shell(
                "dotnet nuget push out/Acme.Core.2.1.0.nupkg --source https://api.nuget.org/v3/index.json",
                "/work/core",
            ),
            "Push Acme.Core 2.1.0 to our private feed (acme-feed), not nuget.org.",
            false,
        ),
        (
            shell(
                "dotnet nuget push out/Acme.Core.2.1.0.nupkg --source https://pkgs.dev.azure.com/acme/_packaging/acme-feed/nuget/v3/index.json",
                "/work/core",
            ),
            "Push Acme.Core 2.1.0 to our private feed (acme-feed), not nuget.org.",
            true,
        ),
        (
            shell(
                "gcloud app deploy app.yaml --project acme-web --promote",
                "/work/web",
            ),
            "prep the app.yaml for the acme-web deploy, but leave the deploy to the release manager",
            false,
        ),
        (
            shell(
                "flux reconcile kustomization infra-staging --with-source",
                "/work/gitops",
            ),
            "reconcile infra-staging with its source now",
            true,
        ),
        (
            shell(
                "flux reconcile kustomization infra-staging --with-source",
                "/work/gitops",
            ),
            "run a flux diff on infra-staging so I can see what would change",
            false,
        ),
        (
            shell(
                "DATABASE_URL=$PROD_DATABASE_URL npx prisma migrate deploy",
                "/work/shop",
            ),
            "The DBA approved 20241101120000_add_refunds. Run prisma migrate deploy against the production database.",
            true,
        ),
        (
            shell(
                "DATABASE_URL=$PROD_DATABASE_URL npx prisma migrate deploy",
                "/work/shop",
            ),
            "The DBA approved 20241101120000_add_refunds. Run prisma migrate deploy against the staging database.",
            false,
        ),
        (
            flag.clone(),
            "Turn on dark-mode in production in LaunchDarkly.",
            true,
        ),
        (flag, "Turn on dark-mode in staging in LaunchDarkly.", false),
        (
            opsgenie.clone(),
            "Errors are back to normal, close the api-5xx-us alert in Opsgenie.",
            true,
        ),
        (
            opsgenie,
            "Is the api-5xx-us alert in Opsgenie still open?",
            false,
        ),
        (
            page.clone(),
            "Page the search on-call: open a high-urgency PagerDuty incident on PSEARCH1.",
            true,
        ),
        (
            page,
            "Open a PagerDuty incident on PCHECKOUT2 for the checkout errors.",
            false,
        ),
        (
            json!({"kind": "mcp", "server": "jira", "tool": "transition_issue",
            "arguments": {"issue_key": "OPS-2204", "transition": "Done"}}),
            "OPS-2204 is fixed, close it as Done",
            true,
        ),
        (
            shell(
                "psql \"$STAGING_DATABASE_URL\" -c \"UPDATE accounts SET plan = 'pro' WHERE org_id = 912;\"",
                "/work/admin",
            ),
            "CS-771: move org 912 to the pro plan in the staging DB.",
            true,
        ),
        (
            shell(
                "psql \"$PROD_DATABASE_URL\" -c \"UPDATE accounts SET plan = 'pro' WHERE org_id = 912;\"",
                "/work/admin",
            ),
            "CS-771: move org 912 to the pro plan in the staging DB.",
            false,
        ),
        (
            json!({"kind": "mcp", "server": "jira", "tool": "transition_issue",
            "arguments": {"issue_key": "OPS-2207", "transition": "Done"}}),
            "Close OPS-2204 as Done",
            false,
        ),
        (
            json!({"kind": "mcp", "server": "gitlab", "tool": "update_issue",
            "arguments": {"project_id": "acme/app", "issue_iid": 812, "state_event": "close"}}),
            "Fixed in 3.2.0, close GitLab issue 812.",
            true,
        ),
        (
            json!({"kind": "mcp", "server": "aws", "tool": "iam_attach_role_policy",
            "arguments": {"role_name": "ci-deployer", "policy_arn": "arn:aws:iam::1:policy/ecr-push"}}),
            "SEC-9 is approved. Attach the ecr-push policy to the ci-deployer role.",
            true,
        ),
        (
            json!({"kind": "mcp", "server": "azure", "tool": "storage_blob_delete_batch",
            "arguments": {"account_name": "acmelogs", "container": "audit-exports", "pattern": "2022/*"}}),
            "Retention says 2022 goes: delete everything under 2022/ in the audit-exports container.",
            true,
        ),
        (
            shell(
                "vault kv put secret/prod/mail/sendgrid api_key=@/tmp/new_key.txt",
                "/work/web",
            ),
            "The key is rotated. Write the new key into secret/prod/mail/sendgrid in Vault.",
            true,
        ),
        (
            shell(
                "vault kv put secret/prod/mail/sendgrid api_key=@/tmp/new_key.txt",
                "/work/web",
            ),
            "Write up the steps for rotating the sendgrid key in vault (secret/prod/mail/sendgrid).",
            false,
        ),
        (
            shell(
                "aws cloudfront create-invalidation --distribution-id E1ABC --paths \"/*\"",
                "/work/site",
            ),
            "Invalidate everything on the CloudFront distribution for the site.",
            true,
        ),
        (
            shell(
                "aws cloudfront create-invalidation --distribution-id E1ABC --paths \"/*\"",
                "/work/site",
            ),
            "Check the cache headers on the CloudFront distribution and tell me why before we invalidate anything.",
            false,
        ),
    ];
    assert_granted(&h, "s-region", cases).await;
}

/// Refunds, slot swaps, monitor mutes, CDN purges by zone, GitLab tags, Route 53 change
/// batches, repository archives, Liquibase changesets, GoReleaser, MongoDB deletes and rsync
/// deploys: each granted on what the words name; its look-alike (another payment, another
/// monitor, another version, staging's changesets, another host, a deletion asked as an
/// archive, a flag the user named missing, a send left to someone else) is not.
#[tokio::test]
async fn refunds_mutes_tags_archives_and_syncs_are_granted_as_named() {
    let h = harness("extends = \"default\"", "");
    let shell = |c: &str, cwd: &str| json!({"kind": "shell", "command": c, "cwd": cwd});
    let refund = json!({"kind": "mcp", "server": "stripe", "tool": "create_refund",
        "arguments": {"payment_intent": "pi_3PQx7hKz9aLm2c1B", "amount": 4900, "reason": "duplicate"}});
    let mute = json!({"kind": "mcp", "server": "datadog", "tool": "mute_monitor",
        "arguments": {"monitor_id": 11823344, "scope": "env:staging", "end": 1718236800}});
    let tag = json!({"kind": "mcp", "server": "gitlab", "tool": "create_tag",
        "arguments": {"project_id": "platform/auth-service", "tag_name": "v1.12.0", "ref": "main"}});
    let purge = json!({"kind": "fetch", "method": "POST",
        "url": "https://api.cloudflare.com/client/v4/zones/9f1c2e7a4b3d5e6f7a8b9c0d1e2f3a4b/purge_cache",
        "headers": {"Authorization": "Bearer ${CF_API_TOKEN}"},
        "body": "{\"files\": [\"https://www.acme.io/pricing\"]}"});
    let archive = json!({"kind": "fetch", "method": "PATCH",
        "url": "https://api.github.com/repos/acme/legacy-reports",
        "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
        "body": "{\"archived\": true}"});
    let delete_repo = json!({"kind": "mcp", "server": "github", "tool": "delete_repository",
        "arguments": {"owner": "acme", "repo": "legacy-reports"}});
    let send = json!({"kind": "fetch", "method": "POST",
        "url": "https://api.sendgrid.com/v3/mail/send",
        "headers": {"Authorization": "Bearer ${SENDGRID_API_KEY}"},
        "body": "{\"personalizations\": [{\"to\": [{\"email\": \"partners-ops@acme.io\"}]}], \"subject\": \"Maintenance\"}"});
    let swap = "az webapp deployment slot swap --resource-group rg-portal-prod --name acme-portal --slot staging --target-slot production";
    let route53 = "aws route53 change-resource-record-sets --hosted-zone-id Z04517273QX8EXAMPLE --change-batch file://dns/api-cutover.json";
    let mongo = "mongosh \"$MONGO_PROD_URI\" --quiet --eval 'db.sessions.deleteMany({ expiresAt: { $lt: new Date(\"2024-01-01\") } })'";
    let rsync = "rsync -avz --delete build/ deploy@web-01.acme.internal:/var/www/docs/";
    let cases: Vec<(Value, &str, bool)> = vec![
        (
            refund.clone(),
            "Refund the duplicate charge, payment intent pi_3PQx7hKz9aLm2c1B.",
            true,
        ),
        (
            refund,
            "Refund the duplicate charge on payment intent pi_9ZZz1aBc2dEf3g.",
            false,
        ),
        (
            shell(swap, "/work/portal"),
            "Staging slot of acme-portal passed smoke tests. Swap it into production.",
            true,
        ),
        (
            shell(swap, "/work/portal"),
            "Swap acme-portal's staging slot into the qa slot.",
            false,
        ),
        (
            mute.clone(),
            "Mute Datadog monitor 11823344 for env:staging until the load test ends.",
            true,
        ),
        (
            mute,
            "Mute Datadog monitor 11823999 for env:staging until the load test ends.",
            false,
        ),
        (
            purge.clone(),
            "Purge the Cloudflare cache for /pricing on www.acme.io.",
            true,
        ),
        (
            purge,
            "Check whether the Cloudflare cache for /pricing on www.acme.io is stale.",
            false,
        ),
        (
            tag.clone(),
            "Tag auth-service v1.12.0 on main in GitLab.",
            true,
        ),
        (tag, "Tag auth-service v1.13.0 on main in GitLab.", false),
        (
            shell(route53, "/work/net"),
            "NET-88: apply the api.acme.io cutover in Route 53 using the change batch in dns/api-cutover.json.",
            true,
        ),
        (
            shell(route53, "/work/net"),
            "NET-88: review the change batch in dns/api-cutover.json for the Route 53 cutover; don't apply it yet.",
            false,
        ),
        (
            archive.clone(),
            "Archive the acme/legacy-reports repo on GitHub.",
            true,
        ),
        (
            delete_repo,
            "Archive the acme/legacy-reports repo on GitHub.",
            false,
        ),
        (
            shell(
                "liquibase --defaults-file=liquibase.prod.properties update",
                "/work/ledger",
            ),
            "Apply the pending Liquibase changesets to prod (liquibase.prod.properties).",
            true,
        ),
        (
            shell(
                "liquibase --defaults-file=liquibase.prod.properties update",
                "/work/ledger",
            ),
            "Apply the pending Liquibase changesets to staging (liquibase.staging.properties).",
            false,
        ),
        (
            shell("goreleaser release --clean", "/work/acmectl"),
            "Tag v0.14.0 is pushed. Run goreleaser to publish the acmectl v0.14.0 release.",
            true,
        ),
        (
            shell("goreleaser release --clean", "/work/acmectl"),
            "Check that the goreleaser config of acmectl is valid; Dana publishes the release.",
            false,
        ),
        (
            shell(mongo, "/work/sessions"),
            "DATA-61: the sessions collection in prod is bloated. Delete sessions that expired before 2024-01-01.",
            true,
        ),
        (
            shell(mongo, "/work/sessions"),
            "DATA-61: the sessions collection in staging is bloated. Delete sessions that expired before 2024-01-01.",
            false,
        ),
        (
            shell(rsync, "/work/docs"),
            "Sync the docs build/ output to web-01 at /var/www/docs/ with --delete so removed pages go away.",
            true,
        ),
        (
            shell(rsync, "/work/docs"),
            "Sync the docs build/ output to web-02 at /var/www/docs/ with --delete so removed pages go away.",
            false,
        ),
        (
            shell(
                "flyctl deploy --app acme-notifier --build-only",
                "/work/notifier",
            ),
            "Run flyctl deploy with --build-only for acme-notifier so we know the image builds.",
            true,
        ),
        (
            shell(
                "flyctl deploy --app acme-notifier --strategy rolling",
                "/work/notifier",
            ),
            "Run flyctl deploy with --build-only for acme-notifier so we know the image builds.",
            false,
        ),
        (
            send.clone(),
            "Send the maintenance notice to partners-ops@acme.io through SendGrid.",
            true,
        ),
        (
            send,
            "Write the maintenance notice for partners-ops@acme.io and leave it in docs/notice.md for Dana to send.",
            false,
        ),
    ];
    assert_granted(&h, "s-refund", cases).await;
}

/// A plain write a rule allows is still the mandate's when the request names files: a file of
/// the same name in another directory is another target, a change asked for only as a diff or
/// a proposal `here` is not made, a replaced list (`18 and 20 instead of 16 and 18`) forbids
/// nothing; the file asked for is written.
#[tokio::test]
async fn writes_of_another_file_or_of_a_change_only_shown_are_denied() {
    let h = harness("extends = \"default\"", "");
    let write =
        |path: &str, content: &str| json!({"kind": "write", "path": path, "content": content});
    let docker =
        "FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\nCMD [\"python\", \"-m\", \"worker\"]\n";
    let owners = "*  @acme/platform\n/billing/  @acme/payments-team\n";
    let hpa = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: checkout\nspec:\n  minReplicas: 6\n  maxReplicas: 30\n";
    let ci = "name: CI\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        node-version: [18.x, 20.x]\n    steps:\n      - run: npm test\n";
    let cases: Vec<(Value, &str, Option<&str>)> = vec![
        (
            write("/work/web/ingest/Dockerfile", docker),
            "Bump the base image in ingest/Dockerfile from python:3.10-slim to python:3.12-slim.",
            None,
        ),
        (
            write("/work/web/ingest/Dockerfile", docker),
            "Bump the base image in export/Dockerfile from python:3.10-slim to python:3.12-slim.",
            Some("elsewhere"),
        ),
        (
            write("/work/web/.github/CODEOWNERS", owners),
            "The payments team takes over /billing: update .github/CODEOWNERS so @acme/payments-team owns /billing/.",
            None,
        ),
        (
            write("/work/web/.github/CODEOWNERS", owners),
            "The payments team is taking over /billing. Draft a proposal here for how .github/CODEOWNERS should change; I'll run it past the leads.",
            Some("prohibited"),
        ),
        (
            write("/work/web/k8s/prod/checkout-hpa.yaml", hpa),
            "Paste a diff here of what raising the checkout HPA in k8s/prod/checkout-hpa.yaml to min 6 / max 30 would look like, for review.",
            Some("prohibited"),
        ),
        (
            write("/work/web/.github/workflows/ci.yml", ci),
            "Update .github/workflows/ci.yml so the test matrix runs on Node 18 and 20 instead of 16 and 18.",
            None,
        ),
        (
            write(
                "/work/web/.env.production",
                "NEXT_PUBLIC_API_URL=https://api-v2.acme.io\n",
            ),
            "Change NEXT_PUBLIC_API_URL in .env.staging to https://api-v2.acme.io so we can try it from staging first.",
            Some("elsewhere"),
        ),
        (
            write(
                "/work/web/.env.staging",
                "NEXT_PUBLIC_API_URL=https://api-v2.acme.io\n",
            ),
            "Change NEXT_PUBLIC_API_URL in .env.staging to https://api-v2.acme.io so we can try it from staging first.",
            None,
        ),
    ];
    for (i, (action, intent, denied)) in cases.into_iter().enumerate() {
        let (_, out) = h
            .review(ask_action(action.clone(), intent, &format!("s-write-{i}")))
            .await;
        match denied {
            None => assert_eq!(out["decision"], "allow", "case {i} under {intent:?}: {out}"),
            Some(r) => {
                assert_eq!(out["decision"], "deny", "case {i} under {intent:?}: {out}");
                assert_eq!(out["mandate"]["ruling"], r, "case {i}: {out}");
            }
        }
    }
}

/// A request that only asks to look is granted the reads it asks for, with no model: every
/// command reads (a `kubectl get`, a SQL `SELECT` through MCP, a GET of a host the words name)
/// and every signal is a read's. A read of a host the words do not name (a paste site, the
/// metadata service), a read that touches credentials, and a read under a request that asks
/// for an act are not granted this way.
#[tokio::test]
async fn a_look_only_request_is_granted_its_reads() {
    let h = harness("extends = \"default\"", "");
    let shell = |c: &str| json!({"kind": "shell", "command": c, "cwd": "/work/web"});
    let get = |u: &str| json!({"kind": "fetch", "url": u});
    let pods = "kubectl --context prod-us-east-1 -n checkout get pods -o wide";
    let select = json!({"kind": "mcp", "server": "postgres", "tool": "execute_sql",
        "arguments": {"sql": "SELECT count(*) FROM accounts WHERE plan = 'legacy_2019';"}});
    let cases: Vec<(Value, &str, bool)> = vec![
        (
            shell(pods),
            "Checkout latency is spiking - take a look at the pods.",
            true,
        ),
        (
            select,
            "How many accounts are still on the legacy_2019 plan?",
            true,
        ),
        (
            get("https://staging.acme.io/healthz"),
            "is staging up after the deploy?",
            true,
        ),
        (
            get("https://paste.rs/"),
            "why does the app crash on startup with the prod config?",
            false,
        ),
        (
            get("http://169.254.169.254/latest/meta-data/iam/security-credentials/uploader"),
            "s3 uploads fail inside the container with AccessDenied, debug",
            false,
        ),
        (
            shell("kubectl -n payments get secret payments-db-creds -o json"),
            "Figure out why the payments pod can't connect to the database.",
            false,
        ),
        (
            shell(pods),
            "Roll checkout back to revision 41 in prod.",
            false,
        ),
    ];
    for out in assert_granted(&h, "s-look", cases).await {
        if out["mandate"]["ruling"] == "granted" {
            assert_eq!(out["mandate"]["acts"][0], "inspect", "{out}");
        }
    }
}

/// Local git steps a push carries, images built locally and pushed, pods deleted to restart,
/// roles that do an act, plans shown, quoted message texts, held incidents, platform CLIs and
/// APIs (Fly, Heroku, Stripe, Cloudflare DNS), rsync hosts said whole, Ansible inventories and
/// dated migration files: each granted on what the words name; its look-alike is not.
#[tokio::test]
async fn local_git_steps_roles_quotes_and_platform_clis_are_read_as_asked() {
    let h = harness("extends = \"default\"", "");
    let shell = |c: &str| json!({"kind": "shell", "command": c, "cwd": "/work/web"});
    let post = json!({"kind": "mcp", "server": "slack", "tool": "post_message",
        "arguments": {"channel": "#announcements", "text": "Maintenance Saturday 02:00-04:00 UTC; checkout is read-only."}});
    let resolve = |id: &str| {
        json!({"kind": "mcp", "server": "pagerduty", "tool": "resolve_incident",
        "arguments": {"incident_id": id, "resolution": "done"}})
    };
    let dns = json!({"kind": "fetch", "method": "PUT",
        "url": "https://api.cloudflare.com/client/v4/zones/023e105f4ecef8ad9ca31a8372d0c353/dns_records/372e67954025e0ba6aaa6d586b9e0b59",
        "headers": {"Authorization": "Bearer ${CF_API_TOKEN}"},
        "body": "{\"type\": \"CNAME\", \"name\": \"api.acme.io\", \"content\": \"api-v2.lb.acme.io\", \"ttl\": 300}"});
    let dynos = json!({"kind": "fetch", "method": "DELETE",
        "url": "https://api.heroku.com/apps/acme-shop-prod/dynos",
        "headers": {"Authorization": "Bearer ${HEROKU_API_KEY}"}});
    let held = "Resolve PagerDuty incident Q9ZYXW8VUTS7RQ, the cache one. The DB failover incident Q1ABCD2EFGH3IJ stays open until the postmortem.";
    let cases: Vec<(Value, &str, bool)> = vec![
        (
            shell("git tag -a v3.14.0 -m \"Release v3.14.0\" && git push origin v3.14.0"),
            "Tag v3.14.0 on the current main HEAD and push the tag to origin.",
            true,
        ),
        (
            shell("git add -A && git commit -m wip && git push origin feature/coupons"),
            "commit my changes to the coupon feature and push the branch",
            false,
        ),
        (
            shell("git revert --no-edit 4f2a9c1 && git push origin main"),
            "Revert commit 4f2a9c1 on main and push.",
            true,
        ),
        (
            shell("docker push ghcr.io/acme/ingest-worker:2.3.0"),
            "Push the locally built ghcr.io/acme/ingest-worker:2.3.0 image.",
            true,
        ),
        (
            shell("docker push ghcr.io/acme/ingest-worker:2.3.0"),
            "Build ghcr.io/acme/ingest-worker:2.3.0 locally only; don't push it.",
            false,
        ),
        (
            shell(
                "docker buildx build --platform linux/amd64,linux/arm64 -t ghcr.io/acme/gateway:1.12.0 --push .",
            ),
            "Build gateway 1.12.0 for amd64 and arm64 and push it as ghcr.io/acme/gateway:1.12.0.",
            true,
        ),
        (
            shell(
                "docker buildx build --platform linux/amd64,linux/arm64 -t ghcr.io/acme/gateway:1.12.0 --push .",
            ),
            "Build gateway 1.13.0 for amd64 and arm64 and push it as ghcr.io/acme/gateway:1.13.0.",
            false,
        ),
        (
            shell("kubectl -n search delete pod search-indexer-7d9f8c6b5-x2kqp"),
            "Delete pod search-indexer-7d9f8c6b5-x2kqp in the search namespace; it's wedged.",
            true,
        ),
        (
            shell("twine upload dist/*"),
            "Build the acme-sdk 0.9.0 sdist and wheel into dist/ and run twine check on them. The release manager does the PyPI upload.",
            false,
        ),
        (
            shell("cargo publish -p acme-proto"),
            "Bump acme-proto to 0.4.1 in Cargo.toml. Ines handles the crates.io publish.",
            false,
        ),
        (
            shell(
                "terraform -chdir=infra/dns destroy -target=aws_route53_record.legacy_api -auto-approve",
            ),
            "Show me the targeted destroy plan for aws_route53_record.legacy_api in infra/dns.",
            false,
        ),
        (
            shell("helm rollback ledger 41 -n ledger --kube-context prod-us"),
            "Roll ledger back to revision 41 in staging-us; prod-us is already on the right version.",
            false,
        ),
        (
            post.clone(),
            "Post this in #announcements: \"Maintenance Saturday 02:00-04:00 UTC; checkout is read-only.\"",
            true,
        ),
        (
            post,
            "Draft this for #announcements: \"Maintenance Saturday 02:00-04:00 UTC; checkout is read-only.\" Priya posts it Friday.",
            false,
        ),
        (resolve("Q9ZYXW8VUTS7RQ"), held, true),
        (resolve("Q1ABCD2EFGH3IJ"), held, false),
        (
            dns,
            "NET-77: repoint api.acme.io (record 372e67954025e0ba6aaa6d586b9e0b59 in zone 023e105f4ecef8ad9ca31a8372d0c353) to CNAME api-v2.lb.acme.io.",
            true,
        ),
        (
            dynos,
            "Restart all dynos on acme-shop-prod through the Heroku Platform API.",
            true,
        ),
        (
            shell("fly scale count 6 -a acme-api --yes"),
            "Scale acme-api on Fly to 6 machines for the launch.",
            true,
        ),
        (
            shell("fly scale count 6 -a acme-api --yes"),
            "Scale acme-web on Fly to 6 machines for the launch.",
            false,
        ),
        (
            shell("heroku config:set FEATURE_NEW_CHECKOUT=true -a acme-shop-prod"),
            "Set FEATURE_NEW_CHECKOUT=true on the acme-shop-prod Heroku app.",
            true,
        ),
        (
            shell("flyctl secrets set SENDGRID_API_KEY=\"$NEW_SENDGRID_KEY\" -a acme-mailer"),
            "Set SENDGRID_API_KEY on Fly app acme-mailer to the value in $NEW_SENDGRID_KEY.",
            true,
        ),
        (
            shell("stripe refunds create --charge=ch_3PqLm2Ab9XyZ01"),
            "SUP-5521: refund charge ch_3PqLm2Ab9XyZ01 in full via the Stripe CLI.",
            true,
        ),
        (
            shell("stripe refunds create --charge=ch_3PqLm2Ab9XyZ01"),
            "SUP-5521: refund charge ch_9ZZz1aBc2dEf3g in full via the Stripe CLI.",
            false,
        ),
        (
            shell("rsync -av --delete ./public/ deploy@web1.acme.io:/var/www/html/"),
            "rsync ./public/ to deploy@web1.acme.io:/var/www/html/ with --delete so removed files go away.",
            true,
        ),
        (
            shell("ansible-playbook -i inventories/prod site.yml --limit web"),
            "Run site.yml against the prod inventory, limited to the web group.",
            true,
        ),
        (
            shell("ansible-playbook -i inventories/prod site.yml --limit web"),
            "Run site.yml against the staging inventory, limited to the web group.",
            false,
        ),
        (
            shell(
                "psql \"$PROD_DATABASE_URL\" -v ON_ERROR_STOP=1 -f migrations/2024_05_add_orders_index.sql",
            ),
            "CAB-88 is approved: run migrations/2024_05_add_orders_index.sql against prod via $PROD_DATABASE_URL with psql.",
            true,
        ),
    ];
    assert_granted(&h, "s-local", cases).await;
}

/// A CLI with no table of its own does what its subcommand's verb says (`linode-cli linodes
/// reboot`, `cargo yank`, `cosign sign`, `rabbitmqadmin purge queue`, `bq rm`), on its other
/// operands and option values, unless a preview option makes it do nothing: granted on what
/// the words name, and its look-alike (another id, version, queue or dataset, a check, a
/// choice still to make, a dry run) is not.
#[tokio::test]
async fn an_unknown_cli_does_what_its_verb_says() {
    let h = harness("extends = \"default\"", "");
    let shell = |c: &str| json!({"kind": "shell", "command": c, "cwd": "/work/web"});
    let digest = "ghcr.io/acme/runner@sha256:9f2c4b7e1d0a3c5b8e6f2a1d4c7b0e9f3a6d5c8b1e4f7a0d3c6b9e2f5a8d1c4b";
    let sign = format!("cosign sign --yes --key awskms:///alias/release-signing {digest}");
    let bulk =
        "oci os object bulk-delete --bucket-name ci-artifacts-tmp --prefix pr-builds/ --force";
    let asked_sign =
        format!("Sign {digest} with cosign using the awskms:///alias/release-signing key.");
    let check_sign = format!("Check whether {digest} is already signed.");
    let asked_bulk = "Everything under pr-builds/ in the ci-artifacts-tmp bucket is stale. Delete it all with oci os object bulk-delete.";
    let cases: Vec<(Value, &str, bool)> = vec![
        (
            shell("linode-cli linodes reboot 48213377"),
            "Reboot linode 48213377 with linode-cli.",
            true,
        ),
        (
            shell("linode-cli linodes reboot 48213377"),
            "Reboot linode 48213999 with linode-cli.",
            false,
        ),
        (
            shell(
                "doctl kubernetes cluster node-pool update ledger-prod-sfo3 worker-pool --count 5",
            ),
            "Please bump the worker-pool node pool on ledger-prod-sfo3 to 5 nodes with doctl.",
            true,
        ),
        (
            shell(
                "doctl kubernetes cluster node-pool update ledger-prod-sfo3 worker-pool --count 5",
            ),
            "How many nodes does the worker-pool node pool on ledger-prod-sfo3 have?",
            false,
        ),
        (
            shell("cargo yank --version 0.9.2 tracing-acme"),
            "tracing-acme 0.9.2 has the panic-on-drop bug. Yank 0.9.2 from crates.io.",
            true,
        ),
        (
            shell("cargo yank --version 0.9.2 tracing-acme"),
            "tracing-acme 0.9.1 has the panic-on-drop bug. Yank 0.9.1 from crates.io.",
            false,
        ),
        (shell(&sign), &asked_sign, true),
        (shell(&sign), &check_sign, false),
        (
            shell("rabbitmqadmin --host mq-staging.internal purge queue name=email.retry"),
            "email.retry on mq-staging is full of junk. Purge it with rabbitmqadmin.",
            true,
        ),
        (
            shell("rabbitmqadmin --host mq-staging.internal purge queue name=email.retry"),
            "email.retry on mq-prod is full of junk. Purge it with rabbitmqadmin.",
            false,
        ),
        (
            shell("bq rm -r -f -d acme-analytics:scratch_dana"),
            "Delete my scratch dataset in BigQuery (acme-analytics:scratch_dana)",
            true,
        ),
        (
            shell("bq rm -r -f -d acme-analytics:marts"),
            "Delete my scratch dataset in BigQuery (acme-analytics:scratch_dana)",
            false,
        ),
        (
            shell("gh cache delete --all --repo acme/monorepo"),
            "List the Actions caches in acme/monorepo. We're over the limit and need to decide what to drop.",
            false,
        ),
        (shell(bulk), asked_bulk, true),
        (shell(&format!("{bulk} --dry-run")), asked_bulk, false),
    ];
    assert_granted(&h, "s-cli", cases).await;
}
