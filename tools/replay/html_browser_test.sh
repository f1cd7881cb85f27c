#!/usr/bin/env bash
# Runs html_browser_test.py with Debian's python (which has selenium), whatever python is first
# on PATH.
set -euo pipefail
exec /usr/bin/python3 "$3" "$1" "$2"
