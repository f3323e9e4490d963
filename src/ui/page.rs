//! The review page's model: the audit records a query selects, as rows a person labels, and
//! the two pictures (decisions over time by outcome; the score histogram of reviewed actions
//! with the threshold and the records labelled wrong).
//!
//! Everything here is data for the template, which escapes it: nothing in a row is markup.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::audit_report::{self as audit_cases, BadLine};
use crate::labels::{Label, Verdict};

/// Rows shown at most (the newest first); the pictures count every matching record.
pub const DEFAULT_LIMIT: usize = 300;
/// Characters of an action's JSON shown in a row's details, at most.
const DETAIL_CHARS: usize = 6000;
/// Bars of the time picture.
const TIME_BUCKETS: usize = 24;
/// Bins of the score histogram.
const SCORE_BINS: usize = 20;
/// The pictures' drawing area, in SVG units.
const WIDTH: f64 = 480.0;
const HEIGHT: f64 = 110.0;

/// The page's query: every field optional; the form sends empty strings for "any".
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Query {
    /// `rule`, `reviewer`, `session` or `fallback`.
    pub decided_by: String,
    /// `allow` or `deny`.
    pub decision: String,
    /// The agent named in the request.
    pub agent: String,
    /// The session id.
    pub session: String,
    /// A risk signal's category (`exfiltration`, `destructive`, …).
    pub signal: String,
    /// Lowest score shown (0–1).
    pub score_min: String,
    /// Highest score shown (0–1).
    pub score_max: String,
    /// `unlabelled`, `right` or `wrong`.
    pub label: String,
    /// Rows shown at most.
    pub limit: String,
    /// Only decisions at or after this time (RFC 3339), e.g. last night's.
    pub since: String,
    /// Only decisions before this time (RFC 3339).
    pub until: String,
}

/// A query value that is not acceptable, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct QueryError {
    /// The query parameter.
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

/// A query, checked.
#[derive(Debug, Clone, Default)]
struct Checked {
    score: Option<(f64, f64)>,
    limit: usize,
    /// The time window, as `guardian audit` reads it.
    window: crate::audit_report::Filter,
}

impl Query {
    fn check(&self) -> Result<Checked, QueryError> {
        let one_of = |field: &'static str, v: &str, allowed: &[&str]| {
            if v.is_empty() || allowed.contains(&v) {
                Ok(())
            } else {
                Err(QueryError {
                    field,
                    message: format!("must be one of {}", allowed.join(", ")),
                })
            }
        };
        one_of(
            "decided_by",
            &self.decided_by,
            &["rule", "reviewer", "session", "fallback"],
        )?;
        one_of("decision", &self.decision, &["allow", "deny"])?;
        one_of("label", &self.label, &["unlabelled", "right", "wrong"])?;
        let unit = |field: &'static str, v: &str, default: f64| -> Result<f64, QueryError> {
            if v.is_empty() {
                return Ok(default);
            }
            v.parse::<f64>()
                .ok()
                .filter(|x| (0.0..=1.0).contains(x))
                .ok_or(QueryError {
                    field,
                    message: format!("{v:?} is not a number from 0 to 1"),
                })
        };
        let score = if self.score_min.is_empty() && self.score_max.is_empty() {
            None
        } else {
            Some((
                unit("score_min", &self.score_min, 0.0)?,
                unit("score_max", &self.score_max, 1.0)?,
            ))
        };
        let limit = if self.limit.is_empty() {
            DEFAULT_LIMIT
        } else {
            self.limit
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=5000).contains(n))
                .ok_or(QueryError {
                    field: "limit",
                    message: "must be a whole number from 1 to 5000".into(),
                })?
        };
        let time = |field: &'static str, v: &str| {
            (!v.is_empty())
                .then(|| {
                    crate::audit_report::parse_time(field, v).map_err(|e| QueryError {
                        field,
                        message: e.message,
                    })
                })
                .transpose()
        };
        let window = crate::audit_report::Filter {
            since: time("since", &self.since)?,
            until: time("until", &self.until)?,
            ..Default::default()
        };
        Ok(Checked {
            score,
            limit,
            window,
        })
    }

    fn matches(&self, r: &Value, checked: &Checked, label: Option<&Label>) -> bool {
        let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
        let eq = |want: &str, have: &str| want.is_empty() || want == have;
        if !(eq(&self.decided_by, s("decided_by"))
            && eq(&self.decision, s("decision"))
            && eq(&self.agent, s("agent"))
            && eq(&self.session, s("session_id")))
        {
            return false;
        }
        if !self.signal.is_empty() && !signals_of(r).iter().any(|(c, _)| *c == self.signal) {
            return false;
        }
        if let Some((lo, hi)) = checked.score {
            match r.get("score").and_then(Value::as_f64) {
                Some(x) if x >= lo && x <= hi => {}
                _ => return false,
            }
        }
        match (self.label.as_str(), label) {
            ("", _) | ("unlabelled", None) => true,
            ("right", Some(l)) => l.verdict == Verdict::Right,
            ("wrong", Some(l)) => l.verdict == Verdict::Wrong,
            _ => false,
        }
    }
}

/// One decision as a row of the page.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The record's hash (what a label names).
    pub id: String,
    /// The record's seq.
    pub seq: u64,
    /// When.
    pub time: String,
    /// allow or deny.
    pub decision: String,
    /// Which stage decided.
    pub decided_by: String,
    /// The agent, the session and the client that asked.
    pub agent: String,
    /// The session id.
    pub session: String,
    /// The client.
    pub client: String,
    /// The action's kind.
    pub kind: String,
    /// One line: the command, the path, `METHOD url`, `server/tool`.
    pub summary: String,
    /// The action as JSON (capped).
    pub detail: String,
    /// The user's words.
    pub intent: String,
    /// Why it was decided so.
    pub rationale: String,
    /// The rule that decided, `file:line`.
    pub rule: String,
    /// `category (severity)` per risk signal.
    pub signals: Vec<String>,
    /// The score and the threshold, when the review was scored.
    pub score: Option<String>,
    /// The score is at or above the threshold.
    pub above: bool,
    /// The current label: right or wrong.
    pub label: Option<String>,
    /// Who labelled it, and the note.
    pub label_by: String,
    /// The note.
    pub note: String,
}

/// A bar of the time picture: allowed and denied stacked.
#[derive(Debug, Clone, Serialize)]
pub struct TimeBar {
    x: f64,
    w: f64,
    allow_y: f64,
    allow_h: f64,
    deny_y: f64,
    deny_h: f64,
    title: String,
}

/// A bin of the score histogram: all reviewed, and the ones labelled wrong.
#[derive(Debug, Clone, Serialize)]
pub struct ScoreBar {
    x: f64,
    w: f64,
    y: f64,
    h: f64,
    wrong_y: f64,
    wrong_h: f64,
    title: String,
}

/// What the template renders.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Page {
    /// The rows, newest first.
    pub rows: Vec<Row>,
    /// Matching records (rows are the newest `limit` of them).
    pub matched: usize,
    /// Allowed and denied among them.
    pub allowed: usize,
    /// Denied.
    pub denied: usize,
    /// Labelled right and wrong among them.
    pub right: usize,
    /// Labelled wrong.
    pub wrong: usize,
    /// The time picture.
    pub time_bars: Vec<TimeBar>,
    /// First and last time covered.
    pub time_span: (String, String),
    /// The score histogram.
    pub score_bars: Vec<ScoreBar>,
    /// The threshold's x, when there is one.
    pub threshold_x: Option<f64>,
    /// The threshold.
    pub threshold: Option<f64>,
    /// Scored reviews among the matching records.
    pub scored: usize,
    /// Values for the filters' menus.
    pub agents: Vec<String>,
    /// Signal categories seen.
    pub signal_categories: Vec<String>,
    /// Lines of the audit log or the labels file that could not be read (capped).
    pub warnings: Vec<String>,
    /// The query, echoed into the form.
    pub query: Query,
    /// Who labels.
    pub labeller: String,
    /// The width and height of the pictures.
    pub width: f64,
    /// Height.
    pub height: f64,
}

fn signals_of(r: &Value) -> Vec<(&str, &str)> {
    r.get("signals")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| {
                    Some((
                        s.get("category")?.as_str()?,
                        s.get("severity").and_then(Value::as_str).unwrap_or(""),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The one line that says what an action does.
fn summary_of(action: &Value) -> (String, String) {
    let s = |k: &str| action.get(k).and_then(Value::as_str).unwrap_or("");
    let kind = s("kind").to_string();
    let summary = match kind.as_str() {
        "shell" => s("command").to_string(),
        "read" | "write" => {
            let diff = if action.get("diff").is_some_and(|d| !d.is_null()) {
                " (diff)"
            } else {
                ""
            };
            format!("{}{diff}", s("path"))
        }
        "fetch" => {
            let method = action
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or("GET");
            format!("{method} {}", s("url"))
        }
        "mcp" => format!("{}/{}", s("server"), s("tool")),
        "tool" => format!("tool {}", s("tool")),
        _ => String::new(),
    };
    (kind, summary)
}

fn row_of(r: &Value, label: Option<&Label>, threshold: Option<f64>) -> Option<Row> {
    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let action = r.get("action").cloned().unwrap_or(Value::Null);
    let (kind, summary) = summary_of(&action);
    let mut detail = serde_json::to_string_pretty(&action).unwrap_or_default();
    if detail.chars().count() > DETAIL_CHARS {
        detail = detail.chars().take(DETAIL_CHARS).collect::<String>() + "\n…";
    }
    let score = r.get("score").and_then(Value::as_f64);
    let rule = r
        .get("rule")
        .filter(|v| !v.is_null())
        .map(|rule| {
            let f = |k: &str| rule.get(k).and_then(Value::as_str).unwrap_or("");
            format!("{} {} ({})", f("effect"), f("pattern"), f("source"))
        })
        .unwrap_or_default();
    Some(Row {
        id: audit_cases::record_id(r)?.to_string(),
        seq: r.get("seq").and_then(Value::as_u64).unwrap_or(0),
        time: s("time"),
        decision: s("decision"),
        decided_by: s("decided_by"),
        agent: s("agent"),
        session: s("session_id"),
        client: s("client"),
        kind,
        summary,
        detail,
        intent: s("intent"),
        rationale: s("rationale"),
        rule,
        signals: signals_of(r)
            .into_iter()
            .map(|(c, sev)| format!("{c} ({sev})"))
            .collect(),
        score: score.map(|x| match threshold {
            Some(t) => format!("{x:.3} {} {t:.3}", if x >= t { "≥" } else { "<" }),
            None => format!("{x:.3}"),
        }),
        above: matches!((score, threshold), (Some(x), Some(t)) if x >= t),
        label: label.map(|l| l.verdict.as_str().to_string()),
        label_by: label
            .map(|l| format!("{} at {}", l.labeller, l.time))
            .unwrap_or_default(),
        note: label.map(|l| l.note.clone()).unwrap_or_default(),
    })
}

/// Reads the log and the labels and builds the page for `query`.
pub fn build(
    audit: &Path,
    labels: &Path,
    threshold: Option<f64>,
    query: &Query,
) -> Result<Page, QueryError> {
    let checked = query.check()?;
    let mut warnings = Vec::new();
    let (labelled, bad_labels) = crate::labels::read(labels).unwrap_or_else(|e| {
        warnings.push(format!("{}: {e}", labels.display()));
        (HashMap::new(), Vec::new())
    });
    for (line, why) in bad_labels {
        warnings.push(format!("{}:{line}: not a label: {why}", labels.display()));
    }
    let files = audit_cases::files_of_log(audit).unwrap_or_else(|e| {
        warnings.push(format!("{}: {e}", audit.display()));
        Vec::new()
    });
    let mut records = Vec::new();
    let mut agents = std::collections::BTreeSet::new();
    let mut categories = std::collections::BTreeSet::new();
    let bad: Vec<BadLine> = audit_cases::read_records(&files, &checked.window, |_, r| {
        if r.get("event").is_some() || audit_cases::record_id(&r).is_none() {
            return;
        }
        if let Some(a) = r.get("agent").and_then(Value::as_str) {
            agents.insert(a.to_string());
        }
        for (c, _) in signals_of(&r) {
            categories.insert(c.to_string());
        }
        let label = audit_cases::record_id(&r).and_then(|id| labelled.get(id));
        if query.matches(&r, &checked, label) {
            records.push(r);
        }
    });
    warnings.extend(bad.iter().take(20).map(ToString::to_string));
    if bad.len() > 20 {
        warnings.push(format!("… and {} more unreadable lines", bad.len() - 20));
    }
    let label_of = |r: &Value| audit_cases::record_id(r).and_then(|id| labelled.get(id));
    let mut page = Page {
        matched: records.len(),
        allowed: count(&records, "allow"),
        denied: count(&records, "deny"),
        right: records
            .iter()
            .filter(|r| label_of(r).is_some_and(|l| l.verdict == Verdict::Right))
            .count(),
        wrong: records
            .iter()
            .filter(|r| label_of(r).is_some_and(|l| l.verdict == Verdict::Wrong))
            .count(),
        threshold,
        threshold_x: threshold.map(|t| (t.clamp(0.0, 1.0) * WIDTH * 100.0).round() / 100.0),
        agents: agents.into_iter().collect(),
        signal_categories: categories.into_iter().collect(),
        warnings,
        query: query.clone(),
        width: WIDTH,
        height: HEIGHT,
        ..Page::default()
    };
    (page.time_bars, page.time_span) = time_picture(&records);
    (page.score_bars, page.scored) = score_picture(&records, &label_of);
    page.rows = records
        .iter()
        .rev()
        .take(checked.limit)
        .filter_map(|r| row_of(r, label_of(r), threshold))
        .collect();
    Ok(page)
}

fn count(records: &[Value], decision: &str) -> usize {
    records
        .iter()
        .filter(|r| r.get("decision").and_then(Value::as_str) == Some(decision))
        .count()
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Decisions over time: the span of the records in [`TIME_BUCKETS`] bars, allowed below and
/// denied above.
fn time_picture(records: &[Value]) -> (Vec<TimeBar>, (String, String)) {
    let times: Vec<(i64, bool)> = records
        .iter()
        .filter_map(|r| {
            let t = chrono::DateTime::parse_from_rfc3339(r.get("time")?.as_str()?).ok()?;
            let deny = r.get("decision").and_then(Value::as_str) == Some("deny");
            Some((t.timestamp_millis(), deny))
        })
        .collect();
    let (Some(first), Some(last)) = (
        times.iter().map(|t| t.0).min(),
        times.iter().map(|t| t.0).max(),
    ) else {
        return (Vec::new(), (String::new(), String::new()));
    };
    let span = (last - first).max(60_000) + 1;
    let mut buckets = vec![(0usize, 0usize); TIME_BUCKETS];
    for (t, deny) in &times {
        let i = (((t - first) as f64 / span as f64) * TIME_BUCKETS as f64) as usize;
        let b = &mut buckets[i.min(TIME_BUCKETS - 1)];
        if *deny {
            b.1 += 1;
        } else {
            b.0 += 1;
        }
    }
    let most = buckets.iter().map(|b| b.0 + b.1).max().unwrap_or(1).max(1) as f64;
    let w = WIDTH / TIME_BUCKETS as f64;
    let at = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default()
    };
    let bars = buckets
        .iter()
        .enumerate()
        .map(|(i, (allow, deny))| {
            let allow_h = HEIGHT * *allow as f64 / most;
            let deny_h = HEIGHT * *deny as f64 / most;
            let from = first + span * i as i64 / TIME_BUCKETS as i64;
            TimeBar {
                x: round(i as f64 * w + 1.0),
                w: round(w - 2.0),
                allow_y: round(HEIGHT - allow_h),
                allow_h: round(allow_h),
                deny_y: round(HEIGHT - allow_h - deny_h),
                deny_h: round(deny_h),
                title: format!("from {}: {allow} allowed, {deny} denied", at(from)),
            }
        })
        .collect();
    (bars, (at(first), at(last)))
}

/// The scores of scored reviews in [`SCORE_BINS`] bins, the ones labelled wrong stacked on top.
fn score_picture<'a>(
    records: &'a [Value],
    label_of: &dyn Fn(&'a Value) -> Option<&'a Label>,
) -> (Vec<ScoreBar>, usize) {
    let mut bins = vec![(0usize, 0usize); SCORE_BINS];
    let mut scored = 0;
    for r in records {
        let Some(x) = r.get("score").and_then(Value::as_f64) else {
            continue;
        };
        scored += 1;
        let i = ((x.clamp(0.0, 1.0) * SCORE_BINS as f64) as usize).min(SCORE_BINS - 1);
        if label_of(r).is_some_and(|l| l.verdict == Verdict::Wrong) {
            bins[i].1 += 1;
        } else {
            bins[i].0 += 1;
        }
    }
    let most = bins.iter().map(|b| b.0 + b.1).max().unwrap_or(1).max(1) as f64;
    let w = WIDTH / SCORE_BINS as f64;
    let bars = bins
        .iter()
        .enumerate()
        .map(|(i, (rest, wrong))| {
            let h = HEIGHT * *rest as f64 / most;
            let wrong_h = HEIGHT * *wrong as f64 / most;
            let lo = i as f64 / SCORE_BINS as f64;
            ScoreBar {
                x: round(i as f64 * w + 1.0),
                w: round(w - 2.0),
                y: round(HEIGHT - h),
                h: round(h),
                wrong_y: round(HEIGHT - h - wrong_h),
                wrong_h: round(wrong_h),
                title: format!(
                    "score {lo:.2}–{:.2}: {} reviewed, {wrong} labelled wrong",
                    lo + 1.0 / SCORE_BINS as f64,
                    rest + wrong
                ),
            }
        })
        .collect();
    (bars, scored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(seq: u64, decision: &str, score: Option<f64>) -> Value {
        let mut r = json!({
            "seq": seq, "time": format!("2026-12-03T10:{:02}:00.000Z", seq % 60),
            "session_id": "s", "agent": "codex", "client": "c",
            "action": {"kind": "shell", "command": format!("echo {seq}")},
            "decision": decision, "decided_by": "reviewer",
            "signals": [{"category": "exfiltration", "severity": "high"}],
            "hash": format!("{seq:064x}")
        });
        if let Some(s) = score {
            r["score"] = json!(s);
        }
        r
    }

    fn write(dir: &Path, records: &[Value]) -> std::path::PathBuf {
        let f = dir.join("audit.jsonl");
        let text: String = records.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(&f, text).expect("write");
        f
    }

    #[test]
    fn filters_pictures_and_labels() {
        let dir = tempfile::tempdir().expect("tempdir");
        let audit = write(
            dir.path(),
            &[
                rec(1, "allow", Some(0.1)),
                rec(2, "deny", Some(0.9)),
                rec(3, "deny", None),
            ],
        );
        let labels = dir.path().join("labels.jsonl");
        let id = format!("{:064x}", 2);
        crate::labels::append(&labels, &Label::new(&id, 2, Verdict::Wrong, "ann", "n"))
            .expect("label");
        let all = build(&audit, &labels, Some(0.5), &Query::default()).expect("page");
        assert_eq!(
            (all.matched, all.allowed, all.denied, all.wrong),
            (3, 1, 2, 1)
        );
        assert_eq!(all.rows[0].seq, 3, "newest first");
        assert_eq!(all.rows[1].score.as_deref(), Some("0.900 ≥ 0.500"));
        assert!(all.rows[1].above);
        assert_eq!(all.rows[1].label.as_deref(), Some("wrong"));
        assert_eq!(all.scored, 2);
        let wrong_bins: usize = all.score_bars.iter().filter(|b| b.wrong_h > 0.0).count();
        assert_eq!(wrong_bins, 1, "the wrong one is highlighted");
        assert_eq!(all.threshold_x, Some(240.0));
        let q = Query {
            label: "unlabelled".into(),
            decision: "deny".into(),
            ..Query::default()
        };
        let some = build(&audit, &labels, None, &q).expect("page");
        assert_eq!(some.rows.iter().map(|r| r.seq).collect::<Vec<_>>(), vec![3]);
        let band = Query {
            score_min: "0.5".into(),
            ..Query::default()
        };
        assert_eq!(
            build(&audit, &labels, None, &band).expect("page").matched,
            1
        );
        let window = Query {
            since: "2026-12-03T10:02:00Z".into(),
            until: "2026-12-03T10:03:00Z".into(),
            ..Query::default()
        };
        let page = build(&audit, &labels, None, &window).expect("page");
        assert_eq!(page.rows.iter().map(|r| r.seq).collect::<Vec<_>>(), vec![2]);
        let late = Query {
            since: "yesterday".into(),
            ..Query::default()
        };
        assert_eq!(
            build(&audit, &labels, None, &late).err().map(|e| e.field),
            Some("since")
        );
        let bad = Query {
            score_max: "2".into(),
            ..Query::default()
        };
        assert_eq!(
            build(&audit, &labels, None, &bad).err().map(|e| e.field),
            Some("score_max")
        );
    }

    #[test]
    fn a_corrupt_line_is_a_warning_not_a_failure() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("audit.jsonl");
        std::fs::write(
            &f,
            format!("{}\n{{\"seq\": 2, \"trunc\n", rec(1, "allow", None)),
        )
        .expect("write");
        let page = build(&f, &dir.path().join("l.jsonl"), None, &Query::default()).expect("page");
        assert_eq!(page.matched, 1);
        assert_eq!(page.warnings.len(), 1);
        assert!(
            page.warnings[0].contains("audit.jsonl:2"),
            "{:?}",
            page.warnings
        );
    }
}
