#!/usr/bin/env bash
# Installs what the tests need (tests/install.sh), then runs every test (tests/test.sh). CI
# (.ci/run) runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

tests/install.sh
tests/test.sh
