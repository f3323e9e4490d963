//! Recorded agent sessions → eval cases: Claude Code transcripts and Codex rollouts.
//!
//! This module owns `guardian traces import claude-code|codex`. Every tool call in a session
//! becomes one case (a multi-file `apply_patch` one case per file), translated to an API v1
//! request exactly as the hook endpoints translate live calls
//! ([`crate::integrations::claude_code::translate`]), with the session's earlier turns as the
//! transcript and its first user message as the intent.
//!
//! Labels come only from decisions a human recorded in the trace:
//! - Claude Code: a `tool_result` starting "The user doesn't want to proceed with this tool use"
//!   is the user rejecting the call (or interrupting it while it ran): **deny**.
//! - Codex: the normalised human denials "exec command rejected by user" and "patch rejected by
//!   user" are **deny**; a call that Codex asked the user to approve (`exec_approval_request` /
//!   `apply_patch_approval_request`) and that then ran is **allow**.
//!
//! Everything else is emitted unlabeled (`"expected": null`): that a call ran says only that
//! some rule let it, not that a human judged it. `guardian eval --label` labels those by hand.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::integrations::claude_code::{HookInput, Translation, translate};
use crate::request::{ReviewRequest, Role, TranscriptEntry};
use crate::verdict::Decision;

/// Transcript entries kept before each case (the most recent ones).
const MAX_ENTRIES: usize = 40;
/// Characters kept of each transcript entry (head and tail).
const MAX_ENTRY_CHARS: usize = 2000;

/// Claude Code's fixed text for a rejected (or interrupted) tool call.
pub const CLAUDE_REJECTION: &str = "The user doesn't want to proceed with this tool use";
/// Codex's normalised texts for a human denial.
pub const CODEX_REJECTIONS: [&str; 2] = ["exec command rejected by user", "patch rejected by user"];

/// A case read from a trace: like [`super::Case`], but the label may be missing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedCase {
    /// `<session>:<call id>`.
    pub id: String,
    /// The `/v1/review` request.
    pub request: Value,
    /// The human decision recorded in the trace, or `null`.
    pub expected: Option<Decision>,
    /// `claude-code` or `codex`.
    pub category: String,
    /// The trace file.
    pub source: String,
    /// Where the label comes from.
    pub notes: String,
}

/// A tool call found in a trace, before translation.
struct Call {
    id: String,
    tool: String,
    input: Value,
    cwd: Option<String>,
    /// Transcript entries before the call.
    before: usize,
}

/// What the session recorded, in order.
#[derive(Default)]
struct Session {
    id: Option<String>,
    entries: Vec<TranscriptEntry>,
    calls: Vec<Call>,
    /// Call id → the tool output text.
    outputs: HashMap<String, String>,
    /// Calls the agent asked the human to approve.
    asked: HashSet<String>,
}

fn clip(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= MAX_ENTRY_CHARS {
        return text.to_string();
    }
    let half = MAX_ENTRY_CHARS / 2;
    let head: String = chars[..half].iter().collect();
    let tail: String = chars[chars.len() - half..].iter().collect();
    format!(
        "{head}\n[… {} characters omitted …]\n{tail}",
        chars.len() - MAX_ENTRY_CHARS
    )
}

fn entry(role: Role, content: &str, name: Option<&str>) -> TranscriptEntry {
    TranscriptEntry {
        role,
        content: clip(content),
        name: name.map(str::to_string),
    }
}

/// The text of a tool result's `content`: a string or a list of text blocks.
fn text_of(content: Option<&Value>) -> String {
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

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Reads a Claude Code transcript (one JSON object a line). Lines that are not JSON, or not
/// messages, are skipped: transcripts carry summaries, snapshots and other bookkeeping.
fn read_claude(text: &str) -> Session {
    let mut s = Session::default();
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
        let cwd = str_of(&v, "cwd").map(str::to_string);
        let Some(msg) = v.get("message") else {
            continue;
        };
        match msg.get("content") {
            Some(Value::String(t)) => s.entries.push(entry(role, t, None)),
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    match str_of(b, "type") {
                        Some("text") => {
                            if let Some(t) = str_of(b, "text") {
                                s.entries.push(entry(role, t, None));
                            }
                        }
                        Some("tool_use") => {
                            let (Some(id), Some(name)) = (str_of(b, "id"), str_of(b, "name"))
                            else {
                                continue;
                            };
                            let input = b.get("input").cloned().unwrap_or(Value::Null);
                            s.calls.push(Call {
                                id: id.to_string(),
                                tool: name.to_string(),
                                input: input.clone(),
                                cwd: cwd.clone(),
                                before: s.entries.len(),
                            });
                            s.entries.push(entry(
                                Role::Assistant,
                                &format!("[tool call {name}] {input}"),
                                Some(name),
                            ));
                        }
                        Some("tool_result") => {
                            let out = text_of(b.get("content"));
                            if let Some(id) = str_of(b, "tool_use_id") {
                                s.outputs.insert(id.to_string(), out.clone());
                            }
                            s.entries.push(entry(Role::Tool, &out, None));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    s
}

/// A Codex shell command as one string: `["bash", "-lc", "script"]` is the script, other argv
/// vectors are joined with shell quoting.
fn codex_command(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let words: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            if words.len() != items.len() || words.is_empty() {
                return None;
            }
            if words.len() == 3
                && matches!(words[0], "bash" | "sh" | "zsh" | "/bin/bash" | "/bin/sh")
                && matches!(words[1], "-lc" | "-c")
            {
                return Some(words[2].to_string());
            }
            Some(
                words
                    .iter()
                    .map(|w| crate::normalize::shell::words::quote(w))
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        }
        _ => None,
    }
}

/// A Codex tool call as the hook tool name and input guardian translates.
fn codex_tool(name: &str, args: &Value) -> Option<(String, Value)> {
    match name {
        "shell" | "container.exec" | "local_shell" | "shell_command" | "exec_command" => {
            let cmd = args
                .get("command")
                .or_else(|| args.get("cmd"))
                .and_then(codex_command)?;
            Some(("Bash".into(), json!({ "command": cmd })))
        }
        "apply_patch" => {
            let patch = match args {
                Value::String(s) => s.clone(),
                _ => str_of(args, "input")
                    .or_else(|| str_of(args, "patch"))?
                    .to_string(),
            };
            Some(("apply_patch".into(), json!({ "command": patch })))
        }
        // MCP tools are exposed to the model as `server__tool`.
        n if n.contains("__") => Some((
            if n.starts_with("mcp__") {
                n.to_string()
            } else {
                format!("mcp__{n}")
            },
            args.clone(),
        )),
        _ => None,
    }
}

/// Reads a Codex rollout (`~/.codex/sessions/…/rollout-*.jsonl`: `{timestamp, type, payload}`).
fn read_codex(text: &str) -> Session {
    let mut s = Session::default();
    let mut cwd: Option<String> = None;
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(p) = v.get("payload") else {
            continue;
        };
        match str_of(&v, "type") {
            Some("session_meta") => {
                s.id = s.id.or_else(|| str_of(p, "id").map(str::to_string));
                cwd = str_of(p, "cwd").map(str::to_string).or(cwd);
            }
            Some("turn_context") => {
                cwd = str_of(p, "cwd").map(str::to_string).or(cwd);
            }
            Some("event_msg") => {
                if matches!(
                    str_of(p, "type"),
                    Some("exec_approval_request" | "apply_patch_approval_request")
                ) && let Some(id) = str_of(p, "call_id")
                {
                    s.asked.insert(id.to_string());
                }
            }
            Some("response_item") => match str_of(p, "type") {
                Some("message") => {
                    let role = match str_of(p, "role") {
                        Some("user") => Role::User,
                        Some("assistant") => Role::Assistant,
                        _ => continue,
                    };
                    let text = text_of(p.get("content"));
                    // Context Codex injects into every session is not the user speaking.
                    let t = text.trim_start();
                    if t.is_empty()
                        || t.starts_with("<environment_context>")
                        || t.starts_with("<user_instructions>")
                        || t.starts_with("# AGENTS.md")
                    {
                        continue;
                    }
                    s.entries.push(entry(role, &text, None));
                }
                Some("function_call" | "custom_tool_call" | "local_shell_call") => {
                    let Some(id) = str_of(p, "call_id").or_else(|| str_of(p, "id")) else {
                        continue;
                    };
                    let (name, args) = if str_of(p, "type") == Some("local_shell_call") {
                        (
                            "local_shell".to_string(),
                            p.get("action").cloned().unwrap_or(Value::Null),
                        )
                    } else {
                        let name = str_of(p, "name").unwrap_or("").to_string();
                        let raw = p.get("arguments").or_else(|| p.get("input"));
                        // Function arguments are a JSON string; custom tool input is raw text.
                        let args = match raw {
                            Some(Value::String(s)) => {
                                serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
                            }
                            Some(other) => other.clone(),
                            None => Value::Null,
                        };
                        (name, args)
                    };
                    let wd = str_of(&args, "workdir")
                        .or_else(|| str_of(&args, "working_directory"))
                        .map(str::to_string)
                        .or_else(|| cwd.clone());
                    if let Some((tool, input)) = codex_tool(&name, &args) {
                        s.calls.push(Call {
                            id: id.to_string(),
                            tool,
                            input,
                            cwd: wd,
                            before: s.entries.len(),
                        });
                    }
                    s.entries.push(entry(
                        Role::Assistant,
                        &format!("[tool call {name}] {args}"),
                        Some(&name),
                    ));
                }
                Some("function_call_output" | "custom_tool_call_output") => {
                    let raw = text_of(p.get("output"));
                    // Shell output is often `{"output": "...", "metadata": {...}}` in a string.
                    let out = serde_json::from_str::<Value>(&raw)
                        .ok()
                        .and_then(|o| str_of(&o, "output").map(str::to_string))
                        .unwrap_or(raw);
                    if let Some(id) = str_of(p, "call_id") {
                        s.outputs.insert(id.to_string(), out.clone());
                    }
                    s.entries.push(entry(Role::Tool, &out, None));
                }
                _ => {}
            },
            _ => {}
        }
    }
    s
}

/// Which label a call gets, and why.
fn label(agent: &str, s: &Session, call: &Call) -> (Option<Decision>, String) {
    let out = s.outputs.get(&call.id).map(|o| o.trim_start());
    match agent {
        "claude-code" => match out {
            Some(o) if o.starts_with(CLAUDE_REJECTION) => (
                Some(Decision::Deny),
                "the user rejected this tool call in Claude Code".into(),
            ),
            Some(_) => (
                None,
                "ran in Claude Code (allowed by a rule or the user: not a recorded human decision)"
                    .into(),
            ),
            None => (None, "no result recorded for this call".into()),
        },
        _ => match out {
            Some(o) if CODEX_REJECTIONS.iter().any(|r| o.starts_with(r)) => (
                Some(Decision::Deny),
                "the user rejected this call at Codex's approval prompt".into(),
            ),
            Some(_) if s.asked.contains(&call.id) => (
                Some(Decision::Allow),
                "the user approved this call at Codex's approval prompt".into(),
            ),
            Some(_) => (
                None,
                "ran in Codex without an approval prompt (not a recorded human decision)".into(),
            ),
            None => (None, "no output recorded for this call".into()),
        },
    }
}

fn to_cases(agent: &str, s: Session, source: &str) -> Result<Vec<ImportedCase>, super::Error> {
    let session = s.id.clone().unwrap_or_else(|| "session".into());
    let intent = s
        .entries
        .iter()
        .find(|e| e.role == Role::User)
        .map(|e| e.content.clone());
    let mut out = Vec::new();
    for call in &s.calls {
        let hook = HookInput {
            hook_event_name: "PreToolUse".into(),
            session_id: Some(session.clone()),
            transcript_path: None,
            cwd: call.cwd.clone(),
            permission_mode: None,
            tool_name: Some(call.tool.clone()),
            tool_input: Some(call.input.clone()),
            agent_type: None,
            network_approval_context: None,
            approval_context: None,
            agent: Some(agent.to_string()),
        };
        let reqs: Vec<ReviewRequest> = match translate(&hook) {
            Ok(Translation::Review(reqs)) => reqs,
            // Tools guardian does not judge (TodoWrite, Task, …) and unknown tools give no case.
            Ok(Translation::Pass(_)) | Ok(Translation::Unknown(_)) | Err(_) => continue,
        };
        let (expected, why) = label(agent, &s, call);
        let start = call.before.saturating_sub(MAX_ENTRIES);
        let transcript = s.entries[start..call.before].to_vec();
        let n = reqs.len();
        for (i, mut req) in reqs.into_iter().enumerate() {
            req.transcript = transcript.clone();
            req.intent = intent.clone();
            let request =
                serde_json::to_value(&req).map_err(|source| super::Error::EncodeRequest {
                    call: call.id.clone(),
                    source,
                })?;
            out.push(ImportedCase {
                id: if n > 1 {
                    format!("{session}:{}:{}", call.id, i + 1)
                } else {
                    format!("{session}:{}", call.id)
                },
                request,
                expected,
                category: agent.to_string(),
                source: source.to_string(),
                notes: why.clone(),
            });
        }
    }
    Ok(out)
}

/// Cases from a Claude Code transcript (`~/.claude/projects/<project>/<session>.jsonl`).
pub fn from_claude_code(text: &str, source: &str) -> Result<Vec<ImportedCase>, super::Error> {
    to_cases("claude-code", read_claude(text), source)
}

/// Cases from a Codex rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
pub fn from_codex(text: &str, source: &str) -> Result<Vec<ImportedCase>, super::Error> {
    to_cases("codex", read_codex(text), source)
}
