//! Claude Code hooks: PreToolUse and PermissionRequest inputs in, their exact outputs back.
//!
//! This module owns the translation between Claude Code's hook wire format and API v1:
//! `tool_name`/`tool_input` become a guardian action (Bash → shell, Read → read,
//! Write/Edit/MultiEdit/NotebookEdit → write, WebFetch → fetch, `mcp__server__tool` → mcp),
//! `session_id` and `cwd` become the session, and the JSONL transcript at `transcript_path`
//! (when readable) becomes the review transcript. Hook inputs are Claude Code's format, so unknown
//! fields are accepted: Claude Code adds fields over time. Codex sends the same input format; its
//! PermissionRequest's `approval_context` and Claude Code's `dangerouslyDisableSandbox` become an
//! [`Escalation`]. What goes back to each agent is [`super::contract`]'s business.

use std::io::{BufRead, BufReader};

use serde::Deserialize;
use serde_json::Value;

use crate::request::{
    Action, Escalation, EscalationKind, ReviewRequest, Role, SessionInfo, TranscriptEntry,
};

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
    /// Which agent sent it (set by the endpoint: `claude-code` or `codex`).
    #[serde(skip)]
    pub agent: Option<String>,
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

/// Tools that touch nothing outside the conversation (Claude Code's tools reference, Codex's
/// `update_plan`): they pass with no decision, so subagents, questions to the user, plan mode
/// and worktrees keep working. `ReadMcpResourceTool` is not one: it reads from an MCP server and
/// is judged as an MCP call.
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
    "update_plan",
];

/// The tools guardian judges in Claude Code, as a hook `matcher`. Claude Code reads a matcher
/// with characters beyond `[A-Za-z0-9_|]` as an unanchored regex, so it is anchored here.
pub const CLAUDE_CODE_MATCHER: &str = "^(Bash|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS|WebFetch|ReadMcpResourceTool|mcp__.*)$";
/// The tools guardian judges in Codex, as a hook `matcher` (`apply_patch` also matches Codex's
/// `Write`/`Edit` aliases).
pub const CODEX_MATCHER: &str = "Bash|apply_patch|mcp__.*";

fn s(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Whether guardian translates this tool into actions.
fn is_known(tool: &str) -> bool {
    matches!(
        tool,
        "Bash"
            | "shell"
            | "exec_command"
            | "local_shell"
            | "apply_patch"
            | "Read"
            | "Write"
            | "Edit"
            | "MultiEdit"
            | "NotebookEdit"
            | "WebFetch"
            | "Glob"
            | "Grep"
            | "LS"
            | "ReadMcpResourceTool"
    ) || tool.starts_with("mcp__")
}

/// Translates a hook input into review requests.
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
    if NO_OP_TOOLS.contains(&tool) {
        return Ok(Translation::Pass(format!(
            "{tool} touches nothing outside the conversation"
        )));
    }
    if !is_known(tool) {
        return Ok(Translation::Unknown(tool.to_string()));
    }
    let escalation = escalation(input, &ti)?;
    let mut actions: Vec<Action> = match tool {
        "apply_patch" => {
            let patch = s(&ti, "command")
                .or_else(|| s(&ti, "patch"))
                .or_else(|| s(&ti, "input"))
                .ok_or(HookError::NoPatch)?;
            patch_actions(&patch, cwd.as_deref())?
        }
        _ => vec![single_action(tool, &ti, &cwd)?],
    };
    let network = input
        .network_approval_context
        .as_ref()
        .or_else(|| ti.get("network_approval_context"))
        .or_else(|| ti.get("networkApprovalContext"))
        .filter(|v| !v.is_null());
    if let Some(ctx) = network {
        // Codex asks for network access on behalf of a command: the command runs either way, so
        // both the command and the host it wants to reach must be allowed.
        actions.push(network_action(ctx)?);
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
    let agent = input.agent.clone().unwrap_or_else(|| "claude-code".into());
    let session = SessionInfo {
        id: input.session_id.clone(),
        agent: Some(match &input.agent_type {
            Some(a) => format!("{agent}/{a}"),
            None => agent,
        }),
        workspace_roots: cwd.clone().into_iter().collect(),
        sandbox: None,
        home: None,
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

/// The escalation a hook input asks for, if any.
///
/// - Codex PermissionRequest: Codex fires it where it would show its own approval prompt, which
///   asks for more than the sandbox gives. When the input carries `approval_context`
///   (`sandbox_permissions`: `use_default` | `require_escalated` | `with_additional_permissions`,
///   with `additional_permissions.file_system.read|write` absolute paths and
///   `network.enabled`; `justification`), it is read exactly; without it the request is taken
///   as the widest one, `require_escalated` (fail closed), with `tool_input.description` (Codex's
///   justification text) as the justification.
/// - Claude Code Bash `dangerouslyDisableSandbox: true` asks to run outside the sandbox.
fn escalation(input: &HookInput, ti: &Value) -> Result<Option<Escalation>, HookError> {
    let unsandboxed = |justification: Option<String>| {
        Some(Escalation {
            kind: EscalationKind::Unsandboxed,
            read: Vec::new(),
            write: Vec::new(),
            network: false,
            justification,
        })
    };
    if input.agent.as_deref() == Some("codex") && input.hook_event_name == "PermissionRequest" {
        let ctx = input
            .approval_context
            .as_ref()
            .or_else(|| ti.get("approval_context"))
            .filter(|v| !v.is_null());
        let Some(ctx) = ctx else {
            return Ok(unsandboxed(s(ti, "description")));
        };
        let justification = s(ctx, "justification").or_else(|| s(ti, "description"));
        return match s(ctx, "sandbox_permissions").as_deref() {
            Some("use_default") => Ok(None),
            None | Some("require_escalated") => Ok(unsandboxed(justification)),
            Some("with_additional_permissions") => {
                let extra = ctx.get("additional_permissions").unwrap_or(&Value::Null);
                let paths = |key: &str| -> Result<Vec<String>, HookError> {
                    let field =
                        format!("approval_context.additional_permissions.file_system.{key}");
                    match extra.get("file_system").and_then(|f| f.get(key)) {
                        None | Some(Value::Null) => Ok(Vec::new()),
                        Some(Value::Array(items)) => items
                            .iter()
                            .map(|p| {
                                p.as_str()
                                    .filter(|p| !p.trim().is_empty())
                                    .map(str::to_string)
                                    .ok_or_else(|| HookError::EmptyPath {
                                        field: field.clone(),
                                    })
                            })
                            .collect(),
                        Some(_) => Err(HookError::PathsNotAList { field }),
                    }
                };
                let esc = Escalation {
                    kind: EscalationKind::AdditionalPermissions,
                    read: paths("read")?,
                    write: paths("write")?,
                    network: extra
                        .get("network")
                        .and_then(|n| n.get("enabled"))
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    justification,
                };
                if esc.read.len() + esc.write.len() > crate::request::MAX_ESCALATION_PATHS {
                    return Err(HookError::TooManyPaths(
                        crate::request::MAX_ESCALATION_PATHS,
                    ));
                }
                Ok(Some(esc))
            }
            Some(other) => Err(HookError::UnknownSandboxPermissions(other.to_string())),
        };
    }
    if ti.get("dangerouslyDisableSandbox").and_then(Value::as_bool) == Some(true) {
        return Ok(unsandboxed(None));
    }
    Ok(None)
}

/// The host a Codex network-access approval asks for, as a fetch action.
///
/// Codex's managed network proxy asks for approval when a command reaches a host the network
/// policy does not cover; the request carries `network_approval_context: {host, protocol}` with
/// protocol `http`, `https` (alias `https_connect`, `http-connect`), `socks5_tcp` or `socks5_udp`.
/// It reaches hooks inside `tool_input` (and the app server's `networkApprovalContext`).
fn network_action(ctx: &Value) -> Result<Action, HookError> {
    let host = s(ctx, "host")
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .ok_or(HookError::NoHost)?;
    let scheme = match s(ctx, "protocol").as_deref() {
        Some("http") | Some("Http") => "http",
        Some("socks5_tcp") | Some("socks5_udp") | Some("Socks5Tcp") | Some("Socks5Udp") => "socks5",
        // https, https_connect, http-connect, or missing: the common case is TLS through CONNECT.
        _ => "https",
    };
    let url = format!("{scheme}://{host}/");
    match url::Url::parse(&url) {
        Ok(u) if u.host_str().is_some() => Ok(Action::Fetch { url }),
        _ => Err(HookError::InvalidHost(host)),
    }
}

/// The action of a single-target tool call.
fn single_action(tool: &str, ti: &Value, cwd: &Option<String>) -> Result<Action, HookError> {
    let cwd = cwd.clone();
    let need = |field: &'static str| {
        s(ti, field).ok_or_else(|| HookError::Missing {
            field,
            tool: tool.to_string(),
        })
    };
    Ok(match tool {
        // Codex names its shell tool `Bash` in hook inputs; older builds and forks say `shell`.
        "Bash" | "shell" | "exec_command" | "local_shell" => Action::Shell {
            command: need("command")?,
            cwd: cwd.clone(),
        },
        "Read" => Action::Read {
            path: need("file_path")?,
            cwd: cwd.clone(),
            recursive: false,
        },
        "Write" => Action::Write {
            path: need("file_path")?,
            cwd: cwd.clone(),
            content: s(ti, "content"),
            diff: None,
        },
        "Edit" => Action::Write {
            path: need("file_path")?,
            cwd: cwd.clone(),
            content: None,
            diff: Some(edit_diff(std::slice::from_ref(ti))),
        },
        "MultiEdit" => Action::Write {
            path: need("file_path")?,
            cwd: cwd.clone(),
            content: None,
            diff: Some(edit_diff(
                ti.get("edits")
                    .and_then(Value::as_array)
                    .map_or(&[][..], |v| v.as_slice()),
            )),
        },
        "NotebookEdit" => Action::Write {
            path: need("notebook_path")?,
            cwd: cwd.clone(),
            content: s(ti, "new_source"),
            diff: None,
        },
        "WebFetch" => Action::Fetch { url: need("url")? },
        // Grep and Glob search a directory tree; LS lists one directory.
        "Glob" | "Grep" | "LS" => Action::Read {
            path: s(ti, "path")
                .or_else(|| cwd.clone())
                .unwrap_or_else(|| ".".into()),
            cwd: cwd.clone(),
            recursive: tool != "LS",
        },
        // Reading an MCP resource sends a request to that server: judged as an MCP call.
        "ReadMcpResourceTool" => Action::Mcp {
            server: need("server")?,
            tool: "resources/read".into(),
            arguments: ti.clone(),
        },
        t if t.starts_with("mcp__") => {
            let rest = &t["mcp__".len()..];
            let (server, tool_name) = rest
                .split_once("__")
                .ok_or_else(|| HookError::NotMcp(t.to_string()))?;
            Action::Mcp {
                server: server.to_string(),
                tool: tool_name.to_string(),
                arguments: ti.clone(),
            }
        }
        other => return Err(HookError::UnknownTool(other.to_string())),
    })
}

/// The files a Codex `apply_patch` body adds, updates, deletes or moves, as write actions.
pub fn patch_actions(patch: &str, cwd: Option<&str>) -> Result<Vec<Action>, HookError> {
    let mut actions: Vec<Action> = Vec::new();
    let mut current: Option<(String, String)> = None;
    let flush = |cur: &mut Option<(String, String)>, actions: &mut Vec<Action>| {
        if let Some((path, body)) = cur.take() {
            actions.push(Action::Write {
                path,
                cwd: cwd.map(str::to_string),
                content: None,
                diff: Some(body),
            });
        }
    };
    for line in patch.lines() {
        // A move's destination (`*** Move to:`) is written too, so it starts its own entry.
        let header = [
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ]
        .iter()
        .find_map(|h| line.strip_prefix(h).map(|p| (*h, p.trim().to_string())));
        match header {
            Some((_, path)) => {
                flush(&mut current, &mut actions);
                current = Some((path, format!("{line}\n")));
            }
            None => {
                if let Some((_, body)) = current.as_mut() {
                    if !line.starts_with("*** End Patch") {
                        body.push_str(line);
                        body.push('\n');
                    }
                }
            }
        }
    }
    flush(&mut current, &mut actions);
    if actions.is_empty() {
        return Err(HookError::EmptyPatch);
    }
    Ok(actions)
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

/// A Codex rollout `response_item`'s payload as a transcript entry: user and assistant messages
/// (not the context Codex injects into every session), tool calls and their outputs.
fn codex_rollout_entry(p: &Value) -> Option<TranscriptEntry> {
    let text_of = |content: Option<&Value>| match content {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|x| x.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    match p.get("type").and_then(Value::as_str)? {
        "message" => {
            let role = match p.get("role").and_then(Value::as_str)? {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                _ => return None,
            };
            let text = text_of(p.get("content"));
            let t = text.trim_start();
            if t.is_empty()
                || t.starts_with("<environment_context>")
                || t.starts_with("<user_instructions>")
                || t.starts_with("<permissions instructions>")
                || t.starts_with("# AGENTS.md")
            {
                return None;
            }
            Some(TranscriptEntry {
                role,
                content: text,
                name: None,
            })
        }
        "function_call" | "custom_tool_call" => {
            let tool = p.get("name").and_then(Value::as_str).unwrap_or("a tool");
            Some(TranscriptEntry {
                role: Role::Assistant,
                content: format!(
                    "calls {tool}: {}",
                    p.get("arguments")
                        .or_else(|| p.get("input"))
                        .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_string))
                        .unwrap_or_default()
                ),
                name: Some(tool.to_string()),
            })
        }
        "function_call_output" | "custom_tool_call_output" => Some(TranscriptEntry {
            role: Role::Tool,
            content: match p.get("output") {
                Some(Value::String(t)) => t.clone(),
                Some(o) => o
                    .get("content")
                    .and_then(Value::as_str)
                    .map_or_else(|| o.to_string(), str::to_string),
                None => String::new(),
            },
            name: Some("tool_result".into()),
        }),
        _ => None,
    }
}

/// Reads a Claude Code JSONL transcript (or a Codex rollout) (the last lines of it) into transcript entries. An
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
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        if kind == "response_item" {
            // A Codex rollout line (its hooks' `transcript_path` names the session's rollout).
            out.extend(codex_rollout_entry(
                v.get("payload").unwrap_or(&Value::Null),
            ));
            continue;
        }
        let Some(msg) = v.get("message") else {
            continue;
        };
        let role = match kind {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            _ => continue,
        };
        match msg.get("content") {
            Some(Value::String(text)) => out.push(TranscriptEntry {
                role,
                content: text.clone(),
                name: None,
            }),
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(t) = b.get("text").and_then(Value::as_str) {
                                out.push(TranscriptEntry {
                                    role,
                                    content: t.to_string(),
                                    name: None,
                                });
                            }
                        }
                        Some("tool_use") => {
                            let tool = b.get("name").and_then(Value::as_str).unwrap_or("a tool");
                            out.push(TranscriptEntry {
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
                            out.push(TranscriptEntry {
                                role: Role::Tool,
                                content,
                                name: Some("tool_result".into()),
                            });
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}
