# The shell tests' one helper, sourced by each (tools/testing/BUILD: :test_lib):
#   fail MESSAGE   a failure: printed, counted in $fails, and the test goes on
#   die MESSAGE    a failure that ends the test at once (exit 1)
#   finish         ends a test that counts: exit 1 saying how many failed, else "all passed"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
die() { echo "FAIL: $*" >&2; exit 1; }
finish() {
  if ((fails)); then
    echo "$fails failed"
    exit 1
  fi
  echo "all passed"
  exit 0
}
