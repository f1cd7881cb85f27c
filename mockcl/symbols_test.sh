#!/bin/bash
# libmockcl.so must export exactly the three ICD entry points and mockcl_* functions: any other
# cl* symbol could bind the mock's own dispatch slots to the loader's functions.
set -euo pipefail
so="$1"
syms="$(nm -D --defined-only "$so" | awk '{print $3}' | sort)"
echo "exported: $syms"
expected_cl="$(printf 'clGetExtensionFunctionAddress\nclGetPlatformInfo\nclIcdGetPlatformIDsKHR')"
actual_cl="$(echo "$syms" | grep '^cl' || true)"
if [[ "$actual_cl" != "$expected_cl" ]]; then
  echo "FAIL: cl* exports are:"; echo "$actual_cl"; exit 1
fi
other="$(echo "$syms" | grep -v '^cl' | grep -v '^mockcl_' || true)"
if [[ -n "$other" ]]; then
  echo "FAIL: unexpected exports:"; echo "$other"; exit 1
fi
for f in mockcl_configure mockcl_reset mockcl_snapshot_json mockcl_object_id; do
  echo "$syms" | grep -qx "$f" || { echo "FAIL: $f not exported"; exit 1; }
done
echo PASS
