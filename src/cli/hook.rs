//! `guardian hook`: forward one agent hook input to a running server (a failure blocks).

use std::io::Read;
use std::process::ExitCode;

use clap::Subcommand;


/// `guardian hook`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) agent: HookAgent,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    Ok(answer(&a))
}

/// Forwards the hook input for the agent named (synchronously: `main` calls this before any
/// runtime starts).
pub(crate) fn answer(a: &Args) -> ExitCode {
    match &a.agent {
        HookAgent::ClaudeCode { hook } => forward_hook(hook, "claude-code"),
        HookAgent::Codex { hook } => forward_hook(hook, "codex"),
    }
}

#[derive(Subcommand)]
pub(crate) enum HookAgent {
    /// A Codex command hook (PreToolUse / PermissionRequest, `[[hooks.PreToolUse]]` in
    /// config.toml): hook JSON on stdin, the answer on stdout; exit 2 (block) on any failure.
    Codex {
        #[command(flatten)]
        hook: HookArgs,
    },
    /// A Claude Code command hook: hook JSON on stdin, the hook's answer on stdout. If the
    /// server cannot answer, exits 2 with the reason on stderr, which makes Claude Code block.
    ClaudeCode {
        #[command(flatten)]
        hook: HookArgs,
    },
}

/// What every command hook takes.
#[derive(clap::Args)]
pub(crate) struct HookArgs {
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

/// Forwards a hook input to the server and prints its answer. An empty answer (`{}`: no
/// decision) prints nothing, which every agent reads as "no objection". Any failure exits 2 with
/// the reason on stderr: a block.
pub(crate) fn forward_hook(args: &HookArgs, agent: &str) -> ExitCode {
    let block = |why: String| {
        eprintln!("guardian hook: blocked because the guardian server could not decide: {why}");
        ExitCode::from(2)
    };
    let mut body = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut body) {
        return block(format!("cannot read the hook input: {e}"));
    }
    let mut url = format!("{}/v1/hooks/{agent}", args.server.trim_end_matches('/'));
    if let Some(mode) = args.unreviewed {
        url.push_str(&format!("?unreviewed={}", mode.as_str()));
    }
    let token = guardian::transport::client_token();
    let text = match guardian::integrations::hook_client::forward(
        &url,
        body,
        token.as_deref(),
        std::time::Duration::from_secs(args.timeout),
    ) {
        Ok(t) => t,
        Err(e) => return block(e.to_string()),
    };
    match guardian::integrations::hook_client::emit(&text, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => block(e.to_string()),
    }
}
