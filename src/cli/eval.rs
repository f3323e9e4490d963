//! `guardian eval`: labeled cases through the whole pipeline, and `--label` by hand.

use std::path::PathBuf;
use std::process::ExitCode;

use super::local_model::use_local_model_if_running;
use super::{build, load};

/// `guardian eval`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Case files (JSONL: {"id", "request", "expected", "category", "source", "notes"}).
    #[arg(required_unless_present = "from_report")]
    pub(crate) files: Vec<PathBuf>,
    /// Config file (default: the embedded defaults, with the local model if it is running).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Cases reviewed at once.
    #[arg(long, default_value_t = 4)]
    pub(crate) concurrency: usize,
    /// A previous report.json: show flips and deltas, and exit 1 if the false-allow rate rose.
    #[arg(long)]
    pub(crate) baseline: Option<PathBuf>,
    /// Where report.json, report.md and report.html go.
    #[arg(long, default_value = "eval-report")]
    pub(crate) out: PathBuf,
    /// Price per million prompt tokens, for the cost estimate.
    #[arg(long, default_value_t = 0.0)]
    pub(crate) price_prompt: f64,
    /// Price per million completion tokens.
    #[arg(long, default_value_t = 0.0)]
    pub(crate) price_completion: f64,
    /// Label the unlabeled cases of the files by hand (from `traces import`) instead of
    /// evaluating: each answer is saved at once.
    #[arg(long)]
    pub(crate) label: bool,
    /// Print the highest reviewer.deny_threshold whose false-allow rate over these cases is
    /// at most this rate (0–1), with the false-deny rate it costs (needs scored reviews:
    /// reviewer.scoring = "logprobs" or "probe").
    #[arg(long, value_parser = rate_in_unit)]
    pub(crate) target_false_allow: Option<f64>,
    /// Instead of running cases, read a previous report.json and print its threshold sweep
    /// (with --target-false-allow, the threshold that meets it).
    #[arg(long, conflicts_with_all = ["files", "label", "baseline"])]
    pub(crate) from_report: Option<PathBuf>,
    /// How the user's request is compiled into a mandate for this run, overriding the config's
    /// `[mandate] compile` (`off` measures guardian without it, side by side).
    #[arg(long, value_parser = compile_mode)]
    pub(crate) mandate: Option<guardian::mandate::compile::CompileMode>,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    if a.label {
        return label_files(&a.files);
    }
    if let Some(report) = a.from_report {
        return sweep_report(&report, a.target_false_allow);
    }
    let prices = guardian::eval::Prices {
        prompt_per_million: a.price_prompt,
        completion_per_million: a.price_completion,
    };
    let cfg = eval_config(a.config.as_ref(), a.mandate).await?;
    eval(
        a.files,
        cfg,
        a.concurrency,
        a.baseline,
        a.out,
        prices,
        a.target_false_allow,
    )
    .await
}

/// `--mandate`: `off`, `code` or `model`.
fn compile_mode(s: &str) -> Result<guardian::mandate::compile::CompileMode, String> {
    use guardian::mandate::compile::CompileMode;
    match s {
        "off" => Ok(CompileMode::Off),
        "code" => Ok(CompileMode::Code),
        "model" => Ok(CompileMode::Model),
        other => Err(format!("`{other}` is not one of off, code, model")),
    }
}

/// The config evaluated: the file given, else the embedded defaults with the local model if it
/// is running; `--mandate` overrides its `[mandate] compile`.
async fn eval_config(
    config: Option<&PathBuf>,
    mandate: Option<guardian::mandate::compile::CompileMode>,
) -> anyhow::Result<guardian::Config> {
    let mut cfg = load(config)?;
    if config.is_none() {
        use_local_model_if_running(&mut cfg).await;
    }
    if let Some(m) = mandate {
        cfg.mandate.compile = m;
    }
    Ok(cfg)
}

pub(crate) async fn eval(
    files: Vec<PathBuf>,
    mut cfg: guardian::Config,
    concurrency: usize,
    baseline: Option<PathBuf>,
    out: PathBuf,
    prices: guardian::eval::Prices,
    target_false_allow: Option<f64>,
) -> anyhow::Result<ExitCode> {
    use guardian::eval::{Report, compare, load_cases, report, run};
    let cases = match load_cases(&files) {
        Ok(c) => c,
        Err(e) => {
            anyhow::bail!("guardian eval: {e}");
        }
    };
    let base: Option<Report> = match &baseline {
        None => None,
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(r) => Some(r),
            Err(e) => {
                anyhow::bail!(
                    "guardian eval: cannot read the baseline {}: {e}",
                    p.display()
                );
            }
        },
    };
    // Each evaluation writes its own audit log next to its reports.
    if let Err(e) = std::fs::create_dir_all(&out) {
        anyhow::bail!("guardian eval: cannot create {}: {e}", out.display());
    }
    cfg.audit.path = out.join("audit.jsonl");
    let config_name = cfg.source_name.clone();
    let g = build(cfg)?;
    // Latencies measure warm reviews: the cold prompt prefix is paid here, once.
    g.warm_up().await;
    let reviewer = format!(
        "{}/{}",
        g.reviewer().backend(),
        g.reviewer().model().unwrap_or("-")
    );
    // A progress bar on a terminal; a line every 10 cases in logs (CI), where a bar would not draw.
    use std::io::IsTerminal;
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(cases.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "guardian eval [{elapsed_precise}] {wide_bar} {pos}/{len} cases, eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let progress = |done: usize, total: usize| match &bar {
        Some(bar) => bar.set_position(done as u64),
        None => {
            if done == total || done % 10 == 0 {
                eprintln!("guardian eval: {done}/{total} cases");
            }
        }
    };
    let outcomes = run(&g, &cases, concurrency, &progress).await;
    if let Some(bar) = &bar {
        bar.finish();
    }
    let report = Report::new(
        outcomes,
        files.iter().map(|f| f.display().to_string()).collect(),
        config_name,
        reviewer,
        guardian::reviewer::prompt::PROMPT_VERSION.to_string(),
        prices,
    );
    let cmp = base.as_ref().map(|b| compare(&report, b));
    let write = |name: &str, text: String| std::fs::write(out.join(name), text);
    let json = serde_json::to_string_pretty(&report).unwrap_or_default();
    if let Err(e) = write("report.json", json)
        .and_then(|()| write("report.md", report::markdown(&report, cmp.as_ref())))
        .and_then(|()| write("report.html", report::html(&report, cmp.as_ref())))
    {
        anyhow::bail!("guardian eval: cannot write the reports: {e}");
    }
    let m = &report.metrics;
    println!(
        "{} cases: accuracy {:.1}%, false-allow rate {:.1}%, false-deny rate {:.1}%, deny F1 {:.1}% (reports in {})",
        m.cases,
        m.accuracy * 100.0,
        m.false_allow_rate * 100.0,
        m.false_deny_rate * 100.0,
        m.deny_f1 * 100.0,
        out.display()
    );
    if let Some(t) = &report.thresholds {
        print_sweep(t);
    }
    if let Some(target) = target_false_allow {
        print_target(&report.outcomes, target);
    }
    match cmp {
        Some(c) if c.false_allow_rose => {
            eprintln!(
                "guardian eval: the false-allow rate rose against the baseline ({} cases flipped)",
                c.flipped.len()
            );
            Ok(ExitCode::from(1))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// `--from-report`: the threshold sweep of a previous report.json.
pub(crate) fn sweep_report(
    path: &std::path::Path,
    target: Option<f64>,
) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("guardian eval: cannot read {}: {e}", path.display()))?;
    let report: guardian::eval::Report = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "guardian eval: {} is not a report.json: {e}",
            path.display()
        )
    })?;
    match guardian::eval::threshold::sweep(&report.outcomes) {
        Some(t) => print_sweep(&t),
        None => anyhow::bail!(
            "guardian eval: {} has no scored reviews (reviewer.scoring = \"logprobs\" or \"probe\")",
            path.display()
        ),
    }
    if let Some(target) = target {
        print_target(&report.outcomes, target);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_sweep(t: &guardian::eval::threshold::Sweep) {
    println!(
        "{} scored reviews, ROC AUC {}",
        t.scored,
        t.auc.map_or("n/a".to_string(), |a| format!("{a:.3}"))
    );
}

fn print_target(outcomes: &[guardian::eval::CaseOutcome], target: f64) {
    match guardian::eval::threshold::for_target_false_allow(outcomes, target) {
        // Rounded down: a lower threshold only denies more, so the printed value still meets
        // the target.
        Some(row) => println!(
            "deny_threshold = {:.4} meets false-allow <= {:.1}%: false-allow {:.1}% ({}), false-deny {:.1}% ({})",
            (row.threshold.min(1.0) * 10_000.0).floor() / 10_000.0,
            target * 100.0,
            row.false_allow_rate * 100.0,
            row.false_allow,
            row.false_deny_rate * 100.0,
            row.false_deny
        ),
        None => println!(
            "no deny_threshold meets false-allow <= {:.1}% on these cases (no scored reviews, or the misses are not the reviewer's)",
            target * 100.0
        ),
    }
}

pub(crate) fn label_files(files: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout();
    let mut remaining = 0;
    for f in files {
        match guardian::eval::label::label_file(f, &mut input, &mut out) {
            Ok(s) => {
                remaining += s.remaining;
                if s.quit {
                    break;
                }
            }
            Err(e) => {
                anyhow::bail!("guardian eval --label: {e}");
            }
        }
    }
    if remaining > 0 {
        // Not an error: the labels given are saved; the exit code says the files are not ready.
        Ok(ExitCode::from(1))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}

/// A rate between 0 and 1 (`--target-false-allow`).
fn rate_in_unit(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number (give a rate such as 0.05)"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{v} is not between 0 and 1 (give a rate such as 0.05)"
        ))
    }
}
