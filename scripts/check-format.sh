#!/usr/bin/env bash
# Fails when a tracked C++ file is not clang-format clean (.clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.h' '*.cc' 2>/dev/null || true)
if [ -z "$files" ]; then exit 0; fi
if ! echo "$files" | xargs clang-format --dry-run --Werror 2>/tmp/kq-format.log; then
  echo "clang-format: these files need formatting (run 'make format'):" >&2
  grep -o '^[^:]*\.\(h\|cc\)' /tmp/kq-format.log | sort -u >&2
  exit 1
fi
