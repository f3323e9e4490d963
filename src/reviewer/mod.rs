//! The reviewer: a second model that judges what no rule decided.
//!
//! This module owns the backend interface ([`Reviewer`]), the verdict the model must return
//! ([`Verdict`], validated against [`verdict_schema`]), how a verdict maps to a decision
//! ([`Verdict::decision`]), and the ways a review can fail ([`ReviewerError`]). A failure is never
//! a decision: the pipeline turns it into a deny by `fallback` that names the cause.

pub mod anthropic;
pub mod budget;
pub mod config;
pub mod openai;
pub mod probe;
pub mod prompt;

use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::verdict::{Decision, RiskLevel};

pub use prompt::Prompt;

/// How far the user authorised this kind of action, as the reviewer reads the transcript.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum UserAuthorization {
    /// No sign either way.
    Unknown,
    /// Loosely related to what the user asked.
    Low,
    /// Clearly within what the user asked.
    Medium,
    /// The user asked for exactly this.
    High,
}

/// The reviewer's raw outcome.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Let it run.
    Allow,
    /// Block it.
    Deny,
}

/// The reviewer's answer, exactly as the schema requires.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// The reasoning, written before the decision.
    pub rationale: String,
    /// How risky the action is.
    pub risk_level: RiskLevel,
    /// How far the user authorised it.
    pub user_authorization: UserAuthorization,
    /// The reviewer's outcome.
    pub outcome: Outcome,
}

impl Verdict {
    /// The decision this verdict leads to: critical risk is always denied, high risk only
    /// allowed when the user authorised it highly, otherwise the reviewer's outcome.
    pub fn decision(&self) -> Decision {
        match (self.risk_level, self.user_authorization, self.outcome) {
            (RiskLevel::Critical, _, _) => Decision::Deny,
            (RiskLevel::High, UserAuthorization::High, Outcome::Allow) => Decision::Allow,
            (RiskLevel::High, _, _) => Decision::Deny,
            (_, _, Outcome::Allow) => Decision::Allow,
            (_, _, Outcome::Deny) => Decision::Deny,
        }
    }
}

/// The JSON schema of [`Verdict`]: sent to the model as the response format, and used to
/// validate every reply. `rationale` comes first so small models reason before deciding.
pub fn verdict_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "rationale": {"type": "string", "minLength": 1, "maxLength": 600},
            "risk_level": {"type": "string", "enum": ["low", "medium", "high", "critical"]},
            "user_authorization": {"type": "string", "enum": ["unknown", "low", "medium", "high"]},
            "outcome": {"type": "string", "enum": ["allow", "deny"]}
        },
        "required": ["rationale", "risk_level", "user_authorization", "outcome"],
        "additionalProperties": false
    })
}

/// Tokens a review used, as the backend reported them.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Prompt tokens the backend served from its prompt cache (when it says).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Both usages together.
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens + other.prompt_tokens,
            completion_tokens: self.completion_tokens + other.completion_tokens,
            cached_tokens: self.cached_tokens + other.cached_tokens,
        }
    }
}

/// A question answered with one token, scored from the backend's log-probabilities: the
/// decision (allow or deny), or whether the user asked for the action. The
/// prompt's last line asks it; the backend constrains the answer to `labels` (llama.cpp's
/// `grammar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Question {
    /// The answers, as the model writes them.
    pub labels: &'static [&'static str],
}

impl Question {
    /// The one-token decision: `allow` or `deny`.
    pub const DECISION: Question = Question {
        labels: &["allow", "deny"],
    };
    /// Whether the user's own words ask for the action: `no` or `yes`.
    pub const AUTHORIZED: Question = Question {
        labels: &["no", "yes"],
    };

    /// The llama.cpp grammar that admits exactly the labels.
    pub fn grammar(&self) -> String {
        let alternatives: Vec<String> = self.labels.iter().map(|l| format!("{l:?}")).collect();
        format!("root ::= {}", alternatives.join(" | "))
    }
}

/// A text's embedding, as the backend returned it.
#[derive(Debug, Clone)]
pub struct Embedded {
    /// The vector.
    pub vector: Vec<f64>,
    /// Tokens used.
    pub usage: Usage,
}

/// A question's answer scored from the backend's log-probabilities.
#[derive(Debug, Clone)]
pub struct Scored {
    /// The probability of each of the question's labels, in its order, renormalised to sum 1.
    pub probs: Vec<f64>,
    /// Tokens used.
    pub usage: Usage,
}

impl Scored {
    /// The probability of the question's last label: P(deny) for the decision, P(yes) for the
    /// authorization.
    pub fn last(&self) -> f64 {
        self.probs.last().copied().unwrap_or(0.0)
    }
}

/// The probability of each label from the candidates of the answer token, as `(token text,
/// logprob)` pairs, renormalised over the labels. A candidate counts for the one label it begins
/// (`den` and ` Deny` for `deny`); a candidate that begins no label or several is ignored, and so
/// is a single letter when the labels are words (too ambiguous among raw candidates). `sampled`
/// is the token the backend sampled under the labels' grammar, when the candidates do not hold
/// it: it counts for the label it begins even as one letter (a small model's vocabulary may start
/// `deny` with `d`). No label at all, or a logprob that is not a finite number ≤ 0, is an error
/// (a review that fails closed), never a guessed score.
pub fn label_probs<'a>(
    labels: &[&str],
    candidates: impl IntoIterator<Item = (&'a str, f64)>,
    sampled: Option<(&'a str, f64)>,
) -> Result<Vec<f64>, ReviewerError> {
    let shortest = labels.iter().map(|l| l.len()).min().unwrap_or(1);
    let mut mass = vec![0.0f64; labels.len()];
    let all = candidates
        .into_iter()
        .map(|c| (c, shortest.min(2)))
        .chain(sampled.map(|c| (c, 1)));
    for ((token, logprob), min_len) in all {
        if !logprob.is_finite() || logprob > 1e-6 {
            return Err(ReviewerError::InvalidJson(format!(
                "the logprob of {token:?} is not a log-probability: {logprob}"
            )));
        }
        let t = token.trim().to_ascii_lowercase();
        if t.len() < min_len {
            continue;
        }
        let mut begun = labels
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with(t.as_str()));
        if let (Some((i, _)), None) = (begun.next(), begun.next()) {
            mass[i] += logprob.exp();
        }
    }
    let total: f64 = mass.iter().sum();
    if total <= 0.0 {
        return Err(ReviewerError::InvalidJson(format!(
            "none of {} among the answer token's log-probabilities",
            labels.join(", ")
        )));
    }
    Ok(mass.into_iter().map(|m| m / total).collect())
}

/// A successful review.
#[derive(Debug, Clone)]
pub struct ReviewOutput {
    /// The validated verdict.
    pub verdict: Verdict,
    /// Tokens used.
    pub usage: Usage,
    /// The stages that ran (filled in by the pipeline; backends leave it empty).
    pub stages: Vec<&'static str>,
    /// P(deny) when the decision was scored from log-probabilities (filled in by the pipeline).
    pub score: Option<f64>,
    /// P(yes) of the scored authorization question, when it was asked (filled in by the
    /// pipeline).
    pub authorization: Option<f64>,
    /// P(deny) of the decision token when the score also weighs the authorization (filled in by
    /// the pipeline).
    pub decision_score: Option<f64>,
}

/// Why a review produced no verdict.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ReviewerError {
    /// No reviewer is configured.
    #[error("no reviewer is configured (reviewer.backend = \"none\")")]
    NotConfigured,
    /// The deadline passed.
    #[error("the reviewer timed out after {}", human_duration(*.0))]
    Timeout(Duration),
    /// The backend could not be reached.
    #[error("the reviewer could not be reached: {0}")]
    Unreachable(String),
    /// The backend answered with a non-2xx status.
    #[error("the reviewer answered HTTP {status}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The server's `Retry-After`, if it sent one.
        retry_after: Option<Duration>,
    },
    /// The answer was not JSON, or not the expected envelope.
    #[error("the reviewer's answer was not valid JSON: {0}")]
    InvalidJson(String),
    /// The verdict did not match the schema.
    #[error("the reviewer's verdict did not match the schema: {0}")]
    SchemaViolation(String),
}

impl ReviewerError {
    /// Whether another attempt may succeed: connection failures, an attempt's timeout, 429,
    /// 5xx, and output that was not a valid verdict. (The review's own deadline is enforced
    /// around all attempts, so retrying never outlives it.)
    pub fn is_transient(&self) -> bool {
        match self {
            ReviewerError::Unreachable(_)
            | ReviewerError::InvalidJson(_)
            | ReviewerError::SchemaViolation(_)
            | ReviewerError::Timeout(_) => true,
            ReviewerError::Status { status, .. } => *status == 429 || *status >= 500,
            ReviewerError::NotConfigured => false,
        }
    }

    /// How long the server asked to wait before retrying.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ReviewerError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The fallback this failure makes of a decision (audit records, metrics).
    pub fn kind(&self) -> crate::verdict::FallbackKind {
        use crate::verdict::FallbackKind as K;
        match self {
            ReviewerError::NotConfigured => K::NotConfigured,
            ReviewerError::Timeout(_) => K::Timeout,
            ReviewerError::Unreachable(_) => K::Unreachable,
            ReviewerError::Status { .. } => K::HttpStatus,
            ReviewerError::InvalidJson(_) => K::InvalidJson,
            ReviewerError::SchemaViolation(_) => K::SchemaViolation,
        }
    }
}

/// `30000 ms` → `30 s`; `1500 ms` → `1500 ms`.
pub fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms >= 1000 && ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

/// A reviewer backend.
pub trait Reviewer: Send + Sync {
    /// Asks the model for a verdict on a rendered prompt.
    fn review<'a>(
        &'a self,
        prompt: &'a Prompt,
    ) -> BoxFuture<'a, Result<ReviewOutput, ReviewerError>>;
    /// Asks a one-token `question` (the prompt's last line) and scores its labels from the
    /// log-probabilities (`reviewer.scoring = "logprobs"`). Backends that return none fail (the
    /// configuration refuses that combination up front).
    fn score<'a>(
        &'a self,
        _prompt: &'a Prompt,
        _question: Question,
    ) -> BoxFuture<'a, Result<Scored, ReviewerError>> {
        Box::pin(async {
            Err(ReviewerError::InvalidJson(
                "this backend returns no log-probabilities".into(),
            ))
        })
    }
    /// The model's embedding of a text (its hidden state; last-token pooling on llama.cpp's
    /// server started with embeddings on), for `reviewer.scoring = "probe"`. Backends without
    /// an embeddings endpoint fail (the review fails closed).
    fn embed<'a>(&'a self, _text: &'a str) -> BoxFuture<'a, Result<Embedded, ReviewerError>> {
        Box::pin(async {
            Err(ReviewerError::InvalidJson(
                "this backend returns no embeddings".into(),
            ))
        })
    }
    /// Asks for a JSON object constrained by `schema` at decode time (OpenAI structured
    /// outputs and llama.cpp's `json_schema`, an Anthropic tool's `input_schema`), answering at
    /// most `max_tokens`: the object and the tokens spent. Used to compile a mandate
    /// (`crate::mandate::model`). Backends without it fail as not configured.
    fn structured<'a>(
        &'a self,
        _prompt: &'a Prompt,
        _name: &'a str,
        _schema: &'a serde_json::Value,
        _max_tokens: u32,
    ) -> BoxFuture<'a, Result<(serde_json::Value, Usage), ReviewerError>> {
        Box::pin(async { Err(ReviewerError::NotConfigured) })
    }
    /// The backend's name, e.g. `openai`.
    fn backend(&self) -> &str;
    /// The model asked, if any.
    fn model(&self) -> Option<&str>;
}

/// The backend a `[reviewer]` section names, built once (its HTTP client from
/// [`crate::transport`]); `backend = "none"` is [`NoReviewer`]. The API key is read from the
/// environment variable `api_key_env` names.
pub fn from_config(
    r: &config::ReviewerConfig,
) -> Result<std::sync::Arc<dyn Reviewer>, crate::transport::ClientError> {
    use config::BackendKind;
    let api_key = r
        .api_key_env
        .as_deref()
        .and_then(|name| std::env::var(name).ok())
        .filter(|k| !k.is_empty());
    // Each attempt gets at most the whole review's budget.
    let timeout = Duration::from_millis(
        r.attempt_timeout_ms
            .unwrap_or(r.timeout_ms)
            .min(r.timeout_ms),
    );
    Ok(match r.backend {
        BackendKind::None => std::sync::Arc::new(NoReviewer),
        BackendKind::Openai => std::sync::Arc::new(openai::OpenAiReviewer::new(
            &r.base_url,
            &r.model,
            api_key,
            timeout,
            r.max_output_tokens,
        )?),
        BackendKind::Anthropic => std::sync::Arc::new(anthropic::AnthropicReviewer::new(
            &r.base_url,
            &r.model,
            api_key,
            timeout,
            r.max_output_tokens,
        )?),
    })
}

/// The `none` backend: every review fails as not configured (a deny by fallback).
#[derive(Debug, Default)]
pub struct NoReviewer;

impl Reviewer for NoReviewer {
    fn review<'a>(
        &'a self,
        _prompt: &'a Prompt,
    ) -> BoxFuture<'a, Result<ReviewOutput, ReviewerError>> {
        Box::pin(async { Err(ReviewerError::NotConfigured) })
    }
    fn backend(&self) -> &str {
        "none"
    }
    fn model(&self) -> Option<&str> {
        None
    }
}

/// The verdict schema, compiled once.
static VALIDATOR: std::sync::LazyLock<Result<jsonschema::Validator, String>> =
    std::sync::LazyLock::new(|| {
        jsonschema::validator_for(&verdict_schema()).map_err(|e| e.to_string())
    });

/// Parses and validates a verdict from the model's text.
pub fn parse_verdict(text: &str) -> Result<Verdict, ReviewerError> {
    let value = extract_json_object(text)?;
    let validator = VALIDATOR
        .as_ref()
        .map_err(|e| ReviewerError::SchemaViolation(format!("schema does not compile: {e}")))?;
    if let Some(first) = validator.iter_errors(&value).next() {
        let at = first.instance_path().to_string();
        let at = if at.is_empty() { "/".to_string() } else { at };
        return Err(ReviewerError::SchemaViolation(format!("{at}: {first}")));
    }
    serde_json::from_value(value).map_err(|e| ReviewerError::SchemaViolation(e.to_string()))
}

/// The JSON object in a model's reply: the whole text, or the object inside a ```json fence or
/// surrounded by prose. Only a complete JSON object counts; nothing is guessed from words.
fn extract_json_object(text: &str) -> Result<serde_json::Value, ReviewerError> {
    let trimmed = text.trim();
    let direct = serde_json::from_str::<serde_json::Value>(trimmed);
    if let Ok(v @ serde_json::Value::Object(_)) = direct {
        return Ok(v);
    }
    let inner = trimmed
        .find("```")
        .and_then(|start| {
            let after = &trimmed[start + 3..];
            let body_start = after.find('\n').map_or(0, |n| n + 1);
            let body = &after[body_start..];
            body.find("```").map(|end| &body[..end])
        })
        .unwrap_or(trimmed);
    let candidate = match (inner.find('{'), inner.rfind('}')) {
        (Some(a), Some(b)) if a < b => &inner[a..=b],
        _ => {
            let why = match direct {
                Err(e) => e.to_string(),
                Ok(_) => "the reply is JSON but not an object".into(),
            };
            return Err(ReviewerError::InvalidJson(why));
        }
    };
    match serde_json::from_str::<serde_json::Value>(candidate) {
        Ok(v @ serde_json::Value::Object(_)) => Ok(v),
        Ok(_) => Err(ReviewerError::InvalidJson(
            "the reply holds no JSON object".into(),
        )),
        Err(e) => Err(ReviewerError::InvalidJson(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_extracted_from_fences_and_prose_but_never_guessed() {
        let v = r#"{"rationale":"ok","risk_level":"low","user_authorization":"high","outcome":"allow"}"#;
        let fenced = format!("```json\n{v}\n```");
        assert!(parse_verdict(&fenced).is_ok());
        let prose = format!("Here is my verdict: {v} Hope that helps.");
        assert!(parse_verdict(&prose).is_ok());
        assert!(matches!(
            parse_verdict("I would allow this, it is safe."),
            Err(ReviewerError::InvalidJson(_))
        ));
        assert!(matches!(
            parse_verdict("outcome: allow"),
            Err(ReviewerError::InvalidJson(_))
        ));
        assert!(matches!(
            parse_verdict("[1,2]"),
            Err(ReviewerError::InvalidJson(_))
        ));
    }

    fn v(risk: RiskLevel, auth: UserAuthorization, outcome: Outcome) -> Verdict {
        Verdict {
            rationale: "r".into(),
            risk_level: risk,
            user_authorization: auth,
            outcome,
        }
    }

    #[test]
    fn mapping_follows_thresholds() {
        use Outcome::*;
        use RiskLevel::*;
        use UserAuthorization as U;
        assert_eq!(v(Critical, U::High, Allow).decision(), Decision::Deny);
        assert_eq!(v(High, U::Medium, Allow).decision(), Decision::Deny);
        assert_eq!(v(High, U::High, Allow).decision(), Decision::Allow);
        assert_eq!(v(High, U::High, Deny).decision(), Decision::Deny);
        assert_eq!(v(Medium, U::Unknown, Allow).decision(), Decision::Allow);
        assert_eq!(v(Low, U::High, Deny).decision(), Decision::Deny);
    }

    #[test]
    fn verdicts_are_validated() {
        let ok = r#"{"rationale":"fine","risk_level":"low","user_authorization":"high","outcome":"allow"}"#;
        assert_eq!(parse_verdict(ok).map(|v| v.decision()), Ok(Decision::Allow));
        assert!(matches!(
            parse_verdict("not json"),
            Err(ReviewerError::InvalidJson(_))
        ));
        let missing = r#"{"rationale":"x","risk_level":"low","outcome":"allow"}"#;
        assert!(matches!(
            parse_verdict(missing),
            Err(ReviewerError::SchemaViolation(_))
        ));
        let bad_enum = r#"{"rationale":"x","risk_level":"none","user_authorization":"high","outcome":"allow"}"#;
        assert!(matches!(
            parse_verdict(bad_enum),
            Err(ReviewerError::SchemaViolation(_))
        ));
        let extra = r#"{"rationale":"x","risk_level":"low","user_authorization":"high","outcome":"allow","x":1}"#;
        assert!(matches!(
            parse_verdict(extra),
            Err(ReviewerError::SchemaViolation(_))
        ));
    }

    /// P(deny): the decision's labels scored.
    fn p_deny<'a>(
        candidates: impl IntoIterator<Item = (&'a str, f64)>,
        sampled: Option<(&'a str, f64)>,
    ) -> Result<f64, ReviewerError> {
        label_probs(Question::DECISION.labels, candidates, sampled).map(|p| p[1])
    }

    #[test]
    fn scores_are_renormalised_over_the_labels_and_never_guessed() {
        let p = p_deny(
            [
                ("deny", -0.5f64),
                ("allow", -1.5),
                ("Den", -3.0),
                ("`", -0.1),
            ],
            None,
        )
        .expect("scores");
        let (d, a) = ((-0.5f64).exp() + (-3.0f64).exp(), (-1.5f64).exp());
        assert!((p - d / (d + a)).abs() < 1e-12);
        assert!(p_deny([(" Allow", -0.01f64)], None).is_ok_and(|p| p == 0.0));
        assert!(matches!(
            p_deny([("`", -0.1f64), ("{", -2.0)], None),
            Err(ReviewerError::InvalidJson(_))
        ));
        assert!(p_deny(std::iter::empty(), None).is_err());
        assert!(p_deny([("deny", f64::NAN)], None).is_err());
        assert!(p_deny([("deny", 0.7f64)], None).is_err());
        // Single letters are too ambiguous to count for either label.
        assert!(p_deny([("d", -0.1f64), ("a", -0.1)], None).is_err());
        // ...but the sampled token under the label grammar counts for the label it begins.
        assert!(p_deny([("I", -1.9f64)], Some(("d", -6.0))).is_ok_and(|p| p == 1.0));
    }

    #[test]
    fn every_question_is_scored_over_its_own_labels() {
        let yes = label_probs(
            Question::AUTHORIZED.labels,
            [("yes", -0.2f64), ("No", -1.8), ("deny", -0.1)],
            None,
        )
        .expect("scores");
        let (y, n) = ((-0.2f64).exp(), (-1.8f64).exp());
        assert!((yes[1] - y / (y + n)).abs() < 1e-12, "{yes:?}");
        // One-character labels count one-character candidates, and nothing else.
        let digits = label_probs(
            &["1", "2", "3"],
            [("3", -0.5f64), (" 2", -1.0), ("x", -0.1), ("37", -0.2)],
            None,
        )
        .expect("scores");
        assert!(
            digits[2] > digits[1] && digits[1] > 0.0 && digits[0] == 0.0,
            "{digits:?}"
        );
        assert!(label_probs(Question::AUTHORIZED.labels, [("maybe", -0.1f64)], None).is_err());
        assert_eq!(Question::AUTHORIZED.grammar(), r#"root ::= "no" | "yes""#);
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(human_duration(Duration::from_millis(30_000)), "30 s");
        assert_eq!(human_duration(Duration::from_millis(1500)), "1500 ms");
    }
}
