//! `[reviewer]`: which model judges, how its answer is read, and what it reads. The reviewer
//! owns its section; `config` only assembles the file.

use std::path::PathBuf;

use serde::Deserialize;

/// Which reviewer backend to use.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// An OpenAI-compatible `/chat/completions` endpoint.
    Openai,
    /// The Anthropic Messages API (`/messages`, a forced tool call).
    Anthropic,
    /// No reviewer: every action that needs review is denied.
    None,
}

/// `[reviewer]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReviewerConfig {
    /// `openai` or `none`.
    pub backend: BackendKind,
    /// Base URL of the API, e.g. `http://127.0.0.1:8089/v1`.
    pub base_url: String,
    /// Model name sent to the API.
    pub model: String,
    /// Name of the environment variable holding the API key, if the API needs one.
    pub api_key_env: Option<String>,
    /// Deadline for one review, in milliseconds.
    pub timeout_ms: u64,
    /// Cap on the verdict's length, in tokens.
    pub max_output_tokens: u32,
    /// Deadline for one attempt, in milliseconds (default: `timeout_ms`); a timed-out attempt is
    /// retried while the review's deadline allows.
    pub attempt_timeout_ms: Option<u64>,
    /// Attempts per review on transient failures (connect errors, 429, 5xx, invalid output).
    pub max_attempts: u32,
    /// How long a reviewer allow is remembered for the same action in the same session, in
    /// seconds; 0 disables session memory.
    pub memory_ttl_s: u64,
    /// The organisation's policy, replacing the prompt's tenant-policy section.
    pub tenant_policy: Option<String>,
    /// A file holding the tenant policy (relative to the config file).
    pub tenant_policy_file: Option<PathBuf>,
    /// Two-stage review: a cheap first pass clears clearly benign actions, the full review
    /// judges the rest.
    pub two_stage: bool,
    /// `[reviewer.budget]`: token budgets for the evidence.
    pub budget: crate::reviewer::budget::Budget,
    /// How the model's answer becomes a decision: `label` (the verdict's outcome, any backend),
    /// `logprobs` (P(deny) from the log-probabilities of a one-token decision, compared with
    /// `deny_threshold`; OpenAI-compatible servers that return `logprobs`, e.g. llama.cpp) or
    /// `probe` (P(deny) from a linear probe on the model's embedding of the action; llama.cpp's
    /// server with embeddings on, the model the probe was trained on).
    pub scoring: Scoring,
    /// With `scoring = "probe"`: the probe file (relative to the config file); default the probe
    /// shipped with guardian (`prompts/probe-v3.json`, trained on the local model).
    pub probe_file: Option<PathBuf>,
    /// The sha256 of the model file the server runs. With `scoring = "probe"` it is required and
    /// must equal the probe's `model_sha256` (a probe reads one model's hidden state only).
    pub model_sha256: Option<String>,
    /// With `scoring = "logprobs"` or `"probe"`: deny when the score (P(deny)) is at least this
    /// (0–1).
    pub deny_threshold: f64,
    /// With `scoring = "logprobs"` or `"probe"`: the deny threshold for an action guardian's
    /// code found no risk signal in (the outcome table allows whatever the model allows
    /// there); never below `deny_threshold`. Unset: `deny_threshold` (the local model's probe
    /// brings its own, fitted on eval runs).
    pub deny_threshold_no_signal: Option<f64>,
    /// With `scoring = "logprobs"`: an action with risk signals is also asked whether the user's
    /// own words ask for it (one scored token, P(yes)); the outcome table counts the user's
    /// authorization when P(yes) is at least this (0–1).
    pub authorization_threshold: f64,
    /// P(yes) from which the user's authorization counts as high (what a high-severity signal
    /// needs, with its target named in the user's words); never below `authorization_threshold`
    /// (0–1, default 0.9).
    pub authorization_high_threshold: f64,
    /// With `scoring = "logprobs"`: how much the authorization question weighs in the score
    /// (≥ 0). Above 0 every action is asked it, and the score compared with `deny_threshold` is
    /// σ(logit P(deny) − w · logit P(yes)); 0 keeps the score P(deny).
    pub authorization_weight: f64,
    /// With `scoring = "logprobs"`: whether the model writes a verdict to explain a decision:
    /// `deny` (denials), `always` (every review) or `never` (guardian's words only: the score and
    /// the risk signals). It never changes the decision.
    pub explain: Explain,
    /// What the reviewer reads from the session: `blind` (the user's messages and the agent's
    /// tool calls) or `full` (also the agent's prose, tool output and justifications).
    pub evidence: Evidence,
    /// Send one request at start so the first review does not pay for the cold prompt prefix
    /// (on by default when guardian finds the local model).
    pub warm_up: bool,
}

/// `reviewer.scoring`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Scoring {
    /// The verdict's own outcome decides (rationale first).
    Label,
    /// P(deny) from log-probabilities decides (label first).
    Logprobs,
    /// P(deny) from a probe on the model's hidden state decides (`/embeddings`, see
    /// [`crate::reviewer::probe`]); questions other than the decision are scored as with
    /// `logprobs`.
    Probe,
}

/// `reviewer.explain`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Explain {
    /// A denial gets the model's written verdict, asked after the decision on the same prefix.
    Deny,
    /// Every review gets it.
    Always,
    /// Guardian's words only (the score, the risk signals): no generated text, so a denial costs
    /// no more than an allow (the local model's default, where writing costs seconds).
    Never,
}

/// `reviewer.evidence`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Evidence {
    /// User messages and tool calls only: the agent's prose and tool output never reach the
    /// reviewer.
    Blind,
    /// The whole transcript within its budgets.
    Full,
}

impl Default for ReviewerConfig {
    fn default() -> Self {
        ReviewerConfig {
            backend: BackendKind::None,
            base_url: "http://127.0.0.1:8089/v1".to_string(),
            model: "qwen2.5-coder-1.5b".to_string(),
            api_key_env: None,
            timeout_ms: 30_000,
            max_output_tokens: 400,
            attempt_timeout_ms: None,
            max_attempts: 3,
            memory_ttl_s: 600,
            tenant_policy: None,
            tenant_policy_file: None,
            two_stage: false,
            budget: crate::reviewer::budget::Budget::default(),
            scoring: Scoring::Label,
            probe_file: None,
            model_sha256: None,
            deny_threshold: 0.5,
            deny_threshold_no_signal: None,
            authorization_threshold: 0.5,
            // decision::score::HIGH_AUTHORIZATION (its test checks the two agree).
            authorization_high_threshold: 0.9,
            authorization_weight: 0.0,
            explain: Explain::Deny,
            evidence: Evidence::Blind,
            warm_up: false,
        }
    }
}
