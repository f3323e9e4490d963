//! `guardian serve`: the HTTP service (API v1), SIGHUP rotating the audit log.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::local_model::use_local_model_if_running;
use super::{build, load};

/// `guardian serve`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Config file (default: the embedded policies/default.toml, no reviewer).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Address to listen on (overrides server.listen).
    #[arg(long)]
    pub(crate) listen: Option<String>,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    serve(a.config, a.listen).await
}

pub(crate) async fn serve(
    config: Option<PathBuf>,
    listen: Option<String>,
) -> anyhow::Result<ExitCode> {
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
    // The first review should not pay for the cold prompt prefix (reviewer.warm_up).
    let warm = Arc::clone(&guardian);
    tokio::spawn(async move { warm.warm_up().await });
    match guardian::server::serve(guardian, listener).await {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            anyhow::bail!("guardian: server error: {e}")
        }
    }
}
