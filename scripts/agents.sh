#!/usr/bin/env bash
# Install the pinned real coding agents that tests/e2e drives, outside git.
#
#   scripts/agents.sh install          install (idempotent) and print the binary paths
#   scripts/agents.sh path claude      print one binary path (claude | codex | opencode)
#   scripts/agents.sh versions         print the pinned versions
#
# Cache: ${GUARDIAN_AGENTS_CACHE:-$HOME/.cache/guardian-agents}/<package>@<version>/
# Each agent is an npm package that ships a native binary; they all run offline once installed.
# Installs Claude Code, Codex and OpenCode; GUARDIAN_AGENTS_OPENCODE=0 leaves OpenCode out (its
# scenarios are then skipped, loudly).
set -euo pipefail

CLAUDE_VERSION="2.1.332"
CODEX_VERSION="0.171.0"
OPENCODE_VERSION="1.18.33"

CACHE="${GUARDIAN_AGENTS_CACHE:-$HOME/.cache/guardian-agents}"

die() {
  echo "" >&2
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
  echo "!! agents.sh: $*" >&2
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
  exit 1
}

# dir_for AGENT -> the npm prefix the pinned version installs into
dir_for() {
  case "$1" in
    claude) echo "$CACHE/claude-code@$CLAUDE_VERSION" ;;
    codex) echo "$CACHE/codex@$CODEX_VERSION" ;;
    opencode) echo "$CACHE/opencode@$OPENCODE_VERSION" ;;
    *) die "unknown agent '$1' (claude | codex | opencode)" ;;
  esac
}

pkg_for() {
  case "$1" in
    claude) echo "@anthropic-ai/claude-code@$CLAUDE_VERSION" ;;
    codex) echo "@openai/codex@$CODEX_VERSION" ;;
    opencode) echo "opencode-ai@$OPENCODE_VERSION" ;;
  esac
}

# bin_for AGENT -> the native binary (not the node launcher), or nothing if not installed
bin_for() {
  local d
  d="$(dir_for "$1")/node_modules"
  local candidates=()
  case "$1" in
    claude)
      candidates=("$d/@anthropic-ai/claude-code-linux-x64/claude"
        "$d/@anthropic-ai/claude-code-linux-arm64/claude"
        "$d/@anthropic-ai/claude-code/bin/claude.exe"
        "$d/@anthropic-ai/claude-code/cli.js"
        "$d/.bin/claude") ;;
    codex)
      # @openai/codex ships the platform binary in an optional dependency package
      while IFS= read -r f; do candidates+=("$f"); done < <(find "$d" -path '*vendor*' -type f -name codex 2>/dev/null | sort)
      candidates+=("$d/.bin/codex") ;;
    opencode)
      while IFS= read -r f; do candidates+=("$f"); done < <(find "$d" -path '*opencode-linux*' -type f -name opencode 2>/dev/null | sort)
      candidates+=("$d/.bin/opencode") ;;
  esac
  local c
  for c in "${candidates[@]}"; do
    if [ -f "$c" ] && [ -x "$c" ]; then echo "$c"; return 0; fi
  done
  return 1
}

installed_version() {
  local d pj
  d="$(dir_for "$1")"
  case "$1" in
    claude) pj="$d/node_modules/@anthropic-ai/claude-code/package.json" ;;
    codex) pj="$d/node_modules/@openai/codex/package.json" ;;
    opencode) pj="$d/node_modules/opencode-ai/package.json" ;;
  esac
  [ -f "$pj" ] || return 1
  node -e 'process.stdout.write(require(process.argv[1]).version)' "$pj" 2>/dev/null \
    || python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"], end="")' "$pj"
}

install_one() {
  local agent="$1" want dir pkg
  case "$agent" in
    claude) want="$CLAUDE_VERSION" ;;
    codex) want="$CODEX_VERSION" ;;
    opencode) want="$OPENCODE_VERSION" ;;
  esac
  dir="$(dir_for "$agent")"
  pkg="$(pkg_for "$agent")"
  if [ "$(installed_version "$agent" || true)" = "$want" ] && bin_for "$agent" >/dev/null; then
    echo "agents.sh: $pkg already installed in $dir" >&2
    return 0
  fi
  command -v npm >/dev/null || die "npm is not installed (apt-get install nodejs npm)"
  if ! npm view "$pkg" version >/dev/null 2>&1; then
    die "the npm registry is unreachable (npm view $pkg failed): cannot install $pkg"
  fi
  echo "agents.sh: installing $pkg into $dir" >&2
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"name":"guardian-agents","private":true}' > "$dir/package.json"
  if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg" >&2; then
    die "npm install $pkg failed (is the npm registry reachable?)"
  fi
  bin_for "$agent" >/dev/null || die "$pkg installed but no binary found under $dir"
}

cmd="${1:-install}"
case "$cmd" in
  install)
    agents=(claude codex)
    [ "${GUARDIAN_AGENTS_OPENCODE:-1}" = "1" ] && agents+=(opencode)
    for a in "${agents[@]}"; do install_one "$a"; done
    for a in "${agents[@]}"; do echo "$a $(bin_for "$a")"; done
    ;;
  path)
    a="${2:?usage: agents.sh path claude|codex|opencode}"
    bin_for "$a" || die "$(pkg_for "$a") is not installed: run scripts/agents.sh install"
    ;;
  versions)
    echo "claude $CLAUDE_VERSION"
    echo "codex $CODEX_VERSION"
    echo "opencode $OPENCODE_VERSION"
    ;;
  *)
    echo "usage: $0 install | path claude|codex|opencode | versions" >&2
    exit 2
    ;;
esac
