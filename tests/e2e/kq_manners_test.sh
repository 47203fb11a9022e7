#!/usr/bin/env bash
# `kq` as a new user first meets it: no kqd at the address (a closed port,
# named by KQ_SERVER or --server) is reported within seconds with kubectl's
# hint and the ways kq picks its server; a mistyped command is named, with
# the registered command it was meant to be (every command `kq --help`
# lists, so commands added later are covered); and a command that waits
# longer than the connect timeout (`kq run` waiting for quota) is not cut
# short by it.
# Usage:
#   kq_manners_test.sh BIN_DIR
# KQ_E2E_TRACE=1 traces the script; KQ_E2E_KEEP=1 keeps its files.
set -euo pipefail
if [ -n "${KQ_E2E_TRACE:-}" ]; then set -x; fi
BIN=$1
KQ="$BIN/kq"
WORK=$(mktemp -d)
# kq reads no contexts file but its own (~/.kq/config would lend its credentials).
export KQCONFIG="$WORK/kqconfig"
KQD_PID=""
RUN_PID=""
cleanup() {
  if [ -n "$RUN_PID" ]; then kill -KILL "$RUN_PID" 2>/dev/null || true; fi
  if [ -n "$KQD_PID" ]; then kill -TERM "$KQD_PID" 2>/dev/null || true; wait "$KQD_PID" 2>/dev/null || true; fi
  if [ -n "${KQ_E2E_KEEP:-}" ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

failed=0
fail() {  # fail NAME [FILE...]: report, with the files that explain it
  local name=$1; shift
  failed=$((failed + 1))
  echo "FAIL: $name"
  for f in "$@"; do echo "  --- $f"; sed 's/^/    /' "$f" 2>/dev/null || true; done
}
now_ms() { date +%s%3N; }
unset KQ_SERVER

# 1. A port that was just bound and closed: nothing listens there.
port=$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()')
refused="The connection to the server 127.0.0.1:$port was refused - did you specify the right host or port?"
for origin in KQ_SERVER --server; do
  start=$(now_ms)
  code=0
  if [ "$origin" = KQ_SERVER ]; then
    KQ_SERVER="127.0.0.1:$port" timeout 60 "$KQ" get cq >"$WORK/out" 2>"$WORK/err" || code=$?
  else
    timeout 60 "$KQ" get cq --server "127.0.0.1:$port" >"$WORK/out" 2>"$WORK/err" || code=$?
  fi
  took=$(( $(now_ms) - start ))
  # At once in fact (a refused connection); 5 s so that a loaded machine
  # cannot make it flake.
  [ "$code" -eq 1 ] || fail "$origin: exit code $code, want 1" "$WORK/err"
  [ "$took" -lt 5000 ] || fail "$origin: took $took ms" "$WORK/err"
  grep -qxF "$refused" "$WORK/err" || fail "$origin: no kubectl hint" "$WORK/err"
  grep -qF "(kq reads --server, KQ_SERVER or the kq context's server; this address came from $origin)" "$WORK/err" ||
    fail "$origin: the hint does not name $origin" "$WORK/err"
done

# 2. Every registered command, mistyped by swapping its 2nd and 3rd letters
#    ("list" -> "lsit"), is named and suggested.
commands=$("$KQ" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && NF {print $1}')
[ -n "$commands" ] || fail "kq --help lists no commands"
for command in $commands; do
  typo="${command:0:1}${command:2:1}${command:1:1}${command:3}"
  [ "$typo" = "$command" ] && continue
  code=0
  "$KQ" "$typo" >"$WORK/out" 2>"$WORK/err" || code=$?
  [ "$code" -eq 2 ] || fail "kq $typo: exit code $code, want 2" "$WORK/err"
  grep -qxF "error: unknown command \"$typo\" for \"kq\"" "$WORK/err" ||
    fail "kq $typo: not named" "$WORK/err"
  grep -qxF "$(printf '\t%s' "$command")" "$WORK/err" ||
    fail "kq $typo: $command not suggested" "$WORK/err"
done

# 3. A wait longer than the connect timeout: `kq run` waits ~2 s for the
#    quota a blocker holds.
"$BIN/kqd" --listen=127.0.0.1:0 --data-dir="$WORK/data" \
  --port-file="$WORK/port" --log-level=warn &
KQD_PID=$!
for _ in $(seq 300); do [ -s "$WORK/port" ] && break; sleep 0.1; done
export KQ_SERVER="127.0.0.1:$(cat "$WORK/port")"
cat >"$WORK/setup.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 1}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: q}
spec: {clusterQueue: cq}
YAML
"$KQ" apply -f "$WORK/setup.yaml" >"$WORK/apply.out" 2>&1 || fail "apply" "$WORK/apply.out"
"$KQ" submit --queue q --name blocker --request cpu=1 >"$WORK/submit.out" 2>&1 ||
  fail "submit blocker" "$WORK/submit.out"
start=$(now_ms)
"$KQ" run --queue q --name waiter --request cpu=1 -- true >"$WORK/run.out" 2>&1 &
RUN_PID=$!
sleep 2
"$KQ" finish blocker >"$WORK/finish.out" 2>&1 || fail "finish blocker" "$WORK/finish.out"
code=0
wait "$RUN_PID" || code=$?
RUN_PID=""
took=$(( $(now_ms) - start ))
[ "$code" -eq 0 ] || fail "kq run that waited: exit code $code" "$WORK/run.out"
[ "$took" -ge 2000 ] || fail "kq run did not wait for the blocker ($took ms)" "$WORK/run.out"

if [ "$failed" -gt 0 ]; then
  echo "$failed check(s) failed"
  exit 1
fi
echo "PASS: unreachable kqd, unknown commands and long waits"
