//! What every subcommand sets up the same way: the config (embedded defaults without
//! `--config`) and the pipeline built from it.

use std::path::PathBuf;
use std::sync::Arc;

use guardian::{Config, Guardian};

/// The config file given, or the embedded defaults.
pub(crate) fn load(config: Option<&PathBuf>) -> anyhow::Result<Config> {
    Config::load(config.map(PathBuf::as_path)).map_err(|e| anyhow::anyhow!("guardian: {e}"))
}

/// The pipeline for a config.
pub(crate) fn build(config: Config) -> anyhow::Result<Arc<Guardian>> {
    Guardian::from_config(config)
        .map(Arc::new)
        .map_err(|e| anyhow::anyhow!("guardian: {e}"))
}
