//! Shared helpers for integration tests: a guardian built from a config text in a temp dir,
//! driven through the real router, and a fake OpenAI-compatible reviewer.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

use guardian::{Config, Guardian};

/// Sends one request through a router: the answer's status, headers and body.
pub async fn send(
    router: &axum::Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: impl Into<Body>,
) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = router
        .clone()
        .oneshot(req.body(body.into()).expect("request builds"))
        .await
        .expect("router answers");
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    (status, headers, bytes.to_vec())
}

/// A guardian under test and the files it uses.
pub struct Harness {
    pub guardian: Arc<Guardian>,
    pub dir: tempfile::TempDir,
    pub audit_path: PathBuf,
}

/// The policy most tests use, plus a `[reviewer]` section.
pub fn config_text(reviewer: &str, audit: &std::path::Path) -> String {
    format!(
        r#"[server]
listen = "127.0.0.1:0"

[policy]
deny  = ["Bash(git push *)", "Read(./.env)"]
ask   = ["Bash(git commit *)"]
allow = ["Bash(git status)", "Bash(git diff *)", "Read(./src/**)"]

{reviewer}

[audit]
path = "{}"
"#,
        audit.display()
    )
}

/// A `[reviewer]` section pointing at a fake server.
pub fn openai_reviewer(base: &str, timeout_ms: u64) -> String {
    format!(
        "[reviewer]\nbackend = \"openai\"\nbase_url = \"{base}/v1\"\nmodel = \"test-model\"\ntimeout_ms = {timeout_ms}\n"
    )
}

impl Harness {
    pub fn new(reviewer_section: &str) -> Harness {
        let dir = tempfile::tempdir().expect("tempdir");
        let audit_path = dir.path().join("audit.jsonl");
        let text = config_text(reviewer_section, &audit_path);
        let cfg = Config::parse(&text, "guardian.toml").expect("config parses");
        let guardian = Arc::new(Guardian::from_config(cfg).expect("guardian builds"));
        Harness {
            guardian,
            dir,
            audit_path,
        }
    }

    /// Sends a request through the real router.
    pub async fn call(
        &self,
        method: &str,
        uri: &str,
        body: Option<Vec<u8>>,
    ) -> (StatusCode, Value) {
        let router = guardian::server::router(self.guardian.clone());
        let headers = [("content-type", "application/json")];
        let (status, _, bytes) =
            send(&router, method, uri, &headers, body.unwrap_or_default()).await;
        let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, value)
    }

    pub async fn review(&self, body: Value) -> (StatusCode, Value) {
        self.call("POST", "/v1/review", Some(body.to_string().into_bytes()))
            .await
    }

    /// Every audit record written so far.
    pub fn audit_records(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.audit_path)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("audit line is JSON"))
            .collect()
    }

    /// The audit record of one review id; panics if missing.
    pub fn audit_of(&self, review_id: &str) -> Value {
        self.audit_records()
            .into_iter()
            .find(|r| r["review_id"] == review_id)
            .unwrap_or_else(|| panic!("no audit record for {review_id}"))
    }
}

/// A shell action request in /work/repo.
pub fn shell(command: &str) -> Value {
    serde_json::json!({
        "action": {"kind": "shell", "command": command, "cwd": "/work/repo"},
        "session": {"id": "s-1", "agent": "test-agent", "workspace_roots": ["/work/repo"]},
        "intent": "Fix the failing test"
    })
}

/// A chat completion whose content is `content`.
pub fn completion(content: &str) -> Value {
    serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 321, "completion_tokens": 45, "total_tokens": 366}
    })
}

/// A verdict as the model would write it.
pub fn verdict(risk: &str, auth: &str, outcome: &str) -> String {
    serde_json::json!({
        "rationale": format!("judged {risk}"),
        "risk_level": risk,
        "user_authorization": auth,
        "outcome": outcome
    })
    .to_string()
}

/// A `guardian serve` child process on a free loopback port, killed on drop.
pub struct Server {
    pub child: std::process::Child,
    /// `http://127.0.0.1:PORT`
    pub addr: String,
}

impl Server {
    /// Starts the real binary with a policy (`[policy]` body) and an audit file in `dir`.
    pub fn start(dir: &std::path::Path, policy: &str) -> Server {
        Server::start_with_audit(dir, policy, "")
    }

    /// Like [`Server::start`], with more `[audit]` keys (`audit`, TOML lines).
    pub fn start_with_audit(dir: &std::path::Path, policy: &str, audit: &str) -> Server {
        use std::io::BufRead;
        let cfg = dir.join("guardian.toml");
        std::fs::write(
            &cfg,
            format!(
                "[policy]\n{policy}\n[audit]\npath = \"{}\"\n{audit}\n",
                dir.join("server-audit.jsonl").display()
            ),
        )
        .expect("config");
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_guardian"))
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(&cfg)
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("spawns");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = std::io::BufReader::new(stderr).lines();
        let addr = lines
            .by_ref()
            .take(50)
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("guardian listening on ").map(str::to_string))
            .expect("the server printed its address");
        // Keep draining its log so it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Server { child, addr }
    }

    /// Stops the server now.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The policy the server-based tests share.
pub const PUSH_DENIED: &str = "deny = [\"Bash(git push *)\"]\nallow = [\"Bash(git status)\"]";

/// Runs the binary with `args`, feeding `stdin`.
pub fn run_with_stdin(args: &[String], stdin: &str) -> std::process::Output {
    run_program_with_stdin(env!("CARGO_BIN_EXE_guardian"), args, stdin)
}

/// Runs `program` with `args`, feeding `stdin`.
pub fn run_program_with_stdin(program: &str, args: &[String], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(program)
        .args(args)
        // No probe for a local model: what the test configures is what runs.
        .env("GUARDIAN_NO_LOCAL_MODEL", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawns");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("runs")
}

/// A fake OpenAI-compatible reviewer on loopback answering every chat completion with `response`.
pub async fn fake_reviewer(response: wiremock::ResponseTemplate) -> wiremock::MockServer {
    use wiremock::matchers::{method, path};
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

/// A fake reviewer that allows everything at low risk.
pub async fn allowing_reviewer() -> wiremock::MockServer {
    fake_reviewer(
        wiremock::ResponseTemplate::new(200)
            .set_body_json(completion(&verdict("low", "high", "allow"))),
    )
    .await
}

/// The workspace most normalizer and prompt tests judge in: `/work/repo`, home `home`.
pub fn workspace_ctx(home: &str) -> guardian::normalize::Context {
    guardian::normalize::Context {
        cwd: PathBuf::from("/work/repo"),
        workspace_roots: vec![PathBuf::from("/work/repo")],
        home: Some(PathBuf::from(home)),
        git_dirs: Vec::new(),
    }
}

/// Runs the binary with `args` in `dir`, its state directory inside `dir` and no local-model
/// probe (so nothing is written outside `dir`).
pub fn guardian_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_guardian"))
        .args(args)
        .current_dir(dir)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("GUARDIAN_NO_LOCAL_MODEL", "1")
        .output()
        .expect("runs")
}
