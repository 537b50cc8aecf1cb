#!/usr/bin/env bash
# Scale benchmark: `shunt serve` on 10,000 Ingresses (one host and Service each), 10,000 Services
# and 10,000 EndpointSlices with 5 endpoints each (50,000), no TLS, spread over 100 files.
# Reports time from start to /readyz 200, the first "Published route table" line, resident
# memory (VmRSS, VmHWM) once ready, CPU used while idle, and for a few single-file edits (one
# endpoint address changed) the time from the write to the republish and memory afterwards.
#
#   benches/scale.sh
#   INGRESSES=20000 ENDPOINTS_PER_SERVICE=5 FILES=200 EDITS=5 benches/scale.sh
#   SHUNT_BIN=/work/bench-target/release/shunt benches/scale.sh
#
# CLASS picks whose Ingresses they are and how shunt compiles them: `shunt` (shunt's own class,
# the default), `qcloud` (TKE's class, shadowed: --shadow-class qcloud, the README's quick start)
# or `nginx` (class nginx taken over with ingress-nginx's semantics: --class-profile nginx=nginx).
#
#   for class in shunt qcloud nginx; do CLASS=$class EDITS=5 benches/scale.sh; done
#
# RUN=1 ends with `shunt run` on the same objects in a real kube-apiserver and etcd (binaries as
# docs/testing.md says: $KUBEBUILDER_ASSETS or .k8s-bin/, which tests/run.sh fills), inside a
# network namespace (root, or unprivileged user namespaces): start to first publish, memory after
# it and after 12 edits, and one Ingress edit's time to traffic (p50/p99 over 20), against the
# same binary: the cluster binary's real::scale test, --ignored --nocapture. Without the
# binaries, the in-test API server's figures (scale:: in tests/cluster).
#
#   EDITS=12 RUN=1 benches/scale.sh
#
# Bounded: readiness and each republish are awaited at most READY_TIMEOUT seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh

CLASS=${CLASS:-shunt}
case $CLASS in
    shunt) class_args=() ;;
    qcloud) class_args=(--shadow-class qcloud) ;;
    nginx) class_args=(--ingress-class nginx --class-profile nginx=nginx) ;;
    *) echo "CLASS=$CLASS: shunt, qcloud or nginx" >&2; exit 1 ;;
esac
INGRESSES=${INGRESSES:-10000}
ENDPOINTS_PER_SERVICE=${ENDPOINTS_PER_SERVICE:-5}
FILES=${FILES:-100}
EDITS=${EDITS:-3}
IDLE_SECONDS=${IDLE_SECONDS:-5}
READY_TIMEOUT=${READY_TIMEOUT:-120}
POLL_INTERVAL=${POLL_INTERVAL:-250ms}
SHUNT_HTTP=127.0.0.1:18580
SHUNT_HTTPS=127.0.0.1:18543
SHUNT_ADMIN=127.0.0.1:18590

need_commands curl:curl
# GENERATE_ONLY=DIR writes the manifests to DIR and stops (for profiling `shunt serve` by hand).
if [ -n "${GENERATE_ONLY:-}" ]; then rmdir "$work"; work=$GENERATE_ONLY; trap - EXIT; else SHUNT_BIN=$(shunt_bin); fi

mkdir -p "$work/manifests"
awk -v n="$INGRESSES" -v class="$CLASS" -v e="$ENDPOINTS_PER_SERVICE" -v files="$FILES" -v dir="$work/manifests" 'BEGIN {
    per = int((n + files - 1) / files)
    # TKE refuses a ClusterIP backend unless the CLB reaches pods directly (E4047).
    annotations = class == "qcloud" ? ", annotations: {ingress.cloud.tencent.com/direct-access: \"true\"}" : ""
    for (i = 0; i < n; i++) {
        f = sprintf("%s/apps-%04d.yaml", dir, int(i / per))
        ns = "team-" (i % 100); name = "app-" i
        printf "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: %s, namespace: %s%s}\n", name, ns, annotations > f
        printf "spec:\n  ingressClassName: %s\n  rules:\n    - host: %s.example.com\n      http:\n        paths:\n", class, name > f
        printf "          - {path: /, pathType: Prefix, backend: {service: {name: %s, port: {number: 80}}}}\n---\n", name > f
        printf "apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\nspec: {ports: [{name: http, port: 80}]}\n---\n", name, ns > f
        printf "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n" > f
        printf "metadata: {name: %s-abcde, namespace: %s, labels: {kubernetes.io/service-name: %s}}\n", name, ns, name > f
        printf "addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints:\n" > f
        for (k = 1; k <= e; k++)
            printf "  - {addresses: [\"10.%d.%d.%d\"], conditions: {ready: true}}\n", int(i / 250) % 250, i % 250, k > f
        printf "---\n" > f
    }
}'
echo "manifests: $INGRESSES Ingresses of class $CLASS (shunt ${class_args[*]:-with no class flags}), $INGRESSES Services, $((INGRESSES * ENDPOINTS_PER_SERVICE)) endpoints in" \
    "$(ls "$work/manifests" | wc -l) files, $(du -sh "$work/manifests" | cut -f1)"
[ -z "${GENERATE_ONLY:-}" ] || exit 0

now() { date +%s.%N; }
# Seconds since the epoch of the Nth "Published route table" line (UTC RFC 3339 timestamps).
published_at() { # n
    local line
    line=$(grep 'Published route table' "$work/shunt.log" | sed -n "${1}p") || true
    [ -n "$line" ] || return 1
    date -u -d "$(sed 's/\x1b\[[0-9;]*m//g' <<<"$line" | awk '{ print $1 }')" +%s.%N
}
wait_published() { # n: bounded wait for the Nth publish
    local i
    for ((i = 0; i < READY_TIMEOUT * 20; i++)); do
        published_at "$1" >/dev/null && return 0
        sleep 0.05
    done
    echo "no publish #$1 within ${READY_TIMEOUT}s" >&2
    return 1
}
memory() { awk '/^(Vm(RSS|HWM)|Rss(Anon|File))/ { printf "%s %.1f MiB  ", $1, $2 / 1024 }' "/proc/$shunt_pid/status"; }
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$shunt_pid/stat"; }

start=$(now)
RUST_LOG=info NO_COLOR=1 "$SHUNT_BIN" serve --manifests "$work/manifests" --poll-interval "$POLL_INTERVAL" "${class_args[@]}" \
    --http-addr "$SHUNT_HTTP" --https-addr "$SHUNT_HTTPS" --admin-addr "$SHUNT_ADMIN" --access-log false \
    2>"$work/shunt.log" &
shunt_pid=$!
pids+=("$shunt_pid")
ready=""
for ((i = 0; i < READY_TIMEOUT * 20; i++)); do
    if curl -fsS -o /dev/null "http://$SHUNT_ADMIN/readyz" 2>/dev/null; then ready=$(now); break; fi
    kill -0 "$shunt_pid" 2>/dev/null || { cat "$work/shunt.log"; echo "shunt exited"; exit 1; }
    sleep 0.05
done
[ -n "$ready" ] || { echo "not ready within ${READY_TIMEOUT}s"; exit 1; }
wait_published 1
grep 'Published route table' "$work/shunt.log" | sed -n 1p | sed 's/\x1b\[[0-9;]*m//g; s/^[^ ]* *//'
awk -v s="$start" -v r="$ready" -v p="$(published_at 1)" -v c="$(cpu_seconds)" \
    'BEGIN { printf "start -> first publish %.2f s   start -> /readyz 200 %.2f s   CPU used %.2f s\n", p - s, r - s, c }'
echo "after ready:     $(memory)"
# What a scrape costs at this size: /metrics bytes, series and time to serve.
curl -fsS -o "$work/metrics.txt" -w '/metrics: %{size_download} bytes in %{time_total} s, ' "http://$SHUNT_ADMIN/metrics"
echo "$(grep -vc '^#' "$work/metrics.txt") series"
cpu_before=$(cpu_seconds); sleep "$IDLE_SECONDS"
awk -v a="$cpu_before" -v b="$(cpu_seconds)" -v t="$IDLE_SECONDS" \
    'BEGIN { printf "idle %d s (polling %d files): CPU %.2f s (%.1f%% of a core)\n", t, '"$FILES"', b - a, 100 * (b - a) / t }'

# An edit: one endpoint address in one file changes, so exactly one slice differs.
latencies=""
for edit in $(seq 1 "$EDITS"); do
    file=$(ls "$work/manifests"/*.yaml | sed -n "$((edit % FILES + 1))p")
    cpu_before=$(cpu_seconds)
    sed -i "0,/\"10\./s//\"11./" "$file"
    wrote=$(now)
    wait_published $((edit + 1))
    latency=$(awk -v w="$wrote" -v p="$(published_at $((edit + 1)))" 'BEGIN { printf "%.2f", p - w }')
    latencies+="$latency "
    # Idle polling costs next to nothing (above), so this is the reparse, compile and publish.
    cpu=$(awk -v a="$cpu_before" -v b="$(cpu_seconds)" 'BEGIN { printf "%.2f", b - a }')
    echo "edit $edit: write -> publish $latency s (poll interval $POLL_INTERVAL), CPU $cpu s   $(memory)"
done
[ "$EDITS" -eq 0 ] || echo "median write -> publish $(median <<<"$latencies") s over $EDITS edits"
grep -E ' (WARN|ERROR) ' "$work/shunt.log" | head -5 || true

# `shunt run` (RUN=1): the cluster test's figures; it waits for each of its 12 edits' publishes.
if [ "${RUN:-0}" = 1 ]; then
    kill "$shunt_pid" 2>/dev/null || true
    figures='^(created|shunt run|start|after|  then|status of|one Ingress)'
    if [ -x .k8s-bin/kube-apiserver ] || [ -n "${KUBEBUILDER_ASSETS:-}" ]; then
        cluster_bin=$(cargo test -q --locked -p shunt-controller --test cluster --no-run --message-format=json 2>/dev/null |
            sed -n '/"target":{[^}]*"name":"cluster"/s/.*"executable":"\([^"]*\)".*/\1/p')
        unshare_cmd=(unshare -n); [ "$(id -u)" -eq 0 ] || unshare_cmd=(unshare -rn)
        SCALE_CLASS=$CLASS SHUNT_BIN=$(realpath "$SHUNT_BIN") SHUNT_REQUIRE_REAL_K8S=1 "${unshare_cmd[@]}" sh -c \
            'ip link set lo up && ip route add local 10.244.0.0/24 dev lo && exec "$0" "$@"' \
            "$cluster_bin" real::scale --ignored --nocapture 2>&1 | grep -E "$figures" | sed 's/^/run (real API server): /' ||
            { echo "run: the real API server scale test failed"; exit 1; }
    else
        SHUNT_BIN=$(realpath "$SHUNT_BIN") cargo test -q -p shunt-controller --test cluster scale:: -- --ignored \
            --nocapture --skip real:: 2>&1 | grep -E "$figures" | sed 's/^/run (in-test API server): /' ||
            { echo "run: the cluster scale test failed"; exit 1; }
    fi
fi
