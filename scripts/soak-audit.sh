#!/usr/bin/env bash
# Soak benchmark of the audit log over time: the same rule-decided load against two guardian
# servers started in this run, one whose log never rotates (the baseline) and one that rotates
# every 1 MiB, keeps 5 closed segments and gzips them. Ratios against the baseline, not absolute
# numbers (the machine is shared and noisy).
#
#   scripts/soak-audit.sh [--seconds 60] [--concurrency 16] [--rounds 2]
#
# For each server: req/s, p50/p99, peak RSS during the load and RSS at the end of each round
# (flat memory = no growth from round to round), the log directory's size and file count, and
# `guardian audit verify` over every segment (result and time). Results: docs/BENCHMARKS.md §5.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SECS=60
CONC=16
ROUNDS=2
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECS="$2"; shift ;;
    --concurrency) CONC="$2"; shift ;;
    --rounds) ROUNDS="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
cd "$ROOT"
cargo build --release --quiet --bin guardian --example loadgen
BIN="$ROOT/target/release"
# shellcheck source=scripts/bench-lib.sh
. "$ROOT/scripts/bench-lib.sh"

P_BASE=18810; P_ROT=18811
mkdir -p "$WORK/base" "$WORK/rot"
for side in base rot; do
  cat > "$WORK/$side/g.toml" <<TOML
[policy]
allow = ["Bash(git status *)", "Bash(git status)", "Bash(cargo test *)"]
deny = ["Bash(git push *)"]
[reviewer]
backend = "none"
[limits]
requests_per_minute_per_client = 0
[audit]
path = "guardian-audit.jsonl"
TOML
done
printf 'rotate_bytes = 0\n' >> "$WORK/base/g.toml"
printf 'rotate_bytes = 1048576\nkeep_segments = 5\ncompress = "gzip"\n' >> "$WORK/rot/g.toml"

GUARDIAN_LOG=error "$BIN/guardian" serve --config "$WORK/base/g.toml" --listen "127.0.0.1:$P_BASE" 2>/dev/null & PIDS+=($!); PID_BASE=$!
GUARDIAN_LOG=error "$BIN/guardian" serve --config "$WORK/rot/g.toml" --listen "127.0.0.1:$P_ROT" 2>/dev/null & PIDS+=($!); PID_ROT=$!
for p in $P_BASE $P_ROT; do wait_up "http://127.0.0.1:$p/healthz"; done

BODY='{"action":{"kind":"shell","command":"git status --short && cargo test -p x{n}","cwd":"/work/repo"},"session":{"id":"soak-{w}"}}'
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
du_kib() { du -sk "$1" | cut -f1; }
files() { find "$1" -name 'guardian-audit*' -not -name '*.lock' | wc -l; }

RESULTS=()
for round in $(seq 1 "$ROUNDS"); do
  for side in base rot; do
    if [ "$side" = base ]; then port=$P_BASE; pid=$PID_BASE; else port=$P_ROT; pid=$PID_ROT; fi
    echo "== round $round: $side (${SECS}s, concurrency $CONC)" >&2
    r=$("$BIN/examples/loadgen" --url "http://127.0.0.1:$port/v1/review" --body "$BODY" \
          --concurrency "$CONC" --seconds "$SECS" --pid "$pid")
    sleep 1
    RESULTS+=("$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(side=sys.argv[2], round=int(sys.argv[3]), rss_end_kib=int(sys.argv[4]), dir_kib=int(sys.argv[5]), files=int(sys.argv[6])); print(json.dumps(r))' \
      "$r" "$side" "$round" "$(rss "$pid")" "$(du_kib "$WORK/$side")" "$(files "$WORK/$side")")")
  done
done
for side in base rot; do
  t0=$(date +%s.%N)
  if out=$("$BIN/guardian" audit verify --config "$WORK/$side/g.toml" 2>&1); then ok=1; else ok=0; fi
  t1=$(date +%s.%N)
  RESULTS+=("$(python3 -c 'import json,sys; print(json.dumps({"verify": sys.argv[1], "ok": sys.argv[2] == "1", "seconds": float(sys.argv[4]) - float(sys.argv[3]), "out": sys.argv[5]}))' "$side" "$ok" "$t0" "$t1" "$out")")
done
for r in "${RESULTS[@]}"; do echo "$r"; done
python3 - "${RESULTS[@]}" <<'PY'
import json, sys
rs = [json.loads(a) for a in sys.argv[1:]]
runs = [r for r in rs if "side" in r]
ver = {r["verify"]: r for r in rs if "verify" in r}
print("| round | log | req/s | p50 ms | p99 ms | peak RSS MiB | RSS at end MiB | log dir MiB | files |")
print("|---|---|---|---|---|---|---|---|---|")
for r in runs:
    print(f"| {r['round']} | {'no rotation' if r['side'] == 'base' else 'rotate 1 MiB, keep 5, gzip'} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} "
          f"| {r['peak_rss_kib'] / 1024:.1f} | {r['rss_end_kib'] / 1024:.1f} | {r['dir_kib'] / 1024:.1f} | {r['files']} |")
by = {}
for r in runs:
    by.setdefault(r["round"], {})[r["side"]] = r
for rnd, d in sorted(by.items()):
    print(f"round {rnd}: rotating/baseline req/s = {d['rot']['rps'] / d['base']['rps']:.2f}, "
          f"p99 = {d['rot']['p99_ms'] / d['base']['p99_ms']:.2f}, "
          f"RSS at end = {d['rot']['rss_end_kib'] / d['base']['rss_end_kib']:.2f}, "
          f"log size = {d['rot']['dir_kib'] / d['base']['dir_kib']:.3f}")
first, last = min(by), max(by)
for side in ("base", "rot"):
    print(f"{side}: RSS at end, last round / first round = {by[last][side]['rss_end_kib'] / by[first][side]['rss_end_kib']:.2f}")
for side, v in ver.items():
    print(f"verify {side}: {'intact' if v['ok'] else 'BROKEN'} in {v['seconds']:.2f}s: {v['out'].strip()}")
PY
