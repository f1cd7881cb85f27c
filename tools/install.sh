#!/usr/bin/env bash
# Installs clpool outside the repository:
#
#   bash tools/install.sh --prefix DIR [--compilation-mode opt|fastbuild|dbg]
#
# builds with Bazel (--config=opt: -c opt -O2 -DNDEBUG, unless told otherwise) and writes
#   DIR/include/clpool/pool/..., sync/..., common/cl_status.h   the headers, repository paths
#   DIR/lib/libclpool.a           the pool (clpool::pool): memory_pool and what it needs
#   DIR/lib/libclpool_opencl.a    the OpenCL allocators and pools (clpool::opencl); needs libclpool.a
#                                 and the ICD loader (-lOpenCL)
#   DIR/lib/pkgconfig/clpool.pc, clpool-opencl.pc
#   DIR/lib/cmake/clpool/clpoolConfig.cmake      find_package(clpool): clpool::pool, clpool::opencl
#   DIR/bin/clpool_replay, DIR/bin/clpool_probe  the tools
#   DIR/bin/clpool                `clpool record -- PROGRAM`: records PROGRAM through DIR/lib's layer
#   DIR/lib/libclpool_layer.so    the OpenCL layer (OPENCL_LAYERS=DIR/lib/libclpool_layer.so)
#   DIR/lib/libmockcl.so and DIR/etc/OpenCL/vendors/mockcl.icd   the mock OpenCL device
#                                 (OCL_ICD_VENDORS=DIR/etc/OpenCL/vendors)
#
# Include as <clpool/pool/memory_pool.h>; the headers include each other as "pool/...", so both
# -IDIR/include and -IDIR/include/clpool are needed: the .pc and CMake files add both. The headers
# need C++20. tools/install_test.sh installs a fastbuild (the outputs `bazel test //...` already
# built), so that it costs no second build. Exit status: 0 installed, 1 a build or copy failed,
# 2 bad usage.
set -euo pipefail

usage() { sed -n '2,25s/^# \{0,1\}//p' "$0"; }
prefix=""
mode=opt
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --prefix) (($# >= 2)) || { echo "install.sh: --prefix needs a directory" >&2; exit 2; }
      prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    -c | --compilation-mode) (($# >= 2)) || { echo "install.sh: $1 needs opt, fastbuild or dbg" >&2; exit 2; }
      mode="$2"; shift 2 ;;
    *) echo "install.sh: unknown argument '$1' (usage: bash tools/install.sh --prefix DIR)" >&2; exit 2 ;;
  esac
done
[[ -n "$prefix" ]] || { echo "install.sh: --prefix DIR is required" >&2; exit 2; }
[[ "$mode" =~ ^(opt|fastbuild|dbg)$ ]] || { echo "install.sh: compilation mode '$mode' is not opt, fastbuild or dbg" >&2; exit 2; }
[[ -n "${BUILD_WORKING_DIRECTORY:-}" && "$prefix" != /* ]] && prefix="$BUILD_WORKING_DIRECTORY/$prefix"
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
cd "$(dirname "$0")/.."

pool_libs=(//pool:memory_pool)
opencl_libs=(//pool/opencl:buffer_pool //pool/opencl:svm_pool //pool/opencl:host_pinned_pool //pool/opencl:queue_sync)
tools=(//tools/replay:clpool_replay //tools/probe:clpool_probe //tools/record:clpool //tools/layer:libclpool_layer.so //mockcl:libmockcl.so)

# The repository's cc_library targets (and source files) under a set of roots.
q() { bazel query --noshow_progress "$1" 2>/dev/null | grep '^//' | sort; }
pool_set=$(q "kind(cc_library, deps(set(${pool_libs[*]})))")
all_set=$(q "kind(cc_library, deps(set(${pool_libs[*]} ${opencl_libs[*]})))")
opencl_set=$(comm -23 <(echo "$all_set") <(echo "$pool_set"))
headers=$(q "kind('source file', deps(set(${pool_libs[*]} ${opencl_libs[*]})))" | grep '\.h$')

flags=(-c "$mode")
[[ "$mode" == opt ]] && flags=(--config=opt)  # .bazelrc's opt: -c opt -O2 -DNDEBUG, as the benchmarks
echo "install.sh: building (${flags[*]})" >&2
# shellcheck disable=SC2086  # the label lists are newline-separated words
# --symlink_prefix=/: bazel-bin keeps pointing at the default build (the READMEs' paths).
bazel build "${flags[@]}" --symlink_prefix=/ --noshow_progress $all_set "${tools[@]}"
bin="$(bazel info "${flags[@]}" bazel-bin 2>/dev/null)"

mkdir -p "$prefix/include/clpool" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/clpool" "$prefix/bin" \
  "$prefix/etc/OpenCL/vendors"
for h in $headers; do  # //pool/opencl:cl_error.h -> pool/opencl/cl_error.h
  path="${h#//}"; path="${path/://}"
  install -D -m 644 "$path" "$prefix/include/clpool/$path"
done

# One static archive per part, from the archives Bazel made for each cc_library (header-only
# libraries have none). ar's MRI script merges them without unpacking (object names may repeat).
archive() {
  local out="$1" script="create $1"$'\n' label pkg name found=0
  shift
  for label in "$@"; do
    pkg="${label#//}"; pkg="${pkg%%:*}"; name="${label##*:}"
    for a in "$bin/$pkg/lib$name.a" "$bin/$pkg/lib$name.pic.a"; do
      if [[ -f "$a" ]]; then script+="addlib $a"$'\n'; found=1; break; fi
    done
  done
  ((found)) || { echo "install.sh: no archive for $out" >&2; exit 1; }
  rm -f "$out"
  printf '%ssave\nend\n' "$script" | ar -M
  ranlib "$out"
}
# shellcheck disable=SC2086
archive "$prefix/lib/libclpool.a" $pool_set
# shellcheck disable=SC2086
archive "$prefix/lib/libclpool_opencl.a" $opencl_set

install -m 755 "$bin/tools/replay/clpool_replay" "$bin/tools/probe/clpool_probe" "$bin/tools/record/clpool" \
  "$prefix/bin/"
install -m 755 "$bin/tools/layer/libclpool_layer.so" "$bin/mockcl/libmockcl.so" "$prefix/lib/"
echo "$prefix/lib/libmockcl.so" >"$prefix/etc/OpenCL/vendors/mockcl.icd"

version=0.1.0
cat >"$prefix/lib/pkgconfig/clpool.pc" <<PC
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: clpool
Description: clpool: a binned memory pool for GPU (OpenCL) buffers; C++20
Version: $version
Cflags: -I\${includedir} -I\${includedir}/clpool
Libs: -L\${libdir} -lclpool -pthread
PC
cat >"$prefix/lib/pkgconfig/clpool-opencl.pc" <<PC
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: clpool-opencl
Description: clpool's OpenCL buffer, SVM and host-pinned pools; C++20
Version: $version
Requires: clpool OpenCL
Cflags: -I\${includedir} -I\${includedir}/clpool
Libs: -L\${libdir} -lclpool_opencl
PC
cp tools/install/clpoolConfig.cmake "$prefix/lib/cmake/clpool/clpoolConfig.cmake"
sed "s/@VERSION@/$version/" tools/install/clpoolConfigVersion.cmake.in \
  >"$prefix/lib/cmake/clpool/clpoolConfigVersion.cmake"
echo "install.sh: installed clpool $version in $prefix" >&2
