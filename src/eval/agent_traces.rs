//! Recorded agent sessions → eval cases: Claude Code transcripts, Codex rollouts, and those of
//! any agent whose integration reads its sessions ([`crate::integrations::AgentIntegration::session_reader`]).
//!
//! This module owns `guardian traces import <agent>`. The agent's own file reads the session
//! (its calls, the conversation, and the labels a human recorded in it:
//! [`crate::integrations::claude_code::read_session`], [`crate::integrations::codex::read_session`]);
//! here every tool call becomes one case (a multi-file `apply_patch` one case per file),
//! translated to an API v1 request exactly as the hook endpoints translate live calls
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

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::integrations::Agent;
use crate::integrations::RecordedSession;
use crate::integrations::claude_code::{HookInput, Translation, translate};
use crate::request::{ReviewRequest, Role, TranscriptEntry};
use crate::verdict::Decision;

/// Transcript entries kept before each case (the most recent ones).
const MAX_ENTRIES: usize = 40;
/// Characters kept of each transcript entry (head and tail).
const MAX_ENTRY_CHARS: usize = 2000;

/// A case read from a trace: like [`super::Case`], but the label may be missing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedCase {
    /// `<session>:<call id>`.
    pub id: String,
    /// The `/v1/review` request.
    pub request: Value,
    /// The human decision recorded in the trace, or `null`.
    pub expected: Option<Decision>,
    /// The agent's name (`claude-code`, `codex`).
    pub category: String,
    /// The trace file.
    pub source: String,
    /// Where the label comes from.
    pub notes: String,
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

/// Cases from one recorded session of `agent` (its text; `source` names the file).
pub fn import(agent: Agent, text: &str, source: &str) -> Result<Vec<ImportedCase>, super::Error> {
    let read = agent
        .integration()
        .session_reader()
        .ok_or_else(|| super::Error::NoSessions(agent.name().to_string()))?;
    to_cases(agent.name(), read(text), source)
}

fn to_cases(
    agent: &str,
    s: RecordedSession,
    source: &str,
) -> Result<Vec<ImportedCase>, super::Error> {
    let session = s.id.clone().unwrap_or_else(|| "session".into());
    // Each entry is clipped (head and tail) before it is evidence.
    let entries: Vec<TranscriptEntry> = s
        .entries
        .iter()
        .map(|e| TranscriptEntry {
            role: e.role,
            content: clip(&e.content),
            name: e.name.clone(),
        })
        .collect();
    let intent = entries
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
            prompt: None,
            tool_name: Some(call.tool.clone()),
            tool_input: Some(call.input.clone()),
            agent_type: None,
            network_approval_context: None,
            approval_context: None,
            guardian_diff: None,
            agent: Some(agent.to_string()),
        };
        let reqs: Vec<ReviewRequest> = match translate(&hook) {
            Ok(Translation::Review(reqs)) => reqs,
            // Tools guardian does not judge (TodoWrite, Task, …) and unknown tools give no case.
            Ok(Translation::Pass(_)) | Ok(Translation::Unknown(_)) | Err(_) => continue,
        };
        let start = call.before.saturating_sub(MAX_ENTRIES);
        let transcript = entries.get(start..call.before).unwrap_or_default().to_vec();
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
                expected: call.label,
                category: agent.to_string(),
                source: source.to_string(),
                notes: call.notes.clone(),
            });
        }
    }
    Ok(out)
}
