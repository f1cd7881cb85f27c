#!/usr/bin/env bash
# tools/dev/lint/check_format.sh in a scratch repository holding the real configuration files: a
# clean tree passes; a C++ file clang-format would change, a Python file black would change, and one
# flake8 flags each fail the check, which names the file; an example program black may not touch.
set -uo pipefail
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh || exit 1  # fail, finish; from the runfiles root
here="$PWD"
repo="$(mktemp -d "${TEST_TMPDIR:-/tmp}/check_format.XXXXXX")"
mkdir -p "$repo/tools/dev/lint" "$repo/examples"
cp "$here/tools/dev/lint/check_format.sh" "$repo/tools/dev/lint/"
cp "$here/.clang-format" "$here/.flake8" "$here/pyproject.toml" "$repo/"
cd "$repo" || exit 1
git init -q . && git config user.email t@t && git config user.name t

printf 'int f(int x) {\n  const int y = x * 2;\n  return y + 1;\n}\n' > good.cc
printf 'def f(x):\n    return x + 1\n' > good.py
# A layout black would change, in a folder pyproject.toml leaves alone.
printf "KEPT = 'quoted as its author chose'\n" > examples/kept.py

run() {  # run NAME WANT_RC FRAGMENT: check_format.sh's exit and that its output holds FRAGMENT
  git add -A >/dev/null
  local out rc
  out="$(bash tools/dev/lint/check_format.sh 2>&1)"
  rc=$?
  if [[ "$rc" != "$2" || "$out" != *"$3"* ]]; then
    fail "$1: exit $rc (want $2), or the output lacks '$3':"
    echo "$out"
  else
    echo "ok: $1"
  fi
}
run "a clean tree" 0 "every file formatted and clean"

printf 'int g(int x){return x+1;}\n' > bad.cc
run "C++ clang-format would change" 1 "bad.cc"
rm bad.cc

printf 'def h( x ):\n    return x\n' > bad_layout.py
run "Python black would change" 1 "bad_layout.py"
rm bad_layout.py

printf 'import os\n\n\ndef k(x):\n    return x\n' > unused.py
run "Python flake8 flags" 1 "unused.py:1:1: F401"
rm unused.py

run "clean again" 0 "every file formatted and clean"
finish
