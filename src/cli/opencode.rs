//! `guardian opencode`: the bridge answering an OpenCode server's permission requests.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::{build, load};

/// `guardian opencode`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The OpenCode server (`opencode serve`).
    #[arg(long)]
    pub(crate) server: String,
    /// Config file for the in-process pipeline (default: the embedded defaults).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// The project directory OpenCode works in (default: the current directory).
    #[arg(long)]
    pub(crate) project: Option<String>,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    opencode(a.server, a.config, a.project).await
}

pub(crate) async fn opencode(
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
