//! Codex: its additions to Claude Code's hook format, its hook output contract, its
//! `config.toml` hooks (and their trust), its wiring for `guardian run` and its rollouts for
//! eval.
//!
//! This module owns everything that is Codex's own. Codex sends Claude Code's hook input format
//! ([`super::claude_code::HookInput`]) with its own tools (`apply_patch` patches become one
//! write per file, the shell tool's older names `shell` / `exec_command` / `local_shell`), its
//! network approvals (a host a command wants to reach, judged beside it) and its
//! PermissionRequest's `approval_context` (an [`Escalation`]); its hook parser rejects fields
//! Claude Code accepts ([`render`]); its hooks run only once trusted ([`codex_hook_hash`]); its
//! rollouts (`~/.codex/sessions/…/rollout-*.jsonl`) are both the live review transcript
//! ([`rollout_entry`]) and, read whole, the sessions `guardian traces import codex` labels
//! ([`read_session`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::claude_code::{
    HookError, HookInput, content_text, entry, need, s, sandbox_escalation, str_of, unsandboxed,
};
use super::contract::{Event, HookAnswer, specific_output};
use super::install::{
    HOOK_TIMEOUT_S, InstallError, Options, Plan, Scope, SettingsError, command_note, hook_command,
    invalid_settings, read_existing, settings_path,
};
use super::run::{Endpoint, RunError};
use super::{
    Agent, AgentIntegration, Hooks, Info, Merged, RecordedCall, RecordedSession, SessionReader,
    Wiring,
};
use crate::request::{Action, Escalation, EscalationKind, Role, TranscriptEntry};
use crate::verdict::Decision;

/// Codex's facts.
pub const INFO: Info = Info {
    name: "codex",
    title: "Codex",
    program: "codex",
    hooks: true,
};

/// Codex's integration.
pub struct Integration;

/// Codex's tools that touch nothing outside the conversation: they pass with no decision.
pub const NO_OP_TOOLS: &[&str] = &["update_plan"];

/// The tools guardian judges in Codex, as a hook `matcher` (`apply_patch` also matches Codex's
/// `Write`/`Edit` aliases).
pub const CODEX_MATCHER: &str = "Bash|apply_patch|mcp__.*";

/// Codex's normalised texts for a human denial.
pub const REJECTIONS: [&str; 2] = ["exec command rejected by user", "patch rejected by user"];

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
        Some(match tool {
            // Codex names its shell tool `Bash` in hook inputs (Claude Code's); older builds and
            // forks say `shell`.
            "shell" | "exec_command" | "local_shell" => {
                need(input, "command", tool).map(|command| {
                    vec![Action::Shell {
                        command,
                        cwd: cwd.map(str::to_string),
                    }]
                })
            }
            "apply_patch" => s(input, "command")
                .or_else(|| s(input, "patch"))
                .or_else(|| s(input, "input"))
                .ok_or(HookError::NoPatch)
                .and_then(|patch| patch_actions(&patch, cwd)),
            _ => return None,
        })
    }

    fn extra_actions(
        &self,
        input: &HookInput,
        tool_input: &Value,
    ) -> Result<Vec<Action>, HookError> {
        let network = input
            .network_approval_context
            .as_ref()
            .or_else(|| tool_input.get("network_approval_context"))
            .or_else(|| tool_input.get("networkApprovalContext"))
            .filter(|v| !v.is_null());
        // Codex asks for network access on behalf of a command: the command runs either way, so
        // both the command and the host it wants to reach must be allowed.
        network.map(network_action).into_iter().collect()
    }

    fn escalation(
        &self,
        input: &HookInput,
        tool_input: &Value,
    ) -> Result<Option<Escalation>, HookError> {
        if input.hook_event_name == "PermissionRequest" {
            approval_escalation(input, tool_input)
        } else {
            Ok(sandbox_escalation(tool_input))
        }
    }

    fn transcript_line(&self, line: &Value) -> Option<Vec<TranscriptEntry>> {
        // A Codex rollout line (its hooks' `transcript_path` names the session's rollout).
        if line.get("type").and_then(Value::as_str) != Some("response_item") {
            return None;
        }
        Some(
            rollout_entry(line.get("payload").unwrap_or(&Value::Null))
                .into_iter()
                .collect(),
        )
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
            Scope::User => o
                .codex_home
                .clone()
                .unwrap_or_else(|| o.home.join(".codex"))
                .join("config.toml"),
            Scope::Project => o.project_dir.join(".codex/config.toml"),
        }
    }

    fn merge_settings(&self, old: Option<&str>, o: &Options) -> Result<Merged, SettingsError> {
        merge_codex(old, o)
    }

    fn complete_plans(&self, o: &Options, plans: &mut Vec<Plan>) -> Result<(), InstallError> {
        if o.trust {
            trust_plans(o, plans)?;
        }
        Ok(())
    }

    fn wire(&self, args: &[String], ep: &Endpoint) -> Result<Wiring, RunError> {
        Ok(Wiring {
            args: codex_args(args, ep)?,
            ..Wiring::default()
        })
    }

    fn session_reader(&self) -> Option<SessionReader> {
        Some(read_session)
    }
}

/// The escalation of a Codex PermissionRequest. Codex fires it where it would show its own
/// approval prompt, which asks for more than the sandbox gives. When the input carries
/// `approval_context` (`sandbox_permissions`: `use_default` | `require_escalated` |
/// `with_additional_permissions`, with `additional_permissions.file_system.read|write` absolute
/// paths and `network.enabled`; `justification`), it is read exactly; without it the request is
/// taken as the widest one, `require_escalated` (fail closed), with `tool_input.description`
/// (Codex's justification text) as the justification.
fn approval_escalation(input: &HookInput, ti: &Value) -> Result<Option<Escalation>, HookError> {
    let ctx = input
        .approval_context
        .as_ref()
        .or_else(|| ti.get("approval_context"))
        .filter(|v| !v.is_null());
    let Some(ctx) = ctx else {
        return Ok(unsandboxed(s(ti, "description")));
    };
    let justification = s(ctx, "justification").or_else(|| s(ti, "description"));
    match s(ctx, "sandbox_permissions").as_deref() {
        Some("use_default") => Ok(None),
        None | Some("require_escalated") => Ok(unsandboxed(justification)),
        Some("with_additional_permissions") => {
            let extra = ctx.get("additional_permissions").unwrap_or(&Value::Null);
            let paths = |key: &str| -> Result<Vec<String>, HookError> {
                let field = format!("approval_context.additional_permissions.file_system.{key}");
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
    }
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
        Ok(u) if u.host_str().is_some() => Ok(Action::fetch(url)),
        _ => Err(HookError::InvalidHost(host)),
    }
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

/// A Codex rollout `response_item`'s payload as a transcript entry: user and assistant messages
/// (not the context Codex injects into every session), tool calls and their outputs.
pub fn rollout_entry(p: &Value) -> Option<TranscriptEntry> {
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

/// Codex (openai/codex `codex-rs/hooks/src/engine/output_parser.rs`): any of `continue: false`,
/// `stopReason`, `suppressOutput`, a PreToolUse `permissionDecision` other than deny, a deny
/// without a reason, `updatedInput`, or a PermissionRequest `interrupt: true` marks the whole
/// output invalid and the decision is dropped (the call runs). So: PreToolUse is a deny with a
/// reason or nothing; PermissionRequest is `decision.behavior` allow or deny (with a message),
/// nothing else; a breaker's stop instruction lives in the reason text; "ask" is no output
/// (Codex's own approval flow applies).
pub fn render(event: Event, answer: &HookAnswer) -> Value {
    let specific = |fields: Value| specific_output(event, fields);
    let reason = |message: &str| {
        if message.trim().is_empty() {
            "denied by guardian".to_string()
        } else {
            message.to_string()
        }
    };
    match (event, answer) {
        (_, HookAnswer::NoDecision) | (_, HookAnswer::Ask { .. }) => json!({}),
        (Event::PreToolUse, HookAnswer::Allow { .. }) => json!({}),
        (Event::PreToolUse, HookAnswer::Deny { message, .. }) => specific(json!({
            "permissionDecision": "deny", "permissionDecisionReason": reason(message)
        })),
        (Event::PermissionRequest, HookAnswer::Allow { .. }) => {
            specific(json!({"decision": {"behavior": "allow"}}))
        }
        (Event::PermissionRequest, HookAnswer::Deny { message, .. }) => {
            specific(json!({"decision": {"behavior": "deny", "message": reason(message)}}))
        }
    }
}

/// Codex's hook groups: `(event, matcher, command)`.
pub fn codex_groups(o: &Options) -> Vec<(&'static str, &'static str, String)> {
    let cmd = hook_command(o, INFO.name);
    vec![
        ("PreToolUse", CODEX_MATCHER, cmd.clone()),
        ("PermissionRequest", "Bash", cmd),
    ]
}

/// Codex's trust hash of one command hook: `sha256:` and the hex SHA-256 of the compact,
/// key-sorted JSON `{"event_name", "hooks": [{"async", "command", "timeout", "type"}],
/// "matcher"}` (openai/codex `codex-rs/hooks/src/engine/discovery.rs` `command_hook_hash`, with
/// `codex-rs/config/src/fingerprint.rs` `version_for_toml`; checked against Codex 0.171's own
/// `hooks/list` by the end-to-end suite). The command text is part of it: a changed `--server`
/// needs trusting again.
pub fn codex_hook_hash(event_key: &str, matcher: &str, command: &str, timeout: u64) -> String {
    use sha2::{Digest, Sha256};
    let s = |t: &str| serde_json::to_string(t).unwrap_or_default();
    let text = format!(
        "{{\"event_name\":{},\"hooks\":[{{\"async\":false,\"command\":{},\"timeout\":{timeout},\"type\":\"command\"}}],\"matcher\":{}}}",
        s(event_key),
        s(command),
        s(matcher)
    );
    format!("sha256:{}", hex::encode(Sha256::digest(text.as_bytes())))
}

/// `(event, event key, group index, matcher, command)` of guardian's hook groups in a merged
/// Codex config.
fn codex_group_indices(text: &str) -> Vec<(String, &'static str, usize, String, String)> {
    let Ok(v) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (event, key) in [
        ("PreToolUse", "pre_tool_use"),
        ("PermissionRequest", "permission_request"),
    ] {
        let groups = v
            .get("hooks")
            .and_then(|h| h.get(event))
            .and_then(toml::Value::as_array);
        for (i, g) in groups.into_iter().flatten().enumerate() {
            let command = g
                .get("hooks")
                .and_then(|h| h.get(0))
                .and_then(|h| h.get("command"))
                .and_then(toml::Value::as_str)
                .unwrap_or("");
            if command.contains(" hook codex") {
                let matcher = g.get("matcher").and_then(toml::Value::as_str).unwrap_or("");
                out.push((
                    event.to_string(),
                    key,
                    i,
                    matcher.to_string(),
                    command.to_string(),
                ));
            }
        }
    }
    out
}

/// Adds `[hooks.state."<file>:<event>:<group>:0"] trusted_hash` for guardian's groups.
fn add_codex_trust(
    text: &str,
    hooks_file: &Path,
    groups: &[(String, &'static str, usize, String, String)],
) -> Result<(String, Vec<String>), SettingsError> {
    use toml_edit::{DocumentMut, Item, Table, value};
    let mut doc: DocumentMut = text.parse().map_err(SettingsError::NotToml)?;
    let hooks = doc.entry("hooks").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let hooks = hooks.as_table_mut().ok_or(SettingsError::InlineHooks)?;
    let state = hooks.entry("state").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let state = state
        .as_table_mut()
        .ok_or_else(|| SettingsError::NotATable("hooks.state".into()))?;
    let mut changes = Vec::new();
    for (event, key, i, matcher, command) in groups {
        let id = format!("{}:{key}:{i}:0", hooks_file.display());
        let hash = codex_hook_hash(key, matcher, command, HOOK_TIMEOUT_S);
        let current = state
            .get(&id)
            .and_then(|t| t.get("trusted_hash"))
            .and_then(Item::as_str);
        if current != Some(hash.as_str()) {
            let entry = state
                .entry(&id)
                .or_insert_with(|| Item::Table(Table::new()));
            let Some(entry) = entry.as_table_like_mut() else {
                return Err(SettingsError::NotATable(format!("hooks.state.{id:?}")));
            };
            entry.insert("trusted_hash", value(hash));
            changes.push(format!("trusted guardian's {event} hook (hooks.state)"));
        }
    }
    Ok((doc.to_string(), changes))
}

fn merge_codex(old: Option<&str>, o: &Options) -> Result<Merged, SettingsError> {
    use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};
    let mut doc: DocumentMut = old.unwrap_or("").parse().map_err(SettingsError::NotToml)?;
    let mut changes = Vec::new();
    // [features] hooks = true: Codex runs no hook without it.
    let features = doc
        .entry("features")
        .or_insert_with(|| Item::Table(Table::new()));
    let Some(features) = features.as_table_like_mut() else {
        return Err(SettingsError::NotATable("features".into()));
    };
    if features.get("hooks").and_then(Item::as_bool) != Some(true) {
        features.insert("hooks", value(true));
        changes.push("features.hooks = true".to_string());
    }
    let hooks = doc.entry("hooks").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let Some(hooks) = hooks.as_table_mut() else {
        return Err(SettingsError::InlineHooks);
    };
    for (event, matcher, command) in codex_groups(o) {
        let groups = hooks
            .entry(event)
            .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()));
        let Some(groups) = groups.as_array_of_tables_mut() else {
            return Err(SettingsError::NotArrayOfTables(event.to_string()));
        };
        let mut group = Table::new();
        group.insert("matcher", value(matcher));
        let mut handler = Table::new();
        handler.insert("type", value("command"));
        handler.insert("command", value(command.as_str()));
        handler.insert("timeout", value(HOOK_TIMEOUT_S as i64));
        let mut handlers = ArrayOfTables::new();
        handlers.push(handler);
        group.insert("hooks", Item::ArrayOfTables(handlers));
        let is_ours = |t: &Table| {
            t.get("hooks")
                .and_then(Item::as_array_of_tables)
                .is_some_and(|hs| {
                    hs.iter().any(|h| {
                        h.get("command").and_then(Item::as_str).is_some_and(|c| {
                            c.contains(" hook codex") || c.contains("guardian-hook codex")
                        })
                    })
                })
        };
        let same = |t: &Table| {
            t.get("matcher").and_then(Item::as_str) == Some(matcher)
                && t.get("hooks")
                    .and_then(Item::as_array_of_tables)
                    .is_some_and(|hs| {
                        hs.len() == 1
                            && hs.iter().all(|h| {
                                h.get("command").and_then(Item::as_str) == Some(command.as_str())
                                    && h.get("type").and_then(Item::as_str) == Some("command")
                                    && h.get("timeout").and_then(Item::as_integer)
                                        == Some(HOOK_TIMEOUT_S as i64)
                            })
                    })
        };
        let found = groups.iter().position(is_ours);
        match found {
            Some(i) if groups.get(i).is_some_and(same) => {}
            Some(i) => {
                if let Some(t) = groups.get_mut(i) {
                    *t = group;
                }
                changes.push(format!("replaced guardian's hooks.{event}[{i}]"));
            }
            None => {
                groups.push(group);
                changes.push(format!("added [[hooks.{event}]] (matcher {matcher:?})"));
            }
        }
    }
    let trust_note = if o.trust {
        "guardian's hooks are recorded as trusted in $CODEX_HOME/config.toml: Codex, `codex exec` included, runs them"
    } else {
        "Codex runs a new or changed hook only after it is trusted: review it with /hooks in the Codex TUI, or install with --trust"
    };
    let notes = vec![
        trust_note.to_string(),
        command_note(o.hook_program()),
        format!(
            "start the server first: guardian serve (answers on {})",
            o.server
        ),
    ];
    Ok((doc.to_string(), changes, notes))
}

/// With `--trust`, guardian's hooks recorded as trusted in the user's `$CODEX_HOME/config.toml`
/// (`[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash`), as `/hooks` would, so an
/// unattended `codex exec` runs them: in the settings file's own plan when that is the user's
/// config, else in a second plan.
fn trust_plans(o: &Options, plans: &mut Vec<Plan>) -> Result<(), InstallError> {
    let Some(first) = plans.first_mut() else {
        return Ok(());
    };
    let path = first.path.clone();
    let user = Options {
        scope: Scope::User,
        ..o.clone()
    };
    let user_path = settings_path(&user);
    let hooks_file = crate::normalize::absolute(&path);
    let groups = codex_group_indices(&first.new);
    if user_path == path {
        let (text, changes) =
            add_codex_trust(&first.new, &hooks_file, &groups).map_err(invalid_settings(&path))?;
        first.new = text;
        first.changes.extend(changes);
    } else {
        let old = read_existing(&user_path)?;
        let (new, changes) = add_codex_trust(old.as_deref().unwrap_or(""), &hooks_file, &groups)
            .map_err(invalid_settings(&user_path))?;
        plans.push(Plan {
            path: user_path,
            old,
            new,
            changes,
            notes: vec![
                "Codex reads a project's .codex/config.toml only in a trusted project ([projects.\"<path>\"] trust_level = \"trusted\" in your Codex config); for unattended runs prefer --scope user".into(),
            ],
        });
    }
    Ok(())
}

/// The config file Codex names the layer of its `-c` overrides by, in hook trust keys
/// (`hooks/list` reports it with `source: "sessionFlags"`).
pub const CODEX_SESSION_FLAGS_FILE: &str = "/<session-flags>/config.toml";

/// Codex: guardian's hook groups as `-c` overrides (`hooks.PreToolUse=[…]`,
/// `hooks.PermissionRequest=[…]`) placed before the user's arguments, so they apply to whatever
/// subcommand follows (`codex -c … exec …`), and a `hooks.state={…}` override that trusts
/// exactly those two hooks for this run (Codex's own trust hash, keyed by
/// [`CODEX_SESSION_FLAGS_FILE`]): without it Codex skips untrusted hooks silently, and
/// `--dangerously-bypass-hook-trust` would also run every other untrusted hook. Codex adds the
/// overrides as one more layer: the user's own hooks and trust records still apply.
pub fn codex_args(args: &[String], ep: &Endpoint) -> Result<Vec<String>, RunError> {
    use toml_edit::{Array, InlineTable, Value as T};
    let mut out = Vec::new();
    let mut state = InlineTable::new();
    for (event, matcher, command) in codex_groups(&ep.hook_options(Agent::Codex)) {
        let timeout = HOOK_TIMEOUT_S;
        let mut hook = InlineTable::new();
        hook.insert("type", "command".into());
        hook.insert("command", command.as_str().into());
        hook.insert("timeout", i64::try_from(timeout).unwrap_or(i64::MAX).into());
        let mut handlers = Array::new();
        handlers.push(hook);
        let mut group = InlineTable::new();
        group.insert("matcher", matcher.into());
        group.insert("hooks", T::Array(handlers));
        let mut groups = Array::new();
        groups.push(group);
        out.push("-c".to_string());
        out.push(format!("hooks.{event}={groups}"));
        let key = match event {
            "PreToolUse" => "pre_tool_use",
            _ => "permission_request",
        };
        let mut trusted = InlineTable::new();
        trusted.insert(
            "trusted_hash",
            codex_hook_hash(key, matcher, &command, timeout).into(),
        );
        state.insert(
            format!("{CODEX_SESSION_FLAGS_FILE}:{key}:0:0"),
            T::InlineTable(trusted),
        );
    }
    out.push("-c".to_string());
    out.push(format!("hooks.state={state}"));
    out.extend(args.iter().cloned());
    Ok(out)
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

/// Reads a Codex rollout (`~/.codex/sessions/…/rollout-*.jsonl`: `{timestamp, type, payload}`)
/// for eval. The normalised human denials ([`REJECTIONS`]) are a deny; a call that Codex asked
/// the user to approve (`exec_approval_request` / `apply_patch_approval_request`) and that then
/// ran is an allow; every other call is unlabeled (that it ran says only that some rule let it).
pub fn read_session(text: &str) -> RecordedSession {
    let mut r = Rollout::default();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(p) = v.get("payload") else {
            continue;
        };
        match str_of(&v, "type") {
            Some("session_meta") => {
                r.s.id = r.s.id.or_else(|| str_of(p, "id").map(str::to_string));
                r.cwd = str_of(p, "cwd").map(str::to_string).or(r.cwd);
            }
            Some("turn_context") => {
                r.cwd = str_of(p, "cwd").map(str::to_string).or(r.cwd);
            }
            Some("event_msg") => {
                if matches!(
                    str_of(p, "type"),
                    Some("exec_approval_request" | "apply_patch_approval_request")
                ) && let Some(id) = str_of(p, "call_id")
                {
                    r.asked.insert(id.to_string());
                }
            }
            Some("response_item") => r.item(p),
            _ => {}
        }
    }
    let Rollout {
        mut s,
        outputs,
        asked,
        ..
    } = r;
    for call in &mut s.calls {
        let (label, notes) = match outputs.get(&call.id).map(|o| o.trim_start()) {
            Some(o) if REJECTIONS.iter().any(|r| o.starts_with(r)) => (
                Some(Decision::Deny),
                "the user rejected this call at Codex's approval prompt",
            ),
            Some(_) if asked.contains(&call.id) => (
                Some(Decision::Allow),
                "the user approved this call at Codex's approval prompt",
            ),
            Some(_) => (
                None,
                "ran in Codex without an approval prompt (not a recorded human decision)",
            ),
            None => (None, "no output recorded for this call"),
        };
        call.label = label;
        call.notes = notes.to_string();
    }
    s
}

/// A rollout being read.
#[derive(Default)]
struct Rollout {
    s: RecordedSession,
    /// The session's working directory so far.
    cwd: Option<String>,
    /// Call id → the tool output text.
    outputs: HashMap<String, String>,
    /// Calls Codex asked the human to approve.
    asked: HashSet<String>,
}

impl Rollout {
    /// A `response_item`'s payload: a message, a tool call or a tool's output.
    fn item(&mut self, p: &Value) {
        match str_of(p, "type") {
            Some("message") => {
                let role = match str_of(p, "role") {
                    Some("user") => Role::User,
                    Some("assistant") => Role::Assistant,
                    _ => return,
                };
                let text = content_text(p.get("content"));
                // Context Codex injects into every session is not the user speaking.
                let t = text.trim_start();
                if t.is_empty()
                    || t.starts_with("<environment_context>")
                    || t.starts_with("<user_instructions>")
                    || t.starts_with("# AGENTS.md")
                {
                    return;
                }
                self.s.entries.push(entry(role, &text, None));
            }
            Some("function_call" | "custom_tool_call" | "local_shell_call") => self.call(p),
            Some("function_call_output" | "custom_tool_call_output") => {
                let raw = content_text(p.get("output"));
                // Shell output is often `{"output": "...", "metadata": {...}}` in a string.
                let out = serde_json::from_str::<Value>(&raw)
                    .ok()
                    .and_then(|o| str_of(&o, "output").map(str::to_string))
                    .unwrap_or(raw);
                if let Some(id) = str_of(p, "call_id") {
                    self.outputs.insert(id.to_string(), out.clone());
                }
                self.s.entries.push(entry(Role::Tool, &out, None));
            }
            _ => {}
        }
    }

    /// A tool call: a case when guardian judges the tool, and an entry either way.
    fn call(&mut self, p: &Value) {
        let Some(id) = str_of(p, "call_id").or_else(|| str_of(p, "id")) else {
            return;
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
            .or_else(|| self.cwd.clone());
        if let Some((tool, input)) = codex_tool(&name, &args) {
            self.s.calls.push(RecordedCall {
                id: id.to_string(),
                tool,
                input,
                cwd: wd,
                before: self.s.entries.len(),
                label: None,
                notes: String::new(),
            });
        }
        self.s.entries.push(entry(
            Role::Assistant,
            &format!("[tool call {name}] {args}"),
            Some(&name),
        ));
    }
}
