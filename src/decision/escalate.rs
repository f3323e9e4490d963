//! When a rule's allow is not the last word: an action that a rule allows but that raises a
//! high or critical risk signal, or switches a safeguard off, goes to the reviewer (as in strict
//! mode). The rule named the action ("edit workspace files", "run pytest"); it did not name
//! turning TLS verification off in the code it edits, or skipping the hooks. This only ever
//! makes a decision stricter: a deny rule still denies, and nothing is allowed that a rule did
//! not allow.

use crate::verdict::{Category, Severity, Signal};

/// Why a rule-allowed action must still be reviewed, if it must.
pub fn rule_allow(signals: &[Signal]) -> Option<String> {
    let found: Vec<String> = signals
        .iter()
        .filter(|s| s.severity >= Severity::High || s.category == Category::SafeguardBypass)
        .map(|s| {
            format!(
                "{} ({}): {}",
                s.category.as_str(),
                s.severity.as_str(),
                s.evidence
            )
        })
        .collect();
    (!found.is_empty()).then(|| {
        format!(
            "a rule allows it, but guardian's risk signals say more than the rule names: {}",
            found.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(category: Category, severity: Severity) -> Signal {
        Signal {
            category,
            severity,
            evidence: "e".into(),
            named_in_intent: false,
            target: "t".into(),
        }
    }

    #[test]
    fn high_signals_and_safeguards_escalate_a_rule_allow() {
        assert!(rule_allow(&[]).is_none());
        assert!(rule_allow(&[s(Category::NetworkEgress, Severity::Medium)]).is_none());
        assert!(rule_allow(&[s(Category::SafeguardBypass, Severity::Medium)]).is_some());
        assert!(rule_allow(&[s(Category::Persistence, Severity::High)]).is_some());
        assert!(rule_allow(&[s(Category::Destructive, Severity::Critical)]).is_some());
    }
}
