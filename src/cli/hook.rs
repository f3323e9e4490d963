//! `guardian hook <agent>`: forward one agent hook input to a running server (a failure blocks).

use std::process::ExitCode;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use guardian::integrations::Agent;
use guardian::integrations::hook_client::{HookCall, answer as answer_hook, forward};

/// `guardian hook`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The agent whose command hook this is (Claude Code's, or Codex's `[[hooks.PreToolUse]]` /
    /// `[[hooks.PermissionRequest]]` in config.toml): hook JSON on stdin, the hook's answer on
    /// stdout. If the server cannot answer, exits 2 with the reason on stderr, which makes the
    /// agent block.
    #[arg(value_parser = hook_agents())]
    pub(crate) agent: Agent,
    /// The guardian server.
    #[arg(long, default_value = "http://127.0.0.1:8700")]
    server: String,
    /// Seconds to wait for the answer, then block (exit 2). Keep it below the agent's hook
    /// `timeout`: an agent that gives up on a hook first lets the call proceed.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// What nothing could review becomes: `deny` (headless, CI) or `ask` (the agent's own
    /// prompt asks the user). Default: the server's `[hooks] unreviewed`.
    #[arg(long, value_enum)]
    unreviewed: Option<guardian::config::Unreviewed>,
}

/// The agents with hooks, as the values `guardian hook` takes.
fn hook_agents() -> impl TypedValueParser<Value = Agent> {
    PossibleValuesParser::new(
        Agent::with_hooks().map(|a| PossibleValue::new(a.name()).help(a.info().title)),
    )
    .try_map(|name| Agent::from_name(&name).ok_or("not an agent with hooks"))
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    Ok(answer(&a))
}

/// Forwards the hook input for the agent named and prints its answer (synchronously: `main`
/// calls this before any runtime starts).
pub(crate) fn answer(a: &Args) -> ExitCode {
    let call = HookCall {
        program: "guardian hook",
        agent: a.agent.name(),
        server: &a.server,
        unreviewed: a.unreviewed.map(|m| m.as_str()),
        timeout: std::time::Duration::from_secs(a.timeout),
    };
    answer_hook(&call, forward)
}
