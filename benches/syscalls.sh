#!/usr/bin/env bash
# Kernel-side cost per proxied request, shunt alone (one worker): syscalls by name, bytes and calls
# per write, and context switches. shunt runs under `strace -f -c` for the syscall counts and
# again without it for the context switches (strace itself forces switches). h2load sends FEW,
# then MANY requests to a fresh shunt each time; the difference divided by MANY - FEW is one
# request's share, without start, handshakes and shutdown.
#
#   benches/syscalls.sh                                      # h2 and https1
#   PROTOCOLS=h2 FEW=1000 MANY=5000 SHUNT_BIN=target-release/release/shunt benches/syscalls.sh
#
# h2 is h2load -c4 -m8 over TLS (as benches/instructions.sh), h2c the same in cleartext (prior
# knowledge), https1 -c8 HTTP/1.1 over TLS, http1 the same in cleartext.
# Bounded: 4 runs per protocol, each under a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh

PROTOCOLS=${PROTOCOLS:-h2 https1}
FEW=${FEW:-1000}
MANY=${MANY:-5000}
PATH_UNDER_TEST=${PATH_UNDER_TEST:-/api/orders?id=42}
HOST=shop.example.com
BACKEND=127.0.0.1:18781
HTTP=127.0.0.1:18780
HTTPS=127.0.0.1:18743
ADMIN=127.0.0.1:18790
WORKERS=1

need_commands strace:strace h2load:nghttp2-client nginx:nginx-light openssl:openssl curl:curl
SHUNT_BIN=$(shunt_bin)

tls_site "$BACKEND" /api
nginx_conf backend "$(backend_block "$BACKEND")"

# Starts shunt, under strace writing to $1 when given; sets proxy_pid (shunt's own pid) and
# tracer_pid (strace's, or empty).
start_shunt() {
    local cmd=("$SHUNT_BIN" serve --manifests "$work/manifests.yaml" --poll-interval 1h --http-addr "$HTTP"
               --https-addr "$HTTPS" --admin-addr "$ADMIN" --default-ssl-certificate shop/shop-tls
               --threads 1 --access-log false)
    if [ -n "${1:-}" ]; then
        RUST_LOG=warn,rustls=error strace -f -C -s 6 -o "$1" "${cmd[@]}" 2>>"$work/strace.log" &
        tracer_pid=$!
        retry 100 pgrep -P "$tracer_pid" >/dev/null
        proxy_pid=$(pgrep -P "$tracer_pid")
    else
        RUST_LOG=warn,rustls=error "${cmd[@]}" &
        tracer_pid=
        proxy_pid=$!
    fi
    pids+=("$proxy_pid")
    retry 300 curl -fsS -H "Host: $HOST" "http://$HTTP$PATH_UNDER_TEST" || { echo "shunt is not answering"; exit 1; }
}

stop_shunt() {
    kill -TERM "$proxy_pid"
    timeout 60 tail --pid="$proxy_pid" -f /dev/null || { echo "shunt $proxy_pid did not exit"; exit 1; }
    [ -z "$tracer_pid" ] || timeout 60 tail --pid="$tracer_pid" -f /dev/null
    wait "${tracer_pid:-$proxy_pid}" 2>/dev/null || true
}

load() { # protocol requests
    local args addr=$HTTPS scheme=https
    case $1 in
        http1) args=(--h1 -c8); addr=$HTTP; scheme=http ;;
        https1) args=(--h1 -c8) ;;
        h2) args=(-c4 -m8) ;;
        h2c) args=(-c4 -m8); addr=$HTTP; scheme=http ;;
    esac
    timeout 300 h2load -t1 -n"$2" "${args[@]}" --connect-to="$addr" "$scheme://$HOST:${addr##*:}$PATH_UNDER_TEST" |
        awk '/^requests:/ { print $8 " " $10 }'
}

# Context switches of all of shunt's threads (voluntary + involuntary).
switches() { cat /proc/"$proxy_pid"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { n += $2 } END { print n }'; }

# "name calls" per syscall of one strace -C summary (children followed, exec'd image included),
# then "tls-writes" (writes carrying TLS records, to the client), "tls-records" (application data
# records in them: each starts with 0x17 0x03 0x03) and "tls-bytes".
calls() {
    awk '/^% time/ { summary = 1; next } summary && $1 ~ /^[0-9.]+$/ && $NF != "total" { print $NF, $4 }' "$1"
    awk '/ (writev|write|sendto|sendmsg)\(/ && /\\27\\3\\3/ {
            w++; r += gsub(/\\27\\3\\3/, "&"); if (match($0, /= [0-9]+$/)) b += substr($0, RSTART + 2)
         } END { print "tls-writes", w + 0; print "tls-records", r + 0; print "tls-bytes", b + 0 }' "$1"
}

for proto in $PROTOCOLS; do
    for n in "$FEW" "$MANY"; do
        start_shunt "$work/strace.$proto.$n"
        done_=$(load "$proto" "$n")
        stop_shunt
        [ "$done_" = "$n 0" ] || { echo "$proto: h2load succeeded/failed: $done_ (wanted $n 0)" >&2; exit 1; }
        start_shunt
        before=$(switches)
        done_=$(load "$proto" "$n")
        after=$(switches)
        stop_shunt
        [ "$n" = "$FEW" ] && few_switch=$((after - before)) || many_switch=$((after - before))
    done
    echo "== $proto: per request (($MANY - $FEW requests) difference)"
    join -a1 -a2 -e0 -o 0,1.2,2.2 <(calls "$work/strace.$proto.$FEW" | sort) <(calls "$work/strace.$proto.$MANY" | sort) |
        awk -v n="$((MANY - FEW))" '{ d = ($3 - $2) / n; if (d >= 0.005 || d <= -0.005) printf "  %-16s %6.3f\n", $1, d; if ($1 !~ /^tls-/) t += $3 - $2 } END { printf "  %-16s %6.3f\n", "all syscalls", t / n }'
    awk -v a="$few_switch" -v b="$many_switch" -v n="$((MANY - FEW))" 'BEGIN { printf "  %-16s %6.3f\n", "context switches", (b - a) / n }'
done
