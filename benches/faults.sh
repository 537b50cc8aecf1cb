#!/usr/bin/env bash
# Failed requests while one of three pods is killed and restarted every few seconds: shunt (retries,
# ejection) against nginx (`proxy_next_upstream error timeout`, `max_fails=1 fail_timeout=10s`).
# The pods are nginx instances on loopback answering 200; a "kill" is SIGKILL of one of them (its
# port refuses, then its keep-alive connections are gone), a "restart" starts it again.
#
#   benches/faults.sh                         # 20 s per proxy, a pod killed for 2 s every 4 s
#   DURATION=10 PERIOD=2 PROXIES=shunt benches/faults.sh
#
# Bounded: wrk runs DURATION seconds under a hard timeout, the kill loop stops after DURATION.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh

PROXIES=${PROXIES:-shunt nginx}
DURATION=${DURATION:-20}
PERIOD=${PERIOD:-4}
HOST=shop.example.com
PODS=(127.0.0.1:18781 127.0.0.1:18782 127.0.0.1:18783)
SHUNT_HTTP=127.0.0.1:18780
NGINX_HTTP=127.0.0.1:18790
ADMIN=127.0.0.1:18791

need_commands wrk:wrk nginx:nginx-light curl:curl
SHUNT_BIN=$(shunt_bin)

for index in "${!PODS[@]}"; do nginx_conf "pod$index" "$(backend_block "${PODS[$index]}")"; done

# The Ingress and a Service with the three pods, one EndpointSlice each.
plain_site "${PODS[0]}" /
for index in 1 2; do
    cat >> "$work/manifests.yaml" <<YAML
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: api-$((index + 1)), namespace: shop, labels: {kubernetes.io/service-name: api}}
addressType: IPv4
ports: [{name: http, port: ${PODS[$index]##*:}}]
endpoints: [{addresses: ["127.0.0.1"], conditions: {ready: true}}]
YAML
done

RUST_LOG=warn "$SHUNT_BIN" serve --manifests "$work/manifests.yaml" --http-addr "$SHUNT_HTTP" \
    --https-addr 127.0.0.1:18743 --admin-addr "$ADMIN" --threads 1 --access-log false &
pids+=($!)

servers=$(printf 'server %s max_fails=1 fail_timeout=10s; ' "${PODS[@]}")
nginx_conf proxy "upstream pods { $servers keepalive 256; }
    server { listen $NGINX_HTTP; location / {
        proxy_pass http://pods; proxy_http_version 1.1; proxy_set_header Connection '';
        proxy_next_upstream error timeout; $(nginx_forwarding_fields) } }"

retry 100 curl -sf -H "Host: $HOST" "http://$SHUNT_HTTP/" || { echo "shunt did not come up" >&2; exit 1; }
retry 100 curl -sf "http://$NGINX_HTTP/" || { echo "nginx did not come up" >&2; exit 1; }

# Pod 0 by its pid file: it is restarted in the background loop, so the parent's pid list is stale.
kill_pod0() {
    local pid
    pid=$(cat "$work/pod0/nginx.pid" 2>/dev/null) || return 0
    pkill -KILL -P "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
}
start_pod0() {
    nginx -p "$work/pod0" -c "$work/pod0/nginx.conf" -g 'daemon off;' >/dev/null 2>&1 &
    retry 50 curl -sf "http://${PODS[0]}/" || true
}
trap 'kill_pod0; cleanup' EXIT

# Kills pod 0 (SIGKILL, master and workers) for PERIOD/2 seconds every PERIOD seconds, DURATION in all.
flap() {
    local end=$((SECONDS + DURATION))
    while ((SECONDS < end)); do
        sleep $((PERIOD / 2))
        kill_pod0
        sleep $((PERIOD / 2))
        start_pod0
    done
}

printf '%-6s %10s %10s %10s %12s\n' proxy requests non-2xx socket-errs failed-share
for proxy in $PROXIES; do
    case $proxy in
        shunt) url="http://$SHUNT_HTTP/" ;;
        nginx) url="http://$NGINX_HTTP/" ;;
    esac
    flap &
    flapper=$!
    read -r _rps _p99 bad err total < <(run_wrk -t2 -c16 -d"${DURATION}s" -H "Host: $HOST" "$url")
    wait "$flapper" || true
    awk -v p="$proxy" -v t="$total" -v b="$bad" -v e="$err" \
        'BEGIN { printf "%-6s %10d %10d %10d %11.4f%%\n", p, t, b, e, t ? 100 * (b + e) / t : 0 }'
done
