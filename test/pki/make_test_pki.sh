#!/usr/bin/env bash
# Generates a throw-away PKI for the TLS tests: a test CA, a server certificate it signs for 127.0.0.1/localhost,
# and a second CA that signed nothing (trusting it must not make the server trusted). Run by meson at build time.
set -euo pipefail
out="$1"
mkdir -p "$out"
cd "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
subj() { openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$1" -keyout "$2" -out "$3" 2>/dev/null; }
subj "nodesmith test CA" "$tmp/ca.key" ca.pem
subj "nodesmith other CA" "$tmp/other.key" other-ca.pem
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server.key -out "$tmp/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
  > "$tmp/ext.cnf"
openssl x509 -req -in "$tmp/server.csr" -CA ca.pem -CAkey "$tmp/ca.key" -CAserial "$tmp/ca.srl" -CAcreateserial -days 3650 \
  -extfile "$tmp/ext.cnf" -out server.pem 2>/dev/null
chmod 600 server.key
