//! `guardian install`: guardian's hook snippet merged into an agent's settings.

use std::path::PathBuf;
use std::process::ExitCode;

/// `guardian install`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The agent.
    #[arg(value_enum)]
    pub(crate) agent: guardian::integrations::Agent,
    /// The user's settings file or the project's.
    #[arg(long, value_enum, default_value = "project")]
    pub(crate) scope: guardian::integrations::install::Scope,
    /// The guardian server the hooks call.
    #[arg(long, default_value = "http://127.0.0.1:8700")]
    pub(crate) server: String,
    /// Claude Code: a command hook (`guardian hook claude-code`, blocks when the server is
    /// down) or an HTTP hook.
    #[arg(long, value_enum, default_value = "command")]
    pub(crate) hook: guardian::integrations::install::HookKind,
    /// What nothing could review becomes for this agent (default: the server's
    /// `[hooks] unreviewed`, deny).
    #[arg(long, value_enum)]
    pub(crate) unreviewed: Option<guardian::config::Unreviewed>,
    /// The project directory (project scope; default: the current directory).
    #[arg(long)]
    pub(crate) project: Option<PathBuf>,
    /// How command hooks name guardian (default: `guardian` when that is this binary on
    /// PATH, else this binary's absolute path).
    #[arg(long)]
    pub(crate) command: Option<String>,
    /// Print what would change and the new file; write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Codex: also record guardian's hooks as trusted in $CODEX_HOME/config.toml, as its
    /// `/hooks` review would (for unattended `codex exec`).
    #[arg(long)]
    pub(crate) trust: bool,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let project_dir = a
        .project
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
        agent: a.agent,
        scope: a.scope,
        server: a.server,
        hook_binary: a.command.is_none().then(guardian_hook_command).flatten(),
        command: a.command.unwrap_or_else(guardian_command),
        hook: a.hook,
        unreviewed: a.unreviewed,
        project_dir,
        home,
        codex_home: env_dir("CODEX_HOME"),
        xdg_config_home: env_dir("XDG_CONFIG_HOME"),
        trust: a.trust,
    };
    install(&opts, a.dry_run)
}

/// How hooks should name the small hook binary, when `guardian-hook` sits beside this binary:
/// `guardian-hook` when that resolves on PATH to that very file, else its absolute path.
pub(crate) fn guardian_hook_command() -> Option<String> {
    let small = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok())
        .and_then(|me| me.parent().map(|d| d.join("guardian-hook")))
        .filter(|p| p.is_file())?;
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("guardian-hook"))
            .find(|p| p.is_file())
            .and_then(|p| p.canonicalize().ok())
    });
    Some(if on_path.as_ref() == Some(&small) {
        "guardian-hook".into()
    } else {
        small.display().to_string()
    })
}

/// How hooks should name this binary: `guardian` when that resolves on PATH to this very file,
/// else its absolute path.
pub(crate) fn guardian_command() -> String {
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

pub(crate) fn install(
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
