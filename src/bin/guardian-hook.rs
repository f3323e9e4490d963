//! `guardian-hook <AGENT> [--server URL] [--timeout S] [--unreviewed deny|ask]`: the command
//! hook of `guardian hook …` in a small binary that links nothing but the forwarding (no async
//! runtime, no TLS, no allocator setup, no argument-parser framework, no agent's code: only the
//! list's names): hook JSON on stdin, the server's answer on stdout (nothing for "no
//! decision"), exit 2 with the reason on stderr whenever the server cannot answer (a block).
//! `http://` servers only; `guardian hook` also speaks `https://`. Both run
//! `guardian::integrations::hook_client::answer`.

use std::process::ExitCode;

use guardian::integrations::Agent;
use guardian::integrations::hook_client::{HookCall, answer, forward_http_only};

/// The agents with hooks, as `<AGENT>` values: `claude-code, codex`.
fn agent_names() -> String {
    Agent::with_hooks()
        .map(Agent::name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The help text.
fn usage() -> String {
    format!(
        "guardian's command hook, small and fast

Usage: guardian-hook [OPTIONS] <AGENT>

Arguments:
  <AGENT>  The agent whose hook this is [possible values: {}]

Options:
      --server <SERVER>          The guardian server (http:// only) [default: http://127.0.0.1:8700]
      --timeout <TIMEOUT>        Seconds to wait for the answer, then block (exit 2) [default: 60]
      --unreviewed <UNREVIEWED>  What nothing could review becomes: deny (headless) or ask (the agent's own prompt) [possible values: deny, ask]
  -h, --help                     Print help
  -V, --version                  Print version
",
        agent_names()
    )
}

/// The parsed command line.
struct Args {
    agent: String,
    server: String,
    timeout: u64,
    unreviewed: Option<String>,
}

/// What the command line asks for.
enum Command {
    Run(Args),
    Help,
    Version,
}

/// Parses the arguments by hand: six options do not need a parser framework, whose code would be
/// paged in on every decision. `--opt value` and `--opt=value` are both accepted.
fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut agent = None;
    let mut server = "http://127.0.0.1:8700".to_string();
    let mut timeout = 60;
    let mut unreviewed = None;
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| format!("a value is required for '{name} <VALUE>'"))
        };
        match name.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--server" => server = value("--server")?,
            "--timeout" => {
                let v = value("--timeout")?;
                timeout = v.parse().map_err(|_| {
                    format!("invalid value '{v}' for '--timeout <TIMEOUT>': not a whole number of seconds")
                })?;
            }
            "--unreviewed" => {
                let v = value("--unreviewed")?;
                if v != "deny" && v != "ask" {
                    return Err(format!(
                        "invalid value '{v}' for '--unreviewed <UNREVIEWED>' [possible values: deny, ask]"
                    ));
                }
                unreviewed = Some(v);
            }
            a if a.starts_with('-') => return Err(format!("unexpected argument '{a}' found")),
            a if agent.is_none() => {
                if !Agent::with_hooks().any(|h| h.name() == a) {
                    return Err(format!(
                        "invalid value '{a}' for '<AGENT>' [possible values: {}]",
                        agent_names()
                    ));
                }
                agent = Some(a.to_string());
            }
            a => return Err(format!("unexpected argument '{a}' found")),
        }
    }
    let agent = agent.ok_or("the required argument <AGENT> was not provided")?;
    Ok(Command::Run(Args {
        agent,
        server,
        timeout,
        unreviewed,
    }))
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Command::Run(a)) => a,
        Ok(Command::Help) => {
            print!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Ok(Command::Version) => {
            println!("guardian-hook {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // A usage error blocks like any other failure (exit 2), as clap's usage errors did.
            eprintln!("error: {e}\n\n{}", usage());
            return ExitCode::from(2);
        }
    };
    let call = HookCall {
        program: "guardian-hook",
        agent: &args.agent,
        server: &args.server,
        unreviewed: args.unreviewed.as_deref(),
        timeout: std::time::Duration::from_secs(args.timeout),
    };
    answer(&call, forward_http_only)
}
