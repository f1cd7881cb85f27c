#!/bin/bash
# Offline stand-in for Bazel's coverage output generator (the Java LcovMerger that
# remote_coverage_tools would download). Bazel's collect_coverage.sh runs it as
#   lcov_merger --coverage_dir=DIR --output_file=FILE [--filter_sources=REGEX]...
#               [--source_file_manifest=FILE] [--sources_to_replace_file=FILE]
# and as the coverage_report_generator (--combined_report=lcov) as
#   lcov_merger --reports_file=FILE --output_file=FILE
# It concatenates the lcov tracefiles it is given (*.dat under DIR, or those REPORTS_FILE lists)
# into FILE, which lcov and genhtml read as one report, and says on stderr that nothing else is
# done offline: no gcov output converted, no source filtered. FILE is always written, so that
# `bazel coverage` runs and a test's verdict stands.
set -uo pipefail
dir="" output="" reports=""
for arg in "$@"; do
  case "$arg" in
    --coverage_dir=*) dir="${arg#*=}" ;;
    --output_file=*) output="${arg#*=}" ;;
    --reports_file=*) reports="${arg#*=}" ;;
  esac
done
if [[ -z "$output" ]]; then
  echo "lcov_merger (clpool's offline stand-in): no --output_file= given" >&2
  exit 2
fi
inputs=()
if [[ -n "$dir" && -d "$dir" ]]; then
  while IFS= read -r -d '' f; do
    [[ "$f" -ef "$output" ]] || inputs+=("$f")
  done < <(find "$dir" -name '*.dat' -type f -print0 | sort -z)
fi
if [[ -n "$reports" && -f "$reports" ]]; then
  while IFS= read -r f; do
    [[ -n "$f" && -f "$f" && ! "$f" -ef "$output" ]] && inputs+=("$f")
  done < "$reports"
fi
mkdir -p "$(dirname "$output")"
if ((${#inputs[@]})); then cat -- "${inputs[@]}" > "$output.tmp"; else : > "$output.tmp"; fi
mv -f "$output.tmp" "$output"
echo "lcov_merger (clpool's offline stand-in): coverage merging is not available offline;" \
  "concatenated ${#inputs[@]} lcov file(s) into $output (gcov output is not converted)" >&2
