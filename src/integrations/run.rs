//! `guardian run`: one unattended agent run behind guardian.
//!
//! This module owns wiring an agent to a guardian server for one run only — the extra
//! command-line arguments and environment variables, never a change to the user's own settings
//! files — and running the agent: stdio passed through, SIGINT / SIGTERM / SIGHUP forwarded, its
//! exit status turned into an exit code. Starting the server and printing the decision summary
//! are the CLI's ([`crate::server::serve_until`], [`crate::audit_report`]).
//!
//! Each agent's file wires it ([`super::AgentIntegration::wire`]):
//!
//! | agent | how it is wired |
//! |---|---|
//! | Claude Code (`claude`) | `--settings '<json>'` with guardian's PreToolUse hook (merged into a `--settings` the command already has) and `disableAllHooks: false` ([`super::claude_code::claude_code_args`]) |
//! | Codex (`codex`) | `-c` overrides: guardian's PreToolUse and PermissionRequest hooks, and trust for exactly those two ([`super::codex::codex_args`]) |
//! | OpenCode (`opencode`, `opencode serve`) | `OPENCODE_CONFIG_CONTENT` asking for every bash / edit / webfetch / external-directory call, `--port`, and the bridge answering them; `opencode run` is refused ([`super::opencode::opencode_args`]) |
//! | anything else | only `GUARDIAN_URL` (and `GUARDIAN_TOKEN`): a custom bot calls `/v1/review` itself |

use std::path::PathBuf;

use super::Agent;
use super::install::{HookKind, Options, Scope};
use crate::config::Unreviewed;

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

impl Endpoint {
    /// guardian's hooks for `agent` as `guardian install` would write them, calling this
    /// endpoint through this binary's command hook; headless (what nothing could review is
    /// denied).
    pub fn hook_options(&self, agent: Agent) -> Options {
        Options {
            agent,
            scope: Scope::User,
            server: self.url.clone(),
            command: self.guardian.clone(),
            hook_binary: None,
            hook: HookKind::Command,
            unreviewed: Some(Unreviewed::Deny),
            project_dir: PathBuf::new(),
            home: PathBuf::new(),
            codex_home: None,
            xdg_config_home: None,
            trust: false,
        }
    }
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
    /// The agent's own server whose permission requests a bridge answers (OpenCode).
    pub bridge: Option<String>,
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

/// Wires `command` (program and arguments) to `ep` as `agent` (`None`: a generic program,
/// which only gets `GUARDIAN_URL` and the token).
pub fn wire(agent: Option<Agent>, command: &[String], ep: &Endpoint) -> Result<Wired, RunError> {
    let (program, rest) = command.split_first().ok_or(RunError::NoCommand)?;
    let mut env = vec![("GUARDIAN_URL".to_string(), ep.url.clone())];
    if let Some(t) = &ep.token {
        env.push((crate::transport::TOKEN_ENV.to_string(), t.clone()));
    }
    let wiring = match agent {
        Some(a) => a.integration().wire(rest, ep)?,
        None => super::Wiring {
            args: rest.to_vec(),
            ..super::Wiring::default()
        },
    };
    env.extend(wiring.env);
    Ok(Wired {
        program: program.clone(),
        args: wiring.args,
        env,
        bridge: wiring.bridge,
    })
}

/// The value of `--flag value` or `--flag=value` in `args` (options only: not after `--`), with
/// the indices it occupies.
pub(super) fn option_value(args: &[String], flag: &str) -> Option<(usize, usize, String)> {
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

/// Whether `flag` is among the options of `args` (not after `--`).
pub(super) fn has_flag(args: &[String], flag: &str) -> bool {
    args.iter().take_while(|a| *a != "--").any(|a| a == flag)
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
    use crate::integrations::opencode::{opencode_args, opencode_config_content};
    use serde_json::Value;

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
    fn claude_code_gets_a_settings_hook_and_keeps_its_arguments() {
        let w = wire(
            Some(Agent::ClaudeCode),
            &s(&["claude", "-p", "fix it"]),
            &ep(),
        )
        .unwrap();
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
        // The prompt goes to the same hook, so its mandate is compiled before the agent acts.
        assert_eq!(
            v["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
                .as_str()
                .unwrap(),
            cmd
        );
        assert!(v["hooks"]["UserPromptSubmit"][0].get("matcher").is_none());
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
            let w = wire(Some(Agent::ClaudeCode), &argv, &ep()).unwrap();
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
            Some(Agent::ClaudeCode),
            &s(&["claude", "--settings", "{\"hooks\": 3}"]),
            &ep(),
        );
        assert!(matches!(bad, Err(RunError::Settings { .. })));
        let missing = wire(
            Some(Agent::ClaudeCode),
            &s(&["claude", "--settings", "/nonexistent/settings.json"]),
            &ep(),
        );
        assert!(matches!(missing, Err(RunError::Settings { .. })));
    }

    #[test]
    fn claude_bare_is_refused_but_only_as_an_option() {
        let bare = wire(
            Some(Agent::ClaudeCode),
            &s(&["claude", "--bare", "-p", "x"]),
            &ep(),
        );
        assert!(matches!(bare, Err(RunError::Unenforceable(_))));
        // After `--` it is the prompt's text, not an option.
        assert!(
            wire(
                Some(Agent::ClaudeCode),
                &s(&["claude", "-p", "--", "--bare"]),
                &ep()
            )
            .is_ok()
        );
    }

    #[test]
    fn codex_gets_hook_overrides_before_its_subcommand() {
        let w = wire(Some(Agent::Codex), &s(&["codex", "exec", "do it"]), &ep()).unwrap();
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
        let w = wire(Some(Agent::Codex), &s(&["codex", "exec", "x"]), &ep()).unwrap();
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
            crate::integrations::codex::codex_hook_hash(
                "pre_tool_use",
                crate::integrations::codex::CODEX_MATCHER,
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
            let r = wire(Some(Agent::Opencode), &argv, &ep());
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
        let w = wire(Some(Agent::Opencode), &s(&["opencode", "serve"]), &ep()).unwrap();
        assert_eq!(w.args[0], "serve");
        assert_eq!(w.args[1], "--port");
        let port = &w.args[2];
        assert_eq!(
            w.bridge.as_deref(),
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
        let w = wire(None, &s(&["./bot", "--x"]), &ep()).unwrap();
        assert_eq!(w.args, s(&["--x"]));
        assert_eq!(w.env.len(), 2);
        assert!(matches!(wire(None, &[], &ep()), Err(RunError::NoCommand)));
    }
}
