#!/usr/bin/env bash
# The READMEs' commands run Python as /usr/bin/python3 (Debian's, with PyOpenCL), never a bare
# `python3`, which is whatever comes first on PATH: a pyenv or virtualenv python without PyOpenCL
# records nothing. Checks every shell block (```sh, ```bash, ```) of the files given.
set -u
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh || exit 1  # fail, finish; from the runfiles root
for f in "$@"; do
  awk -v F="$f" '
    /^```/ {
      if (inside) { inside = 0; next }
      inside = 1
      lang = substr($0, 4)
      gsub(/[[:space:]]/, "", lang)
      shell = lang == "" || lang == "sh" || lang == "bash" || lang == "shell" || lang == "console"
      next
    }
    inside && shell {
      line = $0
      sub(/#.*/, "", line)
      if (line ~ /(^|[[:space:]]|;|\(|`)python3([[:space:]]|$)/) { print "FAIL: " F ":" FNR ": bare python3: " $0; bad = 1 }
    }
    END { exit bad }
  ' "$f" || fail "$f: a shell block runs a bare python3 (lines above)"
done
((fails)) || echo "every README names /usr/bin/python3"
finish
