//! `guardian mcp`: the stdio MCP server with the `approve` permission tool.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{build, load};

/// `guardian mcp`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Decide in-process with this config (default: the embedded defaults).
    #[arg(long, conflicts_with = "server")]
    pub(crate) config: Option<PathBuf>,
    /// Forward to a running guardian server instead.
    #[arg(long)]
    pub(crate) server: Option<String>,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    mcp(a.config, a.server).await
}

pub(crate) async fn mcp(
    config: Option<PathBuf>,
    server: Option<String>,
) -> anyhow::Result<ExitCode> {
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
