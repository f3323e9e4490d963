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
    let unknown = c.approve(6, "FancyTool", json!({}));
    assert_eq!(unknown["behavior"], "deny");

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
}
