//! A fleet: two real `guardian serve` processes sharing one real Redis (`[session] store =
//! "redis"`). The breaker trips across replicas, an approval remembered on one is honoured on
//! the other, a sandbox-denied retry still gets a fresh review on either, and with Redis killed
//! mid-run both fail closed (no remembered approval, a denial interrupts, `/healthz` degraded,
//! store errors counted) and recover when it comes back.
//!
//! The tests start `redis-server` from the distribution's package. Plain `cargo test` lists them
//! as ignored (a new machine has no Redis); `.ci/run` installs `redis-server` and runs them with
//! `cargo test --test it fleet -- --ignored`, where a missing server fails them, saying how to
//! install it.

use crate::common::*;
use serde_json::{Value, json};

/// A `redis-server` on a free loopback port, killed on drop.
struct Redis {
    child: std::process::Child,
    port: u16,
    dir: Option<tempfile::TempDir>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn answers_ping(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(std::time::Duration::from_millis(500)));
    let mut buf = [0u8; 16];
    s.write_all(b"PING\r\n").is_ok()
        && s.read(&mut buf)
            .is_ok_and(|n| buf[..n].starts_with(b"+PONG"))
}

impl Redis {
    fn start() -> Redis {
        let dir = tempfile::tempdir().expect("tempdir");
        Redis::start_on(free_port(), dir)
    }

    fn start_on(port: u16, dir: tempfile::TempDir) -> Redis {
        let mut child = std::process::Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(dir.path())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start redis-server ({e}): install it (apt-get install redis-server); the fleet tests need a real Redis")
            });
        for _ in 0..100 {
            if answers_ping(port) {
                return Redis {
                    child,
                    port,
                    dir: Some(dir),
                };
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("redis-server did not answer PING on port {port}");
    }

    fn kill(mut self) -> (u16, tempfile::TempDir) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        (self.port, self.dir.take().expect("a data directory"))
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A replica: `guardian serve` with the Redis store, the fake reviewer at `reviewer`, and a
/// policy that denies pushes.
fn replica(dir: &std::path::Path, redis_port: u16, reviewer: &str) -> Server {
    replica_with(dir, redis_port, reviewer, "")
}

/// A replica with more config sections (`[limits]`).
fn replica_with(dir: &std::path::Path, redis_port: u16, reviewer: &str, more: &str) -> Server {
    let sub = dir.join(format!("replica-{}", free_port()));
    std::fs::create_dir_all(&sub).expect("dir");
    let extra = format!(
        "[session]\nstore = \"redis\"\nredis_url = \"redis://127.0.0.1:{redis_port}/0\"\nkey_prefix = \"test:\"\ndeadline_ms = 300\n\n{}max_attempts = 1\n\n{more}",
        openai_reviewer(reviewer, 10_000)
    );
    Server::start_with_audit(&sub, PUSH_DENIED, &extra)
}

/// One Redis, the allowing fake reviewer, and two replicas sharing both.
struct Fleet {
    redis: Redis,
    llm: wiremock::MockServer,
    a: Server,
    b: Server,
    _dir: tempfile::TempDir,
}

impl Fleet {
    async fn start() -> Fleet {
        let redis = Redis::start();
        let llm = allowing_reviewer().await;
        let dir = tempfile::tempdir().expect("tempdir");
        let a = replica(dir.path(), redis.port, &llm.uri());
        let b = replica(dir.path(), redis.port, &llm.uri());
        Fleet {
            redis,
            llm,
            a,
            b,
            _dir: dir,
        }
    }
}

fn client() -> reqwest::Client {
    guardian::transport::http_client(std::time::Duration::from_secs(30)).expect("a client")
}

async fn post(addr: &str, body: &Value) -> Value {
    client()
        .post(format!("{addr}/v1/review"))
        .json(body)
        .send()
        .await
        .expect("answers")
        .json()
        .await
        .expect("json")
}

async fn get(addr: &str, path: &str) -> String {
    client()
        .get(format!("{addr}{path}"))
        .send()
        .await
        .expect("answers")
        .text()
        .await
        .expect("text")
}

fn in_session(command: &str, session: &str) -> Value {
    let mut b = shell(command);
    b["session"]["id"] = json!(session);
    b
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install redis-server); .ci/run installs it and runs these"]
async fn two_replicas_share_the_breaker_and_remembered_approvals() {
    let Fleet {
        redis: _redis,
        llm,
        a,
        b,
        _dir,
    } = Fleet::start().await;

    // Three denials in a row, split across the replicas, trip the breaker on the third.
    let push = in_session("git push origin main", "ses-breaker");
    assert_eq!(post(&a.addr, &push).await["interrupt"], false);
    assert_eq!(post(&b.addr, &push).await["interrupt"], false);
    let third = post(&a.addr, &push).await;
    assert_eq!(third["decision"], "deny");
    assert_eq!(third["interrupt"], true, "{third}");

    // An approval remembered on A is honoured on B without asking the reviewer again.
    let run = in_session("cargo run --bin tool", "ses-memory");
    let first = post(&a.addr, &run).await;
    assert_eq!(
        (first["decision"].as_str(), first["decided_by"].as_str()),
        (Some("allow"), Some("reviewer")),
        "{first}"
    );
    let asked = llm.received_requests().await.unwrap_or_default().len();
    let second = post(&b.addr, &run).await;
    assert_eq!(second["decided_by"], "session", "{second}");
    assert_eq!(
        llm.received_requests().await.unwrap_or_default().len(),
        asked
    );
    // Not across sessions.
    let other = post(&b.addr, &in_session("cargo run --bin tool", "ses-other")).await;
    assert_eq!(other["decided_by"], "reviewer", "{other}");

    // A sandbox-denied retry gets a fresh review on either replica.
    for replica in [&a, &b] {
        let mut retry = run.clone();
        retry["retry"] = json!({"sandbox_denied": true, "output": "Operation not permitted"});
        let before = llm.received_requests().await.unwrap_or_default().len();
        let r = post(&replica.addr, &retry).await;
        assert_eq!(r["decided_by"], "reviewer", "{r}");
        assert!(llm.received_requests().await.unwrap_or_default().len() > before);
    }
    let health: Value = serde_json::from_str(&get(&a.addr, "/healthz").await).expect("json");
    assert_eq!(health["status"], "ok");
    assert_eq!(
        health["session_store"],
        json!({"kind": "redis", "ok": true})
    );
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install redis-server); .ci/run installs it and runs these"]
async fn with_redis_down_replicas_fail_closed_and_recover_when_it_returns() {
    let Fleet {
        redis,
        llm,
        a,
        b,
        _dir,
    } = Fleet::start().await;
    let run = in_session("cargo run --bin tool", "ses-down");
    assert_eq!(post(&a.addr, &run).await["decided_by"], "reviewer");
    assert_eq!(post(&b.addr, &run).await["decided_by"], "session");

    let (port, redis_dir) = redis.kill();
    // No remembered approval without the store: judged afresh by the reviewer.
    let before = llm.received_requests().await.unwrap_or_default().len();
    let fresh = post(&b.addr, &run).await;
    assert_eq!(fresh["decided_by"], "reviewer", "{fresh}");
    assert!(llm.received_requests().await.unwrap_or_default().len() > before);
    // A denial that cannot be counted interrupts at once.
    let denied = post(&a.addr, &in_session("git push origin main", "ses-down")).await;
    assert_eq!(denied["decision"], "deny");
    assert_eq!(denied["interrupt"], true, "{denied}");
    let health: Value = serde_json::from_str(&get(&a.addr, "/healthz").await).expect("json");
    assert_eq!(health["status"], "degraded", "{health}");
    assert_eq!(health["session_store"]["ok"], false);
    let metrics = get(&a.addr, "/metrics").await;
    let errors = metrics
        .lines()
        .find_map(|l| l.strip_prefix("guardian_session_store_errors_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    assert!(errors >= 2.0, "{metrics}");

    // Redis returns (empty): the replicas reconnect, remember and count again.
    let _redis = Redis::start_on(port, redis_dir);
    let mut recovered = false;
    for _ in 0..50 {
        let h: Value = serde_json::from_str(&get(&a.addr, "/healthz").await).expect("json");
        if h["status"] == "ok" {
            recovered = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(recovered, "replica A reconnects");
    let again = in_session("cargo run --bin tool", "ses-after");
    assert_eq!(post(&a.addr, &again).await["decided_by"], "reviewer");
    let mut remembered = Value::Null;
    for _ in 0..50 {
        remembered = post(&b.addr, &again).await;
        if remembered["decided_by"] == "session" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(remembered["decided_by"], "session", "{remembered}");
    let push = in_session("git push origin main", "ses-after-push");
    assert_eq!(
        post(&a.addr, &push).await["interrupt"],
        false,
        "counted again, not uncounted"
    );
}

/// Two stores deciding the same session at the same moment lose no denial: the breaker's update
/// is one Lua script.
#[tokio::test]
#[ignore = "needs redis-server (apt-get install redis-server); .ci/run installs it and runs these"]
async fn concurrent_denials_on_two_replicas_are_all_counted() {
    use guardian::session::{BreakerConfig, SessionConfig, Sessions, StoreKind};
    let redis = Redis::start();
    let cfg = SessionConfig {
        store: StoreKind::Redis,
        redis_url: format!("redis://127.0.0.1:{}/0", redis.port),
        deadline_ms: 2_000,
        ..SessionConfig::default()
    };
    let breaker = BreakerConfig {
        window: 500,
        ..BreakerConfig::default()
    };
    let open = || {
        std::sync::Arc::new(
            Sessions::from_config(&cfg, breaker.clone(), std::time::Duration::from_secs(60))
                .expect("opens"),
        )
    };
    let (a, b) = (open(), open());
    let mut tasks = Vec::new();
    for i in 0..100 {
        let s = if i % 2 == 0 { a.clone() } else { b.clone() };
        tasks.push(tokio::spawn(async move {
            s.record("ses-race", &format!("action-{i}"), guardian::Decision::Deny)
                .await
        }));
    }
    for t in tasks {
        t.await.expect("joins").expect("recorded");
    }
    let after = a
        .record("ses-race", "last", guardian::Decision::Deny)
        .await
        .expect("recorded");
    assert_eq!(after.consecutive_denials, 101);
    assert_eq!((after.window_denials, after.window_len), (101, 101));
    let reset = b
        .record("ses-race", "ok", guardian::Decision::Allow)
        .await
        .expect("recorded");
    assert_eq!(reset.consecutive_denials, 0);
    assert_eq!(reset.window_len, 102);
}

/// A decision and who made it.
async fn decided(addr: &str, body: &Value) -> (String, String) {
    let r = post(addr, body).await;
    (
        r["decision"].as_str().unwrap_or("").to_string(),
        r["rationale"].as_str().unwrap_or("").to_string(),
    )
}

/// The quotas of `[limits]` are one for the fleet (`scope = "fleet"`, the default): a client's
/// requests on either replica count against one quota, and so do reviewer calls. With `scope =
/// "replica"` each process counts its own; with Redis down, each replica holds to the quota alone.
#[tokio::test]
#[ignore = "needs redis-server (apt-get install redis-server); .ci/run installs it and runs these"]
async fn quotas_are_counted_for_the_whole_fleet() {
    let redis = Redis::start();
    let llm = allowing_reviewer().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let status = shell("git status");
    let pair = |limits: &str| {
        (
            replica_with(dir.path(), redis.port, &llm.uri(), limits),
            replica_with(dir.path(), redis.port, &llm.uri(), limits),
        )
    };

    // Three requests a minute for the client, wherever they land.
    let (a, b) = pair("[limits]\nrequests_per_minute_per_client = 3\n");
    for r in [&a, &b, &a] {
        assert_eq!(decided(&r.addr, &status).await.0, "allow");
    }
    let (decision, why) = decided(&b.addr, &status).await;
    assert_eq!(decision, "deny");
    assert!(why.contains("over its quota"), "{why}");

    // Per replica: each allows its own three.
    let (c, d) = pair("[limits]\nrequests_per_minute_per_client = 4\nscope = \"replica\"\n");
    for r in [&c, &c, &c, &c, &d, &d, &d, &d] {
        assert_eq!(decided(&r.addr, &status).await.0, "allow");
    }
    assert_eq!(decided(&c.addr, &status).await.0, "deny");

    // Two reviewer calls a minute for the fleet (distinct sessions: nothing is remembered).
    let (e, f) = pair("[limits]\nreviewer_calls_per_minute = 2\n");
    let run = |s: &str| in_session("cargo run --bin tool", s);
    assert_eq!(decided(&e.addr, &run("q1")).await.0, "allow");
    assert_eq!(decided(&f.addr, &run("q2")).await.0, "allow");
    let (decision, why) = decided(&e.addr, &run("q3")).await;
    assert_eq!(decision, "deny");
    assert!(why.contains("quota"), "{why}");

    // Redis down: the fleet's count is out of reach, so each replica counts on its own.
    let (g, _h) = pair("[limits]\nrequests_per_minute_per_client = 2\n");
    drop(redis.kill());
    for _ in 0..2 {
        assert_eq!(decided(&g.addr, &status).await.0, "allow");
    }
    assert_eq!(decided(&g.addr, &status).await.0, "deny");
}

/// A quota is counted to the microsecond: 3,000 requests at 100,000 a minute (one each 600 µs,
/// all within the burst) move its clock at least 1.8 s past where Redis's clock stood before them.
#[tokio::test]
#[ignore = "needs redis-server (apt-get install redis-server); .ci/run installs it and runs these"]
async fn a_high_quota_is_counted_to_the_microsecond() {
    use guardian::session::{BreakerConfig, SessionConfig, Sessions, StoreKind};
    let redis = Redis::start();
    let url = format!("redis://127.0.0.1:{}/0", redis.port);
    let cfg = SessionConfig {
        store: StoreKind::Redis,
        redis_url: url.clone(),
        key_prefix: "precision:".into(),
        deadline_ms: 2_000,
        ..SessionConfig::default()
    };
    let sessions = Sessions::from_config(
        &cfg,
        BreakerConfig::default(),
        std::time::Duration::from_secs(60),
    )
    .expect("opens");
    let client = redis::Client::open(url.as_str()).expect("a client");
    let mut c = client
        .get_multiplexed_async_connection()
        .await
        .expect("connects");
    let micros = |(s, us): (i64, i64)| s * 1_000_000 + us;
    let before: (i64, i64) = redis::cmd("TIME").query_async(&mut c).await.expect("time");
    let rate = std::num::NonZeroU32::new(100_000).expect("non-zero");
    for _ in 0..3_000 {
        let within = sessions.take_quota("client:ci", rate).await;
        assert_eq!(within, Some(Ok(true)));
    }
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("precision:quota:*")
        .query_async(&mut c)
        .await
        .expect("keys");
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(keys[0].starts_with("precision:quota:100000:"), "{keys:?}");
    let tat: String = redis::cmd("GET")
        .arg(&keys[0])
        .query_async(&mut c)
        .await
        .expect("get");
    let tat: i64 = tat.parse().expect("whole microseconds");
    assert!(
        tat - micros(before) >= 1_800_000,
        "the quota's clock moved {} µs",
        tat - micros(before)
    );
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install redis-server); .ci/run installs it and runs these"]
async fn a_mandate_compiled_on_one_replica_is_used_by_the_other() {
    let Fleet {
        redis: _redis,
        llm: _llm,
        a,
        b,
        _dir,
    } = Fleet::start().await;
    let mut merge = in_session("gh pr merge 88 --squash", "ses-mandate");
    merge["intent"] = json!("Merge PR #88 now that CI is green.");
    let first = post(&a.addr, &merge).await;
    assert_eq!(first["mandate"]["ruling"], "granted", "{first}");
    let second = post(&b.addr, &merge).await;
    assert_eq!(second["decision"], "allow", "{second}");
    let on_a = get(&a.addr, "/metrics").await;
    let on_b = get(&b.addr, "/metrics").await;
    assert!(
        on_a.contains("guardian_mandate_compiles_total{kind=\"compiled\"} 1"),
        "{on_a}"
    );
    assert!(
        on_b.contains("guardian_mandate_compiles_total{kind=\"cached\"} 1")
            && !on_b.contains("kind=\"compiled\""),
        "{on_b}"
    );
    // A new request in the same session is compiled anew, and says something else.
    merge["intent"] = json!("Check whether PR #88 can be merged.");
    let third = post(&b.addr, &merge).await;
    assert_eq!(third["mandate"]["ruling"], "prohibited", "{third}");
}
