#!/usr/bin/env bash
# The README walkthrough, for real: kqd on a loopback port, the kq binary,
# the seed manifests and the Kueue-shaped examples in the tree, plus Kueue's
# own examples when a copy is given. Usage:
#   walkthrough_test.sh BIN_DIR EXAMPLES_DIR [KUEUE_EXAMPLES_DIR]
set -euo pipefail
BIN=$1
EXAMPLES=$2
KUEUE_EXAMPLES=${3:-}
WORK=$(mktemp -d)
# kq reads no contexts file but its own (~/.kq/config would lend its credentials).
export KQCONFIG="$WORK/kqconfig"
KQD_PID=""
cleanup() {
  if [ -n "$KQD_PID" ]; then kill -TERM "$KQD_PID" 2>/dev/null || true; wait "$KQD_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

. "$(dirname "$0")/checks.sh"

start_kqd() {
  rm -f "$WORK/port"
  "$BIN/kqd" --listen=127.0.0.1:0 --http-listen=127.0.0.1:0 --data-dir="$WORK/data" \
    --port-file="$WORK/port" --log-level=warn &
  KQD_PID=$!
  for _ in $(seq 1 200); do [ -s "$WORK/port" ] && break; sleep 0.05; done
  export KQ_SERVER="127.0.0.1:$(cat "$WORK/port")"
}
start_kqd
kq() { "$BIN/kq" "$@"; }
SEED=$EXAMPLES/seed

# 1. The seed as it is: applied, with one warning per broken webhook rule
#    and one for the missing namespaceSelector.
kq apply -f "$SEED/resource-flavors.yaml" -f "$SEED/cluster-queue.yaml" \
  -f "$SEED/local-queue.yaml" -f "$SEED/workload-priority.yaml" \
  -f "$SEED/admission-check.yaml" >"$WORK/apply.out" 2>"$WORK/apply.err"
check "seed applies" grep -q "clusterqueue.kueue.x-k8s.io/ai-training-queue created" "$WORK/apply.out"
check "warning: resource order" grep -q "another order than coveredResources" "$WORK/apply.err"
check "warning: omitted covered resource" grep -q "omits covered resource(s) nvidia.com/gpu" "$WORK/apply.err"
check "warning: limits without cohort" grep -q "spec.cohort is empty" "$WORK/apply.err"
check "warning: no namespaceSelector" grep -q "namespaceSelector is not set" "$WORK/apply.err"

# 2. Under Kueue's rule the Job stays pending, and describe says why.
kq apply -f "$SEED/training-job.yaml" >/dev/null
kq describe workload job-llm-finetune-0919 -n team-ml >"$WORK/describe.out"
check "pending: namespace selector" grep -q "doesn't match ClusterQueue selector" "$WORK/describe.out"

# 3. With namespaceSelector: {} it is admitted on gpu-a100.
sed 's/^spec:$/spec:\n  namespaceSelector: {}/' "$SEED/cluster-queue.yaml" | kq apply -f - >/dev/null 2>&1
kq get workloads -n team-ml >"$WORK/get.out"
check "admitted in ai-training-queue" grep -Eq "job-llm-finetune-0919 +ml-jobs +ai-training-queue +True" "$WORK/get.out"
kq get workloads -n team-ml -o wide >"$WORK/wide.out"
check "on gpu-a100" grep -q "nvidia.com/gpu=gpu-a100" "$WORK/wide.out"
kq get cq ai-training-queue -o wide >"$WORK/cq.out"
check "usage shown" grep -q "nvidia.com/gpu 4/16" "$WORK/cq.out"
kq get workload job-llm-finetune-0919 -n team-ml -o json >"$WORK/wl.json"
check "json is Kueue-shaped" python3 -c "
import json,sys
w=json.load(open('$WORK/wl.json'))
assert w['apiVersion']=='kueue.x-k8s.io/v1beta1' and w['kind']=='Workload', w
a=w['status']['admission']
assert a['clusterQueue']=='ai-training-queue', a
assert a['podSetAssignments'][0]['flavors']['nvidia.com/gpu']=='gpu-a100', a
assert a['podSetAssignments'][0]['resourceUsage']['nvidia.com/gpu']=='4', a
"

kq submit --queue ml-jobs -n team-ml --name sub-a --count 2 \
  --request cpu=1,memory=1Gi,nvidia.com/gpu=1 --priority-class experiment >"$WORK/submit.out"
check "submit from flags" grep -q "workload.kueue.x-k8s.io/sub-a created" "$WORK/submit.out"
check "submit reports admission" grep -q "admitted by ClusterQueue ai-training-queue" "$WORK/submit.out"
kq get workload sub-a -n team-ml -o wide >"$WORK/sub.out"
check "priority class resolved" grep -Eq "sub-a .* 100 +Admitted" "$WORK/sub.out"
if kq submit --queue ml-jobs -n team-ml --name sub-a --request cpu=1 >"$WORK/dup.out" 2>&1; then
  failed=$((failed + 1)); echo "FAIL: duplicate submit accepted"
else
  check "duplicate submit refused" grep -q "ALREADY_EXISTS" "$WORK/dup.out"
fi
check "finish" kq finish sub-a -n team-ml

# 4. Bad input: precise error, exit 1, nothing changed.
cat >"$WORK/bad.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: brand-new
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: bad-cq
spec:
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: brand-new
      resources:
      - name: cpu
        nominalQuota: lots
YAML
if kq apply -f "$WORK/bad.yaml" >"$WORK/bad.out" 2>&1; then
  failed=$((failed + 1)); echo "FAIL: bad manifest accepted"
else
  check "bad quantity names the field" grep -q "nominalQuota" "$WORK/bad.out"
fi
if kq get rf brand-new >/dev/null 2>&1; then
  failed=$((failed + 1)); echo "FAIL: bad manifest changed state"
else
  passed=$((passed + 1))
fi

# 5. Cancel and delete.
check "cancel" kq cancel workload job-llm-finetune-0919 -n team-ml
kq get cq ai-training-queue -o wide >"$WORK/cq2.out"
check "quota released" grep -q "nvidia.com/gpu 0/16" "$WORK/cq2.out"

# 6. Restart: state survives.
kill -TERM "$KQD_PID"; wait "$KQD_PID" || true; KQD_PID=""
start_kqd
kq get workloads -n team-ml >"$WORK/after.out"
check "restart keeps workloads" grep -q "job-llm-finetune-0919" "$WORK/after.out"

# 7. Every Kueue-shaped example (and each of Kueue's own, when given)
#    applies, or refuses only the kinds kq does not support yet, naming them.
while IFS= read -r f; do
  if kq apply -f "$f" >"$WORK/ex.out" 2>&1; then
    passed=$((passed + 1))
  elif grep -q "error:" "$WORK/ex.out" && ! grep "error:" "$WORK/ex.out" | grep -vq "is not supported by kq yet"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); echo "FAIL: $f"; sed 's/^/    /' "$WORK/ex.out"
  fi
done < <(find "$EXAMPLES/kueue" ${KUEUE_EXAMPLES:+"$KUEUE_EXAMPLES"} -name '*.yaml' | sort)

# 7a. Kueue's MultiKueue example applies whole; its worker's kubeconfig is a
#     Secret, which kq does not read: a warning says so, the cluster is not
#     connected (BadKubeConfig) and the check has no usable cluster.
kq apply -f "$EXAMPLES/kueue/multikueue/multikueue-setup.yaml" >"$WORK/mk.out" 2>&1
check "multikueue setup applies" grep -q "multikueuecluster.kueue.x-k8s.io/multikueue-test-worker1" "$WORK/mk.out"
check "multikueue Secret warned about" grep -q "kq does not read Kubernetes Secrets" "$WORK/mk.out"
kq get mkc >"$WORK/mkc.out"
check "multikueue cluster not connected" grep -Eq "multikueue-test-worker1 +False" "$WORK/mkc.out"
kq get mkconf multikueue-test -o yaml >"$WORK/mkconf.yaml"
check "multikueue config as Kueue YAML" grep -q "multikueue-test-worker1" "$WORK/mkconf.yaml"
kq describe ac sample-multikueue >"$WORK/mkac.out"
check "multikueue check has no usable cluster" grep -q "NoUsableClusters" "$WORK/mkac.out"

# 7b. Kueue's provisioning example: its ProvisioningRequestConfig is stored
#     and its AdmissionCheck active; the seed's check names a config the seed
#     does not define, so it is inactive as Kueue's provisioning controller
#     marks it (BadParametersRef).
kq apply -f "$EXAMPLES/kueue/provisioning/provisioning-setup.yaml" >"$WORK/prov.out" 2>&1
check "provisioning setup applies" grep -q "provisioningrequestconfig.kueue.x-k8s.io/prov-test-config" "$WORK/prov.out"
kq get provreqconfig >"$WORK/prc.out"
check "provisioning config listed" grep -Eq "prov-test-config +check-capacity.autoscaling.x-k8s.io" "$WORK/prc.out"
kq get prc prov-test-config -o yaml >"$WORK/prc.yaml"
check "provisioning config as Kueue YAML" grep -q "backoffLimitCount: 2" "$WORK/prc.yaml"
kq describe ac sample-prov >"$WORK/ac.out"
check "provisioning check active" grep -Eq "Active +True +Active" "$WORK/ac.out"
kq describe ac provision-gpu-nodes >"$WORK/seed-ac.out"
check "seed check inactive without its config" grep -q "BadParametersRef" "$WORK/seed-ac.out"

# 8. kqd and `kq simulate` decide alike: the same scenario applied to a
#    fresh kqd and simulated offline admits the same workloads on the same
#    flavors, with the same pending reasons.
SCENARIOS=$(dirname "$0")/../scenarios
for scenario in best_effort_fifo strict_fifo priority_order; do
  kill -TERM "$KQD_PID"; wait "$KQD_PID" || true; KQD_PID=""
  rm -rf "$WORK/data"
  start_kqd
  kq apply -f "$SCENARIOS/$scenario.yaml" >/dev/null 2>&1
  kq get workloads -A -o json >"$WORK/live.json"
  kq simulate -f "$SCENARIOS/$scenario.yaml" -o json >"$WORK/sim.json" 2>/dev/null
  for side in live sim; do
    python3 - "$WORK/$side.json" >"$WORK/$side.txt" <<'PY2'
import json, sys
for w in sorted(json.load(open(sys.argv[1]))["items"],
                key=lambda w: (w["metadata"]["namespace"], w["metadata"]["name"])):
    st = w.get("status", {})
    adm = st.get("admission", {})
    flavors = [sorted(p.get("flavors", {}).items()) for p in adm.get("podSetAssignments", [])]
    reason = [c["reason"] for c in st.get("conditions", [])
              if c["type"] == "QuotaReserved" and c["status"] == "False"]
    print(w["metadata"]["namespace"], w["metadata"]["name"],
          adm.get("clusterQueue", "-"), flavors, reason)
PY2
  done
  check "kqd and simulate agree on $scenario" diff "$WORK/live.txt" "$WORK/sim.txt"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
