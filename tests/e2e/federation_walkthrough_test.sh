#!/usr/bin/env bash
# The README's federation walkthrough, for real: one manager and two worker
# kqds on loopback ports, examples/federation's manifests (the contexts
# files rewritten for the ports the kqds picked), `kq run` through the
# manager, and what `kq get mkc`, `kq list` and `kq describe` say. Usage:
#   federation_walkthrough_test.sh BIN_DIR EXAMPLES_DIR
set -euo pipefail
BIN=$1
EXAMPLES=$2/federation
WORK=$(mktemp -d)
export KQCONFIG="$WORK/kqconfig"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

. "$(dirname "$0")/checks.sh"
kq() { "$BIN/kq" "$@"; }

start_kqd() {  # start_kqd NAME [ARGS...]: sets PORT
  local name=$1; shift
  "$BIN/kqd" --listen=127.0.0.1:0 --http-listen=127.0.0.1:0 --data-dir="$WORK/$name" \
    --port-file="$WORK/$name.port" --log-level=warn "$@" &
  PIDS+=($!)
  for _ in $(seq 1 200); do [ -s "$WORK/$name.port" ] && break; sleep 0.05; done
  PORT=$(cat "$WORK/$name.port")
}
start_kqd w1; W1=$PORT
start_kqd w2; W2=$PORT
start_kqd m --config="$EXAMPLES/manager-config.yaml"; M=$PORT
sed "s/7101/$W1/" "$EXAMPLES/worker1.kqconfig" >"$WORK/worker1.kqconfig"
sed "s/7102/$W2/" "$EXAMPLES/worker2.kqconfig" >"$WORK/worker2.kqconfig"
sed "s|/tmp/kq-federation|$WORK|" "$EXAMPLES/manager.yaml" >"$WORK/manager.yaml"

kq --server "127.0.0.1:$W1" apply -f "$EXAMPLES/worker.yaml" >/dev/null
kq --server "127.0.0.1:$W2" apply -f "$EXAMPLES/worker.yaml" >/dev/null
kq --server "127.0.0.1:$M" apply -f "$WORK/manager.yaml" >"$WORK/apply.out"
check "manager applies" grep -q "multikueuecluster.kueue.x-k8s.io/worker2 created" "$WORK/apply.out"
export KQ_SERVER="127.0.0.1:$M"

# 1. Both workers connect.
connected() { [ "$(kq get mkc | grep -c ' True ')" = 2 ]; }
for _ in $(seq 1 100); do connected && break; sleep 0.1; done
check "both workers connected" connected
kq get admissionchecks sample-multikueue -o yaml >"$WORK/ac.out"
check "the check is active" grep -q "The admission check is active" "$WORK/ac.out"

# 2. kq run through the manager runs on one worker with its flavors.
kq run --queue user-queue --request cpu=2 -- \
  sh -c 'echo "running on $KQ_CLUSTER ($KQ_FLAVORS)"' >"$WORK/run.out" 2>"$WORK/run.err"
check "kq run: on a worker" grep -Eq "^running on worker[12] \(main:cpu=default\)$" "$WORK/run.out"
check "kq run: finished" grep -q "finished: exit code 0" "$WORK/run.err"

# 3. A submitted workload: one winner, the loser's copy gone, the winner's bound.
kq submit --queue user-queue --name train --request cpu=3 >/dev/null
admitted() { kq get workload train -o yaml | grep -q "^  clusterName: worker"; }
for _ in $(seq 1 100); do admitted && break; sleep 0.1; done
check "train admitted on a worker" admitted
WINNER=$(kq get workload train -o yaml | sed -n 's/^  clusterName: //p')
LOSER=worker1; W=$W2; L=$W1
if [ "$WINNER" = worker1 ]; then LOSER=worker2; W=$W1; L=$W2; fi
check "list shows the CLUSTER" sh -c "'$BIN/kq' list workloads | grep -E '^train .*cluster-queue +$WINNER +ADMITTED'"
check "the winner holds the copy" sh -c "'$BIN/kq' --server 127.0.0.1:$W list workloads | grep -q '^train .*ADMITTED'"
gone() { ! kq --server "127.0.0.1:$L" list workloads | grep -q '^train '; }
for _ in $(seq 1 50); do gone && break; sleep 0.1; done
check "the loser's copy is gone" gone
kq describe workload train >"$WORK/describe.out"
check "describe: the cluster" grep -q "Cluster: *$WINNER (since " "$WORK/describe.out"
check "describe: the winner's copy" grep -Eq "$WINNER +True +Admitted, bound +Admitted" "$WORK/describe.out"
check "describe: why not the other" grep -q "no copy (admitted on $WINNER)" "$WORK/describe.out"
check "check message" grep -q "The workload was admitted on \"$WINNER\"" "$WORK/describe.out"

# 4. Cancelled on the manager: the copy goes from the worker.
kq cancel train >/dev/null
cleared() { ! kq --server "127.0.0.1:$W" list workloads | grep -q '^train '; }
for _ in $(seq 1 50); do cleared && break; sleep 0.1; done
check "cancel removes the copy" cleared

echo "federation walkthrough: $passed passed, $failed failed"
[ "$failed" = 0 ]
