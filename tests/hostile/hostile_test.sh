#!/usr/bin/env bash
# Hostile inputs against every tool: runs each row of cases.txt (its columns are described there)
# in a working directory of inputs and earlier outputs. A row passes when the tool exits with the
# expected status (never a signal, never a hang), says the expected fragment (for an exit 2, on
# standard error, in at most two lines: the message and one of context, never a stack trace or
# an abort's noise), changes no file there but those the row names, and its `after` command
# succeeds. README.md lists the classes of input.
#
#   hostile_test.sh CLPOOL_REPLAY CLPOOL CLPOOL_PROBE TRACE_SUMMARY CLPOOL_SYNTH_TRACE LIBMOCKCL_SO
#                   LAYER_SO TRACE CASES
set -u
# shellcheck source=tools/dev/testing/test_lib.sh
source "$(dirname "$0")/../../tools/dev/testing/test_lib.sh" || exit 1  # fail, finish
REPLAY="$(realpath "$1")"
CLPOOL="$(realpath "$2")"
PROBE="$(realpath "$3")"
SUMMARY="$(realpath "$4")"
SYNTH="$(realpath "$5")"
MOCKCL="$(realpath "$6")"
LAYER="$(realpath "$7")"
TRACE="$(realpath "$8")"
CASES="$(realpath "$9")"
S="${TEST_TMPDIR:-$(mktemp -d)}/hostile"
W="$S/work"   # the working directory: every file in it is checked after each row
rm -rf "$S"
mkdir -p "$W"
cd "$W" || exit 1
export POCL_CACHE_DIR="$S/pocl-cache"
unset OPENCL_LAYERS
[[ -n "${ASAN_OPTIONS:-}" ]] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
sanitized() { [[ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]]; }
have_clinfo() { command -v clinfo >/dev/null && ! sanitized; }

# The inputs beside cases.txt, and an earlier output, libraries cut short, links, a directory and
# a FIFO nobody writes to.
cp -r "$(dirname "$CASES")/inputs" in
cp "$TRACE" T.trace
printf 'old svg\n' > old.svg
for n in 1000 5000 100000 1000000; do
  head -c "$n" "$MOCKCL" > "mock$n.so"
  head -c "$n" "$LAYER" > "layer$n.so"
done
cp "$LAYER" l.so
mkdir -p o dir
mkfifo fifo
ln -s x o/y               # a link to a file not yet written
ln -s T.trace T.link      # a link to an input
head -c 20000000 /dev/zero | { printf 'clpool-trace 1\n0 0 0 0 alloc 1 4096 buffer 0\n'; cat; } > zeros.trace
printf '\xef\xbb\xbfclpool-trace 1\n0 0 0 0 alloc 1 4096 buffer 0\n' > bom.trace
printf '\xef\xbb\xbfThread,Time,Action,Pointer,Size,Stream\n' > bom.csv
printf 'clpool-trace 2\nframe 1 py 1 a%%2 b\n' > badescape.trace
{ printf 'clpool-trace 2\nframe 1 py 1 a '; head -c 601 /dev/zero | tr '\0' x; printf '\n'; } > longname.trace
printf 'page = 4KiB\nheadroom = 0B\n' > unnamed.profile
# Frame names that would write to a terminal, break JSON (not UTF-8), end a <script> or an SVG
# element; a metadata comment with an OSC sequence; a trace whose file name holds one.
printf '%s\n' 'clpool-trace 2' '# device: %1B]0;pwned%07' \
  'frame 1 py 10 %1B]0;pwned%07evil.py %FF%FEbad%0Aname%00x' \
  'frame 2 native 0 %3C!--%3Cscript%3E%3C/script%3E%3Cscript%3Ealert(1)%3C/script%3E %E2%80%AEreversed%3C/svg%3E' \
  'stack 1 0 1' 'stack 2 1 2' \
  '0 0 0 0 alloc 1 4194304 buffer 0 2' '1 0 0 0 alloc 2 4194304 buffer 0 1' \
  '2 0 0 0 alloc 3 67108864 buffer 0 2' > names.trace
cp names.trace $'e\033]0;x\007.trace'
printf 'clpool-trace 1\n# device: \033]0;pwned\007 \033[2J\n0 0 0 0 alloc 1 4096 buffer 0\n' > meta.trace
head -c 10000000 /dev/zero | tr '\0' x > big.bin   # 10 MB with no newline
mockcl_icd vendors "$MOCKCL"
ln -s /dev/zero zero.icd
# 4 million events, outside the working directory (hashing it after every row would be slow).
LONG="$S/long.trace"
if ! sanitized; then
  awk 'BEGIN { print "clpool-trace 1"; for (i = 0; i < 2000000; i++) {
         print 2 * i, 0, 0, 0, "alloc", 1, 4096, "buffer", 0; print 2 * i + 1, 0, 0, 0, "free", 1, 4096, "buffer", 0 } }' > "$LONG"
fi

# Every file and link of the working directory, "PATH HASH" or "PATH -> TARGET", taken before and
# after each row. One md5sum for all the files: a process per file took about half the test's time.
snapshot() {
  {
    find . -type l -printf '%p -> %l\n'
    find . -type f -print0 | xargs -0 -r md5sum -z | tr '\0' '\n' | sed -E 's/^([0-9a-f]{32})  (.*)$/\2 \1/'
  } | LC_ALL=C sort
}

# shellcheck disable=SC2317  # called from cases.txt's `after` commands
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

# shellcheck disable=SC2317  # called from cases.txt's `after` commands
# parses FILE...: each .json is JSON, each .svg XML, and each .html page's three inline JSON
# documents (result, replay, data) parse and hold no '<' a name could end a <script> with.
parses() {
  /usr/bin/python3 - "$@" <<'PY'
import json, re, sys, xml.dom.minidom
for path in sys.argv[1:]:
    if path.endswith(".json"):
        json.load(open(path, encoding="utf-8"))
    elif path.endswith(".svg"):
        xml.dom.minidom.parse(path)
    else:
        page = open(path, encoding="utf-8").read()
        for island in ("clpool-result", "clpool-replay", "clpool-data"):
            pattern = r'<script type="application/json" id="%s">(.*?)</script>' % island
            data = re.search(pattern, page, re.S).group(1)
            json.loads(data)
            assert "<" not in data, "a frame name put a '<' in the page's " + island
PY
}

trim() { local s="$1"; s="${s#"${s%%[![:space:]]*}"}"; printf '%s' "${s%"${s##*[![:space:]]}"}"; }

# run_row LINE TOOL ENV FILES ARGS EXIT TEXT AFTER: one row of cases.txt.
run_row() {
  local line="$1" tool="$2" envs="$3" files="$4" args="$5" want="$6" text="$7" after="$8"
  local -a cmd=() env_words=() argv=() writes=()
  local stdin=/dev/null stdout=- word rc limit=60 failed=$fails label="cases.txt:$line: $tool $args"
  case "$tool" in
    replay) cmd=("$REPLAY") ;;
    clpool) cmd=("$CLPOOL") ;;
    probe) cmd=("$PROBE") ;;
    summary) cmd=("$SUMMARY") ;;
    synth) cmd=("$SYNTH") ;;
    clinfo) have_clinfo || { echo "skipped: $label (no clinfo, or a sanitizer)"; return; }; cmd=(clinfo) ;;
    summary64)
      sanitized && { echo "skipped: $label (a sanitizer)"; return; }
      # shellcheck disable=SC2016  # expanded by the inner shell
      cmd=(bash -c 'ulimit -v 65536 && exec "$0" "$@"' "$SUMMARY") ;;
    *) fail "$label: unknown tool '$tool'"; return ;;
  esac
  [[ "$envs" == - ]] || eval "env_words=($envs)"
  eval "argv=($args)"
  eval "text=\"$text\""
  for word in $files; do
    case "$word" in
      -) ;;
      '<'*) stdin="${word#<}" ;;
      '>&-') stdout=closed ;;
      '>'*) stdout="${word#>}"; [[ "$stdout" == /dev/* ]] || writes+=("$stdout") ;;
      +*) writes+=("${word#+}") ;;
      *) fail "$label: bad files word '$word'"; return ;;
    esac
  done
  [[ "$want" == 124 ]] && limit=2
  cases=$((cases + 1))
  local before after_snapshot
  before="$(snapshot)"
  local -a run=(env "${env_words[@]}" timeout -k 5 "$limit" "${cmd[@]}" "${argv[@]}")
  case "$stdout" in
    -) "${run[@]}" < "$stdin" > "$S/out" 2> "$S/err"; rc=$? ;;
    closed) "${run[@]}" < "$stdin" >&- 2> "$S/err"; rc=$?; : > "$S/out" ;;
    *) "${run[@]}" < "$stdin" > "$stdout" 2> "$S/err"; rc=$?; : > "$S/out" ;;
  esac
  out="$(cat "$S/out" "$S/err")"
  local err
  err="$(cat "$S/err")"
  if [[ $rc != "$want" ]]; then
    if [[ $rc == 124 ]]; then fail "$label: did not finish in $limit s (a hang)"
    elif ((rc >= 128)); then fail "$label: died of signal $((rc - 128))"
    else fail "$label: exit $rc, want $want"; fi
    head -5 <<<"$out" | sed 's/^/  | /'
    return
  fi
  local where="$out"
  [[ "$want" == 2 ]] && where="$err"
  [[ -z "$text" || "$where" == *"$text"* ]] ||
    { fail "$label: lacks '$text':"; head -5 <<<"$out" | sed 's/^/  | /'; }
  [[ "$want" != 2 || $(grep -c '' <<<"$err") -le 2 ]] ||
    { fail "$label: more than a message and one line of context:"; head -5 <<<"$err" | sed 's/^/  | /'; }
  after_snapshot="$(snapshot)"
  for word in "${writes[@]}"; do
    before="$(grep -v "^\./${word}[ ]" <<<"$before")"
    after_snapshot="$(grep -v "^\./${word}[ ]" <<<"$after_snapshot")"
  done
  [[ "$before" == "$after_snapshot" ]] ||
    { fail "$label: files changed"; diff <(echo "$before") <(echo "$after_snapshot") | head -5; }
  [[ -z "$after" ]] || eval "$after" || fail "$label: then '$after' failed"
  ((fails > failed)) || echo "ok: $label -> $rc"
}

cases=0 rows=0 line=0
while IFS= read -r row; do
  line=$((line + 1))
  [[ -z "$row" || "$row" == \#* ]] && continue
  rows=$((rows + 1))
  IFS='|' read -r tool envs files args want text after <<<"$row"
  text="${text# }"
  run_row "$line" "$(trim "$tool")" "$(trim "$envs")" "$(trim "$files")" "$(trim "$args")" \
    "$(trim "$want")" "${text% }" "$(trim "${after:-}")"
done < "$CASES"
# A table cut short, or a parse gone wrong, would pass on the rows it never ran.
((rows >= 100)) || fail "only $rows rows read from $CASES"
echo "$cases of $rows rows run"
finish
