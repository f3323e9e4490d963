//! Audit: the durable, tamper-evident record of every decision.
//!
//! This module owns the audit log: a JSON-lines file, one record per decision, appended by one
//! writer thread that groups concurrent records into a single write and `fdatasync` (group
//! commit). [`AuditLog::append`] returns only after the record is on disk (or, with
//! [`Durability::Interval`], in the file, synced by a background thread); the pipeline answers
//! deny when it fails. Secrets are redacted ([`crate::redact`]) before a record leaves the
//! request task. Each record carries `seq` (1, 2, …), `prev` (the previous record's hash; 64
//! zeros for the first) and, last, `hash`: the SHA-256 of the record's line with the `hash` field
//! left out, so editing, removing or reordering records breaks the chain ([`verify`]). A torn last
//! line left by a crash mid-write was never acknowledged: it is cut off on open, and the chain
//! continues from the last whole record.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot};

use crate::redact::Redactor;
use crate::request::{Action, Escalation, Retry};
use crate::reviewer::{Usage, UserAuthorization};
use crate::verdict::{DecidedBy, Decision, RiskLevel, RuleRef};

/// Records waiting to be written, at most; senders wait beyond it (back-pressure, not loss).
const QUEUE: usize = 4096;
/// Records written per group commit, at most.
const BATCH: usize = 256;
/// The `prev` of the first record.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// `,"hash":"` + 64 hex digits + `"}`: how every chained line ends.
const HASH_SUFFIX_LEN: usize = 9 + 64 + 2;

/// One decision as recorded (borrowing from the request and the outcome: nothing is copied
/// before serialization).
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord<'a> {
    /// RFC 3339 time of the decision.
    pub time: String,
    /// The review id returned to the client.
    pub review_id: &'a str,
    /// The session id (given or generated).
    pub session_id: &'a str,
    /// The agent named in the request.
    pub agent: Option<&'a str>,
    /// The client that asked (authenticated name, or `anonymous`).
    pub client: &'a str,
    /// The full action.
    pub action: &'a Action,
    /// The working directory the action was judged in.
    pub cwd: &'a str,
    /// The user's intent, as given.
    pub intent: Option<&'a str>,
    /// Strict mode.
    pub strict: bool,
    /// The retry block, as given.
    pub retry: Option<&'a Retry>,
    /// The escalation the agent asked for (outside the sandbox, extra paths, network), as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation: Option<&'a Escalation>,
    /// allow or deny.
    pub decision: Decision,
    /// Which stage decided.
    pub decided_by: DecidedBy,
    /// The rule that decided, or sent the action to review.
    pub rule: Option<&'a RuleRef>,
    /// The reviewer's risk level.
    pub risk_level: Option<RiskLevel>,
    /// The reviewer's reading of the user's authorisation.
    pub user_authorization: Option<UserAuthorization>,
    /// Why.
    pub rationale: &'a str,
    /// What the agent was told.
    pub message: &'a str,
    /// The reviewer backend, when one was asked.
    pub reviewer_backend: Option<&'a str>,
    /// The reviewer model, when one was asked.
    pub reviewer_model: Option<&'a str>,
    /// The system prompt's version id.
    pub prompt_version: &'a str,
    /// The system prompt's hash.
    pub prompt_sha256: &'a str,
    /// Kind of reviewer failure, when the decision is a fallback.
    pub error: Option<&'a str>,
    /// Time from request to decision, in milliseconds.
    pub latency_ms: u64,
    /// Tokens the reviewer used.
    pub tokens: Usage,
    /// Reviewer calls made (retries and stages included); 0 when the reviewer was not asked.
    pub attempts: u32,
    /// The review stages that ran: `first_pass`, `full`.
    pub stages: &'a [&'static str],
    /// Why the agent was told to stop, when the session's circuit breaker tripped.
    pub interrupt: Option<&'a str>,
    /// True when nothing could review the action and the integration handed the question to
    /// the agent's own prompt (`[hooks] unreviewed = "ask"`) instead of denying it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deferred_to_user: bool,
}

type Job = (Vec<u8>, oneshot::Sender<io::Result<()>>);

/// When a record is acknowledged (`[audit] fsync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// After its batch is written and `fdatasync`ed (group commit): survives a crash of the
    /// process, of the kernel and a power loss. The default.
    #[default]
    Always,
    /// After its batch is written to the file (the kernel's page cache), with an `fdatasync` at
    /// most this long after: survives a crash or `kill -9` of guardian, but a kernel crash or
    /// power loss may lose the records of the last interval.
    Interval(Duration),
}

/// The audit log writer.
#[derive(Debug, Clone)]
pub struct AuditLog {
    tx: mpsc::Sender<Job>,
    path: PathBuf,
    redactor: std::sync::Arc<Redactor>,
}

/// Where the chain stands: the last record's sequence number and hash.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Chain {
    seq: u64,
    prev: String,
}

impl AuditLog {
    /// Opens (creating if needed) the log at `path` and starts its writer thread, with the
    /// built-in secret patterns.
    pub fn open(path: &Path) -> io::Result<AuditLog> {
        AuditLog::open_with(path, Redactor::default())
    }

    /// Opens the log with the given redactor.
    pub fn open_with(path: &Path, redactor: Redactor) -> io::Result<AuditLog> {
        AuditLog::open_durable(path, redactor, Durability::Always)
    }

    /// Opens the log with the given redactor and fsync policy.
    pub fn open_durable(
        path: &Path,
        redactor: Redactor,
        durability: Durability,
    ) -> io::Result<AuditLog> {
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent)?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)?;
        cut_torn_tail(&mut file)?;
        let chain = last_link(&mut file)?;
        let syncer = match durability {
            Durability::Always => None,
            Durability::Interval(every) => Some(Syncer::start(&file, every)?),
        };
        let (tx, rx) = mpsc::channel::<Job>(QUEUE);
        std::thread::Builder::new()
            .name("guardian-audit".into())
            .spawn(move || writer(file, rx, chain, syncer))?;
        Ok(AuditLog {
            tx,
            path: path.to_path_buf(),
            redactor: std::sync::Arc::new(redactor),
        })
    }

    /// The file records go to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record (secrets redacted, chained) and waits until it is on disk (in the file,
    /// for [`Durability::Interval`]).
    pub async fn append(&self, record: &AuditRecord<'_>) -> io::Result<()> {
        let body = serde_json::to_vec(record).map_err(io::Error::other)?;
        let body = self.redactor.redact_json(body);
        let (done_tx, done_rx) = oneshot::channel();
        self.tx
            .send((body, done_tx))
            .await
            .map_err(|_| io::Error::other("audit writer has stopped"))?;
        done_rx
            .await
            .map_err(|_| io::Error::other("audit writer dropped the record"))?
    }

    /// Waits until every record appended before this call is on disk (used at shutdown).
    pub async fn flush(&self) -> io::Result<()> {
        let (done_tx, done_rx) = oneshot::channel();
        self.tx
            .send((Vec::new(), done_tx))
            .await
            .map_err(|_| io::Error::other("audit writer has stopped"))?;
        done_rx
            .await
            .map_err(|_| io::Error::other("audit writer dropped the flush"))?
    }
}

/// If the file ends mid-line (a crash during a write), cut that line off: it was never
/// acknowledged (a record is acknowledged only after its whole batch is synced).
fn cut_torn_tail(file: &mut File) -> io::Result<()> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    let mut pos = len;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let start = pos.saturating_sub(buf.len() as u64);
        let n = (pos - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            let keep = start + i as u64 + 1;
            if keep != len {
                file.set_len(keep)?;
                file.sync_data()?;
            }
            return Ok(());
        }
        if start == 0 {
            // One torn line and nothing else.
            file.set_len(0)?;
            file.sync_data()?;
            return Ok(());
        }
        pos = start;
    }
}

/// The `seq` of the last record of the log at `path`: 0 when the file is missing or empty, or
/// when its last line is not a chained record. Reads only the file's tail, so a caller can mark
/// where a run starts (`guardian run` summarises only the records after it).
pub fn last_seq(path: &Path) -> io::Result<u64> {
    match File::open(path) {
        Ok(mut f) => last_link(&mut f).map(|c| c.seq),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e),
    }
}

/// The chain position after the file's last record (the file ends with a newline or is empty).
fn last_link(file: &mut File) -> io::Result<Chain> {
    let len = file.metadata()?.len();
    let genesis = Chain {
        seq: 0,
        prev: GENESIS.to_string(),
    };
    if len == 0 {
        return Ok(genesis);
    }
    // Read backwards until the last line is whole.
    let mut window: u64 = 64 * 1024;
    loop {
        let start = len.saturating_sub(window);
        let mut buf = vec![0u8; (len - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        let body = &buf[..buf.len() - 1]; // without the final newline
        let line = match body.iter().rposition(|&b| b == b'\n') {
            Some(i) => &body[i + 1..],
            None if start == 0 => body,
            None => {
                window *= 2;
                continue;
            }
        };
        return Ok(match parse_link(line) {
            Some((seq, hash)) => Chain { seq, prev: hash },
            // A log written before records were chained: a new chain starts after it.
            None => genesis,
        });
    }
}

/// `(seq, hash)` of a chained line.
fn parse_link(line: &[u8]) -> Option<(u64, String)> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    Some((
        v.get("seq")?.as_u64()?,
        v.get("hash")?.as_str()?.to_string(),
    ))
}

/// Splices `seq` and `prev` into a serialized record, appends `hash` and the newline, and adds
/// the finished line to `out` (hashed as it is written: no copy of the record is made).
fn chain_line(body: &[u8], chain: &mut Chain, out: &mut Vec<u8>) -> io::Result<()> {
    use std::io::Write as _;
    if body.len() < 2 || body[0] != b'{' || body[body.len() - 1] != b'}' {
        return Err(io::Error::other("an audit record must be a JSON object"));
    }
    let seq = chain.seq + 1;
    let start = out.len();
    write!(out, "{{\"seq\":{seq},\"prev\":\"{}\"", chain.prev)?;
    if body.len() > 2 {
        out.push(b',');
    }
    out.extend_from_slice(&body[1..]);
    let hash = hex::encode(Sha256::digest(&out[start..]));
    out.pop(); // the closing brace
    out.extend_from_slice(b",\"hash\":\"");
    out.extend_from_slice(hash.as_bytes());
    out.extend_from_slice(b"\"}\n");
    chain.seq = seq;
    chain.prev = hash;
    Ok(())
}

/// The background `fdatasync` of [`Durability::Interval`]: the writer marks the file dirty after
/// each write, and this thread syncs it at most once per interval.
struct Syncer {
    dirty: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Syncer {
    fn start(file: &File, every: Duration) -> io::Result<Syncer> {
        let file = file.try_clone()?;
        let dirty = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let (d, st) = (dirty.clone(), stop.clone());
        std::thread::Builder::new()
            .name("guardian-audit-sync".into())
            .spawn(move || {
                while !st.load(Ordering::Acquire) {
                    std::thread::sleep(every);
                    if d.swap(false, Ordering::AcqRel)
                        && let Err(e) = file.sync_data()
                    {
                        d.store(true, Ordering::Release);
                        tracing::error!(error = %e, "audit fdatasync failed");
                    }
                }
            })?;
        Ok(Syncer { dirty, stop })
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

fn writer(mut file: File, mut rx: mpsc::Receiver<Job>, mut chain: Chain, syncer: Option<Syncer>) {
    while let Some(first) = rx.blocking_recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let mut buf = Vec::with_capacity(batch.iter().map(|(l, _)| l.len() + 160).sum());
        let before = chain.clone();
        let mut results = Vec::with_capacity(batch.len());
        for (body, _) in &batch {
            if body.is_empty() {
                results.push(Ok(())); // a flush marker
                continue;
            }
            let len = buf.len();
            match chain_line(body, &mut chain, &mut buf) {
                Ok(()) => results.push(Ok(())),
                Err(e) => {
                    buf.truncate(len);
                    results.push(Err(e));
                }
            }
        }
        let flush = batch.iter().any(|(body, _)| body.is_empty());
        let written = file.write_all(&buf).and_then(|()| match &syncer {
            Some(s) if !flush => {
                s.dirty.store(true, Ordering::Release);
                Ok(())
            }
            _ => file.sync_data(),
        });
        if let Err(e) = &written {
            // Nothing of this batch is acknowledged; cut whatever part of it reached the file so
            // the next batch continues the chain from the last acknowledged record.
            let _ = cut_torn_tail(&mut file);
            chain = last_link(&mut file).unwrap_or(before);
            tracing::error!(error = %e, "audit write failed");
        }
        for ((_, done), r) in batch.into_iter().zip(results) {
            let r = match (&written, r) {
                (Ok(()), r) => r,
                (Err(e), _) => Err(io::Error::new(e.kind(), e.to_string())),
            };
            let _ = done.send(r);
        }
    }
    if syncer.is_some() {
        let _ = file.sync_data();
    }
}

/// What [`verify`] found in a whole, unbroken chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifySummary {
    /// Records checked.
    pub records: u64,
    /// The last record's hash (the chain head), or [`GENESIS`] for an empty log.
    pub head: String,
}

/// The first record that breaks the chain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct VerifyError {
    /// 1-based line number in the file.
    pub line: u64,
    /// What is wrong with it.
    pub reason: String,
}

/// Checks every record of the log at `path`: valid JSON, `seq` counting up from 1, `prev` equal
/// to the previous record's `hash`, and `hash` equal to the SHA-256 of the line without it.
pub fn verify(path: &Path) -> Result<VerifySummary, VerifyError> {
    let file = File::open(path).map_err(|e| VerifyError {
        line: 0,
        reason: format!("cannot open {}: {e}", path.display()),
    })?;
    let mut reader = io::BufReader::new(file);
    let mut chain = Chain {
        seq: 0,
        prev: GENESIS.to_string(),
    };
    let mut line_no = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| VerifyError {
                line: line_no + 1,
                reason: format!("cannot read: {e}"),
            })?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let bad = |reason: String| VerifyError {
            line: line_no,
            reason,
        };
        if line.last() != Some(&b'\n') {
            return Err(bad("the last record is incomplete (no newline)".into()));
        }
        let text = &line[..line.len() - 1];
        let v: serde_json::Value =
            serde_json::from_slice(text).map_err(|e| bad(format!("not JSON: {e}")))?;
        let seq = v.get("seq").and_then(serde_json::Value::as_u64);
        let prev = v.get("prev").and_then(serde_json::Value::as_str);
        let hash = v.get("hash").and_then(serde_json::Value::as_str);
        let (Some(seq), Some(prev), Some(hash)) = (seq, prev, hash) else {
            return Err(bad(
                "the record is not chained (seq, prev or hash missing)".into()
            ));
        };
        if seq != chain.seq + 1 {
            return Err(bad(format!(
                "seq is {seq}, expected {}: a record was removed, added or moved",
                chain.seq + 1
            )));
        }
        if prev != chain.prev {
            return Err(bad(format!(
                "prev is {prev}, but the previous record's hash is {}",
                chain.prev
            )));
        }
        if text.len() < HASH_SUFFIX_LEN
            || !text.ends_with(format!("\"hash\":\"{hash}\"}}").as_bytes())
        {
            return Err(bad("hash is not the record's last field".into()));
        }
        let mut unhashed = text[..text.len() - HASH_SUFFIX_LEN].to_vec();
        unhashed.push(b'}');
        let actual = hex::encode(Sha256::digest(&unhashed));
        if actual != hash {
            return Err(bad(format!(
                "the record was modified: its hash is {actual}, it says {hash}"
            )));
        }
        chain = Chain {
            seq,
            prev: hash.to_string(),
        };
    }
    Ok(VerifySummary {
        records: chain.seq,
        head: chain.prev,
    })
}
