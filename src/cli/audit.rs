//! `guardian audit`: queries with a typed filter, `verify`, `summary`, `rotate`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use guardian::Config;

use super::load;

/// `guardian audit`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Config file whose [audit] path is read (default: the embedded defaults).
    #[arg(long, global = true)]
    pub(crate) config: Option<PathBuf>,
    /// The audit file (overrides the config's path).
    #[arg(long, global = true)]
    pub(crate) file: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) filter: AuditFilter,
    /// The last N matching records, at most.
    #[arg(long)]
    pub(crate) limit: Option<usize>,
    #[command(subcommand)]
    pub(crate) command: Option<AuditCommand>,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    // The config (embedded defaults without --config) gives the path, unless --file does,
    // and the rotation settings `audit rotate` applies.
    let cfg = match load(a.config.as_ref()) {
        Ok(c) => c,
        Err(e) if a.file.is_none() || a.config.is_some() => return Err(e),
        Err(_) => Config::default(),
    };
    let path = a.file.unwrap_or_else(|| cfg.audit.path.clone());
    let filter = match a.filter.typed() {
        Ok(f) => f,
        Err(e) => {
            anyhow::bail!("guardian audit: {e}");
        }
    };
    match a.command {
        Some(AuditCommand::Verify) => audit_verify(&path),
        Some(AuditCommand::Rotate) => audit_rotate(&path, &cfg.audit).await,
        Some(AuditCommand::Summary { format }) => audit_summary(&path, &filter, format),
        None => audit_query(&path, &filter, a.limit),
    }
}

#[derive(Subcommand)]
pub(crate) enum AuditCommand {
    /// Check the hash chain across every segment; exit 1 naming the file and the first bad
    /// record.
    Verify,
    /// Close the active file as a segment now (safe while a server writes: it takes the log's
    /// lock, and the server continues in the new file); retention and compression apply.
    Rotate,
    /// Counts by decision and stage, the denied actions with their reasons, reviewer latency and
    /// tokens, breaker interrupts, and whether the hash chain verifies (the filters apply).
    Summary {
        /// text (a CI log), markdown (a job summary) or json.
        #[arg(long, value_enum, default_value = "text")]
        format: SummaryFormat,
    },
}

/// How `guardian audit summary` prints.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum SummaryFormat {
    Text,
    Markdown,
    Json,
}

pub(crate) async fn audit_rotate(
    path: &std::path::Path,
    audit: &guardian::config::AuditConfig,
) -> anyhow::Result<ExitCode> {
    let redactor = match audit.redactor() {
        Ok(r) => r,
        Err(e) => {
            anyhow::bail!("guardian audit rotate: {e}");
        }
    };
    let log = match guardian::audit::AuditLog::open_rotating(
        path,
        redactor,
        audit.durability(),
        audit.rotation(),
    ) {
        Ok(l) => l,
        Err(e) => {
            anyhow::bail!("guardian audit rotate: {}: {e}", path.display());
        }
    };
    match log.rotate().await {
        Ok(true) => {
            println!("{}: rotated", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Ok(false) => {
            println!("{}: nothing to rotate (no records)", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            anyhow::bail!("guardian audit rotate: {}: {e}", path.display())
        }
    }
}

pub(crate) fn audit_verify(path: &std::path::Path) -> anyhow::Result<ExitCode> {
    match guardian::audit::verify(path) {
        Ok(s) => {
            let files = if s.files > 1 {
                format!(" in {} files", s.files)
            } else {
                String::new()
            };
            let pruned = s.pruned.map_or(String::new(), |(a, b)| {
                format!(" (seq {a}..{b} pruned by retention, as recorded)")
            });
            println!(
                "{}: {} records{files}, chain intact, head {}{pruned}",
                path.display(),
                s.records,
                s.head
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if e.line == 0 => {
            anyhow::bail!("guardian audit verify: {}: {}", e.file, e.reason)
        }
        Err(e) => {
            eprintln!(
                "guardian audit verify: {}: first bad record at {e}",
                path.display()
            );
            Ok(ExitCode::from(1))
        }
    }
}

/// `--decision`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum DecisionArg {
    /// Allowed.
    Allow,
    /// Denied.
    Deny,
}

impl DecisionArg {
    fn as_str(self) -> &'static str {
        match self {
            DecisionArg::Allow => "allow",
            DecisionArg::Deny => "deny",
        }
    }
}

/// `--decided-by`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum StageArg {
    /// A policy rule.
    Rule,
    /// The reviewer model.
    Reviewer,
    /// Session memory.
    Session,
    /// A fallback (nothing could review it).
    Fallback,
}

impl StageArg {
    fn as_str(self) -> &'static str {
        match self {
            StageArg::Rule => "rule",
            StageArg::Reviewer => "reviewer",
            StageArg::Session => "session",
            StageArg::Fallback => "fallback",
        }
    }
}

/// `guardian audit` filters.
#[derive(clap::Args)]
pub(crate) struct AuditFilter {
    /// Only this session.
    #[arg(long, global = true)]
    session: Option<String>,
    /// Only records at or after this time (RFC 3339, e.g. 2026-11-30T10:00:00Z).
    #[arg(long, global = true)]
    since: Option<String>,
    /// Only records before this time (RFC 3339).
    #[arg(long, global = true)]
    until: Option<String>,
    /// Only allow or deny.
    #[arg(long, global = true)]
    #[arg(value_enum)]
    decision: Option<DecisionArg>,
    /// Only decisions by rule, reviewer, session or fallback.
    #[arg(long, global = true)]
    #[arg(value_enum)]
    decided_by: Option<StageArg>,
    /// Only this client.
    #[arg(long, global = true)]
    client: Option<String>,
    /// Only records with a greater `seq` (what was written after that record).
    #[arg(long, global = true)]
    after_seq: Option<u64>,
}

impl AuditFilter {
    /// The library's filter, checked.
    pub(crate) fn typed(
        &self,
    ) -> Result<guardian::audit_report::Filter, guardian::audit_report::FilterError> {
        use guardian::audit_report::{Filter, parse_time};
        let f = Filter {
            session: self.session.clone(),
            since: self
                .since
                .as_deref()
                .map(|t| parse_time("since", t))
                .transpose()?,
            until: self
                .until
                .as_deref()
                .map(|t| parse_time("until", t))
                .transpose()?,
            decision: self.decision.map(|d| d.as_str().to_string()),
            decided_by: self.decided_by.map(|d| d.as_str().to_string()),
            client: self.client.clone(),
            after_seq: self.after_seq,
        };
        f.validate()?;
        Ok(f)
    }
}

pub(crate) fn audit_query(
    path: &std::path::Path,
    f: &guardian::audit_report::Filter,
    limit: Option<usize>,
) -> anyhow::Result<ExitCode> {
    let mut matched: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    let read = guardian::audit_report::for_each_record(path, f, |line, _| {
        matched.push_back(line.to_string());
        if let Some(n) = limit
            && matched.len() > n
        {
            matched.pop_front();
        }
    });
    if let Err(e) = read {
        anyhow::bail!("guardian audit: cannot open {}: {e}", path.display());
    }
    for line in matched {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn audit_summary(
    path: &std::path::Path,
    f: &guardian::audit_report::Filter,
    format: SummaryFormat,
) -> anyhow::Result<ExitCode> {
    match guardian::audit_report::summarize(path, f) {
        Ok(s) => {
            match format {
                SummaryFormat::Text => print!("{}", s.to_text()),
                SummaryFormat::Markdown => print!("{}", s.to_markdown()),
                SummaryFormat::Json => println!("{}", s.to_json()),
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            anyhow::bail!(
                "guardian audit summary: cannot open {}: {e}",
                path.display()
            )
        }
    }
}
