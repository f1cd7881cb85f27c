#!/usr/bin/env bash
# Debian's python, whatever python is first on PATH.
set -euo pipefail
exec /usr/bin/python3 "$1" "$2"
