//! A closed-loop HTTP load generator for `scripts/bench-http.sh`: `--concurrency` workers, each
//! on its own keep-alive connection, POST a body for `--seconds` and the run prints one JSON line:
//! requests, errors, req/s, and latency p50/p90/p99 in ms. `{n}` in the body is replaced by a
//! unique number per request (to defeat caches and request coalescing), `{w}` by the worker's
//! number (one agent session per connection). With `--pid`, the peak
//! resident memory of that process during the run is reported too.
//!
//! `cargo run --release --example loadgen -- --url http://127.0.0.1:8700/v1/review \
//!     --body '{"action":{"kind":"shell","command":"git status"}}' --concurrency 64 --seconds 10`

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

struct Args {
    url: String,
    body: String,
    concurrency: usize,
    seconds: f64,
    pid: Option<u32>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        url: String::new(),
        body: String::new(),
        concurrency: 64,
        seconds: 10.0,
        pid: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--url" => a.url = value()?,
            "--body" => a.body = value()?,
            "--concurrency" => a.concurrency = value()?.parse().map_err(|e| format!("{e}"))?,
            "--seconds" => a.seconds = value()?.parse().map_err(|e| format!("{e}"))?,
            "--pid" => a.pid = Some(value()?.parse().map_err(|e| format!("{e}"))?),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if a.url.is_empty() {
        return Err("--url is required".into());
    }
    Ok(a)
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[tokio::main]
async fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("loadgen: {e}");
            std::process::exit(2);
        }
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let stop = Arc::new(AtomicBool::new(false));
    let counter = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    // Only requests sent once every worker runs are measured.
    let measuring = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    for worker in 0..args.concurrency {
        // One client per worker: one keep-alive connection each, like `concurrency` agents.
        let client = match reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .timeout(Duration::from_secs(60))
            .build()
        {
            Ok(c) => c,
            Err(e) => {
                eprintln!("loadgen: {e}");
                std::process::exit(2);
            }
        };
        let (url, body) = (
            args.url.clone(),
            args.body.replace("{w}", &worker.to_string()),
        );
        let (stop, counter, errors) = (stop.clone(), counter.clone(), errors.clone());
        let measuring = measuring.clone();
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(4096);
            while !stop.load(Ordering::Relaxed) {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                let body = body.replace("{n}", &n.to_string());
                let t = Instant::now();
                let measured = measuring.load(Ordering::Relaxed);
                let ok = match client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await
                {
                    Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                    Err(_) => false,
                };
                if !measured {
                    continue;
                }
                if ok {
                    latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                } else {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            latencies
        }));
    }
    // Timed from when every worker is running (building 1,000 clients takes a while).
    let started = Instant::now();
    measuring.store(true, Ordering::Relaxed);
    let mut peak_rss = 0u64;
    let deadline = started + Duration::from_secs_f64(args.seconds);
    loop {
        if let Some(pid) = args.pid {
            peak_rss = peak_rss.max(rss_kib(pid).unwrap_or(0));
        }
        if Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    for w in workers {
        if let Ok(l) = w.await {
            all.extend(l);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| -> f64 {
        if all.is_empty() {
            return f64::NAN;
        }
        all[((all.len() as f64 - 1.0) * p).round() as usize]
    };
    let out = serde_json::json!({
        "url": args.url,
        "concurrency": args.concurrency,
        "seconds": elapsed,
        "requests": all.len(),
        "errors": errors.load(Ordering::Relaxed),
        "rps": all.len() as f64 / elapsed,
        "p50_ms": pct(0.50),
        "p90_ms": pct(0.90),
        "p99_ms": pct(0.99),
        "peak_rss_kib": args.pid.map(|_| peak_rss),
    });
    println!("{out}");
}
