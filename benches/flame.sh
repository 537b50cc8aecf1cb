#!/usr/bin/env bash
# CPU flame graphs of shunt and, for comparison, nginx under the same load, one protocol at a time:
#   http1    HTTP/1.1 keep-alive on plain TCP (wrk, as benches/load.sh)
#   https1   HTTPS/1.1 keep-alive (wrk, as tls.sh's keepalive mode)
#   h2       HTTP/2 over TLS, ALPN h2 (h2load, as tls.sh's h2 mode)
# For each proxy and protocol: `perf record -e cpu-clock -g --call-graph dwarf` on the proxy's own process
# (shunt's PID, nginx's one worker) for RECORD seconds while the load runs, then
#   benches/flame/<proxy>-<protocol>.svg   flame graph (inferno), frames under MINWIDTH pixels dropped
#   benches/flame/<proxy>-<protocol>.txt   top symbols by self time, shares per DSO (kernel, shunt, libc, ...),
#                                          and, from a separate run under `perf stat`, CPU us, syscalls and
#                                          context switches per request
# cpu-clock because this VM has no hardware counters; dwarf because the release build has no frame pointers.
# Inlined functions count in their caller (`--no-inline`): resolving them takes perf minutes per recording.
#
#   benches/flame.sh
#   SHUNT_BIN=/work/bench-target/release/shunt RECORD=10 PROTOCOLS="http1 h2" PROXIES=shunt benches/flame.sh
#   PIN=1 benches/flame.sh      # proxy alone on CPU 1, load generator and backend on CPU 0
#   SHUNT_COMMIT=$(git rev-parse --short HEAD) KEEP_DATA=/tmp/perf benches/flame.sh   # name the build; keep perf.data
#
# Needs root or kernel.perf_event_paranoid <= 1 to attach to a PID. Installs linux-perf, wrk, h2load and nginx
# with apt-get and inferno with `cargo install` (into target/bench-tools) when missing. Listens on 127.0.0.1
# only. Bounded: per proxy and protocol one load run of RECORD + 2 s (recorded) and one of STAT_SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh

RECORD=${RECORD:-15}
STAT_SECONDS=${STAT_SECONDS:-5}
FREQ=${FREQ:-999}
CALL_GRAPH=${CALL_GRAPH:-dwarf,65528}
PROXIES=${PROXIES:-shunt nginx}
PROTOCOLS=${PROTOCOLS:-http1 https1 h2}
CONNECTIONS=${CONNECTIONS:-64}
WORKERS=${WORKERS:-1}
H2_CLIENTS=${H2_CLIENTS:-16}
H2_STREAMS=${H2_STREAMS:-8}
MINWIDTH=${MINWIDTH:-0.1}
TOP=${TOP:-25}
OUT=${OUT:-benches/flame}
TOOLS=${TOOLS:-target/bench-tools}
PATH_UNDER_TEST=${PATH_UNDER_TEST:-/api/orders?id=42}
SHUNT_LOG=${SHUNT_LOG:-warn,rustls=error}
BACKEND=127.0.0.1:18781
SHUNT_HTTP=127.0.0.1:18780
SHUNT_HTTPS=127.0.0.1:18743
SHUNT_ADMIN=127.0.0.1:18790
NGINX_HTTP=127.0.0.1:18782
NGINX_HTTPS=127.0.0.1:18744
HOST=shop.example.com
# The calls a proxied request is made of (socket reads and writes, readiness waits), counted one by one.
SYSCALL_NAMES=${SYSCALL_NAMES:-read write readv writev recvfrom sendto recvmsg sendmsg epoll_wait epoll_pwait epoll_ctl futex \
    accept4 close}
# shellcheck disable=SC2086 # one tracepoint per name
SYSCALLS=$(printf 'syscalls:sys_enter_%s,' $SYSCALL_NAMES)
SYSCALLS=${SYSCALLS%,}

need_commands perf:linux-perf wrk:wrk nginx:nginx-light h2load:nghttp2-client openssl:openssl curl:curl
nginx -V 2>&1 | grep -q -- --with-http_v2_module || { echo "this nginx has no http_v2 module" >&2; exit 1; }
PATH="$PWD/$TOOLS/bin:$PATH"
if ! command -v inferno-flamegraph >/dev/null || ! command -v inferno-collapse-perf >/dev/null; then
    cargo install -q --locked inferno --root "$TOOLS" >&2
fi
SHUNT_BIN=$(shunt_bin)
mkdir -p "$OUT"

# tls.sh's site: without an ssl-redirect annotation the same Ingress also answers on plain HTTP.
tls_site "$BACKEND"

# One nginx proxy with both listeners (plain, and TLS with h2), like load.sh's and tls.sh's together.
nginx_conf backend "$(backend_block "$BACKEND")"
nginx_conf proxy "$(nginx_proxy_block "$NGINX_HTTPS ssl http2" "$BACKEND" \
    "listen $NGINX_HTTP; ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem; ssl_protocols TLSv1.2 TLSv1.3;")"

RUST_LOG=$SHUNT_LOG "${PROXY_CPUS[@]}" "$SHUNT_BIN" serve --manifests "$work/manifests.yaml" --http-addr "$SHUNT_HTTP" \
    --https-addr "$SHUNT_HTTPS" --admin-addr "$SHUNT_ADMIN" --default-ssl-certificate shop/shop-tls \
    --threads "$WORKERS" --access-log false &
pids+=($!)
shunt_pid=$!

retry 100 curl -fsS "http://$SHUNT_ADMIN/readyz" || { echo "shunt is not ready"; exit 1; }
for port in "${SHUNT_HTTP##*:}" "${NGINX_HTTP##*:}"; do
    retry 50 curl -fsS -H "Host: $HOST" "http://127.0.0.1:$port$PATH_UNDER_TEST" || { echo "port $port is not answering"; exit 1; }
done
for port in "${SHUNT_HTTPS##*:}" "${NGINX_HTTPS##*:}"; do
    retry 50 curl -fsS --http2 --cacert "$work/cert.pem" --resolve "$HOST:$port:127.0.0.1" "https://$HOST:$port$PATH_UNDER_TEST" ||
        { echo "port $port is not answering over TLS"; exit 1; }
done

# The process doing the proxying: shunt itself (all its threads), nginx's only worker.
proxy_pid() { # proxy
    if [ "$1" = shunt ]; then echo "$shunt_pid"; return; fi
    local workers
    workers=$(pgrep -P "${NGINX_PID[proxy]}")
    [ "$(wc -w <<<"$workers")" = 1 ] || { echo "flame.sh profiles one nginx worker; run with WORKERS=1" >&2; return 1; }
    echo "$workers"
}

# Load for $3 seconds, bounded by a hard timeout; prints the number of requests that completed.
load() { # proxy protocol seconds
    local port
    case $1.$2 in
        shunt.http1) port=${SHUNT_HTTP##*:} ;; nginx.http1) port=${NGINX_HTTP##*:} ;;
        shunt.*) port=${SHUNT_HTTPS##*:} ;; nginx.*) port=${NGINX_HTTPS##*:} ;;
    esac
    case $2 in
        http1) run_wrk -t1 -c"$CONNECTIONS" -d"$3s" -H "Host: $HOST" "http://127.0.0.1:$port$PATH_UNDER_TEST" | awk '{ print $5 }' ;;
        https1) run_wrk -t1 -c"$CONNECTIONS" -d"$3s" -H "Host: $HOST" "https://127.0.0.1:$port$PATH_UNDER_TEST" | awk '{ print $5 }' ;;
        h2) timeout 120 "${LOAD_CPUS[@]}" h2load -t1 -c"$H2_CLIENTS" -m"$H2_STREAMS" -D"$3" --connect-to="127.0.0.1:$port" \
                "https://$HOST:$port$PATH_UNDER_TEST" | awk '/^requests:/ { print $8 }' ;;
    esac
}

# perf report's self-time lines ("pct dso [k|.] symbol") for a recording, every symbol.
self_times() { # perf.data
    perf report --no-inline -i "$1" --no-children --sort dso,sym --stdio -g none 2>/dev/null | grep -E '^ +[0-9.]+%' || true
}

# Self time summed per DSO, or (with a DSO name) per crate within that DSO: the first path segment of
# the symbol; mimalloc for its `mi_` functions, ring for its `ring_core_` assembly and C.
shares() { # report [dso]
    awk -v dso="${2:-}" '{ pct = $1; sub(/%/, "", pct)
        if (dso == "") { s[$2] += pct; next }
        if ($2 != dso) next
        sym = $0; sub(/^.*\[.\] /, "", sym); sub(/^</, "", sym)
        if (sym ~ /^_?mi_/) c = "mimalloc"
        else if (sym ~ /^ring_core_/) c = "ring"
        else if (match(sym, /^[A-Za-z_][A-Za-z0-9_]*::/)) c = substr(sym, 1, RLENGTH - 2)
        else c = "(other)"
        s[c] += pct }
        END { for (k in s) printf "  %6.2f%%  %s\n", s[k], k }' "$1" | sort -rn | awk 'NR <= 15'
}

echo "record=${RECORD}s freq=${FREQ}Hz call-graph=$CALL_GRAPH connections=$CONNECTIONS h2=${H2_CLIENTS}x${H2_STREAMS} pin=${PIN:-0}"
for protocol in $PROTOCOLS; do
    for proxy in $PROXIES; do
        pid=$(proxy_pid "$proxy")
        name=$proxy-$protocol
        data=$work/$name.data

        echo "$(date +%T) $name: perf stat" >&2
        # CPU, syscalls and context switches per request, from a whole load run under perf stat (no sampling).
        perf stat -x, -e "cpu-clock,context-switches,raw_syscalls:sys_enter,$SYSCALLS" -p "$pid" -o "$work/$name.stat" &
        stat_pid=$!
        pids+=("$stat_pid")
        sleep 0.2
        requests=$(load "$proxy" "$protocol" "$STAT_SECONDS")
        kill -INT "$stat_pid"; wait "$stat_pid" || true
        [ "${requests:-0}" -gt 0 ] || { echo "$name: no requests completed"; exit 1; }

        echo "$(date +%T) $name: perf record" >&2
        # The recording starts a second into the load and ends a second before it.
        load "$proxy" "$protocol" $((RECORD + 2)) > "$work/$name.requests" &
        load_pid=$!
        pids+=("$load_pid")
        sleep 1
        timeout $((RECORD + 30)) perf record -q -e cpu-clock -F "$FREQ" -g --call-graph "$CALL_GRAPH" -p "$pid" \
            -o "$data" -- sleep "$RECORD" 2>"$work/$name.record.log" || { cat "$work/$name.record.log" >&2; exit 1; }
        wait "$load_pid"
        [ "$(cat "$work/$name.requests")" -gt 0 ] || { echo "$name: no requests completed while recording"; exit 1; }

        echo "$(date +%T) $name: flame graph and report" >&2
        perf script --no-inline -i "$data" 2>/dev/null | inferno-collapse-perf --all > "$work/$name.folded"
        inferno-flamegraph --minwidth "$MINWIDTH" --title "$name: $proxy, $protocol, cpu-clock ${FREQ} Hz, ${RECORD} s" \
            < "$work/$name.folded" > "$OUT/$name.svg"

        {
            echo "# $name: perf record -e cpu-clock -F $FREQ -g --call-graph $CALL_GRAPH -p <$proxy pid> -- sleep $RECORD"
            echo "# shunt ${SHUNT_COMMIT:+at $SHUNT_COMMIT }($SHUNT_BIN), $(nginx -v 2>&1 | sed 's/^nginx version: //'), $(date -u +%FT%TZ)"
            echo "# Shared, noisy 2-core VM (other builds running; load average $(cut -d' ' -f1-3 /proc/loadavg)): compare"
            echo "# proportions and per-request counts, not absolute rates. pin=${PIN:-0}."
            echo
            awk -F, -v n="$requests" -v s="$STAT_SECONDS" '
                $3 == "cpu-clock" { cpu = $1 } $3 == "raw_syscalls:sys_enter" { sys = $1 } $3 == "context-switches" { cs = $1 }
                $3 ~ /^syscalls:sys_enter_/ && $1 > 0 { sub(/^syscalls:sys_enter_/, "", $3); each = each sprintf(" %s %.2f", $3, $1 / n) }
                END { printf "per request (perf stat over a %s s run, %d requests): CPU %.1f us, syscalls %.2f, context switches %.3f\n",
                      s, n, cpu * 1000 / n, sys / n, cs / n
                      printf "syscalls per request:%s\n\n", each }' "$work/$name.stat"
            self_times "$data" > "$work/$name.report"
            echo "self time by DSO:"
            shares "$work/$name.report"
            if [ "$proxy" = shunt ]; then
                echo
                echo "self time in the shunt binary by crate (share of all samples):"
                shares "$work/$name.report" "$(basename "$SHUNT_BIN")"
            fi
            echo
            echo "top $TOP symbols by self time (perf report --no-children --sort dso,sym):"
            awk -v top="$TOP" 'NR <= top { print substr($0, 1, 160) }' "$work/$name.report"
        } > "$OUT/$name.txt"
        printf '%-14s %s, %s KB svg\n' "$name" "$(sed -n 6p "$OUT/$name.txt")" "$(($(stat -c %s "$OUT/$name.svg") / 1024))"
        [ -z "${KEEP_DATA:-}" ] || { mkdir -p "$KEEP_DATA" && cp "$data" "$KEEP_DATA/$name.data"; }
        rm -f "$data"
    done
done
