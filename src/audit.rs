//! Audit: the durable record of every decision.
//!
//! This module owns the audit log: a JSON-lines file, one record per decision, appended by one
//! writer thread that groups concurrent records into a single write and `fdatasync` (group
//! commit). [`AuditLog::append`] returns only after the record is on disk; the pipeline answers
//! deny when it fails. A torn last line left by a crash is fenced off with a newline on open, so
//! it can never merge with the next record.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::request::{Action, Retry};
use crate::reviewer::{Usage, UserAuthorization};
use crate::verdict::{DecidedBy, Decision, RiskLevel, RuleRef};

/// Records waiting to be written, at most; senders wait beyond it (back-pressure, not loss).
const QUEUE: usize = 4096;
/// Records written per group commit, at most.
const BATCH: usize = 256;

/// One decision as recorded.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord {
    /// RFC 3339 time of the decision.
    pub time: String,
    /// The review id returned to the client.
    pub review_id: String,
    /// The session id (given or generated).
    pub session_id: String,
    /// The agent named in the request.
    pub agent: Option<String>,
    /// The client that asked (authenticated name, or `anonymous`).
    pub client: String,
    /// The full action.
    pub action: Action,
    /// The working directory the action was judged in.
    pub cwd: String,
    /// The user's intent, as given.
    pub intent: Option<String>,
    /// Strict mode.
    pub strict: bool,
    /// The retry block, as given.
    pub retry: Option<Retry>,
    /// allow or deny.
    pub decision: Decision,
    /// Which stage decided.
    pub decided_by: DecidedBy,
    /// The rule that decided, or sent the action to review.
    pub rule: Option<RuleRef>,
    /// The reviewer's risk level.
    pub risk_level: Option<RiskLevel>,
    /// The reviewer's reading of the user's authorisation.
    pub user_authorization: Option<UserAuthorization>,
    /// Why.
    pub rationale: String,
    /// What the agent was told.
    pub message: String,
    /// The reviewer backend, when one was asked.
    pub reviewer_backend: Option<String>,
    /// The reviewer model, when one was asked.
    pub reviewer_model: Option<String>,
    /// The system prompt's version id.
    pub prompt_version: String,
    /// The system prompt's hash.
    pub prompt_sha256: String,
    /// Kind of reviewer failure, when the decision is a fallback.
    pub error: Option<String>,
    /// Time from request to decision, in milliseconds.
    pub latency_ms: u64,
    /// Tokens the reviewer used.
    pub tokens: Usage,
    /// Reviewer calls made (retries and stages included); 0 when the reviewer was not asked.
    pub attempts: u32,
    /// The review stages that ran: `first_pass`, `full`.
    pub stages: Vec<&'static str>,
    /// Why the agent was told to stop, when the session's circuit breaker tripped.
    pub interrupt: Option<String>,
}

type Job = (Vec<u8>, oneshot::Sender<io::Result<()>>);

/// The audit log writer.
#[derive(Debug, Clone)]
pub struct AuditLog {
    tx: mpsc::Sender<Job>,
    path: PathBuf,
}

impl AuditLog {
    /// Opens (creating if needed) the log at `path` and starts its writer thread.
    pub fn open(path: &Path) -> io::Result<AuditLog> {
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
        fence_torn_tail(&mut file)?;
        let (tx, rx) = mpsc::channel::<Job>(QUEUE);
        std::thread::Builder::new()
            .name("guardian-audit".into())
            .spawn(move || writer(file, rx))?;
        Ok(AuditLog {
            tx,
            path: path.to_path_buf(),
        })
    }

    /// The file records go to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record and waits until it is on disk.
    pub async fn append(&self, record: &AuditRecord) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        let (done_tx, done_rx) = oneshot::channel();
        self.tx
            .send((line, done_tx))
            .await
            .map_err(|_| io::Error::other("audit writer has stopped"))?;
        done_rx
            .await
            .map_err(|_| io::Error::other("audit writer dropped the record"))?
    }
}

/// If the file ends mid-line (a crash during a write), end that line so it stays separate.
fn fence_torn_tail(file: &mut File) -> io::Result<()> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    if last[0] != b'\n' {
        file.write_all(b"\n")?;
        file.sync_data()?;
    }
    Ok(())
}

fn writer(mut file: File, mut rx: mpsc::Receiver<Job>) {
    while let Some(first) = rx.blocking_recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let mut buf = Vec::with_capacity(batch.iter().map(|(l, _)| l.len()).sum());
        for (line, _) in &batch {
            buf.extend_from_slice(line);
        }
        let result = file.write_all(&buf).and_then(|()| file.sync_data());
        for (_, done) in batch {
            let r = match &result {
                Ok(()) => Ok(()),
                Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
            };
            let _ = done.send(r);
        }
    }
}
