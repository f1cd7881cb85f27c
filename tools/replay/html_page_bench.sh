#!/usr/bin/env bash
# How long clpool_replay takes to write the --html page of a trace of 1,000,000 blocks (a benchmark,
# not a test; tools/replay/README.md, "The page"):
#   bazel run --config=opt //tools/replay:html_page_bench [-- RUNS [BLOCKS]]
# The trace: 200 sites (stacks), blocks of 4 KiB to 4 MiB that live 1 to 5,000 events, every block
# freed by the end (2,000,000 events), written once to $TMPDIR; replayed on 64 GiB with the exact
# profile and with the nvidia one, RUNS times each (default 3), alternating; prints each run's wall
# time and the minimum and median per profile.
set -euo pipefail
REPLAY="$(realpath "${CLPOOL_REPLAY:-tools/replay/clpool_replay}")"
RUNS="${1:-3}"
BLOCKS="${2:-1000000}"
DIR="${TMPDIR:-/tmp}/clpool_html_bench"
mkdir -p "$DIR"
TRACE="$DIR/blocks_$BLOCKS.trace"
if [[ ! -s $TRACE ]]; then
  /usr/bin/python3 - "$TRACE" "$BLOCKS" <<'PY'
import heapq, random, sys
path, blocks = sys.argv[1], int(sys.argv[2])
rng = random.Random(5)
with open(path + ".tmp", "w") as f:
    f.write("clpool-trace 2\n")
    for s in range(1, 201):
        f.write(f"frame {s} py {s} /app/model.py layer_{s}\nstack {s} 0 {s}\n")
    due, next_id, seq = [], 1, 0
    while next_id <= blocks or due:
        if due and (due[0][0] <= seq or next_id > blocks):
            _, i = heapq.heappop(due)
            f.write(f"{seq} {seq * 100} 0 0 free {i} 0 buffer 0\n")
        else:
            size = rng.choice((4096, 65536, 1 << 20, 4 << 20))
            f.write(f"{seq} {seq * 100} 0 0 alloc {next_id} {size} buffer 0 {rng.randint(1, 200)}\n")
            heapq.heappush(due, (seq + rng.randint(1, 5000), next_id))
            next_id += 1
        seq += 1
PY
  mv "$TRACE.tmp" "$TRACE"
fi
echo "trace: $TRACE ($BLOCKS blocks, $(grep -c ' alloc ' "$TRACE") alloc events); load average $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A times
for ((run = 1; run <= RUNS; ++run)); do
  for profile in exact nvidia; do
    start=$EPOCHREALTIME
    "$REPLAY" --no-progress "$TRACE" --capacity 64GiB --profile "$profile" --html "$DIR/page.html" >/dev/null 2>&1 ||
      { echo "clpool_replay failed" >&2; exit 1; }
    end=$EPOCHREALTIME
    t=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f", b - a}')
    times[$profile]+="$t "
    printf 'run %d, %s profile: page written in %.2f s (%d bytes)\n' "$run" "$profile" "$t" "$(stat -c %s "$DIR/page.html")"
  done
done
for profile in exact nvidia; do
  echo "${times[$profile]}" | tr ' ' '\n' | sed '/^$/d' | sort -n |
    awk -v p="$profile" '{a[NR]=$1} END {printf "%s profile: min %.2f s, median %.2f s over %d runs\n", p, a[1], a[int((NR+1)/2)], NR}'
done
