//! `guardian mcp` driven over stdio with real JSON-RPC messages, as Claude Code's
//! `--permission-prompt-tool` would.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_guardian");

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Client {
    fn start(args: &[String]) -> Client {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawns");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Client {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, msg: Value) {
        writeln!(self.stdin, "{msg}").expect("write");
        self.stdin.flush().expect("flush");
    }

    fn call(&mut self, msg: Value) -> Value {
        self.send(msg);
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read");
        serde_json::from_str(&line).expect("a JSON-RPC reply")
    }

    fn approve(&mut self, id: u64, tool: &str, input: Value) -> Value {
        let reply = self.call(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "approve", "arguments": {"tool_name": tool, "input": input, "tool_use_id": "toolu_1"}}}));
        assert_eq!(reply["id"], id);
        let text = reply["result"]["content"][0]["text"]
            .as_str()
            .expect("one text item");
        serde_json::from_str(text).expect("the text is JSON")
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config(dir: &Path) -> String {
    let p = dir.join("guardian.toml");
    std::fs::write(
        &p,
        format!("[policy]\ndeny = [\"Bash(git push *)\"]\nallow = [\"Bash(git status)\"]\n[audit]\npath = \"{}\"\n", dir.join("a.jsonl").display()),
    )
    .expect("config");
    p.display().to_string()
}

#[test]
fn mcp_approval_tool_over_stdio() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = Client::start(&["mcp".into(), "--config".into(), config(dir.path())]);
    let init = c.call(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "claude-code", "version": "2"}}}));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "guardian");
    assert!(init["result"]["capabilities"]["tools"].is_object());
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let list = c.call(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert_eq!(list["result"]["tools"][0]["name"], "approve");
    assert_eq!(
        list["result"]["tools"][0]["inputSchema"]["required"],
        json!(["tool_name", "input"])
    );

    let denied = c.approve(3, "Bash", json!({"command": "git push origin main"}));
    assert_eq!(denied["behavior"], "deny");
    assert!(
        denied["message"]
            .as_str()
            .unwrap_or("")
            .contains("Bash(git push *)")
    );
    let input = json!({"command": "git status", "description": "status"});
    let allowed = c.approve(4, "Bash", input.clone());
    assert_eq!(allowed, json!({"behavior": "allow", "updatedInput": input}));
    let todo = c.approve(5, "TodoWrite", json!({"todos": []}));
    assert_eq!(todo["behavior"], "allow");
    let unknown = c.approve(6, "FancyTool", json!({"x": 1}));
    assert_eq!(unknown["behavior"], "deny");
    let nameless = c.approve(9, "", json!({}));
    assert_eq!(nameless["behavior"], "deny");
    assert!(
        nameless["message"]
            .as_str()
            .unwrap_or("")
            .contains("tool_name is missing"),
        "{nameless}"
    );
    // Refused before any review, and still in the audit log, as every decision is.
    let audit = std::fs::read_to_string(dir.path().join("a.jsonl")).expect("audit");
    let recs: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let refused = |tool: &str| {
        recs.iter()
            .find(|r| r["action"]["tool"] == tool)
            .cloned()
            .unwrap_or_else(|| panic!("no record for {tool:?}: {audit}"))
    };
    let r = refused("FancyTool");
    assert_eq!(
        (
            &r["error"],
            &r["agent"],
            &r["decision"],
            &r["action"]["input"]
        ),
        (
            &json!("unknown_tool"),
            &json!("mcp"),
            &json!("deny"),
            &json!({"x": 1})
        ),
        "{r}"
    );
    assert_eq!(refused("")["error"], "invalid_input");

    let err = c.call(json!({"jsonrpc": "2.0", "id": 7, "method": "resources/list"}));
    assert_eq!(err["error"]["code"], -32601);
    let pong = c.call(json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}));
    assert_eq!(pong["result"], json!({}));
}

#[test]
fn the_readme_mcp_config_fails_closed_when_the_server_is_down() {
    let snippet: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("integrations/claude-code/mcp.json"),
        )
        .expect("snippet"),
    )
    .expect("json");
    let server = &snippet["mcpServers"]["guardian"];
    assert_eq!(server["command"], "guardian");
    let mut args: Vec<String> = server["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    // Point it at a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let pos = args.iter().position(|a| a == "--server").expect("--server");
    args[pos + 1] = format!("http://127.0.0.1:{port}");
    let mut c = Client::start(&args);
    let _ = c.call(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}));
    let answer = c.approve(2, "Bash", json!({"command": "git status"}));
    assert_eq!(answer["behavior"], "deny");
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or("")
            .contains("no decision could be obtained")
    );
}

/// Through a running server (`--server`: `guardian mcp`, the OpenCode bridge, `guardian run
/// --server`), requests that must all be allowed are all sent and all audited, even when the
/// first one is denied.
#[tokio::test]
async fn a_remote_decider_reviews_every_request_of_a_set() {
    use guardian::integrations::mcp::{Decider, Remote};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = crate::common::Server::start(dir.path(), crate::common::PUSH_DENIED);
    let remote = Remote::new(&server.addr, std::time::Duration::from_secs(10)).expect("remote");
    let req = |cmd: &str| {
        guardian::ReviewRequest::from_json(crate::common::shell(cmd).to_string().as_bytes())
            .expect("valid")
    };
    let resp = remote
        .decide_all(
            vec![
                req("git push origin main"),
                req("git status"),
                req("git status"),
            ],
            guardian::config::Unreviewed::Deny,
        )
        .await
        .expect("an answer");
    assert_eq!(resp.decision, guardian::Decision::Deny);
    let audit = std::fs::read_to_string(dir.path().join("server-audit.jsonl")).expect("audit");
    assert_eq!(audit.lines().count(), 3, "{audit}");
    // A refusal before any review is recorded by the server too (POST /v1/refusals).
    let report = guardian::request::RefusalReport {
        tool: "FancyTool".into(),
        input: Some(json!({"x": 1})),
        session_id: Some("ses-remote".into()),
        agent: "mcp".into(),
        cwd: Some("/work/repo".into()),
        error: guardian::request::RefusalKind::UnknownTool,
        reason: "tool \"FancyTool\" is not known to guardian".into(),
        message: "denied by guardian".into(),
        deferred_to_user: false,
    };
    remote.refuse(report).await.expect("recorded");
    let audit = std::fs::read_to_string(dir.path().join("server-audit.jsonl")).expect("audit");
    let last: Value = serde_json::from_str(audit.lines().last().unwrap_or("")).expect("JSON");
    assert_eq!(audit.lines().count(), 4, "{audit}");
    assert_eq!(
        (&last["error"], &last["action"]["tool"], &last["session_id"]),
        (
            &json!("unknown_tool"),
            &json!("FancyTool"),
            &json!("ses-remote")
        ),
        "{last}"
    );
    // A server that cannot be reached: an error, never a silent success.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let down = Remote::new(
        &format!("http://127.0.0.1:{port}"),
        std::time::Duration::from_secs(2),
    )
    .expect("remote");
    let again = guardian::request::RefusalReport::from_json(
        br#"{"tool": "X", "agent": "mcp", "error": "unknown_tool", "reason": "r", "message": "m"}"#,
    )
    .expect("valid");
    assert!(down.refuse(again).await.is_err());
}

/// `POST /v1/refusals` records a refusal (201 with its id) and names a bad field (400).
#[tokio::test]
async fn the_refusals_endpoint_records_and_names_bad_fields() {
    let h = crate::common::Harness::new("[reviewer]\nbackend = \"none\"\n");
    let body = json!({"tool": "mystery", "agent": "opencode", "error": "unknown_tool",
        "reason": "permission \"mystery\" is not known to guardian", "message": "left to the user",
        "deferred_to_user": true, "session_id": "ses-1"});
    let (status, resp) = h
        .call("POST", "/v1/refusals", Some(body.to_string().into_bytes()))
        .await;
    assert_eq!(status.as_u16(), 201, "{resp}");
    let id = resp["id"].as_str().expect("an id");
    let rec = h.audit_of(id);
    assert_eq!(
        (
            &rec["error"],
            &rec["deferred_to_user"],
            &rec["client"],
            &rec["decided_by"]
        ),
        (
            &json!("unknown_tool"),
            &json!(true),
            &json!("opencode"),
            &json!("fallback")
        ),
        "{rec}"
    );
    for (bad, field) in [
        (
            json!({"tool": "x", "agent": "a", "error": "nope", "reason": "r", "message": "m"}),
            "error",
        ),
        (
            json!({"tool": "x", "error": "unknown_tool", "reason": "r", "message": "m"}),
            "agent",
        ),
        (
            json!({"tool": "x", "agent": " ", "error": "unknown_tool", "reason": "r", "message": "m"}),
            "agent",
        ),
        (
            json!({"tool": "x", "agent": "a", "error": "unknown_tool", "reason": "r", "message": "m", "extra": 1}),
            "extra",
        ),
    ] {
        let (status, resp) = h
            .call("POST", "/v1/refusals", Some(bad.to_string().into_bytes()))
            .await;
        assert_eq!(status.as_u16(), 400, "{bad}: {resp}");
        assert_eq!(resp["error"]["field"], field, "{bad}: {resp}");
    }
    assert_eq!(h.audit_records().len(), 1, "a bad report records nothing");
}
