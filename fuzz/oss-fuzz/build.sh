#!/bin/bash -eu
# Builds clpool's fuzzers for OSS-Fuzz and ClusterFuzzLite (and for a local check), with no Bazel:
# each fuzzer is compiled straight from its sources with the engines' toolchain.
#
# Honours the variables the engines set:
#   CC, CXX                the compilers (clang)
#   CFLAGS, CXXFLAGS       sanitizer and coverage flags (-fsanitize=address,fuzzer-no-link, ...)
#   LIB_FUZZING_ENGINE     what links the engine (-fsanitize=fuzzer, or an AFL/honggfuzz driver)
#   OUT                    where the fuzzers, <fuzzer>_seed_corpus.zip and options go
#   SRC                    the checkout's parent (the repository is found from this script either way)
#
# Local check (what fuzz/README.md documents):
#   CC=clang CXX=clang++ CFLAGS="-fsanitize=address,fuzzer-no-link" \
#   CXXFLAGS="-fsanitize=address,fuzzer-no-link" LIB_FUZZING_ENGINE=-fsanitize=fuzzer \
#   OUT=/tmp/ossfuzz-out bash fuzz/oss-fuzz/build.sh
#
# To add a fuzzer: its clpool_fuzzer() in fuzz/BUILD, a line in FUZZERS below, then run sources.sh
# (it fails on a fuzzer of //fuzz that has no line here).
set -euo pipefail

: "${CC:=clang}" "${CXX:=clang++}" "${CFLAGS:=}" "${CXXFLAGS:=}"
: "${LIB_FUZZING_ENGINE:=-fsanitize=fuzzer}" "${OUT:?OUT must be set}"

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Each fuzzer's repository sources, as Bazel compiles them (fuzz/oss-fuzz/sources.txt, written
# by sources.sh from bazel query; tools/test.sh fails when it is stale). The two generated ones
# are made here: device_model's built-in profiles and the replay page's script.
device_model/embed_profiles.sh "$work/builtin_profiles.cc" device_model/profiles/*.profile
tools/replay/embed_text.sh "$work/html_page_js.cc" clpool::replay_cli html_page_script \
  tools/replay/html_page.js
sources_of() {
  local line
  line="$(grep "^$1: " fuzz/oss-fuzz/sources.txt)" || {
    echo "build.sh: $1 is not in fuzz/oss-fuzz/sources.txt (run fuzz/oss-fuzz/sources.sh)" >&2
    exit 1
  }
  line="${line#*: }"
  line="${line//@builtin_profiles/$work/builtin_profiles.cc}"
  echo "${line//@html_page_js/$work/html_page_js.cc}"
}

# The OpenCL fuzzers link the in-process mockcl runtime: the pool calls the standard entry points
# (clCreateBuffer, ...), which the ICD loader (libOpenCL) forwards through each mockcl handle's
# dispatch table to the runtime: no ICD file, no libmockcl.so.
CL_FLAGS="-DCL_TARGET_OPENCL_VERSION=300 -DCL_USE_DEPRECATED_OPENCL_1_0_APIS \
  -DCL_USE_DEPRECATED_OPENCL_1_1_APIS -DCL_USE_DEPRECATED_OPENCL_1_2_APIS \
  -DCL_USE_DEPRECATED_OPENCL_2_0_APIS"
# The loader goes into $OUT/lib, found through the rpath (the runner image has no libOpenCL).
CL_LIBS="-lOpenCL -pthread -Wl,-rpath,\$ORIGIN/lib"

# Coverage on the pool only for the pool_ops fuzzers (the list says why; fuzz/BUILD does the same).
# Only with SanitizerCoverage (libFuzzer and the like); other engines' clang would ignore it.
POOL_OPS_IGNORE=""
if [[ "$CXXFLAGS" == *fuzzer-no-link* || "$CXXFLAGS" == *sanitize-coverage* ]]; then
  POOL_OPS_IGNORE="-fsanitize-coverage-ignorelist=$repo/fuzz/pool_ops_fuzzer_coverage_ignorelist.inc"
fi

# name | corpus name (fuzz/corpus/<it>, fuzz/regressions/<it>) | extra flags | link flags
FUZZERS=(
  "pool_ops_fuzzer|pool_ops|$POOL_OPS_IGNORE"
  "pool_ops_deep_fuzzer|pool_ops_deep|$POOL_OPS_IGNORE -DCLPOOL_FUZZ_MAX_OPS=512"
  "pool_ops_high_lb_fuzzer|pool_ops_high_lb|$POOL_OPS_IGNORE -DCLPOOL_FUZZ_MIN_LEADING_BITS=9 -DCLPOOL_FUZZ_MAX_LEADING_BITS=12 -DCLPOOL_FUZZ_THROWING_ALLOCATOR"
  "config_parsers_fuzzer|config_parsers|$CL_FLAGS"
  "trace_parsers_fuzzer|trace_parsers|$CL_FLAGS|$CL_LIBS"
  "kernel_signature_fuzzer|kernel_signature|$CL_FLAGS"
  "pool_mockcl_fuzzer|pool_mockcl|$CL_FLAGS|$CL_LIBS"
  "svm_ordering_fuzzer|svm_ordering|$CL_FLAGS|$CL_LIBS"
)

# Compiled per fuzzer (a handful of small files), so flags never leak between fuzzers.
for entry in "${FUZZERS[@]}"; do
  IFS='|' read -r name corpus extra libs <<<"$entry"
  srcs="$(sources_of "$name")"
  objs=()
  for src in $srcs; do
    obj="$work/$name/${src//\//_}.o"
    mkdir -p "$work/$name"
    # shellcheck disable=SC2086
    $CXX $CXXFLAGS -std=c++20 -I"$repo" $extra -c "$src" -o "$obj"
    objs+=("$obj")
  done
  # shellcheck disable=SC2086
  $CXX $CXXFLAGS "${objs[@]}" $LIB_FUZZING_ENGINE $libs -o "$OUT/$name"
  if [[ "$libs" == *-lOpenCL* && ! -e "$OUT/lib/libOpenCL.so.1" ]]; then
    mkdir -p "$OUT/lib"
    # awk reads to the end: exiting at the first match could kill ldconfig with SIGPIPE, which
    # pipefail and set -e turn into a silent stop of the whole script.
    loader=$(ldconfig -p | awk '/libOpenCL\.so\.1 / && !found {print $NF; found = 1}')
    [[ -n "$loader" ]] && cp -L "$loader" "$OUT/lib/libOpenCL.so.1"
  fi

  [[ -f "fuzz/$name.options" ]] && cp "fuzz/$name.options" "$OUT/$name.options"
  seeds=()
  for dir in "fuzz/corpus/$corpus" "fuzz/regressions/$corpus"; do
    [[ -d "$dir" ]] && while IFS= read -r -d '' f; do seeds+=("$f"); done < <(find "$dir" -type f ! -name .gitkeep -print0)
  done
  rm -f "$OUT/${name}_seed_corpus.zip"
  if [[ ${#seeds[@]} -gt 0 ]]; then
    zip -q -j "$OUT/${name}_seed_corpus.zip" "${seeds[@]}"
  fi
  echo "built $OUT/$name (${#seeds[@]} seed inputs)"
done
