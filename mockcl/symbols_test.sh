#!/bin/bash
# libmockcl.so must export exactly the three ICD entry points and mockcl_* functions: any other
# cl* symbol could bind the mock's own dispatch slots to the loader's functions.
set -euo pipefail
so="$1"
# Global, weak and GNU-unique entries only: a local entry (lowercase type other than u/v/w, such
# as the runtime lock's thread-local token that initial-exec TLS relocations refer to) binds
# nothing outside the library.
syms="$(nm -D --defined-only "$so" | awk '$2 ~ /^[A-Zuvw]$/ {print $3}' | sort)"
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
for f in mockcl_configure mockcl_reset mockcl_snapshot_json mockcl_object_id mockcl_memory_use; do
  grep -qx "$f" <<<"$syms" || { echo "FAIL: $f not exported"; exit 1; }  # no pipe: see clinfo_test.sh
done
echo PASS
