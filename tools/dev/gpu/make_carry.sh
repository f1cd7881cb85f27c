#!/usr/bin/env bash
# Builds what run_on_gpu.sh runs and puts it, with everything else it needs, in one folder to
# bring to a GPU machine (Ubuntu 24.04 with NVIDIA's OpenCL driver but no ICD loader):
#
#   bash tools/dev/gpu/make_carry.sh DEST        # e.g. DEST=../main/.gpu; then, there:
#                                            #   bash DEST/run_on_gpu.sh   (see that file)
#   bash tools/dev/gpu/make_python_carry.sh DEST # adds DEST/python.tar.xz for the step `python`
#
# Binaries are built with -c opt --dynamic_mode=off (only libOpenCL, libbenchmark, libstdc++ and
# glibc stay dynamic; Ubuntu 24.04's libstdc++ and glibc are newer than Debian 12's) and stripped.
# Debian's ICD loader, libbenchmark and libunwind come along in lib/.
set -euo pipefail
cd "$(dirname "$0")/../../.."
[[ $# -eq 1 ]] || { echo "usage: $0 DEST" >&2; exit 2; }
DEST=$1
TARGETS=(
  //tools/probe:clpool_probe
  //tools/probe:clpool_first_use
  //tools/replay:clpool_replay
  //mockcl:libmockcl.so
  //tools/layer:libclpool_layer.so
  //tools/layer/testing:layer_driver
  //tools/layer/testing:layer_bench
  //tools/layer/testing:layer_mockcl_test
  //tools/layer/testing:layer_pocl_test
  //pool/opencl:allocators_test
  //pool/opencl:buffer_pool_test
  //pool/opencl:svm_pool_test
  //pool/opencl:host_pinned_pool_test
  //pool/opencl:pool_front_test
  //pool/opencl:bench
  //mockcl:consistency_check
  //tools/record:clpool
  //examples/oom_sweep:stage
  //examples/oom_sweep:stage_unchecked
)
bazel build -c opt --dynamic_mode=off --jobs="${JOBS:-2}" "${TARGETS[@]}"
BB=$(bazel info -c opt --dynamic_mode=off bazel-bin 2>/dev/null)

# A python.tar.xz made earlier (make_python_carry.sh) is kept; everything else is made anew.
if [[ -f "$DEST/python.tar.xz" ]]; then mv "$DEST/python.tar.xz" "$DEST.python.tar.xz"; fi
rm -rf "$DEST"
mkdir -p "$DEST/bin" "$DEST/lib" "$DEST/data" "$DEST/py"
if [[ -f "$DEST.python.tar.xz" ]]; then mv "$DEST.python.tar.xz" "$DEST/python.tar.xz"; fi
put() { install -m 755 "$1" "$2"; strip --strip-unneeded "$2"; }
put "$BB/tools/probe/clpool_probe" "$DEST/bin/clpool_probe"
put "$BB/tools/probe/clpool_first_use" "$DEST/bin/clpool_first_use"
put "$BB/tools/replay/clpool_replay" "$DEST/bin/clpool_replay"
put "$BB/tools/layer/testing/layer_driver" "$DEST/bin/layer_driver"
put "$BB/tools/layer/testing/layer_bench" "$DEST/bin/layer_bench"
put "$BB/tools/layer/testing/layer_mockcl_test" "$DEST/bin/layer_mockcl_test"
put "$BB/tools/layer/testing/layer_pocl_test" "$DEST/bin/layer_pocl_test"
for t in allocators_test buffer_pool_test svm_pool_test host_pinned_pool_test pool_front_test; do
  put "$BB/pool/opencl/$t" "$DEST/bin/$t"
done
put "$BB/pool/opencl/bench" "$DEST/bin/pool_opencl_bench"
put "$BB/mockcl/consistency_check" "$DEST/bin/consistency_check"
put "$BB/tools/record/clpool" "$DEST/bin/clpool"
# Not stripped: clpool sweep names the program's functions in its report (-rdynamic keeps them).
install -m 755 "$BB/examples/oom_sweep/stage" "$DEST/bin/stage"
install -m 755 "$BB/examples/oom_sweep/stage_unchecked" "$DEST/bin/stage_unchecked"
put "$BB/mockcl/libmockcl.so" "$DEST/lib/libmockcl.so"
put "$BB/tools/layer/libclpool_layer.so" "$DEST/lib/libclpool_layer.so"
for l in libOpenCL.so.1 libbenchmark.so.1debian libunwind.so.8; do
  install -m 644 "$(readlink -f "/usr/lib/x86_64-linux-gnu/$l")" "$DEST/lib/$l"
done
cp tools/replay/examples/pyopencl_layer.trace tools/replay/examples/fragmentation.trace "$DEST/data/"
mkdir -p "$DEST/data/boundary"
cp tools/replay/testdata/boundary/*.trace "$DEST/data/boundary/"
cp device_model/profiles/nvidia.profile "$DEST/data/"
cp tools/dev/gpu/ballast.py tools/dev/gpu/cl_context_cost.py \
  tools/probe/compare_first_use.py tools/replay/compare_trials.py tools/record/compare_sweeps.py \
  "$DEST/py/"
install -m 755 tools/dev/gpu/run_on_gpu.sh "$DEST/run_on_gpu.sh"
git rev-parse HEAD > "$DEST/COMMIT"
git status --porcelain >> "$DEST/COMMIT"
du -sh "$DEST"
