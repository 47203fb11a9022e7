#!/usr/bin/env bash
# kq-test-reaper: the test's exit code or signal comes through, and nothing
# the test started survives it, whether the test exits or is killed with
# SIGKILL as ctest kills a test that overruns its timeout.
# Usage: reaper_test.sh KQ_TEST_REAPER
set -uo pipefail
REAPER=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; }
alive() { kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" | cut -c1)" != Z ]; }
# all_gone FILE SECONDS: no pid listed in FILE is alive within SECONDS.
all_gone() {
  local end=$(( $(date +%s) + $2 )) pid any
  while :; do
    any=0
    while read -r pid; do alive "$pid" && any=1; done <"$1"
    [ "$any" = 0 ] && return 0
    [ "$(date +%s)" -ge "$end" ] && return 1
    sleep 0.05
  done
}
wait_lines() {  # wait_lines FILE N: FILE has N lines within 10 s
  for _ in $(seq 200); do
    [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return 0
    sleep 0.05
  done
  return 1
}

"$REAPER" sh -c 'exit 3'
[ $? -eq 3 ] && pass "exit code" || fail "exit code"

"$REAPER" sh -c 'kill -TERM $$'
[ $? -eq $((128 + 15)) ] && pass "signal" || fail "signal"

"$REAPER" /nonexistent/program 2>"$WORK/err"
[ $? -eq 127 ] && grep -q "cannot run /nonexistent/program" "$WORK/err" &&
  pass "missing program" || fail "missing program"

# Left behind by a test that exits: a background child, one in a session of
# its own, and one whose parent exited first (reparented).
"$REAPER" sh -c "
  sleep 301 & echo \$! >>'$WORK/left'
  setsid sleep 302 & echo \$! >>'$WORK/left'
  sh -c 'sleep 303 & echo \$! >>\"$WORK/left\"'
  exit 0"
[ $? -eq 0 ] && pass "exit 0 with leftovers" || fail "exit 0 with leftovers"
wait_lines "$WORK/left" 3 && all_gone "$WORK/left" 2 &&
  pass "leftovers killed" || fail "leftovers killed: $(cat "$WORK/left")"

# ends_tree NAME SIGNAL WHOM: a test under the reaper starts a background
# child, one in a session of its own and waits; SIGNAL then goes to WHOM
# (reaper, or shepherd: the reaper's child), and every process of the test
# must be gone within 5 s.
ends_tree() {
  local name=$1 sig=$2 whom=$3 pids="$WORK/$1" reaper target
  "$REAPER" sh -c "
    sleep 304 & echo \$! >>'$pids'
    setsid sleep 305 & echo \$! >>'$pids'
    echo \$\$ >>'$pids'
    wait" &
  reaper=$!
  if ! wait_lines "$pids" 3; then
    fail "$name: the test did not start"
    return
  fi
  target=$reaper
  [ "$whom" = shepherd ] && target=$(pgrep -P "$reaper" | head -1)
  kill "-$sig" "$target"
  wait "$reaper" 2>/dev/null
  all_gone "$pids" 5 && pass "$name" || fail "$name: $(cat "$pids")"
}
# As ctest kills a test that overruns its timeout.
ends_tree "SIGKILL of the reaper ends the test" KILL reaper
# As an interrupted ctest (Ctrl-C) signals its process group.
ends_tree "SIGINT of the shepherd ends the test" INT shepherd
ends_tree "SIGHUP of the shepherd ends the test" HUP shepherd

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
