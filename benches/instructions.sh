#!/usr/bin/env bash
# Instructions per proxied request, shunt and nginx, per protocol: a figure that machine noise does
# not move. Each proxy runs alone under `valgrind --tool=callgrind` (one worker), in front of a
# plain nginx backend, and h2load sends a fixed number of keep-alive requests. Two runs per proxy
# and protocol (FEW and MANY requests); the difference of their instruction counts (Ir) divided by
# the difference of their requests is the cost of one request, without startup, connection setup,
# TLS handshakes and shutdown.
#
#   benches/instructions.sh                         # all protocols, shunt and nginx
#   PROTOCOLS="http1 h2" PROXIES=shunt benches/instructions.sh
#   FEW=1000 MANY=3000 SHUNT_BIN=target-release/release/shunt benches/instructions.sh
#   KEEP=/tmp/ir benches/instructions.sh            # keep the callgrind files for callgrind_annotate
#   ROUTE=auth PROXIES=shunt benches/instructions.sh # the route under ingress-nginx's profile, gated
#   PROXIES="shunt hyper" PROTOCOLS=h2 benches/instructions.sh  # and the floor: stock hyper answering
#                                                   # by itself (benches/hyper_floor.rs, HYPER_BIN=...)
#
# ROUTE (shunt only): plain (default: shunt's own class), nginx (the same route as an Ingress of
# class nginx under `--shadow-class nginx`, ssl-redirect off), auth (that, with `auth-url`
# to an auth service answering 200 on loopback: one subrequest per request) and auth-cache (that,
# with `auth-cache-key` on the Host: after the first, every request is a cache hit).
#
# Protocols: http1 (HTTP/1.1 keep-alive, h2load --h1 -c8), https1 (the same over TLS 1.3) and h2
# (HTTP/2 over TLS, -c4 -m8). Bounded: 2 x proxies x protocols runs, each under a hard timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh

PROTOCOLS=${PROTOCOLS:-http1 https1 h2}
PROXIES=${PROXIES:-shunt nginx}
FEW=${FEW:-1000}
MANY=${MANY:-4000}
PATH_UNDER_TEST=${PATH_UNDER_TEST:-/api/orders?id=42}
HOST=shop.example.com
BACKEND=127.0.0.1:18681
HTTP=127.0.0.1:18680
HTTPS=127.0.0.1:18643
ADMIN=127.0.0.1:18690
AUTH=127.0.0.1:18682
WORKERS=1
ROUTE=${ROUTE:-plain}

need_commands valgrind:valgrind h2load:nghttp2-client nginx:nginx-light openssl:openssl curl:curl
SHUNT_BIN=$(shunt_bin)
HYPER_BIN=${HYPER_BIN:-${CARGO_TARGET_DIR:-target}/release/examples/hyper-floor}
[[ " $PROXIES " != *" hyper "* ]] || [ -x "$HYPER_BIN" ] ||
    cargo build --release -q -p shunt-proxy --example hyper-floor >&2
KEEP=${KEEP:-}
[ -z "$KEEP" ] || mkdir -p "$KEEP"

tls_site "$BACKEND" /api
CLASS_ARGS=()
# The route as an Ingress of class nginx, gated as ROUTE says (see the top).
nginx_route() {
    local annotations="nginx.ingress.kubernetes.io/ssl-redirect: \"false\""
    case $ROUTE in
        nginx) ;;
        auth) annotations+=", nginx.ingress.kubernetes.io/auth-url: \"http://$AUTH/auth\"" ;;
        auth-cache) annotations+=", nginx.ingress.kubernetes.io/auth-url: \"http://$AUTH/auth\""
            annotations+=", nginx.ingress.kubernetes.io/auth-cache-key: \"\$host\"" ;;
        *) echo "ROUTE=$ROUTE: plain, nginx, auth or auth-cache" >&2; exit 1 ;;
    esac
    sed -i "s|^metadata: {name: shop, namespace: shop}\$|metadata: {name: shop, namespace: shop, annotations: {$annotations}}|;
        s|ingressClassName: shunt|ingressClassName: nginx|" "$work/manifests.yaml"
    CLASS_ARGS=(--shadow-class nginx)
}
[ "$ROUTE" = plain ] || nginx_route

# The auth service: 200 and nothing else, beside the pod.
nginx_conf backend "$(backend_block "$BACKEND")
    server { listen $AUTH; location / { return 200; } }"

# The nginx proxy runs as one process (no master) so callgrind sees all of its work.
mkdir -p "$work/proxy"
cat > "$work/proxy/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $work/proxy/nginx.pid;
error_log $work/proxy/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/proxy/body;
    proxy_temp_path $work/proxy/proxy;
    fastcgi_temp_path $work/proxy/fastcgi;
    uwsgi_temp_path $work/proxy/uwsgi;
    scgi_temp_path $work/proxy/scgi;
    keepalive_requests 1000000;
    $(nginx_proxy_block "$HTTP" "$BACKEND")
    server { listen $HTTPS ssl http2; ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3; location / {
        proxy_pass http://pod; proxy_http_version 1.1; proxy_set_header Connection '';
        $(nginx_forwarding_fields) } }
}
CONF


# Starts $1 (shunt or nginx) under callgrind writing to $2; sets proxy_pid.
start_proxy() {
    local cmd
    case $1 in
        # The manifests are polled rarely: each poll costs instructions that are not the requests'.
        shunt) cmd=("$SHUNT_BIN" serve --manifests "$work/manifests.yaml" --poll-interval 1h --http-addr "$HTTP"
                    --https-addr "$HTTPS" --admin-addr "$ADMIN" --default-ssl-certificate shop/shop-tls
                    --threads 1 --access-log false "${CLASS_ARGS[@]}") ;;
        nginx) cmd=(nginx -p "$work/proxy" -c "$work/proxy/nginx.conf") ;;
        hyper) cmd=("$HYPER_BIN" "$HTTP" "$HTTPS" "$work/cert.pem" "$work/key.pem") ;;
    esac
    # --trace-children: shunt re-executes itself once to set its allocator options (controller's
    # main.rs); the re-executed image writes the same file, replacing the first one's few Ir.
    RUST_LOG=warn,rustls=error valgrind -q --tool=callgrind --trace-children=yes --callgrind-out-file="$2" "${cmd[@]}" \
        2>>"$work/valgrind.log" &
    proxy_pid=$!
    retry 600 curl -fsS -H "Host: $HOST" "http://$HTTP$PATH_UNDER_TEST" || { echo "$1 is not answering"; exit 1; }
}

stop_proxy() {
    kill -TERM "$proxy_pid"
    timeout 120 tail --pid="$proxy_pid" -f /dev/null || { echo "proxy $proxy_pid did not exit"; exit 1; }
    wait "$proxy_pid" 2>/dev/null || true
}

# h2load arguments for a protocol; the URL carries the real host so SNI and Host are right.
load_args() {
    case $1 in
        http1) echo "--h1 -c8 --connect-to=$HTTP http://$HOST:${HTTP##*:}$PATH_UNDER_TEST" ;;
        https1) echo "--h1 -c8 --connect-to=$HTTPS https://$HOST:${HTTPS##*:}$PATH_UNDER_TEST" ;;
        h2) echo "-c4 -m8 --connect-to=$HTTPS https://$HOST:${HTTPS##*:}$PATH_UNDER_TEST" ;;
    esac
}

# Total Ir of one proxy run serving $3 requests of protocol $2; the run's own requests (the
# readiness probe) are the same in every run and cancel out in the difference.
measure() { # proxy protocol requests
    local out="$work/callgrind.$1.$2.$3" args done_
    start_proxy "$1" "$out"
    read -r -a args <<<"$(load_args "$2")"
    done_=$(timeout 600 h2load -t1 -n"$3" "${args[@]}" | awk '/^requests:/ { print $8 " " $10 }')
    stop_proxy
    [ "$done_" = "$3 0" ] || { echo "$1 $2: h2load succeeded/failed: $done_ (wanted $3 0)" >&2; exit 1; }
    [ -z "$KEEP" ] || cp "$out" "$KEEP/"
    awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

[ "$ROUTE" = plain ] || echo "route: $ROUTE (shunt only)"
printf '%-6s %-7s %14s %14s %12s\n' proxy proto "Ir($FEW)" "Ir($MANY)" "Ir/request"
for proto in $PROTOCOLS; do
    for proxy in $PROXIES; do
        few=$(measure "$proxy" "$proto" "$FEW")
        many=$(measure "$proxy" "$proto" "$MANY")
        printf '%-6s %-7s %14s %14s %12.0f\n' "$proxy" "$proto" "$few" "$many" \
            "$(awk -v a="$few" -v b="$many" -v n="$((MANY - FEW))" 'BEGIN { print (b - a) / n }')"
    done
done
