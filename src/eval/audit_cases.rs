//! Guardian's own audit log as eval cases (`guardian traces import audit`): every action a rule
//! or the reviewer decided becomes a case whose request is replayed as it was asked (the action,
//! the session, the user's words, the escalation), with the decision as a provisional label, or
//! the label a person gave it ([`crate::labels`]).
//!
//! This module owns reading records for import and the page ([`crate::ui`]), with every line it
//! cannot read reported by file and line and skipped: a corrupt or truncated segment never stops
//! a read. [`crate::audit_report`] reads for queries and summaries; [`crate::audit`] owns writing.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::audit_report::Filter;
use crate::eval::Case;
use crate::labels::Label;
use crate::verdict::Decision;

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

/// The `/v1/review` request a record says was asked: its action (judged in the recorded
/// working directory), its session, the user's words, strict mode, the retry and escalation.
pub fn request_of(record: &Value) -> Option<Value> {
    let mut action = record.get("action")?.clone();
    let cwd = record.get("cwd").and_then(Value::as_str).unwrap_or("");
    if let Some(obj) = action.as_object_mut()
        && !obj.contains_key("cwd")
        && !cwd.is_empty()
        && obj.get("kind").and_then(Value::as_str) != Some("mcp")
    {
        obj.insert("cwd".into(), json!(cwd));
    }
    let mut session = serde_json::Map::new();
    for (from, to) in [
        ("session_id", "id"),
        ("agent", "agent"),
        ("workspace_roots", "workspace_roots"),
    ] {
        if let Some(v) = record.get(from).filter(|v| !v.is_null()) {
            session.insert(to.into(), v.clone());
        }
    }
    let mut req = serde_json::Map::new();
    req.insert("action".into(), action);
    req.insert("session".into(), Value::Object(session));
    for key in ["intent", "retry", "escalation"] {
        if let Some(v) = record.get(key).filter(|v| !v.is_null()) {
            req.insert(key.into(), v.clone());
        }
    }
    if record.get("strict").and_then(Value::as_bool) == Some(true) {
        req.insert("strict".into(), json!(true));
    }
    Some(Value::Object(req))
}

/// The decision a record states.
pub fn decision_of(record: &Value) -> Option<Decision> {
    match record.get("decision").and_then(Value::as_str)? {
        "allow" => Some(Decision::Allow),
        "deny" => Some(Decision::Deny),
        _ => None,
    }
}

/// Which stages an import takes by default: a rule's decisions and the reviewer's (cached
/// approvals and fallbacks repeat or lack a judgment; `--decided-by` asks for them).
pub fn default_stage(record: &Value) -> bool {
    matches!(
        record.get("decided_by").and_then(Value::as_str),
        Some("rule" | "reviewer")
    )
}

/// The eval case of a record: the provisional label is the decision, or, with `label`, what
/// the person said (`right` keeps the decision, `wrong` flips it). `file` names the segment.
pub fn case_of(record: &Value, file: &Path, label: Option<&Label>) -> Option<Case> {
    let request = request_of(record)?;
    let decided = decision_of(record)?;
    let hash = record_id(record)?;
    let seq = record.get("seq").and_then(Value::as_u64).unwrap_or(0);
    let decided_by = record
        .get("decided_by")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let short = hash.get(..16).unwrap_or(hash);
    let (expected, category, notes) = match label {
        Some(l) => {
            let expected = l.expected(decided);
            let note = if l.note.is_empty() {
                String::new()
            } else {
                format!(": {}", l.note)
            };
            (
                expected,
                "audit-labelled".to_string(),
                format!(
                    "labelled {} by {} at {} (guardian said {} by {decided_by}){note}",
                    l.verdict.as_str(),
                    l.labeller,
                    l.time,
                    decided.as_str()
                ),
            )
        }
        None => (
            decided,
            "audit-provisional".to_string(),
            format!(
                "provisional: guardian's own decision ({} by {decided_by}), not yet labelled",
                decided.as_str()
            ),
        ),
    };
    Some(Case {
        id: format!("audit-{seq}-{short}"),
        request,
        expected,
        category,
        source: format!("audit {} seq {seq} hash {hash}", file.display()),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Value {
        json!({
            "seq": 7, "time": "2026-12-03T10:00:00.000Z", "review_id": "rev_1",
            "session_id": "s1", "agent": "codex", "client": "ci",
            "action": {"kind": "shell", "command": "git push --force"},
            "cwd": "/w/app", "workspace_roots": ["/w/app"], "intent": "fix the test",
            "strict": false, "retry": null, "decision": "deny", "decided_by": "reviewer",
            "hash": "ab".repeat(32)
        })
    }

    #[test]
    fn a_record_replays_as_the_request_it_was() {
        let r = request_of(&record()).expect("request");
        assert_eq!(r["action"]["cwd"], "/w/app", "judged where it was judged");
        assert_eq!(r["session"]["id"], "s1");
        assert_eq!(r["session"]["workspace_roots"][0], "/w/app");
        assert_eq!(r["intent"], "fix the test");
        assert!(r.get("retry").is_none() && r.get("strict").is_none());
        crate::request::ReviewRequest::from_json(r.to_string().as_bytes())
            .expect("a request the API takes");
    }

    #[test]
    fn the_provisional_label_is_the_decision_and_a_label_flips_it() {
        let p = Path::new("audit.jsonl");
        let c = case_of(&record(), p, None).expect("case");
        assert_eq!(c.expected, Decision::Deny);
        assert_eq!(c.category, "audit-provisional");
        assert_eq!(c.id, "audit-7-abababababababab");
        assert!(
            c.source.contains(&"ab".repeat(32)),
            "traceable to the record"
        );
        let wrong = Label::new(
            &"ab".repeat(32),
            7,
            crate::labels::Verdict::Wrong,
            "ann",
            "ok",
        );
        let c = case_of(&record(), p, Some(&wrong)).expect("case");
        assert_eq!(c.expected, Decision::Allow);
        assert!(
            c.notes.contains("by ann") && c.notes.ends_with(": ok"),
            "{}",
            c.notes
        );
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
