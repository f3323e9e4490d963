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

// mimalloc: the request path allocates a lot of small, short-lived objects (JSON, tokens, audit
// records), and glibc malloc was the largest item in the profile under load.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use guardian::request::ReviewRequest;
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
    /// A stdio MCP server with an `approve` tool for Claude Code's --permission-prompt-tool.
    Mcp {
        /// Decide in-process with this config (default: the embedded defaults).
        #[arg(long, conflicts_with = "server")]
        config: Option<PathBuf>,
        /// Forward to a running guardian server instead.
        #[arg(long)]
        server: Option<String>,
    },
    /// Answer a running OpenCode server's permission requests (its /event stream).
    Opencode {
        /// The OpenCode server (`opencode serve`).
        #[arg(long)]
        server: String,
        /// Config file for the in-process pipeline (default: the embedded defaults).
        #[arg(long)]
        config: Option<PathBuf>,
        /// The project directory OpenCode works in (default: the current directory).
        #[arg(long)]
        project: Option<String>,
    },
    /// Run labeled cases through the whole pipeline and report how often it is right.
    Eval {
        /// Case files (JSONL: {"id", "request", "expected", "category", "source", "notes"}).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Config file (default: the embedded defaults, with the local model if it is running).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Cases reviewed at once.
        #[arg(long, default_value_t = 4)]
        concurrency: usize,
        /// A previous report.json: show flips and deltas, and exit 1 if the false-allow rate rose.
        #[arg(long)]
        baseline: Option<PathBuf>,
        /// Where report.json, report.md and report.html go.
        #[arg(long, default_value = "eval-report")]
        out: PathBuf,
        /// Price per million prompt tokens, for the cost estimate.
        #[arg(long, default_value_t = 0.0)]
        price_prompt: f64,
        /// Price per million completion tokens.
        #[arg(long, default_value_t = 0.0)]
        price_completion: f64,
        /// Label the unlabeled cases of the files by hand (from `traces import`) instead of
        /// evaluating: each answer is saved at once.
        #[arg(long)]
        label: bool,
    },
    /// Convert datasets and recorded traces into eval cases (JSONL on stdout).
    Traces {
        #[command(subcommand)]
        command: TracesCommand,
    },
    /// Agent hook adapters that call a running guardian server.
    Hook {
        #[command(subcommand)]
        agent: HookAgent,
    },
    /// Query the audit log (filters below), or check its hash chain (`audit verify`).
    Audit {
        /// Config file whose [audit] path is read (default: the embedded defaults).
        #[arg(long, global = true)]
        config: Option<PathBuf>,
        /// The audit file (overrides the config's path).
        #[arg(long, global = true)]
        file: Option<PathBuf>,
        #[command(flatten)]
        filter: AuditFilter,
        /// The last N matching records, at most.
        #[arg(long)]
        limit: Option<usize>,
        #[command(subcommand)]
        command: Option<AuditCommand>,
    },
    /// Write a starting guardian.toml that extends the default policy (reviewer commented out).
    Init {
        /// Where to write it.
        #[arg(default_value = "guardian.toml")]
        path: PathBuf,
        /// Overwrite an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Write guardian's hook snippet into an agent's settings file: merged into what is there
    /// (nothing else is lost), the old file backed up, idempotent; --dry-run only prints.
    Install {
        /// The agent.
        #[arg(value_enum)]
        agent: guardian::integrations::install::Target,
        /// The user's settings file or the project's.
        #[arg(long, value_enum, default_value = "project")]
        scope: guardian::integrations::install::Scope,
        /// The guardian server the hooks call.
        #[arg(long, default_value = "http://127.0.0.1:8700")]
        server: String,
        /// Claude Code: a command hook (`guardian hook claude-code`, blocks when the server is
        /// down) or an HTTP hook.
        #[arg(long, value_enum, default_value = "command")]
        hook: guardian::integrations::install::HookKind,
        /// What nothing could review becomes for this agent (default: the server's
        /// `[hooks] unreviewed`, deny).
        #[arg(long, value_enum)]
        unreviewed: Option<guardian::config::Unreviewed>,
        /// The project directory (project scope; default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
        /// How command hooks name guardian (default: `guardian` when that is this binary on
        /// PATH, else this binary's absolute path).
        #[arg(long)]
        command: Option<String>,
        /// Print what would change and the new file; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Codex: also record guardian's hooks as trusted in $CODEX_HOME/config.toml, as its
        /// `/hooks` review would (for unattended `codex exec`).
        #[arg(long)]
        trust: bool,
    },
    /// Run an agent with guardian answering its approvals, for this run only: starts guardian
    /// on a loopback port (or uses --server), wires the agent to it on its command line and
    /// environment (no settings file is touched), passes its stdio through, forwards
    /// SIGINT/SIGTERM/SIGHUP, prints a decision summary to stderr and exits with the agent's
    /// exit code. Headless: what nothing could review is denied.
    Run {
        /// Config file (default: the embedded defaults, with the local model if it is running).
        /// With --server, only its [audit] path is read, for the summary.
        #[arg(long)]
        config: Option<PathBuf>,
        /// The agent the command runs (auto: from the program's name: claude, codex, opencode;
        /// anything else is generic and only gets GUARDIAN_URL).
        #[arg(long, value_enum, default_value = "auto")]
        agent: RunAgent,
        /// Use this running guardian server instead of starting one.
        #[arg(long)]
        server: Option<String>,
        /// Exit 3 when the agent succeeded but guardian denied an action.
        #[arg(long)]
        fail_on_deny: bool,
        /// Also append the summary as Markdown to this file (in GitHub Actions:
        /// "$GITHUB_STEP_SUMMARY").
        #[arg(long)]
        summary: Option<PathBuf>,
        /// The agent's command.
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Print the effective rules with their sources (or explain, test, import).
    Policy {
        /// Config file (default: the embedded policies/default.toml).
        #[arg(long, global = true)]
        config: Option<PathBuf>,
        #[command(subcommand)]
        command: Option<PolicyCommand>,
    },
}

#[derive(Subcommand)]
enum HookAgent {
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
struct HookArgs {
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

/// `guardian run --agent`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum RunAgent {
    /// From the program's name.
    Auto,
    /// Claude Code.
    ClaudeCode,
    /// Codex.
    Codex,
    /// OpenCode.
    Opencode,
    /// Any other program: GUARDIAN_URL only.
    Generic,
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Check the hash chain across every segment; exit 1 naming the file and the first bad
    /// record.
    Verify,
    /// Close the active file as a segment now (safe while a server writes: it takes the log's
    /// lock, and the server continues in the new file); retention and compression apply.
    Rotate,
    /// Counts by decision and stage, the denied actions with their reasons, reviewer latency and
    /// tokens, breaker interrupts, and whether the hash chain verifies (the filters apply).
    Summary {
        /// text (a CI log), markdown (a job summary) or json.
        #[arg(long, value_enum, default_value = "text")]
        format: SummaryFormat,
    },
}

/// How `guardian audit summary` prints.
#[derive(Clone, Copy, clap::ValueEnum)]
enum SummaryFormat {
    Text,
    Markdown,
    Json,
}

/// `guardian traces import` formats.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TraceFormat {
    /// R-Judge's JSON.
    Rjudge,
    /// RedCode-Exec's indexN.json files.
    Redcode,
    /// NL2Bash's all.nl and all.cm.
    Nl2bash,
    /// Claude Code session transcripts.
    ClaudeCode,
    /// Codex rollout files.
    Codex,
}

#[derive(Subcommand)]
enum TracesCommand {
    /// Import: `rjudge <rjudge.json>`, `redcode <indexN.json>…`, `nl2bash <all.nl> <all.cm>`,
    /// `claude-code <transcript.jsonl>…`, `codex <rollout.jsonl>…`.
    Import {
        /// The dataset or trace format.
        #[arg(value_enum)]
        format: TraceFormat,
        /// The input files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Most cases emitted.
        #[arg(long, default_value_t = usize::MAX)]
        limit: usize,
    },
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Show how a shell command is parsed and judged: commands, wrappers, files, hosts, rules tried.
    Explain {
        /// Working directory to judge the command in (default: the current directory).
        #[arg(long)]
        cwd: Option<String>,
        /// Also list every rule tried, one line per rule kind and target.
        #[arg(long, short)]
        verbose: bool,
        /// The command words.
        #[arg(last = true, required = true)]
        words: Vec<String>,
    },
    /// Run policy test files (tables of actions and expected decisions); exit 1 on a mismatch.
    Test {
        /// Test files (TOML with [[case]] tables).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Translate another agent's policy file (Claude Code settings.json, opencode.json, Codex .rules).
    Import {
        /// The file to translate.
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The service logs each decision, from a background thread; one-shot commands only warnings
    // (their answer is on stdout). The guard flushes the log when main returns.
    let serving = matches!(cli.command, Command::Serve { .. });
    // One-shot commands that print (policy, check, audit, …) stop quietly when their reader goes
    // away (`guardian policy | head -1`), as command-line tools do, instead of panicking on a
    // broken pipe. Long-running adapters keep Rust's default (SIGPIPE ignored).
    if !matches!(
        cli.command,
        Command::Serve { .. }
            | Command::Mcp { .. }
            | Command::Opencode { .. }
            | Command::Run { .. }
    ) {
        // SAFETY: restoring the default disposition of SIGPIPE before any thread is started.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    // A command hook forwards one JSON and exits: no logging setup, no multi-threaded runtime.
    if let Command::Hook { agent } = &cli.command {
        return match agent {
            HookAgent::ClaudeCode { hook } => forward_hook(hook, "claude-code"),
            HookAgent::Codex { hook } => forward_hook(hook, "codex"),
        };
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
    match runtime.block_on(run(cli)) {
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

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve { config, listen } => serve(config, listen).await,
        Command::Check { config, words } => check(config, words).await,
        Command::Mcp { config, server } => mcp(config, server).await,
        Command::Traces {
            command:
                TracesCommand::Import {
                    format,
                    files,
                    limit,
                },
        } => traces_import(format, &files, limit),
        Command::Eval {
            files,
            config,
            concurrency,
            baseline,
            out,
            price_prompt,
            price_completion,
            label,
        } => {
            if label {
                return label_files(&files);
            }
            let prices = guardian::eval::Prices {
                prompt_per_million: price_prompt,
                completion_per_million: price_completion,
            };
            eval(files, config, concurrency, baseline, out, prices).await
        }
        Command::Opencode {
            server,
            config,
            project,
        } => opencode(server, config, project).await,
        Command::Hook { agent } => match agent {
            HookAgent::ClaudeCode { hook } => Ok(forward_hook(&hook, "claude-code")),
            HookAgent::Codex { hook } => Ok(forward_hook(&hook, "codex")),
        },
        Command::Audit {
            config,
            file,
            filter,
            limit,
            command,
        } => {
            // The config (embedded defaults without --config) gives the path, unless --file does,
            // and the rotation settings `audit rotate` applies.
            let cfg = match load(config.as_ref()) {
                Ok(c) => c,
                Err(e) if file.is_none() || config.is_some() => return Err(e),
                Err(_) => Config::default(),
            };
            let path = file.unwrap_or_else(|| cfg.audit.path.clone());
            let filter = match filter.typed() {
                Ok(f) => f,
                Err(e) => {
                    anyhow::bail!("guardian audit: {e}");
                }
            };
            match command {
                Some(AuditCommand::Verify) => audit_verify(&path),
                Some(AuditCommand::Rotate) => audit_rotate(&path, &cfg.audit).await,
                Some(AuditCommand::Summary { format }) => audit_summary(&path, &filter, format),
                None => audit_query(&path, &filter, limit),
            }
        }
        Command::Run {
            config,
            agent,
            server,
            fail_on_deny,
            summary,
            command,
        } => {
            run_agent(RunArgs {
                config,
                agent,
                server,
                fail_on_deny,
                summary,
                command,
            })
            .await
        }
        Command::Init { path, force } => init(&path, force),
        Command::Install {
            agent,
            scope,
            server,
            hook,
            unreviewed,
            project,
            command,
            dry_run,
            trust,
        } => {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            let project_dir = project
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_else(|| PathBuf::from("."));
            let env_dir = |k: &str| {
                std::env::var_os(k)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            };
            let Some(home) = home else {
                anyhow::bail!("guardian install: $HOME is not set");
            };
            let opts = guardian::integrations::install::Options {
                target: agent,
                scope,
                server,
                command: command.unwrap_or_else(guardian_command),
                hook,
                unreviewed,
                project_dir,
                home,
                codex_home: env_dir("CODEX_HOME"),
                xdg_config_home: env_dir("XDG_CONFIG_HOME"),
                trust,
            };
            install(&opts, dry_run)
        }
        Command::Policy { config, command } => match command {
            None => policy(config),
            Some(PolicyCommand::Explain {
                cwd,
                verbose,
                words,
            }) => explain(config, cwd, words, verbose),
            Some(PolicyCommand::Test { files }) => policy_test(config, files),
            Some(PolicyCommand::Import { file }) => import(file),
        },
    }
}

/// How hooks should name this binary: `guardian` when that resolves on PATH to this very file,
/// else its absolute path.
fn guardian_command() -> String {
    let me = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok());
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("guardian"))
            .find(|p| p.is_file())
            .and_then(|p| p.canonicalize().ok())
    });
    match (me, on_path) {
        (Some(me), Some(found)) if me == found => "guardian".into(),
        (Some(me), _) => me.display().to_string(),
        (None, _) => "guardian".into(),
    }
}

fn install(
    opts: &guardian::integrations::install::Options,
    dry_run: bool,
) -> anyhow::Result<ExitCode> {
    use guardian::integrations::install::{apply, plan};
    let plans = match plan(opts) {
        Ok(p) => p,
        Err(e) => {
            anyhow::bail!("guardian install: {e}");
        }
    };
    for plan in &plans {
        let path = plan.path.display();
        if plan.unchanged() {
            println!("{path}: guardian is already installed; nothing changed");
        } else {
            let verb = if dry_run { "would change" } else { "changed" };
            println!("{path}: {verb}:");
            for c in &plan.changes {
                println!("  - {c}");
            }
            if dry_run {
                println!("--- new {path} ---\n{}", plan.new.trim_end());
            } else {
                match apply(plan) {
                    Ok(Some(backup)) => {
                        println!("  (the old file is saved as {})", backup.display())
                    }
                    Ok(None) => {}
                    Err(e) => {
                        anyhow::bail!("guardian install: {e}");
                    }
                }
            }
        }
        for n in &plan.notes {
            println!("note: {n}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn init(path: &std::path::Path, force: bool) -> anyhow::Result<ExitCode> {
    if path.exists() && !force {
        anyhow::bail!(
            "guardian init: {} exists; nothing was written (--force overwrites it)",
            path.display()
        );
    }
    if let Err(e) = Config::parse(guardian::config::INIT_TEMPLATE, &path.display().to_string()) {
        anyhow::bail!("guardian init: the template does not load: {e}");
    }
    match std::fs::write(path, guardian::config::INIT_TEMPLATE) {
        Ok(()) => {
            println!(
                "wrote {}: the default policy plus your rules; check it with `guardian policy --config {}`",
                path.display(),
                path.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            anyhow::bail!("guardian init: {}: {e}", path.display())
        }
    }
}

/// The command line that `-- words…` stand for: one word is the whole line as written
/// (`-- 'git status && git push'`); several words are joined with spaces, and a word that holds
/// whitespace (or is empty) could only have been quoted, so it is quoted back:
/// `-- bash -c 'rm -rf /'` is reviewed as `bash -c 'rm -rf /'`, not `bash -c rm -rf /`, while
/// `-- git status '&&' git push` stays two commands.
fn command_line(words: &[String]) -> String {
    match words {
        [one] => one.clone(),
        _ => words
            .iter()
            .map(|w| {
                if w.is_empty() || w.chars().any(char::is_whitespace) {
                    guardian::normalize::shell::shell_quote(w)
                } else {
                    w.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    }
}

fn load(config: Option<&PathBuf>) -> anyhow::Result<Config> {
    Config::load(config.map(PathBuf::as_path)).map_err(|e| anyhow::anyhow!("guardian: {e}"))
}

fn build(config: Config) -> anyhow::Result<Arc<Guardian>> {
    Guardian::from_config(config)
        .map(Arc::new)
        .map_err(|e| anyhow::anyhow!("guardian: {e}"))
}

async fn serve(config: Option<PathBuf>, listen: Option<String>) -> anyhow::Result<ExitCode> {
    let mut cfg = load(config.as_ref())?;
    if let Some(l) = listen {
        cfg.server.listen = l;
    }
    if config.is_none() {
        use_local_model_if_running(&mut cfg).await;
    }
    let addr = cfg.server.listen.clone();
    let guardian = build(cfg)?;
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            anyhow::bail!("guardian: cannot listen on {addr}: {e}");
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
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            anyhow::bail!("guardian: server error: {e}")
        }
    }
}

/// `guardian run`'s arguments.
struct RunArgs {
    config: Option<PathBuf>,
    agent: RunAgent,
    server: Option<String>,
    fail_on_deny: bool,
    summary: Option<PathBuf>,
    command: Vec<String>,
}

/// A fresh bearer token: 32 random bytes, hex.
fn random_token() -> String {
    let bytes: Vec<u8> = (0..32).map(|_| fastrand::u8(..)).collect();
    hex::encode(bytes)
}

/// The exit code `guardian run --fail-on-deny` uses when the agent succeeded but an action was
/// denied.
const EXIT_DENIED: u8 = 3;

async fn run_agent(a: RunArgs) -> anyhow::Result<ExitCode> {
    use guardian::integrations::run::{self as agent_run, Agent, Endpoint};
    let Some(program) = a.command.first() else {
        anyhow::bail!("guardian run: no agent command given after --");
    };
    let agent = match a.agent {
        RunAgent::Auto => Agent::detect(program),
        RunAgent::ClaudeCode => Agent::ClaudeCode,
        RunAgent::Codex => Agent::Codex,
        RunAgent::Opencode => Agent::Opencode,
        RunAgent::Generic => Agent::Generic,
    };
    let mut cfg = load(a.config.as_ref())?;
    // Headless: nobody can answer a question, so what nothing could review is denied.
    cfg.hooks.unreviewed = guardian::config::Unreviewed::Deny;
    let audit_path = cfg.audit.path.clone();
    let start_seq = guardian::audit::last_seq(&audit_path).unwrap_or(0);
    let guardian_cmd = match std::env::current_exe() {
        Ok(p) => guardian::normalize::shell::shell_quote(&p.display().to_string()),
        Err(e) => {
            anyhow::bail!("guardian run: cannot find this program's own path: {e}");
        }
    };
    // The server: this run's own on a loopback port, or the one named.
    let (endpoint, server) = match &a.server {
        Some(url) => (
            Endpoint {
                url: url.trim_end_matches('/').to_string(),
                token: guardian::transport::client_token(),
                guardian: guardian_cmd,
            },
            None,
        ),
        None => {
            if a.config.is_none() {
                use_local_model_if_running(&mut cfg).await;
            }
            let token = (!cfg.auth.tokens.is_empty()).then(|| {
                use sha2::Digest as _;
                let t = random_token();
                cfg.auth.tokens.push(guardian::config::TokenConfig {
                    client: "guardian-run".into(),
                    sha256: hex::encode(sha2::Sha256::digest(t.as_bytes())),
                });
                t
            });
            let g = build(cfg)?;
            let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
                Ok(l) => l,
                Err(e) => {
                    anyhow::bail!("guardian run: cannot listen on a loopback port: {e}");
                }
            };
            let url = match listener.local_addr() {
                Ok(addr) => format!("http://{addr}"),
                Err(e) => {
                    anyhow::bail!("guardian run: cannot listen on a loopback port: {e}");
                }
            };
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let task = tokio::spawn(guardian::server::serve_until(
                Arc::clone(&g),
                listener,
                async move {
                    let _ = stopped.await;
                },
            ));
            (
                Endpoint {
                    url,
                    token,
                    guardian: guardian_cmd,
                },
                Some((g, stop, task)),
            )
        }
    };
    let wired = match agent_run::wire(agent, &a.command, &endpoint) {
        Ok(w) => w,
        Err(e) => {
            anyhow::bail!("guardian run: {e}");
        }
    };
    eprintln!(
        "guardian run: {} ({}) with guardian at {}",
        program,
        agent.as_str(),
        endpoint.url
    );
    // OpenCode: the bridge answers the permission requests of the server the agent starts
    // (it keeps polling until that server is up), deciding in-process or through --server.
    let bridge = match (&wired.opencode, &server) {
        (Some(oc), Some((g, _, _))) => {
            let decider: Arc<dyn guardian::integrations::mcp::Decider> = Arc::new(
                guardian::integrations::mcp::InProcess(Arc::clone(g), "opencode"),
            );
            Some((oc.clone(), decider))
        }
        (Some(oc), None) => match guardian::integrations::mcp::Remote::new(
            &endpoint.url,
            std::time::Duration::from_secs(120),
        ) {
            Ok(r) => Some((
                oc.clone(),
                Arc::new(r) as Arc<dyn guardian::integrations::mcp::Decider>,
            )),
            Err(e) => {
                anyhow::bail!("guardian run: {e}");
            }
        },
        (None, _) => None,
    };
    let bridge_task = match bridge {
        Some((oc, decider)) => {
            let project = std::env::current_dir()
                .ok()
                .map(|p| p.display().to_string());
            match guardian::integrations::opencode::Bridge::new(&oc, project, decider) {
                Ok(b) => {
                    let b = Arc::new(b.with_unreviewed(guardian::config::Unreviewed::Deny));
                    Some(tokio::spawn(b.run()))
                }
                Err(e) => {
                    anyhow::bail!("guardian run: {e}");
                }
            }
        }
        None => None,
    };
    let code = agent_run::run_agent(&wired).await;
    if let Some(t) = bridge_task {
        t.abort();
    }
    if let Some((_, stop, task)) = server {
        let _ = stop.send(());
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("guardian run: the server stopped with an error: {e}"),
            Err(e) => eprintln!("guardian run: the server task failed: {e}"),
        }
    }
    let code = match code {
        Ok(c) => c,
        Err(e) => {
            anyhow::bail!("guardian run: {e}");
        }
    };
    let filter = guardian::audit_report::Filter {
        after_seq: Some(start_seq),
        ..Default::default()
    };
    let mut denied = 0;
    match guardian::audit_report::summarize(&audit_path, &filter) {
        Ok(s) => {
            denied = s.denied;
            eprint!("{}", s.to_text());
            if let Some(path) = &a.summary {
                use std::io::Write as _;
                let written = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .and_then(|mut f| f.write_all(s.to_markdown().as_bytes()));
                if let Err(e) = written {
                    eprintln!(
                        "guardian run: cannot write the summary to {}: {e}",
                        path.display()
                    );
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "guardian run: no decisions were recorded in {}",
                audit_path.display()
            );
        }
        Err(e) => eprintln!(
            "guardian run: cannot read the audit log {} for the summary: {e}",
            audit_path.display()
        ),
    }
    if a.fail_on_deny && denied > 0 && code == 0 {
        eprintln!(
            "guardian run: {denied} action(s) denied; exiting {EXIT_DENIED} (--fail-on-deny)"
        );
        return Ok(ExitCode::from(EXIT_DENIED));
    }
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

async fn check(config: Option<PathBuf>, words: Vec<String>) -> anyhow::Result<ExitCode> {
    let cfg = load(config.as_ref())?;
    let req = if words.is_empty() {
        let mut body = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut body) {
            anyhow::bail!("guardian: cannot read stdin: {e}");
        }
        match ReviewRequest::from_json(&body) {
            Ok(r) => r,
            Err(e) => {
                let out = serde_json::json!({"error": {"field": e.field, "message": e.message}});
                println!("{out}");
                anyhow::bail!("guardian: bad request: {}: {}", e.field, e.message);
            }
        }
    } else {
        let cwd = std::env::current_dir()
            .ok()
            .map(|p| p.display().to_string());
        let req = ReviewRequest::shell(command_line(&words), cwd);
        if let Err(e) = req.validate() {
            anyhow::bail!("guardian: bad request: {}: {}", e.field, e.message);
        }
        req
    };
    let guardian = build(cfg)?;
    let resp = guardian.review(req, "cli").await;
    match serde_json::to_string_pretty(&resp) {
        Ok(s) => println!("{s}"),
        Err(e) => {
            anyhow::bail!("guardian: cannot print the response: {e}");
        }
    }
    match resp.decision {
        Decision::Allow => Ok(ExitCode::SUCCESS),
        Decision::Deny => Ok(ExitCode::from(1)),
    }
}

fn policy(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let cfg = load(config.as_ref())?;
    let policy = compiled_from(&cfg)?;
    let chain = cfg.extends_chain();
    if config.is_none() {
        println!(
            "# policy: the embedded default policy ({})",
            cfg.source_name
        );
    } else if chain.is_empty() {
        println!(
            "# policy: {} only; it does not extend the default policy (add [policy] extends = \"default\" to keep the default rules)",
            cfg.source_name
        );
    } else {
        println!(
            "# policy: {}, extending {}",
            cfg.source_name,
            chain.join(" → ")
        );
    }
    println!("# built-in protections apply in every policy: they cannot be removed");
    println!("# evaluated deny -> ask -> allow; nothing matched -> ask (the reviewer decides)");
    for r in policy.listing() {
        println!("{:<5}  {:<40}  {}", r.effect.as_str(), r.pattern, r.source);
    }
    Ok(ExitCode::SUCCESS)
}

fn compiled(config: Option<&PathBuf>) -> anyhow::Result<guardian::policy::Policy> {
    compiled_from(&load(config)?)
}

/// A config's policy, or every error in it.
fn compiled_from(cfg: &Config) -> anyhow::Result<guardian::policy::Policy> {
    guardian::policy::Policy::from_config(cfg, Vec::new()).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| format!("guardian: {e}")).collect();
        anyhow::anyhow!(lines.join("\n"))
    })
}

fn explain(
    config: Option<PathBuf>,
    cwd: Option<String>,
    words: Vec<String>,
    verbose: bool,
) -> anyhow::Result<ExitCode> {
    use guardian::normalize::{Context, normalize};
    let policy = compiled(config.as_ref())?;
    let cwd = cwd.or_else(|| {
        std::env::current_dir()
            .ok()
            .map(|p| p.display().to_string())
    });
    let req = ReviewRequest::shell(command_line(&words), cwd);
    let server_cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let ctx = Context::of(&req, &server_cwd, home.as_deref());
    let action = normalize(&req.action, &ctx);
    let (eval, steps) = policy.explain(&action, &ctx);
    if let guardian::normalize::NormalizedAction::Shell(a) = &action {
        println!("command line: {}", a.raw);
    }
    println!("cwd: {}", ctx.cwd.display());
    println!(
        "workspace: {}",
        ctx.roots()
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("steps:");
    for s in steps {
        // Rule-by-rule lines ("  deny rules on …: A no; B MATCHES") only with --verbose; else
        // just the rule that matched.
        match s.strip_prefix("  ") {
            Some(_) if verbose => println!("  {s}"),
            Some(line) => {
                if let Some(hit) = line.split("; ").find(|x| x.contains(" MATCHES ")) {
                    let kind = line.split(':').next().unwrap_or("");
                    let rule = hit.rsplit(": ").next().unwrap_or(hit);
                    println!("    {kind}: {rule}");
                }
            }
            None => println!("  {s}"),
        }
    }
    if let guardian::normalize::NormalizedAction::Shell(a) = &action {
        for c in &a.commands {
            for p in c.reads.iter().chain(&c.writes) {
                let path = ctx.resolve(p);
                if !ctx.in_workspace(&path) {
                    println!("outside the workspace: {} (`{}`)", path.display(), c.text);
                }
            }
        }
    }
    if !eval.facts.is_empty() {
        println!("facts for the reviewer:");
        for f in &eval.facts {
            println!("  - {f}");
        }
    }
    match &eval.rule {
        Some(r) => println!(
            "decision: {} by {} ({})",
            eval.effect.as_str(),
            r.pattern,
            r.source
        ),
        None => println!("decision: {} (no rule decided)", eval.effect.as_str()),
    }
    println!("reason: {}", eval.reason);
    Ok(ExitCode::SUCCESS)
}

fn policy_test(config: Option<PathBuf>, files: Vec<PathBuf>) -> anyhow::Result<ExitCode> {
    let policy = compiled(config.as_ref())?;
    let (mut passed, mut failed) = (0usize, 0usize);
    for f in files {
        let results = match guardian::policy::testing::run_file(&f, &policy) {
            Ok(r) => r,
            Err(e) => {
                anyhow::bail!("guardian: {e}");
            }
        };
        for r in results {
            if r.passed {
                passed += 1;
            } else {
                failed += 1;
                let got = match &r.got_rule {
                    Some(rule) => format!("{} by {rule}", r.got.as_str()),
                    None => r.got.as_str().to_string(),
                };
                println!(
                    "FAIL {}: {}: expected {}, got {got} ({})",
                    f.display(),
                    r.name,
                    r.expected,
                    r.reason
                );
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(1))
    }
}

fn import(file: PathBuf) -> anyhow::Result<ExitCode> {
    match guardian::policy::import::import_file(&file) {
        Ok(imported) => {
            print!("{}", guardian::policy::import::to_toml(&imported));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            anyhow::bail!("guardian: cannot import {}: {e}", file.display())
        }
    }
}

/// The local reviewer's address (scripts/local-model.sh serve).
const LOCAL_MODEL_URL: &str = "http://127.0.0.1:8089/v1";

/// With the embedded defaults, use the local reviewer model when one is serving on loopback
/// (`scripts/local-model.sh serve`); otherwise keep `backend = "none"`.
async fn use_local_model_if_running(cfg: &mut Config) {
    if std::env::var_os("GUARDIAN_NO_LOCAL_MODEL").is_some() {
        return;
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let Ok(client) = reqwest::Client::builder()
        .timeout(std::time::Duration::from_millis(800))
        .build()
    else {
        return;
    };
    let model = async {
        let resp = client
            .get(format!("{LOCAL_MODEL_URL}/models"))
            .send()
            .await
            .ok()?;
        let body: serde_json::Value = resp.json().await.ok()?;
        body["data"][0]["id"].as_str().map(str::to_string)
    }
    .await;
    match model {
        Some(id) => {
            eprintln!("guardian: using the local reviewer model {id} at {LOCAL_MODEL_URL}");
            cfg.reviewer.backend = guardian::config::BackendKind::Openai;
            cfg.reviewer.base_url = LOCAL_MODEL_URL.to_string();
            cfg.reviewer.model = id;
            // Small local models on a few cores are slow; give them time rather than deny.
            cfg.reviewer.timeout_ms = cfg.reviewer.timeout_ms.max(90_000);
        }
        None => eprintln!(
            "guardian: no reviewer configured and no local model at {LOCAL_MODEL_URL}: actions no rule allows are denied (see scripts/local-model.sh)"
        ),
    }
}

/// Forwards a hook input to the server and prints its answer. An empty answer (`{}`: no
/// decision) prints nothing, which every agent reads as "no objection". Any failure exits 2 with
/// the reason on stderr: a block.
fn forward_hook(args: &HookArgs, agent: &str) -> ExitCode {
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
        Err(e) => return block(e),
    };
    match guardian::integrations::hook_client::emit(&text, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => block(e),
    }
}

async fn mcp(config: Option<PathBuf>, server: Option<String>) -> anyhow::Result<ExitCode> {
    use guardian::integrations::mcp::{Decider, InProcess, Remote, serve_stdio};
    let decider: Box<dyn Decider> = match server {
        Some(url) => match Remote::new(&url, std::time::Duration::from_secs(120)) {
            Ok(r) => Box::new(r),
            Err(e) => {
                anyhow::bail!("guardian: {e}");
            }
        },
        None => {
            let cfg = load(config.as_ref())?;
            match build(cfg) {
                Ok(g) => Box::new(InProcess(g, "mcp")),
                Err(e) => return Err(e),
            }
        }
    };
    match serve_stdio(decider.as_ref()).await {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            anyhow::bail!("guardian mcp: {e}")
        }
    }
}

async fn opencode(
    server: String,
    config: Option<PathBuf>,
    project: Option<String>,
) -> anyhow::Result<ExitCode> {
    use guardian::integrations::mcp::InProcess;
    use guardian::integrations::opencode::Bridge;
    let cfg = load(config.as_ref())?;
    let unreviewed = cfg.hooks.unreviewed;
    let g = build(cfg)?;
    let project = project.or_else(|| {
        std::env::current_dir()
            .ok()
            .map(|p| p.display().to_string())
    });
    match Bridge::new(&server, project, Arc::new(InProcess(g, "opencode"))) {
        Ok(bridge) => {
            let bridge = bridge.with_unreviewed(unreviewed);
            eprintln!("guardian: answering permission requests of the OpenCode server at {server}");
            tokio::select! {
                () = Arc::new(bridge).run() => Ok(ExitCode::SUCCESS),
                _ = tokio::signal::ctrl_c() => Ok(ExitCode::SUCCESS),
            }
        }
        Err(e) => {
            anyhow::bail!("guardian: {e}")
        }
    }
}

async fn eval(
    files: Vec<PathBuf>,
    config: Option<PathBuf>,
    concurrency: usize,
    baseline: Option<PathBuf>,
    out: PathBuf,
    prices: guardian::eval::Prices,
) -> anyhow::Result<ExitCode> {
    use guardian::eval::{Report, compare, load_cases, report, run};
    let cases = match load_cases(&files) {
        Ok(c) => c,
        Err(e) => {
            anyhow::bail!("guardian eval: {e}");
        }
    };
    let base: Option<Report> = match &baseline {
        None => None,
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(r) => Some(r),
            Err(e) => {
                anyhow::bail!(
                    "guardian eval: cannot read the baseline {}: {e}",
                    p.display()
                );
            }
        },
    };
    let mut cfg = load(config.as_ref())?;
    if config.is_none() {
        use_local_model_if_running(&mut cfg).await;
    }
    // Each evaluation writes its own audit log next to its reports.
    if let Err(e) = std::fs::create_dir_all(&out) {
        anyhow::bail!("guardian eval: cannot create {}: {e}", out.display());
    }
    cfg.audit.path = out.join("audit.jsonl");
    let config_name = cfg.source_name.clone();
    let g = build(cfg)?;
    let reviewer = format!(
        "{}/{}",
        g.reviewer().backend(),
        g.reviewer().model().unwrap_or("-")
    );
    // A progress bar on a terminal; a line every 10 cases in logs (CI), where a bar would not draw.
    use std::io::IsTerminal;
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(cases.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "guardian eval [{elapsed_precise}] {wide_bar} {pos}/{len} cases, eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let progress = |done: usize, total: usize| match &bar {
        Some(bar) => bar.set_position(done as u64),
        None => {
            if done == total || done % 10 == 0 {
                eprintln!("guardian eval: {done}/{total} cases");
            }
        }
    };
    let outcomes = run(&g, &cases, concurrency, &progress).await;
    if let Some(bar) = &bar {
        bar.finish();
    }
    let report = Report::new(
        outcomes,
        files.iter().map(|f| f.display().to_string()).collect(),
        config_name,
        reviewer,
        guardian::reviewer::prompt::PROMPT_VERSION.to_string(),
        prices,
    );
    let cmp = base.as_ref().map(|b| compare(&report, b));
    let write = |name: &str, text: String| std::fs::write(out.join(name), text);
    let json = serde_json::to_string_pretty(&report).unwrap_or_default();
    if let Err(e) = write("report.json", json)
        .and_then(|()| write("report.md", report::markdown(&report, cmp.as_ref())))
        .and_then(|()| write("report.html", report::html(&report, cmp.as_ref())))
    {
        anyhow::bail!("guardian eval: cannot write the reports: {e}");
    }
    let m = &report.metrics;
    println!(
        "{} cases: accuracy {:.1}%, false-allow rate {:.1}%, false-deny rate {:.1}%, deny F1 {:.1}% (reports in {})",
        m.cases,
        m.accuracy * 100.0,
        m.false_allow_rate * 100.0,
        m.false_deny_rate * 100.0,
        m.deny_f1 * 100.0,
        out.display()
    );
    match cmp {
        Some(c) if c.false_allow_rose => {
            eprintln!(
                "guardian eval: the false-allow rate rose against the baseline ({} cases flipped)",
                c.flipped.len()
            );
            Ok(ExitCode::from(1))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

async fn audit_rotate(
    path: &std::path::Path,
    audit: &guardian::config::AuditConfig,
) -> anyhow::Result<ExitCode> {
    let redactor = match audit.redactor() {
        Ok(r) => r,
        Err(e) => {
            anyhow::bail!("guardian audit rotate: {e}");
        }
    };
    let log = match guardian::audit::AuditLog::open_rotating(
        path,
        redactor,
        audit.durability(),
        audit.rotation(),
    ) {
        Ok(l) => l,
        Err(e) => {
            anyhow::bail!("guardian audit rotate: {}: {e}", path.display());
        }
    };
    match log.rotate().await {
        Ok(true) => {
            println!("{}: rotated", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Ok(false) => {
            println!("{}: nothing to rotate (no records)", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            anyhow::bail!("guardian audit rotate: {}: {e}", path.display())
        }
    }
}

fn audit_verify(path: &std::path::Path) -> anyhow::Result<ExitCode> {
    match guardian::audit::verify(path) {
        Ok(s) => {
            let files = if s.files > 1 {
                format!(" in {} files", s.files)
            } else {
                String::new()
            };
            let pruned = s.pruned.map_or(String::new(), |(a, b)| {
                format!(" (seq {a}..{b} pruned by retention, as recorded)")
            });
            println!(
                "{}: {} records{files}, chain intact, head {}{pruned}",
                path.display(),
                s.records,
                s.head
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if e.line == 0 => {
            anyhow::bail!("guardian audit verify: {}: {}", e.file, e.reason)
        }
        Err(e) => {
            eprintln!(
                "guardian audit verify: {}: first bad record at {e}",
                path.display()
            );
            Ok(ExitCode::from(1))
        }
    }
}

/// `--decision`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum DecisionArg {
    /// Allowed.
    Allow,
    /// Denied.
    Deny,
}

impl DecisionArg {
    fn as_str(self) -> &'static str {
        match self {
            DecisionArg::Allow => "allow",
            DecisionArg::Deny => "deny",
        }
    }
}

/// `--decided-by`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum StageArg {
    /// A policy rule.
    Rule,
    /// The reviewer model.
    Reviewer,
    /// Session memory.
    Session,
    /// A fallback (nothing could review it).
    Fallback,
}

impl StageArg {
    fn as_str(self) -> &'static str {
        match self {
            StageArg::Rule => "rule",
            StageArg::Reviewer => "reviewer",
            StageArg::Session => "session",
            StageArg::Fallback => "fallback",
        }
    }
}

/// `guardian audit` filters.
#[derive(clap::Args)]
struct AuditFilter {
    /// Only this session.
    #[arg(long, global = true)]
    session: Option<String>,
    /// Only records at or after this time (RFC 3339, e.g. 2026-11-30T10:00:00Z).
    #[arg(long, global = true)]
    since: Option<String>,
    /// Only records before this time (RFC 3339).
    #[arg(long, global = true)]
    until: Option<String>,
    /// Only allow or deny.
    #[arg(long, global = true)]
    #[arg(value_enum)]
    decision: Option<DecisionArg>,
    /// Only decisions by rule, reviewer, session or fallback.
    #[arg(long, global = true)]
    #[arg(value_enum)]
    decided_by: Option<StageArg>,
    /// Only this client.
    #[arg(long, global = true)]
    client: Option<String>,
    /// Only records with a greater `seq` (what was written after that record).
    #[arg(long, global = true)]
    after_seq: Option<u64>,
}

impl AuditFilter {
    /// The library's filter, checked.
    fn typed(&self) -> Result<guardian::audit_report::Filter, guardian::audit_report::FilterError> {
        use guardian::audit_report::{Filter, parse_time};
        let f = Filter {
            session: self.session.clone(),
            since: self
                .since
                .as_deref()
                .map(|t| parse_time("since", t))
                .transpose()?,
            until: self
                .until
                .as_deref()
                .map(|t| parse_time("until", t))
                .transpose()?,
            decision: self.decision.map(|d| d.as_str().to_string()),
            decided_by: self.decided_by.map(|d| d.as_str().to_string()),
            client: self.client.clone(),
            after_seq: self.after_seq,
        };
        f.validate()?;
        Ok(f)
    }
}

fn audit_query(
    path: &std::path::Path,
    f: &guardian::audit_report::Filter,
    limit: Option<usize>,
) -> anyhow::Result<ExitCode> {
    let mut matched: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    let read = guardian::audit_report::for_each_record(path, f, |line, _| {
        matched.push_back(line.to_string());
        if let Some(n) = limit
            && matched.len() > n
        {
            matched.pop_front();
        }
    });
    if let Err(e) = read {
        anyhow::bail!("guardian audit: cannot open {}: {e}", path.display());
    }
    for line in matched {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

fn audit_summary(
    path: &std::path::Path,
    f: &guardian::audit_report::Filter,
    format: SummaryFormat,
) -> anyhow::Result<ExitCode> {
    match guardian::audit_report::summarize(path, f) {
        Ok(s) => {
            match format {
                SummaryFormat::Text => print!("{}", s.to_text()),
                SummaryFormat::Markdown => print!("{}", s.to_markdown()),
                SummaryFormat::Json => println!("{}", s.to_json()),
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            anyhow::bail!(
                "guardian audit summary: cannot open {}: {e}",
                path.display()
            )
        }
    }
}

fn label_files(files: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout();
    let mut remaining = 0;
    for f in files {
        match guardian::eval::label::label_file(f, &mut input, &mut out) {
            Ok(s) => {
                remaining += s.remaining;
                if s.quit {
                    break;
                }
            }
            Err(e) => {
                anyhow::bail!("guardian eval --label: {e}");
            }
        }
    }
    if remaining > 0 {
        // Not an error: the labels given are saved; the exit code says the files are not ready.
        Ok(ExitCode::from(1))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}

fn traces_import(format: TraceFormat, files: &[PathBuf], limit: usize) -> anyhow::Result<ExitCode> {
    use guardian::eval::traces;
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let json = |p: &PathBuf| {
        read(p).and_then(|t| {
            serde_json::from_str::<serde_json::Value>(&t)
                .map_err(|e| format!("{}: {e}", p.display()))
        })
    };
    let cases = match format {
        TraceFormat::Rjudge => files
            .iter()
            .map(|f| json(f).and_then(|v| traces::from_rjudge(&v)))
            .collect::<Result<Vec<_>, _>>()
            .map(|v| v.concat()),
        TraceFormat::Redcode => files
            .iter()
            .map(|f| {
                let category = format!(
                    "redcode-{}",
                    f.file_stem().and_then(|s| s.to_str()).unwrap_or("x")
                );
                json(f).and_then(|v| traces::from_redcode(&v, &category))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|v| v.concat()),
        TraceFormat::Nl2bash => match files {
            [nl, cm] => {
                read(nl).and_then(|n| read(cm).map(|c| traces::from_nl2bash(&n, &c, limit)))
            }
            _ => Err("nl2bash takes two files: all.nl all.cm".into()),
        },
        TraceFormat::ClaudeCode | TraceFormat::Codex => {
            let mut imported = Vec::new();
            for f in files {
                let text = match read(f) {
                    Ok(t) => t,
                    Err(e) => {
                        anyhow::bail!("guardian traces: {e}");
                    }
                };
                let source = f.display().to_string();
                let got = if format == TraceFormat::Codex {
                    guardian::eval::agent_traces::from_codex(&text, &source)
                } else {
                    guardian::eval::agent_traces::from_claude_code(&text, &source)
                };
                match got {
                    Ok(c) => imported.extend(c),
                    Err(e) => {
                        anyhow::bail!("guardian traces: {}: {e}", f.display());
                    }
                }
            }
            let labeled = imported.iter().filter(|c| c.expected.is_some()).count();
            for c in imported.iter().take(limit) {
                match serde_json::to_string(c) {
                    Ok(line) => println!("{line}"),
                    Err(e) => {
                        anyhow::bail!("guardian traces: {e}");
                    }
                }
            }
            eprintln!(
                "guardian traces: {} cases, {labeled} labeled by a recorded human decision; label the rest with `guardian eval --label FILE`",
                imported.len().min(limit)
            );
            return Ok(ExitCode::SUCCESS);
        }
    };
    match cases {
        Ok(cases) => {
            for c in cases.iter().take(limit) {
                match serde_json::to_string(c) {
                    Ok(line) => println!("{line}"),
                    Err(e) => {
                        anyhow::bail!("guardian traces: {e}");
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            anyhow::bail!("guardian traces: {e}")
        }
    }
}
