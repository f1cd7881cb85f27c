#!/usr/bin/env bash
# Runs tools/dev/lint/layering_test.py with the system's Python.
exec /usr/bin/python3 "$(dirname "$0")/layering_test.py" -v
