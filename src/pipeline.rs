//! The pipeline: request → normalize → policy → reviewer → verdict → audit.
//!
//! This module owns the order of the stages and the fail-closed guarantees that hold across them:
//! a deny rule ends the review; only an ask goes to the reviewer; any reviewer failure, panic or
//! audit failure is a deny by `fallback`; and no answer leaves before its audit record is on disk.
//! The HTTP server and the CLI both call [`Guardian::review`] and nothing else.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::audit::{AuditLog, AuditRecord};
use crate::config::{BackendKind, Config, Unreviewed};
use crate::normalize::{Context, NormalizedAction, absolute, normalize_guarded};
use crate::policy::{Evaluation, Policy, PolicyError};
use crate::request::{EscalationKind, ReviewRequest};
use crate::reviewer::openai::OpenAiReviewer;
use crate::reviewer::prompt::{self, PROMPT_VERSION};
use crate::reviewer::{NoReviewer, Reviewer, ReviewerError, Usage, UserAuthorization};
use crate::session::Sessions;
use crate::verdict::{DecidedBy, Decision, Effect, ReviewResponse, RiskLevel, RuleRef};
use sha2::{Digest, Sha256};

/// The text appended to every denial the agent sees.
const DO_NOT_WORK_AROUND: &str = "Do not try to reach the same result another way; if the task needs this, stop and ask the user.";

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
    Reviewer(String),
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
struct Outcome {
    decision: Decision,
    decided_by: DecidedBy,
    rule: Option<RuleRef>,
    risk_level: Option<RiskLevel>,
    user_authorization: Option<UserAuthorization>,
    rationale: String,
    message: String,
    error: Option<String>,
    usage: Usage,
    reviewer_asked: bool,
    cwd: String,
    attempts: u32,
    stages: Vec<&'static str>,
    /// A deny that is no judgment: the action needed a reviewer and none could answer.
    unreviewed: bool,
}

impl Outcome {
    fn fallback(rationale: String, message: String, error: &str, cwd: String) -> Outcome {
        Outcome {
            decision: Decision::Deny,
            decided_by: DecidedBy::Fallback,
            rule: None,
            risk_level: None,
            user_authorization: None,
            rationale,
            message,
            error: Some(error.to_string()),
            usage: Usage::default(),
            reviewer_asked: false,
            cwd,
            attempts: 0,
            stages: Vec::new(),
            unreviewed: false,
        }
    }

    /// A fallback deny because no reviewer could answer (see [`ReviewResponse::unreviewed`]).
    fn unreviewed(rationale: String, message: String, error: &str, cwd: String) -> Outcome {
        Outcome {
            unreviewed: true,
            ..Outcome::fallback(rationale, message, error, cwd)
        }
    }
}

impl Guardian {
    /// Builds the service from a loaded config, with the backend it names.
    pub fn from_config(config: Config) -> Result<Guardian, SetupError> {
        let reviewer: Arc<dyn Reviewer> = match config.reviewer.backend {
            BackendKind::None => Arc::new(NoReviewer),
            BackendKind::Openai | BackendKind::Anthropic => {
                let api_key = config
                    .reviewer
                    .api_key_env
                    .as_deref()
                    .and_then(|name| std::env::var(name).ok())
                    .filter(|k| !k.is_empty());
                let r = &config.reviewer;
                let timeout = Duration::from_millis(
                    r.attempt_timeout_ms
                        .unwrap_or(r.timeout_ms)
                        .min(r.timeout_ms),
                );
                if r.backend == BackendKind::Openai {
                    Arc::new(
                        OpenAiReviewer::new(
                            &r.base_url,
                            &r.model,
                            api_key,
                            timeout,
                            r.max_output_tokens,
                        )
                        .map_err(SetupError::Reviewer)?,
                    )
                } else {
                    Arc::new(
                        crate::reviewer::anthropic::AnthropicReviewer::new(
                            &r.base_url,
                            &r.model,
                            api_key,
                            timeout,
                            r.max_output_tokens,
                        )
                        .map_err(SetupError::Reviewer)?,
                    )
                }
            }
        };
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
        let sessions = Sessions::new(
            config.breaker.clone(),
            Duration::from_secs(config.reviewer.memory_ttl_s),
        );
        let prompts = prompt::PromptSet::new(
            config.tenant_policy()?.as_deref(),
            config.reviewer.budget.clone(),
        );
        let fingerprint = {
            let listing = serde_json::to_string(&policy.listing()).unwrap_or_default();
            let settings = format!("{:?}", policy.settings());
            let d = Sha256::digest(
                format!(
                    "{listing}\u{0}{settings}\u{0}{PROMPT_VERSION}\u{0}{}",
                    prompts.sha()
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

    fn count(&self, outcome: &Outcome, tripped: bool, took: Duration) {
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
        if let Some(kind) = &outcome.error {
            m.error(kind);
            if kind == "rate_limited" {
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
        self.review_one(req, client, mode).await.0
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
                tokio::spawn(async move { g.review_one(req, &client, mode).await.0 })
            })
            .collect();
        let mut all = crate::verdict::AllAllowed::default();
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
                    message: format!(
                        "denied: guardian hit an internal error. {DO_NOT_WORK_AROUND}"
                    ),
                    interrupt: false,
                    unreviewed: true,
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
                message: format!(
                    "denied: the request named nothing to review. {DO_NOT_WORK_AROUND}"
                ),
                interrupt: false,
                unreviewed: false,
            },
        }
    }

    /// [`Guardian::review`] of a single request (no expansion), also returning the reviewer's
    /// token usage and the failure kind of a fallback decision (for evaluations).
    pub async fn review_with_usage(
        self: &Arc<Self>,
        req: ReviewRequest,
        client: &str,
    ) -> (ReviewResponse, (Usage, Option<String>)) {
        self.review_one(req, client, Unreviewed::Deny).await
    }

    async fn review_one(
        self: &Arc<Self>,
        req: ReviewRequest,
        client: &str,
        mode: Unreviewed,
    ) -> (ReviewResponse, (Usage, Option<String>)) {
        let started = Instant::now();
        let id = format!("rev_{}", ulid::Ulid::new());
        let session_given = req.session.as_ref().is_some_and(|s| s.id.is_some());
        let session_id = req
            .session
            .as_ref()
            .and_then(|s| s.id.clone())
            .unwrap_or_else(|| format!("ses_{}", ulid::Ulid::new()));
        // A panic anywhere in a stage becomes a deny, never a crash (see catch_unwind below).
        let me = Arc::clone(self);
        let req_for_task = req.clone();
        // What makes two requests "the same action": computed once, for memory and the breaker.
        let key = action_key(&req);
        let (session_for_task, id_for_task, key_for_task) =
            (session_id.clone(), id.clone(), key.clone());
        // Every log line of this review (retries, stage failures) carries its review id.
        let span = tracing::info_span!("review", review_id = %id);
        let task = tracing::Instrument::instrument(
            async move {
                me.decide(
                    &req_for_task,
                    &session_for_task,
                    &id_for_task,
                    &key_for_task,
                )
                .await
            },
            span,
        );
        let over_quota = self
            .client_limiter
            .as_ref()
            .is_some_and(|l| l.check_key(&client.to_string()).is_err());
        let decided = if over_quota {
            Ok(Outcome::fallback(
                format!("client {client} is over its quota of review requests"),
                format!(
                    "denied: rate limited: this client sent more than {} review requests per minute. Wait before trying again.",
                    self.config.limits.requests_per_minute_per_client
                ),
                "rate_limited",
                String::new(),
            ))
        } else {
            // A panic anywhere in the stages is caught here and becomes a deny (in this task:
            // cheaper than spawning one per request).
            use futures::FutureExt;
            let mut abort = self.abort.subscribe();
            let task = std::panic::AssertUnwindSafe(task).catch_unwind();
            tokio::select! {
                r = task => r.map_err(|p| {
                    p.downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a panic".into())
                }),
                _ = abort.wait_for(|v| *v) => {
                    Ok(Outcome::fallback(
                        "guardian was shutting down and its grace period ended before this review finished".into(),
                        format!("denied: guardian is shutting down; this action was not reviewed. {DO_NOT_WORK_AROUND}"),
                        "shutting_down",
                        String::new(),
                    ))
                }
            }
        };
        let mut outcome = match decided {
            Ok(o) => o,
            Err(e) => {
                tracing::error!(review_id = %id, error = %e, "review task failed");
                Outcome::fallback(
                    "guardian failed while reviewing this action".into(),
                    format!(
                        "denied: guardian hit an internal error while reviewing this action. {DO_NOT_WORK_AROUND}"
                    ),
                    "internal_error",
                    String::new(),
                )
            }
        };
        // A request without a session id gets a fresh one: nothing to remember or count for it.
        // A question handed to the user is no denial: the breaker does not count it.
        let deferred = outcome.unreviewed && mode == Unreviewed::Ask;
        let interrupt = if session_given && !deferred {
            self.sessions.record(&session_id, &key, outcome.decision)
        } else {
            None
        };
        self.count(&outcome, interrupt.is_some(), started.elapsed());
        if let Some(why) = &interrupt {
            outcome.message.push_str(&format!(
                "\nSTOP: {why} in this session. Do not try again or try alternatives: stop now and report to your user what you were trying to do and what was denied."
            ));
        }
        let record = AuditRecord {
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            review_id: &id,
            session_id: &session_id,
            agent: req.session.as_ref().and_then(|s| s.agent.as_deref()),
            client,
            action: &req.action,
            cwd: &outcome.cwd,
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
            error: outcome.error.as_deref(),
            latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            tokens: outcome.usage,
            attempts: outcome.attempts,
            interrupt: interrupt.as_deref(),
            deferred_to_user: deferred,
        };
        let audited = self.audit.append(&record).await;
        let (tokens, latency_ms) = (record.tokens, record.latency_ms);
        let error = outcome.error.clone();
        let mut response = ReviewResponse {
            id,
            decision: outcome.decision,
            decided_by: outcome.decided_by,
            rule: outcome.rule,
            risk_level: outcome.risk_level,
            rationale: outcome.rationale,
            message: outcome.message,
            interrupt: interrupt.is_some(),
            unreviewed: outcome.unreviewed,
        };
        if let Err(e) = audited {
            tracing::error!(review_id = %response.id, error = %e, "audit write failed; denying");
            response.decision = Decision::Deny;
            response.decided_by = DecidedBy::Fallback;
            response.rule = None;
            response.unreviewed = false;
            response.rationale =
                format!("the decision could not be recorded in the audit log: {e}");
            response.message = format!(
                "denied: guardian could not record this decision in its audit log, and never lets an unrecorded action run. {DO_NOT_WORK_AROUND}"
            );
        }
        tracing::info!(
            review_id = %response.id,
            session_id = %session_id,
            client = %client,
            decision = response.decision.as_str(),
            decided_by = response.decided_by.as_str(),
            kind = req.action.kind(),
            error = error.as_deref().unwrap_or(""),
            latency_ms,
            "decided"
        );
        let error = if response.decided_by == DecidedBy::Fallback {
            error.or_else(|| Some("audit".into()))
        } else {
            None
        };
        (response, (tokens, error))
    }

    async fn decide(
        self: &Arc<Self>,
        req: &ReviewRequest,
        session: &str,
        review_id: &str,
        action_key: &str,
    ) -> Outcome {
        let ctx = Context::of(req, &self.server_cwd, self.home.as_deref());
        let cwd = ctx.cwd.display().to_string();
        let action =
            normalize_guarded(&req.action, &ctx, &self.parse_permits, PARSE_DEADLINE).await;
        let mut eval = self.evaluate(action, &ctx).await;
        let base = Outcome {
            decision: Decision::Deny,
            decided_by: DecidedBy::Rule,
            rule: eval.rule.clone(),
            risk_level: None,
            user_authorization: None,
            rationale: eval.reason.clone(),
            message: String::new(),
            error: None,
            usage: Usage::default(),
            reviewer_asked: false,
            cwd: cwd.clone(),
            attempts: 0,
            stages: Vec::new(),
            unreviewed: false,
        };
        let sandbox_retry = req.retry.as_ref().is_some_and(|r| r.sandbox_denied);
        let escalated = req.escalates();
        match eval.effect {
            // Deny rules are checked first, for retries and strict mode too.
            Effect::Deny => {
                let pattern = eval.rule.as_ref().map_or("", |r| r.pattern.as_str());
                return Outcome {
                    message: format!("denied by policy: {pattern}. {DO_NOT_WORK_AROUND}"),
                    ..base
                };
            }
            _ if req.retry.is_some() && !sandbox_retry => {
                return Outcome::fallback(
                    "a retry that was not refused by the sandbox asks for nothing new".into(),
                    format!(
                        "denied: only sandbox denials may escalate (retry.sandbox_denied is not true). Fix the failure instead of retrying outside the sandbox. {DO_NOT_WORK_AROUND}"
                    ),
                    "retry_not_sandbox_denied",
                    cwd,
                );
            }
            Effect::Allow if !req.strict && !escalated => {
                let pattern = eval.rule.as_ref().map_or("", |r| r.pattern.as_str());
                return Outcome {
                    decision: Decision::Allow,
                    message: format!("allowed by policy: {pattern}"),
                    ..base
                };
            }
            Effect::Allow => {
                // Strict mode and sandbox escalations send even rule-allowed actions to review.
                let pattern = eval.rule.as_ref().map_or("", |r| r.pattern.as_str());
                eval.reason = if escalated {
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
                } else {
                    format!(
                        "strict mode: the rule {pattern} would allow it, but strict mode reviews every action"
                    )
                };
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
        let memory_key = format!("{}|{action_key}", self.fingerprint);
        if use_memory && let Some(r) = self.sessions.recall(session, &memory_key) {
            return Outcome {
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
            .ask_reviewer(req, &ctx, &eval, cwd, session, !escalated)
            .await;
        if use_memory
            && outcome.decided_by == DecidedBy::Reviewer
            && outcome.decision == Decision::Allow
            && let (Some(risk), Some(auth)) = (outcome.risk_level, outcome.user_authorization)
        {
            self.sessions.remember(
                session,
                &memory_key,
                review_id,
                risk,
                auth,
                &outcome.rationale,
            );
        }
        outcome
    }

    async fn ask_reviewer(
        &self,
        req: &ReviewRequest,
        ctx: &Context,
        eval: &Evaluation,
        cwd: String,
        session: &str,
        coalesce: bool,
    ) -> Outcome {
        let why = eval.reason.as_str();
        if self.reviewer.backend() != "none"
            && self
                .reviewer_limiter
                .as_ref()
                .is_some_and(|l| l.check().is_err())
        {
            return Outcome::unreviewed(
                "the reviewer call quota is exhausted".into(),
                format!(
                    "denied: rate limited: guardian's quota of {} reviewer calls per minute is used up, so this action could not be reviewed. This is not a judgment that the action is risky; retry later.",
                    self.config.limits.reviewer_calls_per_minute
                ),
                "rate_limited",
                cwd,
            );
        }
        let prompt = self.prompts.render(req, ctx, why, &eval.facts);
        let first_pass = self
            .config
            .reviewer
            .two_stage
            .then(|| self.prompts.render_first_pass(req, ctx, why, &eval.facts));
        let attempts = std::sync::atomic::AtomicU32::new(0);
        let call = || async {
            let staged = async {
                let mut spent = Usage::default();
                if let Some(fp) = &first_pass {
                    // The first pass can only clear clearly benign actions; anything else,
                    // failures included, goes on to the full review.
                    match self.call_with_retries(fp, &attempts).await {
                        Ok(out)
                            if out.verdict.decision() == Decision::Allow
                                && out.verdict.risk_level == RiskLevel::Low =>
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
                    usage: Usage {
                        prompt_tokens: out.usage.prompt_tokens + spent.prompt_tokens,
                        completion_tokens: out.usage.completion_tokens + spent.completion_tokens,
                    },
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
            Ok(out) => {
                let decision = out.verdict.decision();
                let risk = out.verdict.risk_level;
                let message = match decision {
                    Decision::Allow => format!(
                        "allowed by the reviewer (risk: {}): {}",
                        risk.as_str(),
                        out.verdict.rationale
                    ),
                    Decision::Deny => format!(
                        "denied by the reviewer (risk: {}): {} {DO_NOT_WORK_AROUND}",
                        risk.as_str(),
                        out.verdict.rationale
                    ),
                };
                Outcome {
                    decision,
                    decided_by: DecidedBy::Reviewer,
                    rule: None,
                    risk_level: Some(risk),
                    user_authorization: Some(out.verdict.user_authorization),
                    rationale: out.verdict.rationale,
                    message,
                    error: None,
                    usage: out.usage,
                    reviewer_asked: true,
                    cwd,
                    attempts,
                    stages: out.stages,
                    unreviewed: false,
                }
            }
            Err(ReviewerError::NotConfigured) => Outcome::unreviewed(
                format!("no rule allows this action ({why}) and no reviewer is configured"),
                format!(
                    "denied: no reviewer is configured (reviewer.backend = \"none\"), and no rule allows this action ({why}). {DO_NOT_WORK_AROUND}"
                ),
                ReviewerError::NotConfigured.kind(),
                cwd,
            ),
            Err(e) => {
                let mut o = Outcome::unreviewed(
                    format!("review failed: {e}"),
                    format!(
                        "denied: {e}, so this action could not be reviewed. This is not a judgment that the action is risky; retry later or ask the user to run it."
                    ),
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
        let max = self.config.reviewer.max_attempts.max(1);
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            attempts.store(attempt, std::sync::atomic::Ordering::Relaxed);
            // Bounded concurrency: waiting for a slot counts against the review deadline.
            let _permit =
                self.reviewer_permits.acquire().await.map_err(|_| {
                    ReviewerError::Unreachable("the reviewer pool is closed".into())
                })?;
            match self.reviewer.review(prompt).await {
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
}

impl Guardian {
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
