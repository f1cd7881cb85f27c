#!/usr/bin/env bash
# bazel test ARGS..., as CI runs it (tools/test.sh step 1, sanitizers.sh's ASan and TSan steps):
#
#   tools/dev/ci/bazel_test.sh ARGS...
#
# When the build itself fails (Bazel's exit status 1; a failing test is 3) it prints what the
# machine had left (free disk where Bazel writes, free memory, the kernel's out-of-memory kills)
# and builds and tests once more, one action at a time. A compile error fails the same way twice
# and the step still fails; a compiler killed for memory or disk on a busy machine passes the
# second time, and the log says the first try failed and why it might have. Tests that passed in
# the first try are not run again. Either way the exit status is the last try's.
set -uo pipefail

machine_state() {
  local base
  base="$(bazel info output_base 2>/dev/null || echo "$HOME/.cache/bazel")"
  echo "bazel_test.sh: the machine now:" >&2
  df -h "$base" "${TMPDIR:-/tmp}" 2>&1 | sed 's/^/  /' >&2
  free -m 2>&1 | sed 's/^/  /' >&2
  # Only root may read the kernel's log on Debian; say so rather than nothing.
  local kills
  if kills="$(dmesg 2>/dev/null)"; then
    kills="$(grep -iE 'out of memory|oom-kill|killed process' <<<"$kills" | tail -5)"
    echo "  kernel out-of-memory kills: ${kills:-none}" >&2
  else
    echo "  kernel out-of-memory kills: dmesg cannot be read here" >&2
  fi
}

bazel test "$@"
rc=$?
if [[ $rc != 1 ]]; then
  exit "$rc"
fi
echo "bazel_test.sh: the build failed (bazel exit 1), not a test; building and testing again," \
  "one action at a time (--jobs=1), to tell a real failure from a machine short of memory or disk" >&2
machine_state
# Flags may follow the targets; the last --cache_test_results wins, so a test that passed in the
# first try (under --config=ci's --nocache_test_results too) is not run a second time.
bazel test --jobs=1 "$@" --cache_test_results=auto
rc=$?
if [[ $rc == 0 ]]; then
  echo "bazel_test.sh: the second try passed: the first try's build failure was the machine's" >&2
else
  echo "bazel_test.sh: the second try failed too (exit $rc)" >&2
fi
exit "$rc"
