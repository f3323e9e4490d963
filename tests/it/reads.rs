//! Recursive reads over real directories: a recursive reader is rule-allowed only when nothing a
//! deny or ask read rule or a protection covers is under its directories; a deny rule on a file
//! it would read denies it. Claude Code's Grep and Glob follow the same rule.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

/// A guardian whose workspace is a real directory with `src/lib.rs`, `.env` and `docs/`.
fn rig(extra_deny: &str) -> (tempfile::TempDir, Arc<guardian::Guardian>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src/nested")).expect("mkdir");
    std::fs::create_dir_all(ws.join("docs")).expect("mkdir");
    std::fs::write(ws.join("src/nested/lib.rs"), "// TODO").expect("write");
    std::fs::write(ws.join("docs/guide.md"), "# guide").expect("write");
    std::fs::write(ws.join(".env"), "KEY=secret").expect("write");
    let text = format!(
        "[policy]\ndeny = [{extra_deny}]\nallow = [\"Bash(grep *)\", \"Bash(rg *)\", \"Bash(tar *)\", \"Read(./src/**)\", \"Read(./docs/**)\", \"Read(./*)\"]\n\n[reviewer]\nbackend = \"none\"\n\n[audit]\npath = \"{}\"\n",
        dir.path().join("audit.jsonl").display()
    );
    let cfg = guardian::Config::parse(&text, "guardian.toml").expect("parses");
    let g = Arc::new(guardian::Guardian::from_config(cfg).expect("builds"));
    (dir, g)
}

async fn review(g: &Arc<guardian::Guardian>, ws: &Path, action: Value) -> guardian::ReviewResponse {
    let mut action = action;
    action["cwd"] = json!(ws.display().to_string());
    let req = guardian::ReviewRequest::from_json(
        json!({"action": action, "session": {"workspace_roots": [ws.display().to_string()]}})
            .to_string()
            .as_bytes(),
    )
    .expect("valid request");
    g.review(req, "test").await
}

fn shell(command: &str) -> Value {
    json!({"kind": "shell", "command": command})
}

#[tokio::test]
async fn a_recursive_reader_is_allowed_only_where_nothing_protected_lies() {
    let (dir, g) = rig("");
    let ws = dir.path().join("ws");
    // Nothing protected under src/: allowed.
    let r = review(&g, &ws, shell("grep -rn TODO src/")).await;
    assert_eq!(r.decision, guardian::Decision::Allow, "{}", r.rationale);
    // The workspace holds .env (a built-in protection): not rule-allowed, the file is named.
    let r = review(&g, &ws, shell("grep -r KEY .")).await;
    assert_eq!(r.decision, guardian::Decision::Deny);
    assert_eq!(
        r.decided_by,
        guardian::DecidedBy::Fallback,
        "{}",
        r.rationale
    );
    assert!(r.rationale.contains(".env"), "{}", r.rationale);
    // ripgrep skips hidden files unless told otherwise.
    let r = review(&g, &ws, shell("rg KEY")).await;
    assert_eq!(r.decision, guardian::Decision::Allow, "{}", r.rationale);
    let r = review(&g, &ws, shell("rg --hidden KEY")).await;
    assert_eq!(r.decision, guardian::Decision::Deny, "{}", r.rationale);
    // An archive of the workspace reads .env too.
    let r = review(&g, &ws, shell("tar czf /tmp/out.tgz .")).await;
    assert_eq!(r.decision, guardian::Decision::Deny, "{}", r.rationale);
    // A directory that does not exist inside a workspace that does: nothing is read.
    let r = review(&g, &ws, shell("grep -r KEY build/")).await;
    assert_eq!(r.decision, guardian::Decision::Allow, "{}", r.rationale);
    // .env added under src/: src/ is no longer clear.
    std::fs::write(ws.join("src/nested/.env"), "KEY=2").expect("write");
    let r = review(&g, &ws, shell("grep -rn TODO src/")).await;
    assert_eq!(r.decision, guardian::Decision::Deny, "{}", r.rationale);
    assert!(r.rationale.contains("src/nested/.env"), "{}", r.rationale);
}

#[tokio::test]
async fn a_deny_rule_on_a_file_under_the_tree_denies_the_search() {
    let (dir, g) = rig("\"Read(./.env)\"");
    let ws = dir.path().join("ws");
    let r = review(&g, &ws, shell("grep -r KEY .")).await;
    assert_eq!(r.decided_by, guardian::DecidedBy::Rule, "{}", r.rationale);
    assert_eq!(r.decision, guardian::Decision::Deny);
    assert_eq!(
        r.rule.as_ref().map(|x| x.pattern.as_str()),
        Some("Read(./.env)")
    );
}

#[tokio::test]
async fn claude_code_grep_and_glob_are_searches_of_a_tree() {
    let (dir, g) = rig("\"Read(./.env)\"");
    let ws = dir.path().join("ws");
    let wss = ws.display().to_string();
    let hook = |tool: &str, path: Option<&str>| {
        let mut ti = json!({"pattern": "KEY"});
        if let Some(p) = path {
            ti["path"] = json!(p);
        }
        json!({"session_id": format!("s-{tool}-{path:?}"), "cwd": wss, "hook_event_name": "PreToolUse",
               "tool_name": tool, "tool_input": ti})
    };
    let router = guardian::server::router(g.clone());
    let call = |body: Value| {
        let router = router.clone();
        async move {
            use http_body_util::BodyExt;
            use tower::ServiceExt;
            let req = axum::http::Request::builder()
                .method("POST")
                .uri("/v1/hooks/claude-code")
                .header("content-type", "application/json")
                .body(axum::body::Body::from(body.to_string()))
                .expect("request");
            let resp = router.oneshot(req).await.expect("answer");
            let bytes = resp.into_body().collect().await.expect("body").to_bytes();
            let v: Value = serde_json::from_slice(&bytes).expect("json");
            v["hookSpecificOutput"]["permissionDecision"]
                .as_str()
                .unwrap_or("")
                .to_string()
        }
    };
    // Grep over the whole workspace would read .env: denied by the rule on that file.
    assert_eq!(call(hook("Grep", None)).await, "deny");
    // Grep and Glob under src/ (Read(./src/**), nothing protected there): allowed.
    let src = ws.join("src").display().to_string();
    assert_eq!(call(hook("Grep", Some(&src))).await, "allow");
    assert_eq!(call(hook("Glob", Some(&src))).await, "allow");
    // LS lists one directory: not a search of the tree.
    assert_eq!(call(hook("LS", Some(&wss))).await, "allow");
}
