//! `guardian run`: one unattended agent run behind guardian.
//!
//! This module owns wiring an agent to a guardian server for one run only — the extra
//! command-line arguments and environment variables, never a change to the user's own settings
//! files — and running the agent: stdio passed through, SIGINT / SIGTERM / SIGHUP forwarded, its
//! exit status turned into an exit code. Starting the server and printing the decision summary
//! are the CLI's ([`crate::server::serve_until`], [`crate::audit_report`]).
//!
//! | agent | how it is wired |
//! |---|---|
//! | Claude Code (`claude`) | `--settings '<json>'` with guardian's PreToolUse hook (merged into a `--settings` the command already has) and `disableAllHooks: false` |
//! | Codex (`codex`) | `-c` overrides: guardian's PreToolUse and PermissionRequest hooks, and trust for exactly those two ([`codex_args`]) |
//! | OpenCode (`opencode`, `opencode serve`) | `OPENCODE_CONFIG_CONTENT` asking for every bash / edit / webfetch / external-directory call, `--port`, and the bridge answering them; `opencode run` is refused ([`opencode_args`]) |
//! | anything else | only `GUARDIAN_URL` (and `GUARDIAN_TOKEN`): a custom bot calls `/v1/review` itself |

use std::path::PathBuf;

use serde_json::{Value, json};

use super::install::{HookKind, Options, Scope, Target, claude_code_entry, codex_groups};
use crate::config::Unreviewed;

/// Which agent a command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    /// Claude Code (`claude -p …`).
    ClaudeCode,
    /// Codex (`codex exec …`).
    Codex,
    /// OpenCode (the TUI or `opencode serve`; `opencode run` answers its own permission
    /// requests and is refused).
    Opencode,
    /// Anything else: guardian exports `GUARDIAN_URL` and wires nothing.
    Generic,
}

impl Agent {
    /// The agent a command's program name says (`claude`, `codex`, `opencode`; a path's file name
    /// counts), or [`Agent::Generic`].
    pub fn detect(program: &str) -> Agent {
        let name = std::path::Path::new(program)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(program);
        match name {
            "claude" => Agent::ClaudeCode,
            "codex" => Agent::Codex,
            "opencode" => Agent::Opencode,
            _ => Agent::Generic,
        }
    }

    /// The name in messages and the summary.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Opencode => "opencode",
            Agent::Generic => "generic",
        }
    }
}

/// The guardian a run's agent talks to.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The server's base URL, e.g. `http://127.0.0.1:41234`.
    pub url: String,
    /// A bearer token for it, when its `[auth]` needs one.
    pub token: Option<String>,
    /// How the agent's hooks start guardian: the absolute path of this binary.
    pub guardian: String,
}

/// The agent's command as it will be started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wired {
    /// The program.
    pub program: String,
    /// Its arguments, guardian's included.
    pub args: Vec<String>,
    /// Variables added to its environment.
    pub env: Vec<(String, String)>,
    /// OpenCode: the server URL the bridge answers permission requests of.
    pub opencode: Option<String>,
}

/// Why a run could not be wired or started.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Nothing after `--`.
    #[error("no agent command given after --")]
    NoCommand,
    /// The command turns off what guardian would be wired through; running it would let every
    /// action through unchecked.
    #[error("{0}")]
    Unenforceable(String),
    /// A settings value on the agent's command line could not be merged.
    #[error("{flag}: {message}")]
    Settings {
        /// The flag, e.g. `--settings`.
        flag: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The agent could not be started or waited for.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
}

fn install_options(ep: &Endpoint, target: Target) -> Options {
    Options {
        target,
        scope: Scope::User,
        server: ep.url.clone(),
        command: ep.guardian.clone(),
        hook: HookKind::Command,
        unreviewed: Some(Unreviewed::Deny),
        project_dir: PathBuf::new(),
        home: PathBuf::new(),
        codex_home: None,
        xdg_config_home: None,
        trust: false,
    }
}

/// Wires `command` (program and arguments) to `ep` as `agent`.
pub fn wire(agent: Agent, command: &[String], ep: &Endpoint) -> Result<Wired, RunError> {
    let (program, rest) = command.split_first().ok_or(RunError::NoCommand)?;
    let mut env = vec![("GUARDIAN_URL".to_string(), ep.url.clone())];
    let mut opencode = None;
    if let Some(t) = &ep.token {
        env.push((crate::transport::TOKEN_ENV.to_string(), t.clone()));
    }
    let args = match agent {
        Agent::ClaudeCode => claude_code_args(rest, ep)?,
        Agent::Codex => codex_args(rest, ep)?,
        Agent::Opencode => {
            env.push((
                "OPENCODE_CONFIG_CONTENT".to_string(),
                opencode_config_content(std::env::var("OPENCODE_CONFIG_CONTENT").ok().as_deref())?,
            ));
            let (args, port) = opencode_args(rest, free_port()?)?;
            opencode = Some(format!("http://127.0.0.1:{port}"));
            args
        }
        Agent::Generic => rest.to_vec(),
    };
    Ok(Wired {
        program: program.clone(),
        args,
        env,
        opencode,
    })
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

/// The value of `--flag value` or `--flag=value` in `args` (options only: not after `--`), with
/// the indices it occupies.
fn option_value(args: &[String], flag: &str) -> Option<(usize, usize, String)> {
    let eq = format!("{flag}=");
    for (i, a) in args.iter().enumerate() {
        if a == "--" {
            return None;
        }
        if a == flag {
            return args.get(i + 1).map(|v| (i, i + 1, v.clone()));
        }
        if let Some(v) = a.strip_prefix(&eq) {
            return Some((i, i, v.to_string()));
        }
    }
    None
}

fn has_flag(args: &[String], flag: &str) -> bool {
    args.iter().take_while(|a| *a != "--").any(|a| a == flag)
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
    pre.push(claude_code_entry(&install_options(ep, Target::ClaudeCode)));
    let mut out = vec![
        "--settings".to_string(),
        Value::Object(settings).to_string(),
    ];
    out.extend(rest);
    Ok(out)
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
    for (event, matcher, command) in codex_groups(&install_options(ep, Target::Codex)) {
        let timeout = super::install::HOOK_TIMEOUT_S;
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
            super::install::codex_hook_hash(key, matcher, &command, timeout).into(),
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
    for kind in super::install::OPENCODE_ASKS {
        permission.insert((*kind).to_string(), Value::String("ask".into()));
    }
    Ok(Value::Object(config).to_string())
}

/// The exit code of a finished child: its own code, or 128 + the signal that ended it.
pub fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        (None, None) => 1,
    }
}

/// Runs the wired command with stdio passed through, forwarding SIGINT, SIGTERM and SIGHUP that
/// guardian receives to it, until it exits; returns its exit code ([`exit_code`]).
pub async fn run_agent(w: &Wired) -> Result<i32, RunError> {
    use tokio::signal::unix::{SignalKind, signal};
    let spawn_err = |source| RunError::Spawn {
        program: w.program.clone(),
        source,
    };
    // Handlers first: a signal that arrives between the spawn and the loop is forwarded too.
    let mut int = signal(SignalKind::interrupt()).map_err(spawn_err)?;
    let mut term = signal(SignalKind::terminate()).map_err(spawn_err)?;
    let mut hup = signal(SignalKind::hangup()).map_err(spawn_err)?;
    let mut child = tokio::process::Command::new(&w.program)
        .args(&w.args)
        .envs(w.env.iter().map(|(k, v)| (k, v)))
        .spawn()
        .map_err(spawn_err)?;
    let pid = child.id().and_then(|p| libc::pid_t::try_from(p).ok());
    let forward = |sig: libc::c_int| {
        if let Some(pid) = pid {
            // SAFETY: kill(2) with the pid of our own child, which has not been reaped yet
            // (`wait` below has not returned).
            unsafe {
                libc::kill(pid, sig);
            }
        }
    };
    loop {
        tokio::select! {
            status = child.wait() => return status.map(exit_code).map_err(spawn_err),
            _ = int.recv() => forward(libc::SIGINT),
            _ = term.recv() => forward(libc::SIGTERM),
            _ = hup.recv() => forward(libc::SIGHUP),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep() -> Endpoint {
        Endpoint {
            url: "http://127.0.0.1:4000".into(),
            token: Some("t0k".into()),
            guardian: "/opt/guardian".into(),
        }
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn detects_agents_by_program_name() {
        assert_eq!(Agent::detect("claude"), Agent::ClaudeCode);
        assert_eq!(Agent::detect("/usr/local/bin/codex"), Agent::Codex);
        assert_eq!(Agent::detect("opencode"), Agent::Opencode);
        assert_eq!(Agent::detect("./my-bot"), Agent::Generic);
        assert_eq!(Agent::detect("claude-wrapper"), Agent::Generic);
    }

    #[test]
    fn claude_code_gets_a_settings_hook_and_keeps_its_arguments() {
        let w = wire(Agent::ClaudeCode, &s(&["claude", "-p", "fix it"]), &ep()).unwrap();
        assert_eq!(w.program, "claude");
        assert_eq!(w.args[0], "--settings");
        assert_eq!(&w.args[2..], &s(&["-p", "fix it"])[..]);
        let v: Value = serde_json::from_str(&w.args[1]).unwrap();
        assert_eq!(v["disableAllHooks"], false);
        let cmd = v["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert_eq!(
            cmd,
            "/opt/guardian hook claude-code --server http://127.0.0.1:4000 --unreviewed deny"
        );
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["onFailure"],
            "block"
        );
        assert!(
            w.env
                .contains(&("GUARDIAN_URL".into(), "http://127.0.0.1:4000".into()))
        );
        assert!(w.env.contains(&("GUARDIAN_TOKEN".into(), "t0k".into())));
    }

    #[test]
    fn a_users_settings_are_merged_not_replaced() {
        let user =
            r#"{"model":"x","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[]}],"Stop":[]}}"#;
        for argv in [
            s(&["claude", "--settings", user, "-p", "go"]),
            s(&["claude", &format!("--settings={user}"), "-p", "go"]),
        ] {
            let w = wire(Agent::ClaudeCode, &argv, &ep()).unwrap();
            assert_eq!(w.args.iter().filter(|a| *a == "--settings").count(), 1);
            assert_eq!(&w.args[2..], &s(&["-p", "go"])[..]);
            let v: Value = serde_json::from_str(&w.args[1]).unwrap();
            assert_eq!(v["model"], "x");
            assert!(v["hooks"]["Stop"].is_array());
            let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
            assert_eq!(pre.len(), 2);
            assert_eq!(pre[0]["matcher"], "Bash");
        }
        let bad = wire(
            Agent::ClaudeCode,
            &s(&["claude", "--settings", "{\"hooks\": 3}"]),
            &ep(),
        );
        assert!(matches!(bad, Err(RunError::Settings { .. })));
        let missing = wire(
            Agent::ClaudeCode,
            &s(&["claude", "--settings", "/nonexistent/settings.json"]),
            &ep(),
        );
        assert!(matches!(missing, Err(RunError::Settings { .. })));
    }

    #[test]
    fn claude_bare_is_refused_but_only_as_an_option() {
        let bare = wire(
            Agent::ClaudeCode,
            &s(&["claude", "--bare", "-p", "x"]),
            &ep(),
        );
        assert!(matches!(bare, Err(RunError::Unenforceable(_))));
        // After `--` it is the prompt's text, not an option.
        assert!(
            wire(
                Agent::ClaudeCode,
                &s(&["claude", "-p", "--", "--bare"]),
                &ep()
            )
            .is_ok()
        );
    }

    #[test]
    fn codex_gets_hook_overrides_before_its_subcommand() {
        let w = wire(Agent::Codex, &s(&["codex", "exec", "do it"]), &ep()).unwrap();
        assert_eq!(w.args[0], "-c");
        assert!(
            w.args[1].starts_with("hooks.PreToolUse=[{"),
            "{}",
            w.args[1]
        );
        assert_eq!(w.args[2], "-c");
        assert!(w.args[3].starts_with("hooks.PermissionRequest=[{"));
        assert!(w.args[3].contains("matcher = \"Bash\""), "{}", w.args[3]);
        assert!(
            w.args[1].contains(
                "command = \"/opt/guardian hook codex --server http://127.0.0.1:4000 --unreviewed deny\""
            ),
            "{}",
            w.args[1]
        );
        assert_eq!(&w.args[6..], &s(&["exec", "do it"])[..]);
        // Each override parses as TOML, as Codex parses `-c key=value`.
        for kv in [&w.args[1], &w.args[3]] {
            let (_, value) = kv.split_once('=').unwrap();
            let doc: toml_edit::DocumentMut = format!("v = {value}").parse().unwrap();
            assert!(doc["v"].as_array().is_some());
        }
    }

    #[test]
    fn codex_trusts_exactly_its_own_hooks_for_the_run() {
        let w = wire(Agent::Codex, &s(&["codex", "exec", "x"]), &ep()).unwrap();
        assert_eq!(w.args[4], "-c");
        let (key, value) = w.args[5].split_once('=').unwrap();
        assert_eq!(key, "hooks.state");
        let doc: toml_edit::DocumentMut = format!("v = {value}").parse().unwrap();
        let state = doc["v"].as_inline_table().unwrap();
        let cmd = "/opt/guardian hook codex --server http://127.0.0.1:4000 --unreviewed deny";
        let pre = state
            .get("/<session-flags>/config.toml:pre_tool_use:0:0")
            .and_then(|t| t.as_inline_table())
            .and_then(|t| t.get("trusted_hash"))
            .and_then(|h| h.as_str())
            .unwrap();
        assert_eq!(
            pre,
            crate::integrations::install::codex_hook_hash(
                "pre_tool_use",
                crate::integrations::claude_code::CODEX_MATCHER,
                cmd,
                120
            )
        );
        assert!(
            state
                .get("/<session-flags>/config.toml:permission_request:0:0")
                .is_some()
        );
        assert_eq!(&w.args[6..], &s(&["exec", "x"])[..]);
    }

    #[test]
    fn opencode_run_is_refused_and_servers_get_a_port() {
        for argv in [
            s(&["opencode", "run", "x"]),
            s(&["opencode", "--model", "m", "run", "--auto", "x"]),
        ] {
            let r = wire(Agent::Opencode, &argv, &ep());
            assert!(matches!(r, Err(RunError::Unenforceable(_))), "{argv:?}");
        }
        let (args, port) = opencode_args(&s(&["serve", "--hostname", "127.0.0.1"]), 4100).unwrap();
        assert_eq!(
            args,
            s(&["serve", "--port", "4100", "--hostname", "127.0.0.1"])
        );
        assert_eq!(port, 4100);
        let (args, port) = opencode_args(&s(&["."]), 4100).unwrap();
        assert_eq!(args, s(&["--port", "4100", "."]));
        assert_eq!(port, 4100);
        let (args, port) = opencode_args(&s(&["serve", "--port=4200"]), 4100).unwrap();
        assert_eq!(args, s(&["serve", "--port=4200"]));
        assert_eq!(port, 4200);
        assert!(opencode_args(&s(&["--port", "0"]), 4100).is_err());
    }

    #[test]
    fn opencode_gets_a_per_run_config() {
        let w = wire(Agent::Opencode, &s(&["opencode", "serve"]), &ep()).unwrap();
        assert_eq!(w.args[0], "serve");
        assert_eq!(w.args[1], "--port");
        let port = &w.args[2];
        assert_eq!(
            w.opencode.as_deref(),
            Some(format!("http://127.0.0.1:{port}").as_str())
        );
        let (_, content) = w
            .env
            .iter()
            .find(|(k, _)| k == "OPENCODE_CONFIG_CONTENT")
            .unwrap();
        let v: Value = serde_json::from_str(content).unwrap();
        assert_eq!(v["permission"]["bash"], "ask");
        // A config the CI job passes itself is kept; guardian's asks win per kind.
        let merged: Value = serde_json::from_str(
            &opencode_config_content(Some(
                r#"{"model":"p/m","permission":{"bash":{"*":"allow"},"read":"deny"}}"#,
            ))
            .unwrap(),
        )
        .unwrap();
        assert_eq!(merged["model"], "p/m");
        assert_eq!(merged["permission"]["bash"], "ask");
        assert_eq!(merged["permission"]["read"], "deny");
        assert_eq!(merged["permission"]["external_directory"], "ask");
        assert!(opencode_config_content(Some("[1]")).is_err());
    }

    #[test]
    fn generic_only_gets_the_url() {
        let w = wire(Agent::Generic, &s(&["./bot", "--x"]), &ep()).unwrap();
        assert_eq!(w.args, s(&["--x"]));
        assert_eq!(w.env.len(), 2);
        assert!(matches!(
            wire(Agent::Generic, &[], &ep()),
            Err(RunError::NoCommand)
        ));
    }
}
