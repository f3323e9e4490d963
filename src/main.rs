//! The `guardian` binary: a thin adapter over the library. The subcommands live in `cli/`, one
//! file each; this file sets up the process (allocator, SIGPIPE, logging, the async runtime) and
//! prints the one error a subcommand may return.

#![recursion_limit = "256"]
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

use std::process::ExitCode;

use clap::Parser;

mod cli;

use cli::{Cli, Command};

// mimalloc: the request path allocates a lot of small, short-lived objects (JSON, tokens, audit
// records), and glibc malloc was the largest item in the profile under load.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The service logs each decision, from a background thread; one-shot commands only warnings
    // (their answer is on stdout). The guard flushes the log when main returns.
    let serving = matches!(cli.command, Command::Serve(_));
    // One-shot commands that print (policy, check, audit, …) stop quietly when their reader goes
    // away (`guardian policy | head -1`), as command-line tools do, instead of panicking on a
    // broken pipe. Long-running adapters keep Rust's default (SIGPIPE ignored).
    if !cli.command.long_running() {
        // SAFETY: restoring the default disposition of SIGPIPE before any thread is started.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    // A command hook forwards one JSON and exits: no logging setup, no multi-threaded runtime.
    if let Some(code) = cli.command.hook_answer() {
        return code;
    }
    let _log_guard = init_tracing(if serving { "info" } else { "warn" }, serving);
    // 8 MiB stacks (tokio's default is 2 MiB): a margin for recursive parsers on every thread.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(8 * 1024 * 1024)
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("guardian: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    // One error path: a subcommand that cannot do its work returns an error, printed here
    // (its text names the command), exit 2.
    match runtime.block_on(cli.command.run()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e:#}");
            ExitCode::from(2)
        }
    }
}

/// JSON logs on stderr. With `background`, lines are handed to a writer thread (tracing-appender),
/// so a stalled stderr pipe never blocks a runtime thread; if it stays stalled until 100,000
/// lines are waiting, newer lines are dropped (the audit log, not the log, is the record).
fn init_tracing(
    default_level: &str,
    background: bool,
) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    use tracing_subscriber::fmt::writer::BoxMakeWriter;
    let filter = tracing_subscriber::EnvFilter::try_from_env("GUARDIAN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    let (writer, guard) = if background {
        let (w, g) = tracing_appender::non_blocking::NonBlockingBuilder::default()
            .buffered_lines_limit(100_000)
            .lossy(true)
            .thread_name("guardian-log")
            .finish(std::io::stderr());
        (BoxMakeWriter::new(w), Some(g))
    } else {
        (BoxMakeWriter::new(std::io::stderr), None)
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        // A closed log pipe must never take a request down (tracing would eprintln! and panic).
        .log_internal_errors(false)
        .json()
        .try_init();
    guard
}
