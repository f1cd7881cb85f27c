#!/usr/bin/env bash
# tools/dev/ci/bazel_test.sh against a fake `bazel` that exits as each case says: a failed build
# is tried once more (one action at a time, the first try's passes reused) and the machine's
# state is printed; a failing test, a pass or an interrupt are never tried again.
set -u
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh
SCRIPT="$PWD/tools/dev/ci/bazel_test.sh"
T="${TEST_TMPDIR:-$(mktemp -d)}"
mkdir -p "$T/bin"
# The fake: `bazel info ...` prints a directory; `bazel test ...` logs its arguments and exits
# with the next status of $T/codes (one per line).
cat >"$T/bin/bazel" <<'FAKE'
#!/usr/bin/env bash
if [[ $1 == info ]]; then echo "$FAKE_DIR"; exit 0; fi
echo "$*" >>"$FAKE_DIR/calls"
code="$(head -1 "$FAKE_DIR/codes")"
sed -i 1d "$FAKE_DIR/codes"
exit "$code"
FAKE
chmod +x "$T/bin/bazel"
export PATH="$T/bin:$PATH" FAKE_DIR="$T"

# case CODES WANT_RC WANT_CALLS FRAGMENT: the fake exits with CODES in turn.
case_() {
  : >"$T/calls"
  printf '%s\n' $1 >"$T/codes"
  expect_run "$2" "$4" "$SCRIPT" --config=asan //...
  [[ $(wc -l <"$T/calls") == "$3" ]] || fail "codes $1: $(wc -l <"$T/calls") calls, want $3"
}
case_ "0" 0 1 ""
case_ "3" 3 1 ""
case_ "8" 8 1 ""
case_ "1 0" 0 2 "the second try passed: the first try's build failure was the machine's"
case_ "1 1" 1 2 "the second try failed too (exit 1)"
case_ "1 3" 3 2 "the machine now:"
# The second try: one action at a time, the same arguments, cached passes reused.
[[ "$(sed -n 2p "$T/calls")" == "test --jobs=1 --config=asan //... --cache_test_results=auto" ]] ||
  fail "second call: $(sed -n 2p "$T/calls")"
finish
