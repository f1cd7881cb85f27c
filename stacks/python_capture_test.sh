#!/usr/bin/env bash
# Debian's python, whatever python is first on PATH. Under --config=asan the library is
# instrumented, and an uninstrumented interpreter must load the sanitizer runtimes first.
set -euo pipefail
source tools/dev/testing/test_lib.sh  # preload_env; from Bazel's runfiles root, where sh_test starts
preload_env "$2"
exec "${preload_env[@]}" /usr/bin/python3 "$1" "$2"
