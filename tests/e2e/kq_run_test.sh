#!/usr/bin/env bash
# `kq run` for real (issue 5): kqd on a loopback port, two `kq run`s on a
# ClusterQueue with room for one. The low-priority one fills it; the
# high-priority one preempts it: the first command is stopped (SIGTERM)
# within the grace period, the second starts only after the first has
# exited, then the first is admitted again, runs again and completes.
# Meanwhile `kq describe` names the missing resource and the position of
# the waiting workload. Also: Ctrl-C while waiting and while running,
# `kq watch` ending on Ctrl-C, `kq preempt`, `kq stop`/`resume`.
# Usage:
#   kq_run_test.sh BIN_DIR
# KQ_E2E_TRACE=1 traces the script; KQ_E2E_KEEP=1 keeps its files.
set -euo pipefail
if [ -n "${KQ_E2E_TRACE:-}" ]; then set -x; fi
BIN=$1
WORK=$(mktemp -d)
# kq reads no contexts file but its own (~/.kq/config would lend its credentials).
export KQCONFIG="$WORK/kqconfig"
KQD_PID=""
BACKGROUND=()
cleanup() {
  for pid in "${BACKGROUND[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  if [ -n "$KQD_PID" ]; then kill -TERM "$KQD_PID" 2>/dev/null || true; wait "$KQD_PID" 2>/dev/null || true; fi
  if [ -n "${KQ_E2E_KEEP:-}" ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

. "$(dirname "$0")/checks.sh"
# wait_for SECONDS COMMAND...: polls the command every 0.1 s.
wait_for() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}

"$BIN/kqd" --listen=127.0.0.1:0 --http-listen=127.0.0.1:0 --data-dir="$WORK/data" \
  --port-file="$WORK/port" --log-level=warn --eviction-grace=60s &
KQD_PID=$!
wait_for 30 test -s "$WORK/port"
export KQ_SERVER="127.0.0.1:$(cat "$WORK/port")"
# For foreground use only: backgrounded, a function runs in a subshell, and
# signals would not reach kq.
kq() { "$BIN/kq" "$@"; }

cat >"$WORK/setup.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
spec:
  nodeLabels: {pool: batch}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 2}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: q}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: low}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
YAML
kq apply -f "$WORK/setup.yaml" >/dev/null

# Nanoseconds since the epoch, as the commands record them.
now_ns() { date +%s%N; }
export W="$WORK"

# 1. The low-priority run fills the ClusterQueue. Its command runs 30 s the
#    first time and records when it starts and when SIGTERM stops it; once
#    admitted again it records the restart and ends at once.
"$BIN/kq" run --queue q --name low --priority-class low --request cpu=2 \
  --lease 3s --grace 10s -- sh -c '
    if [ -e "$W/low.started" ]; then now=$(date +%s%N); echo "$now" >"$W/low.restarted"; exit 0; fi
    echo "$KQ_WORKLOAD $KQ_CLUSTER_QUEUE $KQ_FLAVORS $KQ_NODE_LABELS" >"$W/low.env"
    trap "date +%s%N >\"\$W/low.stopped\"; exit 143" TERM
    date +%s%N >"$W/low.started"
    sleep 30 & wait' >"$WORK/low.out" 2>"$WORK/low.err" &
LOW_PID=$!
BACKGROUND+=("$LOW_PID")
if wait_for 60 test -s "$WORK/low.started"; then pass; else fail "low starts" "$WORK/low.err"; fi
check "low's environment" grep -qx "default/low cq main:cpu=default pool=batch" "$WORK/low.env"

# 2. The high-priority run preempts it.
PREEMPTOR_SUBMITTED=$(now_ns)
"$BIN/kq" run --queue q --name high --priority-class high --request cpu=2 \
  --lease 3s --grace 10s -- sh -c 'date +%s%N >"$W/high.started"; sleep 4; date +%s%N >"$W/high.ended"' \
  >"$WORK/high.out" 2>"$WORK/high.err" &
HIGH_PID=$!
BACKGROUND+=("$HIGH_PID")
if wait_for 60 test -s "$WORK/high.started"; then pass; else fail "high starts" "$WORK/high.err" "$WORK/low.err"; fi

if [ -s "$WORK/low.stopped" ]; then
  pass
  LOW_STOPPED=$(cat "$WORK/low.stopped")
  HIGH_STARTED=$(cat "$WORK/high.started")
  # The victim's command exited before the preemptor's started.
  if [ "$LOW_STOPPED" -lt "$HIGH_STARTED" ]; then pass; else fail "high starts only after low exited ($LOW_STOPPED >= $HIGH_STARTED)"; fi
  # SIGTERM came within the grace period (10 s) of the preemptor's arrival.
  if [ $((LOW_STOPPED - PREEMPTOR_SUBMITTED)) -lt 10000000000 ]; then pass; else fail "low stopped within the grace period"; fi
else
  fail "low got SIGTERM" "$WORK/low.err"
fi
check "low says it was preempted" grep -q "^stopping: Preempted" "$WORK/low.err"
check "low waits again" grep -q "^evicted: Preempted.*; waiting to be admitted again$" "$WORK/low.err"
check "high waited for the quota" grep -q "^waiting: " "$WORK/high.err"

# 3. While high runs, low waits for cpu: describe names the resource and
#    the position.
kq describe workload low >"$WORK/describe.out" 2>&1 || true
check "describe: explain section" grep -q "^Explain:" "$WORK/describe.out"
check "describe: pending" grep -Eq "^  State: +Pending" "$WORK/describe.out"
check "describe: position" grep -Eq "^  Position In ClusterQueue: +0$" "$WORK/describe.out"
check "describe: cpu is short" grep -q "insufficient unused quota for cpu in flavor default" "$WORK/describe.out"
check "describe: shortage table" grep -Eq "^      cpu +2 +0 +2 +-$" "$WORK/describe.out"

# 4. High ends on its own; low is admitted again and completes.
if wait "$HIGH_PID"; then pass; else fail "high exits 0" "$WORK/high.err"; fi
if wait "$LOW_PID"; then pass; else fail "low exits 0 after its second run" "$WORK/low.err"; fi
if [ -s "$WORK/low.restarted" ] && [ -s "$WORK/high.ended" ] &&
   [ "$(cat "$WORK/low.restarted")" -gt "$(cat "$WORK/high.ended")" ]; then
  pass
else
  fail "low ran again after high ended" "$WORK/low.err"
fi
kq get workloads -o wide >"$WORK/get.out"
check "both succeeded" test "$(grep -Ec '^(low|high) .* True +True ' "$WORK/get.out")" -eq 2
kq get workload low -o json >"$WORK/low.json"
check "low finished as Succeeded" python3 -c "
import json
w = json.load(open('$WORK/low.json'))
f = [c for c in w['status']['conditions'] if c['type'] == 'Finished'][0]
assert f['status'] == 'True' and f['reason'] == 'Succeeded', f
assert f['message'] == 'exit code 0', f
"

# 5. Ctrl-C while waiting cancels the workload (exit 130).
"$BIN/kq" run --queue q --name too-big --request cpu=4 -- true >"$WORK/big.out" 2>"$WORK/big.err" &
BIG_PID=$!
BACKGROUND+=("$BIG_PID")
if wait_for 30 grep -q "^waiting: " "$WORK/big.err"; then pass; else fail "too-big waits" "$WORK/big.err"; fi
kill -INT "$BIG_PID"
rc=0; wait "$BIG_PID" || rc=$?
if [ "$rc" -eq 130 ]; then pass; else fail "Ctrl-C while waiting exits 130 (got $rc)" "$WORK/big.err"; fi
kq get workload too-big -o json >"$WORK/big.json"
check "too-big cancelled" python3 -c "
import json
w = json.load(open('$WORK/big.json'))
f = [c for c in w['status']['conditions'] if c['type'] == 'Finished'][0]
assert f['reason'] == 'Cancelled', f
"

# 6. Ctrl-C while running: the command gets SIGINT, the workload fails
#    with "interrupted", kq exits 130.
"$BIN/kq" run --queue q --name interrupted --request cpu=1 --grace 5s -- sh -c '
    trap "echo int >\"\$W/int.got\"; exit 1" INT
    touch "$W/int.started"; sleep 30 & wait' >"$WORK/int.out" 2>"$WORK/int.err" &
INT_PID=$!
BACKGROUND+=("$INT_PID")
if wait_for 30 test -e "$WORK/int.started"; then pass; else fail "interrupted starts" "$WORK/int.err"; fi
kill -INT "$INT_PID"
rc=0; wait "$INT_PID" || rc=$?
if [ "$rc" -eq 130 ]; then pass; else fail "Ctrl-C while running exits 130 (got $rc)" "$WORK/int.err"; fi
check "the command got SIGINT" test -s "$WORK/int.got"
kq get workload interrupted -o json >"$WORK/int.json"
check "interrupted finished as Failed" python3 -c "
import json
w = json.load(open('$WORK/int.json'))
f = [c for c in w['status']['conditions'] if c['type'] == 'Finished'][0]
assert f['reason'] == 'Failed' and f['message'] == 'interrupted', f
"

# 7. Operator verbs on a running workload: kq preempt evicts it, its
#    runner stops the command and waits; kq stop (deactivate) makes the
#    waiting run give up.
"$BIN/kq" run --queue q --name operated --request cpu=1 --lease 3s --grace 5s -- sh -c '
    touch "$W/op.started"; sleep 30 & wait' >"$WORK/op.out" 2>"$WORK/op.err" &
OP_PID=$!
BACKGROUND+=("$OP_PID")
if wait_for 30 test -e "$WORK/op.started"; then pass; else fail "operated starts" "$WORK/op.err"; fi
rm -f "$WORK/op.started"
check "kq preempt" kq preempt workload operated --reason "e2e test"
check "preempted run stops" wait_for 30 grep -q "^evicted: Preempted: Preempted by .*: e2e test; waiting to be admitted again$" "$WORK/op.err"
check "preempted run starts again" wait_for 30 test -e "$WORK/op.started"
check "kq stop workload" kq stop workload operated
rc=0; wait "$OP_PID" || rc=$?
if [ "$rc" -eq 1 ]; then pass; else fail "deactivated run exits 1 (got $rc)" "$WORK/op.err"; fi
check "deactivated run says so" grep -q "was deactivated" "$WORK/op.err"
check "kq stop clusterqueue" kq stop clusterqueue cq --keep-already-running
kq get cq cq -o json >"$WORK/cq.json"
check "stopPolicy Hold" grep -q '"stopPolicy": "Hold"' "$WORK/cq.json"
check "kq resume clusterqueue" kq resume clusterqueue cq

# 8. kq watch ends cleanly on Ctrl-C, and shows events as they happen.
"$BIN/kq" watch events -A >"$WORK/watch.out" 2>"$WORK/watch.err" &
WATCH_PID=$!
BACKGROUND+=("$WATCH_PID")
sleep 1
kq submit --queue q --name watched --request cpu=1 >/dev/null
check "watch shows the new workload" wait_for 30 grep -q "Workload  *default/watched" "$WORK/watch.out"
kill -INT "$WATCH_PID"
rc=0; wait "$WATCH_PID" || rc=$?
if [ "$rc" -eq 0 ]; then pass; else fail "watch ends with 0 on Ctrl-C (got $rc)" "$WORK/watch.err"; fi
check "watch header" grep -q "^REVISION  *TYPE  *KIND  *NAMESPACE/NAME  *SUMMARY" "$WORK/watch.out"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
