# The pass/fail bookkeeping of the shell end-to-end tests, sourced after
# WORK (a scratch directory) is set. Each test ends with
#   echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {  # fail NAME [FILE...]: report, with the files that explain it
  local name=$1; shift
  failed=$((failed + 1))
  echo "FAIL: $name"
  for f in "$@"; do echo "  --- $f"; sed 's/^/    /' "$f" 2>/dev/null || true; done
}
check() {  # check NAME COMMAND...: the command must succeed
  local name=$1; shift
  if "$@" >"$WORK/check.out" 2>&1; then pass; else fail "$name" "$WORK/check.out"; fi
}
