#!/usr/bin/env bash
# The scripts that build in another configuration (opt, fuzz) must not move the bazel-bin
# symlink: the READMEs' bazel-bin/... paths name the default build, and after `bazel build
# --config=opt` without --symlink_prefix=/ they would name the opt tree (or nothing there).
# Every `bazel build` or `bazel run` line of the scripts given passes --symlink_prefix=/.
set -u
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh || exit 1  # fail, finish; from the runfiles root
for script in "$@"; do
  while IFS= read -r line; do
    code="${line%%#*}"  # comments may mention bazel build, and messages may
    [[ "$code" =~ ^[[:space:]]*echo[[:space:]] ]] && continue
    [[ "$code" =~ bazel[[:space:]]+(build|run)[[:space:]] ]] || continue
    if [[ "$code" != *"--symlink_prefix=/"* ]]; then
      fail "$script: '$line' moves bazel-bin (add --symlink_prefix=/)"
    fi
  done <"$script"
done
((fails)) || echo "every build keeps bazel-bin"
finish
