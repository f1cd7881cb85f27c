#!/usr/bin/env bash
# Runs a real OpenCL program (a Debian package nobody here wrote) on POCL alone and on mockcl backed
# by POCL, and checks that it gives the results POCL gives:
#
#   tools/dev/real_programs/real_program.sh PROGRAM MOCKCL_SO [--row FILE] [--out DIR]
#
# PROGRAM: hashcat | clpeak | piglit. MOCKCL_SO: the libmockcl.so to load (an .icd naming it is
# written to a folder of its own; MOCKCL_BACKING=pocl). Each run gets fresh cache and data folders
# (HOME, XDG_CACHE_HOME, XDG_DATA_HOME under DIR, default a temporary folder), so POCL's kernel cache
# and hashcat's potfile never carry over from one run to the next. Under Bazel, DIR defaults to the
# test's temporary folder, and the programs' outputs (*.out) are kept in its undeclared outputs.
# --row FILE appends one tab-separated line: program, version, command, the result on POCL and on
# mockcl, the seconds each took (table.sh makes the README's table of them).
# Exit status: 0 when both runs give what they should (or "skipped: PACKAGE not installed"), 1 when
# not (each reason printed as FAIL: ...), 2 bad usage.
#
#   hashcat  hashcat -m 0 -a 3 --backend-ignore-cuda -D 1,2 --force HASH '?l?l?l?l?l', HASH the md5
#            of "hello": exit 0 and HASH:hello on both (mockcl: MOCKCL_DEVICES=gpu-2g; hashcat's GPU
#            path needs more than 1 GiB), and nothing left at exit on mockcl.
#   clpeak   clpeak --kernel-latency --transfer-bandwidth: exit 0 on both; on mockcl a kernel launch
#            latency above 0 (event timestamps are POCL's) and an enqueueMapBuffer bandwidth above
#            100 GB/s (a map is POCL's own, not a host copy; a copy is bounded by memory bandwidth).
#   piglit   piglit run cl: every test's result on mockcl equals POCL's, except those listed with
#            their reason in piglit_expected.tsv (next to this script). PIGLIT_INCLUDE=REGEX runs
#            only the tests whose names match (piglit's -t; CI's step 7 runs the api tests).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; }
(($# >= 2)) || { usage >&2; exit 2; }
program="$1" so="$2"
shift 2
row="" out=""
while (($#)); do
  case "$1" in
    --row) row="${2:?--row needs a file}"; shift 2 ;;
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    *) echo "real_program.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
case "$program" in hashcat | clpeak | piglit) ;; *) echo "real_program.sh: unknown program '$program'" >&2; exit 2 ;; esac
[[ -f "$so" ]] || { echo "real_program.sh: no libmockcl.so at '$so'" >&2; exit 2; }
if ! command -v "$program" >/dev/null; then
  echo "skipped: $program not installed (apt-get install -y $program)"
  exit 0
fi
[[ -f /etc/OpenCL/vendors/pocl.icd ]] || { echo "skipped: pocl-opencl-icd not installed"; exit 0; }
so="$(cd "$(dirname "$so")" && pwd)/$(basename "$so")"
out="${out:-$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/real_program.XXXXXX")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
# shellcheck source=tools/dev/testing/test_lib.sh
source "$here/../testing/test_lib.sh"  # fail, finish, mockcl_icd (programs.sh fails with fail)
mockcl_icd "$out/vendors-mock" "$so"

# shellcheck disable=SC2317  # on is called by programs.sh's check_PROGRAM
# on DEVICE NAME COMMAND...: runs COMMAND with the loader pointed at POCL or at mockcl, fresh
# folders; its output in $out/NAME.out, its status in $status, its seconds in $seconds.
on() {
  local device="$1" name="$2"
  shift 2
  local home="$out/home-$name"
  rm -rf "$home"
  mkdir -p "$home"
  local vendors=/etc/OpenCL/vendors/pocl.icd
  local -a extra=()
  if [[ "$device" == mockcl ]]; then
    vendors="$out/vendors-mock/mockcl.icd"
    extra=(MOCKCL_BACKING=pocl "MOCKCL_DEVICES=${MOCKCL_DEVICES:-gpu-1g}")
  fi
  local t0=$SECONDS
  status=0
  (cd "$home" && env HOME="$home" XDG_CACHE_HOME="$home/cache" XDG_DATA_HOME="$home/data" \
    OCL_ICD_VENDORS="$vendors" "${extra[@]}" "$@") > "$out/$name.out" 2>&1 || status=$?
  seconds=$((SECONDS - t0))
}

source "$here/programs.sh"
"check_$program"
version="$(dpkg-query -W -f='${Version}' "$program" 2>/dev/null || echo unknown)"
if [[ -n "$row" ]]; then
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$program" "$version" "$command_text" "$result_pocl" "$result_mock" \
    "$seconds_pocl" "$seconds_mock" >> "$row"
fi
echo "$program $version: POCL: $result_pocl (${seconds_pocl} s); mockcl: $result_mock (${seconds_mock} s)"
if [[ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ]]; then
  cp "$out"/*.out "$TEST_UNDECLARED_OUTPUTS_DIR/" 2>/dev/null || true
fi
if ((fails)); then echo "outputs in $out"; fi
finish
