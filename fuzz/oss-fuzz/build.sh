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
# To add a fuzzer, add a line to FUZZERS below (and its clpool_fuzzer() in fuzz/BUILD).
set -euo pipefail

: "${CC:=clang}" "${CXX:=clang++}" "${CFLAGS:=}" "${CXXFLAGS:=}"
: "${LIB_FUZZING_ENGINE:=-fsanitize=fuzzer}" "${OUT:?OUT must be set}"

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The pool library's compiled sources; everything else it needs is header-only.
POOL_SRCS="pool/errors.cc pool/pool_types.cc"

# name | corpus name (fuzz/corpus/<it>, fuzz/regressions/<it>) | sources | extra flags
FUZZERS=(
  "pool_ops_fuzzer|pool_ops|fuzz/pool_ops_fuzzer.cc $POOL_SRCS|"
  "pool_ops_high_lb_fuzzer|pool_ops_high_lb|fuzz/pool_ops_fuzzer.cc $POOL_SRCS|-DCLPOOL_FUZZ_MIN_LEADING_BITS=9 -DCLPOOL_FUZZ_MAX_LEADING_BITS=12"
  "config_parsers_fuzzer|config_parsers|fuzz/config_parsers_fuzzer.cc mockcl/config.cc mockcl/entry_points.cc tools/layer/layer_settings.cc|"
  "trace_parsers_fuzzer|trace_parsers|fuzz/trace_parsers_fuzzer.cc tools/trace/trace_event.cc tools/trace/trace_reader.cc tools/trace/trace_writer.cc tools/trace/rmm_import.cc|"
)

# Compiled per fuzzer (a handful of small files), so flags never leak between fuzzers.
for entry in "${FUZZERS[@]}"; do
  IFS='|' read -r name corpus srcs extra <<<"$entry"
  objs=()
  for src in $srcs; do
    obj="$work/$name/${src//\//_}.o"
    mkdir -p "$work/$name"
    # shellcheck disable=SC2086
    $CXX $CXXFLAGS -std=c++20 -I"$repo" $extra -c "$src" -o "$obj"
    objs+=("$obj")
  done
  # shellcheck disable=SC2086
  $CXX $CXXFLAGS "${objs[@]}" $LIB_FUZZING_ENGINE -o "$OUT/$name"

  seeds=()
  for dir in "fuzz/corpus/$corpus" "fuzz/regressions/$corpus"; do
    [[ -d "$dir" ]] && while IFS= read -r -d '' f; do seeds+=("$f"); done < <(find "$dir" -type f -print0)
  done
  rm -f "$OUT/${name}_seed_corpus.zip"
  if [[ ${#seeds[@]} -gt 0 ]]; then
    zip -q -j "$OUT/${name}_seed_corpus.zip" "${seeds[@]}"
  fi
  echo "built $OUT/$name (${#seeds[@]} seed inputs)"
done
