//! The contract oracle: each agent's accept/reject rules for hook output, ported as facts from its
//! source, and a table test that drives every answer kind guardian can give through every adapter
//! (HTTP endpoint and command hook, PreToolUse and PermissionRequest) and checks that the agent
//! would accept the output and that a deny stays a deny.
//!
//! An output an agent rejects is dropped, and a dropped deny is an allow: that is what this file
//! exists to catch.

use std::sync::Arc;

use crate::common::*;
use serde_json::{Value, json};

/// How an agent reads a hook's result.
#[derive(Debug, Clone, PartialEq)]
enum Reading {
    /// Accepted, no decision: the agent's own flow applies.
    NoDecision,
    /// Accepted: the call may run.
    Allow,
    /// Accepted: the call is blocked. `stop`: the agent is told to stop altogether.
    Deny { reason: String, stop: bool },
    /// Accepted: the agent's own prompt asks the user.
    Ask,
    /// Rejected ("hook failed"): the decision is dropped and the call PROCEEDS.
    Invalid(String),
}

/// Codex's reading of a command hook, ported from openai/codex:
/// `codex-rs/hooks/src/engine/output_parser.rs` @ 0ea83813ef86 and
/// `codex-rs/hooks/src/events/{pre_tool_use,permission_request}.rs` @ 0082977cebb9.
mod codex {
    use super::Reading;
    use serde_json::Value;

    const TOP: &[&str] = &[
        "continue",
        "stopReason",
        "suppressOutput",
        "systemMessage",
        "decision",
        "reason",
        "hookSpecificOutput",
    ];
    const EVENTS: &[&str] = &[
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "PreCompact",
        "PostCompact",
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
    ];

    fn invalid(why: &str) -> Reading {
        Reading::Invalid(why.to_string())
    }

    /// Exit 0 reads stdout; exit 2 with non-empty stderr is a deny with stderr as the reason;
    /// any other exit (or exit 2 with empty stderr) fails the hook.
    pub fn read(event: &str, code: i32, stdout: &str, stderr: &str) -> Reading {
        match code {
            0 => read_stdout(event, stdout),
            2 if !stderr.trim().is_empty() => Reading::Deny {
                reason: stderr.trim().to_string(),
                stop: false,
            },
            c => invalid(&format!("hook exited with code {c}")),
        }
    }

    fn read_stdout(event: &str, stdout: &str) -> Reading {
        let t = stdout.trim();
        if t.is_empty() {
            return Reading::NoDecision;
        }
        // Plain text is ignored; text that looks like JSON must parse.
        if !(t.starts_with('{') || t.starts_with('[')) {
            return Reading::NoDecision;
        }
        let Ok(v) = serde_json::from_str::<Value>(t) else {
            return invalid("invalid JSON output");
        };
        let Some(m) = v.as_object() else {
            return invalid("not an object");
        };
        // Every wire struct is deny_unknown_fields.
        if let Some(k) = m.keys().find(|k| !TOP.contains(&k.as_str())) {
            return invalid(&format!("unknown field {k}"));
        }
        if m.get("continue") == Some(&Value::Bool(false)) {
            return invalid("unsupported continue:false");
        }
        if m.get("stopReason").is_some() {
            return invalid("unsupported stopReason");
        }
        if m.get("suppressOutput") == Some(&Value::Bool(true)) {
            return invalid("unsupported suppressOutput");
        }
        let specific = m.get("hookSpecificOutput");
        if let Some(h) = specific {
            let Some(h) = h.as_object() else {
                return invalid("hookSpecificOutput is not an object");
            };
            match h.get("hookEventName").and_then(Value::as_str) {
                Some(e) if EVENTS.contains(&e) => {}
                _ => return invalid("hookEventName missing or unknown"),
            }
        }
        match event {
            "PreToolUse" => pre_tool_use(m, specific),
            _ => permission_request(m, specific),
        }
    }

    fn pre_tool_use(m: &serde_json::Map<String, Value>, specific: Option<&Value>) -> Reading {
        let reason_of = |v: Option<&Value>| {
            v.and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        match m.get("decision").and_then(Value::as_str) {
            Some("block") => {
                return match reason_of(m.get("reason")) {
                    Some(reason) => Reading::Deny {
                        reason,
                        stop: false,
                    },
                    None => invalid("block without a reason"),
                };
            }
            Some(_) => return invalid("unsupported legacy decision"),
            None if m.get("reason").is_some() => return invalid("reason without a decision"),
            None => {}
        }
        let Some(h) = specific.and_then(Value::as_object) else {
            return Reading::NoDecision;
        };
        let allowed = [
            "hookEventName",
            "permissionDecision",
            "permissionDecisionReason",
            "updatedInput",
            "additionalContext",
        ];
        if let Some(k) = h.keys().find(|k| !allowed.contains(&k.as_str())) {
            return invalid(&format!("unknown field hookSpecificOutput.{k}"));
        }
        let updated = h.get("updatedInput").is_some();
        match h.get("permissionDecision").and_then(Value::as_str) {
            Some("allow") if updated => Reading::Allow,
            Some("allow") => invalid("unsupported permissionDecision:allow"),
            Some("ask") => invalid("unsupported permissionDecision:ask"),
            Some("deny") if updated => invalid("updatedInput on a deny"),
            Some("deny") => match reason_of(h.get("permissionDecisionReason")) {
                Some(reason) => Reading::Deny {
                    reason,
                    stop: false,
                },
                None => invalid("deny without a reason"),
            },
            Some(_) => invalid("unknown permissionDecision"),
            None if updated => invalid("updatedInput without allow"),
            None if h.get("permissionDecisionReason").is_some() => {
                invalid("permissionDecisionReason without a decision")
            }
            None => Reading::NoDecision,
        }
    }

    fn permission_request(m: &serde_json::Map<String, Value>, specific: Option<&Value>) -> Reading {
        if m.get("decision").is_some() || m.get("reason").is_some() {
            return invalid("no top-level decision on PermissionRequest");
        }
        let Some(h) = specific.and_then(Value::as_object) else {
            return Reading::NoDecision;
        };
        if let Some(k) = h
            .keys()
            .find(|k| !["hookEventName", "decision"].contains(&k.as_str()))
        {
            return invalid(&format!("unknown field hookSpecificOutput.{k}"));
        }
        let Some(d) = h.get("decision") else {
            return Reading::NoDecision;
        };
        let Some(d) = d.as_object() else {
            return invalid("decision is not an object");
        };
        let allowed = [
            "behavior",
            "message",
            "updatedInput",
            "updatedPermissions",
            "interrupt",
        ];
        if let Some(k) = d.keys().find(|k| !allowed.contains(&k.as_str())) {
            return invalid(&format!("unknown field decision.{k}"));
        }
        if d.contains_key("updatedInput") {
            return invalid("unsupported updatedInput");
        }
        if d.contains_key("updatedPermissions") {
            return invalid("unsupported updatedPermissions");
        }
        if d.get("interrupt") == Some(&Value::Bool(true)) {
            return invalid("unsupported interrupt:true");
        }
        match d.get("behavior").and_then(Value::as_str) {
            Some("allow") => Reading::Allow,
            Some("deny") => Reading::Deny {
                reason: d
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("PermissionRequest hook denied approval")
                    .to_string(),
                stop: false,
            },
            _ => invalid("behavior must be allow or deny"),
        }
    }
}

/// Claude Code's reading of a hook, from its hooks reference (code.claude.com/docs/en/hooks) and
/// the hook output schemas of anthropics/claude-agent-sdk-python `src/claude_agent_sdk/types.py`
/// @ 005d7596: the common fields `continue`, `stopReason`, `suppressOutput`, `systemMessage`,
/// `decision` (approve | block), `reason`; PreToolUse `permissionDecision` allow | deny | ask |
/// defer; PermissionRequest `decision` `{behavior: allow, updatedInput?, updatedPermissions?}`
/// or `{behavior: deny, message?, interrupt?}`. A `hookEventName` other than the event's is a
/// hook error. Exit 2 blocks with stderr; other non-zero exits are non-blocking errors (the call
/// proceeds unless the hook has `onFailure: "block"`: this oracle reads them as invalid).
mod claude {
    use super::Reading;
    use serde_json::Value;

    fn invalid(why: &str) -> Reading {
        Reading::Invalid(why.to_string())
    }

    pub fn read(event: &str, code: i32, stdout: &str, stderr: &str) -> Reading {
        match code {
            0 => {}
            2 => {
                return Reading::Deny {
                    reason: stderr.trim().to_string(),
                    stop: false,
                };
            }
            c => return invalid(&format!("non-blocking error: exit {c}")),
        }
        let t = stdout.trim();
        if t.is_empty() {
            return Reading::NoDecision;
        }
        let Ok(v) = serde_json::from_str::<Value>(t) else {
            // Plain text on stdout is shown, not a decision.
            return Reading::NoDecision;
        };
        let Some(m) = v.as_object() else {
            return invalid("not an object");
        };
        let stop = m.get("continue") == Some(&Value::Bool(false));
        for (k, want) in [("stopReason", "string"), ("systemMessage", "string")] {
            if m.get(k).is_some_and(|v| !v.is_string()) {
                return invalid(&format!("{k} must be a {want}"));
            }
        }
        let Some(h) = m.get("hookSpecificOutput") else {
            return if stop {
                Reading::Deny {
                    reason: String::new(),
                    stop,
                }
            } else {
                Reading::NoDecision
            };
        };
        if h.get("hookEventName").and_then(Value::as_str) != Some(event) {
            return invalid("hook returned incorrect event name");
        }
        let str_of = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        if event == "PreToolUse" {
            if h.get("permissionDecisionReason")
                .is_some_and(|r| !r.is_string())
            {
                return invalid("permissionDecisionReason must be a string");
            }
            return match h.get("permissionDecision").map(|d| d.as_str()) {
                None => Reading::NoDecision,
                Some(Some("allow")) if !stop => Reading::Allow,
                Some(Some("deny")) => Reading::Deny {
                    reason: str_of(h.get("permissionDecisionReason")).unwrap_or_default(),
                    stop,
                },
                Some(Some("allow" | "ask" | "defer")) if stop => Reading::Deny {
                    reason: String::new(),
                    stop,
                },
                Some(Some("ask")) => Reading::Ask,
                Some(Some("defer")) => Reading::NoDecision,
                _ => invalid("permissionDecision must be allow, deny, ask or defer"),
            };
        }
        let Some(d) = h.get("decision") else {
            return Reading::NoDecision;
        };
        match d.get("behavior").and_then(Value::as_str) {
            Some("allow") => Reading::Allow,
            Some("deny") => {
                if d.get("message").is_some_and(|m| !m.is_string())
                    || d.get("interrupt").is_some_and(|i| !i.is_boolean())
                {
                    return invalid("deny: message must be a string, interrupt a boolean");
                }
                Reading::Deny {
                    reason: str_of(d.get("message")).unwrap_or_default(),
                    stop: stop || d.get("interrupt") == Some(&Value::Bool(true)),
                }
            }
            _ => invalid("behavior must be allow or deny"),
        }
    }
}

/// Claude Code's `--permission-prompt-tool` result: one text item whose JSON is
/// `{behavior: "allow", updatedInput: {…}}` or `{behavior: "deny", message: "…"}`.
fn read_permission_tool(text: &str) -> Reading {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return Reading::Invalid("not JSON".into());
    };
    match v["behavior"].as_str() {
        Some("allow") if v["updatedInput"].is_object() => Reading::Allow,
        Some("deny") if v["message"].is_string() => Reading::Deny {
            reason: v["message"].as_str().unwrap_or("").to_string(),
            stop: false,
        },
        _ => Reading::Invalid(format!("unexpected {v}")),
    }
}

#[test]
fn the_oracles_reject_what_the_agents_reject() {
    let pre = "PreToolUse";
    let perm = "PermissionRequest";
    // The outputs that made Codex drop guardian's deny or report a failed hook.
    let breaker = json!({"hookSpecificOutput": {"hookEventName": pre, "permissionDecision": "deny",
        "permissionDecisionReason": "no"}, "continue": false, "stopReason": "stop"});
    assert!(matches!(
        codex::read(pre, 0, &breaker.to_string(), ""),
        Reading::Invalid(_)
    ));
    let allow =
        json!({"hookSpecificOutput": {"hookEventName": pre, "permissionDecision": "allow"}});
    assert!(matches!(
        codex::read(pre, 0, &allow.to_string(), ""),
        Reading::Invalid(_)
    ));
    let interrupt = json!({"hookSpecificOutput": {"hookEventName": perm,
        "decision": {"behavior": "deny", "message": "no", "interrupt": true}}});
    assert!(matches!(
        codex::read(perm, 0, &interrupt.to_string(), ""),
        Reading::Invalid(_)
    ));
    let empty_reason = json!({"hookSpecificOutput": {"hookEventName": pre, "permissionDecision": "deny", "permissionDecisionReason": " "}});
    assert!(matches!(
        codex::read(pre, 0, &empty_reason.to_string(), ""),
        Reading::Invalid(_)
    ));
    assert_eq!(codex::read(pre, 0, "", ""), Reading::NoDecision);
    assert_eq!(codex::read(pre, 0, "{}", ""), Reading::NoDecision);
    assert!(matches!(
        codex::read(pre, 2, "", "blocked"),
        Reading::Deny { .. }
    ));
    assert!(matches!(codex::read(pre, 1, "", "x"), Reading::Invalid(_)));
    // Claude Code accepts the breaker's shape and reads it as a stop.
    assert!(matches!(
        claude::read(pre, 0, &breaker.to_string(), ""),
        Reading::Deny { stop: true, .. }
    ));
    assert_eq!(claude::read(pre, 0, &allow.to_string(), ""), Reading::Allow);
    let wrong_event =
        json!({"hookSpecificOutput": {"hookEventName": perm, "permissionDecision": "deny"}});
    assert!(matches!(
        claude::read(pre, 0, &wrong_event.to_string(), ""),
        Reading::Invalid(_)
    ));
    assert!(matches!(
        claude::read(pre, 127, "", ""),
        Reading::Invalid(_)
    ));
}

/// The adapters under test.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Adapter {
    ClaudeHttp,
    ClaudeCommand,
    /// `guardian-hook claude-code`, the small binary.
    ClaudeFast,
    CodexHttp,
    CodexCommand,
    /// `guardian-hook codex`.
    CodexFast,
}

impl Adapter {
    fn codex(self) -> bool {
        matches!(
            self,
            Adapter::CodexHttp | Adapter::CodexCommand | Adapter::CodexFast
        )
    }
    fn agent(self) -> &'static str {
        if self.codex() { "codex" } else { "claude-code" }
    }
}

/// What the table expects an agent to read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Want {
    /// The call may run: Allow, or (Codex PreToolUse, which has no allow) no objection.
    Runs,
    /// Blocked.
    Blocked,
    /// Blocked, and the agent is told to stop (Claude Code `continue: false` / `interrupt`;
    /// Codex: "STOP" in the reason).
    BlockedStop,
    /// The user is asked (Claude Code PreToolUse `ask`; elsewhere no decision: the agent's own
    /// prompt).
    UserAsked,
    /// No decision.
    Nothing,
}

const POLICY: &str = "deny = [\"Bash(git push *)\"]\nallow = [\"Bash(git status)\"]\n";

struct Rig {
    router: axum::Router,
    server: Server,
    _reviewer: wiremock::MockServer,
    _dir: tempfile::TempDir,
}

impl Rig {
    /// The same config in-process (HTTP endpoints) and in a real server (command hooks): rules
    /// for git, and a fake reviewer that denies `make deploy` and fails (HTTP 500) otherwise.
    async fn new() -> Rig {
        use wiremock::matchers::{body_string_contains, method};
        let reviewer = wiremock::MockServer::start().await;
        wiremock::Mock::given(method("POST"))
            .and(body_string_contains("make deploy"))
            .respond_with(
                wiremock::ResponseTemplate::new(200)
                    .set_body_json(completion(&verdict("high", "low", "deny"))),
            )
            .with_priority(1)
            .mount(&reviewer)
            .await;
        wiremock::Mock::given(method("POST"))
            .respond_with(wiremock::ResponseTemplate::new(500))
            .with_priority(2)
            .mount(&reviewer)
            .await;
        let dir = tempfile::tempdir().expect("tempdir");
        let extra = format!(
            "{}max_attempts = 1\nmemory_ttl_s = 0\n",
            openai_reviewer(&reviewer.uri(), 5_000)
        );
        let text = format!(
            "[policy]\n{POLICY}\n{extra}\n[audit]\npath = \"{}\"\n",
            dir.path().join("inproc.jsonl").display()
        );
        let cfg = guardian::Config::parse(&text, "guardian.toml").expect("parses");
        let g = Arc::new(guardian::Guardian::from_config(cfg).expect("builds"));
        let router = guardian::server::router(g);
        let server = Server::start(dir.path(), &format!("{POLICY}\n{extra}"));
        Rig {
            router,
            server,
            _reviewer: reviewer,
            _dir: dir,
        }
    }

    /// Runs a hook input through an adapter: (exit code, stdout, stderr) as the agent sees them.
    async fn run(&self, adapter: Adapter, input: &Value, ask: bool) -> (i32, String, String) {
        match adapter {
            Adapter::ClaudeHttp | Adapter::CodexHttp => {
                use http_body_util::BodyExt;
                use tower::ServiceExt;
                let uri = format!(
                    "/v1/hooks/{}{}",
                    adapter.agent(),
                    if ask { "?unreviewed=ask" } else { "" }
                );
                let req = axum::http::Request::builder()
                    .method("POST")
                    .uri(uri)
                    .header("content-type", "application/json")
                    .body(axum::body::Body::from(input.to_string()))
                    .expect("request");
                let resp = self.router.clone().oneshot(req).await.expect("answer");
                // A non-2xx answer is a non-blocking error for Claude Code's HTTP hooks.
                assert_eq!(resp.status(), 200, "hook endpoints always answer 200");
                let bytes = resp.into_body().collect().await.expect("body").to_bytes();
                let text = String::from_utf8_lossy(&bytes).to_string();
                // Codex runs commands only: the command prints nothing for `{}`.
                let text = if adapter.codex() && text.trim() == "{}" {
                    String::new()
                } else {
                    text
                };
                (0, text, String::new())
            }
            Adapter::ClaudeCommand
            | Adapter::CodexCommand
            | Adapter::ClaudeFast
            | Adapter::CodexFast => {
                let fast = matches!(adapter, Adapter::ClaudeFast | Adapter::CodexFast);
                let mut args = if fast {
                    Vec::new()
                } else {
                    vec!["hook".to_string()]
                };
                args.extend([
                    adapter.agent().to_string(),
                    "--server".into(),
                    self.server.addr.clone(),
                ]);
                if ask {
                    args.extend(["--unreviewed".into(), "ask".into()]);
                }
                let input = input.to_string();
                let out = tokio::task::spawn_blocking(move || {
                    if fast {
                        run_program_with_stdin(env!("CARGO_BIN_EXE_guardian-hook"), &args, &input)
                    } else {
                        run_with_stdin(&args, &input)
                    }
                })
                .await
                .expect("runs");
                (
                    out.status.code().unwrap_or(-1),
                    String::from_utf8_lossy(&out.stdout).to_string(),
                    String::from_utf8_lossy(&out.stderr).to_string(),
                )
            }
        }
    }
}

/// A hook input for `tool` with `tool_input`, in a session of its own unless one is given.
fn input(adapter: Adapter, event: &str, tool: &str, tool_input: Value, session: &str) -> Value {
    let mut v = json!({
        "session_id": session, "transcript_path": null, "cwd": "/work/repo",
        "hook_event_name": event, "permission_mode": "default",
        "tool_name": tool, "tool_input": tool_input
    });
    if adapter.codex() && event == "PermissionRequest" {
        // An approval for a command that stays inside the sandbox (escalations have their own
        // tests): the command itself is judged.
        v["approval_context"] = json!({"sandbox_permissions": "use_default"});
    }
    v
}

fn read(adapter: Adapter, event: &str, (code, out, err): &(i32, String, String)) -> Reading {
    if adapter.codex() {
        codex::read(event, *code, out, err)
    } else {
        claude::read(event, *code, out, err)
    }
}

fn check(adapter: Adapter, event: &str, want: Want, got: &Reading, what: &str) {
    let ctx = format!("{adapter:?} {event} {what}: {got:?}");
    assert!(
        !matches!(got, Reading::Invalid(_)),
        "rejected by the agent: {ctx}"
    );
    match want {
        Want::Runs => {
            let ok = match got {
                Reading::Allow => true,
                Reading::NoDecision => adapter.codex() && event == "PreToolUse",
                _ => false,
            };
            assert!(ok, "should run: {ctx}");
        }
        Want::Blocked => assert!(matches!(got, Reading::Deny { .. }), "should block: {ctx}"),
        Want::BlockedStop => match got {
            Reading::Deny { stop, reason } => {
                if adapter.codex() {
                    assert!(reason.contains("STOP"), "the stop is in the reason: {ctx}");
                } else {
                    assert!(*stop, "Claude Code is told to stop: {ctx}");
                }
            }
            _ => panic!("should block and stop: {ctx}"),
        },
        Want::UserAsked => {
            let ok = match got {
                Reading::Ask => !adapter.codex() && event == "PreToolUse",
                Reading::NoDecision => adapter.codex() || event == "PermissionRequest",
                _ => false,
            };
            assert!(ok, "the user should be asked: {ctx}");
        }
        Want::Nothing => assert_eq!(*got, Reading::NoDecision, "{ctx}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_kind_holds_under_every_agents_parser() {
    let rig = Rig::new().await;
    let bash = |c: &str| json!({"command": c});
    // (what, tool, tool_input, unreviewed=ask?, expected)
    let table: Vec<(&str, &str, Value, bool, Want)> = vec![
        ("rule allow", "Bash", bash("git status"), false, Want::Runs),
        (
            "rule deny",
            "Bash",
            bash("git push --force origin main"),
            false,
            Want::Blocked,
        ),
        (
            "rule deny, ask mode",
            "Bash",
            bash("git push --force origin main"),
            true,
            Want::Blocked,
        ),
        (
            "reviewer deny",
            "Bash",
            bash("make deploy"),
            false,
            Want::Blocked,
        ),
        (
            "reviewer deny, ask mode",
            "Bash",
            bash("make deploy"),
            true,
            Want::Blocked,
        ),
        (
            "reviewer failure",
            "Bash",
            bash("make flaky"),
            false,
            Want::Blocked,
        ),
        (
            "reviewer failure, ask mode",
            "Bash",
            bash("make flaky"),
            true,
            Want::UserAsked,
        ),
        (
            "internal failure (no command)",
            "Bash",
            json!({}),
            false,
            Want::Blocked,
        ),
        (
            "unknown tool",
            "FrobnicateTool",
            json!({"x": 1}),
            false,
            Want::Blocked,
        ),
        (
            "unknown tool, ask mode",
            "FrobnicateTool",
            json!({"x": 1}),
            true,
            Want::Nothing,
        ),
        (
            "subagent tool",
            "Agent",
            json!({"prompt": "look"}),
            false,
            Want::Nothing,
        ),
        (
            "question tool",
            "AskUserQuestion",
            json!({"questions": []}),
            false,
            Want::Nothing,
        ),
        (
            "plan mode",
            "EnterPlanMode",
            json!({}),
            false,
            Want::Nothing,
        ),
    ];
    let adapters = [
        Adapter::ClaudeHttp,
        Adapter::ClaudeCommand,
        Adapter::ClaudeFast,
        Adapter::CodexHttp,
        Adapter::CodexCommand,
        Adapter::CodexFast,
    ];
    let mut n = 0;
    for adapter in adapters {
        for event in ["PreToolUse", "PermissionRequest"] {
            for (what, tool, ti, ask, want) in &table {
                n += 1;
                let session = format!("s-{n}");
                let out = rig
                    .run(
                        adapter,
                        &input(adapter, event, tool, ti.clone(), &session),
                        *ask,
                    )
                    .await;
                check(adapter, event, *want, &read(adapter, event, &out), what);
            }
            // The breaker: three denials in one session; the third is still a deny, and the
            // agent is told to stop.
            n += 1;
            let session = format!("s-{n}");
            let push = input(
                adapter,
                event,
                "Bash",
                bash("git push --force origin main"),
                &session,
            );
            for i in 0..3 {
                let got = read(adapter, event, &rig.run(adapter, &push, false).await);
                let want = if i < 2 {
                    Want::Blocked
                } else {
                    Want::BlockedStop
                };
                check(
                    adapter,
                    event,
                    want,
                    &got,
                    &format!("breaker, denial {}", i + 1),
                );
            }
        }
    }
    // Guardian unreachable: the command hooks block (exit 2 with a reason), for both agents.
    let mut rig = rig;
    rig.server.stop();
    for adapter in [
        Adapter::ClaudeCommand,
        Adapter::CodexCommand,
        Adapter::ClaudeFast,
        Adapter::CodexFast,
    ] {
        for event in ["PreToolUse", "PermissionRequest"] {
            let out = rig
                .run(
                    adapter,
                    &input(adapter, event, "Bash", bash("git status"), "down"),
                    false,
                )
                .await;
            check(
                adapter,
                event,
                Want::Blocked,
                &read(adapter, event, &out),
                "server down",
            );
        }
    }
}

/// Claude Code's `-p` permission tool (`guardian mcp`): headless, so an unknown tool and an
/// unreviewed action are denials; no-op tools are allowed with their input unchanged.
#[tokio::test]
async fn the_permission_prompt_tool_answers_in_its_contract() {
    use guardian::integrations::mcp::{InProcess, approve};
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    let decider = InProcess(h.guardian.clone(), "mcp");
    let cases = [
        ("Bash", json!({"command": "git status"}), Want::Runs),
        (
            "Bash",
            json!({"command": "git push origin main"}),
            Want::Blocked,
        ),
        ("Bash", json!({"command": "make flaky"}), Want::Blocked),
        ("FrobnicateTool", json!({}), Want::Blocked),
        ("Agent", json!({"prompt": "x"}), Want::Runs),
    ];
    for (tool, ti, want) in cases {
        let out = approve(
            &json!({"tool_name": tool, "input": ti}),
            &decider,
            "/work/repo",
        )
        .await;
        let got = read_permission_tool(&out.to_string());
        match want {
            Want::Runs => assert_eq!(got, Reading::Allow, "{tool}: {out}"),
            _ => assert!(matches!(got, Reading::Deny { .. }), "{tool}: {out}"),
        }
    }
}
