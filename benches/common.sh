# Shared by the bench scripts (sourced, not run): installs, the shunt binary, nginx instances,
# bounded waits, wrk output parsing and medians. Every address is on loopback.

# Installs the Debian packages whose commands are missing: `need_commands wrk:wrk nginx:nginx-light`.
need_commands() {
    local pair missing=()
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
    done
    ((${#missing[@]})) || return 0
    local sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
}

# SHUNT_BIN when set (e.g. a release build in another target dir), else a build here with
# PROFILE (default release; PROFILE=production is the shipped image's fat-LTO build, ~2x the build time).
shunt_bin() {
    if [ -n "${SHUNT_BIN:-}" ]; then
        [ -x "$SHUNT_BIN" ] || { echo "SHUNT_BIN=$SHUNT_BIN is not an executable" >&2; return 1; }
    else
        local profile=${PROFILE:-release}
        cargo build --profile "$profile" -q -p shunt-controller --bin shunt >&2
        SHUNT_BIN=${CARGO_TARGET_DIR:-target}/$profile/shunt
    fi
    echo "$SHUNT_BIN"
}

# PIN=1: the proxy under test runs alone on CPU 1; the load generator and the backend share CPU 0.
# Unpinned (the default) everything competes for both CPUs, which favours the proxy that needs less.
if [ "${PIN:-0}" = 1 ]; then
    [ "$(nproc)" -ge 2 ] || { echo "PIN=1 needs two CPUs" >&2; exit 1; }
    PROXY_CPUS=(taskset -c 1); LOAD_CPUS=(taskset -c 0)
else
    PROXY_CPUS=(); LOAD_CPUS=()
fi

work=$(mktemp -d)
pids=()
declare -A NGINX_PID
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# nginx in the foreground under $work/$1 with worker_processes $WORKERS; $2 goes in `http {}`.
nginx_conf() {
    mkdir -p "$work/$1"
    cat > "$work/$1/nginx.conf" <<CONF
worker_processes ${WORKERS:-1};
pid $work/$1/nginx.pid;
error_log $work/$1/error.log warn;
events { worker_connections 8192; }
http {
    access_log off;
    client_body_temp_path $work/$1/body;
    proxy_temp_path $work/$1/proxy;
    fastcgi_temp_path $work/$1/fastcgi;
    uwsgi_temp_path $work/$1/uwsgi;
    scgi_temp_path $work/$1/scgi;
    keepalive_requests 1000000;
    $2
}
CONF
    local cpus=("${LOAD_CPUS[@]}")
    # Instances named proxy (proxy, proxy-lean, ...) are proxies under test.
    [[ $1 == proxy* ]] && cpus=("${PROXY_CPUS[@]}")
    "${cpus[@]}" nginx -p "$work/$1" -c "$work/$1/nginx.conf" -g 'daemon off;' &
    pids+=($!)
    NGINX_PID[$1]=$!
}

# The "pod": a fast static answer, so the proxies are what is measured.
backend_block() { echo "server { listen $1; location / { default_type text/plain; return 200 'hello from the pod\n'; } }"; }

# nginx as the proxy to compare with: upstream keepalive and the fields shunt also sets.
# $1 = listen parameters, $2 = backend address, $3 = extra server directives.
nginx_proxy_block() {
    echo "upstream pod { server $2; keepalive 256; }
    server { listen $1; ${3:-} location / {
        proxy_pass http://pod; proxy_http_version 1.1; proxy_set_header Connection '';
        $(nginx_forwarding_fields) } }"
}

# The request fields nginx adds, as shunt adds them by default. NGINX_FIELDS=lean leaves out
# X-Request-ID and Forwarded (the benchmarks' nginx before 2026-11-25), which shunt sets too;
# ingress-nginx sets X-Request-ID by default.
nginx_forwarding_fields() {
    echo "proxy_set_header Host \$host; proxy_set_header X-Real-IP \$remote_addr;
        proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for; proxy_set_header X-Forwarded-Proto \$scheme;
        proxy_set_header X-Forwarded-Host \$host; proxy_set_header X-Forwarded-Port \$server_port;"
    [ "${NGINX_FIELDS:-same}" = lean ] ||
        echo "        proxy_set_header X-Request-ID \$request_id;
        proxy_set_header Forwarded 'for=\$remote_addr;proto=\$scheme;host=\$host';"
}

# Runs "$@" every 0.1 s until it succeeds, at most $1 times.
retry() {
    local tries=$1 i
    shift
    for ((i = 0; i < tries; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

# CPU time (user and system, in clock ticks, as "user system") used so far by these processes and their children
# processes (nginx's workers); threads are included by /proc/PID/stat.
cpu_ticks() { # pid...
    local pid all=()
    for pid in "$@"; do all+=("$pid" $(pgrep -P "$pid" || true)); done
    for pid in "${all[@]}"; do cat "/proc/$pid/stat" 2>/dev/null || true; done |
        sed 's/^.*) //' | awk '{ u += $12; s += $13 } END { print u + 0, s + 0 }'
}
CLK_TCK=$(getconf CLK_TCK)
# Proportional set size in MiB of a proxy's process and its children (nginx's workers), pages
# shared with another process counted by share: what the proxy adds to a node.
pss_mib() { # pid
    local pid
    for pid in "$1" $(pgrep -P "$1" || true); do cat "/proc/$pid/smaps_rollup" 2>/dev/null || true; done |
        awk '$1 == "Pss:" { kib += $2 } END { printf "%.1f\n", kib / 1024 }'
}
# Microseconds of CPU per request from two cpu_ticks readings and a request count, as "all system":
# the kernel's share tells syscall and wakeup costs from the proxy's own code.
cpu_us_per_request() {
    awk -v a="$1" -v b="$2" -v n="$3" -v hz="$CLK_TCK" 'BEGIN {
        split(a, x, " "); split(b, y, " "); per = n ? 1e6 / hz / n : 0
        printf "%.1f %.1f", (y[1] + y[2] - x[1] - x[2]) * per, (y[2] - x[2]) * per }'
}

# wrk's "Requests/sec", the 99% latency in ms, non-2xx count, socket error count and the number of
# requests, on one line.
# Bounded twice: wrk's own -d, and a hard timeout well past it (WRK_TIMEOUT seconds, default 120).
run_wrk() { # wrk arguments...
    timeout "${WRK_TIMEOUT:-120}" "${LOAD_CPUS[@]}" wrk --latency "$@" |
        awk '/Requests\/sec/ { rps = $2 }
             /^ +99%/ { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
                        ms = (u == "us") ? v / 1000 : (u == "s") ? v * 1000 : (u == "m") ? v * 60000 : v; p99 = ms }
             / Non-2xx or 3xx responses/ { bad = $NF }
             /Socket errors/ { gsub(/,/, ""); err = $4 + $6 + $8 + $10 }
             / requests in / { total = $1 }
             END { printf "%s %s %s %s %s\n", rps, p99, (bad == "" ? 0 : bad), (err == "" ? 0 : err), total }'
}

# RESULTS=FILE: each measured run is appended as one tab-separated line
# (protocol, server, pinned 0/1, req/s, p99 ms, CPU us/req) for benches/plot.py.
record_result() { # protocol server rps p99 cpu
    [ -z "${RESULTS:-}" ] || printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "${PIN:-0}" "$3" "$4" "$5" >> "$RESULTS"
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Service `shop/api` (port 80 "http") with one ready endpoint, the backend at $1 (ip:port), as YAML.
api_service_yaml() {
    cat <<YAML
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: api-1, namespace: shop, labels: {kubernetes.io/service-name: api}}
addressType: IPv4
ports: [{name: http, port: ${1##*:}}]
endpoints: [{addresses: ["${1%%:*}"], conditions: {ready: true}}]
YAML
}

# $work/manifests.yaml without TLS: an Ingress routing $HOST (default shop.example.com) + path (default /api)
# to the api Service on the backend.
plain_site() { # backend [path]
    cat > "$work/manifests.yaml" <<YAML
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: shop}
spec:
  ingressClassName: shunt
  rules:
    - host: ${HOST:-shop.example.com}
      http:
        paths:
          - {path: ${2:-/api}, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
---
$(api_service_yaml "$1")
YAML
}

# A self-signed certificate for $HOST (and 127.0.0.1) in $work/{cert,key}.pem, and $work/manifests.yaml: its
# Secret, an Ingress for $HOST with TLS and one path ($2, default /) to the api Service at backend $1.
tls_site() { # backend [path]
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 -subj "/CN=$HOST" \
        -addext "subjectAltName=DNS:$HOST,IP:127.0.0.1" -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
    cat > "$work/manifests.yaml" <<YAML
apiVersion: v1
kind: Secret
metadata: {name: shop-tls, namespace: shop}
type: kubernetes.io/tls
data:
  tls.crt: $(base64 -w0 "$work/cert.pem")
  tls.key: $(base64 -w0 "$work/key.pem")
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: shop}
spec:
  ingressClassName: shunt
  tls: [{hosts: [$HOST], secretName: shop-tls}]
  rules:
    - host: $HOST
      http:
        paths:
          - {path: ${2:-/}, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
---
$(api_service_yaml "$1")
YAML
}
