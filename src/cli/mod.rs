//! The `guardian` command line, one file per subcommand: each parses nothing (clap did), calls
//! the library, and returns `anyhow::Result<ExitCode>`; [`run`] dispatches, and `main` prints an
//! error and exits 2 (the one error path). Exit codes of `check`: 0 allow, 1 deny, 2 bad input or
//! config.

mod audit;
mod check;
mod eval;
mod hook;
mod init;
mod install;
mod local_model;
mod mcp;
mod opencode;
mod policy;
mod run;
mod serve;
mod traces;

pub(crate) use audit::*;
pub(crate) use check::*;
pub(crate) use eval::*;
pub(crate) use hook::*;
pub(crate) use init::*;
pub(crate) use install::*;
pub(crate) use local_model::*;
pub(crate) use mcp::*;
pub(crate) use opencode::*;
pub(crate) use policy::*;
pub(crate) use run::*;
pub(crate) use serve::*;
pub(crate) use traces::*;

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use guardian::request::ReviewRequest;
use guardian::{Config, Decision, Guardian};

#[derive(Parser)]
#[command(
    name = "guardian",
    version,
    about = "Decides whether an AI coding agent may run a tool call"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
        #[arg(required_unless_present = "from_report")]
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
        /// Print the highest reviewer.deny_threshold whose false-allow rate over these cases is
        /// at most this rate (0–1), with the false-deny rate it costs (needs scored reviews:
        /// reviewer.scoring = "logprobs").
        #[arg(long, value_parser = rate_in_unit)]
        target_false_allow: Option<f64>,
        /// Instead of running cases, read a previous report.json and print its threshold sweep
        /// (with --target-false-allow, the threshold that meets it).
        #[arg(long, conflicts_with_all = ["files", "label", "baseline"])]
        from_report: Option<PathBuf>,
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

/// `guardian run --agent`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum RunAgent {
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
pub(crate) enum AuditCommand {
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
pub(crate) enum SummaryFormat {
    Text,
    Markdown,
    Json,
}

/// `guardian traces import` formats.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TraceFormat {
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
pub(crate) enum TracesCommand {
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
pub(crate) enum PolicyCommand {
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

pub(crate) async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
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
            target_false_allow,
            from_report,
        } => {
            if label {
                return label_files(&files);
            }
            if let Some(report) = from_report {
                return sweep_report(&report, target_false_allow);
            }
            let prices = guardian::eval::Prices {
                prompt_per_million: price_prompt,
                completion_per_million: price_completion,
            };
            eval(
                files,
                config,
                concurrency,
                baseline,
                out,
                prices,
                target_false_allow,
            )
            .await
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

pub(crate) fn load(config: Option<&PathBuf>) -> anyhow::Result<Config> {
    Config::load(config.map(PathBuf::as_path)).map_err(|e| anyhow::anyhow!("guardian: {e}"))
}

pub(crate) fn build(config: Config) -> anyhow::Result<Arc<Guardian>> {
    Guardian::from_config(config)
        .map(Arc::new)
        .map_err(|e| anyhow::anyhow!("guardian: {e}"))
}
