#!/usr/bin/env bash
# The whole test suite: installs what is missing, then runs every test with the default toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel test //... "$@"
