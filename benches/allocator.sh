#!/usr/bin/env bash
# What mimalloc's purge delay costs per proxied request: madvise/munmap/mmap calls (strace -c)
# and page faults (perf stat) of `shunt serve` under HTTP/1.1 keep-alive load, for each
# MIMALLOC_PURGE_DELAY value (shunt leaves mimalloc 2's 10 ms unless the environment sets one, and
# releases a compile's freed pages after each publish; see controller's main.rs). A fixed number of requests per run, so the figures are per request, not per second.
#
#   benches/allocator.sh                                  # DELAYS="0 10 1000" REQUESTS=40000
#   DELAYS="0 10" SHUNT_BIN=target-release/release/shunt benches/allocator.sh
#
# Bounded: 2 runs (strace, perf) per delay, each under a hard timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh

DELAYS=${DELAYS:-0 10 1000}
REQUESTS=${REQUESTS:-40000}
CONNECTIONS=${CONNECTIONS:-64}
PATH_UNDER_TEST=${PATH_UNDER_TEST:-/api/orders?id=42}
HOST=shop.example.com
BACKEND=127.0.0.1:18781
HTTP=127.0.0.1:18780
ADMIN=127.0.0.1:18790

need_commands strace:strace perf:linux-perf h2load:nghttp2-client nginx:nginx-light curl:curl
SHUNT_BIN=$(shunt_bin)

nginx_conf backend "$(backend_block "$BACKEND")"
plain_site "$BACKEND"

load() {
    timeout 300 h2load --h1 -t1 -c"$CONNECTIONS" -n"$REQUESTS" --connect-to="$HTTP" \
        "http://$HOST:${HTTP##*:}$PATH_UNDER_TEST" | awk '/^requests:/ { print $8 }'
}

# One shunt per run with the delay in $1; $2 = strace or perf. Prints "calls..." or "faults".
measure() {
    MIMALLOC_PURGE_DELAY=$1 RUST_LOG=warn "$SHUNT_BIN" serve --manifests "$work/manifests.yaml" \
        --poll-interval 1h --http-addr "$HTTP" --admin-addr "$ADMIN" --threads 1 --access-log false &
    local shunt=$! tracer ok
    retry 100 curl -fsS -H "Host: $HOST" "http://$HTTP$PATH_UNDER_TEST" || { echo "shunt is not answering"; exit 1; }
    load >/dev/null # warm: pools, connections and the allocator's pages
    case $2 in
        strace) timeout 300 strace -c -f -e trace=madvise,munmap,mmap -o "$work/strace.$1" -p "$shunt" & ;;
        perf) timeout 300 perf stat -e page-faults -x, -o "$work/perf.$1" -p "$shunt" & ;;
    esac
    tracer=$!
    sleep 1
    ok=$(load)
    kill -INT "$tracer"
    wait "$tracer" 2>/dev/null || true
    kill "$shunt"
    wait "$shunt" 2>/dev/null || true
    [ "$ok" = "$REQUESTS" ] || { echo "delay $1: $ok of $REQUESTS requests succeeded" >&2; exit 1; }
    case $2 in
        strace) for call in madvise munmap mmap; do
                awk -v c="$call" '$NF == c { n = $4 } END { print n + 0 }' "$work/strace.$1"
            done | paste -sd' ' ;;
        perf) awk -F, '/page-faults/ { print $1 }' "$work/perf.$1" ;;
    esac
}

printf '%-6s %12s %12s %12s %14s\n' delay madvise/1k munmap/1k mmap/1k page-faults/1k
for delay in $DELAYS; do
    read -r madvise munmap mmap <<<"$(measure "$delay" strace)"
    faults=$(measure "$delay" perf)
    per_k() { awk -v n="$1" -v r="$REQUESTS" 'BEGIN { printf "%.2f", n * 1000 / r }'; }
    printf '%-6s %12s %12s %12s %14s\n' "$delay" "$(per_k "$madvise")" "$(per_k "$munmap")" "$(per_k "$mmap")" \
        "$(per_k "$faults")"
done
