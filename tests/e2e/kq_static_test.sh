#!/usr/bin/env bash
# `kq` is linked against static gRPC, protobuf and abseil archives
# (cmake/link-static.sh): it may need glibc's shared objects and nothing else.
# Fails when a missing archive made the launcher fall back to a dynamic link.
set -euo pipefail

KQ="$1/kq"
needed="$(readelf -d "$KQ" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort)"
unexpected="$(echo "$needed" | grep -v -E '^(libc\.so|libm\.so|ld-linux[-a-z0-9_.]*\.so)\.[0-9]+$' || true)"
if [ -n "$unexpected" ]; then
  echo "FAIL: $KQ needs shared objects besides glibc's:" >&2
  echo "$unexpected" >&2
  exit 1
fi
version="$("$KQ" version)"
case "$version" in
  "kq version v"*) ;;
  *) echo "FAIL: kq version printed '$version'" >&2; exit 1 ;;
esac
echo "PASS: $KQ needs only: $(echo $needed)"
