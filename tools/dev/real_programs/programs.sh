# The programs real_program.sh runs: check_PROGRAM runs PROGRAM on POCL and on mockcl (the `on`
# helper), sets command_text, result_pocl, result_mock, seconds_pocl and seconds_mock, and calls
# `fail` for each way mockcl's run differs from what it should be. Sourced by real_program.sh.

# An exit report of mockcl's ("objects alive at process exit") in a run's output, or nothing.
left_at_exit() { grep -o 'mockcl: objects alive at process exit: .*' "$out/$1.out" || true; }

check_hashcat() {
  local hash=5d41402abc4b2a76b9719d911017c592  # md5 of "hello"
  local -a cmd=(hashcat -m 0 -a 3 --backend-ignore-cuda -D 1,2 --force "$hash" '?l?l?l?l?l')
  command_text="${cmd[*]}"
  local device name
  for device in pocl mockcl; do
    name="hashcat-$device"
    MOCKCL_DEVICES=gpu-2g on "$device" "$name" "${cmd[@]}"
    local result="exit $status"
    grep -q "$hash:hello" "$out/$name.out" && result="$result, cracked (hello)"
    [[ "$device" == pocl ]] && { result_pocl="$result"; seconds_pocl=$seconds; }
    [[ "$device" == mockcl ]] && { result_mock="$result"; seconds_mock=$seconds; }
    ((status == 0)) || fail "hashcat on $device exited $status: $(grep -m1 -oE '[A-Za-z]+\(\): CL_[A-Z_]+|Not enough [a-z ]+' "$out/$name.out" || true)"
    grep -q "$hash:hello" "$out/$name.out" || fail "hashcat on $device did not print $hash:hello"
  done
  local left
  left="$(left_at_exit hashcat-mockcl)"
  [[ -z "$left" ]] || fail "hashcat on mockcl: $left"
}

# clpeak's figure named NAME (a line "NAME : VALUE") in a run's output, or nothing.
clpeak_figure() { sed -n "s/^ *$2 *: *\([0-9.]*\).*/\1/p" "$out/$1.out" | head -1; }

check_clpeak() {
  local -a cmd=(clpeak --kernel-latency --transfer-bandwidth)
  command_text="${cmd[*]}"
  on pocl clpeak-pocl "${cmd[@]}"
  local pocl_status=$status
  seconds_pocl=$seconds
  on mockcl clpeak-mockcl "${cmd[@]}"
  seconds_mock=$seconds
  local device name lat map
  for device in pocl mockcl; do
    name="clpeak-$device"
    lat="$(clpeak_figure "$name" 'Kernel launch latency')"
    map="$(clpeak_figure "$name" 'enqueueMapBuffer(for read)')"
    local result="exit $([[ $device == pocl ]] && echo "$pocl_status" || echo "$status"), latency ${lat:-none} us, map ${map:-none} GB/s"
    [[ "$device" == pocl ]] && result_pocl="$result" || result_mock="$result"
  done
  ((pocl_status == 0)) || fail "clpeak on POCL exited $pocl_status"
  ((status == 0)) || fail "clpeak on mockcl exited $status"
  lat="$(clpeak_figure clpeak-mockcl 'Kernel launch latency')"
  map="$(clpeak_figure clpeak-mockcl 'enqueueMapBuffer(for read)')"
  awk -v x="${lat:-0}" 'BEGIN { exit !(x > 0) }' ||
    fail "clpeak on mockcl: kernel launch latency '${lat:-none}' us (its profiling times are not real)"
  awk -v x="${map:-0}" 'BEGIN { exit !(x > 100) }' ||
    fail "clpeak on mockcl: enqueueMapBuffer ${map:-none} GB/s, a host copy's speed"
  local left
  left="$(left_at_exit clpeak-mockcl)"
  [[ -z "$left" ]] || fail "clpeak on mockcl: $left"
}

check_piglit() {
  local -a cmd=(piglit run -j 2 -l quiet)
  [[ -z "${PIGLIT_INCLUDE:-}" ]] || cmd+=(-t "$PIGLIT_INCLUDE")
  cmd+=(cl)
  command_text="${cmd[*]}"
  on pocl piglit-pocl "${cmd[@]}" "$out/piglit-results-pocl"
  seconds_pocl=$seconds
  ((status == 0)) || fail "piglit on POCL exited $status"
  on mockcl piglit-mockcl "${cmd[@]}" "$out/piglit-results-mockcl"
  seconds_mock=$seconds
  ((status == 0)) || fail "piglit on mockcl exited $status"
  local compare
  compare="$(/usr/bin/python3 "$here/piglit_compare.py" "$out/piglit-results-pocl" "$out/piglit-results-mockcl" \
    "$here/piglit_expected.tsv")" || fail "piglit: results differ from POCL's"
  echo "$compare"
  result_pocl="$(sed -n 's/^pocl: //p' <<<"$compare")"
  result_mock="$(sed -n 's/^mockcl: //p' <<<"$compare")"
}
