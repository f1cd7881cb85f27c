#!/usr/bin/env bash
# clpeak's kernel launch latency on POCL and through mockcl backed by POCL, interleaved, RUNS of
# each (default 8), so both meet the same load. Prints every pair with the load average, then each
# side's minimum and median and the ratio of the medians (issue 43's target: at most 1.5).
#
#   tools/dev/real_programs/launch_latency.sh LIBMOCKCL_SO [RUNS]
#
# MOCKCL_DEVICES (default gpu-1g) picks the mock's device. Exit 0 when every run printed a figure,
# 1 when one did not, 2 on bad arguments; "skipped" (exit 0) without clpeak or POCL.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
so="${1:-}"
runs="${2:-8}"
[[ -f "$so" ]] || { echo "launch_latency.sh: no libmockcl.so at '$so'" >&2; exit 2; }
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "launch_latency.sh: RUNS '$runs' is not a positive number" >&2; exit 2; }
command -v clpeak >/dev/null || { echo "skipped: clpeak not installed (apt-get install -y clpeak)"; exit 0; }
[[ -f /etc/OpenCL/vendors/pocl.icd ]] || { echo "skipped: pocl-opencl-icd not installed"; exit 0; }
# shellcheck source=tools/dev/testing/test_lib.sh
source "$here/../testing/test_lib.sh"  # mockcl_icd
# shellcheck source=tools/dev/real_programs/programs.sh
source "$here/programs.sh"  # clpeak_figure, which reads $out/NAME.out
out="$(mktemp -d "${TMPDIR:-/tmp}/launch_latency.XXXXXX")"
trap 'rm -rf "$out"' EXIT
mockcl_icd "$out/vendors-mock" "$so"
# latency VENDORS [VAR=VALUE...]: one clpeak --kernel-latency run; prints its figure in us.
latency() {
  local vendors="$1"
  shift
  env OCL_ICD_VENDORS="$vendors" "$@" clpeak --kernel-latency >"$out/run.out" 2>&1 || true
  clpeak_figure run 'Kernel launch latency'
}
pocl=() mock=()
echo "run  POCL (us)  mockcl (us)  load"
for ((i = 1; i <= runs; i++)); do
  p="$(latency /etc/OpenCL/vendors/pocl.icd)"
  m="$(latency "$out/vendors-mock/mockcl.icd" MOCKCL_BACKING=pocl "MOCKCL_DEVICES=${MOCKCL_DEVICES:-gpu-1g}")"
  [[ -n "$p" && -n "$m" ]] || { echo "launch_latency.sh: run $i printed no figure (POCL '$p', mockcl '$m')" >&2; exit 1; }
  pocl+=("$p") mock+=("$m")
  printf '%3d  %9s  %11s  %s\n' "$i" "$p" "$m" "$(cut -d' ' -f1 /proc/loadavg)"
done
/usr/bin/python3 - "${pocl[*]}" "${mock[*]}" <<'PY'
import statistics, sys
p = [float(x) for x in sys.argv[1].split()]
m = [float(x) for x in sys.argv[2].split()]
print(f"POCL   min {min(p):.2f} us, median {statistics.median(p):.2f} us")
print(f"mockcl min {min(m):.2f} us, median {statistics.median(m):.2f} us")
print(f"ratio of medians {statistics.median(m) / statistics.median(p):.2f}, of minimums {min(m) / min(p):.2f}")
PY
