#!/usr/bin/env bash
# kq against a kqd that serves TLS and authorizes (issue 30): a test CA and
# certificates (tests/testing/make_test_pki.sh), kqd with --tls-cert,
# --tls-key, --client-ca, --token-file and --authz-file (team-a's users get
# kueue-batch-user-role in team-a, team-b's in team-b, admins
# kueue-batch-admin-role everywhere), and kq config contexts:
#   1. contexts with client certificates: the admin applies the queues,
#      alice submits and lists in team-a, and is refused a cancel in team-b
#      with kqd's PERMISSION_DENIED message;
#   2. a context with a token file, $KQ_TOKEN and --token;
#   3. what is refused: no credentials (UNAUTHENTICATED), a certificate of
#      another CA and a plaintext client (the handshake), a server name the
#      certificate lacks (and --tls-server-name), a token in plaintext to
#      another host (before connecting), unreadable files;
#   4. kq run over mutual TLS: alice's command runs admitted and the
#      workload finishes.
# Usage:
#   kq_security_test.sh BIN_DIR
# KQ_E2E_TRACE=1 traces the script; KQ_E2E_KEEP=1 keeps its files.
set -euo pipefail
if [ -n "${KQ_E2E_TRACE:-}" ]; then set -x; fi
BIN=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
export KQCONFIG="$WORK/kqconfig"
unset KQ_SERVER KQ_TOKEN
KQD_PID=""
cleanup() {
  if [ -n "$KQD_PID" ]; then kill -TERM "$KQD_PID" 2>/dev/null || true; wait "$KQD_PID" 2>/dev/null || true; fi
  if [ -n "${KQ_E2E_KEEP:-}" ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

passed=0
failed=0
fail() {  # fail NAME [FILE...]: report, with the files that explain it
  local name=$1; shift
  failed=$((failed + 1))
  echo "FAIL: $name"
  for f in "$@"; do echo "  --- $f"; sed 's/^/    /' "$f" 2>/dev/null || true; done
}
# ok NAME COMMAND...: the command must succeed.
ok() {
  local name=$1; shift
  if "$@" >"$WORK/out" 2>"$WORK/err"; then passed=$((passed + 1)); else fail "$name" "$WORK/out" "$WORK/err"; fi
}
# refused NAME CODE TEXT COMMAND...: the command must exit with CODE and
# say TEXT (a fixed string) on stderr.
refused() {
  local name=$1 want_code=$2 text=$3; shift 3
  local code=0
  "$@" >"$WORK/out" 2>"$WORK/err" || code=$?
  if [ "$code" -ne "$want_code" ]; then
    fail "$name: exit code $code, want $want_code" "$WORK/out" "$WORK/err"
  elif ! grep -qF -- "$text" "$WORK/err"; then
    fail "$name: stderr lacks: $text" "$WORK/err"
  else
    passed=$((passed + 1))
  fi
}
has() {  # has NAME TEXT FILE: FILE holds TEXT (a fixed string)
  if grep -qF -- "$2" "$3"; then passed=$((passed + 1)); else fail "$1: no \"$2\"" "$3"; fi
}
wait_for() {  # wait_for SECONDS COMMAND...: polls every 0.1 s
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}
kq() { "$BIN/kq" "$@"; }

# The certificates, the tokens and the bindings.
PKI="$WORK/pki"
bash "$HERE/../testing/make_test_pki.sh" "$PKI"
CI_TOKEN=ci-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
printf %s "$CI_TOKEN" >"$WORK/ci.token"
{
  echo "# the CI robot of team a"
  echo "sha256:$(printf %s "$CI_TOKEN" | sha256sum | cut -d' ' -f1) ci-bot team-a"
} >"$WORK/tokens"
cat >"$WORK/bindings.yaml" <<'YAML'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: admins}
subjects: [{kind: Group, name: admins}]
roleRef: {kind: ClusterRole, name: kueue-batch-admin-role}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: team-a-users, namespace: team-a}
subjects: [{kind: Group, name: team-a}]
roleRef: {kind: ClusterRole, name: kueue-batch-user-role}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: team-b-users, namespace: team-b}
subjects: [{kind: Group, name: team-b}]
roleRef: {kind: ClusterRole, name: kueue-batch-user-role}
YAML
cat >"$WORK/queues.yaml" <<'YAML'
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
      resources: [{name: cpu, nominalQuota: 8}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team-a, name: q}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team-b, name: q}
spec: {clusterQueue: cq}
YAML

"$BIN/kqd" --listen=127.0.0.1:0 --port-file="$WORK/port" --http-listen=127.0.0.1:0 \
  --data-dir="$WORK/data" --log-level=warn \
  --tls-cert="$PKI/server.crt" --tls-key="$PKI/server.key" --client-ca="$PKI/ca.crt" \
  --token-file="$WORK/tokens" --authz-file="$WORK/bindings.yaml" 2>"$WORK/kqd.log" &
KQD_PID=$!
if ! wait_for 30 test -s "$WORK/port"; then
  fail "kqd did not start" "$WORK/kqd.log"
  exit 1
fi
PORT=$(cat "$WORK/port")
SERVER="127.0.0.1:$PORT"

# 1. A context per person, with relative paths (stored absolute).
cd "$PKI"
for person in admin alice bob; do
  ok "set-context $person" kq config set-context "$person" --server="$SERVER" \
    --tls-ca=ca.crt --cert="$person.crt" --key="$person.key"
done
cd "$WORK"
has "paths are stored absolute" "cert: $PKI/alice.crt" "$KQCONFIG"
if [ "$(stat -c %a "$KQCONFIG")" = 600 ]; then passed=$((passed + 1)); else fail "config mode $(stat -c %a "$KQCONFIG")"; fi
ok "use-context admin" kq config use-context admin
ok "admin applies the queues" kq apply -f "$WORK/queues.yaml"
has "the admin's apply" "clusterqueue.kueue.x-k8s.io/cq created" "$WORK/out"
ok "use-context alice" kq config use-context alice
ok "current-context" kq config current-context
has "current-context is alice" "alice" "$WORK/out"
ok "alice submits in team-a" kq submit --queue q -n team-a --name train-1 --request cpu=1
ok "alice lists team-a" kq get workloads -n team-a
has "alice sees her workload" "train-1" "$WORK/out"
ok "get-contexts" kq config get-contexts
has "get-contexts marks alice" "*         alice" "$WORK/out"
# bob's workload in team-b, which alice may not cancel.
ok "bob submits in team-b" kq --context=bob submit --queue q -n team-b --name bobs --request cpu=1
refused "alice cancels in team-b" 1 \
  'kq: PERMISSION_DENIED: user "alice" cannot cancel resource "workloads" in the namespace "team-b"; groups: team-a, system:authenticated' \
  kq cancel bobs -n team-b
refused "alice applies a ClusterQueue" 1 'kq: PERMISSION_DENIED: user "alice"' \
  kq apply -f "$WORK/queues.yaml"
ok "bob cancels his own" kq --context=bob cancel bobs -n team-b

# 2. Tokens: a context with a token file, $KQ_TOKEN, --token.
ok "set-context ci" kq config set-context ci --server="localhost:$PORT" \
  --tls-ca="$PKI/ca.crt" --token-file="$WORK/ci.token"
ok "ci lists team-a" kq --context=ci get workloads -n team-a
has "ci sees team-a" "train-1" "$WORK/out"
ok "ci submits in team-a" kq --context=ci submit --queue q -n team-a --name from-ci --request cpu=1
refused "ci is not in team-b" 1 'kq: PERMISSION_DENIED: user "ci-bot" cannot list resource "workloads" in the namespace "team-b"' \
  kq --context=ci get workloads -n team-b
ok "KQ_TOKEN with --tls-ca" env KQ_TOKEN="$CI_TOKEN" "$BIN/kq" --context= --server="$SERVER" \
  --tls-ca="$PKI/ca.crt" get workloads -n team-a
refused "a wrong token" 1 "kq: UNAUTHENTICATED: " \
  kq --context=ci --token=not-a-known-token get workloads -n team-a

# 3. Refusals.
refused "no credentials" 1 "kq: UNAUTHENTICATED: " \
  kq --context= --server="$SERVER" --tls-ca="$PKI/ca.crt" get workloads -n team-a
refused "a certificate of another CA" 1 "hint: kqd closed the connection: it may not trust the client certificate $PKI/rogue.crt" \
  kq --context=alice --cert="$PKI/rogue.crt" --key="$PKI/rogue.key" get workloads -n team-a
refused "a CA that did not sign kqd's certificate" 1 "certificate verify failed" \
  kq --context=alice --tls-ca="$PKI/rogue-ca.crt" get workloads -n team-a
refused "a plaintext client" 1 "hint: kqd may be serving TLS" \
  kq --context= --server="$SERVER" get cq
refused "a name the certificate lacks" 1 "hint: kqd's certificate does not name kqd.test" \
  kq --context=alice --tls-server-name=kqd.test get workloads -n team-a
ok "--tls-server-name with a name the certificate has" \
  kq --context=alice --server="[::ffff:127.0.0.1]:$PORT" --tls-server-name=localhost get workloads -n team-a
refused "a token in plaintext to another host" 1 \
  "kq: INVALID_ARGUMENT: refusing to send a bearer token in plaintext to kqd.invalid:7070" \
  kq --context= --server=kqd.invalid:7070 --token-file="$WORK/ci.token" get cq
has "the refusal says to use --tls-ca" "--tls-ca" "$WORK/err"
refused "an unreadable key" 1 "kq: INVALID_ARGUMENT: cannot read the client key file \"$WORK/nope.key\"" \
  kq --context=alice --key="$WORK/nope.key" get cq
refused "an unknown context" 1 'error: context "carol" not found: the contexts in '"$KQCONFIG"' are admin, alice, bob, ci' \
  kq --context=carol get cq

# 4. kq run over mutual TLS: alice's command runs admitted, then finishes.
ok "alice runs a command" kq run -n team-a --queue q --name run-1 --request cpu=1 -- \
  sh -c 'echo "$KQ_WORKLOAD on $KQ_CLUSTER_QUEUE" >"$0"' "$WORK/ran"
has "the command ran admitted" "team-a/run-1 on cq" "$WORK/ran"
ok "the run's workload" kq get workload run-1 -n team-a -o yaml
has "the run finished" "reason: Succeeded" "$WORK/out"
refused "alice cannot run in team-b" 1 'kq: PERMISSION_DENIED: user "alice"' \
  kq run -n team-b --queue q --name run-2 --request cpu=1 -- true

echo "passed=$passed failed=$failed"
[ "$failed" -eq 0 ]
