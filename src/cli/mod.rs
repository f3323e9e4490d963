//! The `guardian` command line: the list of its subcommands, and nothing else. Each subcommand's
//! file owns its clap `Args` and its `run`, which translates: it parses nothing (clap did),
//! calls the library, and returns `anyhow::Result<ExitCode>`; `main` prints an error and exits 2
//! (the one error path). A new subcommand is one file and two lines here: its `mod` (outside
//! the macro, so that `cargo fmt` reaches the file) and its line in `subcommands!`. Exit codes of
//! `check`: 0 allow, 1 deny, 2 bad input or config.

mod audit;
mod check;
mod eval;
mod health;
mod hook;
mod init;
mod install;
mod label;
mod local_model;
mod mandate;
mod mcp;
mod opencode;
mod policy;
mod run;
mod serve;
mod setup;
mod traces;
mod train;

use std::process::ExitCode;

pub(crate) use setup::{build, load};

/// The subcommands: `Variant => module, long|short;` (a long-running one keeps SIGPIPE ignored
/// and logs at info).
macro_rules! subcommands {
    ($($(#[$doc:meta])* $variant:ident => $module:ident, $kind:ident;)*) => {
        /// The command line.
        #[derive(clap::Parser)]
        #[command(
            name = "guardian",
            version,
            about = "Decides whether an AI coding agent may run a tool call"
        )]
        pub(crate) struct Cli {
            /// The subcommand.
            #[command(subcommand)]
            pub(crate) command: Command,
        }

        /// Every subcommand, with its arguments.
        #[derive(clap::Subcommand)]
        pub(crate) enum Command {
            $($(#[$doc])* $variant($module::Args),)*
        }

        impl Command {
            /// Runs the subcommand.
            pub(crate) async fn run(self) -> anyhow::Result<ExitCode> {
                match self {
                    $(Command::$variant(a) => $module::run(a).await,)*
                }
            }

            /// Whether it runs until stopped (a service or an adapter), rather than printing an
            /// answer and exiting.
            pub(crate) fn long_running(&self) -> bool {
                match self {
                    $(Command::$variant(_) => subcommands!(@long $kind),)*
                }
            }

            /// A hook's answer, given synchronously before any runtime starts.
            pub(crate) fn hook_answer(&self) -> Option<ExitCode> {
                match self {
                    Command::Hook(a) => Some(hook::answer(a)),
                    _ => None,
                }
            }
        }
    };
    (@long long) => { true };
    (@long short) => { false };
}

subcommands! {
    /// Run the HTTP service (API v1).
    Serve => serve, long;
    /// Review one request: JSON on stdin, or a shell command after `--`.
    Check => check, short;
    /// A stdio MCP server with an `approve` tool for Claude Code's --permission-prompt-tool.
    Mcp => mcp, long;
    /// Answer a running OpenCode server's permission requests (its /event stream).
    Opencode => opencode, long;
    /// Run labeled cases through the whole pipeline and report how often it is right.
    Eval => eval, short;
    /// Fit the reviewer's probe (reviewer.scoring = "probe") from labelled cases: embeddings
    /// from the model server, a cross-validated logistic regression, the deny threshold.
    Train => train, long;
    /// Convert datasets and recorded traces into eval cases (JSONL on stdout).
    Traces => traces, short;
    /// Agent hook adapters that call a running guardian server.
    Hook => hook, short;
    /// Query the audit log (filters below), or check its hash chain (`audit verify`).
    Audit => audit, short;
    /// Serve the review page over an audit log alone (loopback, a token of its own): go
    /// through guardian's decisions with the keyboard and label them right or wrong.
    Label => label, long;
    /// Ask a running guardian's /healthz: exit 0 when "ok", 1 when degraded or unreachable
    /// (the container image's HEALTHCHECK).
    Health => health, short;
    /// Write a starting guardian.toml that extends the default policy (reviewer commented out).
    Init => init, short;
    /// Write guardian's hook snippet into an agent's settings file: merged into what is there
    /// (nothing else is lost), the old file backed up, idempotent; --dry-run only prints.
    Install => install, short;
    /// Run an agent with guardian answering its approvals, for this run only: starts guardian
    /// on a loopback port (or uses --server), wires the agent to it on its command line and
    /// environment (no settings file is touched), passes its stdio through, forwards
    /// SIGINT/SIGTERM/SIGHUP, prints a decision summary to stderr and exits with the agent's
    /// exit code. Headless: what nothing could review is denied.
    Run => run, long;
    /// Print the mandate a user's request compiles into: its grants and prohibitions (JSON).
    Mandate => mandate, short;
    /// Print the effective rules with their sources (or explain, test, import).
    Policy => policy, short;
}
