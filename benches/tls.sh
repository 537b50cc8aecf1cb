#!/usr/bin/env bash
# TLS benchmark on loopback: shunt and nginx terminate TLS with the same ECDSA P-256 certificate
# and the same worker count, both proxying to the same static nginx backend, in alternating rounds.
#   keepalive   HTTPS/1.1 requests/s over kept-alive connections (wrk)
#   handshake   a new connection and full TLS handshake per request: wrk with `Connection: close`
#               (wrk offers no session resumption, so each one is a full handshake)
#   h2          HTTP/2 over TLS (ALPN h2) with h2load, SNI shop.example.com via --connect-to
# Prints per-round figures, then medians and shunt/nginx ratios. CPU us/req is the proxy's own
# CPU time (user + system) over the run divided by the requests it served.
#
#   benches/tls.sh
#   ROUNDS=5 DURATION=10s CONNECTIONS=64 WORKERS=1 H2_CLIENTS=16 H2_STREAMS=8 benches/tls.sh
#   SHUNT_BIN=/work/bench-target/release/shunt benches/tls.sh
#
# wrk connects to https://127.0.0.1 (no /etc/hosts entry), so its hello names no host: shunt
# answers with --default-ssl-certificate, nginx with its only certificate; both the same one,
# which also covers IP 127.0.0.1. Bounded: ROUNDS x 3 modes x 2 proxies runs of DURATION.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8s}
CONNECTIONS=${CONNECTIONS:-64}
WORKERS=${WORKERS:-1}
WRK_THREADS=${WRK_THREADS:-1}
H2_CLIENTS=${H2_CLIENTS:-16}
H2_STREAMS=${H2_STREAMS:-8}
MODES=${MODES:-keepalive handshake h2}
# wrk puts the IP in its SNI; rustls drops it with a WARN per handshake, which would measure
# log writing: keep rustls' own warnings out unless asked for (SHUNT_LOG=warn).
SHUNT_LOG=${SHUNT_LOG:-warn,rustls=error}
BACKEND=127.0.0.1:18481
SHUNT_HTTP=127.0.0.1:18480
SHUNT=127.0.0.1:18443
SHUNT_ADMIN=127.0.0.1:18490
NGINX=127.0.0.1:18444
HOST=shop.example.com

need_commands wrk:wrk nginx:nginx-light h2load:nghttp2-client openssl:openssl curl:curl
nginx -V 2>&1 | grep -q -- --with-http_v2_module || { echo "this nginx has no http_v2 module" >&2; exit 1; }
SHUNT_BIN=$(shunt_bin)

tls_site "$BACKEND"

nginx_conf backend "$(backend_block "$BACKEND")"
nginx_conf proxy "$(nginx_proxy_block "$NGINX ssl http2" "$BACKEND" \
    "ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem; ssl_protocols TLSv1.2 TLSv1.3;")"

RUST_LOG=$SHUNT_LOG "${PROXY_CPUS[@]}" "$SHUNT_BIN" serve --manifests "$work/manifests.yaml" --http-addr "$SHUNT_HTTP" --https-addr "$SHUNT" \
    --admin-addr "$SHUNT_ADMIN" --default-ssl-certificate shop/shop-tls --threads "$WORKERS" --access-log false &
pids+=($!)
shunt_pid=$!

retry 100 curl -fsS "http://$SHUNT_ADMIN/readyz" || { echo "shunt is not ready"; exit 1; }
for addr in "$SHUNT" "$NGINX"; do
    # Both with and without SNI, the certificate must verify against itself: same cert, same key type.
    retry 50 curl -fsS --cacert "$work/cert.pem" --resolve "$HOST:${addr##*:}:127.0.0.1" "https://$HOST:${addr##*:}/" ||
        { echo "$addr is not answering over TLS with SNI"; exit 1; }
    curl -fsS --cacert "$work/cert.pem" -H "Host: $HOST" "https://$addr/" >/dev/null ||
        { echo "$addr does not present the certificate without SNI"; exit 1; }
    printf '%-6s %s\n' "$([ "$addr" = "$SHUNT" ] && echo shunt || echo nginx)" "$(openssl s_client -connect "$addr" \
        -servername "$HOST" -alpn h2,http/1.1 </dev/null 2>/dev/null | grep -a -E '^(New,|ALPN|Server Temp Key)' | tr '\n' ' ')"
done

# h2load's "finished in" line gives req/s; the p99 comes from its per-request log (--log-file:
# start us, status, duration us), as its own latency table has no percentiles.
run_h2load() { # address
    rm -f "$work/h2load.log"
    timeout 120 "${LOAD_CPUS[@]}" h2load -c"$H2_CLIENTS" -m"$H2_STREAMS" -t1 -D"$DURATION" \
        --log-file="$work/h2load.log" --connect-to="$1" "https://$HOST:${1##*:}/" > "$work/h2load.out"
    local p99
    p99=$(cut -f3 "$work/h2load.log" | sort -n |
        awk '{ a[NR] = $1 } END { i = int(NR * 0.99); if (i < 1) i = 1; printf "%.2f", a[i] / 1000 }')
    awk -v p99="$p99" '/^finished in/ { rps = $4 } /^status codes:/ { bad += $7 + $9 } /^requests:/ { bad += $10; done = $8 }
             /^Application protocol:/ { proto = $NF }
             END { printf "%s %s %d %s %d\n", rps, p99, bad, proto, done }' "$work/h2load.out"
}

run_mode() { # mode address -> "rps latency_ms bad errors requests"
    case $1 in
        keepalive) run_wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"$DURATION" -H "Host: $HOST" "https://$2/" ;;
        handshake) run_wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"$DURATION" -H "Host: $HOST" -H 'Connection: close' "https://$2/" ;;
        h2) read -r rps mean bad proto total < <(run_h2load "$2") || true
            [ "$proto" = "h2" ] || { echo "h2load negotiated '$proto', not h2" >&2; exit 1; }
            echo "$rps $mean $bad 0 $total" ;;
    esac
}

declare -A RPS LAT CPU RATIO last
echo "rounds=$ROUNDS duration=$DURATION connections=$CONNECTIONS workers=$WORKERS wrk_threads=$WRK_THREADS pin=${PIN:-0} h2=${H2_CLIENTS}x${H2_STREAMS}"
for round in $(seq 1 "$ROUNDS"); do
    for mode in $MODES; do
        # Alternate which proxy goes first, so drift on a shared machine hits both alike.
        order="shunt nginx"; ((round % 2)) || order="nginx shunt"
        for name in $order; do
            addr=$SHUNT; pid=$shunt_pid
            [ "$name" = nginx ] && { addr=$NGINX; pid=${NGINX_PID[proxy]}; }
            before=$(cpu_ticks "$pid")
            read -r rps lat bad err total < <(run_mode "$mode" "$addr") || true
            [ -n "$rps" ] || { echo "$name $mode: no result"; exit 1; }
            read -r cpu cpu_sys <<<"$(cpu_us_per_request "$before" "$(cpu_ticks "$pid")" "$total")"
            [ "$bad" = "0" ] || { echo "$name $mode: $bad non-2xx responses"; exit 1; }
            printf 'round %d %-9s %-6s %10.0f req/s  %s %7.2f ms  CPU %6.1f us/req (kernel %4.1f)  socket errors %s\n' \
                "$round" "$mode" "$name" "$rps" " p99" "$lat" "$cpu" "$cpu_sys" "$err"
            record_result "$(case $mode in keepalive) echo https1 ;; handshake) echo handshake ;; *) echo h2 ;; esac)" \
                "$name" "$rps" "$lat" "$cpu"
            RPS[$mode.$name]+="$rps "; LAT[$mode.$name]+="$lat "; CPU[$mode.$name]+="$cpu "; last[$name]=$rps
        done
        # The pair ran seconds apart: its ratio is steadier than a ratio of medians.
        RATIO[$mode]+="$(awk -v s="${last[shunt]}" -v n="${last[nginx]}" 'BEGIN { print s / n }') "
    done
done

echo "--- median of $ROUNDS rounds (latency: p99)"
for mode in $MODES; do
    s=$(median <<<"${RPS[$mode.shunt]}"); n=$(median <<<"${RPS[$mode.nginx]}")
    sl=$(median <<<"${LAT[$mode.shunt]}"); nl=$(median <<<"${LAT[$mode.nginx]}")
    sc=$(median <<<"${CPU[$mode.shunt]}"); nc=$(median <<<"${CPU[$mode.nginx]}")
    awk -v m="$mode" -v r="$(median <<<"${RATIO[$mode]}")" -v s="$s" -v n="$n" -v sl="$sl" -v nl="$nl" -v sc="$sc" -v nc="$nc" 'BEGIN {
        printf "%-9s shunt %7.0f req/s %6.2f ms %6.1f us/req   nginx %7.0f req/s %6.2f ms %6.1f us/req\n", m, s, sl, sc, n, nl, nc
        printf "%-9s shunt/nginx: req/s %.2f (median of per-round ratios %.2f)  latency %.2f  CPU/req %.2f\n", m, s / n, r, sl / nl, sc / nc }'
done
