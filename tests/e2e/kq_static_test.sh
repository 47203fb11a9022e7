#!/usr/bin/env bash
# `kq` is linked with no shared objects (cmake/link-static.sh): static gRPC,
# protobuf and abseil archives and a static glibc, so that it starts without
# the dynamic loader. Fails when a missing archive made the launcher fall back
# to a dynamic link, and when the static kq cannot reach kqd by host name
# (the one thing a static glibc could break) with either of gRPC's resolvers.
# Usage: kq_static_test.sh BIN_DIR
set -euo pipefail

BIN="$1"
KQ="$BIN/kq"
if readelf -l "$KQ" | grep -q -E 'INTERP|DYNAMIC'; then
  echo "FAIL: $KQ is linked dynamically; it needs:" >&2
  readelf -d "$KQ" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/  \1/p' >&2
  exit 1
fi
version="$("$KQ" version)"
case "$version" in
  "kq version v"*) ;;
  *) echo "FAIL: kq version printed '$version'" >&2; exit 1 ;;
esac

WORK=$(mktemp -d)
# kq reads no contexts file but its own (~/.kq/config would lend its credentials).
export KQCONFIG="$WORK/kqconfig"
KQD_PID=""
cleanup() {
  if [ -n "$KQD_PID" ]; then kill -TERM "$KQD_PID" 2>/dev/null || true; wait "$KQD_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
"$BIN/kqd" --listen=127.0.0.1:0 --http-listen=127.0.0.1:0 --data-dir="$WORK/data" \
  --port-file="$WORK/port" --log-level=warn &
KQD_PID=$!
for _ in $(seq 300); do [ -s "$WORK/port" ] && break; sleep 0.1; done
port="$(cat "$WORK/port")"
# c-ares (gRPC's default) reads /etc/hosts itself; the native resolver goes
# through glibc's getaddrinfo and its NSS modules.
for resolver in ares native; do
  # A lookup that fails makes kq give up within its 1 s connect timeout,
  # with the resolver's reason; 10 s bounds anything that hangs.
  if ! GRPC_DNS_RESOLVER=$resolver timeout 10 "$KQ" --server "localhost:$port" \
      get clusterqueues >"$WORK/out" 2>&1; then
    echo "FAIL: kq --server localhost:$port (GRPC_DNS_RESOLVER=$resolver):" >&2
    cat "$WORK/out" >&2
    exit 1
  fi
done
echo "PASS: $KQ is static, runs, and reaches kqd by host name"
