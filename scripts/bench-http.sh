#!/usr/bin/env bash
# HTTP benchmarks of guardian against baselines measured in the same run (ratios, not absolute
# numbers: the machine is shared and noisy).
#
#   scripts/bench-http.sh [--seconds 10] [--concurrency 64]
#
# 1. Rule-decided reviews: guardian (embedded-style rules, real audit log with fsync) vs a bare
#    axum hello-world answering the same route (examples/hello.rs), same load generator
#    (examples/loadgen.rs), same concurrency: req/s, p50, p99 and the ratio. Measured twice: with
#    the default `[audit] fsync = "always"` (fdatasync before every answer, by group commit) and
#    with `fsync = "interval"` (written before the answer, fdatasync every 100 ms).
# 2. Reviewer path: guardian in front of a fake OpenAI-compatible reviewer with a fixed 200 ms
#    latency (examples/fake_llm.rs), every request unique (no memory, no coalescing): guardian's
#    overhead = p50 - 200 ms, as a share of 200 ms. The fake's own latency is measured too.
# 3. Memory: peak RSS of guardian and of the baseline under 1,000 concurrent connections.
# Everything listens on 127.0.0.1 only and is stopped at exit.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SECONDS_PER_RUN=10
CONC=64
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_PER_RUN="$2"; shift ;;
    --concurrency) CONC="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

cd "$ROOT"
cargo build --release --quiet --bin guardian --example hello --example loadgen --example fake_llm
BIN="$ROOT/target/release"
# shellcheck source=scripts/bench-lib.sh
. "$ROOT/scripts/bench-lib.sh"

P_GUARD=18800; P_HELLO=18801; P_LLM=18802; P_GUARD_R=18803; P_GUARD_I=18804

cat > "$WORK/rules.toml" <<EOF
[policy]
allow = ["Bash(git status *)", "Bash(git status)", "Bash(cargo test *)"]
deny = ["Bash(git push *)"]
[reviewer]
backend = "none"
[limits]
requests_per_minute_per_client = 0
[audit]
path = "$WORK/rules-audit.jsonl"
EOF
sed "s#rules-audit.jsonl\"#rules-interval-audit.jsonl\"\nfsync = \"interval\"#" "$WORK/rules.toml" > "$WORK/rules-interval.toml"
cat > "$WORK/reviewer.toml" <<EOF
[server]
max_concurrent_requests = 4096
[policy]
allow = ["Bash(git status)"]
[reviewer]
backend = "openai"
base_url = "http://127.0.0.1:$P_LLM/v1"
model = "fake"
timeout_ms = 30000
memory_ttl_s = 0
[limits]
requests_per_minute_per_client = 0
reviewer_calls_per_minute = 0
reviewer_concurrency = 1024
[audit]
path = "$WORK/reviewer-audit.jsonl"
EOF

"$BIN/examples/hello" "127.0.0.1:$P_HELLO" 2>/dev/null & PIDS+=($!); PID_HELLO=$!
GUARDIAN_LOG=error "$BIN/guardian" serve --config "$WORK/rules.toml" --listen "127.0.0.1:$P_GUARD" 2>/dev/null & PIDS+=($!); PID_GUARD=$!
GUARDIAN_LOG=error "$BIN/guardian" serve --config "$WORK/rules-interval.toml" --listen "127.0.0.1:$P_GUARD_I" 2>/dev/null & PIDS+=($!)
"$BIN/examples/fake_llm" "127.0.0.1:$P_LLM" 200 2>/dev/null & PIDS+=($!)
GUARDIAN_LOG=error "$BIN/guardian" serve --config "$WORK/reviewer.toml" --listen "127.0.0.1:$P_GUARD_R" 2>/dev/null & PIDS+=($!)
wait_up "http://127.0.0.1:$P_HELLO/healthz"
wait_up "http://127.0.0.1:$P_GUARD/healthz"
wait_up "http://127.0.0.1:$P_GUARD_R/healthz"
wait_up "http://127.0.0.1:$P_GUARD_I/healthz"

# One agent session per connection, each sending different commands, as agents do.
RULE_BODY='{"action":{"kind":"shell","command":"git status --short && cargo test -p x{n}","cwd":"/work/repo"},"session":{"id":"bench-{w}"}}'
REVIEW_BODY='{"action":{"kind":"shell","command":"make deploy-{n}","cwd":"/work/repo"},"session":{"id":"bench-{w}"}}'
LLM_BODY='{"model":"fake","messages":[{"role":"user","content":"{n}"}]}'

load() { # url body concurrency seconds [pid]
  local extra=()
  if [ -n "${5:-}" ]; then extra=(--pid "$5"); fi
  "$BIN/examples/loadgen" --url "$1" --body "$2" --concurrency "$3" --seconds "$4" "${extra[@]}"
}
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }

echo "== warm-up" >&2
load "http://127.0.0.1:$P_HELLO/v1/review" "$RULE_BODY" "$CONC" 2 >/dev/null
load "http://127.0.0.1:$P_GUARD/v1/review" "$RULE_BODY" "$CONC" 2 >/dev/null
load "http://127.0.0.1:$P_GUARD_I/v1/review" "$RULE_BODY" "$CONC" 2 >/dev/null

echo "== 1. rule-decided reviews, concurrency $CONC, 3 alternating rounds of ${SECONDS_PER_RUN}s" >&2
# Alternate baseline and guardian (both fsync policies) three times and keep the median round of
# each: a neighbour's burst of CPU then hits every side instead of one.
RUNS=()
for round in 1 2 3; do
  RUNS+=("$(load "http://127.0.0.1:$P_HELLO/v1/review" "$RULE_BODY" "$CONC" "$SECONDS_PER_RUN")")
  RUNS+=("$(load "http://127.0.0.1:$P_GUARD/v1/review" "$RULE_BODY" "$CONC" "$SECONDS_PER_RUN")")
  RUNS+=("$(load "http://127.0.0.1:$P_GUARD_I/v1/review" "$RULE_BODY" "$CONC" "$SECONDS_PER_RUN")")
done
for r in "${RUNS[@]}"; do echo "$r"; done
python3 - "${RUNS[@]}" <<'PY'
import json, sys, statistics
runs = [json.loads(a) for a in sys.argv[1:]]
h, g, gi = runs[0::3], runs[1::3], runs[2::3]
def med(rs):
    return sorted(rs, key=lambda r: r["rps"])[len(rs) // 2]
print(f"| run (median of 3 rounds) | req/s | p50 ms | p99 ms | errors |")
print(f"|---|---|---|---|---|")
for name, rs in (("axum hello (baseline)", h), ('guardian, rule-decided, fsync = "always" (default)', g),
                 ('guardian, rule-decided, fsync = "interval"', gi)):
    r = med(rs)
    print(f"| {name} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {sum(x['errors'] for x in rs)} |")
for name, rs in (('fsync = "always"', g), ('fsync = "interval"', gi)):
    ratios = [b["rps"] / a["rps"] for a, b in zip(h, rs)]
    print(f"{name}: per-round ratios " + ", ".join(f"{x:.2f}" for x in ratios)
          + f"; guardian/baseline req/s (median round): {statistics.median(ratios):.2f} (target >= 0.50)")
PY

echo "== 2. reviewer path, fake reviewer at 200 ms, concurrency 32" >&2
L=$(load "http://127.0.0.1:$P_LLM/v1/chat/completions" "$LLM_BODY" 32 "$SECONDS_PER_RUN")
R=$(load "http://127.0.0.1:$P_GUARD_R/v1/review" "$REVIEW_BODY" 32 "$SECONDS_PER_RUN")
echo "fake reviewer alone:   $L"
echo "guardian -> reviewer:  $R"
python3 - "$L" "$R" <<'PY'
import json, sys
l, r = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"| run | req/s | p50 ms | p99 ms | errors |")
print(f"|---|---|---|---|---|")
for name, x in (("fake reviewer alone (200 ms)", l), ("guardian via the reviewer", r)):
    print(f"| {name} | {x['rps']:.1f} | {x['p50_ms']:.1f} | {x['p99_ms']:.1f} | {x['errors']} |")
over = r['p50_ms'] - l['p50_ms']
print(f"guardian overhead at p50: {over:.1f} ms = {over/200*100:.1f}% of 200 ms (target <= 5%)")
PY

echo "== 3. memory under 1,000 concurrent connections" >&2
MH=$(load "http://127.0.0.1:$P_HELLO/v1/review" "$RULE_BODY" 1000 5 "$PID_HELLO")
MG=$(load "http://127.0.0.1:$P_GUARD/v1/review" "$RULE_BODY" 1000 5 "$PID_GUARD")
python3 - "$MH" "$MG" <<'PY'
import json, sys
h, g = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"| run | peak RSS MiB | req/s | p99 ms | errors |")
print(f"|---|---|---|---|---|")
for name, x in (("axum hello (baseline)", h), ("guardian, rule-decided", g)):
    print(f"| {name} | {x['peak_rss_kib']/1024:.1f} | {x['rps']:.0f} | {x['p99_ms']:.1f} | {x['errors']} |")
print(f"ratio guardian/baseline RSS: {g['peak_rss_kib']/max(h['peak_rss_kib'],1):.2f}")
PY
