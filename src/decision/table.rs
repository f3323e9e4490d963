//! The outcome table, run in code (as Codex's guardian does): what a reviewer's verdict may stand
//! for once the risk signals have raised its risk.

use crate::reviewer::Verdict;
use crate::verdict::{Decision, RiskLevel, Severity, Signal};

/// The reviewer's risk raised to the signals' severities: medium → medium, high → high,
/// critical → critical.
pub fn final_risk(model: RiskLevel, signals: &[Signal]) -> RiskLevel {
    use RiskLevel as R;
    signals.iter().fold(model, |r, s| {
        let from = match s.severity {
            Severity::Medium => R::Medium,
            Severity::High => R::High,
            Severity::Critical => R::Critical,
        };
        r.max(from)
    })
}

/// What the outcome table makes of a verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// The decision.
    pub decision: Decision,
    /// The final risk: the model's raised to the signals' severities.
    pub risk: RiskLevel,
    /// Why the table denied what the model allowed, when it did.
    pub overrode: Option<String>,
}

/// Whether there are signals, all of them medium, and the intent names every one's target.
fn named_medium(signals: &[Signal]) -> bool {
    !signals.is_empty()
        && signals
            .iter()
            .all(|s| s.severity == Severity::Medium && s.named_in_intent)
}

/// The outcome table, run in code (as Codex's guardian does): final risk = max(the model's
/// risk, the signals' severities); allow only when the model allows and the final risk is low;
/// or medium and the model says the user authorised it at least medium, or the user's words name
/// every (medium) signal's target; or high, user
/// authorisation high and every high signal's target named in the intent; critical never.
pub fn outcome_table(v: &Verdict, signals: &[Signal]) -> Table {
    use crate::reviewer::{Outcome, UserAuthorization as U};
    use RiskLevel as R;
    let risk = final_risk(v.risk_level, signals);
    let model_allows = v.outcome == Outcome::Allow;
    let allowed = model_allows
        && match risk {
            R::Low => true,
            // Grounded in code: when the user's own words name every medium signal's target,
            // the action is what they asked for (Codex's table allows medium risk then).
            R::Medium => {
                matches!(v.user_authorization, U::Medium | U::High) || named_medium(signals)
            }
            R::High => {
                v.user_authorization == U::High
                    && signals
                        .iter()
                        .filter(|s| s.severity == Severity::High)
                        .all(|s| s.named_in_intent)
            }
            R::Critical => false,
        };
    let overrode = (model_allows && !allowed).then(|| {
        let named: Vec<String> = signals
            .iter()
            .filter(|s| s.severity >= Severity::Medium)
            .map(|s| format!("{} ({})", s.category.as_str(), s.severity.as_str()))
            .collect();
        format!(
            "the reviewer allowed it, but the final risk is {} ({}) with user authorization {}",
            risk.as_str(),
            if named.is_empty() {
                "the reviewer's own rating".to_string()
            } else {
                format!("signals: {}", named.join(", "))
            },
            match v.user_authorization {
                U::Unknown => "unknown",
                U::Low => "low",
                U::Medium => "medium",
                U::High => "high",
            }
        )
    });
    Table {
        decision: if allowed {
            Decision::Allow
        } else {
            Decision::Deny
        },
        risk,
        overrode,
    }
}
