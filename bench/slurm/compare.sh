#!/usr/bin/env bash
# kq beside Slurm on this machine, in one run (issue 6):
#   1. 2,000 submissions, one command each: `sbatch --wrap true` vs
#      `kq submit`, sequentially and in 2 parallel streams, the two systems
#      taking turns in 4 rounds;
#   2. each system's fastest bulk path: one job array of 2,000 vs one
#      `kq apply` of 2,000 Workloads (one AdminService.Apply);
#   3. 2,000 held jobs released at once, until all started and finished:
#      slurmd launching `true` vs one `kq-bench runner` process launching
#      `true` for each admitted workload and reporting Finish.
#
# Slurm: Debian's slurm-wlm and munge (scripts/install-deps.sh --with-slurm),
# one node "kqnode" on 127.0.0.1 with 64 CPUs (config_overrides), cons_tres,
# accounting off, everything under a temporary directory. kq: a fresh kqd
# with one ClusterQueue of 64 cpu. Jobs and workloads are submitted held
# (sbatch --hold; a ClusterQueue with stopPolicy Hold), so that submission
# is measured alone and part 3 releases exactly what part 1 submitted.
#
# Usage: bench/slurm/compare.sh [--jobs N] [--build-dir DIR] [--keep]
# Prints a dated Markdown section shaped like kq-bench's (progress goes to
# stderr); `make bench` appends it to bench/RESULTS.md. Needs root (slurmd,
# munged, apt-get). Stops every process it started (by pid) and removes its
# directory on exit.
set -euo pipefail

JOBS=2000
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD_DIR="$ROOT/build"
KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) JOBS="$2"; shift 2 ;;
    --build-dir) BUILD_DIR="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
# Absolute: the jobs run from a directory of their own.
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"
KQ="$BUILD_DIR/bin/kq"
KQD="$BUILD_DIR/bin/kqd"
BENCH="$BUILD_DIR/bin/kq-bench"
for b in "$KQ" "$KQD" "$BENCH"; do
  [ -x "$b" ] || { echo "missing $b: build kq, kqd and kq-bench first" >&2; exit 1; }
done

bash "$ROOT/scripts/install-deps.sh" --with-slurm >&2

T="$(mktemp -d /tmp/kq-slurm-XXXXXX)"
PIDS=()
cleanup() {
  set +e
  # Stop what this script started, newest first, by pid only.
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    kill "${PIDS[$i]}" 2>/dev/null
  done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
  # Jobs' step daemons that slurmd forked and left behind.
  if [ -f "$T/slurmd.pid" ]; then pkill -P "$(cat "$T/slurmd.pid")" 2>/dev/null; fi
  [ "$KEEP" = 1 ] && echo "kept $T" >&2 || rm -rf "$T"
}
trap cleanup EXIT

now() { date +%s.%N; }
# rate COUNT START END -> "123/s"
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f/s", n / (b - a) }'; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f s", b - a }'; }
# wait_for DESCRIPTION SECONDS COMMAND...: polls until COMMAND succeeds.
wait_for() {
  local what="$1" limit="$2"; shift 2
  local end=$(( $(date +%s) + limit ))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$end" ]; then echo "timed out waiting for $what" >&2; exit 1; fi
    sleep 0.05
  done
}

# ---- munge -------------------------------------------------------------------
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/jobs"
chmod 700 "$T/munge"
if command -v mungekey >/dev/null; then
  mungekey --create --keyfile="$T/munge/munge.key" --force
else
  dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 400 "$T/munge/munge.key"
# Nothing here depends on the machine's name resolving (a fresh chroot's
# does not): munged's origin is the loopback address, not the host name's.
munged --force --key-file="$T/munge/munge.key" --socket="$T/munge/munge.sock" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
  --seed-file="$T/munge/munged.seed" --origin=127.0.0.1
wait_for "munged" 10 test -s "$T/munge/munged.pid"
PIDS+=("$(cat "$T/munge/munged.pid")")

# ---- Slurm: one node on loopback ---------------------------------------------
cat >"$T/slurm.conf" <<EOF
ClusterName=kqbench
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MaxJobCount=100000
MaxArraySize=$((JOBS + 1))
MinJobAge=2
NodeName=kqnode NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=64 RealMemory=16000 State=UNKNOWN
PartitionName=bench Nodes=kqnode Default=YES MaxTime=INFINITE State=UP
EOF
# slurmd 22.05 loads a cgroup plugin even when no other plugin uses one, and
# by default detects the cgroup version from /sys/fs/cgroup, which a chroot
# or a container may not have mounted: it then refuses to start. Naming the
# v1 plugin skips the detection; with proctrack/linuxproc and task/none
# nothing ever creates a cgroup.
echo "CgroupPlugin=cgroup/v1" >"$T/cgroup.conf"
export SLURM_CONF="$T/slurm.conf"
slurmctld -c -D -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
PIDS+=("$!")
slurmd -D -N kqnode -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 &
PIDS+=("$!")
node_idle() { sinfo -h -N -o %T | grep -q '^idle'; }
wait_for "the Slurm node to be idle" 60 node_idle

slurm_jobs() { squeue -h -o %i | wc -l; }
slurm_count_is() { [ "$(slurm_jobs)" -eq "$1" ]; }

# ---- kq: a fresh kqd -----------------------------------------------------------
mkdir -p "$T/kq"
"$KQD" --listen=127.0.0.1:0 --http-listen=127.0.0.1:0 --data-dir="$T/kq" --port-file="$T/kq/port" \
  --log-level=warn >"$T/kq/kqd.log" 2>&1 &
PIDS+=("$!")
wait_for "kqd" 30 test -s "$T/kq/port"
export KQ_SERVER="127.0.0.1:$(cat "$T/kq/port")"
# queues HELD_POLICY BULK_POLICY: ClusterQueue and LocalQueue "held" (the
# target of parts 1 and 3) and "bulk" (the 2-stream and bulk submissions),
# each 64 cpu as the node, with these stopPolicies.
queues() {
  cat <<EOF
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: v1
kind: Namespace
metadata: {name: bench}
EOF
  for q in held bulk; do
    local policy="$1"
    [ "$q" = bulk ] && policy="$2"
    cat <<EOF
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: $q}
spec:
  namespaceSelector: {}
  stopPolicy: $policy
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 64}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: bench, name: $q}
spec: {clusterQueue: $q}
EOF
  done
}
queues Hold Hold >"$T/kq/queues-held.yaml"
"$KQ" apply -f "$T/kq/queues-held.yaml" >/dev/null

# ---- 1. one command per job --------------------------------------------------
# The two systems take turns, in ROUNDS rounds each a slice of the jobs, and
# which goes first alternates: both see the same host (a shared machine's
# speed drifts over minutes) and the same background (slurmctld keeps the
# jobs already queued). Each system's rate is its jobs over its own time.
echo "1. $JOBS submissions, one command each..." >&2
cd "$T/jobs"
ROUNDS=4
# slice ROUND -> how many jobs round ROUND (1-based) submits; the last round
# takes the remainder.
slice() {
  local per=$((JOBS / ROUNDS))
  if [ "$1" -eq "$ROUNDS" ]; then echo $((JOBS - per * (ROUNDS - 1))); else echo "$per"; fi
}
add() { awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN { printf "%.6f", a + c - b }'; }
# sbatch_one COUNT [NAME]: COUNT held jobs, one sbatch each.
sbatch_one() {
  for _ in $(seq "$1"); do sbatch -Q --hold -J "${2:-one}" -o /dev/null --wrap true >/dev/null; done
}
# kq_one QUEUE PREFIX FROM COUNT: COUNT workloads, one kq submit each.
kq_one() {
  for i in $(seq "$3" $(($3 + $4 - 1))); do
    "$KQ" submit -n bench --queue "$1" --name "$2-$i" --request cpu=1 >/dev/null
  done
}
# in_two_streams COMMAND...: runs COMMAND 1 and COMMAND 2 at once (the
# stream's number last); `wait` names its pids, a bare one would wait for
# the daemons too.
in_two_streams() {
  local pids=()
  for stream in 1 2; do
    "$@" "$stream" &
    pids+=("$!")
  done
  wait "${pids[@]}"
}
sbatch_stream() { sbatch_one "$1" two; }
kq_stream() { kq_one bulk "two-r$2-$3" 1 "$1"; }

SBATCH_TIME=0; KQ_TIME=0; next=1
for round in $(seq "$ROUNDS"); do
  n=$(slice "$round")
  for turn in 1 2; do
    if [ $(( (round + turn) % 2 )) -eq 0 ]; then
      a=$(now); sbatch_one "$n"; b=$(now); SBATCH_TIME=$(add "$SBATCH_TIME" "$a" "$b")
    else
      a=$(now); kq_one held one "$next" "$n"; b=$(now); KQ_TIME=$(add "$KQ_TIME" "$a" "$b")
    fi
  done
  next=$((next + n))
done
SBATCH_SEQ=$(rate "$JOBS" 0 "$SBATCH_TIME"); KQ_SEQ=$(rate "$JOBS" 0 "$KQ_TIME")

# The 2-stream jobs are cancelled / go to another queue: part 3 releases
# only part 1's.
SBATCH_TIME=0; KQ_TIME=0; TWO=0
for round in $(seq "$ROUNDS"); do
  half=$(( $(slice "$round") / 2 ))
  TWO=$((TWO + 2 * half))
  for turn in 1 2; do
    if [ $(( (round + turn) % 2 )) -eq 0 ]; then
      a=$(now); in_two_streams sbatch_stream "$half"; b=$(now)
      SBATCH_TIME=$(add "$SBATCH_TIME" "$a" "$b")
    else
      a=$(now); in_two_streams kq_stream "$half" "$round"; b=$(now)
      KQ_TIME=$(add "$KQ_TIME" "$a" "$b")
    fi
  done
done
scancel -n two
SBATCH_TWO=$(rate "$TWO" 0 "$SBATCH_TIME"); KQ_TWO=$(rate "$TWO" 0 "$KQ_TIME")

# ---- 2. the bulk path ---------------------------------------------------------
echo "2. $JOBS at once: job array vs one kq apply..." >&2
# The bulk queue holds too, so both measure submission alone.
for i in $(seq "$JOBS"); do
  cat <<EOF
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {namespace: bench, name: bulk-$i}
spec:
  queueName: bulk
  podSets:
  - name: main
    count: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: busybox
          command: ["true"]
          resources: {requests: {cpu: "1"}}
EOF
done >"$T/kq/bulk.yaml"
s0=$(now)
sbatch -Q --hold -J array --array=1-"$JOBS" -o /dev/null --wrap true >/dev/null
s1=$(now)
scancel -n array
k0=$(now)
"$KQ" apply -f "$T/kq/bulk.yaml" >/dev/null
k1=$(now)
ARRAY=$(rate "$JOBS" "$s0" "$s1"); KQ_BULK=$(rate "$JOBS" "$k0" "$k1")
wait_for "cancelled jobs to leave the queue" 120 slurm_count_is "$JOBS"

# ---- 3. release held jobs until all ran ----------------------------------------
echo "3. release $JOBS held jobs until all finished..." >&2
ids=$(squeue -h -o %i -t PD | paste -sd, -)
s0=$(now)
scontrol release "$ids"
wait_for "Slurm to run the released jobs" 900 slurm_count_is 0
s1=$(now)
rm -f "$T/kq/ready"
"$BENCH" runner --server "$KQ_SERVER" -n bench --count "$JOBS" --exec true \
  --parallel 64 --ready-file "$T/kq/ready" >"$T/kq/runner.out" 2>&1 &
RUNNER=$!
PIDS+=("$RUNNER")
wait_for "the kq runner" 30 test -s "$T/kq/ready"
# Release: the held ClusterQueue's stopPolicy back to None (the bulk queue
# stays held, its workloads are not part of this test).
queues None Hold >"$T/kq/queues-release.yaml"
k0=$(now)
"$KQ" apply -f "$T/kq/queues-release.yaml" >/dev/null
wait "$RUNNER"
k1=$(now)
SLURM_RELEASE=$(secs "$s0" "$s1"); KQ_RELEASE=$(secs "$k0" "$k1")
SLURM_RELEASE_RATE=$(rate "$JOBS" "$s0" "$s1"); KQ_RELEASE_RATE=$(rate "$JOBS" "$k0" "$k1")

# What a command costs before it talks to anyone: process start.
p0=$(now)
for i in $(seq 50); do "$KQ" version >/dev/null; done
p1=$(now)
for i in $(seq 50); do sbatch --version >/dev/null; done
p2=$(now)
KQ_START=$(awk -v a="$p0" -v b="$p1" 'BEGIN { printf "%.1f ms", (b - a) * 20 }')
SBATCH_START=$(awk -v a="$p1" -v b="$p2" 'BEGIN { printf "%.1f ms", (b - a) * 20 }')

SLURM_VERSION=$(sbatch --version | awk '{print $2}')
cat <<EOF

## $(date -u '+%Y-%m-%d %H:%M UTC'): \`bench/slurm/compare.sh --jobs $JOBS\`

Machine: $(nproc) cores (nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, $(uname -sr); load average at the end $(cut -d' ' -f1-3 /proc/loadavg).

### slurm/compare.sh: $JOBS jobs, Slurm $SLURM_VERSION (one node, 64 CPUs, cons_tres, accounting off) vs kq

| test | Slurm | kq |
|---|---|---|
| $JOBS submissions, one command each (sbatch --wrap true / kq submit) | $SBATCH_SEQ | $KQ_SEQ |
| same, 2 parallel streams | $SBATCH_TWO | $KQ_TWO |
| bulk: one job array / one kq apply of $JOBS Workloads | $ARRAY | $KQ_BULK |
| release $JOBS held jobs until all ran \`true\` and finished | $SLURM_RELEASE ($SLURM_RELEASE_RATE) | $KQ_RELEASE ($KQ_RELEASE_RATE) |

- Each row is one command per job or per batch, as a user would type it: process start, connection and the call are all counted (sbatch talks to slurmctld through munge; kq to kqd over gRPC, every acknowledgement durable with synchronous=FULL).
- The one-command rows alternate: $ROUNDS rounds, each a slice of the jobs for Slurm and then kq or the other way round (alternating), so that both meet the same host and the same queued jobs; each rate is a system's jobs over its own time.
- Held submissions on both sides; part 3 releases part 1's jobs (scontrol release / the ClusterQueue's stopPolicy back to None) and ends when the last one finished (squeue empty / the runner saw $JOBS Finish acknowledged).
- Process start alone (\`kq version\` / \`sbatch --version\`, 50 runs each): $KQ_START / $SBATCH_START per command.
- Durability differs: slurmctld answers sbatch before its state files are written (a background thread saves state), kqd after the workload's commit is fsync'd. A job array is one job record until its tasks are scheduled; \`kq apply\` stores $JOBS workloads.
EOF
