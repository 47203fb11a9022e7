#!/usr/bin/env bash
# Prints, one per line and sorted, the Debian packages that provide the
# shared libraries the given binaries load: what the runtime image must
# install (deploy/Dockerfile). Fails if a library is missing or belongs to
# no package, so the image can't silently lack one. A statically linked
# binary needs none.
set -euo pipefail

if [ $# -eq 0 ]; then
  echo "usage: $0 BINARY..." >&2
  exit 2
fi

libs=$(for binary in "$@"; do
  # (errexit does not reach into command substitutions: exit explicitly.)
  if readelf -h "$binary" >/dev/null 2>&1 &&
      ! readelf -l "$binary" 2>/dev/null | grep -q -E 'INTERP|DYNAMIC'; then
    continue  # An ELF executable linked statically (kq) loads no library.
  fi
  out=$(ldd "$binary") || { echo "$binary: ldd failed" >&2; exit 1; }
  if grep -q "not found" <<<"$out"; then
    echo "$binary: $(grep "not found" <<<"$out" | tr -s ' \t' ' ')" >&2
    exit 1
  fi
  # "libx.so.1 => /lib/.../libx.so.1 (0x...)" and "/lib64/ld-linux... (0x...)"
  awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$out"
done | sort -u)

for lib in $libs; do
  real=$(readlink -f "$lib")
  package=""
  # Debian 12 merges /lib into /usr/lib, but dpkg knows each file under the
  # path its package shipped it at.
  for path in "$lib" "$real" "/usr${lib#/usr}" "/usr${real#/usr}" \
      "${lib#/usr}" "${real#/usr}"; do
    package=$(dpkg-query -S "$path" 2>/dev/null | head -n1 | cut -d: -f1) &&
      [ -n "$package" ] && break
  done
  if [ -z "$package" ]; then
    echo "$lib: no Debian package provides it" >&2
    exit 1
  fi
  echo "$package"
done | sort -u
