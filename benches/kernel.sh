#!/usr/bin/env bash
# The kernel's side of a proxied HTTP/1.1 keep-alive request, shunt against nginx: syscalls per
# request (by name), context switches per request (voluntary and involuntary, per thread), and the
# proxy's CPU split into user and system time. Each proxy serves FEW and then MANY requests from
# h2load (--h1 -c8, the same as benches/instructions.sh); every figure is (MANY run - FEW run) /
# (MANY - FEW), so start-up and connection setup drop out.
#
#   benches/kernel.sh                                  # both proxies, unpinned
#   PIN=1 benches/kernel.sh                            # proxy alone on CPU 1 (benches/common.sh)
#   FEW=5000 MANY=45000 SHUNT_BIN=target-release/release/shunt benches/kernel.sh
#
# Two passes per proxy: one under `perf trace -s` for the syscall counts (tracing slows the
# proxy, so its CPU figures are not used), one untraced for context switches and user/system CPU.
# Bounded: 4 h2load runs per proxy, each under a hard timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh

PROXIES=${PROXIES:-shunt nginx}
FEW=${FEW:-5000}
MANY=${MANY:-25000}
PATH_UNDER_TEST=${PATH_UNDER_TEST:-/api/orders?id=42}
HOST=shop.example.com
BACKEND=127.0.0.1:19381
SHUNT=127.0.0.1:19380
SHUNT_HTTPS=127.0.0.1:19343
ADMIN=127.0.0.1:19390
NGINX=127.0.0.1:19382

need_commands perf:linux-perf h2load:nghttp2-client nginx:nginx-light curl:curl
SHUNT_BIN=$(shunt_bin)

nginx_conf backend "$(backend_block "$BACKEND")"
nginx_conf proxy "$(nginx_proxy_block "$NGINX" "$BACKEND")"
plain_site "$BACKEND"
RUST_LOG=warn "${PROXY_CPUS[@]}" "$SHUNT_BIN" serve --manifests "$work/manifests.yaml" --poll-interval 1h \
    --http-addr "$SHUNT" --https-addr "$SHUNT_HTTPS" --admin-addr "$ADMIN" --threads 1 --access-log false &
pids+=($!)
shunt_pid=$!
retry 100 curl -fsS "http://$ADMIN/readyz" || { echo "shunt is not ready"; exit 1; }
for target in "$SHUNT" "$NGINX"; do
    retry 50 curl -fsS -H "Host: $HOST" "http://$target$PATH_UNDER_TEST" || { echo "$target is not answering"; exit 1; }
done
retry 50 pgrep -P "${NGINX_PID[proxy]}" || { echo "no nginx worker"; exit 1; }
nginx_worker=$(pgrep -P "${NGINX_PID[proxy]}")

# "name voluntary involuntary" per thread, then the user and system clock ticks of the process.
counters() { # pid
    local task
    for task in /proc/"$1"/task/*; do
        printf '%s %s\n' "$(tr ' ' _ <"$task/comm")" \
            "$(awk '/^voluntary_ctxt/ { v = $2 } /^nonvoluntary_ctxt/ { n = $2 } END { print v, n }' "$task/status")"
    done
    sed 's/^.*) //' "/proc/$1/stat" | awk '{ print "cpu", $12, $13 }'
}

# h2load's requests against $1; fails unless all $2 succeeded.
load() { # addr requests
    local done_
    done_=$(timeout 300 "${LOAD_CPUS[@]}" h2load --h1 -t1 -c8 -n"$2" --connect-to="$1" \
        "http://$HOST:${1##*:}$PATH_UNDER_TEST" | awk '/^requests:/ { print $8 " " $10 }')
    [ "$done_" = "$2 0" ] || { echo "h2load against $1: succeeded/failed $done_ (wanted $2 0)" >&2; return 1; }
}

# Syscalls by name, summed over threads, while $3 requests go to $2.
traced() { # pid addr requests
    timeout 600 perf trace -s -p "$1" -o "$work/trace" -- bash -c "$(declare -f load); $(declare -p LOAD_CPUS HOST PATH_UNDER_TEST); load $2 $3" >/dev/null
    awk '$1 ~ /^[a-z_0-9]+$/ && $2 ~ /^[0-9]+$/ { n[$1] += $2 } END { for (k in n) print k, n[k] }' "$work/trace"
}

per_request() { awk -v n="$((MANY - FEW))" '{ printf "%s %.3f\n", $1, $2 / n }'; }

for proxy in $PROXIES; do
    case $proxy in
        shunt) pid=$shunt_pid; addr=$SHUNT ;;
        nginx) pid=$nginx_worker; addr=$NGINX ;;
    esac
    echo "== $proxy (pid $pid, pin=${PIN:-0}), per request over $((MANY - FEW)) requests"
    join -a1 -a2 -e0 -o 0,1.2,2.2 <(traced "$pid" "$addr" "$FEW" | sort) <(traced "$pid" "$addr" "$MANY" | sort) |
        awk '{ print $1, $3 - $2 }' | per_request | awk '$2 > 0.001 { printf "syscall %-14s %8.3f\n", $1, $2 }' | sort -k3 -nr
    load "$addr" 200 # warm, untraced
    a=$(counters "$pid"); load "$addr" "$FEW"; b=$(counters "$pid")
    c=$(counters "$pid"); load "$addr" "$MANY"; d=$(counters "$pid")
    # (d - c) - (b - a), per thread and for the CPU line.
    paste <(echo "$a") <(echo "$b") <(echo "$c") <(echo "$d") |
        awk -v n="$((MANY - FEW))" -v hz="$CLK_TCK" '{
            x = ($11 - $8) - ($5 - $2); y = ($12 - $9) - ($6 - $3)
            if ($1 == "cpu") printf "cpu user %.1f us  system %.1f us per request\n", x / hz * 1e6 / n, y / hz * 1e6 / n
            else printf "thread %-16s voluntary %.3f  involuntary %.3f context switches per request\n", $1, x / n, y / n }'
done
