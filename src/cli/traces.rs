//! `guardian traces import`: datasets and recorded sessions to eval cases.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use guardian::integrations::Agent;

/// `guardian traces`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) command: TracesCommand,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    let TracesCommand::Import {
        format,
        files,
        limit,
        labels,
        filter,
    } = a.command;
    if format == TraceFormat::Audit {
        return import_audit(&files, labels.as_deref(), &filter, limit);
    }
    if labels.is_some() {
        anyhow::bail!("guardian traces: --labels is for `traces import audit`");
    }
    traces_import(format, &files, limit)
}

/// `guardian traces import` formats.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum TraceFormat {
    /// R-Judge's JSON.
    Rjudge,
    /// RedCode-Exec's indexN.json files.
    Redcode,
    /// NL2Bash's all.nl and all.cm.
    Nl2bash,
    /// guardian's own audit log (segments, rotated and compressed too).
    Audit,
    /// An agent's recorded sessions (Claude Code transcripts, Codex rollout files).
    Agent(Agent),
}

/// The datasets, then every agent whose recorded sessions guardian reads.
fn trace_formats() -> impl TypedValueParser<Value = TraceFormat> {
    let mut values = vec![
        PossibleValue::new("rjudge").help("R-Judge's JSON"),
        PossibleValue::new("redcode").help("RedCode-Exec's indexN.json files"),
        PossibleValue::new("nl2bash").help("NL2Bash's all.nl and all.cm"),
        PossibleValue::new("audit").help("guardian's own audit log segments"),
    ];
    values.extend(
        Agent::ALL
            .iter()
            .filter(|a| a.integration().session_reader().is_some())
            .map(|a| PossibleValue::new(a.name()).help(format!("{} sessions", a.info().title))),
    );
    PossibleValuesParser::new(values).try_map(|v| match v.as_str() {
        "rjudge" => Ok(TraceFormat::Rjudge),
        "redcode" => Ok(TraceFormat::Redcode),
        "nl2bash" => Ok(TraceFormat::Nl2bash),
        "audit" => Ok(TraceFormat::Audit),
        name => Agent::from_name(name)
            .map(TraceFormat::Agent)
            .ok_or("not a trace format"),
    })
}

#[derive(Subcommand)]
pub(crate) enum TracesCommand {
    /// Import: `rjudge <rjudge.json>`, `redcode <indexN.json>…`, `nl2bash <all.nl> <all.cm>`,
    /// `claude-code <transcript.jsonl>…`, `codex <rollout.jsonl>…`, `audit <segment>…`.
    Import {
        /// The dataset or trace format.
        #[arg(value_parser = trace_formats())]
        format: TraceFormat,
        /// The input files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Most cases emitted.
        #[arg(long, default_value_t = usize::MAX)]
        limit: usize,
        /// With `audit`: the labels file (`guardian label`, the review page); only labelled
        /// records are written, labelled as the person said.
        #[arg(long)]
        labels: Option<PathBuf>,
        /// With `audit`: which records (by default a rule's and the reviewer's decisions).
        #[command(flatten)]
        filter: super::audit::AuditFilter,
    },
}

pub(crate) fn traces_import(
    format: TraceFormat,
    files: &[PathBuf],
    limit: usize,
) -> anyhow::Result<ExitCode> {
    use guardian::eval::traces;
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let json = |p: &PathBuf| {
        read(p).and_then(|t| {
            serde_json::from_str::<serde_json::Value>(&t)
                .map_err(|e| format!("{}: {e}", p.display()))
        })
    };
    let cases = match format {
        TraceFormat::Rjudge => files
            .iter()
            .map(|f| json(f).and_then(|v| traces::from_rjudge(&v).map_err(|e| e.to_string())))
            .collect::<Result<Vec<_>, _>>()
            .map(|v| v.concat()),
        TraceFormat::Redcode => files
            .iter()
            .map(|f| {
                let category = format!(
                    "redcode-{}",
                    f.file_stem().and_then(|s| s.to_str()).unwrap_or("x")
                );
                json(f).and_then(|v| traces::from_redcode(&v, &category).map_err(|e| e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|v| v.concat()),
        TraceFormat::Nl2bash => match files {
            [nl, cm] => {
                read(nl).and_then(|n| read(cm).map(|c| traces::from_nl2bash(&n, &c, limit)))
            }
            _ => Err("nl2bash takes two files: all.nl all.cm".into()),
        },
        TraceFormat::Audit => Err("`traces import audit` is read by import_audit".into()),
        TraceFormat::Agent(agent) => {
            let mut imported = Vec::new();
            for f in files {
                let text = match read(f) {
                    Ok(t) => t,
                    Err(e) => {
                        anyhow::bail!("guardian traces: {e}");
                    }
                };
                let source = f.display().to_string();
                match guardian::eval::agent_traces::import(agent, &text, &source) {
                    Ok(c) => imported.extend(c),
                    Err(e) => {
                        anyhow::bail!("guardian traces: {}: {e}", f.display());
                    }
                }
            }
            let labeled = imported.iter().filter(|c| c.expected.is_some()).count();
            for c in imported.iter().take(limit) {
                match serde_json::to_string(c) {
                    Ok(line) => println!("{line}"),
                    Err(e) => {
                        anyhow::bail!("guardian traces: {e}");
                    }
                }
            }
            eprintln!(
                "guardian traces: {} cases, {labeled} labeled by a recorded human decision; label the rest with `guardian eval --label FILE`",
                imported.len().min(limit)
            );
            return Ok(ExitCode::SUCCESS);
        }
    };
    match cases {
        Ok(cases) => {
            for c in cases.iter().take(limit) {
                match serde_json::to_string(c) {
                    Ok(line) => println!("{line}"),
                    Err(e) => {
                        anyhow::bail!("guardian traces: {e}");
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            anyhow::bail!("guardian traces: {e}")
        }
    }
}

/// `guardian traces import audit`: one case per action a rule or the reviewer decided (or
/// what `--decided-by` names), provisionally labelled with the decision; with `--labels`, the
/// labelled records only, labelled as the person said. Unreadable lines are reported on stderr
/// with their file and line, and skipped.
fn import_audit(
    files: &[PathBuf],
    labels: Option<&std::path::Path>,
    filter: &super::audit::AuditFilter,
    limit: usize,
) -> anyhow::Result<ExitCode> {
    use guardian::eval::audit_cases;
    let typed = filter
        .typed()
        .map_err(|e| anyhow::anyhow!("guardian traces: {e}"))?;
    let labels = match labels {
        Some(p) => {
            let (l, bad) = guardian::labels::read(p)
                .map_err(|e| anyhow::anyhow!("guardian traces: {}: {e}", p.display()))?;
            for (line, why) in bad {
                eprintln!(
                    "guardian traces: {}:{line}: not a label, skipped: {why}",
                    p.display()
                );
            }
            Some(l)
        }
        None => None,
    };
    let mut out = Vec::new();
    let (mut provisional, mut labelled) = (0usize, 0usize);
    let bad = audit_cases::read_records(files, &typed, |file, record| {
        if out.len() >= limit
            || !audit_cases::is_action_decision(&record)
            || (typed.decided_by.is_none() && !audit_cases::default_stage(&record))
        {
            return;
        }
        let label = match &labels {
            Some(l) => match audit_cases::record_id(&record).and_then(|id| l.get(id)) {
                Some(label) => Some(label),
                None => return,
            },
            None => None,
        };
        if let Some(case) = audit_cases::case_of(&record, file, label) {
            if label.is_some() {
                labelled += 1;
            } else {
                provisional += 1;
            }
            out.push(case);
        }
    });
    for b in &bad {
        eprintln!("guardian traces: {b} (skipped)");
    }
    for c in &out {
        println!("{}", serde_json::to_string(c)?);
    }
    eprintln!(
        "guardian traces: {} cases from the audit log ({labelled} labelled by a person, {provisional} provisionally labelled with guardian's own decision); {} unreadable lines skipped",
        out.len(),
        bad.len()
    );
    Ok(ExitCode::SUCCESS)
}
