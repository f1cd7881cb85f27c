#!/usr/bin/env bash
# The project's main job: installs what is missing, then runs the demonstration.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
exec bazel run //tools:pool_demo "$@"
