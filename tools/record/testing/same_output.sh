#!/bin/sh
# clpool sweep --check: a run is right when it printed what the fault-free run printed.
#   same_output.sh BASELINE_DIR RUN_DIR
exec cmp -s "$1/stdout.txt" "$2/stdout.txt"
