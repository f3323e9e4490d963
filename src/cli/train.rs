//! `guardian train`: fits the reviewer's probe from labelled cases (see
//! [`guardian::eval::train`]) and writes it where `reviewer.probe_file` can read it.

use std::path::PathBuf;
use std::process::ExitCode;

use super::load;
use super::local_model::use_local_model_if_running;

/// `guardian train`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Labelled case files (JSONL, as `guardian eval` reads). Never the held-out split. With
    /// --labels and no files: the shipped probe's training files (those present).
    #[arg(required_unless_present = "labels")]
    pub(crate) files: Vec<PathBuf>,
    /// A labels file of the review page (`guardian label`, `/ui`): the team's labelled
    /// decisions are added to the training data, and the before/after is printed on them and
    /// on the held-out split.
    #[arg(long)]
    pub(crate) labels: Option<PathBuf>,
    /// With --labels: the audit log the labels judge (default: the config's [audit] path).
    #[arg(long)]
    pub(crate) audit: Option<PathBuf>,
    /// With --labels: the held-out split the before/after is measured on.
    #[arg(long, default_value = "evals/datasets/heldout")]
    pub(crate) heldout: PathBuf,
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

pub(crate) async fn run(mut a: Args) -> anyhow::Result<ExitCode> {
    use guardian::eval::train::{Cache, TrainSpec, embed_files, train_scored};
    let team = match a.labels.clone() {
        Some(labels) => Some(team_cases(&mut a, &labels)?),
        None => None,
    };
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
        manifest: data.manifest.clone(),
        fixed,
        threshold_files,
    };
    let (probe, oof) = train_scored(&data.x, &data.examples, &spec);
    let json = serde_json::to_string(&probe)?;
    std::fs::write(&a.out, format!("{json}\n"))
        .map_err(|e| anyhow::anyhow!("guardian train: cannot write {}: {e}", a.out.display()))?;
    print_trained(&probe, &a.out);
    if let Some(team_file) = team {
        let before = current_probe(&cfg, &spec.model_sha256);
        let compare = Compare {
            reviewer: reviewer.as_ref(),
            cache: &mut cache,
            team_file: &team_file,
            heldout: &a.heldout,
        };
        compare.print(&data, &oof, before, &probe, &spec).await?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What was trained: the cases, the cross-validated AUC and threshold, per file.
fn print_trained(probe: &guardian::reviewer::probe::Probe, out: &std::path::Path) {
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
        out.display()
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
}

/// `--labels`: the team's labelled decisions written as cases beside `--out`
/// (`<stem>-team-cases.jsonl`) and added to the files; without files, the shipped probe's
/// training files that are present.
fn team_cases(a: &mut Args, labels: &std::path::Path) -> anyhow::Result<PathBuf> {
    use guardian::eval::audit_cases;
    let audit = match &a.audit {
        Some(p) => p.clone(),
        None => load(a.config.as_ref())?.audit.path,
    };
    let (labelled, bad) = guardian::labels::read(labels)
        .map_err(|e| anyhow::anyhow!("guardian train: {}: {e}", labels.display()))?;
    for (line, why) in bad {
        eprintln!(
            "guardian train: {}:{line}: not a label, skipped: {why}",
            labels.display()
        );
    }
    let files = audit_cases::files_of_log(&audit)
        .map_err(|e| anyhow::anyhow!("guardian train: {}: {e}", audit.display()))?;
    let mut out = String::new();
    let mut n = 0;
    let unreadable = audit_cases::read_records(&files, &Default::default(), |file, r| {
        let label = audit_cases::record_id(&r).and_then(|id| labelled.get(id));
        if let (true, Some(l)) = (audit_cases::is_action_decision(&r), label)
            && let Some(case) = audit_cases::case_of(&r, file, Some(l))
            && let Ok(line) = serde_json::to_string(&case)
        {
            out.push_str(&line);
            out.push('\n');
            n += 1;
        }
    });
    for b in unreadable {
        eprintln!("guardian train: {b} (skipped)");
    }
    if n == 0 {
        anyhow::bail!(
            "guardian train: no record of {} is labelled in {}",
            audit.display(),
            labels.display()
        );
    }
    let stem = a
        .out
        .file_stem()
        .map_or("probe".into(), |s| s.to_string_lossy().into_owned());
    let team_file = a.out.with_file_name(format!("{stem}-team-cases.jsonl"));
    std::fs::write(&team_file, out)
        .map_err(|e| anyhow::anyhow!("guardian train: {}: {e}", team_file.display()))?;
    eprintln!(
        "guardian train: {n} labelled decisions from {} → {}",
        audit.display(),
        team_file.display()
    );
    if a.files.is_empty() {
        let shipped = guardian::reviewer::probe::Probe::embedded()
            .map_err(|e| anyhow::anyhow!("guardian train: {e}"))?;
        for m in &shipped.training.manifest {
            let f = PathBuf::from(&m.file);
            if f.exists() {
                a.files.push(f);
            } else {
                eprintln!(
                    "guardian train: the shipped training file {} is not here (scripts/probe-data.sh makes the .models/train ones); training without it",
                    m.file
                );
            }
        }
    }
    a.files.push(team_file.clone());
    Ok(team_file)
}

/// The probe in use before this training, when it reads the same model; else why not.
fn current_probe(
    cfg: &guardian::Config,
    model_sha256: &str,
) -> Result<guardian::reviewer::probe::Probe, String> {
    let p = cfg.probe().map_err(|e| e.to_string())?;
    p.check_model(model_sha256).map_err(|e| e.to_string())?;
    Ok(p)
}

/// The before/after of `--labels`.
struct Compare<'a> {
    reviewer: &'a dyn guardian::reviewer::Reviewer,
    cache: &'a mut guardian::eval::train::Cache,
    team_file: &'a std::path::Path,
    heldout: &'a std::path::Path,
}

impl Compare<'_> {
    /// Prints the current probe and the new one side by side: on the team's labelled cases
    /// (`oof`: the new probe's cross-validated scores, from its training: it never scores a case
    /// it was fitted on) and on the held-out split.
    async fn print(
        self,
        data: &guardian::eval::train::Embedded,
        oof: &[f64],
        before: Result<guardian::reviewer::probe::Probe, String>,
        after: &guardian::reviewer::probe::Probe,
        spec: &guardian::eval::train::TrainSpec,
    ) -> anyhow::Result<()> {
        use guardian::eval::train::{ProbeOutcome, embed_files};
        let team_idx = data
            .manifest
            .iter()
            .position(|m| std::path::Path::new(&m.file) == self.team_file)
            .ok_or_else(|| anyhow::anyhow!("guardian train: the team's cases were not read"))?;
        let rows: Vec<usize> = (0..data.examples.len())
            .filter(|i| data.examples[*i].file == team_idx)
            .collect();
        let deny: Vec<bool> = rows.iter().map(|i| data.examples[*i].deny).collect();
        let after_team: Vec<f64> = rows.iter().map(|i| oof[*i]).collect();
        let scores_of = |p: &guardian::reviewer::probe::Probe, x: &[Vec<f64>], idx: &[usize]| {
            idx.iter()
                .map(|i| p.score(&x[*i]).unwrap_or(1.0))
                .collect::<Vec<f64>>()
        };
        let mut held_files: Vec<PathBuf> = std::fs::read_dir(self.heldout)
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                    .collect()
            })
            .unwrap_or_default();
        held_files.sort();
        let held = if held_files.is_empty() {
            None
        } else {
            let e = embed_files(
                self.reviewer,
                &held_files,
                &spec.text_format,
                &spec.model_sha256,
                self.cache,
                |_, _| {},
            )
            .await
            .map_err(|e| anyhow::anyhow!("guardian train: held-out: {e}"))?;
            Some(e)
        };
        let name = |p: &guardian::reviewer::probe::Probe| {
            format!("{} (threshold {:.3})", p.version, p.threshold)
        };
        let before_name = match &before {
            Ok(p) => name(p),
            Err(_) => "before".into(),
        };
        println!();
        println!(
            "the probe alone, at each probe's threshold (in the pipeline a rule decides some cases first):"
        );
        println!("{:<34} {:<48} {}", "", before_name, name(after));
        let cell = |o: Option<ProbeOutcome>| o.map_or_else(|| "–".to_string(), |o| o.cell());
        let team_before = before
            .as_ref()
            .ok()
            .map(|p| ProbeOutcome::of(&scores_of(p, &data.x, &rows), &deny, p.threshold));
        println!(
            "{:<34} {:<48} {}",
            format!("team labels ({} cases, CV)", rows.len()),
            cell(team_before),
            cell(Some(ProbeOutcome::of(&after_team, &deny, after.threshold)))
        );
        match held {
            Some(h) => {
                let all: Vec<usize> = (0..h.examples.len()).collect();
                let d: Vec<bool> = h.examples.iter().map(|e| e.deny).collect();
                let b = before
                    .as_ref()
                    .ok()
                    .map(|p| ProbeOutcome::of(&scores_of(p, &h.x, &all), &d, p.threshold));
                let a = ProbeOutcome::of(&scores_of(after, &h.x, &all), &d, after.threshold);
                println!(
                    "{:<34} {:<48} {}",
                    format!("held-out ({} cases)", all.len()),
                    cell(b),
                    cell(Some(a))
                );
            }
            None => println!("held-out: no case files in {}", self.heldout.display()),
        }
        if let Err(why) = before {
            println!("(no before: {why})");
        }
        Ok(())
    }
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
