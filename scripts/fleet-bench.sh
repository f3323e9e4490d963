#!/usr/bin/env bash
# The fleet's throughput, as ratios against the single in-memory process measured in the same
# run (the machine is shared and noisy): rule-decided reviews with a session id (every decision
# updates the session's breaker state), closed loop (examples/loadgen.rs), on 127.0.0.1 only.
#
#   scripts/fleet-bench.sh [--seconds 5] [--concurrency 32] [--rounds 3]
#
#   A  one replica, [session] store = "memory", direct            (the baseline)
#   B  one replica, store = "redis", direct                       (Redis's cost per decision)
#   Q  as B, with a per-client quota counted in Redis             (the fleet-wide quota's cost)
#   C  one replica, store = "redis", behind nginx                 (the balancer's cost)
#   D  two replicas, store = "redis", behind nginx (round robin)  (the fleet)
#
# Needs redis-server and nginx (apt-get install redis-server nginx). Rounds alternate A–D so
# a neighbour's burst hits every side; the median round of each is reported.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SECS=5
CONC=32
ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECS="$2"; shift ;;
    --concurrency) CONC="$2"; shift ;;
    --rounds) ROUNDS="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for tool in redis-server nginx curl; do
  command -v "$tool" >/dev/null || { echo "$tool is needed: apt-get install redis-server nginx curl" >&2; exit 1; }
done

cd "$ROOT"
cargo build --release --quiet --bin guardian --example loadgen
BIN="$ROOT/target/release"
# shellcheck source=scripts/bench-lib.sh
. "$ROOT/scripts/bench-lib.sh"
cleanup_extra() {
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
}

P_REDIS=18900; P_MEM=18901; P_R1=18902; P_R2=18903; P_LB1=18904; P_LB2=18905; P_RQ=18906

redis-server --bind 127.0.0.1 --port "$P_REDIS" --save "" --appendonly no --dir "$WORK" >/dev/null & PIDS+=($!)

config() { # name store [requests per minute per client, counted in Redis]
  cat > "$WORK/$1.toml" <<TOML
[policy]
allow = ["Bash(git status *)", "Bash(git status)", "Bash(cargo test *)"]
deny = ["Bash(git push *)"]
[reviewer]
backend = "none"
[limits]
requests_per_minute_per_client = ${3:-0}
[session]
store = "$2"
redis_url = "redis://127.0.0.1:$P_REDIS/0"
deadline_ms = 1000
[audit]
path = "$WORK/$1-audit.jsonl"
TOML
}
config mem memory
config r1 redis
config r2 redis
config rq redis 1000000000   # a quota no load reaches: every decision is counted, none denied
for spec in "mem:$P_MEM" "r1:$P_R1" "r2:$P_R2" "rq:$P_RQ"; do
  name="${spec%%:*}"; port="${spec##*:}"
  GUARDIAN_LOG=error "$BIN/guardian" serve --config "$WORK/$name.toml" --listen "127.0.0.1:$port" 2>/dev/null & PIDS+=($!)
done

cat > "$WORK/nginx.conf" <<NGINX
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx-body;
  proxy_temp_path $WORK/nginx-proxy;
  upstream one { server 127.0.0.1:$P_R1; keepalive 64; }
  upstream two { server 127.0.0.1:$P_R1; server 127.0.0.1:$P_R2; keepalive 64; }
  server { listen 127.0.0.1:$P_LB1; location / { proxy_pass http://one; proxy_http_version 1.1; proxy_set_header Connection ""; } }
  server { listen 127.0.0.1:$P_LB2; location / { proxy_pass http://two; proxy_http_version 1.1; proxy_set_header Connection ""; } }
}
NGINX
nginx -c "$WORK/nginx.conf"

for port in $P_MEM $P_R1 $P_R2 $P_RQ $P_LB1 $P_LB2; do wait_up "http://127.0.0.1:$port/healthz"; done

BODY='{"action":{"kind":"shell","command":"git status --short && cargo test -p x{n}","cwd":"/work/repo"},"session":{"id":"bench-{w}"}}'
load() { "$BIN/examples/loadgen" --url "http://127.0.0.1:$1/v1/review" --body "$BODY" --concurrency "$CONC" --seconds "$2"; }

echo "== warm-up" >&2
for port in $P_MEM $P_R1 $P_RQ $P_LB1 $P_LB2; do load "$port" 1 >/dev/null; done

echo "== $ROUNDS alternating rounds of ${SECS}s, concurrency $CONC" >&2
RUNS=()
for _ in $(seq 1 "$ROUNDS"); do
  for port in $P_MEM $P_R1 $P_RQ $P_LB1 $P_LB2; do RUNS+=("$(load "$port" "$SECS")"); done
done
for r in "${RUNS[@]}"; do echo "$r"; done
python3 - "${RUNS[@]}" <<'PY'
import json, sys, statistics
runs = [json.loads(a) for a in sys.argv[1:]]
names = ["A one replica, memory store (baseline)", "B one replica, Redis store",
         "Q one replica, Redis store, per-client quota counted in Redis",
         "C one replica, Redis store, behind nginx", "D two replicas, Redis store, behind nginx"]
groups = [runs[i::5] for i in range(5)]
med = lambda rs: sorted(rs, key=lambda r: r["rps"])[len(rs) // 2]
print("| run (median round) | decisions/s | p50 ms | p99 ms | errors | req/s vs A (per round) | p99 vs A |")
print("|---|---|---|---|---|---|---|")
for name, rs in zip(names, groups):
    r = med(rs)
    ratios = [b["rps"] / a["rps"] for a, b in zip(groups[0], rs)]
    p99 = statistics.median(b["p99_ms"] / a["p99_ms"] for a, b in zip(groups[0], rs))
    print(f"| {name} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {sum(x['errors'] for x in rs)} "
          f"| {statistics.median(ratios):.2f} ({', '.join(f'{x:.2f}' for x in ratios)}) | {p99:.2f} |")
a, b = med(groups[0]), med(groups[1])
q = med(groups[2])
print(f"Redis store's added latency per decision (B − A, p50): {b['p50_ms'] - a['p50_ms']:.2f} ms")
print(f"the fleet-wide quota's added latency per decision (Q − B, p50): {q['p50_ms'] - b['p50_ms']:.2f} ms")
PY
