#!/usr/bin/env bash
# Benchmark: what judging a write by its change costs a plain edit. One Claude Code hook
# decision through `guardian-hook claude-code` (a whole process per decision, as the agent starts
# it) against two servers started side by side: a baseline binary and this one, both with the
# embedded default policy, alternating call by call so a neighbour's burst hits both.
#
#   GUARDIAN_BASE_BIN=/path/to/old/guardian scripts/bench-edit.sh [RUNS]   (default 200)
#
# GUARDIAN_BASE_HOOK_BIN=/path/to/old/guardian-hook runs the baseline side with its own hook
# (the hook itself changed: it diffs a whole-file write beside the agent); default: the same
# hook for both.
#
# Two payloads on a 300-line source file inside the workspace: an `Edit` (old/new strings: the
# agent's own diff) and a whole-file `Write` of the same change (this binary reads the file and
# diffs it; the baseline judges the new content alone). Prints each one's median and p90 per
# server and the ratio new/base (target: the median within 10%). Results: docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-200}"
NEW="${GUARDIAN_BIN:-target/release/guardian}"
BASE="${GUARDIAN_BASE_BIN:?set GUARDIAN_BASE_BIN to the baseline guardian binary}"
HOOK="${GUARDIAN_HOOK_BIN:-target/release/guardian-hook}"
BASE_HOOK="${GUARDIAN_BASE_HOOK_BIN:-$HOOK}"
for b in "$NEW" "$BASE" "$HOOK" "$BASE_HOOK"; do
  [ -x "$b" ] || { echo "not executable: $b (cargo build --release)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'kill "${srv_new:-0}" "${srv_base:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/repo/src"
python3 - "$work/repo/src/lib.rs" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(300):
        f.write(f"pub fn f{i}(x: u32) -> u32 {{ x + {i} }}\n")
PY

start() {
  local bin="$1" name="$2"
  printf '[policy]\nextends = "default"\n\n[audit]\npath = "%s/%s-audit.jsonl"\nfsync = "interval"\n' \
    "$work" "$name" > "$work/$name.toml"
  GUARDIAN_NO_LOCAL_MODEL=1 "$bin" serve --config "$work/$name.toml" --listen 127.0.0.1:0 \
    2> "$work/$name.log" &
  echo $! > "$work/$name.pid"
  for _ in $(seq 200); do
    local addr
    addr=$(sed -n 's/.*guardian listening on \(http:[^ ]*\).*/\1/p' "$work/$name.log" | head -1)
    if [ -n "$addr" ]; then echo "$addr" > "$work/$name.addr"; return; fi
    sleep 0.05
  done
  echo "the $name server did not start" >&2
  cat "$work/$name.log" >&2
  exit 1
}
start "$NEW" new
srv_new=$(cat "$work/new.pid")
start "$BASE" base
srv_base=$(cat "$work/base.pid")

python3 - "$HOOK" "$work" "$RUNS" "$(cat "$work/new.addr")" "$(cat "$work/base.addr")" "$BASE_HOOK" <<'PY'
import json, statistics, subprocess, sys, time
hook, work, runs, new, base = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
hooks = {new: hook, base: sys.argv[6]}
path = f"{work}/repo/src/lib.rs"
old = open(path).read()
changed = old.replace("x + 150 }", "x.saturating_add(150) }")
common = {"session_id": "bench", "transcript_path": None, "cwd": f"{work}/repo",
          "hook_event_name": "PreToolUse", "permission_mode": "default", "tool_use_id": "t1"}
payloads = {
    "Edit": dict(common, tool_name="Edit", tool_input={
        "file_path": path, "old_string": "x + 150 }", "new_string": "x.saturating_add(150) }"}),
    "Write": dict(common, tool_name="Write", tool_input={"file_path": path, "content": changed}),
}
def once(server, body):
    t = time.perf_counter()
    p = subprocess.run([hooks[server], "claude-code", "--server", server], input=body,
                       capture_output=True, text=True)
    dt = (time.perf_counter() - t) * 1000
    if p.returncode != 0 or "allow" not in p.stdout:
        sys.exit(f"the hook did not allow the plain edit: {p.returncode} {p.stdout} {p.stderr}")
    return dt
for name, payload in payloads.items():
    body = json.dumps(payload)
    times = {"base": [], "new": []}
    for _ in range(10):  # warm both
        once(base, body); once(new, body)
    for _ in range(runs):
        times["base"].append(once(base, body))
        times["new"].append(once(new, body))
    def q(xs, f):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(f * len(xs)))]
    mb, mn = statistics.median(times["base"]), statistics.median(times["new"])
    print(f"{name:5}  base median {mb:.2f} ms p90 {q(times['base'], .9):.2f} ms   "
          f"new median {mn:.2f} ms p90 {q(times['new'], .9):.2f} ms   new/base {mn / mb:.3f}")
PY
