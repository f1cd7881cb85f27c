#!/usr/bin/env bash
# The arrows of ARCHITECTURE.md that Bazel's visibility cannot express, asked of `bazel query`:
# what a package's libraries and binaries (not its tests) may build on. Visibility already makes a
# tool's libraries private to it and keeps mockcl and the tools away from non-test code of the
# pool and the Python extension; this adds the lower packages, which are public, so that the
# pool core cannot start depending on the device model, or common/ on anything.
# Run from anywhere; exits 1 naming every arrow that points the wrong way. tools/test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
# check NAME FROM FORBIDDEN: no non-test target in FROM depends (transitively) on FORBIDDEN.
check() {
  local name="$1" from="$2" forbidden="$3" found
  found=$(bazel query --noshow_progress --noimplicit_deps \
    "let prod = ($from) - attr(testonly, 1, $from) - tests($from) in deps(\$prod) intersect ($forbidden)" \
    2>/dev/null | grep '^//' || true)
  if [[ -n "$found" ]]; then
    echo "check_layering: $name, yet:" >&2
    for target in $found; do
      bazel query --noshow_progress --noimplicit_deps \
        "somepath(($from) - attr(testonly, 1, $from) - tests($from), $target)" 2>/dev/null | sed 's/^/  /' >&2
      echo "  --" >&2
    done
    status=1
  else
    echo "check_layering: ok: $name"
  fi
}

check "common/ depends on no other clpool package" "//common/..." \
  "//pool/... + //sync/... + //device_model/... + //trace/... + //mockcl/... + //tools/... + //python/... + //layer_api/... + //cl_device/... + //replay/..."
check "sync/ depends on no other clpool package" "//sync/..." \
  "//common/... + //pool/... + //device_model/... + //trace/... + //mockcl/... + //tools/... + //python/..."
check "the pool (core and OpenCL) reaches neither mockcl, the device model, traces nor tools" "//pool/..." \
  "//mockcl/... + //device_model/... + //trace/... + //tools/... + //python/... + //layer_api/... + //cl_device/... + //replay/..."
check "the device model reaches neither the pool, mockcl, traces nor tools" "//device_model/..." \
  "//pool/... + //mockcl/... + //trace/... + //tools/... + //python/... + //replay/..."
check "the trace format reaches neither mockcl nor tools" "//trace/..." \
  "//mockcl/... + //tools/... + //python/... + //device_model/... + //replay/..."
check "the replay engine reaches neither mockcl, OpenCL devices, Python nor tools" "//replay/..." \
  "//mockcl/... + //cl_device/... + //layer_api/... + //python/... + //tools/..."
check "the Python package reaches neither the tools nor mockcl" "//python/..." \
  "//tools/... + //mockcl/..."
check "mockcl reaches neither the pool nor tools" "//mockcl/..." "//pool/... + //tools/... + //python/... + //trace/... + //replay/..."
exit $status
