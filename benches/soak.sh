#!/usr/bin/env bash
# Soak: shunt under steady wrk traffic for SOAK_SECONDS while, at the same time,
#   - the route table changes CHANGES times (a churn Ingress rewritten in its manifest file),
#   - backend pods are drained, killed and restarted, their EndpointSlice updated around it
#     (the pod leaves the slice, shunt republishes, then the pod dies; it comes back, then rejoins),
#   - SILENT connections are held open without sending a byte, and SLOW_BODIES clients send a
#     request body at one byte per second.
# It prints the requests to live endpoints that failed (wrk's non-2xx and socket errors: must be 0),
# shunt's file descriptors and resident memory before and after, and how long the silent
# connections lived; the same silent-connection run goes against nginx (client_header_timeout 60s)
# beside it. Loopback only; bounded by SOAK_SECONDS plus the silent connections' deadline.
#
#   benches/soak.sh                                  # 10 minutes
#   SOAK_SECONDS=120 CHANGES=300 benches/soak.sh     # a shorter run
#   SHUNT_BIN=/path/to/release/shunt benches/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh

SOAK_SECONDS=${SOAK_SECONDS:-600}
CHANGES=${CHANGES:-1000}
SILENT=${SILENT:-2000}
SLOW_BODIES=${SLOW_BODIES:-20}
CONNECTIONS=${CONNECTIONS:-16}
PODS=${PODS:-4}
# Silent connections are watched this long at most; both proxies close them at 60 s by default.
SILENT_WATCH=${SILENT_WATCH:-150}
SHUNT=127.0.0.1:18680
SHUNT_HTTPS=127.0.0.1:18643
SHUNT_ADMIN=127.0.0.1:18690
NGINX=127.0.0.1:18682
POD_PORT=18681

need_commands wrk:wrk nginx:nginx-light curl:curl python3:python3
SHUNT_BIN=$(shunt_bin)
# Thousands of sockets on each side of the test.
ulimit -n "$(ulimit -Hn)"

pod_ip() { echo "127.0.0.$((40 + $1))"; }

start_pod() { # index
    nginx_conf "pod-$1" "$(backend_block "$(pod_ip "$1"):$POD_PORT")"
    retry 50 curl -fsS "http://$(pod_ip "$1"):$POD_PORT/" || { echo "pod $1 did not start"; exit 1; }
}

stop_pod() { # index
    local pid=${NGINX_PID[pod-$1]}
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# The Service's EndpointSlice with the pods whose indexes are given.
write_slice() { # index...
    local i endpoints=""
    for i in "$@"; do endpoints+="  - {addresses: [\"$(pod_ip "$i")\"], conditions: {ready: true}}"$'\n'; done
    cat > "$work/manifests/slice.yaml.tmp" <<YAML
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: soak, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: $POD_PORT}]
endpoints:
$endpoints
YAML
    mv "$work/manifests/slice.yaml.tmp" "$work/manifests/slice.yaml"
}

# Waits until /routes lists (want=1) or no longer lists (want=0) a pod's address.
await_routes() { # index want
    local addr i
    addr="$(pod_ip "$1"):$POD_PORT"
    for ((i = 0; i < 100; i++)); do
        if curl -fsS "http://$SHUNT_ADMIN/routes" | grep -q "\"$addr\""; then
            [ "$2" = 1 ] && return 0
        else
            [ "$2" = 0 ] && return 0
        fi
        sleep 0.1
    done
    echo "shunt did not publish pod $1 (want=$2) within 10 s"
    return 1
}

write_churn() { # n
    cat > "$work/manifests/churn.yaml.tmp" <<YAML
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: churn, namespace: soak}
spec:
  ingressClassName: shunt
  rules:
    - host: churn-$1.example.com
      http:
        paths:
          - {path: /v$1, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
YAML
    mv "$work/manifests/churn.yaml.tmp" "$work/manifests/churn.yaml"
}

rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
fds() { ls "/proc/$1/fd" | wc -l; }

mkdir -p "$work/manifests"
for ((i = 0; i < PODS; i++)); do start_pod "$i"; done
cat > "$work/manifests/web.yaml" <<YAML
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: soak}
spec:
  ingressClassName: shunt
  rules:
    - host: soak.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: soak}
spec: {ports: [{name: http, port: 80}]}
YAML
write_slice $(seq 0 $((PODS - 1)))
write_churn 0

RUST_LOG=warn "$SHUNT_BIN" serve --manifests "$work/manifests" --http-addr "$SHUNT" --https-addr "$SHUNT_HTTPS" \
    --admin-addr "$SHUNT_ADMIN" --access-log false 2> "$work/shunt.log" &
pids+=($!)
shunt_pid=$!
nginx_conf proxy "client_header_timeout 60s; $(nginx_proxy_block "$NGINX" "$(pod_ip 0):$POD_PORT")"
retry 100 curl -fsS "http://$SHUNT_ADMIN/readyz" || { echo "shunt is not ready"; exit 1; }
retry 50 curl -fsS -H 'Host: soak.example.com' "http://$SHUNT/" || { echo "shunt is not answering"; exit 1; }
retry 50 curl -fsS "http://$NGINX/" || { echo "nginx is not answering"; exit 1; }

# Warm up, then take the "before" figures.
run_wrk -t1 -c"$CONNECTIONS" -d3s -H 'Host: soak.example.com' "http://$SHUNT/" >/dev/null
fds_before=$(fds "$shunt_pid"); rss_before=$(rss_kib "$shunt_pid")
echo "soak: ${SOAK_SECONDS}s, $CHANGES table changes, $PODS pods restarted in turn, $SILENT silent connections" \
    "(shunt and nginx), $SLOW_BODIES slow bodies, wrk -c$CONNECTIONS"
echo "before: shunt fds $fds_before, resident $((rss_before / 1024)) MiB"

# Silent connections: open them all, then record when each one is closed by the server.
cat > "$work/silent.py" <<'PY'
import selectors, socket, statistics, sys, time
host, port, count, watch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
sel, opened = selectors.DefaultSelector(), {}
for _ in range(count):
    s = socket.create_connection((host, port))
    s.setblocking(False)
    opened[s] = time.monotonic()
    sel.register(s, selectors.EVENT_READ)
lived, deadline = [], time.monotonic() + watch
while opened and time.monotonic() < deadline:
    for key, _ in sel.select(timeout=1):
        s = key.fileobj
        try:
            if s.recv(4096):
                continue
        except (ConnectionResetError, BlockingIOError):
            pass
        lived.append(time.monotonic() - opened.pop(s))
        sel.unregister(s)
        s.close()
if lived:
    q = statistics.quantiles(lived, n=100) if len(lived) > 1 else lived * 99
    print(f"{len(lived)}/{count} closed by the server; lived min {min(lived):.1f} s, "
          f"median {statistics.median(lived):.1f} s, p99 {q[98]:.1f} s, max {max(lived):.1f} s; "
          f"{len(opened)} still open after {watch:.0f} s")
else:
    print(f"0/{count} closed by the server; {len(opened)} still open after {watch:.0f} s")
PY
python3 "$work/silent.py" "${SHUNT%:*}" "${SHUNT#*:}" "$SILENT" "$SILENT_WATCH" > "$work/silent-shunt.txt" &
silent_shunt=$!
python3 "$work/silent.py" "${NGINX%:*}" "${NGINX#*:}" "$SILENT" "$SILENT_WATCH" > "$work/silent-nginx.txt" &
silent_nginx=$!

# Slow bodies: a request head, then one byte per second until the soak ends or shunt gives up.
cat > "$work/slow.py" <<'PY'
import socket, sys, time
host, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.create_connection((host, port))
s.sendall(b"POST / HTTP/1.1\r\nHost: soak.example.com\r\nContent-Length: 100000\r\n\r\n")
start = time.monotonic()
try:
    while time.monotonic() - start < seconds:
        s.sendall(b"x")
        time.sleep(1)
    print("open")
except OSError:
    print(f"closed after {time.monotonic() - start:.0f} s")
PY
for ((i = 0; i < SLOW_BODIES; i++)); do
    python3 "$work/slow.py" "${SHUNT%:*}" "${SHUNT#*:}" "$SOAK_SECONDS" > "$work/slow-$i.txt" 2>&1 &
    pids+=($!)
done

# Steady traffic for the whole soak.
WRK_TIMEOUT=$((SOAK_SECONDS + 60)) run_wrk -t1 -c"$CONNECTIONS" -d"${SOAK_SECONDS}s" -H 'Host: soak.example.com' \
    "http://$SHUNT/" > "$work/wrk.txt" &
wrk_pid=$!

# Churn until the soak ends: table changes spread over the run, a pod restart every few seconds.
started=$(date +%s)
# At most one edit per pass: shunt re-reads files every 250 ms, so edits closer than that coalesce.
interval=0.26
change=0; restarts=0; next_restart=$((started + 5)); pod=0
while (($(date +%s) < started + SOAK_SECONDS - 2)); do
    # Edits are spread over the run by the clock, so a slow pod restart is caught up after.
    due=$(awk -v e="$(($(date +%s) - started))" -v s="$SOAK_SECONDS" -v c="$CHANGES" 'BEGIN { d = int(e * c / (s - 5)) + 1; print (d > c) ? c : d }')
    if ((change < due)); then
        change=$((change + 1)); write_churn "$change"
    fi
    if (($(date +%s) >= next_restart)); then
        others=(); for ((i = 0; i < PODS; i++)); do ((i == pod)) || others+=("$i"); done
        write_slice "${others[@]}"; await_routes "$pod" 0
        stop_pod "$pod"; start_pod "$pod"
        write_slice $(seq 0 $((PODS - 1))); await_routes "$pod" 1
        restarts=$((restarts + 1)); pod=$(((pod + 1) % PODS)); next_restart=$(($(date +%s) + 5))
    fi
    sleep "$interval"
done
wait "$wrk_pid" || true
read -r rps p99 bad err total < "$work/wrk.txt"
published=$(curl -fsS "http://$SHUNT_ADMIN/metrics" | awk '/^shunt_table_publishes_total/ { print $2 }')

echo "traffic: $total requests, ${rps} req/s, p99 ${p99} ms; failed: $bad non-2xx, $err socket errors"
echo "churn: $change manifest edits, $restarts pod restarts, ${published:-?} tables published"
wait "$silent_shunt" "$silent_nginx" || true
sleep 2
fds_after=$(fds "$shunt_pid"); rss_after=$(rss_kib "$shunt_pid")
echo "after: shunt fds $fds_after (before $fds_before), resident $((rss_after / 1024)) MiB (before $((rss_before / 1024)) MiB)"
echo "silent connections, shunt: $(cat "$work/silent-shunt.txt")"
echo "silent connections, nginx: $(cat "$work/silent-nginx.txt")"
echo "slow bodies (shunt): $(cat "$work"/slow-*.txt | sort | uniq -c | tr -s ' ' | paste -sd';')"
fail=0
[ "$bad" = 0 ] && [ "$err" = 0 ] || { echo "FAIL: requests to live endpoints failed"; fail=1; }
((fds_after <= fds_before + 16)) || { echo "FAIL: file descriptors grew"; fail=1; }
exit "$fail"
