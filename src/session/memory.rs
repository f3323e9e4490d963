//! The in-process session store (`[session] store = "memory"`, the default): what one guardian
//! process remembers of its sessions, in a sharded map, bounded in sessions and in remembered
//! approvals per session. Right for `guardian run` (one guardian per job) and a single service;
//! replicas behind a balancer share nothing this way (use the Redis store).

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use super::{BreakerCounts, Remembered};
use crate::verdict::Decision;

/// Sessions kept at most; the least recently seen are dropped beyond it.
const MAX_SESSIONS: usize = 10_000;
/// Remembered approvals per session, at most.
const MAX_MEMORY_PER_SESSION: usize = 1_000;

#[derive(Debug, Default)]
struct SessionState {
    memory: HashMap<String, (Remembered, Instant)>,
    /// Compiled mandates by request key (a session's requests are few).
    mandates: HashMap<String, (String, Instant)>,
    recent: VecDeque<Decision>,
    consecutive_denials: usize,
    last_action: Option<String>,
    repeats: usize,
    last_seen: Option<Instant>,
}

/// Every session's state in this process.
#[derive(Default)]
pub struct MemoryStore {
    /// Sharded: requests of different sessions never wait on one lock.
    sessions: dashmap::DashMap<String, SessionState>,
}

impl MemoryStore {
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

    /// A remembered approval still valid.
    pub fn recall(&self, session: &str, key: &str) -> Option<Remembered> {
        // Looking up never creates a session.
        let mut s = self.sessions.get_mut(session)?;
        match s.memory.get(key) {
            Some((r, expires)) if *expires > Instant::now() => Some(r.clone()),
            Some(_) => {
                s.memory.remove(key);
                None
            }
            None => None,
        }
    }

    /// Remembers an approval for `ttl`.
    pub fn remember(&self, session: &str, key: &str, r: Remembered, ttl: Duration) {
        let expires = Instant::now() + ttl;
        self.with(session, |s| {
            if s.memory.len() >= MAX_MEMORY_PER_SESSION {
                let now = Instant::now();
                s.memory.retain(|_, (_, e)| *e > now);
                if s.memory.len() >= MAX_MEMORY_PER_SESSION {
                    return;
                }
            }
            s.memory.insert(key.to_string(), (r, expires));
        });
    }

    /// A mandate compiled for a request of the session (its JSON), if still valid.
    pub fn mandate(&self, session: &str, request: &str) -> Option<String> {
        let s = self.sessions.get(session)?;
        s.mandates
            .get(request)
            .filter(|(_, e)| *e > Instant::now())
            .map(|(m, _)| m.clone())
    }

    /// Keeps a compiled mandate for `ttl`; a session keeps its 64 newest.
    pub fn keep_mandate(&self, session: &str, request: &str, mandate: String, ttl: Duration) {
        let expires = Instant::now() + ttl;
        self.with(session, |s| {
            if s.mandates.len() >= 64 {
                let now = Instant::now();
                s.mandates.retain(|_, (_, e)| *e > now);
                if let Some(oldest) = s
                    .mandates
                    .iter()
                    .min_by_key(|(_, (_, e))| *e)
                    .map(|(k, _)| k.clone())
                    .filter(|_| s.mandates.len() >= 64)
                {
                    s.mandates.remove(&oldest);
                }
            }
            s.mandates.insert(request.to_string(), (mandate, expires));
        });
    }

    /// Records a decision over a window of `window` decisions.
    pub fn record(
        &self,
        session: &str,
        action_key: &str,
        decision: Decision,
        window: usize,
    ) -> BreakerCounts {
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
}
