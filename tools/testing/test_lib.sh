# The shell tests' one helper, sourced by each (tools/testing/BUILD: :test_lib):
#   fail MESSAGE   a failure: printed, counted in $fails, and the test goes on
#   die MESSAGE    a failure that ends the test at once (exit 1)
#   finish         ends a test that counts: exit 1 saying how many failed, else "all passed"
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
preload_env() {
  preload_env=()
  if ldd "$1" | grep libasan >/dev/null; then  # not -q: ldd must not die of SIGPIPE (pipefail)
    preload_env=(env "LD_PRELOAD=$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
                 "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
  fi
}
