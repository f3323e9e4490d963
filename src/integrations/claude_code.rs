//! Claude Code: its hooks (PreToolUse and PermissionRequest inputs in, their exact outputs
//! back), its settings snippet, its wiring for `guardian run` and its transcripts for eval.
//!
//! This module owns Claude Code's hook wire format, which Codex shares ([`HookInput`]), and its
//! translation into API v1 ([`translate`]): `tool_name`/`tool_input` become a guardian action
//! (Bash → shell, Read → read, Write/Edit/MultiEdit/NotebookEdit → write, WebFetch → fetch,
//! `mcp__server__tool` → mcp; the tools another hook agent added come from its file),
//! `session_id` and `cwd` become the session, and the JSONL transcript at `transcript_path`
//! (when readable) becomes the review transcript. Hook inputs are Claude Code's format, so
//! unknown fields are accepted: Claude Code adds fields over time. Claude Code's own
//! `dangerouslyDisableSandbox` becomes an [`Escalation`]. The rest is Claude Code's alone: the
//! output its hook parser accepts ([`render`]), the PreToolUse hook in `settings.json`
//! ([`claude_code_entry`]), the `--settings` of `guardian run` ([`claude_code_args`]) and the
//! transcript reader of `guardian traces import` ([`read_session`]).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};

use super::contract::{Event, HookAnswer};
use super::install::{
    HOOK_TIMEOUT_S, HookKind, Options, Scope, SettingsError, command_note, hook_command, object_at,
    parse_json_object, pretty_json,
};
use super::run::{Endpoint, RunError, has_flag, option_value};
use super::{
    Agent, AgentIntegration, Hooks, Info, Merged, RecordedCall, RecordedSession, SessionReader,
    Wiring,
};
use crate::request::{
    Action, Escalation, EscalationKind, ReviewRequest, Role, SessionInfo, TranscriptEntry,
};
use crate::verdict::Decision;

/// Claude Code's facts.
pub const INFO: Info = Info {
    name: "claude-code",
    title: "Claude Code",
    program: "claude",
    hooks: true,
};

/// Claude Code's integration.
pub struct Integration;

/// Transcript lines read from the end of a transcript file, at most.
const MAX_TRANSCRIPT_LINES: usize = 200;
/// Bytes of a transcript file read, at most (from the end).
const MAX_TRANSCRIPT_BYTES: u64 = 4 * 1024 * 1024;

/// A hook input (the fields guardian uses).
#[derive(Debug, Clone, Deserialize)]
pub struct HookInput {
    /// `PreToolUse` or `PermissionRequest`.
    pub hook_event_name: String,
    /// Claude Code's session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Path of the session's JSONL transcript.
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// The session's working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The permission mode (`default`, `acceptEdits`, `plan`, `bypassPermissions`, …).
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// `UserPromptSubmit`: the prompt the user just sent.
    #[serde(default)]
    pub prompt: Option<String>,
    /// The tool about to run.
    #[serde(default)]
    pub tool_name: Option<String>,
    /// Its input.
    #[serde(default)]
    pub tool_input: Option<Value>,
    /// The subagent type, inside subagents.
    #[serde(default)]
    pub agent_type: Option<String>,
    /// Codex: the host a network-access approval asks for (`{host, protocol}`), when Codex sends
    /// it beside `tool_input` rather than inside it.
    #[serde(default)]
    pub network_approval_context: Option<Value>,
    /// Codex PermissionRequest: what the escalation asks for (`sandbox_permissions`,
    /// `justification`, `additional_permissions`), when Codex sends it.
    #[serde(default)]
    pub approval_context: Option<Value>,
    /// The diff of a whole-file write against the file beside the agent, added by the command
    /// hook (`guardian hook`, `guardian-hook`: [`super::hook_client::with_disk_diff`]) where the
    /// server cannot read the file.
    #[serde(default)]
    pub guardian_diff: Option<HookDiff>,
    /// Which agent sent it (set by the endpoint: `claude-code` or `codex`).
    #[serde(skip)]
    pub agent: Option<String>,
}

/// A whole-file write's diff, as the command hook computed it.
#[derive(Debug, Clone, Deserialize)]
pub struct HookDiff {
    /// The write's `file_path`, as the agent gave it.
    pub path: String,
    /// The unified diff (empty: the content is the file's).
    pub diff: String,
}

impl HookDiff {
    /// Whether it can be the diff of `content`: every line it adds is a line of the content
    /// (a diff that adds what the write does not is not taken).
    fn fits(&self, content: &str) -> bool {
        let lines: std::collections::HashSet<&str> = content.lines().collect();
        self.diff
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .all(|l| lines.contains(&l[1..]))
    }
}

/// The hook's diff on the whole-file write it was computed for (known secrets redacted, as the
/// server's own disk diff).
fn take_hook_diff(actions: &mut [Action], hook: Option<&HookDiff>) {
    let Some(hook) = hook else { return };
    for a in actions {
        if let Action::Write {
            path,
            content: Some(content),
            diff: diff @ None,
            ..
        } = a
            && *path == hook.path
            && hook.fits(content)
        {
            *diff = Some(
                crate::redact::Redactor::builtin()
                    .redact(&hook.diff)
                    .into_owned(),
            );
        }
    }
}

/// Why a hook input could not be translated: the field, and what is wrong with it. The text is
/// the deny's reason the agent reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    /// An event other than PreToolUse and PermissionRequest.
    #[error("hook event {0:?} is not handled (use PreToolUse or PermissionRequest)")]
    Event(String),
    /// No `tool_name`.
    #[error("tool_name is missing")]
    NoToolName,
    /// A field of `tool_input` the tool needs.
    #[error("tool_input.{field} is missing for {tool}")]
    Missing {
        /// The field.
        field: &'static str,
        /// The tool.
        tool: String,
    },
    /// Codex's `apply_patch` without its patch.
    #[error("tool_input.command (the patch) is missing for apply_patch")]
    NoPatch,
    /// A patch that names no file.
    #[error("the patch names no file (*** Add/Update/Delete File:)")]
    EmptyPatch,
    /// `mcp__…` that is not `mcp__server__tool`.
    #[error("{0} is not mcp__server__tool")]
    NotMcp(String),
    /// A tool guardian does not translate.
    #[error("tool {0:?} is not known to guardian")]
    UnknownTool(String),
    /// An escalation's path list holding something else than non-empty paths.
    #[error("{field} must list non-empty paths")]
    EmptyPath {
        /// The field.
        field: String,
    },
    /// An escalation's path list that is not a list.
    #[error("{field} must be an array of paths")]
    PathsNotAList {
        /// The field.
        field: String,
    },
    /// An escalation naming more paths than a request may.
    #[error("approval_context.additional_permissions names more than {0} paths")]
    TooManyPaths(usize),
    /// An escalation kind guardian does not know.
    #[error("approval_context.sandbox_permissions {0:?} is not known to guardian")]
    UnknownSandboxPermissions(String),
    /// A network approval without its host.
    #[error("tool_input.network_approval_context.host is missing")]
    NoHost,
    /// A network approval whose host is not a host.
    #[error("tool_input.network_approval_context.host {0:?} is not a valid host")]
    InvalidHost(String),
    /// The translation itself failed (its thread panicked).
    #[error("the hook input could not be translated")]
    Failed,
}

/// What to do with a hook input.
#[derive(Debug, Clone)]
pub enum Translation {
    /// Review these requests (one per file for a multi-file patch); all must be allowed.
    Review(Vec<ReviewRequest>),
    /// A tool that touches nothing outside the conversation (TodoWrite, Agent, …): no
    /// decision, the agent's own rules apply.
    Pass(String),
    /// A tool guardian does not know: no decision at a terminal, a deny in headless mode.
    Unknown(String),
}

/// Claude Code's tools that touch nothing outside the conversation (its tools reference): they
/// pass with no decision, so subagents, questions to the user, plan mode and worktrees keep
/// working. `ReadMcpResourceTool` is not one: it reads from an MCP server and is judged as an
/// MCP call.
pub const NO_OP_TOOLS: &[&str] = &[
    "Agent",
    "Task",
    "AskUserQuestion",
    "TodoWrite",
    "TodoRead",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "TaskOutput",
    "TaskStop",
    "BashOutput",
    "KillShell",
    "EnterPlanMode",
    "ExitPlanMode",
    "EnterWorktree",
    "ExitWorktree",
    "LSP",
    "ToolSearch",
    "ListMcpResourcesTool",
    "CronCreate",
    "CronDelete",
    "CronList",
    "WebSearch",
    "SlashCommand",
    "Skill",
];

/// The tools guardian judges in Claude Code, as a hook `matcher`. Claude Code reads a matcher
/// with characters beyond `[A-Za-z0-9_|]` as an unanchored regex, so it is anchored here.
pub const CLAUDE_CODE_MATCHER: &str = "^(Bash|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS|WebFetch|ReadMcpResourceTool|mcp__.*)$";

/// A string field of a JSON object.
pub(super) fn s(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A field of `tool_input` that `tool` needs.
pub(super) fn need(ti: &Value, field: &'static str, tool: &str) -> Result<String, HookError> {
    s(ti, field).ok_or_else(|| HookError::Missing {
        field,
        tool: tool.to_string(),
    })
}

/// The hook agent whose endpoint an input came to (`agent`, set by the endpoint); the first
/// hook agent (Claude Code) when none is named.
fn answering(input: &HookInput) -> &'static dyn Hooks {
    let agent = input
        .agent
        .as_deref()
        .and_then(Agent::from_name)
        .filter(|a| a.info().hooks)
        .unwrap_or_else(Agent::hook_default);
    agent.integration().hooks().unwrap_or(&Integration)
}

/// Every hook agent's hooks, in the list's order.
fn every_hook_agent() -> impl Iterator<Item = &'static dyn Hooks> {
    Agent::with_hooks().filter_map(|a| a.integration().hooks())
}

/// Translates a hook input into review requests. A tool any hook agent added to the format is
/// understood; the escalation rules are those of the agent whose endpoint was called.
pub fn translate(input: &HookInput) -> Result<Translation, HookError> {
    if !matches!(
        input.hook_event_name.as_str(),
        "PreToolUse" | "PermissionRequest"
    ) {
        return Err(HookError::Event(input.hook_event_name.clone()));
    }
    let tool = input.tool_name.as_deref().ok_or(HookError::NoToolName)?;
    let ti = input.tool_input.clone().unwrap_or(Value::Null);
    let cwd = input.cwd.clone();
    if every_hook_agent().any(|h| h.no_op_tools().contains(&tool)) {
        return Ok(Translation::Pass(format!(
            "{tool} touches nothing outside the conversation"
        )));
    }
    let Some(actions) = every_hook_agent().find_map(|h| h.tool_actions(tool, &ti, cwd.as_deref()))
    else {
        return Ok(Translation::Unknown(tool.to_string()));
    };
    let escalation = answering(input).escalation(input, &ti)?;
    let mut actions = actions?;
    take_hook_diff(&mut actions, input.guardian_diff.as_ref());
    for h in every_hook_agent() {
        actions.extend(h.extra_actions(input, &ti)?);
    }
    let transcript_entries = input
        .transcript_path
        .as_deref()
        .map(read_transcript_settled)
        .unwrap_or_default();
    let intent = transcript_entries
        .iter()
        .find(|e| e.role == Role::User)
        .map(|e| e.content.clone());
    let agent = input
        .agent
        .clone()
        .unwrap_or_else(|| Agent::hook_default().name().to_string());
    let session = SessionInfo {
        id: input.session_id.clone(),
        agent: Some(match &input.agent_type {
            Some(a) => format!("{agent}/{a}"),
            None => agent,
        }),
        workspace_roots: cwd.clone().into_iter().collect(),
        sandbox: None,
        home: None,
        grants: Vec::new(),
    };
    Ok(Translation::Review(
        actions
            .into_iter()
            .map(|action| ReviewRequest {
                action,
                session: Some(session.clone()),
                intent: intent.clone(),
                transcript: transcript_entries.clone(),
                retry: None,
                strict: false,
                escalation: None,
            })
            .enumerate()
            .map(|(i, mut req)| {
                // The escalation belongs to the command itself (the first request); the host of
                // a network approval and the files of a patch are judged as they are.
                if i == 0 {
                    req.escalation = escalation.clone();
                }
                req
            })
            .collect(),
    ))
}

/// An escalation to run outside the sandbox, with the agent's justification.
pub(super) fn unsandboxed(justification: Option<String>) -> Option<Escalation> {
    Some(Escalation {
        kind: EscalationKind::Unsandboxed,
        read: Vec::new(),
        write: Vec::new(),
        network: false,
        justification,
    })
}

/// Claude Code's escalation: Bash `dangerouslyDisableSandbox: true` asks to run outside the
/// sandbox.
pub(super) fn sandbox_escalation(ti: &Value) -> Option<Escalation> {
    if ti.get("dangerouslyDisableSandbox").and_then(Value::as_bool) == Some(true) {
        return unsandboxed(None);
    }
    None
}

/// The action of one of Claude Code's tools (`None`: not one of them).
fn claude_code_action(
    tool: &str,
    ti: &Value,
    cwd: Option<&str>,
) -> Option<Result<Action, HookError>> {
    let cwd = cwd.map(str::to_string);
    let need = |field: &'static str| need(ti, field, tool);
    let action = match tool {
        "Bash" => need("command").map(|command| Action::Shell {
            command,
            cwd: cwd.clone(),
        }),
        "Read" => need("file_path").map(|path| Action::Read {
            path,
            cwd: cwd.clone(),
            recursive: false,
        }),
        "Write" => need("file_path").map(|path| Action::Write {
            path,
            cwd: cwd.clone(),
            content: s(ti, "content"),
            diff: None,
        }),
        "Edit" => need("file_path").map(|path| Action::Write {
            path,
            cwd: cwd.clone(),
            content: None,
            diff: Some(edit_diff(std::slice::from_ref(ti))),
        }),
        "MultiEdit" => need("file_path").map(|path| Action::Write {
            path,
            cwd: cwd.clone(),
            content: None,
            diff: Some(edit_diff(
                ti.get("edits")
                    .and_then(Value::as_array)
                    .map_or(&[][..], |v| v.as_slice()),
            )),
        }),
        "NotebookEdit" => need("notebook_path").map(|path| Action::Write {
            path,
            cwd: cwd.clone(),
            content: s(ti, "new_source"),
            diff: None,
        }),
        "WebFetch" => need("url").map(Action::fetch),
        // Grep and Glob search a directory tree; LS lists one directory.
        "Glob" | "Grep" | "LS" => Ok(Action::Read {
            path: s(ti, "path")
                .or_else(|| cwd.clone())
                .unwrap_or_else(|| ".".into()),
            cwd: cwd.clone(),
            recursive: tool != "LS",
        }),
        // Reading an MCP resource sends a request to that server: judged as an MCP call.
        "ReadMcpResourceTool" => need("server").map(|server| Action::Mcp {
            server,
            tool: "resources/read".into(),
            arguments: ti.clone(),
        }),
        t if t.starts_with("mcp__") => {
            let rest = &t["mcp__".len()..];
            rest.split_once("__")
                .map(|(server, tool_name)| Action::Mcp {
                    server: server.to_string(),
                    tool: tool_name.to_string(),
                    arguments: ti.clone(),
                })
                .ok_or_else(|| HookError::NotMcp(t.to_string()))
        }
        _ => return None,
    };
    Some(action)
}

/// `old_string`/`new_string` pairs as a readable diff.
fn edit_diff(edits: &[Value]) -> String {
    let mut out = String::new();
    for e in edits {
        for line in s(e, "old_string").unwrap_or_default().lines() {
            out.push_str(&format!("-{line}\n"));
        }
        for line in s(e, "new_string").unwrap_or_default().lines() {
            out.push_str(&format!("+{line}\n"));
        }
    }
    out
}

/// [`read_transcript`], read again a few times (50 ms apart, 150 ms at most) while it holds no
/// user message yet: the agents write their transcript asynchronously, and a tool call made right
/// after the user's prompt can reach guardian before the prompt is on disk (seen with Claude Code
/// 2.1.332 in the end-to-end suite). Without the user's words the reviewer cannot tell what was
/// asked for. Runs on the blocking pool.
fn read_transcript_settled(path: &str) -> Vec<TranscriptEntry> {
    let mut entries = read_transcript(path);
    for _ in 0..3 {
        if entries.iter().any(|e| e.role == Role::User) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        entries = read_transcript(path);
    }
    entries
}

/// Reads an agent's JSONL transcript (the last lines of it) into transcript entries, each line
/// read by the hook agent whose format it is (a Claude Code transcript, a Codex rollout). An
/// unreadable or malformed file yields what could be read: the transcript is evidence, not input
/// guardian depends on.
///
/// The path comes from the hook input, so only a regular file whose name ends in `.jsonl` is
/// read (never a device, FIFO or directory, never `/etc/shadow`), and at most its last
/// `MAX_TRANSCRIPT_BYTES`.
pub fn read_transcript(path: &str) -> Vec<TranscriptEntry> {
    use std::io::Read;
    if !path.ends_with(".jsonl") {
        return Vec::new();
    }
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let Ok(meta) = file.metadata() else {
        return Vec::new();
    };
    if !meta.is_file() {
        return Vec::new();
    }
    if meta.len() > MAX_TRANSCRIPT_BYTES {
        use std::io::{Seek, SeekFrom};
        let _ = file.seek(SeekFrom::Start(meta.len() - MAX_TRANSCRIPT_BYTES));
    }
    let lines: Vec<String> = BufReader::new(file.take(MAX_TRANSCRIPT_BYTES))
        .lines()
        .map_while(Result::ok)
        .collect();
    let start = lines.len().saturating_sub(MAX_TRANSCRIPT_LINES);
    let mut out = Vec::new();
    for line in &lines[start..] {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(entries) = every_hook_agent().find_map(|h| h.transcript_line(&v)) {
            out.extend(entries);
        }
    }
    out
}

/// A line of a Claude Code transcript (`{type: user|assistant, message: {content}}`) as
/// transcript entries: text, tool calls and their results.
fn transcript_line(v: &Value) -> Option<Vec<TranscriptEntry>> {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    let msg = v.get("message")?;
    let role = match kind {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => return None,
    };
    let mut out = Vec::new();
    match msg.get("content") {
        Some(Value::String(text)) => out.push(TranscriptEntry {
            role,
            content: text.clone(),
            name: None,
        }),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                out.extend(block_entry(role, b));
            }
        }
        _ => {}
    }
    Some(out)
}

/// One content block of a transcript message as a transcript entry.
fn block_entry(role: Role, b: &Value) -> Option<TranscriptEntry> {
    match b.get("type").and_then(Value::as_str) {
        Some("text") => b
            .get("text")
            .and_then(Value::as_str)
            .map(|t| TranscriptEntry {
                role,
                content: t.to_string(),
                name: None,
            }),
        Some("tool_use") => {
            let tool = b.get("name").and_then(Value::as_str).unwrap_or("a tool");
            Some(TranscriptEntry {
                role: Role::Assistant,
                content: format!(
                    "calls {tool}: {}",
                    b.get("input").map(Value::to_string).unwrap_or_default()
                ),
                // A named assistant entry is a tool call (kept by blind evidence).
                name: Some(tool.to_string()),
            })
        }
        Some("tool_result") => {
            let content = match b.get("content") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Array(parts)) => parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            Some(TranscriptEntry {
                role: Role::Tool,
                content,
                name: Some("tool_result".into()),
            })
        }
        _ => None,
    }
}

impl Hooks for Integration {
    fn no_op_tools(&self) -> &'static [&'static str] {
        NO_OP_TOOLS
    }

    fn tool_actions(
        &self,
        tool: &str,
        input: &Value,
        cwd: Option<&str>,
    ) -> Option<Result<Vec<Action>, HookError>> {
        claude_code_action(tool, input, cwd).map(|a| a.map(|a| vec![a]))
    }

    fn escalation(
        &self,
        _input: &HookInput,
        tool_input: &Value,
    ) -> Result<Option<Escalation>, HookError> {
        Ok(sandbox_escalation(tool_input))
    }

    fn transcript_line(&self, line: &Value) -> Option<Vec<TranscriptEntry>> {
        transcript_line(line)
    }

    fn render(&self, event: Event, answer: &HookAnswer) -> Value {
        render(event, answer)
    }
}

impl AgentIntegration for Integration {
    fn hooks(&self) -> Option<&dyn Hooks> {
        Some(self)
    }

    fn settings_path(&self, o: &Options) -> PathBuf {
        match o.scope {
            Scope::User => o.home.join(".claude/settings.json"),
            Scope::Project => o.project_dir.join(".claude/settings.json"),
        }
    }

    fn merge_settings(&self, old: Option<&str>, o: &Options) -> Result<Merged, SettingsError> {
        merge_claude_code(old, o)
    }

    fn wire(&self, args: &[String], ep: &Endpoint) -> Result<Wiring, RunError> {
        Ok(Wiring {
            args: claude_code_args(args, ep)?,
            ..Wiring::default()
        })
    }

    fn session_reader(&self) -> Option<SessionReader> {
        Some(read_session)
    }
}

/// Claude Code's hook output for an answer: the shape the hook agents share, kept in
/// [`super::contract::claude_shape`] so that the contract needs nothing from this module.
pub use super::contract::claude_shape as render;

/// Claude Code's PreToolUse hook group: the tools guardian judges, one hook that blocks when it
/// fails (`onFailure: "block"`).
pub fn claude_code_entry(o: &Options) -> Value {
    json!({"matcher": CLAUDE_CODE_MATCHER, "hooks": [claude_code_hook(o)]})
}

/// Claude Code's UserPromptSubmit hook group: the same hook, called with each prompt the user
/// sends, so that guardian compiles the prompt's mandate before the first tool call. It decides
/// nothing, so it does not block when it fails (no `onFailure`; the command hook exits 0 for
/// this event): the first review compiles the mandate instead, and every tool call is still
/// judged fail-closed.
pub fn claude_code_prompt_entry(o: &Options) -> Value {
    let mut hook = claude_code_hook(o);
    if let Some(h) = hook.as_object_mut() {
        h.remove("onFailure");
    }
    json!({"hooks": [hook]})
}

/// guardian's hook, as Claude Code's settings name it.
fn claude_code_hook(o: &Options) -> Value {
    match o.hook {
        HookKind::Command => json!({
            "type": "command",
            "command": hook_command(o, "claude-code"),
            "timeout": HOOK_TIMEOUT_S,
            "onFailure": "block"
        }),
        HookKind::Http => {
            let mut url = format!(
                "{}{}",
                o.server.trim_end_matches('/'),
                Agent::ClaudeCode.hook_path()
            );
            if let Some(mode) = o.unreviewed {
                url.push_str(&format!("?unreviewed={}", mode.as_str()));
            }
            json!({"type": "http", "url": url, "timeout": HOOK_TIMEOUT_S, "onFailure": "block"})
        }
    }
}

/// Puts guardian's `entry` into one event's hook groups: replaces guardian's group (`ours`)
/// when it differs, adds it when there is none. Returns what changed.
fn place(
    hooks: &mut serde_json::Map<String, Value>,
    event: &str,
    entry: Value,
    ours: impl Fn(&Value) -> bool,
    added: &str,
) -> Result<Option<String>, SettingsError> {
    let groups = hooks
        .entry(event.to_string())
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| SettingsError::NotAnArray(format!("hooks.{event}")))?;
    Ok(match groups.iter().position(ours) {
        Some(i) if groups[i] == entry => None,
        Some(i) => {
            groups[i] = entry;
            Some(format!(
                "replaced guardian's {event} hook (hooks.{event}[{i}])"
            ))
        }
        None => {
            groups.push(entry);
            Some(added.to_string())
        }
    })
}

fn merge_claude_code(old: Option<&str>, o: &Options) -> Result<Merged, SettingsError> {
    let mut root = parse_json_object(old)?;
    let hooks = object_at(&mut root, "hooks", "hooks")?;
    let ours = |g: &Value| {
        g["hooks"].as_array().is_some_and(|hs| {
            hs.iter().any(|h| {
                h["command"].as_str().is_some_and(|c| {
                    c.contains(" hook claude-code") || c.contains("guardian-hook claude-code")
                }) || h["url"]
                    .as_str()
                    .is_some_and(|u| u.contains("/v1/hooks/claude-code"))
            })
        })
    };
    let changes: Vec<String> = [
        place(
            hooks,
            "PreToolUse",
            claude_code_entry(o),
            ours,
            &format!(
                "added a PreToolUse hook for the tools guardian judges (matcher {CLAUDE_CODE_MATCHER})"
            ),
        )?,
        place(
            hooks,
            "UserPromptSubmit",
            claude_code_prompt_entry(o),
            ours,
            "added a UserPromptSubmit hook: each prompt's mandate is compiled before the first tool call",
        )?,
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut notes = vec![format!(
        "`onFailure: \"block\"` needs Claude Code 2.1.295 or later; older versions let the call proceed when the hook fails"
    )];
    if o.hook == HookKind::Command {
        notes.push(command_note(o.hook_program()));
    }
    notes.push(format!(
        "start the server first: guardian serve (answers on {})",
        o.server
    ));
    Ok((pretty_json(&Value::Object(root)), changes, notes))
}

/// Claude Code: guardian's PreToolUse hook in a `--settings` JSON placed before the user's
/// arguments. A `--settings` the command already has (a file or a JSON string) is merged: its
/// keys are kept, guardian's hook group is added to its `hooks.PreToolUse`. Flag settings rank
/// above user and project settings, so `disableAllHooks: false` there keeps a user's
/// `disableAllHooks: true` from silencing guardian. `--bare` skips settings hooks altogether
/// and is refused.
pub fn claude_code_args(args: &[String], ep: &Endpoint) -> Result<Vec<String>, RunError> {
    if has_flag(args, "--bare") {
        return Err(RunError::Unenforceable(
            "claude --bare skips the hooks of every settings source, so guardian could not see a \
             single tool call; run it without --bare"
                .into(),
        ));
    }
    let mut rest = args.to_vec();
    let mut settings = match option_value(args, "--settings") {
        Some((from, to, value)) => {
            rest.drain(from..=to);
            let text = if value.trim_start().starts_with('{') {
                value
            } else {
                crate::config::read_text_file(std::path::Path::new(&value)).map_err(|e| {
                    RunError::Settings {
                        flag: "--settings",
                        message: format!("cannot read {value}: {e}"),
                    }
                })?
            };
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(m)) => m,
                Ok(_) => {
                    return Err(RunError::Settings {
                        flag: "--settings",
                        message: "not a JSON object".into(),
                    });
                }
                Err(e) => {
                    return Err(RunError::Settings {
                        flag: "--settings",
                        message: format!("not JSON: {e}"),
                    });
                }
            }
        }
        None => serde_json::Map::new(),
    };
    settings.insert("disableAllHooks".into(), Value::Bool(false));
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or(RunError::Settings {
            flag: "--settings",
            message: "`hooks` is not an object".into(),
        })?;
    let pre = hooks
        .entry("PreToolUse")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or(RunError::Settings {
            flag: "--settings",
            message: "`hooks.PreToolUse` is not an array".into(),
        })?;
    pre.push(claude_code_entry(&ep.hook_options(Agent::ClaudeCode)));
    // Each prompt's mandate compiled before the first tool call.
    hooks
        .entry("UserPromptSubmit")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or(RunError::Settings {
            flag: "--settings",
            message: "`hooks.UserPromptSubmit` is not an array".into(),
        })?
        .push(claude_code_prompt_entry(
            &ep.hook_options(Agent::ClaudeCode),
        ));
    let mut out = vec![
        "--settings".to_string(),
        Value::Object(settings).to_string(),
    ];
    out.extend(rest);
    Ok(out)
}

/// Claude Code's fixed text for a rejected (or interrupted) tool call.
pub const REJECTION: &str = "The user doesn't want to proceed with this tool use";

/// A transcript entry of a recorded session, whole.
pub(super) fn entry(role: Role, content: &str, name: Option<&str>) -> TranscriptEntry {
    TranscriptEntry {
        role,
        content: content.to_string(),
        name: name.map(str::to_string),
    }
}

/// The text of a recorded tool result's or message's `content`: a string, a list of text
/// blocks, or any other value as JSON.
pub(super) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) if !other.is_null() => other.to_string(),
        _ => String::new(),
    }
}

/// A string field of a recorded line.
pub(super) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Reads a Claude Code transcript (`~/.claude/projects/<project>/<session>.jsonl`, one JSON
/// object a line) for eval. Lines that are not JSON, or not messages, are skipped: transcripts
/// carry summaries, snapshots and other bookkeeping. A `tool_result` starting with
/// [`REJECTION`] is the user rejecting the call (or interrupting it while it ran): a deny;
/// every other call is unlabeled (that it ran says only that some rule let it).
pub fn read_session(text: &str) -> RecordedSession {
    let mut s = RecordedSession::default();
    // Call id → the tool output text.
    let mut outputs: HashMap<String, String> = HashMap::new();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if s.id.is_none() {
            s.id = str_of(&v, "sessionId").map(str::to_string);
        }
        let role = match str_of(&v, "type") {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            _ => continue,
        };
        let cwd = str_of(&v, "cwd");
        let Some(msg) = v.get("message") else {
            continue;
        };
        match msg.get("content") {
            Some(Value::String(t)) => s.entries.push(entry(role, t, None)),
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    recorded_block(&mut s, &mut outputs, role, b, cwd);
                }
            }
            _ => {}
        }
    }
    for call in &mut s.calls {
        let (label, notes) = match outputs.get(&call.id).map(|o| o.trim_start()) {
            Some(o) if o.starts_with(REJECTION) => (
                Some(Decision::Deny),
                "the user rejected this tool call in Claude Code",
            ),
            Some(_) => (
                None,
                "ran in Claude Code (allowed by a rule or the user: not a recorded human decision)",
            ),
            None => (None, "no result recorded for this call"),
        };
        call.label = label;
        call.notes = notes.to_string();
    }
    s
}

/// One content block of a recorded message: text, a tool call, or a tool's result.
fn recorded_block(
    s: &mut RecordedSession,
    outputs: &mut HashMap<String, String>,
    role: Role,
    b: &Value,
    cwd: Option<&str>,
) {
    match str_of(b, "type") {
        Some("text") => {
            if let Some(t) = str_of(b, "text") {
                s.entries.push(entry(role, t, None));
            }
        }
        Some("tool_use") => {
            let (Some(id), Some(name)) = (str_of(b, "id"), str_of(b, "name")) else {
                return;
            };
            let input = b.get("input").cloned().unwrap_or(Value::Null);
            s.calls.push(RecordedCall {
                id: id.to_string(),
                tool: name.to_string(),
                input: input.clone(),
                cwd: cwd.map(str::to_string),
                before: s.entries.len(),
                label: None,
                notes: String::new(),
            });
            s.entries.push(entry(
                Role::Assistant,
                &format!("[tool call {name}] {input}"),
                Some(name),
            ));
        }
        Some("tool_result") => {
            let out = content_text(b.get("content"));
            if let Some(id) = str_of(b, "tool_use_id") {
                outputs.insert(id.to_string(), out.clone());
            }
            s.entries.push(entry(Role::Tool, &out, None));
        }
        _ => {}
    }
}
