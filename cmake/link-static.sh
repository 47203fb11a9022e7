#!/usr/bin/env bash
# Link launcher (RULE_LAUNCH_LINK) that links one executable against the
# static archives of its third-party libraries instead of their shared
# objects: every `/path/libX.so[.N]` on the command line becomes
# `/path/libX.a`, every `-lX` is looked up as an archive, and all of them go
# into one --start-group so their order does not matter.
#
# Why: `kq` is run once per command. Loading and relocating gRPC, protobuf and
# ~40 abseil shared objects took 6 of its 8 ms of start-up (issue 6's Slurm
# comparison: sbatch starts in 2 ms). glibc stays shared (NSS, getaddrinfo).
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
    -ldl | -lm | -lrt | -lpthread | -pthread | -lc) ;;  # glibc: stays shared
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
exec "${kept[@]}" -no-pie -static-libstdc++ -static-libgcc \
  -Wl,--start-group "${archives[@]}" -Wl,--end-group \
  -pthread -ldl -lm -lrt
