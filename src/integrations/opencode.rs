//! OpenCode: a bridge that answers a running OpenCode server's permission requests, the
//! `permission` entries that make OpenCode ask, and its wiring for `guardian run`.
//!
//! This module owns everything that is OpenCode's own. OpenCode calls no hook: the bridge
//! subscribes to the server's event stream
//! (`GET /event`, server-sent events), reviews each `permission.asked` (its `permission`,
//! `patterns` and `metadata` become guardian actions), and replies with
//! `POST /permission/:id/reply` `{"reply": "once" | "reject", "message": …}`. On (re)connect it
//! also answers what `GET /permission` lists as pending, and it reconnects with backoff. A failure
//! to review is a reject; only in `[hooks] unreviewed = "ask"` mode is an action nothing could
//! review (or a doom loop, or an unknown kind) left unanswered, for OpenCode's own prompt.
//! `guardian install opencode` sets the kinds guardian answers to "ask" in `opencode.json`
//! ([`OPENCODE_ASKS`]); `guardian run` does the same for one run through
//! `OPENCODE_CONFIG_CONTENT` and gives the server a port for the bridge ([`opencode_args`]).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::contract::HookAnswer;
use super::install::{Options, Scope, SettingsError, object_at, parse_json_object, pretty_json};
use super::mcp::Decider;
use super::run::{Endpoint, RunError, option_value};
use super::{AgentIntegration, Info, Merged, Wiring};
use crate::config::Unreviewed;
use crate::request::{
    Action, Escalation, EscalationKind, ReviewRequest, Role, SessionInfo, TranscriptEntry,
};
use crate::verdict::Decision;

/// OpenCode's facts.
pub const INFO: Info = Info {
    name: "opencode",
    title: "OpenCode",
    program: "opencode",
    hooks: false,
};

/// OpenCode's integration.
pub struct Integration;

/// The permission kinds the OpenCode snippet makes OpenCode ask about (and so the bridge answer).
pub const OPENCODE_ASKS: &[&str] = &["bash", "edit", "webfetch", "external_directory"];

impl AgentIntegration for Integration {
    fn settings_path(&self, o: &Options) -> PathBuf {
        match o.scope {
            Scope::User => o
                .xdg_config_home
                .clone()
                .unwrap_or_else(|| o.home.join(".config"))
                .join("opencode/opencode.json"),
            Scope::Project => o.project_dir.join("opencode.json"),
        }
    }

    fn merge_settings(&self, old: Option<&str>, o: &Options) -> Result<Merged, SettingsError> {
        merge_opencode(old, o)
    }

    /// The TUI or `opencode serve`, with a per-run config asking for every call guardian
    /// answers, and the server's URL for the bridge.
    fn wire(&self, args: &[String], _ep: &Endpoint) -> Result<Wiring, RunError> {
        let env = vec![(
            "OPENCODE_CONFIG_CONTENT".to_string(),
            opencode_config_content(std::env::var("OPENCODE_CONFIG_CONTENT").ok().as_deref())?,
        )];
        let (args, port) = opencode_args(args, free_port()?)?;
        Ok(Wiring {
            args,
            env,
            bridge: Some(format!("http://127.0.0.1:{port}")),
        })
    }
}

/// A permission request, as OpenCode sends it.
#[derive(Debug, Clone, Deserialize)]
pub struct PermissionRequest {
    /// The request id to reply to.
    pub id: String,
    /// OpenCode's session.
    #[serde(rename = "sessionID", default)]
    pub session_id: Option<String>,
    /// `bash`, `edit`, `read`, `webfetch`, `external_directory`, …
    pub permission: String,
    /// The commands, paths or URLs asked for.
    #[serde(default)]
    pub patterns: Vec<String>,
    /// Extra context (e.g. the full command, the file path).
    #[serde(default)]
    pub metadata: Value,
}

/// Why a permission request stands for no action guardian can judge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PermissionError {
    /// A kind that needs patterns, without any.
    #[error("{0} request without patterns")]
    NoPatterns(String),
    /// `doom_loop`: OpenCode saw the agent repeat the same call.
    #[error("the agent repeated the same call: stop and report to the user")]
    DoomLoop,
    /// A kind guardian does not know.
    #[error("permission {0:?} is not known to guardian")]
    Unknown(String),
}

/// Why the bridge could not start or lost the event stream.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The HTTP client could not be built.
    #[error("{0}")]
    Client(reqwest::Error),
    /// The event stream could not be opened or read.
    #[error("{0}")]
    Stream(reqwest::Error),
    /// The event stream answered with an error status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The event stream's URL.
        url: String,
        /// The status.
        status: reqwest::StatusCode,
    },
    /// Nothing arrived for too long.
    #[error("the event stream was silent for {0} s")]
    Silent(u64),
}

/// The guardian actions a permission request stands for (all must be allowed), or why none.
pub fn actions(p: &PermissionRequest, cwd: Option<&str>) -> Result<Vec<Action>, PermissionError> {
    let meta = |k: &str| {
        p.metadata
            .get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let cwd = cwd.map(str::to_string);
    let each = |f: &dyn Fn(String) -> Action| {
        if p.patterns.is_empty() {
            return Err(PermissionError::NoPatterns(p.permission.clone()));
        }
        Ok(p.patterns.iter().cloned().map(f).collect())
    };
    match p.permission.as_str() {
        "bash" => match meta("command") {
            Some(command) => Ok(vec![Action::Shell { command, cwd }]),
            None => each(&|command| Action::Shell {
                command,
                cwd: cwd.clone(),
            }),
        },
        "edit" | "write" | "patch" => match meta("filepath").or_else(|| meta("filePath")) {
            Some(path) => Ok(vec![Action::Write {
                path,
                cwd,
                content: None,
                diff: meta("diff"),
            }]),
            None => each(&|path| Action::Write {
                path,
                cwd: cwd.clone(),
                content: None,
                diff: None,
            }),
        },
        "read" | "list" | "glob" | "grep" | "external_directory" => each(&|path| Action::Read {
            path: path
                .trim_end_matches("/*")
                .trim_end_matches("/**")
                .to_string(),
            cwd: cwd.clone(),
            // grep and glob search a directory tree.
            recursive: matches!(p.permission.as_str(), "grep" | "glob"),
        }),
        "webfetch" => match meta("url") {
            Some(url) => Ok(vec![Action::fetch(url)]),
            None => each(&|url| Action::fetch(url)),
        },
        "doom_loop" => Err(PermissionError::DoomLoop),
        other => Err(PermissionError::Unknown(other.to_string())),
    }
}

/// Permission kinds whose tools touch nothing outside the conversation (todo lists, questions
/// to the user, plan mode, subagents, skills, searches answered by OpenCode's provider): answered
/// "once" with no review. A subagent's own tool calls are asked for one by one.
pub const NO_OP_PERMISSIONS: &[&str] = &[
    "todowrite",
    "todoread",
    "question",
    "task",
    "plan_enter",
    "plan_exit",
    "skill",
    "lsp",
    "websearch",
    "codesearch",
];

/// What the bridge answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `{"reply": "once"}`: this call may run.
    Once,
    /// `{"reply": "reject", "message": …}`: it may not.
    Reject(String),
    /// No reply: OpenCode's own prompt asks the user (`[hooks] unreviewed = "ask"` only).
    Leave(String),
}

/// The review requests a permission request stands for (all must be allowed).
/// `external_directory` (OpenCode's "outside the project" question, `metadata: {filepath,
/// parentDir}`, patterns `<dir>/*`) is guardian's additional-permissions escalation: a read of
/// the directory, asked as an extra permission.
pub fn requests(
    p: &PermissionRequest,
    cwd: Option<&str>,
) -> Result<Vec<ReviewRequest>, PermissionError> {
    let escalation = (p.permission == "external_directory").then(|| Escalation {
        kind: EscalationKind::AdditionalPermissions,
        read: Vec::new(),
        write: Vec::new(),
        network: false,
        justification: None,
    });
    Ok(actions(p, cwd)?
        .into_iter()
        .map(|action| ReviewRequest {
            action,
            session: Some(SessionInfo {
                id: p.session_id.clone(),
                agent: Some("opencode".into()),
                workspace_roots: cwd.map(str::to_string).into_iter().collect(),
                sandbox: None,
                home: None,
                grants: Vec::new(),
            }),
            intent: None,
            transcript: Vec::new(),
            retry: None,
            strict: false,
            escalation: escalation.clone(),
        })
        .collect())
}

/// Decides one permission request. An unreviewed action, a `doom_loop` (the agent repeating the
/// same call) and an unknown kind are left to the user in `Ask` mode and rejected in `Deny` mode;
/// a rule or reviewer deny is always a reject.
pub async fn decide(
    p: &PermissionRequest,
    decider: &dyn Decider,
    cwd: Option<&str>,
    mode: Unreviewed,
) -> Reply {
    decide_in(p, decider, cwd, mode, &Conversation::default()).await
}

/// What the session said before the request: the user's first message (the intent) and the
/// conversation (untrusted evidence for the reviewer).
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    /// The user's first message.
    pub intent: Option<String>,
    /// The messages, oldest first.
    pub transcript: Vec<TranscriptEntry>,
}

impl Conversation {
    /// From OpenCode's `GET /session/:id/message` answer: `[{info: {role}, parts: [{type:
    /// "text", text} | {type: "tool", tool, state: {input}} …]}]`.
    pub fn from_messages(messages: &Value) -> Conversation {
        let mut c = Conversation::default();
        for m in messages.as_array().into_iter().flatten() {
            let role = match m.pointer("/info/role").and_then(Value::as_str) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                _ => continue,
            };
            for part in m
                .get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let (content, name) = match part.get("type").and_then(Value::as_str) {
                    Some("text") => (
                        part.get("text")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        None,
                    ),
                    Some("tool") => {
                        let tool = part.get("tool").and_then(Value::as_str).unwrap_or("a tool");
                        (
                            format!(
                                "calls {tool}: {}",
                                part.pointer("/state/input")
                                    .map(Value::to_string)
                                    .unwrap_or_default()
                            ),
                            Some(tool.to_string()),
                        )
                    }
                    _ => continue,
                };
                if content.trim().is_empty() {
                    continue;
                }
                if role == Role::User && c.intent.is_none() {
                    c.intent = Some(content.clone());
                }
                c.transcript.push(TranscriptEntry {
                    role,
                    content,
                    name,
                });
            }
        }
        c
    }
}

/// [`decide`], with what the session said before the request.
pub async fn decide_in(
    p: &PermissionRequest,
    decider: &dyn Decider,
    cwd: Option<&str>,
    mode: Unreviewed,
    conversation: &Conversation,
) -> Reply {
    if NO_OP_PERMISSIONS.contains(&p.permission.as_str()) {
        return Reply::Once;
    }
    let refused = |e: PermissionError| refuse(p, decider, cwd, mode, e);
    if p.permission == "doom_loop" {
        return refused(PermissionError::DoomLoop).await;
    }
    let reqs = match requests(p, cwd) {
        Ok(r) => r
            .into_iter()
            .map(|mut req| {
                req.intent.clone_from(&conversation.intent);
                req.transcript.clone_from(&conversation.transcript);
                req
            })
            .collect(),
        Err(e) => return refused(e).await,
    };
    match decider.decide_all(reqs, mode).await {
        Ok(resp) if resp.decision == Decision::Allow => Reply::Once,
        Ok(resp) => match HookAnswer::from_response(&resp, mode) {
            HookAnswer::Ask { message } => Reply::Leave(message),
            _ => Reply::Reject(resp.message),
        },
        Err(e) => Reply::Reject(format!(
            "denied by guardian: no decision could be obtained ({e})"
        )),
    }
}

/// A permission request that never became an action to review, answered and recorded where the
/// decisions are audited: a `doom_loop` or an unknown kind is left to the user in `Ask` mode and
/// rejected in `Deny` mode; a request without patterns is rejected. A failed record is logged;
/// the answer stands (it is never an allow).
async fn refuse(
    p: &PermissionRequest,
    decider: &dyn Decider,
    cwd: Option<&str>,
    mode: Unreviewed,
    e: PermissionError,
) -> Reply {
    use crate::request::{RefusalKind, RefusalReport};
    let why = e.to_string();
    let error = match e {
        PermissionError::NoPatterns(_) => RefusalKind::InvalidInput,
        PermissionError::DoomLoop => RefusalKind::RepeatedCall,
        PermissionError::Unknown(_) => RefusalKind::UnknownTool,
    };
    // Nothing could review it: the user's own prompt in `Ask` mode; a malformed request never.
    let deferred_to_user = mode == Unreviewed::Ask && error != RefusalKind::InvalidInput;
    let message = if deferred_to_user {
        why.clone()
    } else {
        format!("denied by guardian: {why}")
    };
    let report = RefusalReport {
        tool: p.permission.clone(),
        input: Some(json!({"patterns": p.patterns, "metadata": p.metadata})),
        session_id: p.session_id.clone(),
        agent: "opencode".into(),
        cwd: cwd.map(str::to_string),
        error,
        reason: why,
        message: message.clone(),
        deferred_to_user,
    };
    if let Err(e) = decider.refuse(report).await {
        tracing::error!(error = %e, permission = %p.permission, "a refused permission request could not be recorded");
    }
    if deferred_to_user {
        Reply::Leave(message)
    } else {
        Reply::Reject(message)
    }
}

/// The bridge between one OpenCode server and a decider.
pub struct Bridge {
    client: reqwest::Client,
    base: String,
    cwd: Option<String>,
    decider: Arc<dyn Decider>,
    answered: Mutex<HashSet<String>>,
    mode: Unreviewed,
    poll: Duration,
    idle: Duration,
}

impl Bridge {
    /// A bridge to the OpenCode server at `base` (e.g. `http://127.0.0.1:4096`); `cwd` is the
    /// project directory actions are judged in.
    pub fn new(
        base: &str,
        cwd: Option<String>,
        decider: Arc<dyn Decider>,
    ) -> Result<Bridge, BridgeError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(BridgeError::Client)?;
        Ok(Bridge {
            client,
            base: base.trim_end_matches('/').to_string(),
            cwd,
            decider,
            answered: Mutex::new(HashSet::new()),
            mode: Unreviewed::Deny,
            poll: Duration::from_secs(2),
            idle: Duration::from_secs(60),
        })
    }

    /// How often pending requests are also listed (`GET /permission`, default 2 s), and how long
    /// the event stream may stay silent before the bridge reconnects (default 60 s). A stream
    /// that connected but delivers nothing (as one opened in `opencode serve`'s first moments
    /// can) then never leaves a request unanswered for longer than one poll.
    pub fn with_timing(mut self, poll: Duration, idle: Duration) -> Bridge {
        self.poll = poll.max(Duration::from_millis(50));
        self.idle = idle.max(Duration::from_millis(100));
        self
    }

    /// What to do with what nothing could review (`[hooks] unreviewed`): reject (the default),
    /// or leave it to the user at OpenCode's own prompt.
    pub fn with_unreviewed(mut self, mode: Unreviewed) -> Bridge {
        self.mode = mode;
        self
    }

    /// Answers one request once (duplicates from the stream and `GET /permission` are skipped).
    pub async fn answer(&self, p: PermissionRequest) {
        {
            let mut seen = self
                .answered
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if !seen.insert(p.id.clone()) {
                return;
            }
        }
        let conversation = self.conversation(p.session_id.as_deref()).await;
        let (reply, body) = match decide_in(
            &p,
            self.decider.as_ref(),
            self.cwd.as_deref(),
            self.mode,
            &conversation,
        )
        .await
        {
            Reply::Once => ("once", json!({"reply": "once"})),
            Reply::Reject(message) => ("reject", json!({"reply": "reject", "message": message})),
            Reply::Leave(why) => {
                tracing::info!(request = %p.id, why = %why, "left to the user at OpenCode's prompt");
                return;
            }
        };
        let url = format!("{}/permission/{}/reply", self.base, p.id);
        let mut delay = Duration::from_millis(200);
        for _ in 0..5 {
            match self
                .client
                .post(&url)
                .timeout(Duration::from_secs(10))
                .json(&body)
                .send()
                .await
            {
                Ok(r) if r.status().is_success() => {
                    tracing::info!(request = %p.id, reply, "answered OpenCode permission request");
                    return;
                }
                Ok(r) => {
                    tracing::warn!(request = %p.id, status = %r.status(), "OpenCode refused the reply")
                }
                Err(e) => tracing::warn!(request = %p.id, error = %e, "cannot reply to OpenCode"),
            }
            tokio::time::sleep(delay).await;
            delay *= 2;
        }
    }

    /// The session's conversation so far (`GET /session/:id/message`), best effort: a session
    /// OpenCode cannot list in 3 s is reviewed without it.
    async fn conversation(&self, session: Option<&str>) -> Conversation {
        let Some(session) = session else {
            return Conversation::default();
        };
        let url = format!("{}/session/{session}/message", self.base);
        let messages = async {
            let resp = self
                .client
                .get(&url)
                .timeout(Duration::from_secs(3))
                .send()
                .await
                .ok()?;
            if !resp.status().is_success() {
                return None;
            }
            resp.json::<Value>().await.ok()
        }
        .await;
        messages
            .map(|m| Conversation::from_messages(&m))
            .unwrap_or_default()
    }

    async fn answer_pending(self: &Arc<Self>) {
        let url = format!("{}/permission", self.base);
        let Ok(resp) = self
            .client
            .get(&url)
            .timeout(Duration::from_secs(10))
            .send()
            .await
        else {
            return;
        };
        let Ok(list) = resp.json::<Vec<PermissionRequest>>().await else {
            return;
        };
        for p in list {
            let me = Arc::clone(self);
            tokio::spawn(async move { me.answer(p).await });
        }
    }

    /// Follows the event stream once, until it ends or fails.
    async fn follow(self: &Arc<Self>) -> Result<(), BridgeError> {
        let url = format!("{}/event", self.base);
        let mut resp = self
            .client
            .get(&url)
            .header("accept", "text/event-stream")
            .send()
            .await
            .map_err(BridgeError::Stream)?;
        if !resp.status().is_success() {
            return Err(BridgeError::Status {
                url,
                status: resp.status(),
            });
        }
        self.answer_pending().await;
        let mut buf = String::new();
        loop {
            let chunk = match tokio::time::timeout(self.idle, resp.chunk()).await {
                Ok(c) => c.map_err(BridgeError::Stream)?,
                Err(_) => return Err(BridgeError::Silent(self.idle.as_secs())),
            };
            let Some(chunk) = chunk else { break };
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find('\n') {
                let line: String = buf.drain(..=end).collect();
                let Some(data) = line.trim_end().strip_prefix("data:") else {
                    continue;
                };
                let Ok(event) = serde_json::from_str::<Value>(data.trim()) else {
                    continue;
                };
                if event.get("type").and_then(Value::as_str) != Some("permission.asked") {
                    continue;
                }
                match serde_json::from_value::<PermissionRequest>(event["properties"].clone()) {
                    Ok(p) => {
                        let me = Arc::clone(self);
                        tokio::spawn(async move { me.answer(p).await });
                    }
                    Err(e) => tracing::warn!(error = %e, "unreadable permission.asked event"),
                }
            }
            if buf.len() > 1024 * 1024 {
                buf.clear();
            }
        }
        Ok(())
    }

    /// Follows the event stream forever, reconnecting with backoff (250 ms doubling to 10 s),
    /// and lists pending requests every poll interval beside it.
    pub async fn run(self: Arc<Self>) {
        let poller = {
            let me = Arc::clone(&self);
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(me.poll).await;
                    me.answer_pending().await;
                }
            })
        };
        // The poller ends with the bridge (when this future is dropped or aborted).
        struct AbortOnDrop(tokio::task::JoinHandle<()>);
        impl Drop for AbortOnDrop {
            fn drop(&mut self) {
                self.0.abort();
            }
        }
        let _poller = AbortOnDrop(poller);
        let mut delay = Duration::from_millis(250);
        loop {
            match self.follow().await {
                Ok(()) => {
                    tracing::warn!("OpenCode event stream ended; reconnecting");
                    delay = Duration::from_millis(250);
                }
                Err(e) => tracing::warn!(error = %e, "OpenCode event stream failed; reconnecting"),
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(10));
        }
    }
}

fn merge_opencode(old: Option<&str>, o: &Options) -> Result<Merged, SettingsError> {
    let mut root = parse_json_object(old)?;
    let perms = object_at(&mut root, "permission", "permission")?;
    let mut changes = Vec::new();
    let mut notes = Vec::new();
    for kind in OPENCODE_ASKS {
        match perms.get_mut(*kind) {
            None => {
                perms.insert((*kind).to_string(), json!("ask"));
                changes.push(format!("permission.{kind}: \"ask\" (added)"));
            }
            Some(Value::String(s)) if s == "ask" || s == "deny" => {}
            Some(v @ Value::String(_)) => {
                changes.push(format!("permission.{kind}: {v} → \"ask\""));
                *v = json!("ask");
            }
            Some(Value::Object(rules)) => {
                // OpenCode applies the LAST matching pattern: a leading "*" keeps the user's own
                // more specific patterns in force.
                match rules.get("*") {
                    Some(Value::String(s)) if s == "ask" || s == "deny" => {}
                    Some(_) => {
                        rules.insert("*".into(), json!("ask"));
                        changes.push(format!("permission.{kind}.\"*\": → \"ask\""));
                    }
                    None => {
                        let mut with = Map::new();
                        with.insert("*".into(), json!("ask"));
                        with.extend(std::mem::take(rules));
                        *rules = with;
                        changes.push(format!("permission.{kind}.\"*\": \"ask\" (added first)"));
                    }
                }
                let allowed: Vec<&String> = rules
                    .iter()
                    .filter(|(k, v)| k.as_str() != "*" && v.as_str() == Some("allow"))
                    .map(|(k, _)| k)
                    .collect();
                if !allowed.is_empty() {
                    notes.push(format!(
                        "OpenCode still allows these {kind} patterns without asking guardian: {}",
                        allowed
                            .iter()
                            .map(|k| format!("{k:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
            Some(_) => {
                return Err(SettingsError::PermissionType((*kind).to_string()));
            }
        }
    }
    notes.push(format!(
        "OpenCode asks guardian through the bridge: `opencode serve --port 4096`, then `{} opencode --server http://127.0.0.1:4096`",
        o.command
    ));
    Ok((pretty_json(&Value::Object(root)), changes, notes))
}

/// A loopback port that was free a moment ago (for OpenCode's server).
fn free_port() -> Result<u16, RunError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|source| RunError::Spawn {
            program: "a loopback port for OpenCode".into(),
            source,
        })
}

/// OpenCode's subcommands that answer their own permission requests, so that no bridge can.
const OPENCODE_SELF_ANSWERING: &[&str] = &["run"];

/// OpenCode: the TUI (`opencode [dir]`) and `opencode serve` / `opencode web` serve OpenCode's
/// API; guardian adds `--port P` (unless the command names one) for the bridge to attach to,
/// and returns P. `opencode run` answers every permission request itself, before any bridge
/// can (without `--auto` it rejects each, with `--auto` it approves each, which would override
/// guardian's denials), so it is refused.
pub fn opencode_args(args: &[String], free_port: u16) -> Result<(Vec<String>, u16), RunError> {
    let words = || args.iter().take_while(|a| *a != "--");
    // Any bare word counts (an option's value cannot be told from a subcommand without
    // OpenCode's option table): a project directory named `run` is refused too, never missed.
    if let Some(sub) = words().find(|a| OPENCODE_SELF_ANSWERING.contains(&a.as_str())) {
        return Err(RunError::Unenforceable(format!(
            "opencode {sub} answers its own permission requests (it rejects each one, or with \
             --auto approves each, overriding guardian), so guardian cannot decide them; run \
             `opencode serve` (and drive it through its API) or the TUI under guardian run instead"
        )));
    }
    if let Some((_, _, port)) = option_value(args, "--port") {
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| RunError::Settings {
                flag: "--port",
                message: format!("{port:?} is not a port guardian can attach to"),
            })?;
        return Ok((args.to_vec(), port));
    }
    let mut out = args.to_vec();
    // Options go after the subcommand (`opencode serve --port P`); the TUI takes them anywhere.
    let at = words()
        .position(|a| a == "serve" || a == "web")
        .map_or(0, |i| i + 1);
    out.insert(at, "--port".into());
    out.insert(at + 1, free_port.to_string());
    Ok((out, free_port))
}

/// OpenCode: the `permission` entries of `guardian install opencode` as a per-run config
/// (`OPENCODE_CONFIG_CONTENT`, deep-merged by OpenCode over its config files, winning per key).
/// Each of the four kinds is set to the string `"ask"`, which replaces a pattern object the
/// user's `opencode.json` has for it: guardian then sees every such call, and the user's own
/// OpenCode patterns for those kinds (allows and denies) do not apply during the run.
pub fn opencode_config_content(existing: Option<&str>) -> Result<String, RunError> {
    let bad = |message: String| RunError::Settings {
        flag: "OPENCODE_CONFIG_CONTENT",
        message,
    };
    let mut config = match existing.filter(|t| !t.trim().is_empty()) {
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(bad("not a JSON object".into())),
            Err(e) => return Err(bad(format!("not JSON: {e}"))),
        },
        None => serde_json::Map::new(),
    };
    let permission = config.entry("permission").or_insert_with(|| json!({}));
    if permission.is_string() {
        // One action for every kind (`"permission": "allow"`): the four asks replace it, and
        // the other kinds get OpenCode's defaults.
        *permission = json!({});
    }
    let permission = permission
        .as_object_mut()
        .ok_or_else(|| bad("`permission` is not an object".into()))?;
    for kind in OPENCODE_ASKS {
        permission.insert((*kind).to_string(), Value::String("ask".into()));
    }
    Ok(Value::Object(config).to_string())
}
