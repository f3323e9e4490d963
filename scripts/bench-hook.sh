#!/usr/bin/env bash
# Benchmark: one command-hook decision, `guardian hook claude-code` and `guardian-hook claude-code`
# against a Python hook doing a regex check (what a hand-written Claude Code hook usually is), in the
# same run, same input.
# Both are whole processes started per decision, as the agent starts them.
#
#   scripts/bench-hook.sh [RUNS]        (default 200; needs target/release/guardian)
#
# `guardian-hook` is measured twice: as `cargo build --release` links it (dynamically, against
# glibc) and statically linked (`-C target-feature=+crt-static`, which the script builds with
# `cargo rustc` and then relinks the usual binary back; about two seconds).
#
# Prints the median and p90 of each and the ratio python/guardian. Results: docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-200}"
BIN="${GUARDIAN_BIN:-target/release/guardian}"
[ -x "$BIN" ] && [ -x "$BIN-hook" ] || { echo "build it first: cargo build --release" >&2; exit 2; }
work=$(mktemp -d)
trap 'kill "${srv:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
if [ -z "${GUARDIAN_HOOK_STATIC:-}" ]; then
  cargo rustc --quiet --release --bin guardian-hook -- -C target-feature=+crt-static
  cp target/release/guardian-hook "$work/guardian-hook-static"
  cargo build --quiet --release --bin guardian-hook
  GUARDIAN_HOOK_STATIC="$work/guardian-hook-static"
fi
printf '[policy]\ndeny = ["Bash(git push *)"]\nallow = ["Bash(git status)"]\n\n[audit]\npath = "%s/audit.jsonl"\nfsync = "interval"\n' "$work" > "$work/g.toml"
"$BIN" serve --config "$work/g.toml" --listen 127.0.0.1:0 2> "$work/serve.log" &
srv=$!
for _ in $(seq 100); do
  addr=$(sed -n 's/.*guardian listening on \(http:[^ ]*\).*/\1/p' "$work/serve.log" | head -1)
  [ -n "$addr" ] && break
  sleep 0.05
done
[ -n "${addr:-}" ] || { echo "the server did not start" >&2; cat "$work/serve.log" >&2; exit 1; }
cat > "$work/input.json" <<'JSON'
{"session_id":"bench","transcript_path":null,"cwd":"/work/repo","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"git status"},"tool_use_id":"t1"}
JSON
cat > "$work/hook.py" <<'PY'
import json, re, sys
data = json.load(sys.stdin)
cmd = data.get("tool_input", {}).get("command", "")
deny = re.search(r"\bgit\s+push\b|\brm\s+-rf\b", cmd)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
      "permissionDecision": "deny" if deny else "allow",
      "permissionDecisionReason": "python hook"}}))
PY
python3 - "$RUNS" "$BIN" "$addr" "$work" "$GUARDIAN_HOOK_STATIC" <<'PY'
import statistics, subprocess, sys, time
runs, binary, addr, work, static = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
data = open(f"{work}/input.json", "rb").read()
import shutil
cmds = {
    "guardian hook": [binary, "hook", "claude-code", "--server", addr],
    "guardian-hook": [binary + "-hook", "claude-code", "--server", addr],
    "guardian-hook (static)": [static, "claude-code", "--server", addr],
    # As a user writes it in settings.json: `python3 hook.py`, python3 found on PATH.
    "python3 (PATH)": [shutil.which("python3") or "python3", f"{work}/hook.py"],
    # The interpreter itself (no launcher or shim in between).
    "python (direct)": [sys.executable, f"{work}/hook.py"],
}
times = {k: [] for k in cmds}
for i in range(runs + 10):
    # Alternate the two, so load on the machine hits both alike; the first 10 rounds warm up.
    for name, cmd in cmds.items():
        t = time.perf_counter()
        out = subprocess.run(cmd, input=data, capture_output=True)
        dt = time.perf_counter() - t
        if out.returncode != 0 or b'"allow"' not in out.stdout:
            sys.exit(f"{name} failed: {out.returncode} {out.stdout!r} {out.stderr!r}")
        if i >= 10:
            times[name].append(dt * 1000)
def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]
for name, v in times.items():
    print(f"{name:23s} median {statistics.median(v):7.2f} ms   p90 {q(v, 0.9):7.2f} ms   ({len(v)} runs)")
for hook in ("guardian hook", "guardian-hook", "guardian-hook (static)"):
    g = statistics.median(times[hook])
    for name in ("python3 (PATH)", "python (direct)"):
        print(f"ratio {name} / {hook} (medians): {statistics.median(times[name]) / g:.1f}x")
PY
