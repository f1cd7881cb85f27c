#!/bin/bash
# Every bad MOCKCL_* value refuses the platform (the loader sees no mock platform) with a
# message on stderr naming the variable and the problem. A real client (clinfo) observes it.
set -uo pipefail
so="$(realpath "$1")"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh  # fail, finish, mockcl_icd; from the runfiles root
dir="$(mktemp -d "${TEST_TMPDIR:-/tmp}/vendors.XXXXXX")"
mockcl_icd "$dir" "$so"
export OCL_ICD_VENDORS="$dir" OCL_ICD_PLATFORM_SORT=none
refused() {  # refused VAR VALUE EXPECTED_FRAGMENT
  local err out rc
  err="$(env "$1=$2" clinfo -l 2>&1 >/dev/null)"
  out="$(env "$1=$2" clinfo -l 2>/dev/null)"
  rc=$?
  if ((rc >= 128)); then fail "$1='$2': clinfo died of signal $((rc - 128)): $err"; fi
  if grep -q mockcl <<<"$out"; then fail "$1='$2' did not refuse the platform"; fi
  if ! grep -qF "$1" <<<"$err" || ! grep -qF "$3" <<<"$err"; then
    fail "$1='$2': stderr lacks '$3': $err"
  else
    echo "ok: $1='$2' -> $err"
  fi
}
refused MOCKCL_DEVICES "gpu-lots" "size 'lots' is not a number"
refused MOCKCL_DEVICES "gpu-2GB" "size '2GB' is ambiguous: decimal units are not accepted; write 2GiB"
refused MOCKCL_DEVICES "gpu-18446744073709551615" "is larger than the largest device, 2^62 bytes"
refused MOCKCL_DEVICES "gpu:capacity=1m,capacity=2m" "capacity given twice"
refused MOCKCL_DEVICES "gpu:name=a,name=b" "name given twice"
refused MOCKCL_DEVICES "" "device list is empty"
refused MOCKCL_DEVICES "tpu" "unknown preset 'tpu'"
refused MOCKCL_DEVICES "gpu:semantics=later" "is not immediate, deferred or host_oom"
refused MOCKCL_DEVICES "gpu:bogus=1" "unknown option 'bogus'"
refused MOCKCL_DEVICES "gpu-1g:max_alloc=4g" "exceeds reported size"
refused MOCKCL_FAULTS "nth:clNope:1" "unknown entry point 'clNope'"
refused MOCKCL_FAULTS "prob:clCreateBuffer:2:1" "not a number in [0, 1]"
refused MOCKCL_FAULTS "" "fault list is empty"
refused MOCKCL_FAULTS "exec:clCreateBuffer:1" "clCreateBuffer enqueues no command, so the rule could never fire"
refused MOCKCL_FAULTS "nth:clGetDeviceInfo:1" "clGetDeviceInfo never fails"
refused MOCKCL_DEVICES "gpu:capacity=1g,capacity=2g" "capacity given twice"
refused MOCKCL_SCHEDULE "sometimes" "'sometimes' is not eager, lazy"
refused MOCKCL_SCHEDULE "lazy,seed=x" "seed"
refused MOCKCL_SCHEDULE "seed=1,seed=2" "seed given twice"
# A kernel duration that could wrap the virtual clock (END before START) is refused.
refused MOCKCL_SCHEDULE "kernel_ns=18446744073709551615" "kernel_ns 18446744073709551615 is more than one week of virtual time (604800000000000 ns)"
# A context cost the device can never hold (every clCreateContext would fail) is refused.
refused MOCKCL_DEVICES "gpu:context_cost=512m" "device 1 ('gpu:context_cost=512m'): context_cost 512m is not smaller than capacity 256m"
refused MOCKCL_CALL_LOG "" "path is empty"
refused MOCKCL_CALL_LOG "/nonexistent/dir/log.jsonl" "cannot open"
refused MOCKCL_DEVICE "gpu" "unknown variable MOCKCL_DEVICE"
refused MOCKCL_BACKING "gpu" "'gpu' is not pocl or none"
refused MOCKCL_BACKING "" "is not pocl or none"
refused MOCKCL_POCL_ICD "" "path is empty"
# pocl asked for but not loadable: refused.
MOCKCL_BACKING=pocl refused MOCKCL_POCL_ICD "/nonexistent/pocl.icd" "cannot read the library's path"
MOCKCL_BACKING=pocl refused MOCKCL_POCL_ICD "/nonexistent/libpocl.so" "'/nonexistent/libpocl.so' cannot be read: No such file"
MOCKCL_BACKING=pocl refused MOCKCL_POCL_ICD "libnonexistent.so" "cannot load 'libnonexistent.so'"
# mockcl asked to back itself (an .icd naming libmockcl.so, or a copy of it) is refused, not a
# recursive initialisation (it aborted with __gnu_cxx::recursive_init_error).
mkdir -p "$dir/other"
mockcl_icd "$dir/other/self" "$so"
cp "$so" "$dir/other/copy.so"
MOCKCL_BACKING=pocl refused MOCKCL_POCL_ICD "$dir/other/self/mockcl.icd" "is mockcl itself, not a driver to back it"
MOCKCL_BACKING=pocl refused MOCKCL_POCL_ICD "$dir/other/copy.so" "is mockcl itself, not a driver to back it"
# MOCKCL_POCL_ICD given but unusable is refused the same way with MOCKCL_BACKING unset (it was
# ignored, and mockcl ran without POCL); only the default ICD's absence falls back to none.
unset MOCKCL_BACKING
refused MOCKCL_POCL_ICD "/nonexistent/pocl.icd" "cannot read the library's path"
refused MOCKCL_POCL_ICD "/nonexistent/libpocl.so" "'/nonexistent/libpocl.so' cannot be read: No such file"
refused MOCKCL_POCL_ICD "/etc/passwd" "'/etc/passwd' is not an ELF shared library"
refused MOCKCL_POCL_ICD "libnonexistent.so" "cannot load 'libnonexistent.so'"
refused MOCKCL_POCL_ICD "$dir/other/self/mockcl.icd" "is mockcl itself, not a driver to back it"
refused MOCKCL_POCL_ICD "$dir/other/copy.so" "is mockcl itself, not a driver to back it"
MOCKCL_BACKING=pocl refused MOCKCL_POCL_ICD "/etc/passwd" "'/etc/passwd' is not an ELF shared library"
# POCL's own .icd named explicitly, with MOCKCL_BACKING unset: accepted.
out="$(MOCKCL_POCL_ICD=/etc/OpenCL/vendors/pocl.icd clinfo -l 2>&1)"
grep -q "mockcl" <<<"$out" || fail "MOCKCL_POCL_ICD=/etc/OpenCL/vendors/pocl.icd refused: $out"
# A driver library cut short is refused from its headers (dlopen died of SIGBUS), and an .icd
# that never ends is read with a bound.
pocl_lib="$(head -n 1 /etc/OpenCL/vendors/pocl.icd)"
[[ "$pocl_lib" == /* ]] || pocl_lib="/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/$pocl_lib"
if [[ ! -f "$pocl_lib" ]]; then
  fail "POCL's library not found at $pocl_lib"
else
  for n in 1000 5000 100000 1000000; do
    head -c "$n" "$pocl_lib" > "$dir/other/cut$n.so"
    MOCKCL_BACKING=pocl refused MOCKCL_POCL_ICD "$dir/other/cut$n.so" "is truncated or corrupt"
  done
fi
ln -sf /dev/zero "$dir/other/zero.icd"
MOCKCL_BACKING=pocl refused MOCKCL_POCL_ICD "$dir/other/zero.icd" "its first line is longer than 4 KiB"
# A good configuration is accepted, and the call log gets JSON lines.
log="${TEST_TMPDIR:-/tmp}/calls.jsonl"
out="$(MOCKCL_DEVICES="gpu-1g;cpu" MOCKCL_SCHEDULE="lazy,seed=3" MOCKCL_FAULTS="bytes:512m" MOCKCL_CALL_LOG="$log" clinfo -l 2>&1)"
grep -q "mockcl gpu-1g" <<<"$out" || { fail "good config refused: $out"; }
grep -q '"call":"clGetDeviceInfo"' "$log" || { fail "call log empty"; }
# A call log that cannot be written (a full device) is said once on stderr; the platform still works.
err="$(MOCKCL_CALL_LOG=/dev/full clinfo -l 2>&1 >/dev/null)"
n="$(grep -c "mockcl: error: MOCKCL_CALL_LOG '/dev/full': cannot write: No space left on device" <<<"$err")"
[[ "$n" == 1 ]] || { fail "MOCKCL_CALL_LOG=/dev/full reported $n times: $err"; }
finish
