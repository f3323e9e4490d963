//! `guardian mandate`: the user's request compiled into its mandate (grants and prohibitions),
//! printed as JSON, with the operator's grants of the config and of `--grant`.

use std::path::PathBuf;
use std::process::ExitCode;

use super::load;

/// `guardian mandate`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Config file (default: the embedded policies/default.toml; its `[mandate]` and
    /// `[reviewer]` say how the request is compiled).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// An operator grant to add, in the grant grammar (`publish npm:@acme/ui-kit`); repeatable.
    #[arg(long = "grant", value_name = "GRANT")]
    pub(crate) grants: Vec<String>,
    /// The user's request.
    pub(crate) request: String,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    let cfg = load(a.config.as_ref())?;
    let operator = match guardian::mandate::declared(
        &cfg.mandate
            .grants
            .iter()
            .chain(&a.grants)
            .cloned()
            .collect::<Vec<_>>(),
    ) {
        Ok(m) => m,
        Err((i, e)) => anyhow::bail!("guardian: grant {}: {e}", i + 1),
    };
    let reviewer = guardian::reviewer::from_config(&cfg.reviewer)?;
    let c = guardian::mandate::compile::compile(&a.request, &cfg.mandate, reviewer.as_ref()).await;
    let out = serde_json::json!({
        "request_key": guardian::mandate::compile::request_key(&a.request),
        "mandate": c.mandate.with(&operator),
        "failure": c.failure,
        "tokens": {"prompt": c.usage.prompt_tokens, "completion": c.usage.completion_tokens},
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(ExitCode::SUCCESS)
}
