#!/usr/bin/env bash
# Installs clpool to a temporary prefix (tools/install.sh) and uses it from outside the Bazel tree:
# builds tools/install/consumer/consumer.cc with pkg-config and with CMake, links and runs both
# over the installed mockcl ICD, and runs the installed clpool_replay on the mock device; then
# builds a Bazel workspace that uses clpool from source (tools/install/bazel_consumer/). Run by
# tools/test.sh (Bazel cannot run inside a Bazel test). Exit status 0 when everything worked.
set -euo pipefail
source "$(dirname "$0")/dev/testing/test_lib.sh" || exit 1  # fail, die, finish
cd "$(dirname "$0")/.."
repo="$PWD"
work="$(mktemp -d "${TMPDIR:-/tmp}/clpool-install-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

rc=0; bash tools/install.sh --bogus 2>/dev/null || rc=$?
[[ $rc == 2 ]] || die "install.sh --bogus exited $rc, want 2"
rc=0; bash tools/install.sh 2>/dev/null || rc=$?
[[ $rc == 2 ]] || die "install.sh without --prefix exited $rc, want 2"
rc=0; bash tools/install.sh --prefix "$work/x" -c fast 2>/dev/null || rc=$?
[[ $rc == 2 ]] || die "install.sh -c fast exited $rc, want 2"
bash tools/install.sh --help | grep -q -- '--prefix DIR' || die "install.sh --help"
# fastbuild: the outputs step 1 of tools/test.sh (bazel test //...) built; -c opt would rebuild all.
bash tools/install.sh --prefix "$prefix" --compilation-mode fastbuild >"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; die "install.sh"; }
for f in include/clpool/pool/memory_pool.h include/clpool/pool/opencl/buffer_pool.h lib/libclpool.a \
         lib/libclpool_opencl.a lib/pkgconfig/clpool.pc lib/pkgconfig/clpool-opencl.pc \
         lib/cmake/clpool/clpoolConfig.cmake bin/clpool_replay bin/clpool_probe bin/clpool lib/libclpool_layer.so \
         lib/libmockcl.so etc/OpenCL/vendors/mockcl.icd; do
  [[ -s "$prefix/$f" ]] || die "$f not installed"
done
export OCL_ICD_VENDORS="$prefix/etc/OpenCL/vendors"  # only the installed mock

echo "install_test: every installed header compiles alone (-std=c++20)"
cd "$prefix/include"
for h in $(find clpool -name '*.h' | sort); do
  echo "#include <$h>" | g++ -std=c++20 -fsyntax-only -I. -Iclpool -x c++ - || die "$h does not compile alone"
done

echo "install_test: pkg-config"
mkdir -p "$work/pc" && cd "$work/pc"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046  # pkg-config prints a list of flags
g++ -std=c++20 $(pkg-config --cflags clpool-opencl) "$repo/tools/install/consumer/consumer.cc" \
  -o consumer $(pkg-config --libs clpool-opencl) || die "the pkg-config build"
[[ "$(./consumer)" == "consumer: ok" ]] || die "the pkg-config build does not run"

echo "install_test: CMake find_package(clpool)"
cmake -S "$repo/tools/install/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log" >&2; die "cmake configure"; }
cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log" >&2; die "cmake build"; }
[[ "$("$work/cmake/consumer")" == "consumer: ok" ]] || die "the CMake build does not run"

echo "install_test: the installed clpool_replay finds the installed mockcl"
cd "$work"
rc=0
out=$(env -u OCL_ICD_VENDORS "$prefix/bin/clpool_replay" --no-progress "$repo/tools/replay/examples/pyopencl_pocl.trace" \
  --device mockcl --profile exact --capacity 128MiB 2>&1) || rc=$?
[[ $rc == 0 && "$out" == *"device: mockcl"* ]] || { echo "$out" >&2; die "clpool_replay --device mockcl exit $rc"; }
echo "install_test: the installed clpool record finds the installed layer and records the consumer"
rc=0
out=$("$prefix/bin/clpool" record --out "$work/consumer.trace" -- "$work/cmake/consumer" 2>&1) || rc=$?
[[ $rc == 0 && "$out" == *"clpool record: trace $work/consumer.trace"* && "$out" == *"meta.source: layer"* ]] ||
  { echo "$out" >&2; die "clpool record exit $rc"; }
[[ "$out" =~ alloc.buffer:\ [1-9] ]] || { echo "$out" >&2; die "clpool record recorded no buffer"; }
echo "install_test: a Bazel workspace using clpool through local_repository, plain bazel build"
# The recipe of README.md ("Use the library"): no .bazelrc and no build flags (nor ~/.bazelrc;
# Debian's system rc file stays: it says where Bazel is installed); CC unset; its own output
# base, removed with $work.
consumer="$work/bazel_consumer"
mkdir -p "$consumer"
sed "s|/path/to/clpool|$repo|" "$repo/tools/install/bazel_consumer/WORKSPACE.example" >"$consumer/WORKSPACE"
cp "$repo/tools/install/bazel_consumer/BUILD.example" "$consumer/BUILD"
cp "$repo/tools/install/bazel_consumer/app.cc" "$consumer/"
cd "$consumer"
consumer_bazel() { env -u CC -u CXX bazel --nohome_rc --output_base="$work/bazel_out" "$@"; }
trap 'consumer_bazel shutdown >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
# The OpenCL pool too: it needs the system_libs stand-in clpool_dependencies() declared.
consumer_bazel build //:app @clpool//pool/opencl:buffer_pool >"$work/consumer.log" 2>&1 ||
  { tail -30 "$work/consumer.log" >&2; die "bazel build in a workspace using clpool"; }
[[ "$(./bazel-bin/app)" == "bazel consumer: ok" ]] || die "the Bazel consumer does not run"
consumer_bazel shutdown >/dev/null 2>&1 || true
echo "install_test: ok"
