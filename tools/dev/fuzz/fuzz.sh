#!/usr/bin/env bash
# Runs a libFuzzer campaign on one fuzzer or all of them.
#
#   tools/dev/fuzz/fuzz.sh [FUZZER|all] SECONDS [JOBS]
#
#   FUZZER   a fuzzer's target name in //fuzz (pool_ops_fuzzer, ...), or "all" (the default).
#   SECONDS  how long each fuzzer runs (-max_total_time).
#   JOBS     processes at once (default: half the cores, at least 1). One fuzzer: libFuzzer's
#            -fork=JOBS. "all": up to JOBS fuzzers side by side, one process each.
#
# Builds the fuzzers with `bazel build --config=fuzz` (clang 14, libFuzzer, ASan + UBSan), copies
# each one's checked-in seed corpus (fuzz/corpus/NAME) and regressions (fuzz/regressions/NAME) into
# a writable corpus under fuzz/out/NAME/corpus (git-ignored; kept between runs, so campaigns
# accumulate), and writes any crash, leak or timeout straight into fuzz/regressions/NAME/, where
# the corpus-replay test (bazel test //fuzz:FUZZER_replay_test) picks it up. NAME is the fuzzer's
# name without "_fuzzer". Logs: fuzz/out/NAME/fuzz.log.
#
# Environment:
#   FUZZ_ARGS   extra libFuzzer flags, e.g. FUZZ_ARGS="-max_len=512 -use_value_profile=1"
#   MERGE=1     afterwards, merge what the campaign found into the seed corpus (-merge=1 keeps
#               only inputs that add coverage), for committing
#   NO_BUILD=1  use the binaries already in bazel-bin (built with --config=fuzz)
#
# fuzz/FUZZER.options, if present, adds that fuzzer's libFuzzer flags (OSS-Fuzz's format).
#
# Exit status: 0 when no fuzzer found anything, 1 when one did (see fuzz/regressions/), 2 on
# usage or build errors. README: fuzz/README.md.
set -euo pipefail

usage() {
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

[[ $# -ge 1 && $# -le 3 ]] || usage
if [[ $# -eq 1 ]]; then
  which=all
  seconds=$1
else
  which=$1
  seconds=$2
fi
cores=$(nproc 2>/dev/null || echo 2)
jobs=${3:-$(((cores / 2) > 0 ? cores / 2 : 1))}
[[ "$seconds" =~ ^[0-9]+$ && "$jobs" =~ ^[1-9][0-9]*$ ]] || usage

root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"

all_fuzzers() {
  bazel query --noshow_progress 'attr(tags, "\bfuzzer\b", //fuzz/...)' 2>/dev/null |
    sed 's#^//fuzz:##'
}

if [[ "$which" == all ]]; then
  mapfile -t fuzzers < <(all_fuzzers)
else
  fuzzers=("$which")
fi
[[ ${#fuzzers[@]} -gt 0 ]] || { echo "fuzz.sh: no fuzzers found" >&2; exit 2; }

if [[ "${NO_BUILD:-0}" != 1 ]]; then
  targets=()
  for f in "${fuzzers[@]}"; do targets+=("//fuzz:$f"); done
  echo "fuzz.sh: bazel build --config=fuzz ${targets[*]}" >&2
  if ! bazel build --config=fuzz --symlink_prefix=/ --noshow_progress "${targets[@]}" >&2; then
    echo "fuzz.sh: build failed" >&2
    exit 2
  fi
fi
bin=$(bazel info --config=fuzz bazel-bin 2>/dev/null)

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Runs one fuzzer with `procs` processes; prints its summary line.
run_one() {
  local fuzzer=$1 procs=$2
  local name=${fuzzer%_fuzzer}
  local seeds=fuzz/corpus/$name regressions=fuzz/regressions/$name out=fuzz/out/$name
  mkdir -p "$out/corpus" "$regressions"
  [[ -d "$seeds" ]] && cp -n "$seeds"/* "$out/corpus/" 2>/dev/null || true
  cp -n "$regressions"/* "$out/corpus/" 2>/dev/null || true
  local before
  before=$(find "$regressions" -type f | wc -l)
  local parallel=()
  [[ "$procs" -gt 1 ]] && parallel=(-fork="$procs" -ignore_crashes=0)
  # fuzz/FUZZER.options ([libfuzzer] key = value lines, OSS-Fuzz's format): per-fuzzer flags.
  if [[ -f "fuzz/$fuzzer.options" ]]; then
    while IFS= read -r line; do
      [[ "$line" =~ ^[[:space:]]*([a-z_]+)[[:space:]]*=[[:space:]]*([^[:space:]]+) ]] &&
        parallel+=("-${BASH_REMATCH[1]}=${BASH_REMATCH[2]}")
    done < <(sed -n '/^\[libfuzzer\]/,/^\[/p' "fuzz/$fuzzer.options")
  fi
  # shellcheck disable=SC2086
  "$bin/fuzz/$fuzzer" -max_total_time="$seconds" -print_final_stats=1 "${parallel[@]}" \
    -artifact_prefix="$regressions/" ${FUZZ_ARGS:-} "$out/corpus" >"$out/fuzz.log" 2>&1 || true
  local after
  after=$(find "$regressions" -type f | wc -l)
  local stats
  # The last status line: "#N DONE cov: ..." (one process) or "#N: cov: ..." (-fork).
  stats=$(grep -E '^#[0-9]+' "$out/fuzz.log" | tail -1 || true)
  local execs
  execs=$(sed -E 's/^#([0-9]+).*/\1/' <<<"${stats:-#0}")
  if [[ "$after" -gt "$before" ]]; then
    echo "FOUND   $fuzzer: $((after - before)) new file(s) in $regressions/ (log: $out/fuzz.log)"
  else
    echo "ok      $fuzzer: ${seconds}s, $execs executions, last: ${stats:-?}"
  fi
  if [[ "${MERGE:-0}" == 1 && -d "$seeds" ]]; then
    "$bin/fuzz/$fuzzer" -merge=1 "$seeds" "$out/corpus" >"$out/merge.log" 2>&1 || true
    echo "merged  $fuzzer: $(find "$seeds" -type f | wc -l) inputs in $seeds"
  fi
}
export -f run_one
export bin seconds

status=0
if [[ ${#fuzzers[@]} -eq 1 ]]; then
  summary=$(run_one "${fuzzers[0]}" "$jobs")
else
  summary=$(printf '%s\n' "${fuzzers[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$1" 1' _ {})
fi
echo "$summary"
grep -q '^FOUND' <<<"$summary" && status=1
exit "$status"
