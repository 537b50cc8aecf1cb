#!/usr/bin/env bash
# Side by side, interleaved and pinned: shunt, lean nginx (the fields of rounds 1-8), nginx with
# ingress-nginx's fields (X-Request-ID, Forwarded) and haproxy, each one worker/thread, in front of
# the same nginx pod, over HTTP/1.1 (wrk), h2c (h2load, prior knowledge), HTTPS/1.1 (wrk) and h2
# over TLS (h2load). Per run: req/s, the proxy's CPU µs per request (/proc utime + stime of the
# proxy's processes over the run, divided by the requests), p99 latency (wrk's, or from h2load's
# per-request log) and the connections it opened to the pod (the pod's stub_status `accepts`);
# after the runs, each proxy's proportional set size.
# Then per protocol the medians and shunt's ratio to each peer (median of the per-round ratios:
# the runs of a round are seconds apart).
#
#   benches/compare.sh                                   # ROUNDS=3 DURATION=5s, pinned
#   ROUNDS=1 DURATION=1s benches/compare.sh              # a smoke run (~20 s of load)
#   PROTOCOLS="h1 h2c" PROXIES="shunt haproxy" SHUNT_BIN=... benches/compare.sh
#   PROXIES="shunt haproxy hyper-floor h2-floor" benches/compare.sh   # and the ceilings, below
#
# The ceilings answer every request themselves, with no pod behind them (benches/hyper_floor.rs,
# HYPER_BIN=...): `hyper-floor` is stock hyper (every protocol), `h2-floor` the h2 crate alone
# with no task per stream (h2c only). A proxy built on them spends at least their CPU per request,
# plus the exchange with the pod.
#
# PIN=1 (the default here): the proxy alone on CPU 1, load and pod on CPU 0; PIN=0 shares both.
# Installs wrk, haproxy, h2load (nghttp2-client) and nginx-light when missing. Bounded: ROUNDS x
# protocols x proxies runs of DURATION, each under a hard timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
PIN=${PIN:-1}
source benches/common.sh

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-64}
H2_CLIENTS=${H2_CLIENTS:-10}
H2_STREAMS=${H2_STREAMS:-5}
PROTOCOLS=${PROTOCOLS:-h1 h2c tls h2}
PROXIES=${PROXIES:-shunt nginx-lean nginx-ingress haproxy}
HOST=shop.example.com
PATH_UNDER_TEST=${PATH_UNDER_TEST:-/api/orders?id=42}
BACKEND=127.0.0.1:18881
BACKEND_STATUS=127.0.0.1:18882
ADMIN=127.0.0.1:18890
# Each proxy's ports: HTTP/1.1, h2c (prior knowledge), TLS (ALPN h2 and http/1.1).
declare -A PORT_H1=([shunt]=18700 [nginx-lean]=18710 [nginx-ingress]=18720 [haproxy]=18730 [hyper-floor]=18740)
declare -A PORT_H2C=([shunt]=18700 [nginx-lean]=18711 [nginx-ingress]=18721 [haproxy]=18731 [hyper-floor]=18740
    [h2-floor]=18741)
declare -A PORT_TLS=([shunt]=18703 [nginx-lean]=18713 [nginx-ingress]=18723 [haproxy]=18733 [hyper-floor]=18743)
# Whether $1 serves protocol $2 (h2-floor serves h2c alone).
serves() { case $2 in h1) [ -n "${PORT_H1[$1]:-}" ] ;; h2c) [ -n "${PORT_H2C[$1]:-}" ] ;; *) [ -n "${PORT_TLS[$1]:-}" ] ;; esac; }

need_commands wrk:wrk haproxy:haproxy h2load:nghttp2-client nginx:nginx-light openssl:openssl curl:curl
SHUNT_BIN=$(shunt_bin)

tls_site "$BACKEND" /api
nginx_conf backend "$(backend_block "$BACKEND") server { listen $BACKEND_STATUS; location / { stub_status; } }"
backend_accepts() { curl -fsS "http://$BACKEND_STATUS/" | awk 'NR == 3 { print $1 }'; }

declare -A PID
start_nginx() { # name fields
    local h1=${PORT_H1[$1]} h2c=${PORT_H2C[$1]} tls=${PORT_TLS[$1]}
    NGINX_FIELDS=$2 nginx_conf "proxy-$1" "upstream pod { server $BACKEND; keepalive 256; }
    server { listen 127.0.0.1:$h1; listen 127.0.0.1:$h2c http2; listen 127.0.0.1:$tls ssl http2;
        ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem; ssl_protocols TLSv1.2 TLSv1.3;
        location / { proxy_pass http://pod; proxy_http_version 1.1; proxy_set_header Connection '';
        $(NGINX_FIELDS=$2 nginx_forwarding_fields) } }"
    PID[$1]=${NGINX_PID[proxy-$1]}
}

# haproxy, one thread, the fields shunt sets that haproxy sets by name (X-Forwarded-For,
# -Proto), server-side keep-alive shared between client connections (http-reuse always).
start_haproxy() {
    cat "$work/cert.pem" "$work/key.pem" > "$work/haproxy.pem"
    cat > "$work/haproxy.cfg" <<CFG
global
    nbthread 1
    maxconn 8000
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    http-reuse always
frontend front
    bind 127.0.0.1:${PORT_H1[haproxy]}
    bind 127.0.0.1:${PORT_H2C[haproxy]} proto h2
    bind 127.0.0.1:${PORT_TLS[haproxy]} ssl crt $work/haproxy.pem alpn h2,http/1.1
    option forwardfor
    http-request set-header X-Forwarded-Proto https if { ssl_fc }
    http-request set-header X-Forwarded-Proto http if !{ ssl_fc }
    default_backend pod
backend pod
    server pod $BACKEND
CFG
    "${PROXY_CPUS[@]}" haproxy -db -f "$work/haproxy.cfg" &
    pids+=($!)
    PID[haproxy]=$!
}

start_shunt() {
    RUST_LOG=warn,rustls=error "${PROXY_CPUS[@]}" "$SHUNT_BIN" serve --manifests "$work/manifests.yaml" \
        --http-addr "127.0.0.1:${PORT_H1[shunt]}" --https-addr "127.0.0.1:${PORT_TLS[shunt]}" --admin-addr "$ADMIN" \
        --default-ssl-certificate shop/shop-tls --threads 1 --access-log false &
    pids+=($!)
    PID[shunt]=$!
    retry 200 curl -fsS "http://$ADMIN/readyz" || { echo "shunt is not ready"; exit 1; }
}

# One process serves both ceilings.
start_floors() {
    [ -z "${PID[hyper-floor]:-}" ] || return 0
    local bin=${HYPER_BIN:-${CARGO_TARGET_DIR:-target}/release/examples/hyper-floor}
    [ -x "$bin" ] || cargo build --release -q -p shunt-proxy --example hyper-floor >&2
    "${PROXY_CPUS[@]}" "$bin" "127.0.0.1:${PORT_H1[hyper-floor]}" "127.0.0.1:${PORT_TLS[hyper-floor]}" \
        "$work/cert.pem" "$work/key.pem" "127.0.0.1:${PORT_H2C[h2-floor]}" &
    pids+=($!)
    PID[hyper-floor]=$!
    PID[h2-floor]=$!
}

for proxy in $PROXIES; do
    case $proxy in
        shunt) start_shunt ;;
        nginx-lean) start_nginx nginx-lean lean ;;
        nginx-ingress) start_nginx nginx-ingress same ;;
        haproxy) start_haproxy ;;
        hyper-floor | h2-floor) start_floors ;;
        *) echo "PROXIES: shunt, nginx-lean, nginx-ingress, haproxy, hyper-floor, h2-floor; not $proxy" >&2; exit 1 ;;
    esac
done
for proxy in $PROXIES; do
    if serves "$proxy" h1; then
        probe=("http://127.0.0.1:${PORT_H1[$proxy]}$PATH_UNDER_TEST")
    else
        probe=(--http2-prior-knowledge "http://127.0.0.1:${PORT_H2C[$proxy]}$PATH_UNDER_TEST")
    fi
    retry 100 curl -fsS -H "Host: $HOST" "${probe[@]}" || { echo "$proxy is not answering"; exit 1; }
done

# h2load's req/s, p99 (ms, from its per-request log), its failures (non-2xx included) and
# requests done, as wrk's line has them.
run_h2load() { # scheme port
    local stats p99
    stats=$(timeout 120 "${LOAD_CPUS[@]}" h2load -t1 -c"$H2_CLIENTS" -m"$H2_STREAMS" -D"${DURATION%s}" \
        --log-file="$work/h2load.log" --connect-to="127.0.0.1:$2" "$1://$HOST:$2$PATH_UNDER_TEST" |
        awk '/^finished in/ { rps = $4 } /^status codes:/ { bad += $7 + $9 } /^requests:/ { bad += $10; done = $8 }
             END { printf "%s %d %d\n", rps, bad, done }')
    p99=$(cut -f3 "$work/h2load.log" | sort -n | awk '{ v[NR] = $1 } END { i = int(NR * 0.99); if (i < 1) i = 1; printf "%.2f", v[i] / 1000 }')
    read -r rps bad done <<<"$stats"
    echo "$rps $p99 $bad 0 $done"
}

run_load() { # protocol proxy -> "rps p99 bad errors requests"
    local h1=${PORT_H1[$2]:-} h2c=${PORT_H2C[$2]:-} tls=${PORT_TLS[$2]:-}
    case $1 in
        h1) run_wrk -t1 -c"$CONNECTIONS" -d"$DURATION" -H "Host: $HOST" "http://127.0.0.1:$h1$PATH_UNDER_TEST" ;;
        tls) run_wrk -t1 -c"$CONNECTIONS" -d"$DURATION" -H "Host: $HOST" "https://127.0.0.1:$tls$PATH_UNDER_TEST" ;;
        h2c) run_h2load http "$h2c" ;;
        h2) run_h2load https "$tls" ;;
    esac
}

declare -A RPS P99 CPU CONNECTS RATIO last
echo "rounds=$ROUNDS duration=$DURATION wrk -c$CONNECTIONS h2load -c$H2_CLIENTS -m$H2_STREAMS pin=$PIN path=$PATH_UNDER_TEST"
read -r -a order <<<"$PROXIES"
for round in $(seq 1 "$ROUNDS"); do
    for proto in $PROTOCOLS; do
        last=()
        # Each round starts with the next proxy, so drift on a shared machine hits all alike.
        for i in "${!order[@]}"; do
            name=${order[(i + round - 1) % ${#order[@]}]}
            serves "$name" "$proto" || continue
            before=$(cpu_ticks "${PID[$name]}")
            accepts_before=$(backend_accepts)
            read -r rps p99 bad err total < <(run_load "$proto" "$name") || true
            [ -n "$rps" ] && [ "${total:-0}" -gt 0 ] || { echo "$name $proto: no result"; exit 1; }
            read -r cpu cpu_sys <<<"$(cpu_us_per_request "$before" "$(cpu_ticks "${PID[$name]}")" "$total")"
            [ "$bad" = 0 ] || { echo "$name $proto: $bad failed or non-2xx responses"; exit 1; }
            # Less the status request itself, which the pod's nginx accepts too.
            connects=$(($(backend_accepts) - accepts_before - 1))
            printf 'round %d %-4s %-13s %9.0f req/s  p99 %6.2f ms  CPU %6.1f us/req (kernel %4.1f)  upstream connects %4d  socket errors %s\n' \
                "$round" "$proto" "$name" "$rps" "$p99" "$cpu" "$cpu_sys" "$connects" "$err"
            record_result "$proto" "$name" "$rps" "$p99" "$cpu"
            RPS[$proto.$name]+="$rps "; P99[$proto.$name]+="$p99 "; CPU[$proto.$name]+="$cpu "; CONNECTS[$proto.$name]+="$connects "
            last[$name]="$rps $cpu"
        done
        for name in $PROXIES; do
            [ "$name" = shunt ] || [ -z "${last[shunt]:-}" ] || [ -z "${last[$name]:-}" ] || RATIO[$proto.$name]+="$(awk -v s="${last[shunt]}" \
                -v p="${last[$name]}" 'BEGIN { split(s, a, " "); split(p, b, " "); print a[1] / b[1] "/" a[2] / b[2] }') "
        done
    done
done

echo "--- PSS after the runs, MiB (the floors share one process)"
for name in $PROXIES; do printf '%-13s %6s\n' "$name" "$(pss_mib "${PID[$name]}")"; done
echo "--- medians over $ROUNDS rounds; shunt/peer: median of per-round ratios"
printf '%-4s %-13s %9s %8s %10s %16s %14s %14s\n' proto proxy req/s "p99 ms" "CPU us/req" "upstream conns" "shunt/peer rps" "shunt/peer CPU"
for proto in $PROTOCOLS; do
    for name in $PROXIES; do
        serves "$name" "$proto" || continue
        ratios=${RATIO[$proto.$name]:-}
        rr=-; rc=-
        if [ -n "$ratios" ]; then
            rr=$(tr ' ' '\n' <<<"$ratios" | cut -d/ -f1 | median | xargs printf '%.2f')
            rc=$(tr ' ' '\n' <<<"$ratios" | cut -d/ -f2 | median | xargs printf '%.2f')
        fi
        printf '%-4s %-13s %9.0f %8.2f %10.1f %16s %14s %14s\n' "$proto" "$name" "$(median <<<"${RPS[$proto.$name]}")" \
            "$(median <<<"${P99[$proto.$name]}")" "$(median <<<"${CPU[$proto.$name]}")" "$(median <<<"${CONNECTS[$proto.$name]}")" "$rr" "$rc"
    done
done
