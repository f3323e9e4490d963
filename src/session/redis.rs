//! The shared session store (`[session] store = "redis"`): what every replica of a fleet
//! remembers of a session, in Redis, so that two replicas behind a balancer see one session.
//!
//! This module owns the keys and the atomic updates. A session's breaker state is a hash and a
//! list under one hash tag (`{prefix}{<session hash>}:state` and `:recent`, one cluster slot),
//! updated by one Lua script, so two replicas deciding the same session at the same moment never
//! lose a denial; both expire with the session TTL. A remembered approval is a string key with
//! the memory TTL. A fleet-wide quota (`[limits] scope = "fleet"`) is one key per client (and
//! one for the reviewer calls), updated by a GCRA script on Redis's clock. Every call has a
//! deadline: a slow or absent Redis is an error the caller turns into a fresh review (never a
//! remembered approval), an interrupting breaker, or this replica's own quota count, never
//! into an allow. The connection is made on first use and re-made by redis-rs's
//! `ConnectionManager` after a failure, so guardian starts, and recovers, while Redis is down.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use sha2::{Digest, Sha256};

use super::{BreakerCounts, Remembered, SessionConfig, StoreError};
use crate::verdict::Decision;

/// The breaker's update, atomic: KEYS = state hash, recent list; ARGV = 1 for a denial else 0,
/// the action's hash, the window, the session TTL in ms. Returns the counts after it.
const RECORD: &str = r"
local deny = ARGV[1] == '1'
local repeats = 0
if not deny then
  redis.call('HDEL', KEYS[1], 'last_action')
  redis.call('HSET', KEYS[1], 'repeats', 0)
elseif redis.call('HGET', KEYS[1], 'last_action') == ARGV[2] then
  repeats = redis.call('HINCRBY', KEYS[1], 'repeats', 1)
else
  redis.call('HSET', KEYS[1], 'last_action', ARGV[2], 'repeats', 1)
  repeats = 1
end
local consecutive = 0
if deny then
  consecutive = redis.call('HINCRBY', KEYS[1], 'consecutive', 1)
else
  redis.call('HSET', KEYS[1], 'consecutive', 0)
end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1)
local recent = redis.call('LRANGE', KEYS[2], 0, -1)
local denials = 0
for _, d in ipairs(recent) do
  if d == '1' then denials = denials + 1 end
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return {consecutive, denials, #recent, repeats}
";

/// A fleet-wide quota, GCRA (the generic cell rate algorithm, as governor uses in process):
/// KEYS = the quota's key; ARGV = the emission interval and the burst tolerance, in whole
/// microseconds (exact in Lua's doubles: now is about 2^51 µs). The clock is Redis's own, so
/// replicas' clocks need not agree. Returns 1 when the request is within the quota (and counts
/// it), 0 when it is not.
const TAKE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
if now < tat - tolerance then return 0 end
local later = tat + interval
redis.call('SET', KEYS[1], string.format('%d', later), 'PX', math.ceil((later - now) / 1000) + 1000)
return 1
";

/// Sessions in Redis.
pub struct RedisStore {
    client: redis::Client,
    conn: tokio::sync::OnceCell<ConnectionManager>,
    prefix: String,
    session_ttl: Duration,
    deadline: Duration,
    record: redis::Script,
    take: redis::Script,
}

fn hash(text: &str) -> String {
    hex::encode(&Sha256::digest(text.as_bytes())[..16])
}

impl RedisStore {
    /// A store for `[session]` (no connection yet: it is made on first use).
    pub fn open(cfg: &SessionConfig) -> Result<RedisStore, StoreError> {
        let mut url = url::Url::parse(&cfg.redis_url)
            .map_err(|e| StoreError::Config(format!("session.redis_url: {e}")))?;
        if !matches!(url.scheme(), "redis" | "rediss") {
            return Err(StoreError::Config(
                "session.redis_url: must be a redis:// or rediss:// (TLS) URL".into(),
            ));
        }
        if let Some(var) = &cfg.redis_password_env {
            let password = std::env::var(var).map_err(|_| {
                StoreError::Config(format!(
                    "session.redis_password_env: the environment variable {var} is not set"
                ))
            })?;
            url.set_password(Some(&password)).map_err(|()| {
                StoreError::Config("session.redis_url: cannot carry a password".into())
            })?;
        }
        let client = redis::Client::open(url.as_str())
            .map_err(|e| StoreError::Config(format!("session.redis_url: {e}")))?;
        Ok(RedisStore {
            client,
            conn: tokio::sync::OnceCell::new(),
            prefix: cfg.key_prefix.clone(),
            session_ttl: Duration::from_secs(cfg.ttl_s),
            deadline: Duration::from_millis(cfg.deadline_ms),
            record: redis::Script::new(RECORD),
            take: redis::Script::new(TAKE),
        })
    }

    /// Runs `op` on the connection within the deadline (connecting first when needed).
    async fn within<T, F, Fut>(&self, op: F) -> Result<T, StoreError>
    where
        F: FnOnce(ConnectionManager) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        let work = async {
            let conn = self
                .conn
                .get_or_try_init(|| async {
                    let config = ConnectionManagerConfig::new()
                        .set_connection_timeout(self.deadline)
                        .set_response_timeout(self.deadline)
                        .set_number_of_retries(1);
                    self.client.get_connection_manager_with_config(config).await
                })
                .await
                .map_err(|e| StoreError::Unavailable(e.to_string()))?
                .clone();
            op(conn)
                .await
                .map_err(|e| StoreError::Unavailable(e.to_string()))
        };
        tokio::time::timeout(self.deadline, work)
            .await
            .map_err(|_| StoreError::Timeout(self.deadline))?
    }

    fn session_key(&self, session: &str, what: &str) -> String {
        format!("{}{{{}}}:{what}", self.prefix, hash(session))
    }

    /// A remembered approval.
    pub async fn recall(&self, session: &str, key: &str) -> Result<Option<Remembered>, StoreError> {
        let k = self.session_key(session, &format!("mem:{}", hash(key)));
        let text: Option<String> = self
            .within(|mut c| async move { redis::cmd("GET").arg(&k).query_async(&mut c).await })
            .await?;
        // A value guardian did not write is no approval.
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// A mandate compiled for a request of the session (its JSON), if one is kept.
    pub async fn mandate(
        &self,
        session: &str,
        request: &str,
    ) -> Result<Option<String>, StoreError> {
        let k = self.session_key(session, &format!("mandate:{request}"));
        self.within(|mut c| async move { redis::cmd("GET").arg(&k).query_async(&mut c).await })
            .await
    }

    /// Keeps a compiled mandate for `ttl`, for every replica.
    pub async fn keep_mandate(
        &self,
        session: &str,
        request: &str,
        mandate: String,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let k = self.session_key(session, &format!("mandate:{request}"));
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        self.within(|mut c| async move {
            redis::cmd("SET")
                .arg(&k)
                .arg(mandate)
                .arg("PX")
                .arg(ms)
                .query_async::<()>(&mut c)
                .await
        })
        .await
    }

    /// Remembers an approval for `ttl`.
    pub async fn remember(
        &self,
        session: &str,
        key: &str,
        r: &Remembered,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let k = self.session_key(session, &format!("mem:{}", hash(key)));
        let value = serde_json::to_string(r).map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        self.within(|mut c| async move {
            redis::cmd("SET")
                .arg(&k)
                .arg(value)
                .arg("PX")
                .arg(ms)
                .query_async::<()>(&mut c)
                .await
        })
        .await
    }

    /// Records a decision, atomically; returns the session's counts.
    pub async fn record(
        &self,
        session: &str,
        action_key: &str,
        decision: Decision,
        window: usize,
    ) -> Result<BreakerCounts, StoreError> {
        let state = self.session_key(session, "state");
        let recent = self.session_key(session, "recent");
        let deny = u8::from(decision == Decision::Deny);
        let action = hash(action_key);
        let ttl_ms = u64::try_from(self.session_ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let mut invocation = self.record.prepare_invoke();
        invocation
            .key(state)
            .key(recent)
            .arg(deny)
            .arg(action)
            .arg(window.max(1))
            .arg(ttl_ms);
        let counts: Vec<usize> = self
            .within(|mut c| async move { invocation.invoke_async(&mut c).await })
            .await?;
        match counts[..] {
            [consecutive_denials, window_denials, window_len, repeats] => Ok(BreakerCounts {
                consecutive_denials,
                window_denials,
                window_len,
                repeats,
            }),
            _ => Err(StoreError::Unavailable(format!(
                "the breaker script answered {counts:?}"
            ))),
        }
    }

    /// Counts one request against the fleet-wide quota `key` of `per_minute` (bursts up to
    /// `per_minute`, as the in-process limiter allows); whether it is within the quota.
    pub async fn take(
        &self,
        key: &str,
        per_minute: std::num::NonZeroU32,
    ) -> Result<bool, StoreError> {
        // The rate is part of the key: a replica started with another quota counts afresh.
        let k = format!("{}quota:{per_minute}:{}", self.prefix, hash(key));
        // Whole microseconds, rounded up: a quota above 60 million a minute counts as that.
        let n = u64::from(per_minute.get());
        let interval = 60_000_000_u64.div_ceil(n);
        let tolerance = interval * (n - 1);
        let mut invocation = self.take.prepare_invoke();
        invocation.key(k).arg(interval).arg(tolerance);
        let within: i64 = self
            .within(|mut c| async move { invocation.invoke_async(&mut c).await })
            .await?;
        Ok(within == 1)
    }

    /// Whether Redis answers within the deadline.
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.within(|mut c| async move { redis::cmd("PING").query_async::<String>(&mut c).await })
            .await
            .map(|_| ())
    }
}
