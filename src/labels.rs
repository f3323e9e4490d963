//! Labels people put on guardian's decisions (the review page, `guardian label`): an
//! append-only JSON-lines file, one line per label, never the audit log itself.
//!
//! This module owns the labels file. A label names the audit record it judges by the record's
//! `hash` (and `seq`, for people), says whether the decision was `right` or `wrong`, who said it,
//! when, and an optional note. Writers append one whole line under an exclusive `flock` on the
//! file, so two reviewers labelling at once lose nothing; a record labelled twice keeps both
//! lines, and the later one counts.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{self, Write as _};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::verdict::Decision;

/// Longest note kept, in characters (a longer one is cut).
pub const MAX_NOTE_CHARS: usize = 2000;

/// Whether guardian decided right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The decision was right.
    Right,
    /// The decision was wrong: the other one was.
    Wrong,
}

impl Verdict {
    /// As written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Right => "right",
            Verdict::Wrong => "wrong",
        }
    }
}

/// One label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Label {
    /// When it was given (RFC 3339).
    pub time: String,
    /// Who gave it (the authenticated client, or the name `guardian label` was given).
    pub labeller: String,
    /// The audit record's `hash`.
    pub record: String,
    /// The audit record's `seq`.
    pub seq: u64,
    /// Right or wrong.
    pub verdict: Verdict,
    /// What the person noted.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl Label {
    /// A label given now.
    pub fn new(record: &str, seq: u64, verdict: Verdict, labeller: &str, note: &str) -> Label {
        Label {
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            labeller: labeller.to_string(),
            record: record.to_string(),
            seq,
            verdict,
            note: note.chars().take(MAX_NOTE_CHARS).collect(),
        }
    }

    /// The right answer for a record guardian decided `decided`.
    pub fn expected(&self, decided: Decision) -> Decision {
        match (self.verdict, decided) {
            (Verdict::Right, d) => d,
            (Verdict::Wrong, Decision::Allow) => Decision::Deny,
            (Verdict::Wrong, Decision::Deny) => Decision::Allow,
        }
    }
}

/// Why a label could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum LabelsError {
    /// The file could not be opened, locked or written.
    #[error("{path}: {source}")]
    Io {
        /// The labels file.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// A record id that is not a record's hash (64 hex digits).
    #[error("record: {0:?} is not an audit record's hash (64 hex digits)")]
    Record(String),
}

/// Appends one label as one line, under an exclusive lock on the file (concurrent writers,
/// threads or processes, each add a whole line), and syncs it.
pub fn append(path: &Path, label: &Label) -> Result<(), LabelsError> {
    if label.record.len() != 64 || !label.record.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(LabelsError::Record(label.record.clone()));
    }
    let io_err = |source| LabelsError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut line = serde_json::to_vec(label).map_err(|e| io_err(io::Error::other(e)))?;
    line.push(b'\n');
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io_err)?;
    }
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io_err)?;
    let _lock = crate::flock::Exclusive::take(&file).map_err(io_err)?;
    file.write_all(&line).map_err(io_err)?;
    file.sync_data().map_err(io_err)
}

/// The labels of a file by record hash, and its lines that are not labels as (line, why).
pub type Labels = (HashMap<String, Label>, Vec<(usize, String)>);

/// Every label of the file (a missing file has none), the later of two for one record winning,
/// and the lines that are not labels, as (line, why).
pub fn read(path: &Path) -> io::Result<Labels> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let mut labels = HashMap::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Label>(line) {
            Ok(l) => {
                labels.insert(l.record.clone(), l);
            }
            Err(e) => bad.push((i + 1, e.to_string())),
        }
    }
    Ok((labels, bad))
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn labels_append_and_the_later_one_counts() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("sub/labels.jsonl");
        append(&f, &Label::new(H, 3, Verdict::Right, "ann", "")).expect("append");
        append(&f, &Label::new(H, 3, Verdict::Wrong, "bob", "should deny")).expect("append");
        let (labels, bad) = read(&f).expect("read");
        assert!(bad.is_empty());
        assert_eq!(labels[H].verdict, Verdict::Wrong);
        assert_eq!(labels[H].labeller, "bob");
        assert_eq!(
            std::fs::read_to_string(&f).expect("read").lines().count(),
            2
        );
        assert!(append(&f, &Label::new("<script>", 1, Verdict::Right, "a", "")).is_err());
    }

    #[test]
    fn two_writers_at_once_lose_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("labels.jsonl");
        let long = "x".repeat(MAX_NOTE_CHARS);
        std::thread::scope(|s| {
            for who in ["ann", "bob", "cy", "di"] {
                let (f, long) = (&f, &long);
                s.spawn(move || {
                    for i in 0..50u64 {
                        let id = format!("{:064x}", i + 1000 * who.len() as u64);
                        append(f, &Label::new(&id, i, Verdict::Right, who, long)).expect("append");
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&f).expect("read");
        assert_eq!(text.lines().count(), 200);
        assert!(
            text.lines()
                .all(|l| serde_json::from_str::<Label>(l).is_ok()),
            "every line whole"
        );
    }

    #[test]
    fn expected_follows_the_verdict() {
        let wrong = Label::new(H, 1, Verdict::Wrong, "a", "");
        assert_eq!(wrong.expected(Decision::Allow), Decision::Deny);
        assert_eq!(wrong.expected(Decision::Deny), Decision::Allow);
        let right = Label::new(H, 1, Verdict::Right, "a", "");
        assert_eq!(right.expected(Decision::Deny), Decision::Deny);
    }
}
