#!/bin/bash
# clpool_replay --diff OLD NEW from the command line: the site that grew named first, the table,
# --max-growth as a gate (exit 1 over it, 0 within), JSON, and each bad command line exiting 2
# with its message first. OLD is the first 40 % of growing_cache_app.trace's lines (fewer requests, so a
# smaller cache); NEW the whole trace.
#   diff_cli_test.sh CLPOOL_REPLAY EXAMPLES_DIR
set -uo pipefail
replay="$(realpath "$1")"
examples="$(realpath "$2")"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh  # fail, finish, check; from the runfiles root (before the cd)
cd "$tmp"
new="$examples/growing_cache_app.trace"
lines=$(wc -l < "$new")
head -n $((lines * 4 / 10)) "$new" > old.trace
cp "$new" new.trace

"$replay" --diff old.trace new.trace --no-pool --no-progress > out.txt 2> err.txt
rc=$?
cat out.txt
check "no gate: exit 0" test "$rc" -eq 0
check "the table" grep -qE '^nopool +[0-9.]+ MiB +[0-9.]+ MiB +\+[0-9.]+% ' out.txt
check "the site that grew is named first" \
  grep -A1 -x "sites whose memory grew most (each site's peak of live device memory, requested bytes):" out.txt
grep -A1 -x "sites whose memory grew most (each site's peak of live device memory, requested bytes):" out.txt \
  | grep -q '^  1\. ResultCache\.remember (tools/replay/examples/growing_cache\.py:[0-9]*)$' \
  && echo "ok: ResultCache.remember grew most" || fail "ResultCache.remember grew most"

"$replay" --diff old.trace new.trace --no-pool --no-progress --max-growth 5% > gate.txt 2>&1
rc=$?
check "--max-growth 5%: exit 1" test "$rc" -eq 1
check "--max-growth 5%: says what grew" grep -q "^--max-growth 5.0%: exceeded: nopool's peak device memory grew +[0-9.]*%; nopool's minimum capacity grew" gate.txt

"$replay" --diff old.trace new.trace --no-pool --no-progress --max-growth 100000% > pass.txt 2>&1
rc=$?
check "--max-growth 100000%: exit 0" test "$rc" -eq 0
check "--max-growth 100000%: passed" grep -q "^--max-growth 100000.0%: passed$" pass.txt

"$replay" --diff old.trace new.trace --compare nopool pool:lb=4 --no-progress --format json=d.json --format text > both.txt 2> both.err
rc=$?
check "--compare and json: exit 0" test "$rc" -eq 0
check "json written" /usr/bin/python3 - d.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 1, d.get("schema_version")  # replay/diff.h diff_schema_version
assert [c["config"] for c in d["configurations"]] == ["nopool", "pool:lb=4"], d["configurations"]
c = d["configurations"][0]
assert c["new"]["peak_device_bytes"] > c["old"]["peak_device_bytes"] > 0
assert c["new"]["min_capacity"] > c["old"]["min_capacity"] > 0
assert d["sites"][0]["site"].startswith("ResultCache.remember (") and d["sites"][0]["change_bytes"] > 0
assert d["passed"] is True and d["max_growth"] is None
PY
check "text beside json" grep -q "^pool:lb=4 " both.txt

bad() {  # bad "MESSAGE" ARGS...
  local message="$1"; shift
  "$replay" "$@" > bad.out 2> bad.err
  local rc=$?
  if [[ $rc -eq 2 && ! -s bad.out ]] && head -n 1 bad.err | grep -qF -- "$message"; then
    echo "ok: bad: $*"
  else
    fail "bad: $* (exit $rc)"; cat bad.out bad.err
  fi
}
bad "clpool_replay: error: --max-growth: '5' needs a percent sign, e.g. 5%" --diff old.trace new.trace --max-growth 5
bad "clpool_replay: error: --max-growth: '-1%' is negative" --diff old.trace new.trace --max-growth -1%
bad "--max-growth requires --diff" old.trace --capacity 1GiB --max-growth 5%
bad "clpool_replay: error: --diff finds each configuration's peak and minimum capacity itself; drop --capacity" --diff old.trace new.trace --capacity 1GiB
bad "clpool_replay: error: --diff runs no trials; drop --trials" --diff old.trace new.trace --trials 1MiB:2MiB:1MiB
bad "--diff: takes 2 values, got 1" --diff old.trace
bad "clpool_replay: error: --diff writes text or json; --format svg shows one replay (run it without --diff)" --diff old.trace new.trace --format svg=x.svg
bad "clpool_replay: error: --format json: 'old.trace' is the same file as the input 'old.trace' (--diff OLD)" --diff old.trace new.trace --format json=old.trace
bad "clpool_replay: error: --diff: each trace is replayed several times; give files, not '-'" --diff - new.trace
bad "clpool_replay: error: missing.trace: cannot open: No such file or directory" --diff missing.trace new.trace
check "old.trace untouched" cmp -s old.trace <(head -n $((lines * 4 / 10)) "$new")
finish
