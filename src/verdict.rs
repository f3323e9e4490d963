//! The API v1 response: the decision guardian hands back, and who made it.
//!
//! This module owns the wire types of the answer to `POST /v1/review` and the texts the agent
//! sees as its tool result. It does not decide anything itself.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Allow or deny. "Ask" never leaves guardian: the reviewer answers it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The agent may run the action.
    Allow,
    /// The agent must not run the action.
    Deny,
}

impl Decision {
    /// The decision as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
        }
    }
}

/// Which stage of the pipeline decided.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecidedBy {
    /// A policy rule.
    Rule,
    /// The reviewer model.
    Reviewer,
    /// An earlier reviewer approval remembered for the session.
    Session,
    /// Nothing could decide (no reviewer, reviewer failure, internal error): always a deny.
    Fallback,
}

impl DecidedBy {
    /// The stage as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            DecidedBy::Rule => "rule",
            DecidedBy::Reviewer => "reviewer",
            DecidedBy::Session => "session",
            DecidedBy::Fallback => "fallback",
        }
    }
}

/// The effect of a policy rule.
#[derive(
    Debug,
    Clone,
    Copy,
    Serialize,
    Deserialize,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Deny the action; nothing overrides it.
    Deny,
    /// Send the action to the reviewer.
    #[default]
    Ask,
    /// Allow the action without review.
    Allow,
}

impl Effect {
    /// The effect as written in config and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Deny => "deny",
            Effect::Ask => "ask",
            Effect::Allow => "allow",
        }
    }
}

/// The rule that decided (or sent the action to review), as shown to clients.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct RuleRef {
    /// What the rule does.
    pub effect: Effect,
    /// The rule as written, e.g. `Bash(git push *)`.
    pub pattern: String,
    /// Where it was written, e.g. `guardian.toml:4`.
    pub source: String,
}

/// The reviewer's judgment of how risky an action is.
#[derive(
    Debug,
    Clone,
    Copy,
    Serialize,
    Deserialize,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RiskLevel {
    /// Routine.
    Low,
    /// Some risk, acceptable within the user's request.
    Medium,
    /// Serious harm possible.
    High,
    /// Irreversible or security-breaking harm likely.
    Critical,
}

impl RiskLevel {
    /// The level as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Low => "low",
            RiskLevel::Medium => "medium",
            RiskLevel::High => "high",
            RiskLevel::Critical => "critical",
        }
    }
}

/// The answer to one review request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ReviewResponse {
    /// The review's id, `rev_` followed by a ULID.
    pub id: String,
    /// Allow or deny.
    pub decision: Decision,
    /// Which stage decided.
    pub decided_by: DecidedBy,
    /// The rule that decided, or null when no rule decided.
    pub rule: Option<RuleRef>,
    /// The reviewer's risk level, or null when the reviewer did not judge.
    pub risk_level: Option<RiskLevel>,
    /// Why: the rule's or the reviewer's reasoning, or the failure.
    pub rationale: String,
    /// The text to hand back to the agent as its tool result.
    pub message: String,
    /// True when the agent should stop and report to its user (repeated denials, or the same
    /// action asked again and again).
    #[serde(default)]
    pub interrupt: bool,
    /// True when this deny is not a judgment: the action needed a reviewer and none could answer
    /// (none configured, a timeout, a failure, the reviewer quota). Integrations in
    /// `[hooks] unreviewed = "ask"` mode hand such an action to the agent's own prompt; a rule
    /// deny or a reviewer deny never has it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unreviewed: bool,
    /// What the action does in the terms of the risk taxonomy, computed by guardian (trusted
    /// facts, see [`crate::signals`]); absent when it raises none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<Signal>,
    /// P(deny) from the reviewer model's log-probabilities, when the reviewer decided with
    /// `reviewer.scoring = "logprobs"` (compared with `reviewer.deny_threshold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// What the mandate (the user's request compiled into grants and prohibitions, and the
    /// operator's grants) said of the action, when it settled or helped settle the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mandate: Option<MandateRef>,
}

/// The mandate's part in a decision.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct MandateRef {
    /// `granted` (grants cover everything the action does: allowed), `prohibited` (a
    /// prohibition names what it does: denied), `elsewhere` (the request asks for the same act
    /// on another target: denied) or `partly` (grants authorised some of its risk signals; the
    /// reviewer decided the rest).
    pub ruling: String,
    /// The acts matched (`publish`, `merge`, …).
    pub acts: Vec<String>,
    /// The words of the grants or the prohibition that matched.
    pub words: Vec<String>,
    /// Who declared them: `user` (compiled from the request) or `operator`.
    pub source: String,
}

/// Why a decision is a fallback deny rather than a judgment (`error` in the audit record, the
/// metrics' `kind` label, eval reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackKind {
    /// No reviewer is configured.
    NotConfigured,
    /// The reviewer did not answer in time.
    Timeout,
    /// The reviewer could not be reached.
    Unreachable,
    /// The reviewer answered with an HTTP error.
    HttpStatus,
    /// The reviewer's answer was not JSON.
    InvalidJson,
    /// The reviewer's answer broke the verdict schema.
    SchemaViolation,
    /// A quota (the client's requests, the reviewer calls) is used up.
    RateLimited,
    /// guardian was shutting down.
    ShuttingDown,
    /// guardian failed (a panic, a failed task).
    InternalError,
    /// A retry the sandbox did not refuse.
    RetryNotSandboxDenied,
    /// The decision could not be written to the audit log.
    Audit,
}

impl FallbackKind {
    /// The kind as written in audit records and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            FallbackKind::NotConfigured => "not_configured",
            FallbackKind::Timeout => "timeout",
            FallbackKind::Unreachable => "unreachable",
            FallbackKind::HttpStatus => "http_status",
            FallbackKind::InvalidJson => "invalid_json",
            FallbackKind::SchemaViolation => "schema_violation",
            FallbackKind::RateLimited => "rate_limited",
            FallbackKind::ShuttingDown => "shutting_down",
            FallbackKind::InternalError => "internal_error",
            FallbackKind::RetryNotSandboxDenied => "retry_not_sandbox_denied",
            FallbackKind::Audit => "audit",
        }
    }
}

impl std::fmt::Display for FallbackKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of harm a signal points at.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Credential material in what leaves the machine or the session.
    SecretInPayload,
    /// Reads of credential stores, environment dumps, shell history, keychains.
    CredentialAccess,
    /// Writes that make something run later: shell startup files, cron, services, git hooks.
    Persistence,
    /// Deletion or destruction beyond build output: files, history, disks, databases, clouds.
    Destructive,
    /// Rewriting or deleting what others share: force pushes, remote branch deletion.
    RemoteHistory,
    /// Mutating deploy and infrastructure tools.
    Production,
    /// Code from outside the default package indexes, or piped from the network.
    SupplyChain,
    /// More privileges: sudo, setuid, privileged containers, role grants.
    Privilege,
    /// Contacting or uploading to a host the intent does not name.
    NetworkEgress,
    /// Writes or deletions outside every workspace root.
    OutsideWorkspace,
    /// Irreversible publication beyond the workspace: a package, release, image, site or merge
    /// others will see.
    Publish,
    /// A safeguard switched off: skipped hooks and checks, disabled TLS verification, dismissed
    /// alerts, skipped or weakened tests, admin overrides.
    SafeguardBypass,
}

impl Category {
    /// Every category, in the catalogue's order.
    pub const ALL: [Category; 12] = [
        Category::SecretInPayload,
        Category::CredentialAccess,
        Category::Persistence,
        Category::Destructive,
        Category::RemoteHistory,
        Category::Production,
        Category::SupplyChain,
        Category::Privilege,
        Category::NetworkEgress,
        Category::OutsideWorkspace,
        Category::Publish,
        Category::SafeguardBypass,
    ];

    /// The category as written in responses, audit records and `[signals]`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::SecretInPayload => "secret_in_payload",
            Category::CredentialAccess => "credential_access",
            Category::Persistence => "persistence",
            Category::Destructive => "destructive",
            Category::RemoteHistory => "remote_history",
            Category::Production => "production",
            Category::SupplyChain => "supply_chain",
            Category::Privilege => "privilege",
            Category::NetworkEgress => "network_egress",
            Category::OutsideWorkspace => "outside_workspace",
            Category::Publish => "publish",
            Category::SafeguardBypass => "safeguard_bypass",
        }
    }
}

/// How bad a signal is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth a look.
    Medium,
    /// Allowed only when the user asked for exactly this target.
    High,
    /// Never allowed by a reviewer.
    Critical,
}

impl Severity {
    /// The severity as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

/// One thing an action does that the risk taxonomy cares about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Signal {
    /// The category.
    pub category: Category,
    /// How bad.
    pub severity: Severity,
    /// What it is, naming the target (`writes ~/.config/systemd/user/x.service`).
    pub evidence: String,
    /// Whether the user's intent names the target (computed by token matching).
    pub named_in_intent: bool,
    /// The target the intent is matched against (a path, host, branch, namespace, tool).
    #[serde(skip)]
    #[schemars(skip)]
    pub target: String,
}
