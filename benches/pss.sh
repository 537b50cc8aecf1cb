#!/usr/bin/env bash
# shunt's proportional set size at a trivial table (one Ingress, `shunt serve --threads 1`) once
# it has served 200 HTTP/1.1 requests, one h2c and one h2-over-TLS request and a `/metrics`
# scrape, RUNS times, each a fresh process from a private copy of the binary (so no other process
# shares its pages). Prints /proc/PID/smaps_rollup's Pss, Pss_Anon and Pss_File in MiB per run.
#
#   SHUNT_BIN=… benches/pss.sh            # RUNS=3
#
# Bounded: RUNS runs of a few seconds, each request under curl's timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh

RUNS=${RUNS:-3}
SETTLE=${SETTLE:-3}
HOST=shop.example.com
BACKEND=127.0.0.1:18981
HTTP=127.0.0.1:18900
HTTPS_PORT=18903
ADMIN=127.0.0.1:18990

need_commands nginx:nginx-light openssl:openssl curl:curl
SHUNT_BIN=$(shunt_bin)
tls_site "$BACKEND" /api
nginx_conf backend "$(backend_block "$BACKEND")"
cp "$SHUNT_BIN" "$work/shunt-private"
for _ in $(seq 200); do printf 'url = "http://%s/api/orders"\nheader = "Host: %s"\noutput = "/dev/null"\n' "$HTTP" "$HOST"; done > "$work/requests.cfg"

echo "run   PSS  anon  file (MiB)"
for run in $(seq "$RUNS"); do
    RUST_LOG=warn,rustls=error "$work/shunt-private" serve --manifests "$work/manifests.yaml" --http-addr "$HTTP" \
        --https-addr "127.0.0.1:$HTTPS_PORT" --admin-addr "$ADMIN" --default-ssl-certificate shop/shop-tls \
        --threads 1 --access-log false &
    pid=$!
    pids+=("$pid")
    retry 200 curl -fsS "http://$ADMIN/readyz" >/dev/null || { echo "shunt is not ready"; exit 1; }
    curl -fsS --max-time 30 -K "$work/requests.cfg"
    curl -fsS --max-time 10 --http2-prior-knowledge -H "Host: $HOST" "http://$HTTP/api/orders" >/dev/null
    curl -fsSk --max-time 10 --http2 --resolve "$HOST:$HTTPS_PORT:127.0.0.1" "https://$HOST:$HTTPS_PORT/api/orders" >/dev/null
    curl -fsS --max-time 10 "http://$ADMIN/metrics" >/dev/null
    sleep "$SETTLE"
    awk -v run="$run" '$1 == "Pss:" { p = $2 } $1 == "Pss_Anon:" { a = $2 } $1 == "Pss_File:" { f = $2 }
        END { printf "%3d %5.1f %5.1f %5.1f\n", run, p / 1024, a / 1024, f / 1024 }' "/proc/$pid/smaps_rollup"
    kill "$pid"
    timeout 30 tail --pid="$pid" -f /dev/null
done
