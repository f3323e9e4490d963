#!/usr/bin/env bash
# Minimal guardian client for shell scripts and CI steps:
#   integrations/shell/guardian-review.sh [--server URL] -- <command...>
# Prints the response JSON; exit 0 allow, 1 deny, 2 error (treat as deny: fail closed).
# Needs curl and python3 (for JSON quoting). GUARDIAN_URL overrides the default server.
set -uo pipefail
server="${GUARDIAN_URL:-http://127.0.0.1:8700}"
if [ "${1:-}" = "--server" ]; then server="$2"; shift 2; fi
if [ "${1:-}" = "--" ]; then shift; fi
[ $# -gt 0 ] || { echo "usage: $0 [--server URL] -- <command...>" >&2; exit 2; }
body="$(python3 -c 'import json,os,sys; print(json.dumps({"action": {"kind": "shell", "command": " ".join(sys.argv[1:]), "cwd": os.getcwd()}}))' "$@")" || exit 2
resp="$(curl -sS --max-time 120 -H 'content-type: application/json' --data "$body" "${server%/}/v1/review")" || {
  echo "guardian unreachable, treat as deny" >&2
  exit 2
}
printf '%s\n' "$resp"
case "$resp" in
  *'"decision":"allow"'*) exit 0 ;;
  *'"decision":"deny"'*) exit 1 ;;
  *) echo "unexpected answer, treat as deny" >&2; exit 2 ;;
esac
