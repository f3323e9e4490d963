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
use crate::config::{BackendKind, Config};
use crate::normalize::{Context, normalize_guarded};
use crate::policy::{Evaluation, Policy, PolicyError};
use crate::request::ReviewRequest;
use crate::reviewer::openai::OpenAiReviewer;
use crate::reviewer::prompt::{self, PROMPT_VERSION};
use crate::reviewer::{NoReviewer, Reviewer, ReviewerError, Usage, UserAuthorization};
use crate::verdict::{DecidedBy, Decision, Effect, ReviewResponse, RiskLevel, RuleRef};

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
}

/// Deadline for parsing one shell command line (brush-parser has pathological inputs).
const PARSE_DEADLINE: Duration = Duration::from_secs(2);
/// Shell parses running at once, at most.
const PARSE_CONCURRENCY: usize = 4;

fn absolute(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    crate::normalize::normalize_lexically(&abs)
}

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
        }
    }
}

impl Guardian {
    /// Builds the service from a loaded config, with the backend it names.
    pub fn from_config(config: Config) -> Result<Guardian, SetupError> {
        let reviewer: Arc<dyn Reviewer> = match config.reviewer.backend {
            BackendKind::None => Arc::new(NoReviewer),
            BackendKind::Openai => {
                let api_key = config
                    .reviewer
                    .api_key_env
                    .as_deref()
                    .and_then(|name| std::env::var(name).ok())
                    .filter(|k| !k.is_empty());
                Arc::new(
                    OpenAiReviewer::new(
                        &config.reviewer.base_url,
                        &config.reviewer.model,
                        api_key,
                        Duration::from_millis(config.reviewer.timeout_ms),
                        config.reviewer.max_output_tokens,
                    )
                    .map_err(SetupError::Reviewer)?,
                )
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
        if config.source_name != crate::config::DEFAULT_POLICY_NAME {
            own_files.push(absolute(Path::new(&config.source_name)));
        }
        let policy = Policy::from_config(&config, own_files).map_err(SetupError::Policy)?;
        let audit = AuditLog::open(&config.audit.path).map_err(|source| SetupError::Audit {
            path: config.audit.path.display().to_string(),
            source,
        })?;
        Ok(Guardian {
            review_timeout: Duration::from_millis(config.reviewer.timeout_ms),
            config,
            policy,
            reviewer,
            audit,
            server_cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            home: std::env::var_os("HOME").map(PathBuf::from),
            parse_permits: Arc::new(tokio::sync::Semaphore::new(PARSE_CONCURRENCY)),
        })
    }

    /// Sets the home directory `~` means (default: `$HOME` of the service).
    pub fn with_home(mut self, home: Option<PathBuf>) -> Guardian {
        self.home = home;
        self
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

    /// Reviews one request end to end and records the decision before returning it.
    /// `client` names who asked (for the audit record).
    pub async fn review(self: &Arc<Self>, req: ReviewRequest, client: &str) -> ReviewResponse {
        let started = Instant::now();
        let id = format!("rev_{}", ulid::Ulid::new());
        // Decide on a separate task: a panic anywhere in a stage becomes a deny, never a crash.
        let me = Arc::clone(self);
        let req_for_task = req.clone();
        let outcome = match tokio::spawn(async move { me.decide(&req_for_task).await }).await {
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
        let session_id = req
            .session
            .as_ref()
            .and_then(|s| s.id.clone())
            .unwrap_or_else(|| format!("ses_{}", ulid::Ulid::new()));
        let record = AuditRecord {
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            review_id: id.clone(),
            session_id,
            agent: req.session.as_ref().and_then(|s| s.agent.clone()),
            client: client.to_string(),
            action: req.action.clone(),
            cwd: outcome.cwd.clone(),
            intent: req.intent.clone(),
            strict: req.strict,
            retry: req.retry.clone(),
            decision: outcome.decision,
            decided_by: outcome.decided_by,
            rule: outcome.rule.clone(),
            risk_level: outcome.risk_level,
            user_authorization: outcome.user_authorization,
            rationale: outcome.rationale.clone(),
            message: outcome.message.clone(),
            reviewer_backend: outcome
                .reviewer_asked
                .then(|| self.reviewer.backend().to_string()),
            reviewer_model: if outcome.reviewer_asked {
                self.reviewer.model().map(str::to_string)
            } else {
                None
            },
            prompt_version: PROMPT_VERSION.to_string(),
            prompt_sha256: prompt::system_prompt_sha(),
            error: outcome.error.clone(),
            latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            tokens: outcome.usage,
        };
        let mut response = ReviewResponse {
            id,
            decision: outcome.decision,
            decided_by: outcome.decided_by,
            rule: outcome.rule,
            risk_level: outcome.risk_level,
            rationale: outcome.rationale,
            message: outcome.message,
        };
        if let Err(e) = self.audit.append(&record).await {
            tracing::error!(review_id = %response.id, error = %e, "audit write failed; denying");
            response.decision = Decision::Deny;
            response.decided_by = DecidedBy::Fallback;
            response.rule = None;
            response.rationale =
                format!("the decision could not be recorded in the audit log: {e}");
            response.message = format!(
                "denied: guardian could not record this decision in its audit log, and never lets an unrecorded action run. {DO_NOT_WORK_AROUND}"
            );
        }
        tracing::info!(
            review_id = %response.id,
            decision = response.decision.as_str(),
            decided_by = response.decided_by.as_str(),
            kind = req.action.kind(),
            "decided"
        );
        response
    }

    async fn decide(&self, req: &ReviewRequest) -> Outcome {
        let ctx = Context::of(req, &self.server_cwd, self.home.as_deref());
        let cwd = ctx.cwd.display().to_string();
        let action =
            normalize_guarded(&req.action, &ctx, &self.parse_permits, PARSE_DEADLINE).await;
        let eval = self.policy.evaluate(&action, &ctx);
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
        };
        match eval.effect {
            Effect::Deny => {
                let pattern = eval.rule.as_ref().map_or("", |r| r.pattern.as_str());
                Outcome {
                    message: format!("denied by policy: {pattern}. {DO_NOT_WORK_AROUND}"),
                    ..base
                }
            }
            Effect::Allow => {
                let pattern = eval.rule.as_ref().map_or("", |r| r.pattern.as_str());
                Outcome {
                    decision: Decision::Allow,
                    message: format!("allowed by policy: {pattern}"),
                    ..base
                }
            }
            Effect::Ask => self.ask_reviewer(req, &ctx, &eval, cwd).await,
        }
    }

    async fn ask_reviewer(
        &self,
        req: &ReviewRequest,
        ctx: &Context,
        eval: &Evaluation,
        cwd: String,
    ) -> Outcome {
        let why = eval.reason.as_str();
        let prompt = prompt::render(req, ctx, why, &eval.facts);
        let result =
            match tokio::time::timeout(self.review_timeout, self.reviewer.review(&prompt)).await {
                Ok(r) => r,
                Err(_) => Err(ReviewerError::Timeout(self.review_timeout)),
            };
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
                }
            }
            Err(ReviewerError::NotConfigured) => Outcome::fallback(
                format!("no rule allows this action ({why}) and no reviewer is configured"),
                format!(
                    "denied: no reviewer is configured (reviewer.backend = \"none\"), and no rule allows this action ({why}). {DO_NOT_WORK_AROUND}"
                ),
                ReviewerError::NotConfigured.kind(),
                cwd,
            ),
            Err(e) => {
                let mut o = Outcome::fallback(
                    format!("review failed: {e}"),
                    format!(
                        "denied: {e}, so this action could not be reviewed. This is not a judgment that the action is risky; retry later or ask the user to run it."
                    ),
                    e.kind(),
                    cwd,
                );
                o.reviewer_asked = true;
                o
            }
        }
    }
}
