#!/usr/bin/env bash
# Runs every row of cases.txt: each tool over each hostile input. A row passes when the exit
# status is the expected one (never a signal: that would be >= 128), the expected text is on one
# line of stderr (of the output for exit 0 and 1), an exit-2 row prints at most one more line,
# and every input file is byte-identical afterwards (nothing lost).
set -u
REPLAY="$(realpath "$1")"
SYNTH="$(realpath "$2")"
SUMMARY="$(realpath "$3")"
HERE="$(dirname "$(realpath "$4")")"   # cases.txt; its inputs lie beside it
S="${TEST_TMPDIR:-/tmp}/hostile"
rm -rf "$S" && mkdir -p "$S/hostile" "$S/t/dir"
cp "$HERE"/* "$S/hostile/"
mkfifo "$S/t/fifo"
F="$S/hostile"
sums() { (cd "$F" && sha256sum * | sort); }
before="$(sums)"
fails=0 rows=0
while IFS= read -r row; do
  [[ -z "$row" || "$row" == \#* ]] && continue
  rows=$((rows + 1))
  IFS='|' read -r tool envs stdin args want text <<<"$row"
  tool="$(echo $tool)"; envs="$(echo $envs)"; stdin="$(echo $stdin)"; want="$(echo $want)"
  args="${args# }"; args="${args% }"; text="${text# }"
  args="${args//@F\//$F/}"; args="${args//@T\//$S/t/}"
  case "$tool" in
    replay) cmd=("$REPLAY" --no-progress) ;;
    synth) cmd=("$SYNTH") ;;
    summary) cmd=("$SUMMARY") ;;
    *) echo "FAIL: bad tool '$tool' in: $row"; fails=$((fails + 1)); continue ;;
  esac
  read -r -a argv <<<"$args"
  env_words=()
  [[ "$envs" != "-" ]] && read -r -a env_words <<<"$envs"
  input=/dev/null
  [[ "$stdin" != "-" ]] && input="$F/$stdin"
  limit=60
  [[ "$args" == *fifo* && "$want" == 124 ]] && limit=2
  out="$(env "${env_words[@]}" timeout -k 5 "$limit" "${cmd[@]}" "${argv[@]}" < "$input" 2>"$S/stderr")"
  rc=$?
  err="$(cat "$S/stderr")"
  what="$tool $envs < $stdin: ${argv[*]}"
  if [[ "$rc" != "$want" ]]; then
    echo "FAIL: $what -> exit $rc, want $want"; echo "$err" | head -5; fails=$((fails + 1)); continue
  fi
  if ((rc >= 128)); then echo "FAIL: $what died of a signal ($rc)"; fails=$((fails + 1)); continue; fi
  haystack="$err"
  [[ "$want" == 0 || "$want" == 1 ]] && haystack="$out"$'\n'"$err"
  if [[ -n "$text" ]] && ! grep -qF -- "$text" <<<"$haystack"; then
    echo "FAIL: $what: no line contains '$text':"; echo "$haystack" | head -5; fails=$((fails + 1)); continue
  fi
  # The message and at most one line of context ("N valid events came before it", "Run with
  # --help"): no stack traces, no aborts' noise.
  if [[ "$want" == 2 && "$(wc -l <<<"$err")" -gt 2 ]]; then
    echo "FAIL: $what: more than a one-line message:"; echo "$err"; fails=$((fails + 1)); continue
  fi
  if [[ "$(sums)" != "$before" ]]; then
    echo "FAIL: $what changed an input"; fails=$((fails + 1)); before="$(sums)"; continue
  fi
  echo "ok: $what -> $rc"
done < "$HERE/cases.txt"
((rows >= 40)) || { echo "FAIL: only $rows rows read"; fails=$((fails + 1)); }
if ((fails)); then echo "$fails of $rows rows failed"; exit 1; fi
echo "all $rows rows passed"
