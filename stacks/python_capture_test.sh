#!/usr/bin/env bash
# Debian's python, whatever python is first on PATH. Under --config=asan the library is
# instrumented, and an uninstrumented interpreter must load the sanitizer runtimes first.
set -euo pipefail
if ldd "$2" | grep libasan >/dev/null; then  # not -q: ldd must not die of SIGPIPE (pipefail)
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
exec /usr/bin/python3 "$1" "$2"
