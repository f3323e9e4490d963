//! Verifying a log's hash chain across its segments.
//!
//! Every record must be valid JSON with `seq` counting up by one, `prev` equal to the previous
//! record's `hash`, and `hash` equal to the SHA-256 of its line without it, across the closed
//! segments (in the order of their first `seq`) and the active file. A log that no longer starts
//! at `seq` 1 is accepted only when a chained `prune` record names exactly the `seq` and hash the
//! kept part starts after. Errors name the file and the line, and at a segment boundary say
//! whether a segment is missing or the previous one was truncated.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::segment;
use super::{Chain, GENESIS, HASH_SUFFIX_LEN};

/// What [`verify`] found in a whole, unbroken chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifySummary {
    /// Records checked (segment headers and prune records included).
    pub records: u64,
    /// The last record's hash (the chain head), or [`GENESIS`] for an empty log.
    pub head: String,
    /// Files checked: the closed segments, then the active file.
    pub files: u64,
    /// The `seq` range deleted by retention before the kept part, when there was one.
    pub pruned: Option<(u64, u64)>,
}

/// The first record that breaks the chain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: line {line}: {reason}")]
pub struct VerifyError {
    /// The file (a segment's name or the active file's).
    pub file: String,
    /// 1-based line number in the file (0: the file itself).
    pub line: u64,
    /// What is wrong with it.
    pub reason: String,
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// The files of the log whose active file is `path`: its closed segments, oldest first, then
/// the active file, each with its name.
fn files_of(path: &Path) -> Result<Vec<(std::path::PathBuf, String)>, VerifyError> {
    let active_name = name_of(path);
    let segments = segment::list(path).map_err(|e| VerifyError {
        file: active_name.clone(),
        line: 0,
        reason: format!("cannot list its segments: {e}"),
    })?;
    if !path.exists() && segments.is_empty() {
        return Err(VerifyError {
            file: active_name,
            line: 0,
            reason: format!("cannot open {}: no such file", path.display()),
        });
    }
    let mut files: Vec<(std::path::PathBuf, String)> = segments
        .iter()
        .map(|s| (s.path.clone(), s.name.clone()))
        .collect();
    if path.exists() {
        files.push((path.to_path_buf(), active_name));
    }
    Ok(files)
}

/// Checks every record of the log whose active file is `path`, and of its closed segments.
pub fn verify(path: &Path) -> Result<VerifySummary, VerifyError> {
    let files = files_of(path)?;
    let mut chain: Option<Chain> = None;
    // The start of the kept chain when it is not seq 1: (file, last pruned seq, its hash).
    let mut needs_prune: Option<(String, u64, String)> = None;
    let mut prunes: Vec<(u64, String, u64)> = Vec::new();
    let mut previous_file = String::new();
    for (path, name) in &files {
        let mut failure: Option<VerifyError> = None;
        let mut at_start = true;
        let read = segment::for_each_line(path, |line_no, line| {
            let bad = |reason: String| VerifyError {
                file: name.clone(),
                line: line_no,
                reason,
            };
            match check_line(line, chain.as_ref()) {
                Err(reason) => {
                    // At a file boundary a broken link means a missing or truncated segment.
                    let reason = match (at_start, chain.as_ref(), parse(line)) {
                        (true, Some(c), Some(v)) => boundary_reason(&previous_file, c, &v, reason),
                        _ => reason,
                    };
                    failure = Some(bad(reason));
                    false
                }
                Ok(v) => {
                    let seq = v
                        .get("seq")
                        .and_then(serde_json::Value::as_u64)
                        .unwrap_or(0);
                    let prev = v
                        .get("prev")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let hash = v
                        .get("hash")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    if chain.is_none() && seq != 1 {
                        // Retention deletes whole segments, so a pruned log starts with a
                        // segment header; anything else lost its first records.
                        if v.get("event").and_then(serde_json::Value::as_str)
                            != Some("segment_start")
                        {
                            failure = Some(bad(format!(
                                "the log starts at seq {seq}, expected 1: records were removed"
                            )));
                            return false;
                        }
                        needs_prune = Some((name.clone(), seq - 1, prev.clone()));
                    }
                    if v.get("event").and_then(serde_json::Value::as_str) == Some("prune") {
                        let p = &v["pruned"];
                        if let (Some(last), Some(head), Some(first)) = (
                            p.get("last_seq").and_then(serde_json::Value::as_u64),
                            p.get("head").and_then(serde_json::Value::as_str),
                            p.get("first_seq").and_then(serde_json::Value::as_u64),
                        ) {
                            prunes.push((last, head.to_string(), first));
                        }
                    }
                    chain = Some(Chain { seq, prev: hash });
                    at_start = false;
                    true
                }
            }
        });
        if let Err(e) = read {
            return Err(VerifyError {
                file: name.clone(),
                line: 0,
                reason: format!("cannot read: {e}"),
            });
        }
        if let Some(f) = failure {
            return Err(f);
        }
        previous_file = name.clone();
    }
    let mut pruned = None;
    if let Some((file, last, head)) = needs_prune {
        match prunes.iter().find(|(l, h, _)| *l == last && *h == head) {
            // Everything before the kept part is gone, by this prune and any before it.
            Some((l, _, _)) => pruned = Some((1, *l)),
            None => {
                return Err(VerifyError {
                    file,
                    line: 1,
                    reason: format!(
                        "the log starts at seq {}, but no prune record accounts for seq 1..{last} \
                         (ending in hash {head}): records or segments were removed",
                        last + 1
                    ),
                });
            }
        }
    }
    let chain = chain.unwrap_or(Chain {
        seq: 0,
        prev: GENESIS.to_string(),
    });
    Ok(VerifySummary {
        records: chain.seq - pruned.map_or(0, |(_, l)| l),
        head: chain.prev,
        files: files.len() as u64,
        pruned,
    })
}

fn parse(line: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_slice(line.strip_suffix(b"\n").unwrap_or(line)).ok()
}

/// Why the first record of a file does not continue the previous file's chain.
fn boundary_reason(previous: &str, c: &Chain, v: &serde_json::Value, reason: String) -> String {
    let seq = v
        .get("seq")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    let seg = &v["segment"];
    let claimed_last = seg
        .get("previous_last_seq")
        .and_then(serde_json::Value::as_u64);
    let claimed_name = seg
        .get("previous")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    let base = |n: &str| {
        let c = segment::Compression::of(n);
        n.strip_suffix(c.extension()).unwrap_or(n).to_string()
    };
    if !claimed_name.is_empty() && base(claimed_name) != base(previous) && seq > c.seq + 1 {
        return format!(
            "segment {claimed_name} is missing: records {}..{} are gone (this file's header names \
             it as the previous segment)",
            c.seq + 1,
            seq - 1,
        );
    }
    match claimed_last {
        Some(last) if last > c.seq => format!(
            "{previous} was truncated: it ends at seq {}, but this segment's header says the \
             previous segment ({claimed_name}) ended at seq {last}",
            c.seq
        ),
        _ if seq > c.seq + 1 => format!(
            "records {}..{} are missing between {previous} and this file: a segment was deleted \
             ({}) or {previous} was truncated",
            c.seq + 1,
            seq - 1,
            if claimed_name.is_empty() {
                "unnamed".to_string()
            } else {
                format!("this file's header names {claimed_name} as the previous one")
            }
        ),
        _ => format!("{reason} (at the boundary after {previous})"),
    }
}

/// Checks one line against the chain so far; returns the record.
fn check_line(line: &[u8], chain: Option<&Chain>) -> Result<serde_json::Value, String> {
    if line.last() != Some(&b'\n') {
        return Err("the last record is incomplete (no newline)".into());
    }
    let text = &line[..line.len() - 1];
    let v: serde_json::Value =
        serde_json::from_slice(text).map_err(|e| format!("not JSON: {e}"))?;
    let seq = v.get("seq").and_then(serde_json::Value::as_u64);
    let prev = v.get("prev").and_then(serde_json::Value::as_str);
    let hash = v.get("hash").and_then(serde_json::Value::as_str);
    let (Some(seq), Some(prev), Some(hash)) = (seq, prev, hash) else {
        return Err("the record is not chained (seq, prev or hash missing)".into());
    };
    if let Some(c) = chain {
        if seq != c.seq + 1 {
            return Err(format!(
                "seq is {seq}, expected {}: a record was removed, added or moved",
                c.seq + 1
            ));
        }
        if prev != c.prev {
            return Err(format!(
                "prev is {prev}, but the previous record's hash is {}",
                c.prev
            ));
        }
    } else if seq == 1 && prev != GENESIS {
        return Err(format!(
            "the first record's prev is {prev}, not the genesis hash"
        ));
    } else if seq == 0 {
        return Err("seq is 0, expected 1".into());
    }
    if text.len() < HASH_SUFFIX_LEN || !text.ends_with(format!("\"hash\":\"{hash}\"}}").as_bytes())
    {
        return Err("hash is not the record's last field".into());
    }
    let mut unhashed = text[..text.len() - HASH_SUFFIX_LEN].to_vec();
    unhashed.push(b'}');
    let actual = hex::encode(Sha256::digest(&unhashed));
    if actual != hash {
        return Err(format!(
            "the record was modified: its hash is {actual}, it says {hash}"
        ));
    }
    Ok(v)
}
