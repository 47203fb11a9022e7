#!/usr/bin/env bash
# Makes a throwaway PKI for the security tests (issue 30) in DIR, with
# openssl, in about a second:
#   ca.crt ca.key            the test CA, /CN=kq-test-ca (P-256, 2 days)
#   server.crt server.key    kqd's serving certificate: DNS:localhost,
#                            IP:127.0.0.1 (and /CN=kqd)
#   alice.crt alice.key      client /CN=alice/O=team-a
#   admin.crt admin.key      client /CN=admin/O=admins
#   bob.crt bob.key          client /CN=bob/O=team-b
#   rogue-ca.crt             another CA, which signed nothing kqd trusts
#   rogue.crt rogue.key      client /CN=alice/O=admins signed by rogue-ca
#   other-name.crt .key      a serving certificate for DNS:kqd.test only
# Usage: make_test_pki.sh DIR
set -euo pipefail
DIR=$1
mkdir -p "$DIR"
cd "$DIR"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

ca() {  # ca NAME CN
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=$2" -keyout "$1.key" -out "$1.crt" 2>/dev/null
}

# sign NAME SUBJECT CA EXT...: a certificate for NAME.key signed by CA.
sign() {
  local name=$1 subject=$2 ca=$3
  shift 3
  key "$name.key"
  local args=()
  for ext in "$@"; do args+=(-addext "$ext"); done
  openssl req -new -key "$name.key" -subj "$subject" "${args[@]}" -out "$name.csr" 2>/dev/null
  openssl x509 -req -in "$name.csr" -CA "$ca.crt" -CAkey "$ca.key" -CAcreateserial \
    -days 2 -copy_extensions copy -out "$name.crt" 2>/dev/null
  rm -f "$name.csr"
}

ca ca kq-test-ca
ca rogue-ca kq-rogue-ca
sign server /CN=kqd ca "subjectAltName=DNS:localhost,IP:127.0.0.1" "extendedKeyUsage=serverAuth"
sign other-name /CN=kqd ca "subjectAltName=DNS:kqd.test" "extendedKeyUsage=serverAuth"
sign alice /CN=alice/O=team-a ca "extendedKeyUsage=clientAuth"
sign admin /CN=admin/O=admins ca "extendedKeyUsage=clientAuth"
sign bob /CN=bob/O=team-b ca "extendedKeyUsage=clientAuth"
sign rogue /CN=alice/O=admins rogue-ca "extendedKeyUsage=clientAuth"
chmod 600 ./*.key
