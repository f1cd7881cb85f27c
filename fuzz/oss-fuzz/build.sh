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

# The device model (the pool's fake device, mockcl's devices and the layer's budget all count
# bytes with it); its built-in profiles are generated into the work directory.
device_model/embed_profiles.sh "$work/builtin_profiles.cc" device_model/profiles/*.profile
MODEL_SRCS="common/byte_size.cc common/cl_status.cc device_model/profile.cc device_model/device_memory.cc \
  $work/builtin_profiles.cc"

# The pool library's compiled sources; everything else it needs is header-only.
POOL_SRCS="pool/errors.cc pool/pool_types.cc sync/process_barrier.cc $MODEL_SRCS"

# The OpenCL pool code and the in-process mockcl runtime (fuzzers 2 and 3). The pool calls the
# standard entry points (clCreateBuffer, ...), which the ICD loader (libOpenCL) forwards through each
# mockcl handle's dispatch table to the in-process runtime: no ICD file, no libmockcl.so.
OPENCL_POOL_SRCS="pool/opencl/buffer_allocators.cc pool/opencl/cl_error.cc pool/opencl/cl_object.cc \
  pool/opencl/host_pinned_allocator.cc pool/opencl/queue_sync.cc pool/opencl/svm_allocator.cc"
MOCKCL_CONFIG_SRCS="mockcl/config/config_devices.cc mockcl/config/config_env.cc mockcl/config/config_faults.cc \
  mockcl/config/config_schedule.cc mockcl/config/config_values.cc"
MOCKCL_SRCS="$MOCKCL_CONFIG_SRCS mockcl/api/entry_points.cc mockcl/runtime/snapshot.cc mockcl/runtime/host_memory.cc \
  mockcl/api/api_context.cc mockcl/api/api_enqueue.cc mockcl/api/api_event.cc mockcl/api/api_memory.cc \
  mockcl/api/api_platform.cc mockcl/api/api_program.cc mockcl/api/api_queue.cc mockcl/api/api_svm.cc \
  mockcl/runtime/call_log.cc mockcl/runtime/reports.cc mockcl/api/dispatch.cc mockcl/runtime/fault_injector.cc mockcl/runtime/free_records.cc mockcl/runtime/maps.cc mockcl/runtime/runtime.cc mockcl/runtime/scheduler.cc \
  mockcl/runtime/control.cc"
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

# name | corpus name (fuzz/corpus/<it>, fuzz/regressions/<it>) | sources | extra flags | link flags
FUZZERS=(
  "pool_ops_fuzzer|pool_ops|fuzz/pool_ops_fuzzer.cc $POOL_SRCS|$POOL_OPS_IGNORE"
  "pool_ops_deep_fuzzer|pool_ops_deep|fuzz/pool_ops_fuzzer.cc $POOL_SRCS|$POOL_OPS_IGNORE -DCLPOOL_FUZZ_MAX_OPS=512"
  "pool_ops_high_lb_fuzzer|pool_ops_high_lb|fuzz/pool_ops_fuzzer.cc $POOL_SRCS|$POOL_OPS_IGNORE -DCLPOOL_FUZZ_MIN_LEADING_BITS=9 -DCLPOOL_FUZZ_MAX_LEADING_BITS=12 -DCLPOOL_FUZZ_THROWING_ALLOCATOR"
  "config_parsers_fuzzer|config_parsers|fuzz/config_parsers_fuzzer.cc $MOCKCL_CONFIG_SRCS mockcl/api/entry_points.cc layer_api/layer_settings.cc $MODEL_SRCS|"
  "trace_parsers_fuzzer|trace_parsers|fuzz/trace_parsers_fuzzer.cc trace/trace_event.cc trace/trace_reader.cc trace/trace_reader_event.cc trace/trace_writer.cc trace/rmm_import.cc common/output_file.cc|"
  "pool_mockcl_fuzzer|pool_mockcl|fuzz/pool_mockcl_fuzzer.cc $POOL_SRCS $OPENCL_POOL_SRCS $MOCKCL_SRCS|$CL_FLAGS|$CL_LIBS"
  "svm_ordering_fuzzer|svm_ordering|fuzz/svm_ordering_fuzzer.cc pool/opencl/testing/command_order.cc $POOL_SRCS $OPENCL_POOL_SRCS $MOCKCL_SRCS|$CL_FLAGS|$CL_LIBS"
)

# Compiled per fuzzer (a handful of small files), so flags never leak between fuzzers.
for entry in "${FUZZERS[@]}"; do
  IFS='|' read -r name corpus srcs extra libs <<<"$entry"
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
