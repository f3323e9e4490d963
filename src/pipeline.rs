//! The pipeline: request → normalize → policy → reviewer → verdict → audit.
//!
//! This module owns the order of the stages and the fail-closed guarantees that hold across them:
//! a deny rule ends the review; only an ask goes to the reviewer; any reviewer failure, panic or
//! audit failure is a deny by `fallback`; and no answer leaves before its audit record is on disk.
//! The HTTP server and the CLI both call [`Guardian::review`] and nothing else.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::audit::{Asked, AuditLog, AuditRecord, ToolCall};
use crate::config::{Config, Unreviewed};
use crate::normalize::{Context, NormalizedAction, absolute, normalize_guarded};
use crate::policy::{Evaluation, Policy, PolicyError};
use crate::request::{EscalationKind, ReviewRequest};
use crate::reviewer::prompt::{self, PROMPT_VERSION};
use crate::reviewer::{Reviewer, ReviewerError, Usage, UserAuthorization};
use crate::session::Sessions;
use crate::verdict::{
    DecidedBy, Decision, Effect, FallbackKind, ReviewResponse, RiskLevel, RuleRef,
};
use sha2::{Digest, Sha256};

/// The text appended to every denial the agent sees.
use crate::texts;

mod mandate;

/// Why a [`Guardian`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// One or more rules did not parse.
    #[error("invalid policy:\n{}", .0.iter().map(|e| format!("  {e}")).collect::<Vec<_>>().join("\n"))]
    Policy(Vec<PolicyError>),
    /// The audit log could not be opened.
    #[error("cannot open audit log {path}: {source}")]
    Audit {
        /// The path configured.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The reviewer could not be set up.
    #[error("cannot set up the reviewer: {0}")]
    Reviewer(crate::transport::ClientError),
    /// The session store could not be set up (`[session]`).
    #[error("cannot set up the session store: {0}")]
    Session(crate::session::StoreError),
    /// The config could not be completed (a tenant policy file, …).
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
}

/// The review service: policy, reviewer and audit log, shared by every request.
pub struct Guardian {
    config: Config,
    policy: Policy,
    reviewer: Arc<dyn Reviewer>,
    audit: AuditLog,
    server_cwd: PathBuf,
    home: Option<PathBuf>,
    review_timeout: Duration,
    parse_permits: Arc<tokio::sync::Semaphore>,
    sessions: Sessions,
    /// Hash of the policy and prompt version: remembered approvals do not outlive a change.
    fingerprint: String,
    prompts: prompt::PromptSet,
    /// The probe that scores the decision (`reviewer.scoring = "probe"`).
    probe: Option<Arc<crate::reviewer::probe::Probe>>,
    client_limiter: Option<governor::DefaultKeyedRateLimiter<String>>,
    reviewer_limiter: Option<governor::DefaultDirectRateLimiter>,
    reviewer_permits: Arc<tokio::sync::Semaphore>,
    metrics: Arc<crate::metrics::Metrics>,
    /// Set at the end of a shutdown's grace period: reviews still running are denied.
    abort: tokio::sync::watch::Sender<bool>,
}

/// Deadline for parsing one shell command line (brush-parser has pathological inputs).
const PARSE_DEADLINE: Duration = Duration::from_secs(2);
/// Shell parses running at once, at most.
const PARSE_CONCURRENCY: usize = 4;

/// What a stage decided, before it is recorded.
#[derive(Debug, Clone)]
struct Judgment {
    decision: Decision,
    decided_by: DecidedBy,
    rule: Option<RuleRef>,
    risk_level: Option<RiskLevel>,
    user_authorization: Option<UserAuthorization>,
    rationale: String,
    message: String,
    error: Option<FallbackKind>,
    usage: Usage,
    reviewer_asked: bool,
    cwd: String,
    attempts: u32,
    stages: Vec<&'static str>,
    /// A deny that is no judgment: the action needed a reviewer and none could answer.
    unreviewed: bool,
    /// The action's risk signals.
    signals: Vec<crate::signals::Signal>,
    /// Why the outcome table denied what the reviewer allowed, when it did.
    table_override: Option<String>,
    /// A scored review's P(deny) and what a threshold sweep needs of it.
    sweep: Option<ScorePoint>,
    /// What the mandate said of the action, when it settled or helped settle it.
    mandate: Option<crate::verdict::MandateRef>,
    /// The mandate stage's record for the audit log.
    note: Option<crate::audit::MandateNote>,
}

/// A scored review as evaluations sweep it: at threshold `t` the decision is deny when
/// `score >= t` or `table_denies`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScorePoint {
    /// P(deny).
    pub score: f64,
    /// Whether the outcome table denies the action even when the score allows it.
    pub table_denies: bool,
    /// P(yes) of the authorization question, asked of actions with risk signals (of every
    /// action when `authorization_weight` > 0).
    pub authorization: Option<f64>,
    /// P(deny) of the decision token, when `score` also weighs the authorization.
    pub decision_score: Option<f64>,
}

/// One review's answer with what evaluations also need.
#[derive(Debug, Clone)]
pub struct Reviewed {
    /// What the client gets.
    pub response: ReviewResponse,
    /// The reviewer's token usage.
    pub usage: Usage,
    /// Why the decision is a fallback deny, when it is one.
    pub fallback: Option<FallbackKind>,
    /// A scored review's score, for threshold sweeps.
    pub sweep: Option<ScorePoint>,
    /// How long this review spent compiling the request into a mandate, when it did.
    pub mandate_compile_ms: Option<u64>,
}

/// A hook's tool call refused before any review, as [`Guardian::record_refusal`] records it.
#[derive(Debug, Clone)]
pub struct Refusal<'a> {
    /// The tool's name as the agent gave it (empty when it could not be read).
    pub tool: &'a str,
    /// The tool's input as the agent gave it.
    pub input: Option<&'a serde_json::Value>,
    /// The agent's session id, when it gave one.
    pub session_id: Option<&'a str>,
    /// The agent (integration) that asked.
    pub agent: &'a str,
    /// The client that asked (authenticated name, or the agent).
    pub client: &'a str,
    /// The call's working directory, when given.
    pub cwd: &'a str,
    /// `unknown_tool`, `invalid_input` or `repeated_call`: the record's `error`.
    pub error: &'static str,
    /// Why: the record's rationale.
    pub reason: &'a str,
    /// What the agent is told.
    pub message: &'a str,
    /// True when the agent's own permission prompt decides (`[hooks] unreviewed = "ask"`).
    pub deferred_to_user: bool,
}

impl<'a> Refusal<'a> {
    /// The refusal an integration reported (`POST /v1/refusals`, or an in-process integration),
    /// for `client`.
    pub fn of(report: &'a crate::request::RefusalReport, client: &'a str) -> Refusal<'a> {
        Refusal {
            tool: &report.tool,
            input: report.input.as_ref(),
            session_id: report.session_id.as_deref(),
            agent: &report.agent,
            client,
            cwd: report.cwd.as_deref().unwrap_or(""),
            error: report.error.as_str(),
            reason: &report.reason,
            message: &report.message,
            deferred_to_user: report.deferred_to_user,
        }
    }
}

/// The identities of one review.
struct ReviewIds {
    /// `rev_…`, returned to the client.
    id: String,
    /// The session (given, or a fresh `ses_…`).
    session_id: String,
    /// Whether the request named its session (only then memory and the breaker apply).
    session_given: bool,
    /// What makes two requests "the same action": for memory and the breaker.
    key: String,
}

impl ReviewIds {
    fn of(req: &ReviewRequest) -> ReviewIds {
        let session_given = req.session.as_ref().is_some_and(|s| s.id.is_some());
        ReviewIds {
            id: format!("rev_{}", ulid::Ulid::new()),
            session_id: req
                .session
                .as_ref()
                .and_then(|s| s.id.clone())
                .unwrap_or_else(|| format!("ses_{}", ulid::Ulid::new())),
            session_given,
            key: action_key(req),
        }
    }
}

/// What the session made of a decision.
struct Settled {
    /// Why the breaker told the agent to stop, when it tripped.
    interrupt: Option<String>,
    /// The question was handed to the user's prompt (`[hooks] unreviewed = "ask"`).
    deferred: bool,
}

impl Judgment {
    /// A deny by `decided_by` with nothing else said yet.
    fn deny(decided_by: DecidedBy, rationale: String, message: String, cwd: String) -> Judgment {
        Judgment {
            decision: Decision::Deny,
            decided_by,
            rule: None,
            risk_level: None,
            user_authorization: None,
            rationale,
            message,
            error: None,
            usage: Usage::default(),
            reviewer_asked: false,
            signals: Vec::new(),
            table_override: None,
            sweep: None,
            mandate: None,
            note: None,
            cwd,
            attempts: 0,
            stages: Vec::new(),
            unreviewed: false,
        }
    }

    /// A judgment decided by the policy's evaluation (a deny until the caller says otherwise).
    fn of_rule(eval: &Evaluation, cwd: String) -> Judgment {
        Judgment {
            rule: eval.rule.clone(),
            ..Judgment::deny(DecidedBy::Rule, eval.reason.clone(), String::new(), cwd)
        }
    }

    fn fallback(rationale: String, message: String, error: FallbackKind, cwd: String) -> Judgment {
        Judgment {
            error: Some(error),
            ..Judgment::deny(DecidedBy::Fallback, rationale, message, cwd)
        }
    }

    /// A fallback deny because no reviewer could answer (see [`ReviewResponse::unreviewed`]).
    fn unreviewed(
        rationale: String,
        message: String,
        error: FallbackKind,
        cwd: String,
    ) -> Judgment {
        Judgment {
            unreviewed: true,
            ..Judgment::fallback(rationale, message, error, cwd)
        }
    }
}

impl Guardian {
    /// Builds the service from a loaded config, with the backend it names.
    pub fn from_config(config: Config) -> Result<Guardian, SetupError> {
        let reviewer =
            crate::reviewer::from_config(&config.reviewer).map_err(SetupError::Reviewer)?;
        Guardian::with_reviewer(config, reviewer)
    }

    /// Builds the service with a given reviewer backend.
    pub fn with_reviewer(
        config: Config,
        reviewer: Arc<dyn Reviewer>,
    ) -> Result<Guardian, SetupError> {
        let mut own_files = vec![absolute(&config.audit.path)];
        // The config and every config it extends are guardian's own files.
        let mut layer = Some(&config);
        while let Some(c) = layer {
            if c.source_name != crate::config::DEFAULT_POLICY_NAME {
                own_files.push(absolute(Path::new(&c.source_name)));
            }
            layer = c.base();
        }
        if let Some(dir) = config
            .audit
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            // The state directory of a run without --config may not exist yet.
            let _ = std::fs::create_dir_all(dir);
        }
        let policy = Policy::from_config(&config, own_files)
            .and_then(|p| {
                p.protecting_own_globs(&crate::audit::segment::own_globs(&absolute(
                    &config.audit.path,
                )))
            })
            .map_err(SetupError::Policy)?;
        let redactor = config.audit.redactor().map_err(|e| SetupError::Audit {
            path: config.audit.path.display().to_string(),
            source: std::io::Error::other(e),
        })?;
        let audit = AuditLog::open_rotating(
            &config.audit.path,
            redactor,
            config.audit.durability(),
            config.audit.rotation(),
        )
        .map_err(|source| SetupError::Audit {
            path: config.audit.path.display().to_string(),
            source,
        })?;
        let sessions = Sessions::from_config(
            &config.session,
            config.breaker.clone(),
            Duration::from_secs(config.reviewer.memory_ttl_s),
        )
        .map_err(SetupError::Session)?;
        let prompts = prompt::PromptSet::new(
            config.tenant_policy()?.as_deref(),
            config.reviewer.budget.clone(),
        )
        .with_evidence(config.reviewer.evidence);
        let probe = (config.reviewer.scoring == crate::config::Scoring::Probe
            && config.reviewer.backend != crate::config::BackendKind::None)
            .then(|| config.probe().map(Arc::new))
            .transpose()?;
        // The same on every replica with the same policy, prompt and probe (remembered approvals
        // are shared through the session store).
        let fingerprint = {
            let d = Sha256::digest(
                format!(
                    "{}\u{0}{PROMPT_VERSION}\u{0}{}\u{0}{}",
                    policy.fingerprint_text(),
                    prompts.sha(),
                    probe.as_ref().map_or("", |p| p.version.as_str())
                )
                .as_bytes(),
            );
            hex::encode(&d[..12])
        };
        let per_minute = |n: u32| std::num::NonZeroU32::new(n).map(governor::Quota::per_minute);
        let client_limiter = per_minute(config.limits.requests_per_minute_per_client)
            .map(governor::RateLimiter::keyed);
        let reviewer_limiter =
            per_minute(config.limits.reviewer_calls_per_minute).map(governor::RateLimiter::direct);
        let reviewer_permits = Arc::new(tokio::sync::Semaphore::new(
            config.limits.reviewer_concurrency,
        ));
        Ok(Guardian {
            prompts,
            probe,
            client_limiter,
            reviewer_limiter,
            reviewer_permits,
            review_timeout: Duration::from_millis(config.reviewer.timeout_ms),
            config,
            policy,
            reviewer,
            audit,
            server_cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            home: std::env::var_os("HOME").map(PathBuf::from),
            parse_permits: Arc::new(tokio::sync::Semaphore::new(PARSE_CONCURRENCY)),
            sessions,
            fingerprint,
            metrics: Arc::new(crate::metrics::Metrics::new()),
            abort: tokio::sync::watch::channel(false).0,
        })
    }

    /// The metrics this service updates (`GET /metrics`).
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    /// Sends one throw-away review of a trivial action when `reviewer.warm_up` is on, so that the
    /// backend caches the static prompt prefix (system prompt and the evidence's fixed head)
    /// before the first real review. Its result is ignored; nothing is audited. Returns whether
    /// the backend answered.
    pub async fn warm_up(&self) -> bool {
        let r = &self.config.reviewer;
        if !r.warm_up || self.reviewer.backend() == "none" {
            return false;
        }
        let Ok(req) = ReviewRequest::from_json(br#"{"action":{"kind":"shell","command":"true"}}"#)
        else {
            return false;
        };
        let ctx = Context::of(&req, &self.server_cwd, self.home.as_deref());
        let why = "warm-up";
        let started = Instant::now();
        let answered = async {
            match r.scoring {
                crate::config::Scoring::Logprobs => {
                    let p = self.prompts.render_decision(&req, &ctx, why, &[]);
                    self.reviewer
                        .score(&p, crate::reviewer::Question::DECISION)
                        .await
                        .is_ok()
                }
                crate::config::Scoring::Probe => {
                    // The embedding, and the authorization prompt's cached system prompt.
                    let asked = self.prompts.authorization(&req);
                    let format = self.probe.as_ref().map_or("", |p| p.text_format.as_str());
                    let text = crate::reviewer::probe::text_of(format, &req, &[]);
                    self.reviewer.embed(&text).await.is_ok()
                        && self
                            .reviewer
                            .score(&asked, crate::reviewer::Question::AUTHORIZED)
                            .await
                            .is_ok()
                }
                crate::config::Scoring::Label => {
                    let p = self.prompts.render(&req, &ctx, why, &[]);
                    self.reviewer.review(&p).await.is_ok()
                }
            }
        };
        let ok = tokio::time::timeout(self.review_timeout, answered)
            .await
            .unwrap_or(false);
        tracing::info!(
            ok,
            took_ms = started.elapsed().as_millis() as u64,
            "reviewer warm-up"
        );
        ok
    }

    /// Denies every review still running, and every one that starts from now on (the end of a
    /// shutdown's grace period). Each is recorded as a fallback with error `shutting_down`.
    pub fn abort_in_flight(&self) {
        self.abort.send_replace(true);
    }

    /// Waits until every audit record appended so far is on disk.
    pub async fn flush_audit(&self) -> std::io::Result<()> {
        self.audit.flush().await
    }

    /// Closes the audit log's active file as a segment now (SIGHUP, `guardian audit rotate`).
    pub async fn rotate_audit(&self) -> std::io::Result<bool> {
        self.audit.rotate().await
    }

    /// Sets the home directory `~` means (default: `$HOME` of the service).
    pub fn with_home(mut self, home: Option<PathBuf>) -> Guardian {
        self.home = home;
        self
    }

    /// The fingerprint of the policy and rendered prompt that remembered approvals are keyed on.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The compiled policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The loaded config.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The reviewer backend.
    pub fn reviewer(&self) -> &dyn Reviewer {
        self.reviewer.as_ref()
    }

    fn count(&self, outcome: &Judgment, tripped: bool, took: Duration) {
        let m = &self.metrics;
        m.decisions
            .get_or_create(&crate::metrics::DecisionLabels {
                decided_by: outcome.decided_by.as_str().to_string(),
                decision: outcome.decision.as_str().to_string(),
            })
            .inc();
        m.review_duration.observe(took.as_secs_f64());
        if outcome.reviewer_asked {
            m.reviewer_latency.observe(took.as_secs_f64());
            for (kind, n) in [
                ("prompt", outcome.usage.prompt_tokens),
                ("completion", outcome.usage.completion_tokens),
            ] {
                m.tokens
                    .get_or_create(&crate::metrics::KindLabels { kind: kind.into() })
                    .inc_by(n);
            }
        }
        if let Some(kind) = outcome.error {
            m.error(kind.as_str());
            if kind == FallbackKind::RateLimited {
                m.rate_limited.inc();
            }
        }
        if tripped {
            m.breaker_trips.inc();
        }
    }

    /// Reviews one request end to end and records the decision before returning it.
    /// `client` names who asked (for the audit record). A request whose escalation names extra
    /// paths is reviewed as itself plus a read or write of each path ([`Guardian::review_all`]).
    pub async fn review(self: &Arc<Self>, req: ReviewRequest, client: &str) -> ReviewResponse {
        self.review_as(req, client, Unreviewed::Deny).await
    }

    /// [`Guardian::review`] for an integration whose unreviewed actions are handed to the agent's
    /// own prompt (`mode` [`Unreviewed::Ask`]): the answer is the same, the audit record says the
    /// question was deferred to the user.
    pub async fn review_as(
        self: &Arc<Self>,
        req: ReviewRequest,
        client: &str,
        mode: Unreviewed,
    ) -> ReviewResponse {
        let expands = req
            .escalation
            .as_ref()
            .is_some_and(|e| !e.read.is_empty() || !e.write.is_empty());
        if expands {
            // review_all expands it into itself and one read or write per path.
            return self.review_all(vec![req], client, mode).await;
        }
        self.review_one(req, client, mode).await.response
    }

    /// Reviews requests that must ALL be allowed (the files of a patch, an escalation's paths, a
    /// command and the host it asks for) concurrently, each audited on its own. The first hard
    /// denial answers at once and the reviews still running are dropped; an unreviewed denial
    /// (no reviewer could answer) answers only when no other request is denied by a rule or the
    /// reviewer, so a question to the user never hides a real deny. An empty list is a deny.
    pub async fn review_all(
        self: &Arc<Self>,
        reqs: Vec<ReviewRequest>,
        client: &str,
        mode: Unreviewed,
    ) -> ReviewResponse {
        use futures::StreamExt as _;
        // Each review is its own task: the first deny answers at once, and the others still run
        // to the end, so every file of a patch (every path of an escalation) is audited.
        let mut pending: futures::stream::FuturesUnordered<_> = reqs
            .into_iter()
            .flat_map(ReviewRequest::expand)
            .map(|req| {
                let g = Arc::clone(self);
                let client = client.to_string();
                tokio::spawn(async move { g.review_one(req, &client, mode).await.response })
            })
            .collect();
        let mut all = crate::decision::AllAllowed::default();
        while let Some(joined) = pending.next().await {
            let resp = match joined {
                Ok(resp) => resp,
                Err(e) => ReviewResponse {
                    id: format!("rev_{}", ulid::Ulid::new()),
                    decision: Decision::Deny,
                    decided_by: DecidedBy::Fallback,
                    rule: None,
                    risk_level: None,
                    rationale: format!("internal error: a review task failed ({e})"),
                    message: texts::internal_error(),
                    interrupt: false,
                    unreviewed: true,
                    signals: Vec::new(),
                    score: None,
                    mandate: None,
                },
            };
            if let Some(deny) = all.push(resp) {
                return deny;
            }
        }
        match all.finish() {
            Some(resp) => resp,
            None => ReviewResponse {
                id: format!("rev_{}", ulid::Ulid::new()),
                decision: Decision::Deny,
                decided_by: DecidedBy::Fallback,
                rule: None,
                risk_level: None,
                rationale: "nothing to review".into(),
                message: texts::nothing_to_review(),
                mandate: None,
                interrupt: false,
                unreviewed: false,
                signals: Vec::new(),
                score: None,
            },
        }
    }

    /// [`Guardian::review`] of a single request (no expansion), with the reviewer's token usage
    /// and the kind of a fallback decision (for evaluations).
    pub async fn review_with_usage(self: &Arc<Self>, req: ReviewRequest, client: &str) -> Reviewed {
        self.review_one(req, client, Unreviewed::Deny).await
    }

    /// One review, as named steps: the ids, the decision (quota, then the stages under a panic
    /// guard and the shutdown abort), the session (memory, breaker) and metrics, the audit
    /// record, and the response (a deny when the record could not be written).
    async fn review_one(
        self: &Arc<Self>,
        req: ReviewRequest,
        client: &str,
        mode: Unreviewed,
    ) -> Reviewed {
        let started = Instant::now();
        // A credential header's value is dropped as the request arrives: no signal, prompt or
        // audit record after this holds it.
        let mut req = req;
        req.action.redact_credential_headers();
        // A whole-file write is judged by what it changes: its diff against the file on disk.
        if self.config().server.read_workspace_files
            && crate::normalize::disk_diff::wanted(&req.action)
        {
            let ctx = Context::of(&req, &self.server_cwd, self.home.as_deref());
            crate::normalize::disk_diff::fill(&mut req.action, &ctx);
        }
        let ids = ReviewIds::of(&req);
        let mut outcome = self.guarded_decide(&req, &ids, client).await;
        let settled = self
            .settle(&mut outcome, &ids, mode, started.elapsed())
            .await;
        let audited = self
            .record(&req, client, &ids, &outcome, &settled, started)
            .await;
        self.respond(&req, client, ids, outcome, &settled, audited)
    }

    /// Whether one more request under the quota `key` of `per_minute` is within it: counted in
    /// the shared store for the whole fleet (`[limits] scope = "fleet"` with Redis sessions),
    /// else by this process's limiter `local`. When Redis does not answer, `local` counts: each
    /// replica then holds to the quota on its own until Redis is back.
    async fn within_quota(&self, key: &str, per_minute: u32, local: impl FnOnce() -> bool) -> bool {
        let fleet = self.config.limits.scope == crate::config::LimitScope::Fleet;
        if let (true, Some(n)) = (fleet, std::num::NonZeroU32::new(per_minute)) {
            match self.sessions.take_quota(key, n).await {
                Some(Ok(within)) => return within,
                Some(Err(e)) => self.store_failed(&e),
                None => {}
            }
        }
        local()
    }

    /// The decision: a client over its quota is denied at once; otherwise the stages run
    /// ([`Guardian::decide`]), a panic in them becomes a deny, and so does the end of the
    /// shutdown grace period.
    async fn guarded_decide(
        self: &Arc<Self>,
        req: &ReviewRequest,
        ids: &ReviewIds,
        client: &str,
    ) -> Judgment {
        let over_quota = match &self.client_limiter {
            Some(l) => {
                let local = || l.check_key(&client.to_string()).is_ok();
                let per_minute = self.config.limits.requests_per_minute_per_client;
                !self
                    .within_quota(&format!("client:{client}"), per_minute, local)
                    .await
            }
            None => false,
        };
        if over_quota {
            return Judgment::fallback(
                format!("client {client} is over its quota of review requests"),
                texts::client_over_quota(self.config.limits.requests_per_minute_per_client),
                FallbackKind::RateLimited,
                String::new(),
            );
        }
        // Every log line of this review (retries, stage failures) carries its review id.
        let span = tracing::info_span!("review", review_id = %ids.id);
        let task = tracing::Instrument::instrument(
            self.decide(req, &ids.session_id, &ids.id, &ids.key),
            span,
        );
        // A panic anywhere in the stages is caught here and becomes a deny (in this task:
        // cheaper than spawning one per request).
        use futures::FutureExt;
        let mut abort = self.abort.subscribe();
        let task = std::panic::AssertUnwindSafe(task).catch_unwind();
        let decided = tokio::select! {
            r = task => r.map_err(|p| {
                p.downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into())
            }),
            _ = abort.wait_for(|v| *v) => {
                Ok(Judgment::fallback(
                    "guardian was shutting down and its grace period ended before this review finished".into(),
                    texts::shutting_down(),
                    FallbackKind::ShuttingDown,
                    String::new(),
                ))
            }
        };
        decided.unwrap_or_else(|e| {
            tracing::error!(review_id = %ids.id, error = %e, "review task failed");
            Judgment::fallback(
                "guardian failed while reviewing this action".into(),
                texts::internal_error(),
                FallbackKind::InternalError,
                String::new(),
            )
        })
    }

    /// The session and the metrics: the breaker counts a denial (not a question handed to the
    /// user, not a request without a session id) and, when it trips, tells the agent to stop.
    async fn settle(
        &self,
        outcome: &mut Judgment,
        ids: &ReviewIds,
        mode: Unreviewed,
        took: Duration,
    ) -> Settled {
        let deferred = outcome.unreviewed && mode == Unreviewed::Ask;
        let interrupt = if ids.session_given && !deferred {
            match self
                .sessions
                .record(&ids.session_id, &ids.key, outcome.decision)
                .await
            {
                Ok(counts) => crate::decision::breaker::verdict(
                    &counts,
                    &self.config.breaker,
                    outcome.decision,
                ),
                Err(e) => {
                    self.store_failed(&e);
                    crate::decision::breaker::verdict_uncounted(outcome.decision, &e.to_string())
                }
            }
        } else {
            None
        };
        self.count(outcome, interrupt.is_some(), took);
        if let Some(why) = &interrupt {
            outcome.message.push_str(&texts::stop(why));
        }
        Settled {
            interrupt,
            deferred,
        }
    }

    /// Writes the audit record (before any answer goes out); returns its token usage and
    /// latency with the result of the write.
    async fn record(
        &self,
        req: &ReviewRequest,
        client: &str,
        ids: &ReviewIds,
        outcome: &Judgment,
        settled: &Settled,
        started: Instant,
    ) -> (Usage, u64, std::io::Result<()>) {
        let record = AuditRecord {
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            review_id: &ids.id,
            session_id: &ids.session_id,
            agent: req.session.as_ref().and_then(|s| s.agent.as_deref()),
            client,
            action: Asked::Action(&req.action),
            cwd: &outcome.cwd,
            workspace_roots: req
                .session
                .as_ref()
                .map_or(&[][..], |s| s.workspace_roots.as_slice()),
            intent: req.intent.as_deref(),
            strict: req.strict,
            retry: req.retry.as_ref(),
            escalation: req.escalation.as_ref(),
            decision: outcome.decision,
            decided_by: outcome.decided_by,
            rule: outcome.rule.as_ref(),
            risk_level: outcome.risk_level,
            user_authorization: outcome.user_authorization,
            rationale: &outcome.rationale,
            message: &outcome.message,
            reviewer_backend: outcome.reviewer_asked.then(|| self.reviewer.backend()),
            reviewer_model: if outcome.reviewer_asked {
                self.reviewer.model()
            } else {
                None
            },
            prompt_version: PROMPT_VERSION,
            prompt_sha256: self.prompts.sha(),
            stages: &outcome.stages,
            error: outcome.error.map(FallbackKind::as_str),
            latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            tokens: outcome.usage,
            attempts: outcome.attempts,
            interrupt: settled.interrupt.as_deref(),
            deferred_to_user: settled.deferred,
            signals: &outcome.signals,
            table_override: outcome.table_override.as_deref(),
            score: outcome.sweep.map(|p| p.score),
            authorization_score: outcome.sweep.and_then(|p| p.authorization),
            decision_score: outcome.sweep.and_then(|p| p.decision_score),
            mandate: outcome.note.as_ref(),
        };
        let written = self.audit.append(&record).await;
        (record.tokens, record.latency_ms, written)
    }

    /// The response: the outcome, or a deny when its record could not be written (guardian
    /// never lets an unrecorded action run); logged, with what evaluations need.
    fn respond(
        &self,
        req: &ReviewRequest,
        client: &str,
        ids: ReviewIds,
        outcome: Judgment,
        settled: &Settled,
        audited: (Usage, u64, std::io::Result<()>),
    ) -> Reviewed {
        let (tokens, latency_ms, written) = audited;
        let error = outcome.error;
        let sweep = outcome.sweep;
        let mandate_compile_ms = outcome.note.as_ref().and_then(|n| n.compile_ms);
        let mut response = ReviewResponse {
            id: ids.id,
            decision: outcome.decision,
            decided_by: outcome.decided_by,
            rule: outcome.rule,
            risk_level: outcome.risk_level,
            rationale: outcome.rationale,
            message: outcome.message,
            interrupt: settled.interrupt.is_some(),
            unreviewed: outcome.unreviewed,
            signals: outcome.signals,
            score: sweep.map(|p| p.score),
            mandate: outcome.mandate,
        };
        if let Err(e) = written {
            tracing::error!(review_id = %response.id, error = %e, "audit write failed; denying");
            response.decision = Decision::Deny;
            response.decided_by = DecidedBy::Fallback;
            response.rule = None;
            response.unreviewed = false;
            response.rationale =
                format!("the decision could not be recorded in the audit log: {e}");
            response.message = texts::unrecorded();
        }
        tracing::info!(
            review_id = %response.id,
            session_id = %ids.session_id,
            client = %client,
            decision = response.decision.as_str(),
            decided_by = response.decided_by.as_str(),
            kind = req.action.kind(),
            error = error.map_or("", FallbackKind::as_str),
            latency_ms,
            "decided"
        );
        let fallback = if response.decided_by == DecidedBy::Fallback {
            error.or(Some(FallbackKind::Audit))
        } else {
            None
        };
        Reviewed {
            sweep: sweep.filter(|_| response.decided_by == DecidedBy::Reviewer),
            response,
            usage: tokens,
            fallback,
            mandate_compile_ms,
        }
    }

    async fn decide(
        self: &Arc<Self>,
        req: &ReviewRequest,
        session: &str,
        review_id: &str,
        action_key: &str,
    ) -> Judgment {
        let ctx = Context::of(req, &self.server_cwd, self.home.as_deref());
        let cwd = ctx.cwd.display().to_string();
        let action =
            normalize_guarded(&req.action, &ctx, &self.parse_permits, PARSE_DEADLINE).await;
        // What the action does, as trusted facts: for the reviewer's prompt and the outcome
        // table, reported with every decision (a rule still decides first).
        let signals = crate::signals::detect(req, &action, &ctx, &self.config.signals);
        // What it does in the mandate's terms; the mandate is fetched (compiled once per
        // request) only when the action does something it could name.
        let (dones, understood) = self.acts_of(req, &action, &ctx, !signals.is_empty());
        let subject = match &req.action {
            crate::request::Action::Write { path, .. }
            | crate::request::Action::Read { path, .. } => {
                vec![path.clone()]
            }
            _ => Vec::new(),
        };
        // A plain write needs the mandate only when the request may keep a file as it is
        // (`leave VERSION alone`): a word test, so a plain edit stays fast.
        let keeps_files = matches!(req.action, crate::request::Action::Write { .. })
            && req
                .intent
                .as_deref()
                .is_some_and(crate::mandate::words::may_keep_files);
        let mut stage = mandate::MandateStage {
            dones,
            understood,
            subject,
            ..mandate::MandateStage::default()
        };
        let mut eval = self.evaluate(action, &ctx).await;
        if eval.effect != Effect::Deny
            && (!stage.dones.is_empty() || !signals.is_empty() || keeps_files)
        {
            let (m, note) = self.mandate_for(req, session).await;
            stage.mandate = m;
            stage.note = note;
        } else if let Some(intent) = req.intent.as_deref().filter(|i| !i.trim().is_empty()) {
            // Remembered approvals are keyed on the request even when no mandate was needed.
            stage.note.request_key = crate::mandate::compile::request_key(intent);
        }
        let mut judged = self
            .judge(
                req, session, review_id, action_key, &ctx, cwd, &mut eval, &signals, &mut stage,
            )
            .await;
        judged.signals = signals;
        if !stage.note.request_key.is_empty() || stage.note.ruling.is_some() {
            judged.note = Some(stage.note);
        }
        judged
    }

    /// [`Guardian::decide`] after normalisation: rules, memory, the reviewer.
    #[allow(clippy::too_many_arguments)]
    async fn judge(
        self: &Arc<Self>,
        req: &ReviewRequest,
        session: &str,
        review_id: &str,
        action_key: &str,
        ctx: &Context,
        cwd: String,
        eval: &mut Evaluation,
        all_signals: &[crate::signals::Signal],
        stage: &mut mandate::MandateStage,
    ) -> Judgment {
        let base = Judgment::of_rule(eval, cwd.clone());
        let sandbox_retry = req.retry.as_ref().is_some_and(|r| r.sandbox_denied);
        let escalated = req.escalates();
        // The mandate: a prohibition denies, grants covering everything allow; signals the
        // grants authorise are no longer the reviewer's to weigh.
        let (mandated, signals) =
            if eval.effect == Effect::Deny || (req.retry.is_some() && !sandbox_retry) {
                (None, all_signals.to_vec())
            } else {
                self.mandate_judgment(req, stage, all_signals, &base)
            };
        let signals = signals.as_slice();
        // A rule allow with a high signal, or a safeguard switched off, is reviewed.
        let signals_escalate = crate::decision::escalate::rule_allow(
            signals,
            matches!(req.action, crate::request::Action::Write { .. }),
        );
        let plain_rule_allow =
            eval.effect == Effect::Allow && !req.strict && !escalated && signals_escalate.is_none();
        if let Some(j) = mandated
            && (j.decision == Decision::Deny || !plain_rule_allow)
        {
            return j;
        }
        match eval.effect {
            // Deny rules are checked first, for retries and strict mode too.
            Effect::Deny => {
                let pattern = eval.rule.as_ref().map_or("", |r| r.pattern.as_str());
                return Judgment {
                    message: texts::rule_deny(pattern),
                    ..base
                };
            }
            _ if req.retry.is_some() && !sandbox_retry => {
                return Judgment::fallback(
                    "a retry that was not refused by the sandbox asks for nothing new".into(),
                    texts::retry_not_sandbox_denied(),
                    FallbackKind::RetryNotSandboxDenied,
                    cwd,
                );
            }
            Effect::Allow if plain_rule_allow => {
                let pattern = eval.rule.as_ref().map_or("", |r| r.pattern.as_str());
                return Judgment {
                    decision: Decision::Allow,
                    message: format!("allowed by policy: {pattern}"),
                    ..base
                };
            }
            Effect::Allow => {
                // Strict mode, sandbox escalations and signals the rule does not name send even
                // rule-allowed actions to review.
                let pattern = eval.rule.as_ref().map_or("", |r| r.pattern.as_str());
                eval.reason = allow_reviewed_because(req, pattern, escalated, signals_escalate);
            }
            Effect::Ask => {}
        }
        if sandbox_retry {
            eval.facts.insert(
                0,
                "SANDBOX ESCALATION: the sandbox refused this action; the question is whether to run it WITHOUT the sandbox".into(),
            );
        }
        if let Some(fact) = req.escalation.as_ref().map(|e| escalation_fact(req, e)) {
            eval.facts.insert(0, fact);
        }
        // Session memory: never in strict mode, never for an escalation.
        let use_memory = !req.strict && !escalated && self.sessions.memory_enabled();
        // Keyed on the request too: an approval given under one request is not one under another.
        let memory_key = format!(
            "{}|{}|{action_key}",
            self.fingerprint, stage.note.request_key
        );
        let remembered = if use_memory {
            self.recall(session, &memory_key).await
        } else {
            None
        };
        if let Some(r) = remembered {
            return Judgment {
                decision: Decision::Allow,
                decided_by: DecidedBy::Session,
                rule: None,
                risk_level: Some(r.risk_level),
                user_authorization: Some(r.user_authorization),
                rationale: format!("remembered from review {}: {}", r.review_id, r.rationale),
                message: format!(
                    "allowed: the reviewer approved this same action earlier in this session ({})",
                    r.review_id
                ),
                ..base
            };
        }
        let outcome = self
            .ask_reviewer(req, ctx, eval, cwd, session, !escalated, signals)
            .await;
        if use_memory {
            self.remember(session, &memory_key, review_id, &outcome)
                .await;
        }
        outcome
    }

    /// A remembered approval; a store that fails remembers nothing (the action is judged
    /// afresh).
    async fn recall(&self, session: &str, key: &str) -> Option<crate::session::Remembered> {
        self.sessions
            .recall(session, key)
            .await
            .unwrap_or_else(|e| {
                self.store_failed(&e);
                None
            })
    }

    /// Remembers the reviewer's approval (not a deny, not another stage's answer).
    async fn remember(&self, session: &str, key: &str, review_id: &str, outcome: &Judgment) {
        if outcome.decided_by == DecidedBy::Reviewer
            && outcome.decision == Decision::Allow
            && let (Some(risk), Some(auth)) = (outcome.risk_level, outcome.user_authorization)
        {
            let approval = crate::session::Remembered {
                review_id: review_id.to_string(),
                risk_level: risk,
                user_authorization: auth,
                rationale: outcome.rationale.clone(),
            };
            if let Err(e) = self.sessions.remember(session, key, approval).await {
                self.store_failed(&e);
            }
        }
    }

    /// Counts and logs a failed session store call.
    fn store_failed(&self, e: &crate::session::StoreError) {
        self.metrics.session_store_errors.inc();
        tracing::warn!(error = %e, "session store call failed; judged without it (nothing remembered, quotas counted by this replica)");
    }

    /// The session store's kind and whether it answers (for `/healthz`).
    pub async fn session_store_health(
        &self,
    ) -> (&'static str, Result<(), crate::session::StoreError>) {
        let kind = self.sessions.kind().as_str();
        let health = self.sessions.health().await;
        if let Err(e) = &health {
            self.store_failed(e);
        }
        (kind, health)
    }

    #[allow(clippy::too_many_arguments)]
    async fn ask_reviewer(
        &self,
        req: &ReviewRequest,
        ctx: &Context,
        eval: &Evaluation,
        cwd: String,
        session: &str,
        coalesce: bool,
        signals: &[crate::signals::Signal],
    ) -> Judgment {
        let why = eval.reason.as_str();
        let over_quota = match &self.reviewer_limiter {
            Some(l) if self.reviewer.backend() != "none" => {
                let per_minute = self.config.limits.reviewer_calls_per_minute;
                !self
                    .within_quota("reviewer", per_minute, || l.check().is_ok())
                    .await
            }
            _ => false,
        };
        if over_quota {
            return Judgment::unreviewed(
                "the reviewer call quota is exhausted".into(),
                texts::reviewer_quota(self.config.limits.reviewer_calls_per_minute),
                FallbackKind::RateLimited,
                cwd,
            );
        }
        // Trusted facts: the policy's, then the risk signals (kept apart from the routing
        // reason `why`, which says only why a reviewer is asked).
        let mut facts = eval.facts.clone();
        facts.extend(signals.iter().map(crate::signals::fact));
        let prompt = self.prompts.render(req, ctx, why, &facts);
        let scoring = self.config.reviewer.scoring != crate::config::Scoring::Label;
        let first_pass = (self.config.reviewer.two_stage && !scoring)
            .then(|| self.prompts.first_pass_of(&prompt));
        let attempts = std::sync::atomic::AtomicU32::new(0);
        let call = || async {
            let staged = async {
                if scoring {
                    return self.scored_review(req, &prompt, &attempts, signals).await;
                }
                let mut spent = Usage::default();
                if let Some(fp) = &first_pass {
                    // The first pass can only clear clearly benign actions; anything else,
                    // failures included, goes on to the full review.
                    match self.call_with_retries(fp, &attempts).await {
                        Ok(out)
                            if crate::decision::outcome_table(&out.verdict, signals).decision
                                == Decision::Allow
                                && out.verdict.risk_level == RiskLevel::Low
                                && signals.is_empty() =>
                        {
                            return Ok(crate::reviewer::ReviewOutput {
                                stages: vec!["first_pass"],
                                ..out
                            });
                        }
                        Ok(out) => spent = out.usage,
                        Err(e) => {
                            tracing::warn!(error = %e, "first pass failed; running the full review")
                        }
                    }
                }
                let out = self.call_with_retries(&prompt, &attempts).await?;
                let stages = if first_pass.is_some() {
                    vec!["first_pass", "full"]
                } else {
                    vec!["full"]
                };
                Ok(crate::reviewer::ReviewOutput {
                    usage: out.usage.plus(spent),
                    stages,
                    ..out
                })
            };
            match tokio::time::timeout(self.review_timeout, staged).await {
                Ok(r) => r,
                Err(_) => Err(ReviewerError::Timeout(self.review_timeout)),
            }
        };
        let result = if coalesce {
            let key = format!("{session}|{}", prompt.digest());
            self.sessions.coalesce(&key, call).await
        } else {
            call().await
        };
        let attempts = attempts.load(std::sync::atomic::Ordering::Relaxed);
        match result {
            Ok(out) => reviewed(out, signals, cwd, attempts),
            Err(ReviewerError::NotConfigured) => Judgment::unreviewed(
                format!("no rule decides this action alone ({why}) and no reviewer is configured"),
                texts::no_reviewer(why),
                ReviewerError::NotConfigured.kind(),
                cwd,
            ),
            Err(e) => {
                let mut o = Judgment::unreviewed(
                    format!("review failed: {e}"),
                    texts::reviewer_failed(&e),
                    e.kind(),
                    cwd,
                );
                o.reviewer_asked = true;
                o.attempts = attempts;
                o
            }
        }
    }

    /// Calls the reviewer, retrying transient failures (unreachable, 429 honouring Retry-After,
    /// 5xx, output that is not a valid verdict) with jittered exponential backoff, up to
    /// `reviewer.max_attempts`. The caller bounds the whole loop with the review deadline.
    async fn call_with_retries(
        &self,
        prompt: &prompt::Prompt,
        attempts: &std::sync::atomic::AtomicU32,
    ) -> Result<crate::reviewer::ReviewOutput, ReviewerError> {
        self.with_retries(attempts, || self.reviewer.review(prompt))
            .await
    }

    /// [`Guardian::call_with_retries`] for any reviewer call.
    async fn with_retries<T, F, Fut>(
        &self,
        attempts: &std::sync::atomic::AtomicU32,
        call: F,
    ) -> Result<T, ReviewerError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, ReviewerError>>,
    {
        let max = self.config.reviewer.max_attempts.max(1);
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            attempts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // Bounded concurrency: waiting for a slot counts against the review deadline.
            let permit =
                self.reviewer_permits.acquire().await.map_err(|_| {
                    ReviewerError::Unreachable("the reviewer pool is closed".into())
                })?;
            let result = call().await;
            drop(permit);
            match result {
                Ok(out) => return Ok(out),
                Err(e) if attempt < max && e.is_transient() => {
                    let backoff = e.retry_after().unwrap_or_else(|| backoff(attempt));
                    tracing::warn!(attempt, error = %e, backoff_ms = backoff.as_millis() as u64, "reviewer attempt failed; retrying");
                    tokio::time::sleep(backoff).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// A scored review (`reviewer.scoring = "logprobs"` or `"probe"`), one-token questions on one
    /// cached prompt prefix: the decision, scored as P(deny) (by the probe on the model's
    /// embedding of the action, or from the one-token answer's log-probabilities) and compared
    /// with `deny_threshold`; for an
    /// action with risk signals, whether the user's own words ask for it, scored as P(yes) and
    /// compared with `authorization_threshold` (the outcome table's user authorization). A
    /// written verdict is asked for only to explain (`explain = "deny"` for denials, `"always"`):
    /// it never changes the decision, and a failed one keeps it. Otherwise guardian writes the
    /// rationale (the score, the risk signals). A failed authorization question fails the review
    /// (closed).
    async fn scored_review(
        &self,
        req: &ReviewRequest,
        verdict: &prompt::Prompt,
        attempts: &std::sync::atomic::AtomicU32,
        signals: &[crate::signals::Signal],
    ) -> Result<crate::reviewer::ReviewOutput, ReviewerError> {
        use crate::reviewer::Question;
        let r = &self.config.reviewer;
        let (p_deny, mut usage, mut stages) =
            self.decision_score(req, verdict, attempts, signals).await?;
        let thresholds = crate::decision::Thresholds::of(r);
        // The table's input: with the one-token score asked whatever the score (a sweep over
        // thresholds needs it; it costs one token on the cached prefix), and of every action when
        // it weighs in the score; with the probe only when it can change the decision.
        let asks = if self.probe.is_some() {
            crate::decision::score::authorization_decides(&thresholds, signals, p_deny)
        } else {
            crate::decision::score::asks_authorization(&thresholds, signals)
        };
        let authorization = if asks {
            // With the probe nothing of the full review's prompt is cached: the short dedicated
            // prompt (the request and the action only) is cheaper and answers better
            // (evals/RESULTS.md); the one-token score asks on its cached prefix.
            let asked = if self.probe.is_some() {
                self.prompts.authorization(req)
            } else {
                verdict.asking(prompt::AUTHORIZATION_QUESTION)
            };
            let a = self
                .with_retries(attempts, || {
                    self.reviewer.score(&asked, Question::AUTHORIZED)
                })
                .await?;
            usage = usage.plus(a.usage);
            stages.push("authorization");
            Some(a.last())
        } else {
            None
        };
        let s =
            crate::decision::score::score(p_deny, authorization, &thresholds, signals.is_empty());
        let mut written = None;
        if s.wants_explanation(r.explain) {
            match self.call_with_retries(verdict, attempts).await {
                Ok(out) => {
                    usage = usage.plus(out.usage);
                    stages.push("verdict");
                    written = Some(out.verdict.rationale);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the verdict after a scored decision failed; keeping the decision")
                }
            }
        }
        let rationale = s.rationale(written, signals, r.explain);
        Ok(crate::reviewer::ReviewOutput {
            verdict: s.verdict(rationale),
            usage,
            stages,
            score: Some(s.score),
            decision_score: s.weighed.map(|_| s.p_deny),
            authorization,
        })
    }
}

impl Guardian {
    /// The decision's P(deny): the probe on the model's embedding of the action when one is
    /// loaded, else the one-token decision's log-probabilities (every question is the verdict's
    /// prompt with another last line: one rendering, one cached prefix). Also the tokens used and
    /// the stage's name. A probe that cannot read the embedding fails the review (closed).
    async fn decision_score(
        &self,
        req: &ReviewRequest,
        verdict: &prompt::Prompt,
        attempts: &std::sync::atomic::AtomicU32,
        signals: &[crate::signals::Signal],
    ) -> Result<(f64, Usage, Vec<&'static str>), ReviewerError> {
        if let Some(probe) = &self.probe {
            let text = crate::reviewer::probe::text_of(&probe.text_format, req, signals);
            let embedded = self
                .with_retries(attempts, || self.reviewer.embed(&text))
                .await?;
            let p = probe
                .score(&embedded.vector)
                .map_err(|e| ReviewerError::InvalidJson(e.to_string()))?;
            return Ok((p, embedded.usage, vec!["probe"]));
        }
        let decision = verdict.asking(prompt::DECISION_QUESTION);
        let scored = self
            .with_retries(attempts, || {
                self.reviewer
                    .score(&decision, crate::reviewer::Question::DECISION)
            })
            .await?;
        Ok((scored.last(), scored.usage, vec!["decision"]))
    }
}

pub use crate::decision::combined_score;

impl Guardian {
    /// Records a hook's tool call that never became an action (a tool guardian does not model,
    /// or a call it could not read) as a fallback deny, so the audit log holds every answer a
    /// hook gives; with `deferred_to_user` the agent's own prompt asks instead. Returns the
    /// record's id, or the error writing it (the caller then denies: nothing unrecorded runs).
    pub async fn record_refusal(&self, r: &Refusal<'_>) -> std::io::Result<String> {
        let review_id = format!("rev_{}", ulid::Ulid::new());
        let session_id = r
            .session_id
            .map_or_else(|| format!("ses_{}", ulid::Ulid::new()), str::to_string);
        let record = AuditRecord {
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            review_id: &review_id,
            session_id: &session_id,
            agent: Some(r.agent),
            client: r.client,
            action: Asked::Tool(ToolCall {
                kind: "tool",
                tool: r.tool,
                input: r.input,
            }),
            cwd: r.cwd,
            workspace_roots: &[],
            intent: None,
            strict: false,
            retry: None,
            escalation: None,
            decision: Decision::Deny,
            decided_by: DecidedBy::Fallback,
            rule: None,
            risk_level: None,
            user_authorization: None,
            rationale: r.reason,
            message: r.message,
            reviewer_backend: None,
            reviewer_model: None,
            prompt_version: PROMPT_VERSION,
            prompt_sha256: self.prompts.sha(),
            error: Some(r.error),
            latency_ms: 0,
            tokens: Usage::default(),
            attempts: 0,
            stages: &[],
            interrupt: None,
            deferred_to_user: r.deferred_to_user,
            signals: &[],
            table_override: None,
            score: None,
            authorization_score: None,
            decision_score: None,
            mandate: None,
        };
        self.audit.append(&record).await?;
        self.metrics
            .decisions
            .get_or_create(&crate::metrics::DecisionLabels {
                decided_by: DecidedBy::Fallback.as_str().to_string(),
                decision: Decision::Deny.as_str().to_string(),
            })
            .inc();
        Ok(review_id)
    }

    /// Evaluates the policy. An action that reads directory trees may walk the file system
    /// (bounded: [`crate::policy::tree`]), so it is evaluated on the blocking pool, never on the
    /// runtime's threads; a panic there is re-raised here (and becomes a deny).
    async fn evaluate(self: &Arc<Self>, action: NormalizedAction, ctx: &Context) -> Evaluation {
        let walks = match &action {
            NormalizedAction::ReadTree(_) => true,
            NormalizedAction::Shell(a) => a.commands.iter().any(|c| !c.tree_reads.is_empty()),
            _ => false,
        };
        if !walks {
            return self.policy.evaluate(&action, ctx);
        }
        let me = Arc::clone(self);
        let ctx = ctx.clone();
        match tokio::task::spawn_blocking(move || me.policy.evaluate(&action, &ctx)).await {
            Ok(eval) => eval,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Evaluation {
                effect: Effect::Deny,
                rule: None,
                reason: "the policy evaluation was cancelled".into(),
                facts: Vec::new(),
            },
        }
    }
}

/// The trusted fact that states what an escalation asks for (its justification is evidence,
/// fenced by the prompt, never a fact).
fn escalation_fact(req: &ReviewRequest, e: &crate::request::Escalation) -> String {
    let derived = e.read.is_empty() && e.write.is_empty() && !e.network;
    match e.kind {
        EscalationKind::Unsandboxed => "SANDBOX ESCALATION: the agent asks to run this WITHOUT the sandbox, with no filesystem or network restrictions".into(),
        EscalationKind::AdditionalPermissions if derived && !matches!(req.action, crate::request::Action::Shell { .. }) => format!(
            "SANDBOX EXTENSION: the agent asks for this {} as an extra permission beyond its sandbox, for a command it wants to run",
            req.action.kind()
        ),
        EscalationKind::AdditionalPermissions => {
            let mut asks = Vec::new();
            if !e.read.is_empty() {
                asks.push(format!("read {}", e.read.join(", ")));
            }
            if !e.write.is_empty() {
                asks.push(format!("write {}", e.write.join(", ")));
            }
            if e.network {
                asks.push("network access".into());
            }
            if asks.is_empty() {
                asks.push("nothing specific".into());
            }
            format!(
                "SANDBOX EXTENSION: the agent asks to run this inside its sandbox with extra permissions: {}",
                asks.join("; ")
            )
        }
    }
}

/// 200 ms, 400 ms, 800 ms, … (at most 5 s), each scaled by a random factor in [0.5, 1.5).
/// The judgment of a review the reviewer answered: the outcome table runs here, in code, on its
/// verdict and the signals; a scored review also gives its point for threshold sweeps.
fn reviewed(
    out: crate::reviewer::ReviewOutput,
    signals: &[crate::signals::Signal],
    cwd: String,
    attempts: u32,
) -> Judgment {
    // A scored review's point for threshold sweeps: would the table deny it even if
    // the score allowed it?
    let sweep = out.score.map(|p| ScorePoint {
        score: p,
        authorization: out.authorization,
        decision_score: out.decision_score,
        table_denies: !signals.is_empty()
            && crate::decision::outcome_table(
                &crate::reviewer::Verdict {
                    outcome: crate::reviewer::Outcome::Allow,
                    ..out.verdict.clone()
                },
                signals,
            )
            .decision
                == Decision::Deny,
    });
    // The outcome table runs here, in code: the model's risk raised to the signals'
    // severities decides what its "allow" may stand for.
    let table = crate::decision::outcome_table(&out.verdict, signals);
    let decision = table.decision;
    let risk = table.risk;
    // A table denial says why, after what the model said of the action.
    let rationale = match &table.overrode {
        Some(why) => format!("{}; {why}", out.verdict.rationale),
        None => out.verdict.rationale,
    };
    let message = match decision {
        Decision::Allow => texts::reviewer_allow(risk.as_str(), &rationale),
        Decision::Deny => texts::reviewer_deny(risk.as_str(), &rationale),
    };
    Judgment {
        decision,
        decided_by: DecidedBy::Reviewer,
        rule: None,
        risk_level: Some(risk),
        user_authorization: Some(out.verdict.user_authorization),
        rationale,
        message,
        error: None,
        usage: out.usage,
        reviewer_asked: true,
        cwd,
        attempts,
        stages: out.stages,
        unreviewed: false,
        signals: Vec::new(),
        table_override: table.overrode,
        sweep,
        mandate: None,
        note: None,
    }
}

/// Why an action a rule allows is still reviewed: a sandbox escalation, risk signals the rule
/// does not name (`escalate`), or strict mode.
fn allow_reviewed_because(
    req: &ReviewRequest,
    pattern: &str,
    escalated: bool,
    signals_escalate: Option<String>,
) -> String {
    if escalated {
        let without = if req
            .escalation
            .as_ref()
            .is_some_and(|e| e.kind == EscalationKind::AdditionalPermissions)
        {
            "with network access its sandbox does not give"
        } else {
            "WITHOUT the sandbox"
        };
        format!(
            "the policy allows running it inside the sandbox ({pattern}), but this asks to run it {without}"
        )
    } else if let Some(why) = signals_escalate.filter(|_| !req.strict) {
        format!("{why} ({pattern})")
    } else {
        format!(
            "strict mode: the rule {pattern} would allow it, but strict mode reviews every action"
        )
    }
}

fn backoff(attempt: u32) -> Duration {
    let base = 200u64
        .saturating_mul(1u64 << attempt.saturating_sub(1).min(10))
        .min(5_000);
    let jitter = 0.5 + fastrand::f64();
    Duration::from_millis((base as f64 * jitter) as u64)
}

/// What makes two requests "the same action" for memory and the doom-loop count: the kind, its
/// content, the cwd, the sandbox and any escalation (running a command outside the sandbox is
/// not the same action as running it inside).
fn action_key(req: &ReviewRequest) -> String {
    let sandbox = req
        .session
        .as_ref()
        .and_then(|s| s.sandbox.as_deref())
        .unwrap_or("");
    let action = serde_json::to_string(&req.action).unwrap_or_default();
    let escalation = req
        .escalation
        .as_ref()
        .and_then(|e| serde_json::to_string(e).ok())
        .unwrap_or_default();
    let digest = Sha256::digest(format!("{sandbox}\u{0}{action}\u{0}{escalation}").as_bytes());
    hex::encode(&digest[..16])
}
