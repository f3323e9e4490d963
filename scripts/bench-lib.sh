# Sourced by the benchmark scripts (bench-http.sh, fleet-bench.sh, soak-audit.sh): a work
# directory, the background processes they start (append each pid to PIDS) stopped at exit,
# and waiting for a URL to answer. A script with more to stop defines `cleanup_extra`.

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  if declare -F cleanup_extra >/dev/null; then cleanup_extra; fi
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_up() { # url
  for _ in $(seq 1 100); do
    if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "not up: $1" >&2
  exit 1
}
