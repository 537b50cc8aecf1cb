#!/usr/bin/env bash
# Runs every test, installs nothing (tests/install.sh does): format and lints, the Rust tests
# (unit, e2e, the cluster binary's mock tier, then its real tier in a network namespace), benches
# as smoke tests, the Helm chart tests. tests/run.sh calls it after tests/install.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# Format and lints fail CI the way a red test does.
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings

# Unit, integration and end-to-end tests; benches are built and run once as smoke tests. The
# cluster binary's real-API-server tier (tests named real::, tests/cluster/real) runs below, in a
# network namespace; its mock tier (mock::, tests/cluster/mock) runs here.
# SHUNT_REQUIRE_NGINX: the nginx differential suite fails instead of skipping without nginx.
SHUNT_REQUIRE_NGINX=1 cargo test --workspace --lib --bins --tests --examples --locked -- --skip real::
cargo test --workspace --benches --locked

# The real tier (docs/testing.md): kube-apiserver and etcd from $KUBEBUILDER_ASSETS, else from
# .k8s-bin/ (tests/install.sh unpacks ../shared/k8s there).
cluster_bin=$(cargo test --locked -p shunt-controller --test cluster --no-run --message-format=json 2>/dev/null |
    sed -n '/"target":{[^}]*"name":"cluster"/s/.*"executable":"\([^"]*\)".*/\1/p')
[ -n "$cluster_bin" ] || { echo "tests/test.sh: no cluster test binary built"; exit 1; }
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

# Helm chart tests (tests/helm), in the venv tests/install.sh made.
PYTHONDONTWRITEBYTECODE=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/helm
