#!/bin/bash
# run_pyopencl_suite.sh's usage: bad arguments exit 2 with a message, a missing checkout is one
# "skipped" line and exit 0, --help exits 0. (The suite itself needs a PyOpenCL checkout; see
# python/README.md.)
set -uo pipefail
script="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh || exit 1  # expect_run, finish; from the runfiles root
# expect RC FRAGMENT ARGS...: the script run with ARGS exits RC and says FRAGMENT (plain text).
expect() { expect_run "$1" "$2" env -u CLPOOL_PYOPENCL_SRC bash "$script" "${@:3}"; }
mkdir -p "$tmp/fake/test" "$tmp/notpyopencl" "$tmp/emptysite" "$tmp/site/clpool"
touch "$tmp/site/clpool/__init__.py"
touch "$tmp/fake/test/test_array.py"
expect 0 "usage" --help
expect 0 "skipped" --device pocl
expect 2 "unknown argument" --frobnicate
expect 2 "--device must be" --device cuda --pyopencl-src "$tmp/fake"
expect 2 "--pool must be" --pool cupy --pyopencl-src "$tmp/fake"
expect 2 "no test/ folder" --pyopencl-src "$tmp/notpyopencl"
expect 2 "does not exist" --pyopencl-src "$tmp/fake" --files test_nothing.py
expect 2 "holds no clpool package" --pyopencl-src "$tmp/fake" --files test_array.py --site "$tmp/emptysite"
expect 2 "needs --mockcl-so" --pyopencl-src "$tmp/fake" --files test_array.py --device mockcl --site "$tmp/site"
expect 2 "needs a value" --pyopencl-src
expect 2 "holds no pyopencl package" --pyopencl-src "$tmp/fake" --files test_array.py --pyopencl-site "$tmp/emptysite"
echo "not an archive" > "$tmp/bad.tar.gz"
expect 2 "not a PyOpenCL archive" --pyopencl-src "$tmp/bad.tar.gz" --files test_array.py --site "$tmp/site"
# A checkout of another version than the PyOpenCL loaded (Debian's 2022.3.1 here).
mkdir -p "$tmp/v2026/test"
touch "$tmp/v2026/test/test_array.py"
printf '[project]\nname = "pyopencl"\nversion = "2026.1.2"\n' > "$tmp/v2026/pyproject.toml"
expect 2 "the tests are PyOpenCL 2026.1.2's but PyOpenCL 2022.3.1 is loaded" --pyopencl-src "$tmp/v2026" --files test_array.py --site "$tmp/site"
expect 2 "needs a value" --device "" --pyopencl-src "$tmp/fake"
# --python: an executable file, and the one that runs everything (the GPU session's own Python).
expect 2 "--python $tmp/nope is not an executable file" --python "$tmp/nope" --pyopencl-src "$tmp/fake"
expect 2 "--python $tmp is not an executable file" --python "$tmp" --pyopencl-src "$tmp/fake"
expect 2 "--python needs a value" --python "" --pyopencl-src "$tmp/fake"
expect 2 "run_pyopencl_suite.sh: /bin/false cannot import pyopencl" --device system --python /bin/false \
  --pyopencl-src "$tmp/fake" --files test_array.py --site "$tmp/site"
finish
