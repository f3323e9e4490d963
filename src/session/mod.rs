//! Session state: remembered reviewer approvals, the circuit breaker, and review coalescing.
//!
//! This module owns what guardian keeps between requests of one agent session, and where it is
//! kept (`[session]`: this process's memory, [`memory`], or Redis shared by a fleet, [`redis`]):
//! - **memory**: a reviewer allow (risk low or medium) for an action, keyed on the normalised
//!   action, the sandbox, and a fingerprint of the policy and prompt version, for a TTL. Never
//!   across sessions; the pipeline never consults it in strict mode or for sandbox retries.
//! - **breaker**: after N denials in a row, M denials among the last W decisions, or the same
//!   action denied K times in a row, a denial carries `interrupt: true`; an allowed action never
//!   does (polling an allowed read is not a runaway agent).
//! - **coalescing**: identical reviews in flight at once share one reviewer call (per process).
//! - **quotas**: with Redis, `[limits]` quotas counted for the whole fleet ([`Sessions::take_quota`]).
//!
//! A store that fails (Redis down or slower than `session.deadline_ms`) answers an error: the
//! pipeline then judges the action afresh and lets the breaker interrupt a denial.

pub mod memory;
pub mod redis;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OnceCell;

use serde::{Deserialize, Serialize};

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

/// A remembered reviewer approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remembered {
    /// The review that approved it.
    pub review_id: String,
    /// The reviewer's risk level then.
    pub risk_level: RiskLevel,
    /// The reviewer's reading of the user's authorisation then.
    pub user_authorization: UserAuthorization,
    /// The reviewer's rationale then.
    pub rationale: String,
}

/// `session.store`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    /// This process's memory (the default; `guardian run`, one service).
    Memory,
    /// Redis, shared by every replica.
    Redis,
}

impl StoreKind {
    /// The kind as written in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::Memory => "memory",
            StoreKind::Redis => "redis",
        }
    }
}

/// `[session]`: where session state is kept.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct SessionConfig {
    /// `memory` or `redis`.
    pub store: StoreKind,
    /// With `redis`: the server, `redis://[user:password@]host:port/db` (`rediss://` for TLS).
    pub redis_url: String,
    /// With `redis`: the environment variable holding the password (kept out of the file).
    pub redis_password_env: Option<String>,
    /// With `redis`: the prefix of every key guardian writes.
    pub key_prefix: String,
    /// With `redis`: a session's breaker state expires after this long without a decision (s).
    pub ttl_s: u64,
    /// With `redis`: a store call slower than this fails (closed), in milliseconds.
    pub deadline_ms: u64,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            store: StoreKind::Memory,
            redis_url: "redis://127.0.0.1:6379/0".to_string(),
            redis_password_env: None,
            key_prefix: "guardian:".to_string(),
            ttl_s: 86_400,
            deadline_ms: 150,
        }
    }
}

/// Why the session store did not answer.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum StoreError {
    /// The store is misconfigured.
    #[error("{0}")]
    Config(String),
    /// The store failed (connection refused, an error reply).
    #[error("the session store is unavailable: {0}")]
    Unavailable(String),
    /// The store did not answer within `session.deadline_ms`.
    #[error("the session store did not answer within {} ms", .0.as_millis())]
    Timeout(Duration),
}

enum Store {
    Memory(memory::MemoryStore),
    Redis(Box<redis::RedisStore>),
}

/// All sessions' state.
pub struct Sessions {
    store: Store,
    inflight: Mutex<HashMap<String, Arc<OnceCell<ReviewResult>>>>,
    window: usize,
    ttl: Duration,
    session_ttl: Duration,
}

/// A review's result, shared by every caller of a coalesced review.
pub type ReviewResult = Result<ReviewOutput, ReviewerError>;

impl Sessions {
    /// Empty in-process state with these thresholds; `ttl` zero disables memory.
    pub fn new(breaker: BreakerConfig, ttl: Duration) -> Sessions {
        Sessions {
            store: Store::Memory(memory::MemoryStore::default()),
            inflight: Mutex::new(HashMap::new()),
            window: breaker.window,
            ttl,
            session_ttl: Duration::from_secs(SessionConfig::default().ttl_s),
        }
    }

    /// The store `[session]` names (Redis is connected on first use, so guardian starts while
    /// it is down).
    pub fn from_config(
        cfg: &SessionConfig,
        breaker: BreakerConfig,
        ttl: Duration,
    ) -> Result<Sessions, StoreError> {
        let mut s = Sessions::new(breaker, ttl);
        s.session_ttl = Duration::from_secs(cfg.ttl_s.max(1));
        if cfg.store == StoreKind::Redis {
            s.store = Store::Redis(Box::new(redis::RedisStore::open(cfg)?));
        }
        Ok(s)
    }

    /// Which store this is.
    pub fn kind(&self) -> StoreKind {
        match self.store {
            Store::Memory(_) => StoreKind::Memory,
            Store::Redis(_) => StoreKind::Redis,
        }
    }

    /// Counts one request against the fleet-wide quota `key` of `per_minute`: `None` for the
    /// in-process store (this process's own limiter counts), else whether it is within it.
    pub async fn take_quota(
        &self,
        key: &str,
        per_minute: std::num::NonZeroU32,
    ) -> Option<Result<bool, StoreError>> {
        match &self.store {
            Store::Memory(_) => None,
            Store::Redis(r) => Some(r.take(key, per_minute).await),
        }
    }

    /// Whether memory is on.
    pub fn memory_enabled(&self) -> bool {
        !self.ttl.is_zero()
    }

    /// A remembered approval for `key` in `session`, if one is still valid.
    pub async fn recall(&self, session: &str, key: &str) -> Result<Option<Remembered>, StoreError> {
        if !self.memory_enabled() {
            return Ok(None);
        }
        match &self.store {
            Store::Memory(m) => Ok(m.recall(session, key)),
            Store::Redis(r) => r.recall(session, key).await,
        }
    }

    /// Remembers a reviewer approval; high and critical risk are never remembered.
    pub async fn remember(
        &self,
        session: &str,
        key: &str,
        r: Remembered,
    ) -> Result<(), StoreError> {
        if !self.memory_enabled() || matches!(r.risk_level, RiskLevel::High | RiskLevel::Critical) {
            return Ok(());
        }
        match &self.store {
            Store::Memory(m) => {
                m.remember(session, key, r, self.ttl);
                Ok(())
            }
            Store::Redis(s) => s.remember(session, key, &r, self.ttl).await,
        }
    }

    /// The mandate compiled for a request of the session (its JSON, keyed on the request's
    /// hash), shared by every replica with Redis.
    pub async fn mandate(
        &self,
        session: &str,
        request: &str,
    ) -> Result<Option<String>, StoreError> {
        match &self.store {
            Store::Memory(m) => Ok(m.mandate(session, request)),
            Store::Redis(r) => r.mandate(session, request).await,
        }
    }

    /// Keeps the mandate compiled for a request of the session (its JSON), for the session's
    /// lifetime (`[session] ttl_s`).
    pub async fn keep_mandate(
        &self,
        session: &str,
        request: &str,
        text: String,
    ) -> Result<(), StoreError> {
        match &self.store {
            Store::Memory(s) => {
                s.keep_mandate(session, request, text, self.session_ttl);
                Ok(())
            }
            Store::Redis(r) => {
                r.keep_mandate(session, request, text, self.session_ttl)
                    .await
            }
        }
    }

    /// Records a decision; returns the session's counts, from which
    /// [`crate::decision::breaker`] tells whether the agent must stop.
    pub async fn record(
        &self,
        session: &str,
        action_key: &str,
        decision: Decision,
    ) -> Result<BreakerCounts, StoreError> {
        match &self.store {
            Store::Memory(m) => Ok(m.record(session, action_key, decision, self.window)),
            Store::Redis(r) => r.record(session, action_key, decision, self.window).await,
        }
    }

    /// Whether the store answers (always, in memory).
    pub async fn health(&self) -> Result<(), StoreError> {
        match &self.store {
            Store::Memory(_) => Ok(()),
            Store::Redis(r) => r.ping().await,
        }
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

    fn approval(id: &str, risk: RiskLevel) -> Remembered {
        Remembered {
            review_id: id.into(),
            risk_level: risk,
            user_authorization: UserAuthorization::High,
            rationale: "fine".into(),
        }
    }

    #[tokio::test]
    async fn memory_is_per_session_and_skips_high_risk() {
        let s = sessions();
        s.remember("a", "k", approval("rev_1", RiskLevel::Low))
            .await
            .expect("memory");
        assert!(s.recall("a", "k").await.expect("memory").is_some());
        assert!(s.recall("b", "k").await.expect("memory").is_none());
        s.remember("a", "h", approval("rev_2", RiskLevel::High))
            .await
            .expect("memory");
        assert!(s.recall("a", "h").await.expect("memory").is_none());
        let off = Sessions::new(BreakerConfig::default(), Duration::ZERO);
        off.remember("a", "k", approval("rev_1", RiskLevel::Low))
            .await
            .expect("memory");
        assert!(off.recall("a", "k").await.expect("memory").is_none());
    }

    #[test]
    fn a_redis_store_needs_a_redis_url_and_its_password_variable() {
        let cfg = |url: &str, env: Option<&str>| SessionConfig {
            store: StoreKind::Redis,
            redis_url: url.into(),
            redis_password_env: env.map(str::to_string),
            ..SessionConfig::default()
        };
        let open = |c: SessionConfig| {
            Sessions::from_config(&c, BreakerConfig::default(), Duration::from_secs(1))
                .map(|s| s.kind())
        };
        assert_eq!(
            open(cfg("redis://127.0.0.1:1/0", None)),
            Ok(StoreKind::Redis)
        );
        let e = open(cfg("http://127.0.0.1:1", None)).expect_err("scheme");
        assert!(e.to_string().contains("session.redis_url"), "{e}");
        let e = open(cfg(
            "redis://127.0.0.1:1/0",
            Some("GUARDIAN_TEST_UNSET_PASSWORD_VAR"),
        ))
        .expect_err("unset variable");
        assert!(
            e.to_string().contains("GUARDIAN_TEST_UNSET_PASSWORD_VAR"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn an_absent_redis_is_an_error_within_the_deadline_never_an_answer() {
        // Port 1 on loopback: nothing listens there.
        let c = SessionConfig {
            store: StoreKind::Redis,
            redis_url: "redis://127.0.0.1:1/0".into(),
            deadline_ms: 300,
            ..SessionConfig::default()
        };
        let s = Sessions::from_config(&c, BreakerConfig::default(), Duration::from_secs(60))
            .expect("opens without connecting");
        let started = std::time::Instant::now();
        assert!(s.recall("a", "k").await.is_err());
        assert!(s.record("a", "x", Decision::Deny).await.is_err());
        assert!(s.health().await.is_err());
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
