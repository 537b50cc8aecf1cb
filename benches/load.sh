#!/usr/bin/env bash
# Load benchmark, all in one run on loopback: wrk against the backend directly, against shunt in
# front of it, and against nginx in front of it (proxy_pass with upstream keepalive), with the same
# connections, duration and worker count, in alternating rounds. Prints requests/s and p99 for each
# (median over rounds) and the ratios shunt/nginx and shunt/direct.
#
#   benches/load.sh                      # defaults below
#   ROUNDS=5 DURATION=10s CONNECTIONS=64 WORKERS=1 benches/load.sh
#
# WORKERS is shunt's --threads and nginx's worker_processes. Bounded: ROUNDS x 3 runs of DURATION.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8s}
CONNECTIONS=${CONNECTIONS:-64}
WORKERS=${WORKERS:-1}
WRK_THREADS=${WRK_THREADS:-1}
PATH_UNDER_TEST=${PATH_UNDER_TEST:-/api/orders?id=42}
BACKEND=127.0.0.1:18081
SHUNT=127.0.0.1:18080
SHUNT_ADMIN=127.0.0.1:18090
NGINX=127.0.0.1:18082

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || need+=(nginx-light)
if ((${#need[@]})); then
    sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}"
fi
cargo build --release -q -p shunt-controller --bin shunt
SHUNT_BIN=target/release/shunt

work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

nginx_conf() { # $1 = name, $2 = server block body
    mkdir -p "$work/$1"
    cat > "$work/$1/nginx.conf" <<CONF
worker_processes $WORKERS;
pid $work/$1/nginx.pid;
error_log $work/$1/error.log warn;
events { worker_connections 8192; }
http {
    access_log off;
    client_body_temp_path $work/$1/body;
    proxy_temp_path $work/$1/proxy;
    fastcgi_temp_path $work/$1/fastcgi;
    uwsgi_temp_path $work/$1/uwsgi;
    scgi_temp_path $work/$1/scgi;
    keepalive_requests 1000000;
    $2
}
CONF
    nginx -p "$work/$1" -c "$work/$1/nginx.conf" -g 'daemon off;' &
    pids+=($!)
}

# The "pod": a fast static answer, so the proxies are what is measured.
nginx_conf backend "server { listen $BACKEND; location / { default_type text/plain; return 200 'hello from the pod\n'; } }"
# nginx as the proxy to compare with: upstream keepalive, the headers shunt also sets.
nginx_conf proxy "upstream pod { server $BACKEND; keepalive 256; }
    server { listen $NGINX; location / {
        proxy_pass http://pod; proxy_http_version 1.1; proxy_set_header Connection '';
        proxy_set_header Host \$host; proxy_set_header X-Real-IP \$remote_addr;
        proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for; proxy_set_header X-Forwarded-Proto \$scheme;
        proxy_set_header X-Forwarded-Host \$host; proxy_set_header X-Forwarded-Port \$server_port; } }"

cat > "$work/manifests.yaml" <<YAML
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: shop}
spec:
  ingressClassName: shunt
  rules:
    - host: shop.example.com
      http:
        paths:
          - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: api-1, namespace: shop, labels: {kubernetes.io/service-name: api}}
addressType: IPv4
ports: [{name: http, port: ${BACKEND##*:}}]
endpoints: [{addresses: ["${BACKEND%%:*}"], conditions: {ready: true}}]
YAML
RUST_LOG=warn "$SHUNT_BIN" serve --manifests "$work/manifests.yaml" --http-addr "$SHUNT" --admin-addr "$SHUNT_ADMIN" \
    --threads "$WORKERS" --access-log false &
pids+=($!)

for _ in $(seq 1 100); do
    curl -fsS -o /dev/null "http://$SHUNT_ADMIN/readyz" 2>/dev/null && curl -fsS -o /dev/null "http://$NGINX/" 2>/dev/null && break
    sleep 0.1
done
for target in "$BACKEND" "$SHUNT" "$NGINX"; do
    curl -fsS -H 'Host: shop.example.com' "http://$target$PATH_UNDER_TEST" >/dev/null || { echo "$target is not answering"; exit 1; }
done

# wrk's "Requests/sec" and the 99% latency line, in ms.
run_wrk() {
    wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -H 'Host: shop.example.com' "http://$1$PATH_UNDER_TEST" |
        awk '/Requests\/sec/ { rps = $2 }
             /^ +99%/ { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
                        ms = (u == "us") ? v / 1000 : (u == "s") ? v * 1000 : v; p99 = ms }
             / Non-2xx or 3xx responses/ { bad = $NF }
             /Socket errors/ { err = $0 }
             END { printf "%s %s %s\n", rps, p99, (bad == "" ? 0 : bad) }'
}

declare -A RPS P99
echo "rounds=$ROUNDS duration=$DURATION connections=$CONNECTIONS workers=$WORKERS wrk_threads=$WRK_THREADS path=$PATH_UNDER_TEST"
for round in $(seq 1 "$ROUNDS"); do
    for name in direct shunt nginx; do
        case $name in direct) addr=$BACKEND ;; shunt) addr=$SHUNT ;; nginx) addr=$NGINX ;; esac
        read -r rps p99 bad < <(run_wrk "$addr")
        [ "$bad" = "0" ] || { echo "$name answered $bad non-2xx responses"; exit 1; }
        printf 'round %d %-6s %10.0f req/s  p99 %7.2f ms\n' "$round" "$name" "$rps" "$p99"
        RPS[$name]+="$rps "; P99[$name]+="$p99 "
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo "--- median of $ROUNDS rounds"
for name in direct shunt nginx; do
    printf '%-6s %10.0f req/s  p99 %7.2f ms\n' "$name" "$(median <<<"${RPS[$name]}")" "$(median <<<"${P99[$name]}")"
done
awk -v s="$(median <<<"${RPS[shunt]}")" -v n="$(median <<<"${RPS[nginx]}")" -v d="$(median <<<"${RPS[direct]}")" \
    -v sp="$(median <<<"${P99[shunt]}")" -v np="$(median <<<"${P99[nginx]}")" \
    'BEGIN { printf "shunt/nginx req/s %.2f  shunt/direct req/s %.2f  shunt/nginx p99 %.2f\n", s / n, s / d, sp / np }'
