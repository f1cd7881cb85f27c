#!/usr/bin/env bash
# Runs tools/dev/ci/slowest_tests_test.py with the system's Python, from the repository root or
# Bazel's runfiles root (where sh_test starts).
exec /usr/bin/python3 tools/dev/ci/slowest_tests_test.py -v
