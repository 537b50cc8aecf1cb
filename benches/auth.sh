#!/bin/bash
# The cost of external authentication (nginx profile `auth-url`), as docs/shadow.md states it:
# ROUNDS bounded loops of N keep-alive HTTP/1.1 requests (h2load) through `shunt serve` with one
# worker to a loopback nginx pod, to a plain route and to one whose auth service is a loopback
# nginx; shunt's CPU from /proc. Prints a line per loop; nothing is asserted.
#   benches/auth.sh target/release/shunt [N=20000] [ROUNDS=3]
set -euo pipefail
BIN=$(realpath "$1"); N=${2:-20000}; ROUNDS=${3:-3}
DIR=$(mktemp -d); trap 'kill $SHUNT $NGINX 2>/dev/null; rm -rf "$DIR"' EXIT
mkdir -p "$DIR/nginx/logs" "$DIR/manifests"
cat > "$DIR/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
error_log $DIR/nginx/logs/error.log;
pid $DIR/nginx/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $DIR/nginx/body;
    proxy_temp_path $DIR/nginx/proxy;
    fastcgi_temp_path $DIR/nginx/fcgi;
    uwsgi_temp_path $DIR/nginx/uwsgi;
    scgi_temp_path $DIR/nginx/scgi;
    keepalive_requests 100000;
    server { listen 127.0.0.1:18081; location / { return 200 "ok\n"; } }
    server { listen 127.0.0.1:18082; location / { add_header X-Auth-User alice; return 200 ""; } }
}
CONF
cat > "$DIR/manifests/all.yaml" <<'YAML'
apiVersion: v1
kind: Service
metadata: {namespace: shop, name: web}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: shop, name: web-1, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 18081}]
endpoints: [{addresses: ["127.0.0.1"], conditions: {ready: true}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {namespace: shop, name: plain}
spec:
  ingressClassName: nginx
  rules:
  - host: plain.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: gated
  annotations:
    nginx.ingress.kubernetes.io/auth-url: "http://127.0.0.1:18082/auth"
    nginx.ingress.kubernetes.io/auth-response-headers: "X-Auth-User"
spec:
  ingressClassName: nginx
  rules:
  - host: gated.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
YAML
nginx -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" & NGINX=$!
"$BIN" serve --manifests "$DIR/manifests" --shadow-class nginx --threads 1 --access-log false \
    --http-addr 127.0.0.1:18080 --https-addr 127.0.0.1:18443 --admin-addr 127.0.0.1:18090 \
    > "$DIR/shunt.log" 2>&1 & SHUNT=$!
sleep 2
cpu() { awk '{print $14 + $15}' "/proc/$SHUNT/stat"; }
ticks_per_second=$(getconf CLK_TCK)
for round in $(seq "$ROUNDS"); do
    for host in plain.example.com gated.example.com; do
        before=$(cpu)
        out=$(h2load --h1 -n "$N" -c 1 --connect-to=127.0.0.1:18080 "http://$host/" 2>&1)
        after=$(cpu)
        status=$(echo "$out" | grep -o 'status codes: [^,]*')
        times=$(echo "$out" | grep 'time for request' | awk '{print $4, $5, $6}')
        micros=$(( (after - before) * 1000000 / ticks_per_second / N ))
        echo "round $round $host: $status; request min/max/mean $times; shunt CPU ${micros} us/request"
    done
done
