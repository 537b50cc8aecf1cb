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

# Unit, integration and end-to-end tests; benches are built and run once as smoke tests.
cargo test --workspace --all-targets --locked
