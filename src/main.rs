//! The `guardian` command line: a thin adapter over the library.
//!
//! `serve` runs the HTTP service, `check` runs one request through the same pipeline without
//! HTTP, `policy` prints the effective rules. Exit codes of `check`: 0 allow, 1 deny, 2 bad input
//! or config.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use guardian::request::{Action, ReviewRequest};
use guardian::{Config, Decision, Guardian};

#[derive(Parser)]
#[command(
    name = "guardian",
    version,
    about = "Decides whether an AI coding agent may run a tool call"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service (API v1).
    Serve {
        /// Config file (default: the embedded policies/default.toml, no reviewer).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Address to listen on (overrides server.listen).
        #[arg(long)]
        listen: Option<String>,
    },
    /// Review one request: JSON on stdin, or a shell command after `--`.
    Check {
        /// Config file (default: the embedded policies/default.toml, no reviewer).
        #[arg(long)]
        config: Option<PathBuf>,
        /// The command words of a shell action in the current directory.
        #[arg(last = true)]
        words: Vec<String>,
    },
    /// Print the effective rules with their sources.
    Policy {
        /// Config file (default: the embedded policies/default.toml).
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The service logs each decision; one-shot commands only warnings (their answer is on stdout).
    init_tracing(if matches!(cli.command, Command::Serve { .. }) {
        "info"
    } else {
        "warn"
    });
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("guardian: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(run(cli))
}

fn init_tracing(default_level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("GUARDIAN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // A closed log pipe must never take a request down (tracing would eprintln! and panic).
        .log_internal_errors(false)
        .json()
        .try_init();
}

async fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Serve { config, listen } => serve(config, listen).await,
        Command::Check { config, words } => check(config, words).await,
        Command::Policy { config } => policy(config),
    }
}

fn load(config: Option<&PathBuf>) -> Result<Config, ExitCode> {
    Config::load(config.map(PathBuf::as_path)).map_err(|e| {
        eprintln!("guardian: {e}");
        ExitCode::from(2)
    })
}

fn build(config: Config) -> Result<Arc<Guardian>, ExitCode> {
    Guardian::from_config(config).map(Arc::new).map_err(|e| {
        eprintln!("guardian: {e}");
        ExitCode::from(2)
    })
}

async fn serve(config: Option<PathBuf>, listen: Option<String>) -> ExitCode {
    let mut cfg = match load(config.as_ref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Some(l) = listen {
        cfg.server.listen = l;
    }
    let addr = cfg.server.listen.clone();
    let guardian = match build(cfg) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("guardian: cannot listen on {addr}: {e}");
            return ExitCode::from(2);
        }
    };
    let local = listener.local_addr().map(|a| a.to_string()).unwrap_or(addr);
    tracing::info!(
        listen = %local,
        config = %guardian.config().source_name,
        reviewer = guardian.reviewer().backend(),
        rules = guardian.policy().listing().len(),
        "guardian listening"
    );
    eprintln!("guardian listening on http://{local}");
    match guardian::server::serve(guardian, listener).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("guardian: server error: {e}");
            ExitCode::from(2)
        }
    }
}

async fn check(config: Option<PathBuf>, words: Vec<String>) -> ExitCode {
    let cfg = match load(config.as_ref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let req = if words.is_empty() {
        let mut body = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut body) {
            eprintln!("guardian: cannot read stdin: {e}");
            return ExitCode::from(2);
        }
        match ReviewRequest::from_json(&body) {
            Ok(r) => r,
            Err(e) => {
                let out = serde_json::json!({"error": {"field": e.field, "message": e.message}});
                println!("{out}");
                eprintln!("guardian: bad request: {}: {}", e.field, e.message);
                return ExitCode::from(2);
            }
        }
    } else {
        let cwd = std::env::current_dir()
            .ok()
            .map(|p| p.display().to_string());
        let req = ReviewRequest {
            action: Action::Shell {
                command: words.join(" "),
                cwd,
            },
            session: None,
            intent: None,
            transcript: Vec::new(),
            retry: None,
            strict: false,
        };
        if let Err(e) = req.validate() {
            eprintln!("guardian: bad request: {}: {}", e.field, e.message);
            return ExitCode::from(2);
        }
        req
    };
    let guardian = match build(cfg) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let resp = guardian.review(req, "cli").await;
    match serde_json::to_string_pretty(&resp) {
        Ok(s) => println!("{s}"),
        Err(e) => {
            eprintln!("guardian: cannot print the response: {e}");
            return ExitCode::from(2);
        }
    }
    match resp.decision {
        Decision::Allow => ExitCode::SUCCESS,
        Decision::Deny => ExitCode::from(1),
    }
}

fn policy(config: Option<PathBuf>) -> ExitCode {
    let cfg = match load(config.as_ref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let policy = match guardian::policy::Policy::from_config(&cfg, Vec::new()) {
        Ok(p) => p,
        Err(errors) => {
            for e in errors {
                eprintln!("guardian: {e}");
            }
            return ExitCode::from(2);
        }
    };
    println!("# evaluated deny -> ask -> allow; nothing matched -> ask (the reviewer decides)");
    for r in policy.listing() {
        println!("{:<5}  {:<40}  {}", r.effect.as_str(), r.pattern, r.source);
    }
    ExitCode::SUCCESS
}
