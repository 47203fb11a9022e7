#!/bin/bash
# The real kubectl against the API server fixture: discovery, create -f
# (default, server-side field validation), get (table, -o yaml, jsonpath),
# get -w, patch (merge, strategic), wait (a watch), apply, delete -f and the
# NotFound message. Proves the fixture speaks the protocol a real client
# expects, not just what kq's own client does.
#
# Usage: kubectl_test.sh [PYTHON] [KUBECTL]
set -euo pipefail

PYTHON=${1:-/usr/bin/python3}
KUBECTL=${2:-$(command -v kubectl || true)}
HERE=$(cd "$(dirname "$0")" && pwd)
SEED_DIR=${KQ_SEED_DIR:-$HERE/../../examples/seed}

# scripts/install-deps.sh provides kubectl (Debian's kubernetes-client where
# no other is installed), so a missing one is a broken set-up, not a skip.
if [[ -z "$KUBECTL" || ! -x "$KUBECTL" ]]; then
  echo "FAIL: no kubectl ('${KUBECTL}'): run scripts/install-deps.sh" >&2
  exit 1
fi
if ! ls "$SEED_DIR"/*.yaml >/dev/null 2>&1; then
  echo "FAIL: no seed manifests in $SEED_DIR" >&2
  exit 1
fi

WORK=$(mktemp -d)
FIXTURE_PID=
cleanup() {
  if [[ -n "$FIXTURE_PID" ]]; then
    kill "$FIXTURE_PID" 2>/dev/null || true
    wait "$FIXTURE_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

FAILURES=0
fail() {
  echo "FAIL: $*" >&2
  FAILURES=$((FAILURES + 1))
}
# expect_eq WHAT GOT WANT
expect_eq() {
  if [[ "$2" != "$3" ]]; then
    fail "$1: got '$2', want '$3'"
  else
    echo "ok: $1"
  fi
}
# expect_match WHAT TEXT REGEX
expect_match() {
  if ! grep -qE -- "$3" <<<"$2"; then
    fail "$1: '$2' does not match /$3/"
  else
    echo "ok: $1"
  fi
}

mkfifo "$WORK/ready"
"$PYTHON" "$HERE/fake_apiserver.py" --dir "$WORK/fx" --port 0 \
  --job-runtime 1 --pod-stop-seconds 0.3 >"$WORK/ready" &
FIXTURE_PID=$!
read -r -t 20 READY URL <"$WORK/ready" || true
exec 3<"$WORK/ready"  # keep the pipe open for the fixture's stdout
if [[ "${READY:-}" != READY ]]; then
  echo "fixture did not start" >&2
  exit 1
fi
echo "fixture at $URL"
export KUBECONFIG="$WORK/fx/kubeconfig"
k() { "$KUBECTL" --request-timeout=20s "$@"; }

# The seed's batch/v1 Job manifest.
JOB_FILE=
for f in "$SEED_DIR"/*.yaml; do
  if grep -q '^apiVersion: batch/v1' "$f" && grep -q '^kind: Job' "$f"; then
    JOB_FILE=$f
    break
  fi
done
if [[ -z "$JOB_FILE" ]]; then
  echo "no batch/v1 Job manifest in $SEED_DIR" >&2
  exit 1
fi
NAME=$(awk '/^metadata:/{m=1;next} m&&/^  name:/{print $2; exit}' "$JOB_FILE")
NS=$(awk '/^metadata:/{m=1;next} m&&/^  namespace:/{print $2; exit}' "$JOB_FILE")
NS=${NS:-default}
echo "seed job: $NS/$NAME from $JOB_FILE"

# Discovery.
expect_match "server version" "$(k version -o json)" '"gitVersion": "v1\.32\.'
RES=$(k api-resources --no-headers)
expect_match "api-resources jobs" "$RES" '^jobs +batch/v1 +true +Job'
expect_match "api-resources provisioningrequests" "$RES" \
  '^provisioningrequests +provreq,provreqs +autoscaling.x-k8s.io/v1 +true +ProvisioningRequest'
expect_match "api-resources mutatingwebhookconfigurations" "$RES" \
  'mutatingwebhookconfigurations +admissionregistration.k8s.io/v1 +false'

# create -f with kubectl's default validation (strict, server-side).
expect_eq "create job" "$(k create -f "$JOB_FILE" 2>&1)" \
  "job.batch/$NAME created"
expect_match "create again" "$(k create -f "$JOB_FILE" 2>&1 || true)" \
  "Error from server \(AlreadyExists\).*jobs.batch \"$NAME\" already exists"
expect_eq "create provisioningrequest" \
  "$(k create -f "$HERE/testdata/provisioningrequest.yaml" 2>&1)" \
  "podtemplate/ppt-llm-finetune-0919-main created
provisioningrequest.autoscaling.x-k8s.io/llm-finetune-0919-provision-gpu-nodes-1 created"

# get: server-side table columns.
GET=$(k get jobs -n "$NS")
expect_match "get jobs header" "$GET" \
  '^NAME +STATUS +COMPLETIONS +DURATION +AGE$'
expect_match "get jobs row" "$GET" "^$NAME +(Suspended|Running) +0/4 "
expect_match "get jobs -A" "$(k get jobs -A --no-headers)" "^$NS +$NAME "
expect_match "get provisioningrequests" \
  "$(k get provisioningrequests -n "$NS" --no-headers)" \
  '^llm-finetune-0919-provision-gpu-nodes-1 +[0-9]+s$'
expect_match "get provreq (short name)" "$(k get provreq -n "$NS" -o name)" \
  '^provisioningrequest.autoscaling.x-k8s.io/llm-finetune-0919-provision-gpu-nodes-1$'
expect_eq "get podtemplate" \
  "$(k get podtemplate -n "$NS" ppt-llm-finetune-0919-main \
       -o jsonpath='{.template.spec.containers[0].resources.requests.nvidia\.com/gpu}')" \
  "1"

# get -o yaml: what the API server filled in.
YAML=$(k get job "$NAME" -n "$NS" -o yaml)
expect_match "yaml apiVersion" "$YAML" '^apiVersion: batch/v1$'
expect_match "yaml kind" "$YAML" '^kind: Job$'
expect_match "yaml uid" "$YAML" '^  uid: [0-9a-f-]{36}$'
expect_match "yaml resourceVersion" "$YAML" '^  resourceVersion: "[0-9]+"$'
expect_match "yaml creationTimestamp" "$YAML" \
  '^  creationTimestamp: "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z"$'
expect_match "yaml queue label" "$YAML" \
  '^    kueue.x-k8s.io/queue-name: ml-jobs$'
expect_match "yaml suspend" "$YAML" '^  suspend: true$'
expect_match "yaml backoffLimit default" "$YAML" '^  backoffLimit: 6$'
expect_match "yaml completionMode default" "$YAML" \
  '^  completionMode: NonIndexed$'
expect_match "yaml selector" "$YAML" \
  '^      batch.kubernetes.io/controller-uid: [0-9a-f-]{36}$'
expect_match "yaml job-name label" "$YAML" \
  "^        batch.kubernetes.io/job-name: $NAME\$"
expect_match "yaml gpu request" "$YAML" '^            nvidia.com/gpu: "1"$'
expect_eq "jsonpath" \
  "$(k get job "$NAME" -n "$NS" \
       -o jsonpath='{.spec.parallelism}/{.spec.completions}/{.spec.template.spec.restartPolicy}')" \
  "4/4/Never"
expect_eq "suspended condition" \
  "$(k wait --for=condition=Suspended job/"$NAME" -n "$NS" --timeout=10s)" \
  "job.batch/$NAME condition met"

# get -w while the Job is resumed: the watch stream as kubectl shows it.
timeout 30 "$KUBECTL" get job "$NAME" -n "$NS" -w --output-watch-events \
  >"$WORK/watch.out" 2>&1 &
WATCH_PID=$!
for _ in $(seq 100); do  # until the watch has shown the current state
  [[ -s "$WORK/watch.out" ]] && break
  sleep 0.1
done

# patch: strategic (kubectl's default) on scheduling directives while
# suspended, then merge to resume.
expect_eq "strategic patch" \
  "$(k patch job "$NAME" -n "$NS" \
       -p '{"spec":{"template":{"spec":{"nodeSelector":{"cloud.provider.com/accelerator":"nvidia-a100"}}}}}')" \
  "job.batch/$NAME patched"
expect_eq "merge patch" \
  "$(k patch job "$NAME" -n "$NS" --type=merge -p '{"spec":{"suspend":false}}')" \
  "job.batch/$NAME patched"
expect_eq "nodeSelector kept" \
  "$(k get job "$NAME" -n "$NS" -o jsonpath='{.spec.template.spec.nodeSelector}')" \
  '{"cloud.provider.com/accelerator":"nvidia-a100"}'
expect_match "template immutable while running" \
  "$(k patch job "$NAME" -n "$NS" --type=merge \
       -p '{"spec":{"template":{"spec":{"nodeSelector":{"x":"y"}}}}}' 2>&1 || true)" \
  "The Job \"$NAME\" is invalid: spec.template: Invalid value: .*field is immutable"
expect_eq "json patch" \
  "$(k patch job "$NAME" -n "$NS" --type=json \
       -p '[{"op":"add","path":"/metadata/labels/extra","value":"1"}]')" \
  "job.batch/$NAME patched"
expect_eq "wait Complete (watch)" \
  "$(k wait --for=condition=Complete job/"$NAME" -n "$NS" --timeout=15s)" \
  "job.batch/$NAME condition met"
expect_match "get after completion" "$(k get job "$NAME" -n "$NS" --no-headers)" \
  "^$NAME +Complete +4/4 "
for _ in $(seq 100); do  # the watch prints the completion too
  grep -q Complete "$WORK/watch.out" && break
  sleep 0.1
done
kill "$WATCH_PID" 2>/dev/null || true
wait "$WATCH_PID" 2>/dev/null || true
W=$(cat "$WORK/watch.out")
expect_match "watch header" "$W" '^EVENT +NAME +STATUS +COMPLETIONS'
expect_match "watch added" "$W" "^ADDED +$NAME "
expect_match "watch running" "$W" "^MODIFIED +$NAME +Running +0/4"
expect_match "watch complete" "$W" "^MODIFIED +$NAME +Complete +4/4"

# apply on top (client-side apply computes a strategic merge patch).
expect_match "apply" "$(sed 's/ml-jobs/ml-jobs-2/' "$JOB_FILE" | k apply -f - 2>/dev/null)" \
  "^job.batch/$NAME configured$"
expect_eq "applied label" \
  "$(k get job "$NAME" -n "$NS" -o jsonpath='{.metadata.labels.kueue\.x-k8s\.io/queue-name}')" \
  "ml-jobs-2"

# delete -f and the NotFound message.
expect_eq "delete -f" "$(k delete -f "$JOB_FILE")" \
  "job.batch \"$NAME\" deleted"
expect_eq "delete provisioningrequest" \
  "$(k delete -f "$HERE/testdata/provisioningrequest.yaml")" \
  "podtemplate \"ppt-llm-finetune-0919-main\" deleted
provisioningrequest.autoscaling.x-k8s.io \"llm-finetune-0919-provision-gpu-nodes-1\" deleted"
set +e
OUT=$(k get job "$NAME" -n "$NS" 2>&1)
RC=$?
set -e
expect_eq "get deleted exit code" "$RC" 1
expect_eq "get deleted message" "$OUT" \
  "Error from server (NotFound): jobs.batch \"$NAME\" not found"
expect_match "get provreq deleted" \
  "$(k get provreq -n "$NS" 2>&1)" "^No resources found in $NS namespace.$"

# Validation errors as kubectl prints them.
cat >"$WORK/bad.yaml" <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: bad
spec:
  template:
    spec:
      containers: [{name: c, image: busybox}]
      restartPolicy: Always
EOF
expect_match "invalid job" "$(k create -f "$WORK/bad.yaml" 2>&1 || true)" \
  'The Job "bad" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'

if [[ $FAILURES -gt 0 ]]; then
  echo "$FAILURES failure(s)" >&2
  exit 1
fi
echo "PASS"
