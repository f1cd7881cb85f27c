#!/usr/bin/env bash
# Hostile inputs against every tool (issue 31). Each case runs one command under a time limit in
# a working directory of inputs and earlier outputs, then checks its exit status (never a signal,
# never a hang), a fragment of its message, and that every file there is as it was, except what
# the case says it writes: nothing a failed run touches is lost.
#
#   hostile_test.sh CLPOOL_REPLAY CLPOOL CLPOOL_PROBE TRACE_SUMMARY LIBMOCKCL_SO LAYER_SO TRACE
set -u
source "$(dirname "$0")/../../tools/testing/test_lib.sh" || exit 1  # fail, die, finish
REPLAY="$(realpath "$1")"
CLPOOL="$(realpath "$2")"
PROBE="$(realpath "$3")"
SUMMARY="$(realpath "$4")"
MOCKCL="$(realpath "$5")"
LAYER="$(realpath "$6")"
TRACE="$(realpath "$7")"
W="${TEST_TMPDIR:-$(mktemp -d)}/hostile"
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1
export POCL_CACHE_DIR="$W/.pocl-cache"
unset OPENCL_LAYERS
[[ -n "${ASAN_OPTIONS:-}" ]] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
# mockcl is reached through clinfo, an uninstrumented program that cannot load a sanitized
# libmockcl.so (as mockcl's env_test): those cases run in the default build only.
have_clinfo() { command -v clinfo >/dev/null && [[ -z "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]]; }
cases=0

# The working directory: inputs, an earlier output, libraries cut short, links.
cp "$TRACE" T.trace
printf 'old svg\n' > old.svg
for n in 1000 5000 100000 1000000; do
  head -c "$n" "$MOCKCL" > "mock$n.so"
  head -c "$n" "$LAYER" > "layer$n.so"
done
cp "$LAYER" l.so
mkdir -p o dir
ln -s x o/y               # a link to a file not yet written
ln -s T.trace T.link      # a link to an input
head -c 20000000 /dev/zero | { printf 'clpool-trace 1\n0 0 0 0 alloc 1 4096 buffer 0\n'; cat; } > zeros.trace
printf '\xef\xbb\xbfclpool-trace 1\n0 0 0 0 alloc 1 4096 buffer 0\n' > bom.trace
printf '\xef\xbb\xbfThread,Time,Action,Pointer,Size,Stream\n' > bom.csv
printf 'clpool-trace 2\nframe 1 py 1 a%%2 b\n' > badescape.trace
{ printf 'clpool-trace 2\nframe 1 py 1 a '; head -c 601 /dev/zero | tr '\0' x; printf '\n'; } > longname.trace
printf 'page = 4KiB\nheadroom = 0B\n' > unnamed.profile
# Frame names that would write to a terminal, break JSON (not UTF-8), end a <script> or an SVG
# element; a metadata comment with an OSC sequence.
printf '%s\n' 'clpool-trace 2' '# device: %1B]0;pwned%07' \
  'frame 1 py 10 %1B]0;pwned%07evil.py %FF%FEbad%0Aname%00x' \
  'frame 2 native 0 %3C!--%3Cscript%3E%3C/script%3E%3Cscript%3Ealert(1)%3C/script%3E %E2%80%AEreversed%3C/svg%3E' \
  'stack 1 0 1' 'stack 2 1 2' \
  '0 0 0 0 alloc 1 4194304 buffer 0 2' '1 0 0 0 alloc 2 4194304 buffer 0 1' \
  '2 0 0 0 alloc 3 67108864 buffer 0 2' > names.trace
printf 'clpool-trace 1\n# device: \033]0;pwned\007 \033[2J\n0 0 0 0 alloc 1 4096 buffer 0\n' > meta.trace
head -c 10000000 /dev/zero | tr '\0' x > big.bin   # 10 MB with no newline
mkdir -p vendors
echo "$MOCKCL" > vendors/mockcl.icd
echo "$MOCKCL" > self.icd
ln -s /dev/zero zero.icd

snapshot() {
  find . -path ./.pocl-cache -prune -o \( -type f -o -type l \) -print | sort | while read -r f; do
    if [[ -L "$f" ]]; then echo "$f -> $(readlink "$f")"; else echo "$f $(md5sum < "$f" | cut -c1-32)"; fi
  done
}

# run NAME WANT_RC FRAGMENT [--stdout FILE] [--writes PATH]... -- COMMAND...
#   FRAGMENT must appear in stderr+stdout ("" for none). --stdout sends standard output to FILE
#   (/dev/full, or "closed"); --writes names a file the case may create or change.
run() {
  local name="$1" want="$2" fragment="$3"
  shift 3
  local stdout_to="" writes=()
  while [[ "$1" != "--" ]]; do
    case "$1" in
      --stdout) stdout_to="$2"; shift 2 ;;
      --writes) writes+=("$2"); shift 2 ;;
      *) echo "bad run() option $1"; exit 2 ;;
    esac
  done
  shift
  cases=$((cases + 1))
  local before after rc
  before="$(snapshot)"
  case "$stdout_to" in
    "") timeout 60 "$@" > "$W/.out" 2> "$W/.err"; rc=$? ;;
    closed) timeout 60 "$@" >&- 2> "$W/.err"; rc=$?; : > "$W/.out" ;;
    *) timeout 60 "$@" > "$stdout_to" 2> "$W/.err"; rc=$?; : > "$W/.out" ;;
  esac
  out="$(cat "$W/.out" "$W/.err")"
  rm -f "$W/.out" "$W/.err"
  if [[ $rc == 124 ]]; then fail "$name: did not finish in 60 s (a hang)"; return; fi
  if [[ $rc -ge 128 ]]; then fail "$name: died of signal $((rc - 128)): ${out:0:400}"; return; fi
  [[ $rc == "$want" ]] || fail "$name: exit $rc, want $want: ${out:0:600}"
  [[ -z "$fragment" || "$out" == *"$fragment"* ]] || fail "$name: message lacks '$fragment': ${out:0:600}"
  after="$(snapshot)"
  local w
  for w in "${writes[@]}"; do
    before="$(grep -v "^\./$w[ ]" <<<"$before")"
    after="$(grep -v "^\./$w[ ]" <<<"$after")"
  done
  [[ "$before" == "$after" ]] || { fail "$name: files changed"; diff <(echo "$before") <(echo "$after") | head -5; }
  echo "ok: $name"
}

# printable FILE: no control byte but newline (what a terminal would act on), valid UTF-8.
printable() {
  /usr/bin/python3 - "$1" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
text = data.decode("utf-8")  # raises on bytes that are not UTF-8
bad = [c for c in text if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) <= 0x9f or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"]
sys.exit(1 if bad else 0)
PY
}

echo "=== libraries: cut short, of another kind, named by a bare file name"
for n in 1000 5000 100000 1000000; do
  run "replay --mockcl-so mock$n.so" 2 "--mockcl-so: 'mock$n.so' is truncated or corrupt" -- \
    "$REPLAY" T.trace --device mockcl --mockcl-so "mock$n.so" --capacity 64MiB
  run "record --layer layer$n.so" 2 "--layer: './layer$n.so' is not a loadable library (truncated or corrupt" -- \
    "$CLPOOL" record --layer "./layer$n.so" --out rec.trace -- /usr/bin/touch ran
  [[ ! -e ran ]] || { fail "record --layer layer$n.so ran the program"; rm -f ran; }
done
LIBMOCKCL_SO="$W/mock5000.so" run "LIBMOCKCL_SO=mock5000.so" 2 "LIBMOCKCL_SO: '$W/mock5000.so' is truncated or corrupt" -- \
  "$REPLAY" T.trace --device mockcl --capacity 64MiB
run "replay --mockcl-so the layer" 2 "is not the mockcl ICD: it does not export clIcdGetPlatformIDsKHR" -- \
  "$REPLAY" T.trace --device mockcl --mockcl-so l.so --capacity 64MiB
run "replay --mockcl-so a directory" 2 "--mockcl-so: 'dir'" -- "$REPLAY" T.trace --device mockcl --mockcl-so dir --capacity 64MiB
run "record --layer the mock" 2 "is not an OpenCL layer: it does not export clGetLayerInfo" -- \
  "$CLPOOL" record --layer "$MOCKCL" --out rec.trace -- /bin/true
run "record --layer l.so (a file here)" 0 "clpool record: exit status 0" --writes rec.trace -- \
  "$CLPOOL" record --layer l.so --out rec.trace -- /bin/true
rm -f rec.trace
if have_clinfo; then
  OCL_ICD_VENDORS="$W/vendors" MOCKCL_BACKING=pocl MOCKCL_POCL_ICD="$W/self.icd" \
    run "mockcl backed by itself (clinfo)" 0 "is mockcl itself, not a driver to back it" -- clinfo -l
  OCL_ICD_VENDORS="$W/vendors" MOCKCL_BACKING=pocl MOCKCL_POCL_ICD="$W/mock5000.so" \
    run "mockcl backed by a cut library (clinfo)" 0 "is truncated or corrupt" -- clinfo -l
fi

echo "=== inputs that never end, or hold what a reader must stop at"
run "replay /dev/zero" 2 "/dev/zero:1: not a clpool trace: it starts with NUL bytes (byte 0)" -- \
  "$REPLAY" /dev/zero --capacity 64MiB
run "replay --rmm-csv /dev/zero" 2 "row is longer than 4096 bytes" -- "$REPLAY" --rmm-csv /dev/zero --capacity 64MiB
run "replay /dev/urandom" 2 "not a clpool trace" -- "$REPLAY" /dev/urandom --capacity 64MiB
run "replay a 20 MB zero tail" 2 "zeros.trace:3: more than 16 MiB of NUL bytes from byte 45" -- \
  "$REPLAY" zeros.trace --capacity 64MiB
run "replay --profile /dev/zero" 2 "profile file /dev/zero: cannot be read: not a regular file" -- \
  "$REPLAY" T.trace --capacity 64MiB --profile /dev/zero
run "replay --profile big.bin.profile" 2 "larger than 64 KiB" -- \
  "$REPLAY" T.trace --capacity 64MiB --profile "$W/big.bin"
run "trace_summary /dev/zero" 1 "not a clpool trace: it starts with NUL bytes" -- "$SUMMARY" /dev/zero
run "record --profile /dev/zero" 2 "/dev/zero" -- "$CLPOOL" record --budget 1GiB --profile /dev/zero --out rec.trace -- /bin/true
run "probe --output a 10 MB line" 2 "exists and is not a profile clpool_probe wrote" -- "$PROBE" --output big.bin
if have_clinfo; then
  OCL_ICD_VENDORS="$W/vendors" MOCKCL_BACKING=pocl MOCKCL_POCL_ICD="$W/zero.icd" \
    run "MOCKCL_POCL_ICD=an endless .icd (clinfo)" 0 "its first line is longer than 4 KiB" -- clinfo -l
fi
# A long trace is summarised in memory bounded by its live blocks (it was read whole into
# memory): 4 million events in 64 MiB of address space. Not under a sanitizer, whose shadow
# memory needs far more address space than that.
if [[ -z "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]]; then
  awk 'BEGIN { print "clpool-trace 1"; for (i = 0; i < 2000000; i++) {
         print 2 * i, 0, 0, 0, "alloc", 1, 4096, "buffer", 0; print 2 * i + 1, 0, 0, 0, "free", 1, 4096, "buffer", 0 } }' > long.trace
  run "trace_summary of 4 million events in 64 MiB" 0 "events: 4000000" -- bash -c "ulimit -v 65536 && exec '$SUMMARY' long.trace"
  rm -f long.trace
fi

echo "=== outputs that cannot be written: each is an error naming it, exit 2"
run "report > /dev/full" 2 "clpool_replay: error: the report: standard output: cannot write: No space left on device" \
  --stdout /dev/full -- "$REPLAY" T.trace --capacity 1GiB
run "--json > /dev/full" 2 "--json: standard output: cannot write: No space left on device" --stdout /dev/full -- \
  "$REPLAY" T.trace --capacity 1GiB --json
run "--compare table > /dev/full" 2 "standard output: cannot write: No space left on device" --stdout /dev/full -- \
  "$REPLAY" T.trace --min-capacity --compare nopool pool
run "report to a closed stdout" 2 "standard output: cannot write: Bad file descriptor" --stdout closed -- \
  "$REPLAY" T.trace --capacity 1GiB
run "--svg /dev/full" 2 "--svg: cannot write '/dev/full': No space left on device" -- \
  "$REPLAY" T.trace --capacity 1GiB --svg /dev/full
[[ "$out" == *"configuration pool:lb=4"* ]] || fail "--svg /dev/full cost the report on standard output"
run "--write-trace /dev/full" 2 "--write-trace: cannot write '/dev/full': No space left on device" -- \
  "$REPLAY" T.trace --write-trace /dev/full
run "--html /dev/full with --json to a file" 2 "--format html: cannot write '/dev/full'" --writes r.json -- \
  "$REPLAY" T.trace --capacity 1GiB --format html=/dev/full --format json=r.json
[[ -s r.json ]] || fail "a failed --html cost the --format json output"
rm -f r.json
run "--diff > /dev/full" 2 "standard output: cannot write: No space left on device" --stdout /dev/full -- \
  "$REPLAY" --diff T.trace T.trace
run "--diff --format json=/dev/full" 2 "--format json: cannot write '/dev/full': No space left on device" -- \
  "$REPLAY" --diff T.trace T.trace --format json=/dev/full --format text
[[ "$out" == *"old  T.trace"* ]] || fail "--diff's lost JSON cost its text on standard output"
run "trace_summary > /dev/full" 2 "trace_summary: error: standard output: cannot write: No space left on device" \
  --stdout /dev/full -- "$SUMMARY" T.trace
run "clpool --help > /dev/full" 2 "clpool: error: standard output: cannot write" --stdout /dev/full -- "$CLPOOL" --help
run "clpool record --help, stdout closed" 2 "standard output: cannot write: Bad file descriptor" --stdout closed -- \
  "$CLPOOL" record --help
run "clpool_probe --help > /dev/full" 2 "clpool_probe: error: standard output: cannot write" --stdout /dev/full -- \
  "$PROBE" --help
run "--help > /dev/full" 2 "standard output: cannot write" --stdout /dev/full -- "$REPLAY" --help
if have_clinfo; then
  OCL_ICD_VENDORS="$W/vendors" MOCKCL_CALL_LOG=/dev/full \
    run "MOCKCL_CALL_LOG=/dev/full (clinfo)" 0 "mockcl: error: MOCKCL_CALL_LOG '/dev/full': cannot write: No space left on device" -- clinfo -l
  [[ "$(grep -c "MOCKCL_CALL_LOG '/dev/full'" <<<"$out")" == 1 ]] || fail "MOCKCL_CALL_LOG=/dev/full reported more than once"
fi

echo "=== outputs through links"
run "--svg o/x --write-trace o/y (y -> x)" 2 "--svg: 'o/x' is also the --write-trace output; give them different files" -- \
  "$REPLAY" T.trace --capacity 1GiB --svg o/x --write-trace o/y
[[ ! -e o/x ]] || fail "a refused run wrote o/x"
run "--svg o/y, a link to a file not yet written" 0 "--svg: wrote o/y" --writes o/x -- \
  "$REPLAY" T.trace --capacity 1GiB --svg o/y
[[ -L o/y && "$(readlink o/y)" == x && -s o/x ]] || fail "--svg o/y did not keep the link and write its target"
rm -f o/x
run "--svg a link to the input" 2 "is the same file as the input" -- "$REPLAY" T.trace --capacity 1GiB --svg T.link
run "--svg old.svg on a run that fails" 2 "" -- "$REPLAY" T.trace --capacity 1GiB --svg old.svg --profile /dev/zero
[[ "$(cat old.svg)" == "old svg" ]] || fail "a failed run changed old.svg"

echo "=== names from a trace, in every output"
run "text report of hostile names" 1 "" --writes n.txt --stdout n.txt -- "$REPLAY" names.trace --capacity 32MiB --profile exact --full-stacks
printable n.txt || fail "the text report holds control characters or bytes that are not UTF-8"
grep -qF '\x1B]0;pwned\x07evil.py' n.txt || fail "the ESC of a frame name is not shown escaped"
run "json, svg and html of hostile names" 1 "--svg: wrote n.svg" --writes n.json --writes n.svg --writes n.html --stdout n.json -- \
  "$REPLAY" names.trace --capacity 32MiB --profile exact --json --svg n.svg --html n.html
/usr/bin/python3 - n.json n.svg n.html <<'PY' || fail "an output of hostile names does not parse"
import json, re, sys, xml.dom.minidom
json.load(open(sys.argv[1], encoding="utf-8"))
xml.dom.minidom.parse(sys.argv[2])
page = open(sys.argv[3], encoding="utf-8").read()
for island in ("clpool-result", "clpool-replay", "clpool-data"):
    data = re.search(r'<script type="application/json" id="%s">(.*?)</script>' % island, page, re.S).group(1)
    json.loads(data)
    assert "<" not in data, "a frame name put a '<' in the page's " + island
PY
for f in n.json n.svg n.html; do printable "$f" || fail "$f holds control characters or bytes that are not UTF-8"; done
rm -f n.txt n.json n.svg n.html
# --diff (clpool_replay's comparison of two traces): the traces' names and their sites' names in
# their printable form, in text and JSON.
cp names.trace $'e\033]0;x\007.trace'
run "--diff of hostile names and file names" 0 "" --writes d.txt --stdout d.txt -- \
  "$REPLAY" --diff T.trace $'e\033]0;x\007.trace'
printable d.txt || fail "--diff's text holds control characters or bytes that are not UTF-8"
grep -qF 'new  e\x1B]0;x\x07.trace' d.txt || fail "--diff does not show a trace's name escaped"
grep -qF '\x1B]0;pwned\x07evil.py' d.txt || fail "--diff does not show a site's name escaped"
run "--diff --json of hostile names" 0 "" --writes d.json --stdout d.json -- \
  "$REPLAY" --diff T.trace $'e\033]0;x\007.trace' --json
/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' d.json || fail "--diff --json does not parse"
printable d.json || fail "--diff --json holds control characters or bytes that are not UTF-8"
rm -f d.txt d.json $'e\033]0;x\007.trace'
run "trace_summary of a hostile comment" 0 "" --stdout m.txt --writes m.txt -- "$SUMMARY" meta.trace
printable m.txt || fail "trace_summary printed a comment's control characters"
grep -qF 'meta.device: \x1B]0;pwned\x07 \x1B[2J' m.txt || fail "trace_summary does not show the comment escaped"
rm -f m.txt

echo "=== messages that say which"
run "a byte-order mark" 2 "bom.trace:1: starts with a UTF-8 byte-order mark (bytes EF BB BF)" -- "$REPLAY" bom.trace --capacity 64MiB
run "an RMM CSV's byte-order mark" 2 "bom.csv:1: starts with a UTF-8 byte-order mark" -- "$REPLAY" --rmm-csv bom.csv --capacity 64MiB
run "a bad %-escape" 2 "badescape.trace:2: frame line: FILE: bad %-escape '%2' at byte 1" -- "$REPLAY" badescape.trace --capacity 64MiB
run "a name over 600 bytes" 2 "longname.trace:2: frame line: FUNCTION: longer than 600 bytes (601)" -- \
  "$REPLAY" longname.trace --capacity 64MiB
run "a profile without a name" 0 "$W/unnamed.profile profile" -- "$REPLAY" T.trace --capacity 1GiB --profile "$W/unnamed.profile"
[[ "$out" != *"exact profile"* ]] || fail "a profile file without a name was reported as the exact profile"

echo "$cases cases"
finish
