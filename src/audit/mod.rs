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
//!
//! **Segments.** The log rotates ([`Rotation`]): the active file is renamed to a closed segment
//! ([`segment`]) and a new active file starts with a `segment_start` record that names the
//! previous segment and links to its last record, so the chain runs across files. Retention
//! deletes the oldest closed segments after recording what it deleted (a chained `prune`
//! record: the `seq` range and the head hash), so [`verify`] still proves the rest is an
//! unbroken continuation. Every write, rotation and prune happens under an exclusive `flock` on
//! `<active>.lock`, and a writer re-reads the chain's end when another process appended or
//! rotated: `guardian audit rotate`, a second guardian process and an external rename (logrotate)
//! all keep one chain.

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

/// What a record says was asked.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Asked<'a> {
    /// An action of the API (`kind`: shell, read, write, fetch, mcp).
    Action(&'a Action),
    /// An agent's tool call refused before any review: a tool guardian does not model, or a
    /// call it could not read (`kind`: tool).
    Tool(ToolCall<'a>),
}

/// A hook's tool call as recorded when it never became an action.
#[derive(Debug, Clone, Serialize)]
pub struct ToolCall<'a> {
    /// Always `tool`.
    pub kind: &'static str,
    /// The tool's name as the agent gave it (empty when it could not be read).
    pub tool: &'a str,
    /// The tool's input as the agent gave it (redacted like everything written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<&'a serde_json::Value>,
}

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
    /// The full action (or, for a hook's tool call refused before any review, the call).
    pub action: Asked<'a>,
    /// The working directory the action was judged in.
    pub cwd: &'a str,
    /// The session's workspace roots, as given (what "outside the workspace" was judged
    /// against; kept so that `guardian traces import audit` replays the same question).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub workspace_roots: &'a [String],
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
    /// The action's risk signals (trusted facts computed by guardian).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub signals: &'a [crate::verdict::Signal],
    /// Why the outcome table denied what the reviewer allowed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_override: Option<&'a str>,
    /// P(deny) of a scored review.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// P(yes) of a scored review's authorization question (asked of actions with risk signals,
    /// or of every action when `reviewer.authorization_weight` > 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorization_score: Option<f64>,
    /// P(deny) of the decision token, when `score` weighs the authorization too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_score: Option<f64>,
    /// The mandate: how the request was compiled (or why not) and what it said of the action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mandate: Option<&'a MandateNote>,
}

/// The mandate's part in a review, as the audit record keeps it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MandateNote {
    /// The request's key (`crate::mandate::compile::request_key`); empty without a request.
    pub request_key: String,
    /// How it was compiled (`code`, `code+model`, `code; model: timed out …`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub compiled_by: String,
    /// The compile's time in ms, when this review compiled it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compile_ms: Option<u64>,
    /// Found compiled in the session store.
    #[serde(default)]
    pub cached: bool,
    /// Why no mandate (or no model part) was compiled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// How many grants it holds (the user's and the operator's).
    pub grants: usize,
    /// How many prohibitions.
    pub prohibitions: usize,
    /// What it said of this action, when it said something.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ruling: Option<crate::verdict::MandateRef>,
}

/// What the writer thread is asked to do.
enum Job {
    /// Append a serialized record.
    Record(Vec<u8>, oneshot::Sender<io::Result<()>>),
    /// Sync everything written so far.
    Flush(oneshot::Sender<io::Result<()>>),
    /// Rotate now (`guardian audit rotate`, SIGHUP): true if a segment was closed.
    Rotate(oneshot::Sender<io::Result<bool>>),
}
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

/// How the log rotates, prunes and mirrors (`[audit] rotate_bytes`, `rotate_interval`,
/// `keep_segments`, `keep_days`, `compress`, `mirror`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rotation {
    /// Rotate when the active file reaches this size (0: never on size).
    pub max_bytes: u64,
    /// Rotate when the active file's first record is this old.
    pub interval: Option<Duration>,
    /// Keep at most this many closed segments.
    pub keep_segments: Option<usize>,
    /// Delete closed segments last written more than this many days ago.
    pub keep_days: Option<u64>,
    /// Compress closed segments.
    pub compress: Compression,
    /// Also write every line to stdout (container log collection).
    pub mirror_stdout: bool,
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

    /// Opens the log with the given redactor and fsync policy, never rotating.
    pub fn open_durable(
        path: &Path,
        redactor: Redactor,
        durability: Durability,
    ) -> io::Result<AuditLog> {
        AuditLog::open_rotating(path, redactor, durability, Rotation::default())
    }

    /// Opens the log with every option: recovers what a crash left (a torn last line, a
    /// rotation or compression cut short), and starts the writer thread.
    pub fn open_rotating(
        path: &Path,
        redactor: Redactor,
        durability: Durability,
        rotation: Rotation,
    ) -> io::Result<AuditLog> {
        let active = Active::open(path, durability, rotation)?;
        let (tx, rx) = mpsc::channel::<Job>(QUEUE);
        std::thread::Builder::new()
            .name("guardian-audit".into())
            .spawn(move || writer(active, rx))?;
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
            .send(Job::Record(body, done_tx))
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
            .send(Job::Flush(done_tx))
            .await
            .map_err(|_| io::Error::other("audit writer has stopped"))?;
        done_rx
            .await
            .map_err(|_| io::Error::other("audit writer dropped the flush"))?
    }

    /// Closes the active file as a segment and starts a new one, after every record appended
    /// before this call; false when there was nothing to close (an empty active file).
    pub async fn rotate(&self) -> io::Result<bool> {
        let (done_tx, done_rx) = oneshot::channel();
        self.tx
            .send(Job::Rotate(done_tx))
            .await
            .map_err(|_| io::Error::other("audit writer has stopped"))?;
        done_rx
            .await
            .map_err(|_| io::Error::other("audit writer dropped the rotation"))?
    }
}

/// The lock file every writer of a log takes (`flock`) around each write, rotation and prune.
pub fn lock_path(active: &Path) -> PathBuf {
    let name = active
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    active.with_file_name(format!("{name}.lock"))
}

fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The active file and where the chain stands, as one writer sees them.
struct Active {
    path: PathBuf,
    lock: File,
    file: File,
    chain: Chain,
    /// The file's length after our last write (another writer's append changes it).
    len: u64,
    /// The first record of the active file: its `seq` and `prev`.
    first: Option<(u64, String)>,
    /// When the active file got its first record (for `rotate_interval`).
    started: Option<std::time::SystemTime>,
    durability: Durability,
    syncer: Option<Syncer>,
    rotation: Rotation,
    /// The active file holds only its `segment_start` header (nothing worth a segment yet).
    header_only: bool,
}

impl Active {
    fn open(path: &Path, durability: Durability, rotation: Rotation) -> io::Result<Active> {
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent)?;
        }
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(lock_path(path))?;
        let file = open_append(path)?;
        let mut a = Active {
            path: path.to_path_buf(),
            lock,
            file,
            chain: Chain {
                seq: 0,
                prev: GENESIS.to_string(),
            },
            len: 0,
            first: None,
            started: None,
            durability,
            syncer: None,
            rotation,
            header_only: false,
        };
        let _held = crate::flock::Exclusive::take(&a.lock)?;
        recover_rotation(path)?;
        segment::clean_partials(path)?;
        finish_compressions(path)?;
        a.adopt_current(None)?;
        Ok(a)
    }

    /// Takes the file now at `path` as the active file (after a crash, or after another process
    /// or tool rotated it): cuts a torn tail, and if it is empty while the chain has records
    /// (ours, or the newest segment's), starts it with a `segment_start` record.
    fn adopt_current(&mut self, previous: Option<(Chain, String, Option<u64>)>) -> io::Result<()> {
        let mut file = open_append(&self.path)?;
        cut_torn_tail(&mut file)?;
        self.file = file;
        self.len = self.file.metadata()?.len();
        if self.len > 0 {
            self.chain = last_link(&mut self.file)?;
            let first = first_record_of(&mut self.file)?;
            self.started = first.as_ref().and_then(|f| f.2);
            self.header_only = first.as_ref().is_some_and(|f| f.3 && f.0 == self.chain.seq);
            self.first = first.map(|f| (f.0, f.1));
        } else {
            let (chain, name, first_seq) = match previous {
                Some(p) => p,
                None => match segment::list(&self.path)?.last() {
                    Some(s) => (segment_end(s)?, s.name.clone(), Some(s.first_seq)),
                    None => (
                        Chain {
                            seq: 0,
                            prev: GENESIS.to_string(),
                        },
                        String::new(),
                        None,
                    ),
                },
            };
            self.chain = chain;
            self.first = None;
            self.started = None;
            if self.chain.seq > 0 {
                self.write_event(header_event(&self.chain, &name, first_seq))?;
                self.header_only = true;
            }
        }
        self.syncer = match self.durability {
            Durability::Always => None,
            Durability::Interval(every) => Some(Syncer::start(&self.file, every)?),
        };
        Ok(())
    }

    /// Appends one chained event record (a segment header, a prune) and syncs it.
    fn write_event(&mut self, body: serde_json::Value) -> io::Result<()> {
        let body = serde_json::to_vec(&body).map_err(io::Error::other)?;
        let mut buf = Vec::new();
        let mut chain = self.chain.clone();
        chain_line(&body, &mut chain, &mut buf)?;
        self.file.write_all(&buf)?;
        self.file.sync_data()?;
        if self.first.is_none() {
            self.first = Some((chain.seq, self.chain.prev.clone()));
            self.started = Some(std::time::SystemTime::now());
        }
        self.chain = chain;
        self.len += buf.len() as u64;
        if self.rotation.mirror_stdout {
            mirror(&buf);
        }
        Ok(())
    }

    /// Under the lock: makes sure we write where the chain really ends. Another writer may have
    /// appended (the length changed: re-read the chain's end) or rotated (the path is another
    /// file, or none: take the new one, or create it with a header linking to our old file).
    fn refresh(&mut self) -> io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        let ours = self.file.metadata()?;
        match std::fs::metadata(&self.path) {
            Ok(m) if m.dev() == ours.dev() && m.ino() == ours.ino() => {
                if m.len() != self.len {
                    self.chain = last_link(&mut self.file)?;
                    self.len = m.len();
                    self.header_only = false;
                    if self.first.is_none() {
                        let first = first_record_of(&mut self.file)?;
                        self.started = first.as_ref().and_then(|f| f.2);
                        self.first = first.map(|f| (f.0, f.1));
                    }
                }
                Ok(())
            }
            Ok(_) => self.adopt_rotated(ours.ino()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => self.adopt_rotated(ours.ino()),
            Err(e) => Err(e),
        }
    }

    fn adopt_rotated(&mut self, old_ino: u64) -> io::Result<()> {
        let _ = self.file.sync_data();
        let mut previous = (
            last_link(&mut self.file)?,
            name_by_inode(&segment::dir_of(&self.path), old_ino).unwrap_or_default(),
            self.first.as_ref().map(|f| f.0),
        );
        // Another writer may have written (and had renamed away) files after our old one: the
        // chain ends in whichever file holds the highest seq.
        if let Some(s) = segment::list(&self.path)?.last() {
            let end = segment_end(s)?;
            if end.seq > previous.0.seq {
                previous = (end, s.name.clone(), Some(s.first_seq));
            }
        }
        self.adopt_current(Some(previous))
    }

    /// Whether the active file is due for rotation.
    fn due(&self) -> bool {
        let r = &self.rotation;
        (r.max_bytes > 0 && self.len >= r.max_bytes)
            || r.interval.is_some_and(|every| {
                self.started
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age >= every)
            })
    }

    /// Under the lock: closes the active file as a segment, starts the next one with a header,
    /// applies retention, and compresses the closed segment in the background.
    fn rotate(&mut self) -> io::Result<bool> {
        if self.len == 0 || self.header_only {
            return Ok(false);
        }
        self.file.sync_data()?;
        let first_seq = match &self.first {
            Some((seq, _)) => *seq,
            None => first_record_of(&mut self.file)?.map_or(self.chain.seq, |f| f.0),
        };
        let name = segment::closed_name(&self.path, first_seq);
        let dir = segment::dir_of(&self.path);
        let target = dir.join(&name);
        if target.exists() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("cannot rotate: {} exists", target.display()),
            ));
        }
        // The next active file, complete with its header, is made under a temporary name; the
        // closed segment gets its name as a hard link, and an atomic rename puts the new file in
        // place: the active name never goes missing (a tailer or another writer always finds a
        // file there), and a crash at any step leaves a log that recovers (`Active::open`).
        let next_path = next_path(&self.path);
        let _ = std::fs::remove_file(&next_path);
        let mut next = OpenOptions::new()
            .create_new(true)
            .read(true)
            .append(true)
            .open(&next_path)?;
        let body = header_event(&self.chain, &name, Some(first_seq));
        let body = serde_json::to_vec(&body).map_err(io::Error::other)?;
        let mut line = Vec::new();
        let mut chain = self.chain.clone();
        chain_line(&body, &mut chain, &mut line)?;
        next.write_all(&line)?;
        next.sync_data()?;
        std::fs::hard_link(&self.path, &target)?;
        std::fs::rename(&next_path, &self.path)?;
        segment::sync_dir(&dir)?;
        self.first = Some((chain.seq, self.chain.prev.clone()));
        self.started = Some(std::time::SystemTime::now());
        self.chain = chain;
        self.file = next;
        self.len = line.len() as u64;
        self.header_only = true;
        self.syncer = match self.durability {
            Durability::Always => None,
            Durability::Interval(every) => Some(Syncer::start(&self.file, every)?),
        };
        if self.rotation.mirror_stdout {
            mirror(&line);
        }
        self.prune()?;
        let how = self.rotation.compress;
        if how != Compression::None {
            let _ = std::thread::Builder::new()
                .name("guardian-audit-compress".into())
                .spawn(move || {
                    if let Err(e) = segment::compress(&target, how) {
                        tracing::error!(segment = %target.display(), error = %e, "audit segment compression failed");
                    }
                });
        }
        Ok(true)
    }

    /// Under the lock: deletes the oldest closed segments past `keep_segments` / `keep_days`,
    /// after recording what it deletes (a chained `prune` record, synced first).
    fn prune(&mut self) -> io::Result<()> {
        let r = &self.rotation;
        if r.keep_segments.is_none() && r.keep_days.is_none() {
            return Ok(());
        }
        let segs = segment::list(&self.path)?;
        let mut n = 0;
        let mut reason = Vec::new();
        if let Some(k) = r.keep_segments
            && segs.len() > k
        {
            n = segs.len() - k;
            reason.push(format!("keep_segments = {k}"));
        }
        if let Some(days) = r.keep_days {
            let cutoff = std::time::SystemTime::now()
                .checked_sub(Duration::from_secs(days.saturating_mul(86_400)));
            let old = segs
                .iter()
                .take_while(|s| {
                    cutoff.is_some_and(|c| {
                        std::fs::metadata(&s.path)
                            .and_then(|m| m.modified())
                            .is_ok_and(|t| t < c)
                    })
                })
                .count();
            if old > n {
                n = old;
            }
            if old > 0 {
                reason.push(format!("keep_days = {days}"));
            }
        }
        if n == 0 {
            return Ok(());
        }
        let (next_seq, next_prev) = match segs.get(n) {
            Some(s) => (s.first_seq, s.first_prev.clone()),
            None => self
                .first
                .clone()
                .unwrap_or((self.chain.seq + 1, self.chain.prev.clone())),
        };
        let doomed = &segs[..n];
        self.write_event(serde_json::json!({
            "time": now_rfc3339(),
            "event": "prune",
            "pruned": {
                "segments": doomed.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
                "first_seq": doomed[0].first_seq,
                "last_seq": next_seq.saturating_sub(1),
                "head": next_prev,
                "reason": reason.join(", "),
            }
        }))?;
        for s in doomed {
            std::fs::remove_file(&s.path)?;
        }
        segment::sync_dir(&segment::dir_of(&self.path))?;
        Ok(())
    }
}

/// The `segment_start` record that begins every file after the first: it names the previous
/// segment and where the chain stood at its end (its `prev` links to that record, too).
fn header_event(
    chain: &Chain,
    previous: &str,
    previous_first_seq: Option<u64>,
) -> serde_json::Value {
    serde_json::json!({
        "time": now_rfc3339(),
        "event": "segment_start",
        "segment": {
            "first_seq": chain.seq + 1,
            "previous": previous,
            "previous_first_seq": previous_first_seq,
            "previous_last_seq": chain.seq,
            "previous_head": chain.prev,
        }
    })
}

/// Where a rotation builds the next active file before renaming it into place.
fn next_path(active: &Path) -> PathBuf {
    let name = active
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    active.with_file_name(format!("{name}.next"))
}

/// The chain position after a closed segment's last record.
fn segment_end(s: &segment::Segment) -> io::Result<Chain> {
    let genesis = || Chain {
        seq: 0,
        prev: GENESIS.to_string(),
    };
    if segment::Compression::of(&s.name) == Compression::None {
        let mut f = File::open(&s.path)?;
        last_link(&mut f)
    } else {
        Ok(last_line_link(&segment::read_all(&s.path)?).unwrap_or_else(genesis))
    }
}

/// Recovers what a crash in the middle of a rotation left: the next active file not yet in
/// place (removed: the rotation did not happen), or the closed segment's hard link made but the
/// new file not yet renamed over the active name (the link is removed: the active file stays).
fn recover_rotation(active: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let _ = std::fs::remove_file(next_path(active));
    let Ok(meta) = std::fs::metadata(active) else {
        return Ok(());
    };
    // `segment::list` leaves such a link out: look at every candidate name.
    let dir = segment::dir_of(active);
    for entry in std::fs::read_dir(&dir)?.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if segment::candidate(active, &name)
            && entry
                .metadata()
                .is_ok_and(|m| m.ino() == meta.ino() && m.dev() == meta.dev())
        {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
}

/// The name of the file with inode `ino` in `dir` (where a rename left our old active file).
fn name_by_inode(dir: &Path, ino: u64) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .find(|e| e.metadata().is_ok_and(|m| m.ino() == ino))
        .map(|e| e.file_name().to_string_lossy().into_owned())
}

/// Where a compression finished but had not removed the original yet: removes the original.
fn finish_compressions(active: &Path) -> io::Result<()> {
    let dir = segment::dir_of(active);
    for s in segment::list(active)? {
        for how in [Compression::Gzip, Compression::Zstd] {
            if dir.join(format!("{}{}", s.name, how.extension())).exists()
                && Compression::of(&s.name) == Compression::None
            {
                std::fs::remove_file(&s.path)?;
                break;
            }
        }
    }
    Ok(())
}

/// Writes `buf` to stdout; a closed or full stdout is ignored (the file is the record).
fn mirror(buf: &[u8]) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(buf);
    let _ = out.flush();
}

/// The `seq`, `prev` and time of a file's first record, and whether it is a segment header.
#[allow(clippy::type_complexity)]
fn first_record_of(
    file: &mut File,
) -> io::Result<Option<(u64, String, Option<std::time::SystemTime>, bool)>> {
    file.seek(SeekFrom::Start(0))?;
    let mut r = io::BufReader::new(&*file);
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line)?;
    let v: Option<serde_json::Value> = serde_json::from_slice(&line).ok();
    Ok(v.and_then(|v| {
        let time = v
            .get("time")
            .and_then(|t| t.as_str())
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(std::time::SystemTime::from);
        Some((
            v.get("seq")?.as_u64()?,
            v.get("prev")?.as_str()?.to_string(),
            time,
            v.get("event").and_then(|e| e.as_str()) == Some("segment_start"),
        ))
    }))
}

/// The chain position after the last whole line of `text`.
fn last_line_link(text: &[u8]) -> Option<Chain> {
    let body = text.strip_suffix(b"\n")?;
    let line = match body.iter().rposition(|&b| b == b'\n') {
        Some(i) => &body[i + 1..],
        None => body,
    };
    parse_link(line).map(|(seq, prev)| Chain { seq, prev })
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

/// The `seq` of the last record of the log whose active file is `path` (the newest closed
/// segment's when the active file is missing or empty): 0 for no log. Reads only the active
/// file's tail, so a caller can mark where a run starts (`guardian run` summarises only the
/// records after it).
pub fn last_seq(path: &Path) -> io::Result<u64> {
    let from_active = match File::open(path) {
        Ok(mut f) => last_link(&mut f)?.seq,
        Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
        Err(e) => return Err(e),
    };
    if from_active > 0 {
        return Ok(from_active);
    }
    match segment::list(path)?.last() {
        Some(s) => Ok(last_line_link(&segment::read_all(&s.path)?).map_or(0, |c| c.seq)),
        None => Ok(0),
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

fn writer(mut a: Active, mut rx: mpsc::Receiver<Job>) {
    while let Some(first) = rx.blocking_recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let held = match crate::flock::Exclusive::take(&a.lock) {
            Ok(h) => h,
            Err(e) => {
                fail(batch, &e);
                continue;
            }
        };
        if let Err(e) = a.refresh() {
            tracing::error!(error = %e, "audit log: cannot find where the chain ends");
            drop(held);
            fail(batch, &e);
            continue;
        }
        let mut buf = Vec::with_capacity(
            batch
                .iter()
                .map(|j| match j {
                    Job::Record(l, _) => l.len() + 160,
                    _ => 0,
                })
                .sum(),
        );
        let before = a.chain.clone();
        let mut chain = a.chain.clone();
        let mut results = Vec::with_capacity(batch.len());
        let mut flush = false;
        let mut rotate = false;
        for job in &batch {
            match job {
                Job::Record(body, _) => {
                    let len = buf.len();
                    match chain_line(body, &mut chain, &mut buf) {
                        Ok(()) => results.push(Ok(())),
                        Err(e) => {
                            buf.truncate(len);
                            results.push(Err(e));
                        }
                    }
                }
                Job::Flush(_) => {
                    flush = true;
                    results.push(Ok(()));
                }
                Job::Rotate(_) => {
                    rotate = true;
                    results.push(Ok(()));
                }
            }
        }
        let written = a.file.write_all(&buf).and_then(|()| match &a.syncer {
            Some(s) if !flush && !rotate => {
                s.dirty.store(true, Ordering::Release);
                Ok(())
            }
            _ => a.file.sync_data(),
        });
        match &written {
            Ok(()) => {
                if a.first.is_none() && !buf.is_empty() {
                    a.first = Some((before.seq + 1, before.prev.clone()));
                    a.started = Some(std::time::SystemTime::now());
                }
                a.chain = chain;
                a.len += buf.len() as u64;
                if !buf.is_empty() {
                    a.header_only = false;
                }
                if a.rotation.mirror_stdout && !buf.is_empty() {
                    mirror(&buf);
                }
            }
            Err(e) => {
                // Nothing of this batch is acknowledged; cut whatever part of it reached the file
                // so the next batch continues the chain from the last acknowledged record.
                let _ = cut_torn_tail(&mut a.file);
                a.chain = last_link(&mut a.file).unwrap_or(before);
                a.len = a.file.metadata().map(|m| m.len()).unwrap_or(a.len);
                tracing::error!(error = %e, "audit write failed");
            }
        }
        // Rotation comes after the batch's records are safe; its failure is reported to whoever
        // asked for it and logged, never to the records (they are written).
        let mut rotated: io::Result<bool> = Ok(false);
        if written.is_ok() && (rotate || a.due()) {
            rotated = a.rotate();
            if let Err(e) = &rotated {
                tracing::error!(error = %e, "audit log rotation failed");
            }
        }
        drop(held);
        answer(batch, results, &written, &rotated);
    }
    if a.syncer.is_some() {
        let _ = a.file.sync_data();
    }
}

/// Answers every job of a written batch: its own result, or the write's error; a rotation also
/// hears whether the rotation happened.
fn answer(
    batch: Vec<Job>,
    results: Vec<io::Result<()>>,
    written: &io::Result<()>,
    rotated: &io::Result<bool>,
) {
    for (job, r) in batch.into_iter().zip(results) {
        let r = match (written, r) {
            (Ok(()), r) => r,
            (Err(e), _) => Err(io::Error::new(e.kind(), e.to_string())),
        };
        match job {
            Job::Record(_, done) | Job::Flush(done) => {
                let _ = done.send(r);
            }
            Job::Rotate(done) => {
                let _ = done.send(match (r, rotated) {
                    (Err(e), _) => Err(e),
                    (Ok(()), Ok(b)) => Ok(*b),
                    (Ok(()), Err(e)) => Err(io::Error::new(e.kind(), e.to_string())),
                });
            }
        }
    }
}

/// Answers every job of a batch with `e` (nothing of it was written).
fn fail(batch: Vec<Job>, e: &io::Error) {
    for job in batch {
        let err = io::Error::new(e.kind(), e.to_string());
        match job {
            Job::Record(_, done) | Job::Flush(done) => {
                let _ = done.send(Err(err));
            }
            Job::Rotate(done) => {
                let _ = done.send(Err(err));
            }
        }
    }
}

pub mod segment;
mod verify;

pub use segment::Compression;
pub use verify::{VerifyError, VerifySummary, verify};
