#!/usr/bin/env bash
# Installs every Debian 12 package that kq needs to build, test and run.
# Idempotent: packages already present are left alone, so `make run` and
# `make test` call it every time at almost no cost.
#
# Usage: scripts/install-deps.sh [--with-slurm]
#   --with-slurm  also Slurm and munge, which bench/slurm/compare.sh runs
#                 beside kq (`make bench`, and its smoke in `make test`).
set -euo pipefail

WITH_SLURM=0
for arg in "$@"; do
  case "$arg" in
    --with-slurm) WITH_SLURM=1 ;;
    *) echo "install-deps: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libgrpc++-dev libgrpc-dev protobuf-compiler protobuf-compiler-grpc
  libprotobuf-dev libabsl-dev libspdlog-dev libfmt-dev libsqlite3-dev
  sqlite3 libyaml-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  python3 python3-grpcio python3-protobuf python3-yaml
  clang-format
  libcurl4-openssl-dev libcpp-httplib-dev libssl-dev openssl
  libjemalloc-dev
  # Metrics: prometheus-cpp's registry and text format (base/metrics.h),
  # and the Prometheus server and promtool the metrics tests run.
  prometheus-cpp-dev prometheus
  # systemd-analyze verifies deploy/systemd's units (tests/deploy); ps,
  # pgrep and pkill are the tests' view of the processes they start.
  systemd procps
  # promtool checks deploy/prometheus's scrape configuration and rules and
  # runs the rules' unit tests (tests/deploy). Debian ships it only in the
  # server's package, whose service starts with it where systemd runs
  # (`systemctl disable --now prometheus` where that is unwanted).
  prometheus
  # The static archives the kq CLI links (cmake/link-static.sh) beyond the
  # ones above: gRPC's own dependencies.
  libc-ares-dev libre2-dev zlib1g-dev
)

# kubectl drives the Kubernetes API fixture in the shim's e2e tests; Debian's
# kubernetes-client provides it where no newer kubectl is installed.
if ! command -v kubectl >/dev/null 2>&1; then
  PACKAGES+=(kubernetes-client)
fi

if [ "$WITH_SLURM" = 1 ]; then
  PACKAGES+=(slurm-wlm munge)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
updated=0
apt_update() {
  if [ "$updated" = 0 ]; then $SUDO apt-get update -qq; updated=1; fi
}

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  apt_update
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Where the machine's kubectl is not Debian's (a newer one, as on the
# project's images), Debian 12's is unpacked beside it, not installed over
# it: tests/deploy builds deploy/ with both, since a fresh Debian 12 machine
# gets kubectl 1.20 and its kustomize v2 from this script.
DEBIAN_KUBECTL_DIR=/usr/local/lib/kq/kubernetes-client
if ! dpkg-query -W -f='${Status}' kubernetes-client 2>/dev/null |
    grep -q "install ok installed" &&
    [ ! -x "$DEBIAN_KUBECTL_DIR/usr/bin/kubectl" ]; then
  echo "install-deps: unpacking Debian's kubernetes-client into $DEBIAN_KUBECTL_DIR"
  apt_update
  work=$(mktemp -d)
  # apt downloads as the _apt user where it can.
  chown _apt "$work" 2>/dev/null || chmod 777 "$work"
  (cd "$work" && $SUDO apt-get download -qq kubernetes-client)
  $SUDO mkdir -p "$DEBIAN_KUBECTL_DIR"
  $SUDO dpkg-deb -x "$work"/kubernetes-client_*.deb "$DEBIAN_KUBECTL_DIR"
  rm -rf "$work"
fi
