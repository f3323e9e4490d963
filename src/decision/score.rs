//! A scored review's decision: P(deny) (and the authorization question's P(yes)) against the
//! thresholds, and the reasons guardian writes for it. The thresholds' defaults, and the local
//! model's calibrated values, live here and nowhere else.

use crate::reviewer::config::{Explain, ReviewerConfig};
use crate::reviewer::{Outcome, UserAuthorization, Verdict};
use crate::verdict::{RiskLevel, Signal};

/// The thresholds a score is compared with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// `reviewer.deny_threshold`: deny when the score is at least this.
    pub deny: f64,
    /// `reviewer.deny_threshold_no_signal`: the deny threshold for an action with no risk
    /// signal (never below `deny`); `None`: `deny`.
    pub deny_no_signal: Option<f64>,
    /// `reviewer.authorization_threshold`: P(yes) from which the user's authorization counts.
    pub authorization: f64,
    /// `reviewer.authorization_high_threshold`: P(yes) from which it counts as high (never below
    /// `authorization`).
    pub authorization_high: f64,
    /// `reviewer.authorization_weight`: how much P(yes) weighs in the score (0: not at all).
    pub authorization_weight: f64,
}

/// The defaults of `[reviewer]` (the config's own defaults are tested against these).
pub const DEFAULT: Thresholds = Thresholds {
    deny: 0.5,
    deny_no_signal: None,
    authorization: 0.5,
    authorization_high: HIGH_AUTHORIZATION,
    authorization_weight: 0.0,
};

/// The local model's (Qwen2.5-Coder-1.5B, `scripts/local-model.sh`) thresholds, chosen with
/// `guardian eval --target-false-allow` on the main split (evals/RESULTS.md).
pub const LOCAL_MODEL: Thresholds = Thresholds {
    deny: 0.934,
    deny_no_signal: None,
    authorization: 0.5,
    authorization_high: HIGH_AUTHORIZATION,
    authorization_weight: 0.0,
};

/// The local model's thresholds when its probe scores the decision
/// (`reviewer.scoring = "probe"`): the probe's own threshold, chosen when it was trained
/// (`guardian train`, cross-validated for a target false-allow rate) and shipped in its file,
/// and the dedicated authorization prompt's (`prompts/authorization-v1.md`): P(yes) 0.75 for
/// "medium", the lowest at which P(yes) alone passes at most 10% of the unsafe actions with
/// risk signals of the main split and the over-eager set (317), and 0.78 for "high". "High" is
/// only asked where it decides: every high signal's target named by the user and the probe
/// allowing. There, the unsafe actions of the main split, the over-eager set and the first two
/// fresh sets answer at most 0.736 (14 actions) and the asked-for ones up to 0.90; 0.78 keeps a
/// margin of 0.04 above the highest unsafe answer (evals/RESULTS.md).
pub fn local_probe(probe: &crate::reviewer::probe::Probe) -> Thresholds {
    Thresholds {
        deny: probe.threshold,
        deny_no_signal: probe.no_signal_threshold,
        authorization: 0.75,
        authorization_high: 0.78,
        ..LOCAL_MODEL
    }
}

/// P(yes) of the authorization question from which the user's authorization counts as high
/// (what a high-severity signal needs, with its target named in the intent), when the
/// authorization threshold is lower.
pub const HIGH_AUTHORIZATION: f64 = 0.9;

impl Thresholds {
    /// The thresholds a reviewer config sets.
    pub fn of(r: &ReviewerConfig) -> Thresholds {
        Thresholds {
            deny: r.deny_threshold,
            deny_no_signal: r.deny_threshold_no_signal,
            authorization: r.authorization_threshold,
            authorization_high: r.authorization_high_threshold,
            authorization_weight: r.authorization_weight,
        }
    }
}

/// The risk score of a decision weighed with the authorization question:
/// σ(logit P(deny) − w · logit P(yes)), probabilities clamped to [1e-6, 1 − 1e-6] so that a
/// certain answer stays finite. w = 0 is P(deny) itself.
pub fn combined_score(p_deny: f64, p_yes: f64, weight: f64) -> f64 {
    let logit = |p: f64| {
        let p = p.clamp(1e-6, 1.0 - 1e-6);
        (p / (1.0 - p)).ln()
    };
    let z = logit(p_deny) - weight * logit(p_yes);
    1.0 / (1.0 + (-z).exp())
}

/// A score turned into a decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// P(deny) of the decision question.
    pub p_deny: f64,
    /// P(yes) of the authorization question, when it was asked.
    pub authorization: Option<f64>,
    /// P(yes) when it weighs in the score.
    pub weighed: Option<f64>,
    /// The score compared with the deny threshold.
    pub score: f64,
    /// The deny threshold.
    pub threshold: f64,
    /// Whether the score denies.
    pub denies: bool,
    /// The user's authorization as the outcome table reads it.
    pub user_authorization: UserAuthorization,
}

/// Whether the authorization question must be asked: an action with risk signals (the table
/// needs it), or every action when it weighs in the score.
pub fn asks_authorization(t: &Thresholds, signals: &[Signal]) -> bool {
    !signals.is_empty() || t.authorization_weight > 0.0
}

/// With the probe, where the authorization question costs a second read of the evidence (the
/// embedding shares no prefix with it): whether its answer can change the decision. Not when
/// the score already denies, nor when the outcome table's answer does not depend on it (a
/// critical signal, a high one whose target the user did not name: denied whatever the answer;
/// only medium signals whose targets the user named, or none: allowed in code). Always when it
/// weighs in the score.
pub fn authorization_decides(t: &Thresholds, signals: &[Signal], p_deny: f64) -> bool {
    use crate::verdict::Severity;
    if t.authorization_weight > 0.0 {
        return true;
    }
    if p_deny >= t.deny || signals.iter().any(|s| s.severity == Severity::Critical) {
        return false;
    }
    let mut high = signals
        .iter()
        .filter(|s| s.severity == Severity::High)
        .peekable();
    if high.peek().is_some() {
        return high.all(|s| s.named_in_intent);
    }
    signals
        .iter()
        .any(|s| s.severity == Severity::Medium && !s.named_in_intent)
}

impl Thresholds {
    /// The deny threshold for an action with (`signal_free` false) or without risk signals.
    pub fn deny_for(&self, signal_free: bool) -> f64 {
        match self.deny_no_signal {
            Some(t) if signal_free => t.max(self.deny),
            _ => self.deny,
        }
    }
}

/// Decides a score: P(deny), and P(yes) when the authorization question was asked, for an
/// action with risk signals or, `signal_free`, none (the absence of signals counts: its
/// threshold may be higher, `reviewer.deny_threshold_no_signal`).
pub fn score(p_deny: f64, authorization: Option<f64>, t: &Thresholds, signal_free: bool) -> Scored {
    let weighed = authorization.filter(|_| t.authorization_weight > 0.0);
    let score = weighed.map_or(p_deny, |p_yes| {
        combined_score(p_deny, p_yes, t.authorization_weight)
    });
    let user_authorization = match authorization {
        None => UserAuthorization::Unknown,
        Some(p) if p >= t.authorization.max(t.authorization_high) => UserAuthorization::High,
        Some(p) if p >= t.authorization => UserAuthorization::Medium,
        Some(_) => UserAuthorization::Low,
    };
    Scored {
        p_deny,
        authorization,
        weighed,
        score,
        threshold: t.deny_for(signal_free),
        denies: score >= t.deny_for(signal_free),
        user_authorization,
    }
}

impl Scored {
    /// Whether the model's written verdict is asked for, to explain the decision.
    pub fn wants_explanation(&self, explain: Explain) -> bool {
        match explain {
            Explain::Always => true,
            Explain::Deny => self.denies,
            Explain::Never => false,
        }
    }

    /// How the score compares with the threshold, in words.
    pub fn scored_as(&self) -> String {
        let (score, threshold, p_deny) = (self.score, self.threshold, self.p_deny);
        match self.weighed {
            Some(p_yes) => format!(
                "risk score {score:.2} >= threshold {threshold:.2}, from P(deny) {p_deny:.2} and P(the user asked for it) {p_yes:.2}"
            ),
            None => format!("P(deny) {p_deny:.2} >= threshold {threshold:.2}"),
        }
    }

    /// The rationale: the model's written one (`written`, prefixed with the score on a
    /// denial), or guardian's words from the score and the signals.
    pub fn rationale(
        &self,
        written: Option<String>,
        signals: &[Signal],
        explain: Explain,
    ) -> String {
        let (score, threshold, p_deny) = (self.score, self.threshold, self.p_deny);
        let scored_as = self.scored_as();
        if let Some(w) = written {
            return if self.denies {
                format!("{scored_as}: {w}")
            } else {
                w
            };
        }
        if self.denies && !signals.is_empty() {
            let found: Vec<&str> = signals.iter().map(|s| s.evidence.as_str()).collect();
            format!(
                "the reviewer model judged it risky ({scored_as}); guardian's risk signals: {}",
                found.join("; ")
            )
        } else if self.denies {
            format!(
                "the reviewer model judged it risky ({scored_as}); guardian found no risk signal in it (the model's written explanation {})",
                if explain == Explain::Never {
                    "was not asked for: reviewer.explain = \"never\""
                } else {
                    "failed"
                }
            )
        } else if let Some(p) = self.authorization {
            format!(
                "the reviewer model's risk score {score:.2} is below the threshold {threshold:.2} (P(deny) {p_deny:.2}, P(the user asked for it) {p:.2})"
            )
        } else if signals.is_empty() {
            format!(
                "the reviewer model scored P(deny) {p_deny:.2}, below the threshold {threshold:.2}, and guardian found no risk signal"
            )
        } else {
            // With the probe the authorization question is skipped when the signals decide
            // whatever its answer (authorization_decides).
            format!(
                "the reviewer model scored P(deny) {p_deny:.2}, below the threshold {threshold:.2} (whether the user asked for it was not asked: its answer cannot change the decision for these signals)"
            )
        }
    }

    /// The verdict the score stands for (the outcome table still runs on it).
    pub fn verdict(&self, rationale: String) -> Verdict {
        Verdict {
            rationale,
            risk_level: if self.denies {
                RiskLevel::Medium
            } else {
                RiskLevel::Low
            },
            user_authorization: self.user_authorization,
            outcome: if self.denies {
                Outcome::Deny
            } else {
                Outcome::Allow
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(severity: crate::verdict::Severity, named: bool) -> Signal {
        Signal {
            category: crate::verdict::Category::Destructive,
            severity,
            evidence: "e".into(),
            named_in_intent: named,
            target: "t".into(),
        }
    }

    #[test]
    fn with_the_probe_authorization_is_asked_only_when_it_can_change_the_decision() {
        use crate::verdict::Severity::{Critical, High, Medium};
        let t = Thresholds {
            deny: 0.3,
            ..LOCAL_MODEL
        };
        let asks = |signals: &[Signal], p: f64| authorization_decides(&t, signals, p);
        assert!(!asks(&[], 0.1), "no signal: the table allows");
        assert!(!asks(&[sig(Medium, false)], 0.5), "the score denies");
        assert!(asks(&[sig(Medium, false)], 0.1));
        assert!(
            !asks(&[sig(Medium, true)], 0.1),
            "named medium: allowed in code"
        );
        assert!(asks(&[sig(High, true), sig(Medium, true)], 0.1));
        assert!(
            !asks(&[sig(High, false)], 0.1),
            "unnamed high: denied whatever"
        );
        assert!(
            !asks(&[sig(Critical, true)], 0.1),
            "critical: denied whatever"
        );
        let weighed = Thresholds {
            authorization_weight: 1.0,
            ..t
        };
        assert!(
            authorization_decides(&weighed, &[], 0.9),
            "it weighs in the score"
        );
    }

    #[test]
    fn an_action_without_signals_is_held_to_its_own_threshold_never_below_the_other() {
        let t = Thresholds {
            deny: 0.25,
            deny_no_signal: Some(0.36),
            ..LOCAL_MODEL
        };
        let s = score(0.3, None, &t, true);
        assert!(!s.denies, "{s:?}");
        assert_eq!(s.threshold, 0.36);
        assert!(score(0.3, None, &t, false).denies, "with signals: 0.25");
        assert!(score(0.36, None, &t, true).denies);
        let lower = Thresholds {
            deny_no_signal: Some(0.1),
            ..t
        };
        assert!(
            !score(0.2, None, &lower, true).denies,
            "never below the deny threshold"
        );
        let unset = Thresholds {
            deny_no_signal: None,
            ..t
        };
        assert!(
            score(0.3, None, &unset, true).denies,
            "unset: one threshold"
        );
        let rationale = score(0.3, None, &t, true).rationale(None, &[], Explain::Never);
        assert!(
            rationale.contains("below the threshold 0.36"),
            "{rationale}"
        );
    }

    #[test]
    fn the_config_defaults_are_these() {
        assert_eq!(Thresholds::of(&ReviewerConfig::default()), DEFAULT);
    }

    #[test]
    fn a_score_against_the_thresholds() {
        let s = score(0.95, None, &LOCAL_MODEL, false);
        assert!(s.denies);
        assert_eq!(s.user_authorization, UserAuthorization::Unknown);
        let s = score(0.93, Some(0.95), &LOCAL_MODEL, false);
        assert!(!s.denies);
        assert_eq!(s.user_authorization, UserAuthorization::High);
        assert_eq!(
            score(0.2, Some(0.6), &DEFAULT, false).user_authorization,
            UserAuthorization::Medium
        );
        assert_eq!(
            score(0.2, Some(0.1), &DEFAULT, false).user_authorization,
            UserAuthorization::Low
        );
        let weighed = Thresholds {
            authorization_weight: 1.0,
            ..DEFAULT
        };
        // A request the user clearly made lowers the score below P(deny).
        let s = score(0.6, Some(0.9), &weighed, false);
        assert!(s.score < 0.6 && !s.denies, "{s:?}");
        assert!((combined_score(0.7, 0.3, 0.0) - 0.7).abs() < 1e-9);
    }

    #[test]
    fn high_authorization_starts_at_its_own_threshold_never_below_medium() {
        let t = Thresholds {
            authorization: 0.75,
            authorization_high: 0.85,
            ..DEFAULT
        };
        let auth = |p: f64| score(0.1, Some(p), &t, false).user_authorization;
        assert_eq!(auth(0.74), UserAuthorization::Low);
        assert_eq!(auth(0.8), UserAuthorization::Medium);
        assert_eq!(auth(0.86), UserAuthorization::High);
        let inverted = Thresholds {
            authorization: 0.9,
            authorization_high: 0.6,
            ..DEFAULT
        };
        assert_eq!(
            score(0.1, Some(0.7), &inverted, false).user_authorization,
            UserAuthorization::Low,
            "high is never below medium"
        );
        assert_eq!(
            score(0.1, Some(0.95), &inverted, false).user_authorization,
            UserAuthorization::High
        );
    }

    #[test]
    fn an_allowing_score_never_says_no_signal_was_found_when_one_was() {
        use crate::verdict::Severity;
        let allowed = score(0.02, None, &DEFAULT, false);
        let none = allowed.rationale(None, &[], Explain::Never);
        assert!(none.contains("guardian found no risk signal"), "{none}");
        // With the probe, an unnamed high signal denies whatever the authorization answer,
        // so the question is skipped: the rationale must not deny the signal exists.
        let with = allowed.rationale(None, &[sig(Severity::High, false)], Explain::Never);
        assert!(!with.contains("no risk signal"), "{with}");
        assert!(with.contains("was not asked"), "{with}");
    }
}
