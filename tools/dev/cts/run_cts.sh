#!/usr/bin/env bash
# Builds a subset of the Khronos OpenCL conformance tests (OpenCL-CTS) from a checkout the user
# provides and runs it on POCL alone and on mockcl alone (backed by POCL), one subtest per
# process, then prints passed / failed / not supported per binary and device, writes a TSV with
# one row per subtest and device, and lists the subtests POCL passes and mockcl does not.
# See tools/dev/cts/README.md. Without CTS sources it prints one "skipped" line and exits 0.
set -euo pipefail

# The CTS commit the figures in mockcl/README.md were measured with: the newest tag that builds
# against Debian 12's opencl-headers (3.0~2023.02.06).
readonly MEASURED_COMMIT=85c95297ac3f83ad69e85f581b576187fed3ca17
readonly MEASURED_TAG=v2023-05-16-00
readonly ALL_TESTS=api,buffers,basic,allocations,events,profiling,mem_host_flags,svm,compiler,cl_get_info,cl_read_write_images,cl_copy_images,cl_fill_images,kernel_image_methods,samplerless_reads,image_streams
# The binaries under test_conformance/images take a size mode and an image-format filter on
# their command line; without one they try random sizes of every format for hours.
readonly IMAGE_TESTS=cl_get_info,cl_read_write_images,cl_copy_images,cl_fill_images,kernel_image_methods,samplerless_reads,image_streams
readonly DEFAULT_IMAGE_ARGS="small_images"

usage() {
  cat <<EOF
Usage: tools/dev/cts/run_cts.sh [options]

Builds OpenCL-CTS binaries (test_NAME for each NAME in --tests) with CMake (Debian's OpenCL
headers and ocl-icd's libOpenCL) and runs every subtest, one per process, on POCL alone and on
mockcl alone (MOCKCL_BACKING=pocl). Prints a table per binary and device and writes RESULTS:
OUT/results.tsv (binary, subtest, device, result, seconds).

Options:
  --cts-src DIR     an OpenCL-CTS checkout (default: \$CLPOOL_CTS_SRC). Neither given, or DIR
                    absent: prints "run_cts.sh: skipped: ..." and exits 0. Measured with
                    $MEASURED_TAG ($MEASURED_COMMIT); get it with
                    git clone https://github.com/KhronosGroup/OpenCL-CTS DIR &&
                    git -C DIR checkout $MEASURED_TAG
  --out DIR         build and results directory (default: /tmp/clpool-cts)
  --tests LIST      comma-separated binaries, each one of
                    $ALL_TESTS
                    (default: all of them)
  --image-args ARGS what the image binaries ($IMAGE_TESTS)
                    get before the subtest name (default: "$DEFAULT_IMAGE_ARGS"; test_image_streams
                    also gets CL_FILTER_NEAREST); e.g. "small_images CL_RGBA CL_UNORM_INT8"
  --device WHICH    pocl, mockcl or both (default: both)
  --subtests LIST   comma-separated subtest names to run (default: every subtest of each binary)
  --timeout SEC     limit per subtest (default: 600)
  --budget SEC      limit per binary and device; subtests not started by then are "not_run"
                    (default: 1800)
  --mockcl-devices SPEC   MOCKCL_DEVICES for the mockcl run (default: gpu-1g)
  --mockcl-so PATH  the mock ICD (default: bazel-bin/mockcl/libmockcl.so, built if missing)
  --call-log        write mockcl's MOCKCL_CALL_LOG per subtest beside its log
  --jobs N          build parallelism (default: 2)
  --strict          exit 1 if a subtest POCL passes does not pass on mockcl
  -h, --help        this text

Memory: POCL's device is the host, and test_allocations fills most of what a device reports,
so every run (POCL alone and mockcl's backing) has POCL_MEMORY_LIMIT=\$CLPOOL_CTS_POCL_GB
(default 2, in GiB) and each subtest runs under timeout(1).

Exit status: 0 measured (or skipped), 1 build failure (or --strict with a difference),
2 bad usage.
EOF
}

die_usage() {
  echo "run_cts.sh: $*" >&2
  echo "run_cts.sh: see tools/dev/cts/run_cts.sh --help" >&2
  exit 2
}

need_value() {  # flag, remaining argument count
  [[ "$2" -ge 2 ]] || die_usage "$1 needs a value"
}

is_uint() { [[ "$1" =~ ^[0-9]+$ ]] && [[ "$1" -gt 0 ]]; }

repo_root="$(cd "$(dirname "$0")/../../.." && pwd)"
# shellcheck source=tools/dev/testing/test_lib.sh
source "$repo_root/tools/dev/testing/test_lib.sh"  # mockcl_icd
cts_src="${CLPOOL_CTS_SRC:-}"
out=/tmp/clpool-cts
tests=$ALL_TESTS
device=both
subtests=""
image_args="$DEFAULT_IMAGE_ARGS"
timeout_s=600
budget_s=1800
mock_devices=gpu-1g
mock_so="$repo_root/bazel-bin/mockcl/libmockcl.so"
call_log=0
jobs=2
strict=0
pocl_gb="${CLPOOL_CTS_POCL_GB:-2}"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --cts-src) need_value "$1" $#; cts_src="$2"; shift 2 ;;
    --out) need_value "$1" $#; out="$2"; shift 2 ;;
    --tests) need_value "$1" $#; tests="$2"; shift 2 ;;
    --device) need_value "$1" $#; device="$2"; shift 2 ;;
    --subtests) need_value "$1" $#; subtests="$2"; shift 2 ;;
    --image-args) need_value "$1" $#; image_args="$2"; shift 2 ;;
    --timeout) need_value "$1" $#; timeout_s="$2"; shift 2 ;;
    --budget) need_value "$1" $#; budget_s="$2"; shift 2 ;;
    --mockcl-devices) need_value "$1" $#; mock_devices="$2"; shift 2 ;;
    --mockcl-so) need_value "$1" $#; mock_so="$2"; shift 2 ;;
    --call-log) call_log=1; shift ;;
    --jobs) need_value "$1" $#; jobs="$2"; shift 2 ;;
    --strict) strict=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die_usage "unknown argument '$1'" ;;
  esac
done

case "$device" in
  pocl) devices=(pocl) ;;
  mockcl) devices=(mockcl) ;;
  both) devices=(pocl mockcl) ;;
  *) die_usage "--device '$device' is not pocl, mockcl or both" ;;
esac
IFS=, read -r -a test_list <<<"$tests"
[[ ${#test_list[@]} -gt 0 ]] || die_usage "--tests is empty"
for t in "${test_list[@]}"; do
  [[ ",$ALL_TESTS," == *",$t,"* ]] || die_usage "--tests: '$t' is not one of $ALL_TESTS"
done
is_uint "$timeout_s" || die_usage "--timeout '$timeout_s' is not a positive number of seconds"
is_uint "$budget_s" || die_usage "--budget '$budget_s' is not a positive number of seconds"
is_uint "$jobs" || die_usage "--jobs '$jobs' is not a positive number"
is_uint "$pocl_gb" || die_usage "CLPOOL_CTS_POCL_GB '$pocl_gb' is not a positive number of GiB"
[[ -n "$out" ]] || die_usage "--out is empty"
for a in $image_args; do
  [[ "$a" =~ ^[A-Za-z0-9_]+$ ]] || die_usage "--image-args: '$a' is not a CTS image option"
done

if [[ -z "$cts_src" ]]; then
  echo "run_cts.sh: skipped: no OpenCL-CTS sources (give --cts-src DIR or set CLPOOL_CTS_SRC)"
  exit 0
fi
if [[ ! -e "$cts_src" ]]; then
  echo "run_cts.sh: skipped: no OpenCL-CTS sources at '$cts_src'"
  exit 0
fi
if [[ ! -f "$cts_src/CMakeLists.txt" || ! -d "$cts_src/test_conformance" ]]; then
  die_usage "'$cts_src' is not an OpenCL-CTS checkout (no CMakeLists.txt and test_conformance/)"
fi
cts_src="$(cd "$cts_src" && pwd)"

# Which CTS this is: the figures are only comparable with the measured commit.
if commit="$(git -C "$cts_src" rev-parse HEAD 2>/dev/null)"; then
  if [[ "$commit" != "$MEASURED_COMMIT" ]]; then
    echo "run_cts.sh: warning: CTS checkout is $commit; mockcl/README.md's figures are for" \
      "$MEASURED_TAG ($MEASURED_COMMIT)" >&2
  fi
else
  commit=unknown
  echo "run_cts.sh: warning: '$cts_src' is not a git checkout, so its commit is unknown;" \
    "mockcl/README.md's figures are for $MEASURED_TAG ($MEASURED_COMMIT)" >&2
fi
echo "run_cts.sh: CTS $cts_src (commit $commit)"

for f in /usr/include/CL/cl.h /usr/lib/x86_64-linux-gnu/libOpenCL.so; do
  [[ -e "$f" ]] || { echo "run_cts.sh: $f missing: install opencl-headers and" \
    "ocl-icd-opencl-dev (bash tools/setup.sh)" >&2; exit 1; }
done
command -v cmake >/dev/null || { echo "run_cts.sh: cmake missing (bash tools/setup.sh)" >&2; exit 1; }

# --- Build ---------------------------------------------------------------------------------
mkdir -p "$out/build"
out="$(cd "$out" && pwd)"
build="$out/build"
targets=()
for t in "${test_list[@]}"; do targets+=("test_$t"); done
echo "run_cts.sh: building ${targets[*]} in $build (log: $out/build.log)"
# GCC 12 sees a size it cannot bound in test_mem_host_flags (C_host_memory_block.h) and the CTS
# builds with -Werror: that one warning stays a warning.
if ! { cmake -S "$cts_src" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="-Wno-error=alloc-size-larger-than=" \
  -DCL_INCLUDE_DIR=/usr/include -DCL_LIB_DIR=/usr/lib/x86_64-linux-gnu \
  -DOPENCL_LIBRARIES=OpenCL && cmake --build "$build" -j "$jobs" --target "${targets[@]}"; } \
  >"$out/build.log" 2>&1; then
  tail -20 "$out/build.log" >&2
  echo "run_cts.sh: build failed (log: $out/build.log)" >&2
  exit 1
fi

# --- Devices: each run sees exactly one ICD -----------------------------------------------
pocl_icd=/etc/OpenCL/vendors/pocl.icd
[[ -f "$pocl_icd" ]] || { echo "run_cts.sh: $pocl_icd missing (install pocl-opencl-icd)" >&2; exit 1; }
mkdir -p "$out/vendors/pocl" "$out/vendors/mockcl"
cp "$pocl_icd" "$out/vendors/pocl/pocl.icd"
if [[ " ${devices[*]} " == *" mockcl "* ]]; then
  if [[ ! -f "$mock_so" ]]; then
    echo "run_cts.sh: building //mockcl:libmockcl.so"
    (cd "$repo_root" && bazel build //mockcl:libmockcl.so) >"$out/bazel.log" 2>&1 ||
      { tail -20 "$out/bazel.log" >&2; echo "run_cts.sh: bazel build failed" >&2; exit 1; }
  fi
  mockcl_icd "$out/vendors/mockcl" "$mock_so"
fi

# Runs "$@" with the environment of device $1 (the rest is the command).
with_device() {
  local dev="$1"
  shift
  local -a env=(OCL_ICD_VENDORS="$out/vendors/$dev" OCL_ICD_PLATFORM_SORT=none
    POCL_MEMORY_LIMIT="$pocl_gb")
  if [[ "$dev" == mockcl ]]; then
    env+=(MOCKCL_BACKING=pocl MOCKCL_DEVICES="$mock_devices")
    [[ -n "${CALL_LOG_FILE:-}" ]] && env+=(MOCKCL_CALL_LOG="$CALL_LOG_FILE")
  fi
  env "${env[@]}" "$@"
}

# The subtest names a binary lists under "Test names" in its --help.
list_subtests() {
  "$1" --help 2>&1 | awk '/^Test names/ { on = 1; next } on && /^\t[^ \t]+$/ { sub(/^\t/, ""); print }'
}

# --- Run -----------------------------------------------------------------------------------
tsv="$out/results.tsv"
printf 'binary\tsubtest\tdevice\tresult\tseconds\n' >"$tsv"
for t in "${test_list[@]}"; do
  # test_NAME lies under test_conformance/NAME or, for the image binaries, deeper.
  bin="$(find "$build/test_conformance" -type f -name "test_$t" -perm -u+x -print -quit)"
  [[ -n "$bin" ]] || { echo "run_cts.sh: test_$t was not built" >&2; exit 1; }
  extra=()
  if [[ ",$IMAGE_TESTS," == *",$t,"* ]]; then
    read -r -a extra <<<"$image_args"
    [[ "$t" == image_streams ]] && extra+=(CL_FILTER_NEAREST)
  fi
  mapfile -t names < <(list_subtests "$bin")
  if [[ -n "$subtests" ]]; then
    chosen=()
    for n in "${names[@]}"; do
      [[ ",$subtests," == *",$n,"* ]] && chosen+=("$n")
    done
    names=("${chosen[@]+"${chosen[@]}"}")
  fi
  [[ ${#names[@]} -gt 0 ]] || { echo "run_cts.sh: test_$t: no subtests to run"; continue; }
  for dev in "${devices[@]}"; do
    logs="$out/logs/$dev/test_$t"
    mkdir -p "$logs"
    start=$SECONDS
    echo "run_cts.sh: test_$t on $dev: ${#names[@]} subtests"
    for n in "${names[@]}"; do
      if ((SECONDS - start >= budget_s)); then
        printf 'test_%s\t%s\t%s\tnot_run\t0\n' "$t" "$n" "$dev" >>"$tsv"
        continue
      fi
      json="$logs/$n.json"
      rm -f "$json"
      CALL_LOG_FILE=""
      if [[ "$call_log" == 1 ]]; then CALL_LOG_FILE="$logs/$n.calls.jsonl"; rm -f "$CALL_LOG_FILE"; fi
      t0=$SECONDS
      rc=0
      (cd "$logs" && CL_CONFORMANCE_RESULTS_FILENAME="$json" \
        with_device "$dev" timeout -k 10 "$timeout_s" "$bin" "${extra[@]+"${extra[@]}"}" "$n") >"$logs/$n.log" 2>&1 || rc=$?
      # The harness writes {"results": {"NAME": "pass|fail|skip"}} when it finishes.
      result="$(sed -n "s/^[[:space:]]*\"$n\": \"\\(pass\\|fail\\|skip\\)\".*/\\1/p" "$json" 2>/dev/null || true)"
      if [[ -z "$result" ]]; then
        if [[ $rc == 124 || $rc == 137 ]]; then result=timeout; else result="crash"; fi
      fi
      printf 'test_%s\t%s\t%s\t%s\t%d\n' "$t" "$n" "$dev" "$result" $((SECONDS - t0)) >>"$tsv"
    done
  done
done

# --- Report --------------------------------------------------------------------------------
echo
echo "Results ($tsv): pass / fail / skip (not supported) / crash / timeout / not_run"
awk -F'\t' 'NR > 1 { k = $1 "\t" $3; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
    c[k, $4]++; secs[k] += $5 }
  END { printf "%-18s %-7s %5s %5s %5s %6s %8s %8s %7s\n", "binary", "device", "pass", "fail",
          "skip", "crash", "timeout", "not_run", "seconds"
        for (i = 1; i <= n; i++) { k = order[i]; split(k, p, "\t")
          printf "%-18s %-7s %5d %5d %5d %6d %8d %8d %7d\n", p[1], p[2], c[k, "pass"],
            c[k, "fail"], c[k, "skip"], c[k, "crash"], c[k, "timeout"], c[k, "not_run"], secs[k] } }' \
  "$tsv"

differences=0
if [[ " ${devices[*]} " == *" pocl "* && " ${devices[*]} " == *" mockcl "* ]]; then
  diff_file="$out/differences.tsv"
  awk -F'\t' 'NR > 1 { r[$1 "\t" $2, $3] = $4; if (!(($1 "\t" $2) in seen)) { seen[$1 "\t" $2] = 1
      order[++n] = $1 "\t" $2 } }
    END { for (i = 1; i <= n; i++) { k = order[i]
      if (r[k, "pocl"] == "pass" && r[k, "mockcl"] != "pass") print k "\t" r[k, "mockcl"] } }' \
    "$tsv" >"$diff_file.all"
  # A subtest the budget left unrun on mockcl is not compared, not a difference.
  grep -v $'\tnot_run$' "$diff_file.all" >"$diff_file" || true
  differences=$(wc -l <"$diff_file")
  echo
  echo "Subtests POCL passes and mockcl does not: $differences ($diff_file)"
  sed 's/^/  /' "$diff_file"
  uncompared=$(($(wc -l <"$diff_file.all") - differences))
  if [[ "$uncompared" -gt 0 ]]; then
    echo "Not compared (POCL passed, the --budget left them unrun on mockcl): $uncompared"
  fi
  rm -f "$diff_file.all"
fi
if [[ "$strict" == 1 && "$differences" -gt 0 ]]; then
  exit 1
fi
exit 0
