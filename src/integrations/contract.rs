//! What each agent's hook parser accepts: guardian's answers put in the only shapes that agent
//! takes.
//!
//! This module owns the output contract of the hook adapters: the answer kinds guardian can give
//! (allow, a rule or reviewer deny, a breaker-tripped deny, a failure deny, an unknown tool, a
//! question for the user, no decision) and [`render`], the one way an answer becomes a hook
//! output. A hook output the agent rejects is dropped, and a dropped deny is an allow, so each
//! answer is rendered per agent and per event by that agent's [`super::Hooks::render`] (in its
//! file, next to the rest of what is its own) and nowhere else. The rules are facts taken from
//! the agents' source (named on each renderer) and checked by the contract oracle in
//! `tests/it/contracts.rs`.

use serde_json::{Map, Value, json};

pub use super::Agent;
use crate::config::Unreviewed;
use crate::verdict::{Decision, ReviewResponse};

/// The hook event answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Before a tool runs.
    PreToolUse,
    /// Where the agent would show its own approval prompt (Codex: an escalation request).
    PermissionRequest,
}

impl Event {
    /// The event named in a hook input's `hook_event_name`; anything else answers as
    /// PreToolUse (the shape every agent reads as a deny).
    pub fn of(name: &str) -> Event {
        if name == "PermissionRequest" {
            Event::PermissionRequest
        } else {
            Event::PreToolUse
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Event::PreToolUse => "PreToolUse",
            Event::PermissionRequest => "PermissionRequest",
        }
    }
}

/// guardian's answer to a hook, before it is put in the agent's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookAnswer {
    /// The action may run.
    Allow {
        /// Why (a rule, the reviewer, session memory).
        message: String,
    },
    /// The action must not run.
    Deny {
        /// Why, as the agent should read it (the STOP instruction included when `interrupt`).
        message: String,
        /// The session's circuit breaker tripped: the agent should stop and report.
        interrupt: bool,
    },
    /// Nothing could review the action and the integration runs interactively
    /// (`[hooks] unreviewed = "ask"`): the agent's own prompt asks the user.
    Ask {
        /// Why guardian could not decide.
        message: String,
    },
    /// guardian has no opinion (a tool that touches nothing): the agent's own rules apply.
    NoDecision,
}

impl HookAnswer {
    /// The answer for a review: an unreviewed deny becomes a question to the user in `Ask` mode;
    /// a rule deny or a reviewer deny never does.
    pub fn from_response(resp: &ReviewResponse, mode: Unreviewed) -> HookAnswer {
        match resp.decision {
            Decision::Allow => HookAnswer::Allow {
                message: resp.message.clone(),
            },
            Decision::Deny if resp.unreviewed && mode == Unreviewed::Ask && !resp.interrupt => {
                HookAnswer::Ask {
                    message: format!(
                        "guardian could not review this action, so you are asked: {}",
                        resp.rationale
                    ),
                }
            }
            Decision::Deny => HookAnswer::Deny {
                message: resp.message.clone(),
                interrupt: resp.interrupt,
            },
        }
    }

    /// A deny for a failure guardian caught before any review (invalid input, an unknown tool in
    /// headless mode, the server shutting down, …).
    pub fn failure(reason: &str) -> HookAnswer {
        HookAnswer::Deny {
            message: format!("denied by guardian: {reason}"),
            interrupt: false,
        }
    }

    /// The answer for a tool guardian does not know: no decision at a terminal, a deny headless.
    pub fn unknown_tool(tool: &str, mode: Unreviewed) -> HookAnswer {
        match mode {
            Unreviewed::Ask => HookAnswer::NoDecision,
            Unreviewed::Deny => HookAnswer::failure(&format!(
                "tool {tool:?} is not known to guardian, and nobody can be asked in headless mode ([hooks] unreviewed = \"deny\")"
            )),
        }
    }
}

/// The hook output for an answer, in the shape `agent` accepts for `event`. An empty object
/// means "print nothing" (the command hook prints no output for it). An agent without hooks is
/// never answered through one; if it were, the answer takes Claude Code's shape, the format the
/// hook agents share.
pub fn render(agent: Agent, event: Event, answer: &HookAnswer) -> Value {
    match agent.integration().hooks() {
        Some(hooks) => hooks.render(event, answer),
        None => claude_shape(event, answer),
    }
}

/// Claude Code (hooks reference, code.claude.com/docs/en/hooks): PreToolUse takes
/// `hookSpecificOutput.permissionDecision` allow | deny | ask with a reason, and the common
/// fields `continue: false` + `stopReason` stop the agent; PermissionRequest takes
/// `hookSpecificOutput.decision` `{behavior: allow | deny, message, interrupt}`; `{}` (or no
/// output) is no decision. A PermissionRequest has no "ask": no decision shows the dialog.
pub fn claude_shape(event: Event, answer: &HookAnswer) -> Value {
    let specific = |fields: Value| specific_output(event, fields);
    match (event, answer) {
        (_, HookAnswer::NoDecision) | (Event::PermissionRequest, HookAnswer::Ask { .. }) => {
            json!({})
        }
        (Event::PreToolUse, HookAnswer::Allow { message }) => specific(json!({
            "permissionDecision": "allow", "permissionDecisionReason": message
        })),
        (Event::PreToolUse, HookAnswer::Ask { message }) => specific(json!({
            "permissionDecision": "ask", "permissionDecisionReason": message
        })),
        (Event::PreToolUse, HookAnswer::Deny { message, interrupt }) => {
            let mut out = specific(json!({
                "permissionDecision": "deny", "permissionDecisionReason": message
            }));
            if *interrupt && let Some(map) = out.as_object_mut() {
                map.insert("continue".into(), Value::Bool(false));
                map.insert("stopReason".into(), json!(message));
            }
            out
        }
        (Event::PermissionRequest, HookAnswer::Allow { .. }) => {
            specific(json!({"decision": {"behavior": "allow"}}))
        }
        (Event::PermissionRequest, HookAnswer::Deny { message, interrupt }) => {
            specific(json!({"decision": {
                "behavior": "deny", "message": message, "interrupt": interrupt
            }}))
        }
    }
}

/// `{"hookSpecificOutput": {"hookEventName": <event>, …fields}}`, the shape both agents read.
pub(super) fn specific_output(event: Event, fields: Value) -> Value {
    let mut inner = Map::new();
    inner.insert("hookEventName".into(), json!(event.as_str()));
    if let Value::Object(m) = fields {
        inner.extend(m);
    }
    json!({ "hookSpecificOutput": inner })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deny(interrupt: bool) -> HookAnswer {
        HookAnswer::Deny {
            message: "no".into(),
            interrupt,
        }
    }

    #[test]
    fn codex_never_gets_fields_it_rejects() {
        for event in [Event::PreToolUse, Event::PermissionRequest] {
            for answer in [
                deny(true),
                deny(false),
                HookAnswer::Allow {
                    message: "ok".into(),
                },
                HookAnswer::Ask {
                    message: "?".into(),
                },
                HookAnswer::NoDecision,
            ] {
                let text = render(Agent::Codex, event, &answer).to_string();
                for banned in [
                    "continue",
                    "stopReason",
                    "interrupt",
                    "updatedInput",
                    "suppressOutput",
                ] {
                    assert!(!text.contains(banned), "{event:?} {answer:?}: {text}");
                }
                if event == Event::PreToolUse {
                    assert!(!text.contains("\"allow\""), "{text}");
                    assert!(!text.contains("\"ask\""), "{text}");
                }
            }
        }
    }

    #[test]
    fn an_unreviewed_deny_becomes_a_question_only_in_ask_mode() {
        let resp = ReviewResponse {
            id: "rev_1".into(),
            decision: Decision::Deny,
            decided_by: crate::verdict::DecidedBy::Fallback,
            rule: None,
            risk_level: None,
            rationale: "no reviewer".into(),
            message: "denied".into(),
            interrupt: false,
            unreviewed: true,
            signals: Vec::new(),
            score: None,
            mandate: None,
        };
        assert!(matches!(
            HookAnswer::from_response(&resp, Unreviewed::Ask),
            HookAnswer::Ask { .. }
        ));
        assert!(matches!(
            HookAnswer::from_response(&resp, Unreviewed::Deny),
            HookAnswer::Deny { .. }
        ));
        let judged = ReviewResponse {
            unreviewed: false,
            ..resp
        };
        assert!(matches!(
            HookAnswer::from_response(&judged, Unreviewed::Ask),
            HookAnswer::Deny { .. }
        ));
    }
}
