#!/usr/bin/env bash
# Runs every tests/scenarios/*.yaml through `kq simulate -o wide` and
# compares with the .expected file beside it. Usage: run_scenarios.sh KQ
# (UPDATE=1 rewrites the expected files).
set -uo pipefail
KQ=$1
DIR=$(cd "$(dirname "$0")" && pwd)
passed=0
failed=0
for scenario in "$DIR"/*.yaml; do
  expected="${scenario%.yaml}.expected"
  actual=$("$KQ" simulate -f "$scenario" -o wide 2>/dev/null)
  if [ "${UPDATE:-0}" = 1 ]; then
    printf '%s\n' "$actual" >"$expected"
  fi
  if [ -f "$expected" ] && [ "$actual" = "$(cat "$expected")" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $(basename "$scenario")"
    diff <(printf '%s\n' "$actual") "$expected" | sed 's/^/    /'
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
