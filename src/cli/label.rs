//! `guardian label --audit PATH`: the review page alone, over an audit log, on loopback, with
//! a token of its own (printed, or `GUARDIAN_UI_TOKEN`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use sha2::Digest as _;

/// `guardian label`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The audit log's active file (its rotated segments beside it are read too).
    #[arg(long)]
    pub(crate) audit: PathBuf,
    /// The labels file (default: beside the audit log, `<stem>-labels.jsonl`).
    #[arg(long)]
    pub(crate) labels: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8701")]
    pub(crate) listen: String,
    /// The name labels are given under (default: $USER).
    #[arg(long)]
    pub(crate) labeller: Option<String>,
    /// The deny threshold scored reviews are compared with (default: the shipped probe's).
    #[arg(long)]
    pub(crate) threshold: Option<f64>,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    if let Some(t) = a.threshold
        && !(0.0..=1.0).contains(&t)
    {
        anyhow::bail!("guardian label: --threshold must be from 0 to 1");
    }
    let labeller = a
        .labeller
        .or_else(|| std::env::var("USER").ok())
        .filter(|l| !l.trim().is_empty())
        .unwrap_or_else(|| "labeller".into());
    let token = match std::env::var("GUARDIAN_UI_TOKEN") {
        Ok(t) if !t.trim().is_empty() => t.trim().to_string(),
        _ => (0..32)
            .map(|_| format!("{:02x}", fastrand::u8(..)))
            .collect(),
    };
    let digest: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
    let threshold = a.threshold.or_else(|| {
        guardian::reviewer::probe::Probe::embedded()
            .ok()
            .map(|p| guardian::decision::local_probe(&p).deny)
    });
    let labels = a
        .labels
        .unwrap_or_else(|| guardian::config::default_labels_path(&a.audit));
    let state = guardian::ui::UiState::new(
        a.audit.clone(),
        labels.clone(),
        threshold,
        guardian::ui::Access::Tokens(vec![(labeller.clone(), digest)]),
    );
    let app = guardian::ui::router(Arc::new(state));
    let listener = tokio::net::TcpListener::bind(&a.listen)
        .await
        .map_err(|e| anyhow::anyhow!("guardian label: cannot listen on {}: {e}", a.listen))?;
    let local = listener.local_addr()?;
    eprintln!(
        "guardian label: {} → labels in {}, as {labeller}",
        a.audit.display(),
        labels.display()
    );
    eprintln!("guardian label: open http://{local}/ui/login and sign in with the token {token}");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(ExitCode::SUCCESS)
}
