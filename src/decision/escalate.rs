//! When a rule's allow is not the last word: an action that a rule allows but that raises a
//! high or critical risk signal, or switches a safeguard off, goes to the reviewer (as in strict
//! mode); so does a write that brings in a new source of code, grants access or deletes data (a
//! migration's conditional `DELETE`), whatever the severity. The rule named the action ("edit workspace files", "run pytest"); it did not name
//! turning TLS verification off in the code it edits, or skipping the hooks. This only ever
//! makes a decision stricter: a deny rule still denies, and nothing is allowed that a rule did
//! not allow.

use crate::verdict::{Category, Severity, Signal};

/// Why a rule-allowed action must still be reviewed, if it must; `write` for a file write,
/// whose rule (`Edit(/**)`) named editing files, not the code or access the edit brings in.
pub fn rule_allow(signals: &[Signal], write: bool) -> Option<String> {
    let found: Vec<String> = signals
        .iter()
        .filter(|s| {
            s.severity >= Severity::High
                || s.category == Category::SafeguardBypass
                || (write
                    && matches!(
                        s.category,
                        Category::SupplyChain | Category::Privilege | Category::Destructive
                    ))
        })
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
        assert!(rule_allow(&[], false).is_none());
        assert!(rule_allow(&[s(Category::NetworkEgress, Severity::Medium)], false).is_none());
        assert!(rule_allow(&[s(Category::SafeguardBypass, Severity::Medium)], false).is_some());
        assert!(rule_allow(&[s(Category::Persistence, Severity::High)], false).is_some());
        assert!(rule_allow(&[s(Category::Destructive, Severity::Critical)], false).is_some());
        // A write's new code source or access grant is reviewed at any severity; a command's
        // medium one is not, and a write's medium persistence (a CI file) is not.
        assert!(rule_allow(&[s(Category::SupplyChain, Severity::Medium)], true).is_some());
        assert!(rule_allow(&[s(Category::Privilege, Severity::Medium)], true).is_some());
        assert!(rule_allow(&[s(Category::Destructive, Severity::Medium)], true).is_some());
        assert!(rule_allow(&[s(Category::Destructive, Severity::Medium)], false).is_none());
        assert!(rule_allow(&[s(Category::SupplyChain, Severity::Medium)], false).is_none());
        assert!(rule_allow(&[s(Category::Persistence, Severity::Medium)], true).is_none());
    }
}
