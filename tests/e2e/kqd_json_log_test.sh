#!/usr/bin/env bash
# kqd --log-format=json as a log pipeline reads it: a kqd that starts,
# admits, preempts and finishes workloads and stops writes nothing on stderr
# but JSON objects, one a line, each with ts (RFC 3339, milliseconds, UTC),
# level, logger "kqd" and msg; the lines about one workload carry it, its
# LocalQueue and ClusterQueue as fields.
# Usage:
#   kqd_json_log_test.sh BIN_DIR
set -euo pipefail
BIN=$1
WORK=$(mktemp -d)
# kq reads no contexts file but its own (~/.kq/config would lend its credentials).
export KQCONFIG="$WORK/kqconfig"
KQD_PID=""
cleanup() {
  if [ -n "$KQD_PID" ]; then kill -TERM "$KQD_PID" 2>/dev/null || true; wait "$KQD_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

"$BIN/kqd" --listen=127.0.0.1:0 --data-dir="$WORK/data" \
  --port-file="$WORK/port" --log-format=json --log-level=debug 2>"$WORK/kqd.log" &
KQD_PID=$!
for _ in $(seq 300); do [ -s "$WORK/port" ] && break; sleep 0.1; done
export KQ_SERVER="127.0.0.1:$(cat "$WORK/port")"
"$BIN/kq" apply -f - >/dev/null <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
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
      resources: [{name: cpu, nominalQuota: 1}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team-a, name: q}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 100
YAML
"$BIN/kq" submit -n team-a --queue q --name low --request cpu=1 >/dev/null
"$BIN/kq" submit -n team-a --queue q --name high --request cpu=1 --priority-class high >/dev/null
"$BIN/kq" finish -n team-a high --message 'done "quoted"
on two lines' >/dev/null
kill -TERM "$KQD_PID"
wait "$KQD_PID"
KQD_PID=""

python3 - "$WORK/kqd.log" <<'PY'
import json, re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == "", "the log does not end with a newline"
records = []
for n, line in enumerate(lines[:-1], 1):
    try:
        record = json.loads(line)
    except ValueError as e:
        sys.exit(f"line {n} is not JSON ({e}): {line!r}")
    if list(record)[:4] != ["ts", "level", "logger", "msg"]:
        sys.exit(f"line {n}: keys {list(record)}")
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", record["ts"]):
        sys.exit(f"line {n}: ts {record['ts']!r}")
    if record["logger"] != "kqd" or record["level"] not in (
            "trace", "debug", "info", "warn", "error", "critical"):
        sys.exit(f"line {n}: {record}")
    records.append(record)
by_msg = {}
for r in records:
    by_msg.setdefault((r["msg"], r.get("workload")), r)
def want(msg, workload, **fields):
    r = by_msg.get((msg, workload))
    if r is None:
        sys.exit(f"no {msg!r} line for {workload}; got {records}")
    for key, value in fields.items():
        if r.get(key) != value:
            sys.exit(f"{msg} {workload}: {key}={r.get(key)!r}, want {value!r}")
want("workload admitted", "team-a/low", cluster_queue="cq", local_queue="team-a/q")
want("workload evicted", "team-a/low", level="info", reason="Preempted")
want("workload admitted", "team-a/high", cluster_queue="cq")
want("workload finished", "team-a/high", reason="Succeeded",
     message='done "quoted"\non two lines')
if not records[-1]["msg"].startswith("kqd stopped at revision"):
    sys.exit(f"last line: {records[-1]}")
print(f"PASS: {len(records)} JSON lines")
PY
