# The shell tests' one helper, sourced by each (tools/dev/testing/BUILD: :test_lib):
#   fail MESSAGE   a failure: printed, counted in $fails, and the test goes on
#   die MESSAGE    a failure that ends the test at once (exit 1)
#   finish         ends a test that counts: exit 1 saying how many failed, else "all passed"
#   check NAME COMMAND...
#                  runs COMMAND: "ok: NAME" when it succeeds, else a failure named NAME
#   expect_run RC FRAGMENT COMMAND...
#                  runs COMMAND (a program or a shell function), its standard output and error
#                  captured: "ok: ..." when it exits RC and the two together contain FRAGMENT
#                  (plain text; "" for anything), else a failure showing their first lines.
#                  Leaves both in $expect_out and standard error alone in $expect_err.
#                  EXPECT_ONE_ERROR_LINE=1: an exit 2 must also say why on exactly one line of
#                  standard error.
#   expect_match RC REGEX COMMAND...
#                  the same, but one line of the output must match the extended regex REGEX
#   mockcl_icd DIR SO
#                  writes DIR/mockcl.icd naming the library SO (made absolute), for
#                  OCL_ICD_VENDORS=DIR (or =DIR/mockcl.icd)
#   preload_env FILE
#                  sets the array preload_env to what an uninstrumented interpreter (Debian's
#                  python3) needs to load FILE, or a library FILE loads, built with --config=asan:
#                  `env LD_PRELOAD=<ASan's and UBSan's runtimes> ASAN_OPTIONS=...:detect_leaks=0`
#                  (Python frees little at exit); empty when FILE is not instrumented. Run
#                  "${preload_env[@]}" python3 ..., or export "${preload_env[@]:1}".
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
check() {
  local name=$1
  shift
  if "$@"; then echo "ok: $name"; else fail "$name"; fi
}
# _expect MODE RC PATTERN COMMAND...: expect_run (MODE text) and expect_match (MODE regex).
_expect() {
  local mode=$1 want=$2 pattern=$3 rc err label
  shift 3
  label="$(basename -- "$1") ${*:2}"
  err="$(mktemp "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/expect_err.XXXXXX")"
  expect_out="$("$@" 2>"$err")"
  rc=$?
  expect_err="$(cat "$err")"
  rm -f "$err"
  expect_out="$expect_out${expect_out:+${expect_err:+$'\n'}}$expect_err"
  local found=1
  if [[ $mode == text ]]; then
    [[ "$expect_out" == *"$pattern"* ]] || found=0
  else
    grep -qE -- "$pattern" <<<"$expect_out" || found=0
  fi
  if [[ $rc != "$want" ]]; then
    fail "$label -> exit $rc, want $want"
  elif ((!found)); then
    fail "$label: output lacks '$pattern'"
  elif [[ ${EXPECT_ONE_ERROR_LINE:-0} == 1 && $rc == 2 ]] &&
    [[ $(printf '%s' "$expect_err" | grep -c '') != 1 ]]; then
    fail "$label: want one error line on stderr, got:"
  else
    echo "ok: $label -> $rc"
    return 0
  fi
  head -20 <<<"$expect_out" | sed 's/^/  | /'
  return 1
}
expect_run() { _expect text "$@"; }
expect_match() { _expect regex "$@"; }
mockcl_icd() {
  mkdir -p "$1" && realpath "$2" > "$1/mockcl.icd"
}
preload_env() {
  preload_env=()
  if ldd "$1" | grep libasan >/dev/null; then  # not -q: ldd must not die of SIGPIPE (pipefail)
    preload_env=(env "LD_PRELOAD=$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
                 "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
  fi
}
