//! Reading the audit log back: a typed filter for `guardian audit` queries, and the decision
//! summary of `guardian audit summary` (a CI job's record of what an unattended agent was
//! allowed and denied).
//!
//! This module owns reading records, never writing them: [`crate::audit`] owns the log, its hash
//! chain and [`crate::audit::verify`]. A line that is not a JSON record is skipped here (verify
//! is where a damaged log is reported).

use std::collections::BTreeMap;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

/// Which records a query or summary covers; every field set must match.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only this session.
    pub session: Option<String>,
    /// Only records at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only records before this time.
    pub until: Option<DateTime<Utc>>,
    /// Only `allow` or `deny`.
    pub decision: Option<String>,
    /// Only `rule`, `reviewer`, `session` or `fallback`.
    pub decided_by: Option<String>,
    /// Only this client.
    pub client: Option<String>,
    /// Only records whose `seq` is greater (the records written after a point, e.g. one
    /// `guardian run`).
    pub after_seq: Option<u64>,
}

/// A filter value that is not acceptable, naming the flag.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("--{flag}: {message}")]
pub struct FilterError {
    /// The flag, e.g. `since`.
    pub flag: &'static str,
    /// What is wrong.
    pub message: String,
}

/// Parses an RFC 3339 time for `--flag`.
pub fn parse_time(flag: &'static str, t: &str) -> Result<DateTime<Utc>, FilterError> {
    DateTime::parse_from_rfc3339(t)
        .map(|d| d.with_timezone(&Utc))
        .map_err(|e| FilterError {
            flag,
            message: format!("{t:?} is not an RFC 3339 time: {e}"),
        })
}

impl Filter {
    /// Checks the enumerated fields.
    pub fn validate(&self) -> Result<(), FilterError> {
        for (flag, value, allowed) in [
            ("decision", &self.decision, &["allow", "deny"][..]),
            (
                "decided-by",
                &self.decided_by,
                &["rule", "reviewer", "session", "fallback"][..],
            ),
        ] {
            if let Some(v) = value
                && !allowed.contains(&v.as_str())
            {
                return Err(FilterError {
                    flag,
                    message: format!("must be one of {}", allowed.join(", ")),
                });
            }
        }
        Ok(())
    }

    /// Whether a record matches.
    pub fn matches(&self, v: &Value) -> bool {
        let field = |k: &str| v.get(k).and_then(Value::as_str);
        let eq = |want: &Option<String>, key: &str| {
            want.as_deref().is_none_or(|w| field(key) == Some(w))
        };
        if !(eq(&self.session, "session_id")
            && eq(&self.decision, "decision")
            && eq(&self.decided_by, "decided_by")
            && eq(&self.client, "client"))
        {
            return false;
        }
        if let Some(after) = self.after_seq
            && v.get("seq")
                .and_then(Value::as_u64)
                .is_none_or(|seq| seq <= after)
        {
            return false;
        }
        if self.since.is_some() || self.until.is_some() {
            let Some(t) = field("time")
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|d| d.with_timezone(&Utc))
            else {
                return false;
            };
            if self.since.is_some_and(|s| t < s) || self.until.is_some_and(|u| t >= u) {
                return false;
            }
        }
        true
    }
}

/// Calls `each` with every record of the log that matches, as its line and parsed value: the
/// closed segments first (decompressed as needed), in chain order, then the active file.
/// Segment headers and prune records (`event`) are records too; [`summarize`] skips them.
pub fn for_each_record(
    path: &Path,
    filter: &Filter,
    mut each: impl FnMut(&str, &Value),
) -> std::io::Result<()> {
    for file in files_of_log(path)? {
        let reader = crate::audit::segment::open_reader(&file)?;
        for line in reader.lines() {
            let Ok(line) = line else { continue };
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if filter.matches(&v) {
                each(&line, &v);
            }
        }
    }
    Ok(())
}

/// A line that is not a readable record: which file, which line (1-based), why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// The file.
    pub file: PathBuf,
    /// The line, from 1.
    pub line: usize,
    /// Why it was skipped.
    pub reason: String,
}

impl std::fmt::Display for BadLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.reason)
    }
}

/// The files of a log in chain order: its closed segments (compressed or not), then the active
/// file.
pub fn files_of_log(active: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = crate::audit::segment::list(active)?
        .into_iter()
        .map(|s| s.path)
        .collect();
    if active.exists() || files.is_empty() {
        files.push(active.to_path_buf());
    }
    Ok(files)
}

/// Calls `each` with every record of `files` that matches `filter` (the file it came from and
/// the record). Lines that are not JSON objects, and a file that cannot be opened or stops
/// mid-stream (a truncated compressed segment), are returned, not fatal.
pub fn read_records(
    files: &[PathBuf],
    filter: &Filter,
    mut each: impl FnMut(&Path, Value),
) -> Vec<BadLine> {
    let mut bad = Vec::new();
    for file in files {
        let reader = match crate::audit::segment::open_reader(file) {
            Ok(r) => r,
            Err(e) => {
                bad.push(BadLine {
                    file: file.clone(),
                    line: 0,
                    reason: format!("cannot open: {e}"),
                });
                continue;
            }
        };
        for (i, line) in reader.lines().enumerate() {
            let line = match line {
                Ok(l) => l,
                Err(e) => {
                    bad.push(BadLine {
                        file: file.clone(),
                        line: i + 1,
                        reason: format!("unreadable, the rest of the file is skipped: {e}"),
                    });
                    break;
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(&line) {
                Ok(v) if v.is_object() => {
                    if filter.matches(&v) {
                        each(file, v);
                    }
                }
                Ok(_) => bad.push(BadLine {
                    file: file.clone(),
                    line: i + 1,
                    reason: "not a JSON object".into(),
                }),
                Err(e) => bad.push(BadLine {
                    file: file.clone(),
                    line: i + 1,
                    reason: format!("not a record: {e}"),
                }),
            }
        }
    }
    bad
}

/// A record's id: its `hash` (unique, and what the chain proves).
pub fn record_id(record: &Value) -> Option<&str> {
    record.get("hash").and_then(Value::as_str)
}

/// Whether a record is a decision on an action (not a segment header, a prune, or a hook's
/// tool call refused before any review).
pub fn is_action_decision(record: &Value) -> bool {
    record.get("event").is_none()
        && record
            .get("action")
            .and_then(|a| a.get("kind"))
            .and_then(Value::as_str)
            .is_some_and(|k| k != "tool")
        && record.get("decision").and_then(Value::as_str).is_some()
}

/// One denied action in a summary.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Denial {
    /// When.
    pub time: String,
    /// The session.
    pub session_id: String,
    /// Which stage denied it.
    pub decided_by: String,
    /// The action, in one line (the command, path, URL or MCP tool).
    pub action: String,
    /// The rule, when one denied it.
    pub rule: Option<String>,
    /// Why.
    pub rationale: String,
}

/// What a log (or the part a filter selects) says about the decisions in it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    /// Records counted.
    pub records: u64,
    /// Allowed and denied.
    pub allowed: u64,
    /// Denied.
    pub denied: u64,
    /// Counts by `decided_by`, then decision (`rule` → `deny` → 3).
    pub by_stage: BTreeMap<String, BTreeMap<String, u64>>,
    /// Fallback denials by failure kind (`not_configured`, `timeout`, …).
    pub fallback_errors: BTreeMap<String, u64>,
    /// Questions handed to the user's prompt (`[hooks] unreviewed = "ask"`).
    pub deferred_to_user: u64,
    /// Times a session's circuit breaker told the agent to stop.
    pub breaker_interrupts: u64,
    /// Sessions seen.
    pub sessions: u64,
    /// Reviewer latency (ms) of the reviews a reviewer answered: median and 95th percentile.
    pub reviewer_latency_ms: Option<(u64, u64)>,
    /// Reviewer tokens, prompt and completion.
    pub reviewer_tokens: (u64, u64),
    /// The denied actions, oldest first (at most [`MAX_DENIALS`]).
    pub denials: Vec<Denial>,
    /// Denials not listed past [`MAX_DENIALS`].
    pub denials_omitted: u64,
    /// The hash chain: `Ok((records, head))`, or the first record that breaks it.
    #[serde(skip)]
    pub chain: Result<(u64, String), crate::audit::VerifyError>,
}

/// Denials listed in a summary, at most.
pub const MAX_DENIALS: usize = 50;

/// The action of a record in one line.
fn action_line(v: &Value) -> String {
    let a = &v["action"];
    let s = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("");
    let text = match s("kind") {
        "shell" => s("command").to_string(),
        "read" => format!("read {}", s("path")),
        "write" => format!("write {}", s("path")),
        "fetch" => format!("fetch {}", s("url")),
        "mcp" => format!("mcp {}/{}", s("server"), s("tool")),
        "tool" => format!("tool {} (refused before review)", s("tool")),
        other => other.to_string(),
    };
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() > 160 {
        format!("{}…", flat.chars().take(160).collect::<String>())
    } else {
        flat
    }
}

/// Summarises the records of `path` that `filter` selects, and checks the whole log's chain.
pub fn summarize(path: &Path, filter: &Filter) -> std::io::Result<Summary> {
    let mut s = Summary {
        records: 0,
        allowed: 0,
        denied: 0,
        by_stage: BTreeMap::new(),
        fallback_errors: BTreeMap::new(),
        deferred_to_user: 0,
        breaker_interrupts: 0,
        sessions: 0,
        reviewer_latency_ms: None,
        reviewer_tokens: (0, 0),
        denials: Vec::new(),
        denials_omitted: 0,
        // Checked once the records are read, below.
        chain: Ok((0, String::new())),
    };
    let mut sessions = std::collections::HashSet::new();
    let mut latencies = Vec::new();
    for_each_record(path, filter, |_, v| {
        if v.get("event").is_some() {
            return; // a segment header or a prune record, not a decision
        }
        let str_of = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        s.records += 1;
        let decision = str_of("decision");
        let stage = str_of("decided_by");
        *s.by_stage
            .entry(stage.clone())
            .or_default()
            .entry(decision.clone())
            .or_default() += 1;
        sessions.insert(str_of("session_id"));
        if v.get("deferred_to_user") == Some(&Value::Bool(true)) {
            s.deferred_to_user += 1;
        }
        if v.get("interrupt").is_some_and(|i| !i.is_null()) {
            s.breaker_interrupts += 1;
        }
        if stage == "reviewer" {
            if let Some(ms) = v.get("latency_ms").and_then(Value::as_u64) {
                latencies.push(ms);
            }
        }
        if let Some(t) = v.get("tokens") {
            s.reviewer_tokens.0 += t.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0);
            s.reviewer_tokens.1 += t
                .get("completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0);
        }
        if decision == "allow" {
            s.allowed += 1;
            return;
        }
        s.denied += 1;
        if stage == "fallback" {
            *s.fallback_errors
                .entry(
                    v.get("error")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown")
                        .to_string(),
                )
                .or_default() += 1;
        }
        if s.denials.len() < MAX_DENIALS {
            s.denials.push(Denial {
                time: str_of("time"),
                session_id: str_of("session_id"),
                decided_by: stage,
                action: action_line(v),
                rule: v
                    .get("rule")
                    .and_then(|r| r.get("pattern"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
                rationale: str_of("rationale"),
            });
        } else {
            s.denials_omitted += 1;
        }
    })?;
    s.sessions = sessions.len() as u64;
    if !latencies.is_empty() {
        latencies.sort_unstable();
        let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
        s.reviewer_latency_ms = Some((at(0.5), at(0.95)));
    }
    s.chain = crate::audit::verify(path).map(|v| (v.records, v.head));
    Ok(s)
}

impl Summary {
    /// Plain text, for a CI log.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "guardian: {} decisions in {} sessions: {} allowed, {} denied\n",
            self.records, self.sessions, self.allowed, self.denied
        ));
        for (stage, by) in &self.by_stage {
            let parts: Vec<String> = by.iter().map(|(d, n)| format!("{n} {d}")).collect();
            out.push_str(&format!("  by {stage}: {}\n", parts.join(", ")));
        }
        if !self.fallback_errors.is_empty() {
            let parts: Vec<String> = self
                .fallback_errors
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            out.push_str(&format!("  not reviewed: {}\n", parts.join(", ")));
        }
        if self.deferred_to_user > 0 {
            out.push_str(&format!(
                "  handed to the user's prompt: {}\n",
                self.deferred_to_user
            ));
        }
        out.push_str(&format!(
            "  breaker interrupts: {}\n",
            self.breaker_interrupts
        ));
        if let Some((p50, p95)) = self.reviewer_latency_ms {
            out.push_str(&format!(
                "  reviewer latency: p50 {p50} ms, p95 {p95} ms; tokens {} prompt, {} completion\n",
                self.reviewer_tokens.0, self.reviewer_tokens.1
            ));
        }
        out.push_str(&match &self.chain {
            Ok((n, head)) => format!("  audit chain: intact ({n} records, head {head})\n"),
            Err(e) => format!("  audit chain: BROKEN: {e}\n"),
        });
        if !self.denials.is_empty() {
            out.push_str("denied:\n");
            for d in &self.denials {
                out.push_str(&format!(
                    "  {} [{}{}] {}: {}\n",
                    d.time,
                    d.decided_by,
                    d.rule
                        .as_deref()
                        .map(|r| format!(" {r}"))
                        .unwrap_or_default(),
                    d.action,
                    d.rationale
                ));
            }
            if self.denials_omitted > 0 {
                out.push_str(&format!("  … and {} more\n", self.denials_omitted));
            }
        }
        out
    }

    /// Markdown, for a job summary (`$GITHUB_STEP_SUMMARY`).
    pub fn to_markdown(&self) -> String {
        let cell = |t: &str| t.replace('|', "\\|").replace('\n', " ");
        let mut out = String::from("## guardian decisions\n\n");
        out.push_str(&format!(
            "**{}** decisions in {} sessions: **{} allowed**, **{} denied**.\n\n",
            self.records, self.sessions, self.allowed, self.denied
        ));
        out.push_str("| decided by | allow | deny |\n|---|---|---|\n");
        for (stage, by) in &self.by_stage {
            out.push_str(&format!(
                "| {stage} | {} | {} |\n",
                by.get("allow").copied().unwrap_or(0),
                by.get("deny").copied().unwrap_or(0)
            ));
        }
        out.push('\n');
        if !self.fallback_errors.is_empty() {
            let parts: Vec<String> = self
                .fallback_errors
                .iter()
                .map(|(k, n)| format!("`{k}` {n}"))
                .collect();
            out.push_str(&format!("Not reviewed: {}.\n\n", parts.join(", ")));
        }
        out.push_str(&format!(
            "Breaker interrupts: {}. Handed to the user's prompt: {}.\n\n",
            self.breaker_interrupts, self.deferred_to_user
        ));
        if let Some((p50, p95)) = self.reviewer_latency_ms {
            out.push_str(&format!(
                "Reviewer latency p50 {p50} ms, p95 {p95} ms; tokens {} prompt, {} completion.\n\n",
                self.reviewer_tokens.0, self.reviewer_tokens.1
            ));
        }
        out.push_str(&match &self.chain {
            Ok((n, head)) => format!("Audit chain: intact ({n} records, head `{head}`).\n\n"),
            Err(e) => format!("Audit chain: **BROKEN**: {}\n\n", cell(&e.to_string())),
        });
        if !self.denials.is_empty() {
            out.push_str("| time | decided by | action | why |\n|---|---|---|---|\n");
            for d in &self.denials {
                let by = match &d.rule {
                    Some(r) => format!("{} `{}`", d.decided_by, cell(r)),
                    None => d.decided_by.clone(),
                };
                out.push_str(&format!(
                    "| {} | {} | `{}` | {} |\n",
                    cell(&d.time),
                    by,
                    cell(&d.action).replace('`', "'"),
                    cell(&d.rationale)
                ));
            }
            if self.denials_omitted > 0 {
                out.push_str(&format!("\n… and {} more denials.\n", self.denials_omitted));
            }
        }
        out
    }

    /// JSON.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        // The chain as {ok, records, head} or {ok: false, error}.
        v["chain"] = match &self.chain {
            Ok((n, head)) => serde_json::json!({"ok": true, "records": n, "head": head}),
            Err(e) => serde_json::json!({"ok": false, "error": e.to_string()}),
        };
        v["reviewer_latency_ms"] = match self.reviewer_latency_ms {
            Some((p50, p95)) => serde_json::json!({"p50": p50, "p95": p95}),
            None => Value::Null,
        };
        v["reviewer_tokens"] = serde_json::json!({
            "prompt": self.reviewer_tokens.0, "completion": self.reviewer_tokens.1
        });
        v
    }
}

#[cfg(test)]
mod reading_tests {
    use super::*;
    use serde_json::json;

    fn record() -> Value {
        serde_json::json!({"seq": 7, "action": {"kind": "shell", "command": "git push --force"}, "decision": "deny", "decided_by": "reviewer", "hash": "ab".repeat(32)})
    }

    #[test]
    fn headers_prunes_and_tool_refusals_are_not_action_decisions() {
        assert!(is_action_decision(&record()));
        assert!(!is_action_decision(
            &json!({"event": "segment_start", "seq": 1})
        ));
        let mut tool = record();
        tool["action"] = json!({"kind": "tool", "tool": "Frobnicate"});
        assert!(!is_action_decision(&tool));
    }

    #[test]
    fn bad_lines_are_reported_with_their_line_and_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("a.jsonl");
        let text = format!("{}\nnot json\n[1]\n\n{}\n", record(), record());
        std::fs::write(&f, text).expect("write");
        let mut n = 0;
        let bad = read_records(std::slice::from_ref(&f), &Filter::default(), |_, _| n += 1);
        assert_eq!(n, 2);
        let lines: Vec<usize> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![2, 3]);
        let missing = read_records(
            &[dir.path().join("nope.jsonl")],
            &Filter::default(),
            |_, _| {},
        );
        assert_eq!(missing.len(), 1);
        assert!(missing[0].reason.starts_with("cannot open"));
    }

    #[test]
    fn a_truncated_compressed_segment_keeps_what_precedes_the_cut() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("audit.000001.jsonl.gz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        for _ in 0..200 {
            writeln!(gz, "{}", record()).expect("write");
        }
        let bytes = gz.finish().expect("gzip");
        std::fs::write(&f, &bytes[..bytes.len() / 2]).expect("write");
        let mut n = 0;
        let bad = read_records(std::slice::from_ref(&f), &Filter::default(), |_, _| n += 1);
        assert!(n > 0 && n < 200, "{n}");
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(bad[0].line > 1);
    }
}
