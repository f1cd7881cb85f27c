#!/usr/bin/env bash
# Fails on any tracked file its formatter or linter would change or flag (tools/test.sh, step 1b):
#   C and C++    clang-format-14 with .clang-format
#   Python       black 23 (pyproject.toml: 100 columns; the example programs keep their layout)
#                flake8 5 (.flake8: pyflakes' checks and pycodestyle's)
# Fix what it names: clang-format-14 -i FILE; black FILE; then what flake8 still says.
# From the repository's root; Debian's clang-format-14, black and flake8 (tools/setup.sh).
set -uo pipefail
cd "$(git rev-parse --show-toplevel)" || exit 2
fails=0
echo "check_format: C and C++ (clang-format-14)" >&2
git ls-files -z '*.c' '*.cc' '*.h' '*.cpp' | xargs -0 clang-format-14 --style=file --dry-run -Werror || fails=1
echo "check_format: Python (black)" >&2
git ls-files -z '*.py' | xargs -0 black --quiet --check || fails=1
echo "check_format: Python (flake8)" >&2
git ls-files -z '*.py' | xargs -0 flake8 || fails=1
if ((fails)); then
  echo "check_format: FAILED: format the files named above (clang-format-14 -i FILE; black FILE)" >&2
  exit 1
fi
echo "check_format: every file formatted and clean" >&2
