//! `guardian train`: fits the reviewer's probe from labelled cases (see
//! [`guardian::eval::train`]) and writes it where `reviewer.probe_file` can read it.

use std::path::PathBuf;
use std::process::ExitCode;

use super::load;
use super::local_model::use_local_model_if_running;

/// `guardian train`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Labelled case files (JSONL, as `guardian eval` reads). Never the held-out split.
    #[arg(required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// Config file naming the reviewer server (default: the local model if it is running).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Where the probe goes.
    #[arg(long, default_value = "probe.json")]
    pub(crate) out: PathBuf,
    /// A cache of embeddings (JSONL): a re-run embeds only texts it has not seen.
    #[arg(long)]
    pub(crate) cache: Option<PathBuf>,
    /// Regularisation strength (scikit-learn's C; smaller is stronger).
    #[arg(long, default_value_t = 0.01)]
    pub(crate) c: f64,
    /// Folds of the cross-validation.
    #[arg(long, default_value_t = 5)]
    pub(crate) folds: usize,
    /// Repeats of the cross-validation, each with its own folds; the threshold is chosen on
    /// their scores pooled (1: one assignment of folds, as files before this option).
    #[arg(long, default_value_t = 5)]
    pub(crate) repeats: usize,
    /// The false-allow rate the deny threshold is chosen for, over cross-validated scores.
    #[arg(long, default_value_t = 0.05)]
    pub(crate) target_false_allow: f64,
    /// The probe's version id (default: the output file's name without `.json`, so
    /// `--out prompts/probe-v3.json` writes `probe-v3`).
    #[arg(long)]
    pub(crate) version: Option<String>,
    /// A rules-only `guardian eval` report (GUARDIAN_NO_LOCAL_MODEL=1) of these cases: the cases
    /// a rule decides keep their decision when the threshold is chosen, as in the pipeline.
    #[arg(long)]
    pub(crate) fixed_by: Option<PathBuf>,
    /// With --fixed-by: choose the threshold on the cases of these files only (default: all).
    #[arg(long)]
    pub(crate) calibrate_on: Vec<PathBuf>,
    /// Also write every case's features (JSONL: id, file, deny, embedding), for analysis
    /// outside guardian.
    #[arg(long)]
    pub(crate) dump_features: Option<PathBuf>,
    /// The text the embeddings are taken of: `probe-text-v1` (the request and the action, the
    /// shipped probe's) or `probe-text-v2` (also guardian's risk signals).
    #[arg(long, default_value = guardian::reviewer::probe::TEXT_FORMAT,
          value_parser = clap::builder::PossibleValuesParser::new(guardian::reviewer::probe::TEXT_FORMATS))]
    pub(crate) text_format: String,
    /// sha256 of the served model file (default: read from the server's /props model_path).
    #[arg(long)]
    pub(crate) model_sha256: Option<String>,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    use guardian::eval::train::{Cache, TrainSpec, embed_files, train};
    if a.files.iter().any(|f| {
        f.components()
            .any(|c| c.as_os_str() == "heldout" || c.as_os_str() == "holdout")
    }) {
        anyhow::bail!("guardian train: held-out data is for evaluation only");
    }
    if a.folds < 2 || a.repeats < 1 || !(0.0..1.0).contains(&a.target_false_allow) || a.c <= 0.0 {
        anyhow::bail!(
            "guardian train: --folds must be at least 2, --repeats at least 1, --c positive, --target-false-allow in [0, 1)"
        );
    }
    let mut cfg = load(a.config.as_ref())?;
    if a.config.is_none() {
        use_local_model_if_running(&mut cfg).await;
    }
    if cfg.reviewer.backend != guardian::config::BackendKind::Openai {
        anyhow::bail!(
            "guardian train: needs an OpenAI-compatible reviewer server with embeddings (scripts/local-model.sh serve, or --config)"
        );
    }
    let model_sha256 = match &a.model_sha256 {
        Some(s) => s.to_ascii_lowercase(),
        None => {
            let timeout = std::time::Duration::from_secs(5);
            let file = guardian::reviewer::openai::served_model_file(&cfg.reviewer.base_url, timeout)
                .await
                .ok_or_else(|| anyhow::anyhow!("guardian train: the server does not say which model file it runs (GET /props model_path): give --model-sha256"))?;
            guardian::reviewer::probe::model_file_sha256(&file).map_err(|e| {
                anyhow::anyhow!("guardian train: cannot hash {}: {e}", file.display())
            })?
        }
    };
    let reviewer = guardian::reviewer::from_config(&cfg.reviewer)
        .map_err(|e| anyhow::anyhow!("guardian train: {e}"))?;
    let mut cache = Cache::open(a.cache.as_deref())?;
    let started = std::time::Instant::now();
    let progress = |done: usize, total: usize| {
        if done % 50 == 0 {
            let secs = started.elapsed().as_secs_f64();
            eprintln!("guardian train: embedded {done} of {total} ({secs:.0} s)");
        }
    };
    let data = embed_files(
        reviewer.as_ref(),
        &a.files,
        &a.text_format,
        &model_sha256,
        &mut cache,
        progress,
    )
    .await
    .map_err(|e| anyhow::anyhow!("guardian train: {e}"))?;
    if let Some(path) = &a.dump_features {
        dump_features(path, &data)?;
    }
    let fixed = a.fixed_by.as_deref().map(rule_decided).transpose()?;
    if let Some(c) = a.calibrate_on.iter().find(|c| !a.files.contains(c)) {
        anyhow::bail!(
            "guardian train: --calibrate-on {} is not one of the case files",
            c.display()
        );
    }
    let threshold_files = a
        .calibrate_on
        .iter()
        .filter_map(|c| a.files.iter().position(|f| f == c))
        .collect();
    let spec = TrainSpec {
        version: a.version.clone().unwrap_or_else(|| {
            a.out
                .file_stem()
                .map_or("probe".into(), |s| s.to_string_lossy().into_owned())
        }),
        text_format: a.text_format.clone(),
        model: cfg.reviewer.model.clone(),
        model_sha256,
        c: a.c,
        folds: a.folds,
        repeats: a.repeats,
        target_false_allow: a.target_false_allow,
        manifest: data.manifest,
        fixed,
        threshold_files,
    };
    let probe = train(&data.x, &data.examples, &spec);
    let json = serde_json::to_string(&probe)?;
    std::fs::write(&a.out, format!("{json}\n"))
        .map_err(|e| anyhow::anyhow!("guardian train: cannot write {}: {e}", a.out.display()))?;
    let t = &probe.training;
    println!(
        "guardian train: {} cases ({} deny), {}-fold cross-validated AUC {:.3} (mean of {} repeats); threshold {:.4} for false-allow ≤ {:.1}% (cross-validated false-deny {:.1}%); wrote {}",
        t.cases,
        t.deny_cases,
        t.folds,
        t.cv_auc,
        t.repeats,
        probe.threshold,
        100.0 * t.target_false_allow,
        100.0 * t.cv_false_deny,
        a.out.display()
    );
    for m in &t.manifest {
        match m.cv_auc {
            Some(auc) => println!(
                "  {}: {} cases, cross-validated AUC {auc:.3}",
                m.file, m.cases
            ),
            None => println!("  {}: {} cases (one label)", m.file, m.cases),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Every case's features as JSON lines (id, file, deny, embedding).
fn dump_features(
    path: &std::path::Path,
    data: &guardian::eval::train::Embedded,
) -> anyhow::Result<()> {
    let mut out = String::new();
    for (e, x) in data.examples.iter().zip(&data.x) {
        let file = &data.manifest[e.file].file;
        let line = serde_json::json!({"id": e.id, "file": file, "deny": e.deny, "embedding": x});
        out.push_str(&format!("{line}\n"));
    }
    std::fs::write(path, out)?;
    Ok(())
}

/// The rule-decided cases of a rules-only report.json.
fn rule_decided(path: &std::path::Path) -> anyhow::Result<std::collections::HashMap<String, bool>> {
    let text = std::fs::read_to_string(path)?;
    let report: guardian::eval::Report = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "guardian train: {} is not a report.json: {e}",
            path.display()
        )
    })?;
    Ok(guardian::eval::train::rule_decided(&report))
}
