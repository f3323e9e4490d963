//! `guardian init`: a starting guardian.toml that extends the default policy.

use std::path::PathBuf;
use std::process::ExitCode;

use guardian::Config;

/// `guardian init`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Where to write it.
    #[arg(default_value = "guardian.toml")]
    pub(crate) path: PathBuf,
    /// Overwrite an existing file.
    #[arg(long)]
    pub(crate) force: bool,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    init(&a.path, a.force)
}

pub(crate) fn init(path: &std::path::Path, force: bool) -> anyhow::Result<ExitCode> {
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
