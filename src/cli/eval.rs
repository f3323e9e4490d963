//! `guardian eval`: labeled cases through the whole pipeline, and `--label` by hand.

use super::*;

pub(crate) async fn eval(
    files: Vec<PathBuf>,
    config: Option<PathBuf>,
    concurrency: usize,
    baseline: Option<PathBuf>,
    out: PathBuf,
    prices: guardian::eval::Prices,
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
    let mut cfg = load(config.as_ref())?;
    if config.is_none() {
        use_local_model_if_running(&mut cfg).await;
    }
    // Each evaluation writes its own audit log next to its reports.
    if let Err(e) = std::fs::create_dir_all(&out) {
        anyhow::bail!("guardian eval: cannot create {}: {e}", out.display());
    }
    cfg.audit.path = out.join("audit.jsonl");
    let config_name = cfg.source_name.clone();
    let g = build(cfg)?;
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
