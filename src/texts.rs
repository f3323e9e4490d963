//! What guardian tells the agent: every message of a decision made in the pipeline, in one
//! place, so the wording (and the instruction not to work around a denial) stays consistent
//! across rules, the reviewer and failures. The rationale (why, for the audit log) is written
//! where the decision is made; the message (what the agent reads) comes from here.

/// Appended to every denial that is a judgment or a failure the agent should not route around.
pub const DO_NOT_WORK_AROUND: &str = "Do not try to reach the same result another way; if the task needs this, stop and ask the user.";

/// A rule denied the action.
pub fn rule_deny(pattern: &str) -> String {
    format!("denied by policy: {pattern}. {DO_NOT_WORK_AROUND}")
}

/// The user's request (or the operator's mandate) forbids the action.
pub fn mandate_deny(words: &str) -> String {
    format!("denied: the request forbids this (\"{words}\"). {DO_NOT_WORK_AROUND}")
}

/// The request asks for the same act on another target.
pub fn mandate_elsewhere(words: &str) -> String {
    format!(
        "denied: the request asks for this on another target (\"{words}\"). {DO_NOT_WORK_AROUND}"
    )
}

/// The reviewer allowed the action.
pub fn reviewer_allow(risk: &str, rationale: &str) -> String {
    format!("allowed by the reviewer (risk: {risk}): {rationale}")
}

/// The reviewer denied the action.
pub fn reviewer_deny(risk: &str, rationale: &str) -> String {
    format!("denied by the reviewer (risk: {risk}): {rationale} {DO_NOT_WORK_AROUND}")
}

/// No reviewer is configured and no rule allows the action.
pub fn no_reviewer(why: &str) -> String {
    format!(
        "denied: no reviewer is configured (reviewer.backend = \"none\"), and no rule decides this action alone ({why}). {DO_NOT_WORK_AROUND}"
    )
}

/// The reviewer could not answer (timeout, failure): no judgment.
pub fn reviewer_failed(error: &dyn std::fmt::Display) -> String {
    format!(
        "denied: {error}, so this action could not be reviewed. This is not a judgment that the action is risky; retry later or ask the user to run it."
    )
}

/// The reviewer call quota is used up: no judgment.
pub fn reviewer_quota(per_minute: u32) -> String {
    format!(
        "denied: rate limited: guardian's quota of {per_minute} reviewer calls per minute is used up, so this action could not be reviewed. This is not a judgment that the action is risky; retry later."
    )
}

/// The client sent more review requests than its quota.
pub fn client_over_quota(per_minute: u32) -> String {
    format!(
        "denied: rate limited: this client sent more than {per_minute} review requests per minute. Wait before trying again."
    )
}

/// A retry that the sandbox did not refuse.
pub fn retry_not_sandbox_denied() -> String {
    format!(
        "denied: only sandbox denials may escalate (retry.sandbox_denied is not true). Fix the failure instead of retrying outside the sandbox. {DO_NOT_WORK_AROUND}"
    )
}

/// guardian was shutting down before the review finished.
pub fn shutting_down() -> String {
    format!("denied: guardian is shutting down; this action was not reviewed. {DO_NOT_WORK_AROUND}")
}

/// guardian failed while reviewing (a panic, a failed task).
pub fn internal_error() -> String {
    format!(
        "denied: guardian hit an internal error while reviewing this action. {DO_NOT_WORK_AROUND}"
    )
}

/// The request named nothing to review.
pub fn nothing_to_review() -> String {
    format!("denied: the request named nothing to review. {DO_NOT_WORK_AROUND}")
}

/// The decision could not be written to the audit log.
pub fn unrecorded() -> String {
    format!(
        "denied: guardian could not record this decision in its audit log, and never lets an unrecorded action run. {DO_NOT_WORK_AROUND}"
    )
}

/// The session's circuit breaker tripped: appended to the denial.
pub fn stop(why: &str) -> String {
    format!(
        "\nSTOP: {why} in this session. Do not try again or try alternatives: stop now and report to your user what you were trying to do and what was denied."
    )
}
