//! `guardian health`: asks a running guardian's `/healthz` and exits 0 when it says "ok" (the
//! container image's HEALTHCHECK, which has no curl), 1 when it is degraded or does not answer.

use std::process::ExitCode;
use std::time::Duration;

/// `guardian health`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The service's health endpoint.
    #[arg(long, default_value = "http://127.0.0.1:8700/healthz")]
    pub(crate) url: String,
    /// Succeed while the service answers, also when its session store is down ("degraded"):
    /// liveness rather than readiness.
    #[arg(long)]
    pub(crate) live: bool,
    /// How long to wait for the answer, in milliseconds.
    #[arg(long, default_value_t = 2000)]
    pub(crate) timeout_ms: u64,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    let client = guardian::transport::http_client(Duration::from_millis(a.timeout_ms))?;
    let answer = match client.get(&a.url).send().await {
        Ok(r) if r.status().is_success() => r.json::<serde_json::Value>().await,
        Ok(r) => {
            eprintln!("guardian health: {} answered {}", a.url, r.status());
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => {
            eprintln!("guardian health: {}: {e}", a.url);
            return Ok(ExitCode::FAILURE);
        }
    };
    let body = match answer {
        Ok(body) => body,
        Err(e) => {
            eprintln!("guardian health: {}: not a health answer: {e}", a.url);
            return Ok(ExitCode::FAILURE);
        }
    };
    println!("{body}");
    let status = body.get("status").and_then(|s| s.as_str()).unwrap_or("");
    Ok(match status {
        "ok" => ExitCode::SUCCESS,
        "degraded" if a.live => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}
