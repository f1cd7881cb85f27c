#!/usr/bin/env bash
# Runs figures_agreement_test.py with Debian's python, whatever python is first on PATH.
set -euo pipefail
exec /usr/bin/python3 "$3" "$1" "$2"
