#!/usr/bin/env bash
# Checks deploy/k8s/*.yaml against the Kubernetes API's JSON schemas, offline: PyPI's
# kubernetes-validate carries the schemas of every Kubernetes release in its wheel (no schema is
# fetched from GitHub, which these machines cannot reach). --strict rejects unknown fields.
# A deliberately broken copy must fail first, so a validator that passes everything is caught.
#   scripts/k8s-validate.sh [-k 1.31]      (default: the newest release the package knows)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSION="1.37.0"
VENV="${GUARDIAN_K8S_VENV:-$ROOT/.k8s-validate}"
if [ ! -x "$VENV/bin/kubernetes-validate" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "kubernetes-validate==$VERSION"
fi
broken="$(mktemp --suffix=.yaml)"
trap 'rm -f "$broken"' EXIT
sed 's/^\(  replicas:\) [0-9]*/\1 two/' "$ROOT/deploy/k8s/guardian.yaml" > "$broken"
if "$VENV/bin/kubernetes-validate" --strict --quiet "$@" "$broken" >/dev/null 2>&1; then
  echo "k8s-validate: a Deployment with replicas: two passed; the validator checks nothing" >&2
  exit 1
fi
"$VENV/bin/kubernetes-validate" --strict "$@" "$ROOT"/deploy/k8s/*.yaml
