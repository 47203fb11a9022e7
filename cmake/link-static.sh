#!/usr/bin/env bash
# Link launcher (RULE_LAUNCH_LINK) that links one executable with no shared
# objects at all: every `/path/libX.so[.N]` on the command line becomes
# `/path/libX.a`, every `-lX` is looked up as an archive, all of them go into
# one --start-group so their order does not matter, and glibc is linked
# statically too (-static).
#
# Why: `kq` is run once per command. Loading and relocating gRPC, protobuf and
# ~40 abseil shared objects took 6 of its 8 ms of start-up (issue 6's Slurm
# comparison: sbatch starts in 2 ms). Linking glibc too saves the dynamic
# loader's remaining ~0.35 ms (kq version 1.57 -> 1.23 ms).
#
# What a static glibc gives up is NSS without dlopen. kq reaches it only
# through host name lookups: gRPC resolves names with c-ares, which reads
# /etc/hosts and resolv.conf itself; with GRPC_DNS_RESOLVER=native, glibc's
# getaddrinfo loads the NSS modules of the glibc kq was built with, which the
# machine that built it has. The linker's warnings about exactly that are
# dropped below; every other line it prints is kept.
#
# All or nothing: if one archive is missing, two copies of a library (one
# static, one pulled in by a shared object) would be linked, so the command
# runs unchanged and a warning says why. tests/e2e/kq_static_test.sh fails
# then, so CI sees it. The same holds for a response file (@file), whose
# arguments this script cannot see.
set -euo pipefail

compiler="$1"
declare -a kept=() archives=()
missing=""
for arg in "$@"; do
  case "$arg" in
    @*)
      missing="$arg (a response file)"
      ;;
    *.so | *.so.*)
      # Shortest suffix: a directory may have ".so" in its name.
      archive="${arg%.so*}.a"
      if [ -f "$archive" ]; then
        archives+=("$archive")
      else
        missing="$arg"
      fi
      ;;
    -ldl | -lm | -lrt | -lpthread | -pthread | -lc) ;;  # glibc: named once, below
    -l*)
      # The compiler prints the bare name when it finds no such file.
      archive="$("$compiler" -print-file-name="lib${arg#-l}.a")"
      if [ -f "$archive" ]; then
        archives+=("$archive")
      else
        missing="$arg"
      fi
      ;;
    *)
      kept+=("$arg")
      ;;
  esac
done

if [ -n "$missing" ]; then
  echo "link-static.sh: no static archive for $missing;" \
    "linking dynamically" >&2
  exec "$@"
fi

# Shared abseil objects carry their own dependencies; the archives need every
# one of them named, and the linker takes only what is used.
absl_dir=""
for archive in "${archives[@]}"; do
  case "$archive" in
    */libabsl_*.a) absl_dir="$(dirname "$archive")" ;;
  esac
done
if [ -n "$absl_dir" ]; then
  archives+=("$absl_dir"/libabsl_*.a)
fi

# -no-pie: Debian's archives are not position-independent, and a fixed
# address also saves the start-up relocations.
status=0
log="$("${kept[@]}" -static -no-pie \
  -Wl,--start-group "${archives[@]}" -Wl,--end-group \
  -pthread -ldl -lm -lrt 2>&1)" || status=$?
# glibc's warning is two lines: "...: in function `f':" and
# "(.text+0x..): warning: Using 'f' in statically linked applications ...".
if [ -n "$log" ]; then
  printf '%s\n' "$log" |
    awk '/: in function `/ { held = $0; next }
         /warning: Using .* in statically linked applications/ { held = ""; next }
         { if (held != "") print held; held = ""; print }
         END { if (held != "") print held }' >&2
fi
exit "$status"
