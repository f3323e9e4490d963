//! Session state: remembered reviewer approvals, the circuit breaker, and review coalescing.
//!
//! This module owns what guardian keeps between requests of one agent session:
//! - **memory**: a reviewer allow (risk low or medium) for an action, keyed on the normalised
//!   action, the sandbox, and a fingerprint of the policy and prompt version, for a TTL. Never
//!   across sessions; the pipeline never consults it in strict mode or for sandbox retries.
//! - **breaker**: after N denials in a row, M denials among the last W decisions, or the same
//!   action denied K times in a row, a denial carries `interrupt: true`; an allowed action never
//!   does (polling an allowed read is not a runaway agent).
//! - **coalescing**: identical reviews in flight at once share one reviewer call.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use serde::Deserialize;

use crate::reviewer::{ReviewOutput, ReviewerError, UserAuthorization};
use crate::verdict::{Decision, RiskLevel};

/// `[breaker]`: per-session thresholds after which denials carry `"interrupt": true`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BreakerConfig {
    /// Denials in a row.
    pub consecutive_denials: usize,
    /// Denials among the last `window` decisions.
    pub window_denials: usize,
    /// How many recent decisions `window_denials` counts over.
    pub window: usize,
    /// The same action denied this many times in a row (a doom loop); allowed repeats never
    /// count.
    pub repeats: usize,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            consecutive_denials: 3,
            window_denials: 10,
            window: 50,
            repeats: 3,
        }
    }
}

/// A session's counts after a decision, for the breaker's verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BreakerCounts {
    /// Denials in a row, this one included.
    pub consecutive_denials: usize,
    /// Denials among the last `window_len` decisions.
    pub window_denials: usize,
    /// How many decisions the window holds now.
    pub window_len: usize,
    /// How many times in a row the same action was denied.
    pub repeats: usize,
}

/// Sessions kept at most; the least recently seen are dropped beyond it.
const MAX_SESSIONS: usize = 10_000;
/// Remembered approvals per session, at most.
const MAX_MEMORY_PER_SESSION: usize = 1_000;

/// A remembered reviewer approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remembered {
    /// The review that approved it.
    pub review_id: String,
    /// The reviewer's risk level then.
    pub risk_level: RiskLevel,
    /// The reviewer's reading of the user's authorisation then.
    pub user_authorization: UserAuthorization,
    /// The reviewer's rationale then.
    pub rationale: String,
    expires: Instant,
}

#[derive(Debug, Default)]
struct SessionState {
    memory: HashMap<String, Remembered>,
    recent: VecDeque<Decision>,
    consecutive_denials: usize,
    last_action: Option<String>,
    repeats: usize,
    last_seen: Option<Instant>,
}

/// All sessions' state.
pub struct Sessions {
    /// Sharded: requests of different sessions never wait on one lock.
    sessions: dashmap::DashMap<String, SessionState>,
    inflight: Mutex<HashMap<String, Arc<OnceCell<ReviewResult>>>>,
    breaker: BreakerConfig,
    ttl: Duration,
}

/// A review's result, shared by every caller of a coalesced review.
pub type ReviewResult = Result<ReviewOutput, ReviewerError>;

impl Sessions {
    /// Empty state with these thresholds; `ttl` zero disables memory.
    pub fn new(breaker: BreakerConfig, ttl: Duration) -> Sessions {
        Sessions {
            sessions: dashmap::DashMap::new(),
            inflight: Mutex::new(HashMap::new()),
            breaker,
            ttl,
        }
    }

    fn with<T>(&self, session: &str, f: impl FnOnce(&mut SessionState) -> T) -> T {
        if let Some(mut state) = self.sessions.get_mut(session) {
            state.last_seen = Some(Instant::now());
            return f(&mut state);
        }
        // A new session (no shard lock is held here).
        if self.sessions.len() >= MAX_SESSIONS {
            // Drop the least recently seen tenth.
            let mut by_age: Vec<(String, Option<Instant>)> = self
                .sessions
                .iter()
                .map(|e| (e.key().clone(), e.value().last_seen))
                .collect();
            by_age.sort_by_key(|(_, t)| *t);
            for (k, _) in by_age.into_iter().take(MAX_SESSIONS / 10) {
                self.sessions.remove(&k);
            }
        }
        let mut state = self.sessions.entry(session.to_string()).or_default();
        state.last_seen = Some(Instant::now());
        f(&mut state)
    }

    /// Whether memory is on.
    pub fn memory_enabled(&self) -> bool {
        !self.ttl.is_zero()
    }

    /// A remembered approval for `key` in `session`, if one is still valid.
    pub fn recall(&self, session: &str, key: &str) -> Option<Remembered> {
        if !self.memory_enabled() {
            return None;
        }
        // Looking up never creates a session.
        let mut s = self.sessions.get_mut(session)?;
        match s.memory.get(key) {
            Some(r) if r.expires > Instant::now() => Some(r.clone()),
            Some(_) => {
                s.memory.remove(key);
                None
            }
            None => None,
        }
    }

    /// Remembers a reviewer approval; high and critical risk are never remembered.
    pub fn remember(
        &self,
        session: &str,
        key: &str,
        review_id: &str,
        risk_level: RiskLevel,
        user_authorization: UserAuthorization,
        rationale: &str,
    ) {
        if !self.memory_enabled() || matches!(risk_level, RiskLevel::High | RiskLevel::Critical) {
            return;
        }
        let expires = Instant::now() + self.ttl;
        self.with(session, |s| {
            if s.memory.len() >= MAX_MEMORY_PER_SESSION {
                let now = Instant::now();
                s.memory.retain(|_, r| r.expires > now);
                if s.memory.len() >= MAX_MEMORY_PER_SESSION {
                    return;
                }
            }
            s.memory.insert(
                key.to_string(),
                Remembered {
                    review_id: review_id.to_string(),
                    risk_level,
                    user_authorization,
                    rationale: rationale.to_string(),
                    expires,
                },
            );
        });
    }

    /// Records a decision; returns the session's counts, from which
    /// [`crate::decision::breaker`] tells whether the agent must stop.
    pub fn record(&self, session: &str, action_key: &str, decision: Decision) -> BreakerCounts {
        let window = self.breaker.window;
        self.with(session, |s| {
            // Only denials count as a loop: an allowed action resets the repeat count.
            if decision != Decision::Deny {
                s.last_action = None;
                s.repeats = 0;
            } else if s.last_action.as_deref() == Some(action_key) {
                s.repeats += 1;
            } else {
                s.last_action = Some(action_key.to_string());
                s.repeats = 1;
            }
            s.recent.push_back(decision);
            while s.recent.len() > window {
                s.recent.pop_front();
            }
            if decision == Decision::Deny {
                s.consecutive_denials += 1;
            } else {
                s.consecutive_denials = 0;
            }
            BreakerCounts {
                consecutive_denials: s.consecutive_denials,
                window_denials: s.recent.iter().filter(|d| **d == Decision::Deny).count(),
                window_len: s.recent.len(),
                repeats: s.repeats,
            }
        })
    }

    /// Runs `review` once for all concurrent callers with the same `key`; every caller gets a
    /// clone of the one result.
    pub async fn coalesce<F, Fut>(&self, key: &str, review: F) -> ReviewResult
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = ReviewResult>,
    {
        let cell = {
            let mut map = self
                .inflight
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            Arc::clone(
                map.entry(key.to_string())
                    .or_insert_with(|| Arc::new(OnceCell::new())),
            )
        };
        let result = cell.get_or_init(review).await.clone();
        let mut map = self
            .inflight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if map.get(key).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
            map.remove(key);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions() -> Sessions {
        Sessions::new(BreakerConfig::default(), Duration::from_secs(60))
    }

    #[test]
    fn memory_is_per_session_and_skips_high_risk() {
        let s = sessions();
        s.remember(
            "a",
            "k",
            "rev_1",
            RiskLevel::Low,
            UserAuthorization::High,
            "fine",
        );
        assert!(s.recall("a", "k").is_some());
        assert!(s.recall("b", "k").is_none());
        s.remember(
            "a",
            "h",
            "rev_2",
            RiskLevel::High,
            UserAuthorization::High,
            "risky",
        );
        assert!(s.recall("a", "h").is_none());
        let off = Sessions::new(BreakerConfig::default(), Duration::ZERO);
        off.remember(
            "a",
            "k",
            "rev_1",
            RiskLevel::Low,
            UserAuthorization::High,
            "fine",
        );
        assert!(off.recall("a", "k").is_none());
    }
}
