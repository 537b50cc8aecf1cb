#!/usr/bin/env bash
# Load benchmark, all in one run on loopback: wrk against the backend directly, against shunt in
# front of it, and against nginx in front of it (proxy_pass with upstream keepalive), with the same
# connections, duration and worker count, in alternating rounds. Prints requests/s and p99 for each
# (median over rounds), the CPU time the server under test used per request (the backend's for
# direct, the proxy's alone otherwise), the connections each proxy opened to the backend per run
# (the backend's stub_status `accepts`: keep-alive at work is a handful, not one per request), and
# the ratios shunt/nginx and shunt/direct.
#
#   benches/load.sh                      # defaults below
#   PIN=1 benches/load.sh                # proxy alone on CPU 1, wrk and backend on CPU 0
#   ROUNDS=5 DURATION=10s CONNECTIONS=64 WORKERS=1 benches/load.sh
#   SHUNT_BIN=/work/bench-target/release/shunt benches/load.sh    # a binary built elsewhere
#   NGINX_FIELDS=lean benches/load.sh    # nginx without X-Request-ID and Forwarded (rounds 1-8)
#   benches/compare.sh                   # shunt, both nginx and haproxy over h1, h2c, TLS, h2 (the successor)
#
# WORKERS is shunt's --threads and nginx's worker_processes. Bounded: ROUNDS x 3 runs of DURATION.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8s}
CONNECTIONS=${CONNECTIONS:-64}
WORKERS=${WORKERS:-1}
WRK_THREADS=${WRK_THREADS:-1}
PATH_UNDER_TEST=${PATH_UNDER_TEST:-/api/orders?id=42}
BACKEND=127.0.0.1:18081
SHUNT=127.0.0.1:18080
SHUNT_HTTPS=127.0.0.1:18443
SHUNT_ADMIN=127.0.0.1:18090
NGINX=127.0.0.1:18082
BACKEND_STATUS=127.0.0.1:18083

need_commands wrk:wrk nginx:nginx-light curl:curl
SHUNT_BIN=$(shunt_bin)

nginx_conf backend "$(backend_block "$BACKEND") server { listen $BACKEND_STATUS; location / { stub_status; } }"
# Connections the backend has accepted so far.
backend_accepts() { curl -fsS "http://$BACKEND_STATUS/" | awk 'NR == 3 { print $1 }'; }
nginx_conf proxy "$(nginx_proxy_block "$NGINX" "$BACKEND")"

plain_site "$BACKEND"
RUST_LOG=warn "${PROXY_CPUS[@]}" "$SHUNT_BIN" serve --manifests "$work/manifests.yaml" --http-addr "$SHUNT" --https-addr "$SHUNT_HTTPS" \
    --admin-addr "$SHUNT_ADMIN" --threads "$WORKERS" --access-log false &
pids+=($!)
shunt_pid=$!

retry 100 curl -fsS "http://$SHUNT_ADMIN/readyz" || { echo "shunt is not ready"; exit 1; }
for target in "$BACKEND" "$SHUNT" "$NGINX"; do
    retry 50 curl -fsS -H 'Host: shop.example.com' "http://$target$PATH_UNDER_TEST" || { echo "$target is not answering"; exit 1; }
done

declare -A RPS P99 CPU last
RATIO_N=""; RATIO_D=""
echo "rounds=$ROUNDS duration=$DURATION connections=$CONNECTIONS workers=$WORKERS wrk_threads=$WRK_THREADS pin=${PIN:-0} path=$PATH_UNDER_TEST"
for round in $(seq 1 "$ROUNDS"); do
    for name in direct shunt nginx; do
        # CPU is the server's own: the backend for direct, the proxy alone otherwise.
        case $name in
            direct) addr=$BACKEND; pid=${NGINX_PID[backend]} ;;
            shunt) addr=$SHUNT; pid=$shunt_pid ;;
            nginx) addr=$NGINX; pid=${NGINX_PID[proxy]} ;;
        esac
        before=$(cpu_ticks "$pid")
        accepts_before=$(backend_accepts)
        read -r rps p99 bad err total < <(run_wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"$DURATION" \
            -H 'Host: shop.example.com' "http://$addr$PATH_UNDER_TEST") || true
        [ -n "$rps" ] || { echo "$name: no result from wrk"; exit 1; }
        read -r cpu cpu_sys <<<"$(cpu_us_per_request "$before" "$(cpu_ticks "$pid")" "$total")"
        [ "$bad" = "0" ] || { echo "$name answered $bad non-2xx responses"; exit 1; }
        # Less the status request itself, which the same nginx accepts.
        connects=$(( $(backend_accepts) - accepts_before - 1 ))
        printf 'round %d %-6s %10.0f req/s  p99 %7.2f ms  CPU %6.1f us/req (kernel %4.1f)  socket errors %s  upstream connects %s\n' \
            "$round" "$name" "$rps" "$p99" "$cpu" "$cpu_sys" "$err" "$connects"
        record_result http1 "$name" "$rps" "$p99" "$cpu"
        RPS[$name]+="$rps "; P99[$name]+="$p99 "; CPU[$name]+="$cpu "; last[$name]=$rps
    done
    # Ratios within a round, where the three runs are seconds apart, are steadier than ratios of medians.
    RATIO_N+="$(awk -v s="${last[shunt]}" -v n="${last[nginx]}" 'BEGIN { print s / n }') "
    RATIO_D+="$(awk -v s="${last[shunt]}" -v d="${last[direct]}" 'BEGIN { print s / d }') "
done

echo "--- median of $ROUNDS rounds"
for name in direct shunt nginx; do
    printf '%-6s %10.0f req/s  p99 %7.2f ms  CPU %6.1f us/req\n' "$name" "$(median <<<"${RPS[$name]}")" \
        "$(median <<<"${P99[$name]}")" "$(median <<<"${CPU[$name]}")"
done
awk -v s="$(median <<<"${RPS[shunt]}")" -v n="$(median <<<"${RPS[nginx]}")" -v d="$(median <<<"${RPS[direct]}")" \
    -v sp="$(median <<<"${P99[shunt]}")" -v np="$(median <<<"${P99[nginx]}")" \
    -v sc="$(median <<<"${CPU[shunt]}")" -v nc="$(median <<<"${CPU[nginx]}")" \
    'BEGIN { printf "shunt/nginx req/s %.2f  shunt/direct req/s %.2f  shunt/nginx p99 %.2f  shunt/nginx CPU/req %.2f\n",
                    s / n, s / d, sp / np, sc / nc }'
printf 'median of per-round ratios: shunt/nginx req/s %.2f  shunt/direct req/s %.2f\n' "$(median <<<"$RATIO_N")" "$(median <<<"$RATIO_D")"
