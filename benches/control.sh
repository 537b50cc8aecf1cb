#!/usr/bin/env bash
# Control plane against the data path: the p99 of requests on a busy proxy worker while
# 10,000-Ingress tables are republished in a loop. `shunt serve --threads 1` (one proxy worker)
# serves benches/scale.sh's 10,000 Ingresses plus one route to a local nginx backend; wrk loads
# that route for DURATION twice per round: once quiet, once while an edit lands every EDIT_EVERY
# seconds (each edit: one file reparsed, 10,000 Ingresses compiled, the table built and published).
#
#   benches/control.sh
#   SHUNT_BIN=/tmp/shunt-before ROUNDS=3 benches/control.sh
#
# Bounded: wrk's -d plus a hard timeout, at most DURATION / EDIT_EVERY + 1 edits per run, and
# readiness awaited at most READY_TIMEOUT seconds. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-10}
EDIT_EVERY=${EDIT_EVERY:-0.5}
CONNECTIONS=${CONNECTIONS:-16}
READY_TIMEOUT=${READY_TIMEOUT:-120}
BACKEND=127.0.0.1:18681
SHUNT_HTTP=127.0.0.1:18680
SHUNT_HTTPS=127.0.0.1:18643
SHUNT_ADMIN=127.0.0.1:18690

need_commands wrk:wrk nginx:nginx-light curl:curl
SHUNT_BIN=$(shunt_bin)
GENERATE_ONLY="$work/gen" benches/scale.sh >/dev/null
manifests="$work/gen/manifests"
{
    api_service_yaml "$BACKEND"
    printf -- '---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: api, namespace: shop}\n'
    printf 'spec:\n  ingressClassName: shunt\n  rules:\n    - host: shop.example.com\n      http:\n        paths:\n'
    printf '          - {path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}\n'
} >"$manifests/shop.yaml"
echo "manifests: $(ls "$manifests" | wc -l) files, $(du -sh "$manifests" | cut -f1)"

nginx_conf backend "$(backend_block "$BACKEND")"
retry 50 curl -fsS "http://$BACKEND/" || { echo "backend did not start"; exit 1; }

RUST_LOG=info NO_COLOR=1 "$SHUNT_BIN" serve --manifests "$manifests" --poll-interval 50ms --threads 1 \
    --http-addr "$SHUNT_HTTP" --https-addr "$SHUNT_HTTPS" --admin-addr "$SHUNT_ADMIN" --access-log false \
    2>"$work/shunt.log" &
shunt_pid=$!
pids+=("$shunt_pid")
retry $((READY_TIMEOUT * 10)) curl -fsS "http://$SHUNT_ADMIN/readyz" || { tail "$work/shunt.log"; echo "not ready"; exit 1; }
retry 50 curl -fsS -H 'Host: shop.example.com' "http://$SHUNT_HTTP/" || { echo "shop route not served"; exit 1; }

publishes() { grep -c 'Published route table' "$work/shunt.log" || true; }
# Changes one endpoint address in one of the 10,000-Ingress files every EDIT_EVERY seconds.
edit_loop() {
    local i edits file
    edits=$(awk -v d="$DURATION" -v e="$EDIT_EVERY" 'BEGIN { printf "%d", d / e + 1 }')
    for ((i = 0; i < edits; i++)); do
        file="$manifests/apps-$(printf %04d $((i % 100))).yaml"
        sed -i '0,/"10\./s//"11./' "$file"
        sleep "$EDIT_EVERY"
    done
}
load() { run_wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" -H 'Host: shop.example.com' "http://$SHUNT_HTTP/"; }

quiet_p99=""
busy_p99=""
echo "round  run    req/s     p99 ms  non-2xx  errors  publishes"
for round in $(seq 1 "$ROUNDS"); do
    before=$(publishes)
    read -r rps p99 bad err _ < <(load)
    printf '%-6s %-6s %-9s %-7s %-8s %-7s %s\n' "$round" quiet "$rps" "$p99" "$bad" "$err" $(($(publishes) - before))
    quiet_p99+="$p99 "
    before=$(publishes)
    edit_loop &
    editor=$!
    read -r rps p99 bad err _ < <(load)
    wait "$editor"
    printf '%-6s %-6s %-9s %-7s %-8s %-7s %s\n' "$round" busy "$rps" "$p99" "$bad" "$err" $(($(publishes) - before))
    busy_p99+="$p99 "
done
echo "median p99: quiet $(median <<<"$quiet_p99") ms, while republishing $(median <<<"$busy_p99") ms"
grep -E ' (WARN|ERROR) ' "$work/shunt.log" | head -5 || true
