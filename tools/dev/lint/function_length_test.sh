#!/usr/bin/env bash
# Runs tools/dev/lint/function_length_test.py with the system's Python.
exec /usr/bin/python3 "$(dirname "$0")/function_length_test.py" -v
