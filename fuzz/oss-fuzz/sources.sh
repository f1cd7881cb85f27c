#!/usr/bin/env bash
# Writes fuzz/oss-fuzz/sources.txt, the repository sources of each fuzzer, from what Bazel compiles
# into it (bazel query deps(//fuzz:NAME)); build.sh, which has no Bazel, compiles those. With
# --check it writes nothing and fails when the file differs from what Bazel says (tools/test.sh,
# step 0), so a source added to a library cannot leave the OSS-Fuzz build behind.
#   fuzz/oss-fuzz/sources.sh [--check]
# A line: NAME: FILE... (repository paths; @builtin_profiles and @html_page_js are the two
# generated sources, device_model's built-in profiles and the replay page's script, which
# build.sh generates itself). fuzz/replay_main.cc, the corpus-replay
# main of the Bazel build, is left out: the engine brings its own main. The fuzzers are those
# tagged "fuzzer" in //fuzz, found as tools/dev/fuzz/fuzz.sh finds them; each must have its line in
# build.sh's FUZZERS (its flags), or both modes fail naming it.
set -euo pipefail
check=0
case "$#:${1:-}" in
  0:) ;;
  1:--check) check=1 ;;
  *) echo "sources.sh: unexpected arguments: $*; usage: fuzz/oss-fuzz/sources.sh [--check]" >&2; exit 2 ;;
esac
cd "$(git rev-parse --show-toplevel)"
mapfile -t FUZZERS < <(bazel query --noshow_progress 'attr(tags, "\bfuzzer\b", //fuzz/...)' \
  2>/dev/null | sed 's#^//fuzz:##' | sort)
((${#FUZZERS[@]})) || { echo "sources.sh: bazel query found no fuzzer tagged \"fuzzer\" in //fuzz" >&2; exit 1; }
for f in "${FUZZERS[@]}"; do
  grep -q "^  \"$f|" fuzz/oss-fuzz/build.sh || {
    echo "sources.sh: $f has no line in fuzz/oss-fuzz/build.sh's FUZZERS" >&2
    exit 1
  }
done
out="fuzz/oss-fuzz/sources.txt"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
{
  echo "# Written by fuzz/oss-fuzz/sources.sh from bazel query; do not edit."
  for f in "${FUZZERS[@]}"; do
    # One query: each label with its kind ("source file //pkg:x.cc", "genrule rule //pkg:name").
    deps="$(bazel query "deps(//fuzz:$f) except filter('^@', deps(//fuzz:$f))" \
      --output=label_kind 2>/dev/null)" || {
      echo "sources.sh: bazel query deps(//fuzz:$f) failed" >&2
      exit 1
    }
    files=()
    # Generated sources come from genrules; build.sh makes the two it knows.
    while IFS= read -r rule; do
      case "$rule" in
        //device_model:builtin_profiles_cc) files+=("@builtin_profiles") ;;
        //tools/replay:html_page_js) files+=("@html_page_js") ;;
        *)
          echo "sources.sh: $f needs $rule, a generated source build.sh does not make" >&2
          exit 1
          ;;
      esac
    done < <(sed -n 's|^genrule rule ||p' <<<"$deps")
    while IFS= read -r label; do
      path="${label#//}"
      path="${path/://}"
      path="${path#/}"  # a label in the root package: //:x -> x
      [[ "$path" == fuzz/replay_main.cc ]] || files+=("$path")
    done < <(sed -n 's|^source file //|//|p' <<<"$deps" | grep -E '\.(cc|c)$' | sort)
    echo "$f: ${files[*]}"
  done
} >"$tmp"
if ((check)); then
  if ! diff -u "$out" "$tmp" >&2; then
    echo "sources.sh: $out is stale: run fuzz/oss-fuzz/sources.sh and commit it" >&2
    exit 1
  fi
  echo "sources.sh: $out matches Bazel's sources" >&2
else
  cp "$tmp" "$out"
  echo "sources.sh: wrote $out" >&2
fi
