//! The circuit breaker's verdict: from a session's counts, whether this answer tells the agent
//! to stop and report to its user. Only a denial does (as Codex counts denials): an agent
//! polling an allowed read is doing its job.

use crate::session::{BreakerConfig, BreakerCounts};
use crate::verdict::Decision;

/// Why the agent must stop when the session store could not count this denial (Redis down or
/// slow): the breaker errs towards interrupting, never towards letting a runaway agent go on.
/// An allow never interrupts.
pub fn verdict_uncounted(decision: Decision, why: &str) -> Option<String> {
    (decision == Decision::Deny).then(|| {
        format!(
            "this session's denials could not be counted ({why}), so guardian stops it to be safe"
        )
    })
}

/// Why the agent must stop, when a threshold is reached on a denial.
pub fn verdict(c: &BreakerCounts, b: &BreakerConfig, decision: Decision) -> Option<String> {
    if decision != Decision::Deny {
        return None;
    }
    if b.consecutive_denials > 0 && c.consecutive_denials >= b.consecutive_denials {
        Some(format!("{} denials in a row", c.consecutive_denials))
    } else if b.window_denials > 0 && c.window_denials >= b.window_denials {
        Some(format!(
            "{} denials among the last {} decisions",
            c.window_denials, c.window_len
        ))
    } else if b.repeats > 0 && c.repeats >= b.repeats {
        Some(format!(
            "the same action was denied {} times in a row",
            c.repeats
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Sessions;
    use std::time::Duration;

    /// A session store with these thresholds.
    struct Store(Sessions, BreakerConfig);

    fn sessions() -> Store {
        with(BreakerConfig::default())
    }

    fn with(cfg: BreakerConfig) -> Store {
        Store(Sessions::new(cfg.clone(), Duration::from_secs(60)), cfg)
    }

    /// Records a decision and returns the breaker's verdict on it.
    fn v(s: &Store, session: &str, key: &str, d: Decision) -> Option<String> {
        let counts = futures::executor::block_on(s.0.record(session, key, d)).expect("memory");
        verdict(&counts, &s.1, d)
    }

    #[test]
    fn breaker_thresholds() {
        let s = sessions();
        assert!(v(&s, "a", "x1", Decision::Deny).is_none());
        assert!(v(&s, "a", "x2", Decision::Deny).is_none());
        assert!(v(&s, "a", "x3", Decision::Deny).is_some_and(|w| w.contains("3 denials in a row")));
        assert!(
            v(&s, "b", "y", Decision::Allow).is_none(),
            "sessions are separate"
        );
        // Polling an allowed action never trips it.
        for _ in 0..5 {
            assert!(v(&s, "b", "y", Decision::Allow).is_none());
        }
        let r = with(BreakerConfig {
            consecutive_denials: 0,
            window_denials: 0,
            window: 50,
            repeats: 2,
        });
        assert!(v(&r, "c", "z", Decision::Deny).is_none());
        assert!(
            v(&r, "c", "z", Decision::Deny)
                .is_some_and(|w| w.contains("the same action was denied 2 times"))
        );
        let c = sessions();
        for i in 0..20 {
            let d = if i % 2 == 0 {
                Decision::Deny
            } else {
                Decision::Allow
            };
            let r = v(&c, "c", &format!("k{i}"), d);
            // Only a denial carries the interrupt.
            assert_eq!(r.is_some(), i >= 18 && i % 2 == 0, "at {i}: {r:?}");
        }
    }
}
