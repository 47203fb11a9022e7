#!/usr/bin/env bash
# Makes every certificate and secret deploy/kubernetes needs, without
# cert-manager, as a kustomize overlay of deploy/kubernetes:
#
#   deploy/kubernetes/kq-certs.sh ~/kq-overlay     # once, and to renew
#   kubectl apply -k ~/kq-overlay                   # instead of -k deploy/kubernetes
#
# OUT_DIR gets, all signed by one private CA (ca.crt, ca.key; ten years):
#
#   kqd.crt, kqd.key          kqd's serving certificate (gRPC and HTTP ports)
#                             for its Service names, localhost and 127.0.0.1
#   shim.crt, shim.key        the shim's client certificate for kqd:
#                             CN=system:serviceaccount:kq-system:kq-k8s-shim,
#                             O=kq:shims (kqd-authz.yaml binds that user)
#   admin.crt, admin.key      an operator's client certificate: CN=kq-admin,
#                             O=kq:admins (kqd-authz.yaml binds that group)
#   webhook.crt, webhook.key  the shim webhook's serving certificate for
#                             kq-k8s-shim-webhook.kq-system.svc
#   prometheus.token          a bearer token for Prometheus (user prometheus,
#                             bound to kueue-metrics-reader); tokens holds
#                             its SHA-256, the form kqd's --token-file reads
#   kustomization.yaml        deploy/kubernetes plus the Secrets kqd-tls,
#                             kqd-tokens, kq-k8s-shim-kq-client and
#                             kq-k8s-shim-webhook-cert, and the webhook's
#                             caBundle set to ca.crt
#
# With OUT_DIR/authz.yaml, the overlay gives kqd those bindings instead of
# deploy/kubernetes/kqd-authz.yaml's: copy that file there and add your
# teams' RoleBindings (deploy/examples/two-teams-authz.yaml shows some).
#
# The admin certificate and the Prometheus token stay in OUT_DIR: no Secret
# holds them. The Secrets' names get kustomize's content hash, so applying
# renewed certificates rolls the pods that mount them. OUT_DIR holds
# private keys and a token: keep it out of version control.
#
# Running it again is safe. It keeps the CA, every certificate that still
# verifies against it, names what this script would name and lasts more
# than 30 more days, the token, and the lines added to tokens by hand;
# it makes anew whatever is missing, expiring or different. --renew makes
# every certificate anew (the CA still kept, so clients trust the new ones
# during the rollout). To rotate Prometheus's token, delete
# prometheus.token and run again: its line in tokens is replaced. A
# directory made by the former webhook-cert.sh is reused: its CA signs
# everything.
#
# Certificates last DAYS (default 365).
set -euo pipefail

usage() {
  echo "usage: $0 [--renew] OUT_DIR [DAYS]" >&2
  exit 2
}
renew=false
if [ "${1:-}" = "--renew" ]; then
  renew=true
  shift
fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  usage
fi
out=$1
days=${2:-365}
case $days in
  '' | *[!0-9]*) usage ;;
esac
namespace=kq-system
webhook=kq-k8s-shim-webhook
here=$(cd "$(dirname "$0")" && pwd)

mkdir -p "$out"
out=$(cd "$out" && pwd)
umask 077

if [ ! -f "$out/ca.key" ] || [ ! -f "$out/ca.crt" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
    -keyout "$out/ca.key" -out "$out/ca.crt" -subj "/CN=kq-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  echo "made a new CA: $out/ca.crt"
fi

# The subject, subjectAltName and extended key usage of a certificate, as
# openssl prints them, to compare what is on disk with what would be made.
describe() {
  openssl x509 -in "$1" -noout -subject -nameopt RFC2253
  openssl x509 -in "$1" -noout -ext subjectAltName,extendedKeyUsage |
    tr -d ' '
}

# issue NAME SUBJECT SAN EKU: NAME.crt and NAME.key signed by the CA, unless
# a good one is there already. SAN is an openssl subjectAltName value or
# empty; EKU is serverAuth or clientAuth.
issue() {
  local name=$1 subject=$2 san=$3 eku=$4
  local crt=$out/$name.crt key=$out/$name.key ext=$out/$name.ext
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    if [ -n "$san" ]; then echo "subjectAltName=$san"; fi
  } >"$ext"
  if ! $renew && [ -f "$crt" ] && [ -f "$key" ] &&
    openssl verify -CAfile "$out/ca.crt" "$crt" >/dev/null 2>&1 &&
    openssl x509 -in "$crt" -noout -checkend $((30 * 86400)) >/dev/null; then
    # What a new one would say, read from a throwaway self-signed one.
    local probe=$out/$name.probe
    local -a extensions=(-addext "extendedKeyUsage=$eku")
    if [ -n "$san" ]; then extensions+=(-addext "subjectAltName=$san"); fi
    openssl req -x509 -newkey rsa:2048 -nodes -keyout /dev/null -days 1 \
      -subj "$subject" "${extensions[@]}" -out "$probe" 2>/dev/null
    if [ "$(describe "$probe")" = "$(describe "$crt")" ]; then
      rm -f "$ext" "$probe"
      return
    fi
    rm -f "$probe"
  fi
  openssl req -newkey rsa:2048 -nodes -sha256 -keyout "$key" \
    -out "$out/$name.csr" -subj "$subject" 2>/dev/null
  openssl x509 -req -sha256 -days "$days" -in "$out/$name.csr" \
    -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial \
    -extfile "$ext" -out "$crt" 2>/dev/null
  rm -f "$out/$name.csr" "$ext" "$out/ca.srl"
  chmod 0644 "$crt"
  echo "made $crt"
}

# A directory made by webhook-cert.sh named the webhook's pair tls.*.
if [ -f "$out/tls.crt" ] && [ ! -f "$out/webhook.crt" ]; then
  mv "$out/tls.crt" "$out/webhook.crt"
  mv "$out/tls.key" "$out/webhook.key"
fi

# kqd: the names clients reach it by (the Service, with and without the
# cluster domain; the pod through the headless Service), and loopback for
# kubectl port-forward and kubectl exec.
kqd_names="DNS:kqd,DNS:kqd.$namespace,DNS:kqd.$namespace.svc"
kqd_names+=",DNS:kqd.$namespace.svc.cluster.local"
kqd_names+=",DNS:kqd-0.kqd-headless.$namespace.svc"
kqd_names+=",DNS:kqd-0.kqd-headless.$namespace.svc.cluster.local"
kqd_names+=",DNS:localhost,IP:127.0.0.1,IP:::1"
issue kqd "/CN=kqd.$namespace.svc" "$kqd_names" serverAuth
# The API server checks the subjectAltName (the CN is ignored by Go's TLS).
issue webhook "/CN=$webhook.$namespace.svc" \
  "DNS:$webhook.$namespace.svc,DNS:$webhook.$namespace.svc.cluster.local" \
  serverAuth
# Client certificates: kqd takes the CN as the user and each O as a group.
issue shim "/CN=system:serviceaccount:$namespace:kq-k8s-shim/O=kq:shims" "" \
  clientAuth
issue admin "/CN=kq-admin/O=kq:admins" "" clientAuth

# Prometheus's bearer token: 32 random bytes as hex. kqd keeps only its
# SHA-256 (the tokens file, --token-file).
if [ ! -s "$out/prometheus.token" ]; then
  printf %s "$(openssl rand -hex 32)" >"$out/prometheus.token"
  hash=$(sha256sum <"$out/prometheus.token" | cut -d' ' -f1)
  {
    if [ -f "$out/tokens" ]; then
      grep -v -E '^sha256:[0-9a-f]+[[:space:]]+prometheus([[:space:]]|$)' \
        "$out/tokens" || true
    else
      echo "# kqd --token-file: sha256:<hex of the token> <user> [group,...]"
      echo "# Add a line: printf %s \"\$TOKEN\" | sha256sum"
    fi
    echo "sha256:$hash prometheus"
  } >"$out/tokens.new"
  mv "$out/tokens.new" "$out/tokens"
  echo "made $out/prometheus.token"
fi

base=$(realpath --relative-to="$out" "$here")
ca_bundle=$(base64 -w0 <"$out/ca.crt")
# The same kustomize syntax as deploy/kubernetes-cert-manager: `bases` and a
# JSON patch file, which kustomize v2 (Debian 12's kubectl) reads too.
cat >"$out/webhook-ca-bundle.yaml" <<YAML
# Generated by deploy/kubernetes/kq-certs.sh: the CA that signed the
# shim's serving certificate, for the API server to verify it with.
- op: replace
  path: /webhooks/0/clientConfig/caBundle
  value: $ca_bundle
YAML
cat >"$out/kustomization.yaml" <<YAML
# Generated by deploy/kubernetes/kq-certs.sh: deploy/kubernetes with kqd's
# serving certificate, the client CA and the token hashes kqd checks
# callers with, the shim's client certificate for kqd, and the webhook's
# serving certificate and CA.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
bases:
- $base
secretGenerator:
# kqd: --tls-cert, --tls-key, --client-ca (mounted at /etc/kq/tls).
- name: kqd-tls
  namespace: $namespace
  type: kubernetes.io/tls
  files:
  - tls.crt=kqd.crt
  - tls.key=kqd.key
  - ca.crt
# kqd: --token-file (mounted at /etc/kq/tokens).
- name: kqd-tokens
  namespace: $namespace
  files:
  - tokens
# The shim: --kq-cert, --kq-key, --kq-tls-ca (mounted at /etc/kq/client).
- name: kq-k8s-shim-kq-client
  namespace: $namespace
  type: kubernetes.io/tls
  files:
  - tls.crt=shim.crt
  - tls.key=shim.key
  - ca.crt
# The shim: --webhook-cert, --webhook-key (mounted at /certs).
- name: kq-k8s-shim-webhook-cert
  namespace: $namespace
  type: kubernetes.io/tls
  files:
  - tls.crt=webhook.crt
  - tls.key=webhook.key
patchesJson6902:
- target:
    group: admissionregistration.k8s.io
    version: v1
    kind: MutatingWebhookConfiguration
    name: kq-k8s-shim
  path: webhook-ca-bundle.yaml
YAML
if [ -f "$out/authz.yaml" ]; then
  cat >>"$out/kustomization.yaml" <<YAML
# OUT_DIR/authz.yaml, your bindings, instead of deploy/kubernetes's
# kqd-authz.yaml (kqd --authz-file).
configMapGenerator:
- name: kqd-authz
  namespace: $namespace
  behavior: replace
  files:
  - authz.yaml
YAML
fi
chmod 0644 "$out/kustomization.yaml" "$out/webhook-ca-bundle.yaml" "$out/ca.crt"
echo "wrote $out: apply with  kubectl apply -k $out"
