//! `guardian mcp`: a stdio MCP server exposing an approval tool for Claude Code's
//! `--permission-prompt-tool` (headless `-p` mode).
//!
//! This module owns the JSON-RPC 2.0 exchange (newline-delimited on stdin/stdout): `initialize`,
//! `tools/list`, `tools/call` and `ping`. The `approve` tool takes `{tool_name, input,
//! tool_use_id?}` and returns one text item holding `{"behavior":"allow","updatedInput":{…}}` or
//! `{"behavior":"deny","message":"…"}`. Decisions come from a [`Decider`]: the in-process
//! pipeline, or a running server (any failure to reach it is a deny). A call refused before any
//! review (an unknown tool, unreadable input) is recorded where the decisions are audited.

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::claude_code::{HookInput, Translation, translate};
use crate::config::Unreviewed;
use crate::request::{RefusalKind, RefusalReport, ReviewRequest};
use crate::verdict::{Decision, ReviewResponse};

/// The MCP protocol version answered when the client names none.
pub const PROTOCOL_VERSION: &str = "2025-06-18";
/// The approval tool's name (use `--permission-prompt-tool mcp__guardian__approve`).
pub const TOOL_NAME: &str = "approve";

/// Why no decision could be obtained (every one of these is a deny for the caller).
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// An empty set of requests.
    #[error("nothing to review")]
    NothingToReview,
    /// The server's HTTP client could not be built.
    #[error("{0}")]
    Client(#[from] crate::transport::ClientError),
    /// The server could not be reached.
    #[error("{url}: {source}")]
    Unreachable {
        /// The review URL.
        url: String,
        /// Why.
        source: reqwest::Error,
    },
    /// The server answered with an error status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The review URL.
        url: String,
        /// The status.
        status: reqwest::StatusCode,
    },
    /// The server's answer is not a review response.
    #[error("invalid answer from {url}: {source}")]
    InvalidAnswer {
        /// The review URL.
        url: String,
        /// Why.
        source: reqwest::Error,
    },
    /// A refusal could not be written to the audit log.
    #[error("the refusal could not be recorded in the audit log: {0}")]
    Audit(std::io::Error),
}

/// Where decisions come from.
pub trait Decider: Send + Sync {
    /// Reviews a request; an error is a failure to get any answer.
    fn decide(&self, req: ReviewRequest) -> BoxFuture<'_, Result<ReviewResponse, DecideError>>;

    /// Records a tool call refused before any review (a tool guardian does not model, input it
    /// cannot read) where this decider's decisions are audited, so the audit log holds every
    /// answer. An error means it was not recorded: the caller refuses all the same.
    fn refuse(&self, report: RefusalReport) -> BoxFuture<'_, Result<(), DecideError>>;

    /// Reviews requests that must all be allowed, with the same rule as
    /// [`crate::pipeline::Guardian::review_all`]: a hard deny answers, an unreviewed deny
    /// answers only when nothing is denied outright, otherwise the last allow. This default asks
    /// for all of them at once and waits for every answer (so every one is reviewed and audited
    /// by the server, as in-process); an error is a failure to get any answer.
    fn decide_all(
        &self,
        reqs: Vec<ReviewRequest>,
        mode: Unreviewed,
    ) -> BoxFuture<'_, Result<ReviewResponse, DecideError>> {
        let _ = mode;
        Box::pin(async move {
            let answers = futures::future::join_all(reqs.into_iter().map(|r| self.decide(r))).await;
            let mut all = crate::decision::AllAllowed::default();
            let mut deny = None;
            for answer in answers {
                if let Some(d) = all.push(answer?) {
                    deny.get_or_insert(d);
                }
            }
            match deny {
                Some(d) => Ok(d),
                None => all.finish().ok_or(DecideError::NothingToReview),
            }
        })
    }
}

/// Handles one JSON-RPC message; `None` for notifications (no reply).
pub async fn handle(msg: &Value, decider: &dyn Decider, cwd: &str) -> Option<Value> {
    let id = msg.get("id").cloned();
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let id = id?; // notifications (no id) get no reply
    let result = match method {
        "initialize" => {
            let version = msg["params"]["protocolVersion"]
                .as_str()
                .unwrap_or(PROTOCOL_VERSION);
            Ok(json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "guardian", "version": env!("CARGO_PKG_VERSION")}
            }))
        }
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": [{
            "name": TOOL_NAME,
            "description": "Decide whether a tool call may run (guardian policy and reviewer). For Claude Code's --permission-prompt-tool.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "tool_name": {"type": "string"},
                    "input": {"type": "object"},
                    "tool_use_id": {"type": "string"}
                },
                "required": ["tool_name", "input"]
            }
        }]})),
        "tools/call" => {
            let name = msg["params"]["name"].as_str().unwrap_or("");
            if name != TOOL_NAME {
                Err((-32602, format!("unknown tool {name:?}")))
            } else {
                let answer = approve(&msg["params"]["arguments"], decider, cwd).await;
                Ok(json!({"content": [{"type": "text", "text": answer.to_string()}]}))
            }
        }
        other => Err((-32601, format!("method {other:?} not found"))),
    };
    Some(match result {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    })
}

/// The approval: allow with the input unchanged, or deny with the reason. Never allow on failure.
/// Claude Code's `-p` mode is headless (nobody can answer a prompt), so an unreviewed action or
/// an unknown tool is a deny here.
pub async fn approve(args: &Value, decider: &dyn Decider, cwd: &str) -> Value {
    let deny = |message: String| json!({"behavior": "deny", "message": message});
    let input = args.get("input").cloned().unwrap_or(Value::Null);
    let tool = args.get("tool_name").and_then(Value::as_str).unwrap_or("");
    let hook = HookInput {
        hook_event_name: "PreToolUse".into(),
        session_id: None,
        transcript_path: None,
        cwd: Some(cwd.to_string()),
        permission_mode: None,
        prompt: None,
        tool_name: Some(tool.to_string()),
        tool_input: Some(input.clone()),
        agent_type: None,
        network_approval_context: None,
        approval_context: None,
        guardian_diff: None,
        agent: None,
    };
    let translated = if tool.is_empty() {
        Err("tool_name is missing".to_string())
    } else {
        translate(&hook).map_err(|e| e.to_string())
    };
    let (error, reason) = match translated {
        Ok(Translation::Pass(_)) => return json!({"behavior": "allow", "updatedInput": input}),
        Ok(Translation::Review(reqs)) => {
            return match decider.decide_all(reqs, Unreviewed::Deny).await {
                Ok(resp) if resp.decision == Decision::Allow => {
                    json!({"behavior": "allow", "updatedInput": input})
                }
                Ok(resp) => deny(resp.message),
                Err(e) => deny(format!(
                    "denied by guardian: no decision could be obtained ({e})"
                )),
            };
        }
        Ok(Translation::Unknown(tool)) => (
            RefusalKind::UnknownTool,
            format!("tool {tool:?} is not known to guardian, and nobody can be asked in -p mode"),
        ),
        Err(e) => (RefusalKind::InvalidInput, e),
    };
    // Refused before any review: recorded like a decision (a failed record is still a deny).
    let message = format!("denied by guardian: {reason}");
    let report = RefusalReport {
        tool: tool.to_string(),
        input: Some(input),
        session_id: None,
        agent: "mcp".into(),
        cwd: Some(cwd.to_string()),
        error,
        reason,
        message: message.clone(),
        deferred_to_user: false,
    };
    if let Err(e) = decider.refuse(report).await {
        tracing::error!(error = %e, tool, "a refused tool call could not be recorded");
    }
    deny(message)
}

/// Serves MCP on stdin/stdout until stdin closes.
pub async fn serve_stdio(decider: &dyn Decider) -> std::io::Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let cwd = std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "/".into());
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Value>(&line) {
            Ok(msg) => handle(&msg, decider, &cwd).await,
            Err(e) => Some(
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("parse error: {e}")}}),
            ),
        };
        if let Some(r) = reply {
            stdout.write_all(format!("{r}\n").as_bytes()).await?;
            stdout.flush().await?;
        }
    }
    Ok(())
}

/// Decides in-process, through the same pipeline as the server, as the named client (`mcp`,
/// `opencode`: what audit records and per-client limits see).
pub struct InProcess(
    pub std::sync::Arc<crate::pipeline::Guardian>,
    pub &'static str,
);

impl Decider for InProcess {
    fn decide(&self, req: ReviewRequest) -> BoxFuture<'_, Result<ReviewResponse, DecideError>> {
        Box::pin(async move { Ok(self.0.review(req, self.1).await) })
    }

    fn refuse(&self, report: RefusalReport) -> BoxFuture<'_, Result<(), DecideError>> {
        Box::pin(async move {
            self.0
                .record_refusal(&crate::pipeline::Refusal::of(&report, self.1))
                .await
                .map(|_| ())
                .map_err(DecideError::Audit)
        })
    }

    fn decide_all(
        &self,
        reqs: Vec<ReviewRequest>,
        mode: Unreviewed,
    ) -> BoxFuture<'_, Result<ReviewResponse, DecideError>> {
        Box::pin(async move {
            if reqs.is_empty() {
                return Err(DecideError::NothingToReview);
            }
            Ok(self.0.review_all(reqs, self.1, mode).await)
        })
    }
}

/// Decides by asking a running guardian server (`POST /v1/review`).
pub struct Remote {
    client: reqwest::Client,
    url: String,
    refusals_url: String,
}

impl Remote {
    /// A client for the server at `base` (e.g. `http://127.0.0.1:8700`).
    pub fn new(base: &str, timeout: std::time::Duration) -> Result<Remote, DecideError> {
        Ok(Remote {
            client: crate::transport::http_client(timeout)?,
            url: format!("{}/v1/review", base.trim_end_matches('/')),
            refusals_url: format!("{}/v1/refusals", base.trim_end_matches('/')),
        })
    }

    /// A POST of `body` to `url`, with the client token when one is set.
    async fn post<T: serde::Serialize>(
        &self,
        url: &str,
        body: &T,
    ) -> Result<reqwest::Response, DecideError> {
        let mut request = self.client.post(url).json(body);
        if let Some(token) = crate::transport::client_token() {
            request = request.bearer_auth(token);
        }
        let resp = request
            .send()
            .await
            .map_err(|source| DecideError::Unreachable {
                url: url.to_string(),
                source,
            })?;
        if !resp.status().is_success() {
            return Err(DecideError::Status {
                url: url.to_string(),
                status: resp.status(),
            });
        }
        Ok(resp)
    }
}

impl Decider for Remote {
    fn refuse(&self, report: RefusalReport) -> BoxFuture<'_, Result<(), DecideError>> {
        Box::pin(async move { self.post(&self.refusals_url, &report).await.map(|_| ()) })
    }

    fn decide(&self, req: ReviewRequest) -> BoxFuture<'_, Result<ReviewResponse, DecideError>> {
        Box::pin(async move {
            let resp = self.post(&self.url, &req).await?;
            resp.json::<ReviewResponse>()
                .await
                .map_err(|source| DecideError::InvalidAnswer {
                    url: self.url.clone(),
                    source,
                })
        })
    }
}
