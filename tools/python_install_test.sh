#!/usr/bin/env bash
# tools/python_install.sh says what it builds and where it is, and shows progress: with a `bazel`
# on PATH that only records its arguments and stands in for Bazel's outputs (a test cannot run
# Bazel inside Bazel), the script names the four targets before building, asks Bazel for a
# progress line at least every 10 s, prints each step with the time since its start, and installs
# the package it says it installs.
#   python_install_test.sh TOOLS_PYTHON_INSTALL_SH
set -uo pipefail
script="$1"   # in the runfiles, beside python/clpool/*.py (the script copies them from its root)
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh || exit 1  # fail, finish; from the runfiles root

# The stand-in Bazel: `bazel build ...` records its arguments and prints a progress line;
# `bazel info ... bazel-bin` names a tree of empty outputs.
mkdir -p "$tmp/bin" "$tmp/out/python" "$tmp/out/tools/layer" "$tmp/out/mockcl" "$tmp/out/tools/replay"
touch "$tmp/out/python/_core.so" "$tmp/out/tools/layer/libclpool_layer.so" "$tmp/out/mockcl/libmockcl.so" \
  "$tmp/out/tools/replay/clpool_replay"
cat > "$tmp/bin/bazel" <<EOF
#!/usr/bin/env bash
echo "\$*" >> "$tmp/bazel.args"
case "\$1" in
  build) echo "[12 / 345] Compiling python/module.cc; 3s processwrapper-sandbox" >&2 ;;
  info) echo "$tmp/out" ;;
esac
EOF
chmod +x "$tmp/bin/bazel"

PATH="$tmp/bin:$PATH" bash "$script" "$tmp/site" > "$tmp/stdout" 2> "$tmp/stderr"
rc=$?
cat "$tmp/stderr"
[[ $rc == 0 ]] || fail "exit $rc"
first="$(head -1 "$tmp/stderr")"
[[ "$first" == "python_install: [0 s] 1/2 building //python:_core.so //tools/layer:libclpool_layer.so //mockcl:libmockcl.so //tools/replay:clpool_replay (Bazel, --config=opt): the extension clpool._core, the OpenCL layer, the mock ICD and clpool_replay"* ]] ||
  fail "what it builds is not said first: $first"
grep -q "^build --config=opt --symlink_prefix=/ --show_progress_rate_limit=10 //python:_core.so " "$tmp/bazel.args" ||
  fail "Bazel not asked for a progress line every 10 s: $(cat "$tmp/bazel.args")"
grep -q '^\[12 / 345\] Compiling' "$tmp/stderr" || fail "Bazel's progress is not shown"
suffix="$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
grep -qE "^python_install: \[[0-9]+ s\] 2/2 copying clpool/\*\.py, clpool/_core$suffix and clpool/_lib/ into $tmp/site$" "$tmp/stderr" ||
  fail "the copy step is not said"
grep -qE "^python_install: \[[0-9]+ s\] installed clpool into $tmp/site$" "$tmp/stderr" || fail "the end is not said"
[[ -f "$tmp/site/clpool/_core$suffix" && -f "$tmp/site/clpool/__init__.py" && -x "$tmp/site/clpool/_lib/clpool_replay" ]] ||
  fail "not installed where it says"
[[ ! -s "$tmp/stdout" ]] || fail "standard output is not empty: $(cat "$tmp/stdout")"

finish
