#!/usr/bin/env bash
# Writes a C++ source defining one string constant with a file's text, verbatim in a raw string:
#   embed_text.sh OUT.cc NAMESPACE SYMBOL FILE
# (//tools/replay:html_page_js: the --html page's script). Refuses a file holding the raw
# string's delimiter, or "</script" (which would end the page's script element early).
set -euo pipefail
out="$1" ns="$2" symbol="$3" file="$4"
if grep -q ')clpool_text"' "$file"; then
  echo "embed_text.sh: $file contains the raw-string delimiter" >&2
  exit 1
fi
if grep -qi '</script' "$file"; then
  echo "embed_text.sh: $file contains </script, which would end the page's script early" >&2
  exit 1
fi
{
  echo "// Generated from $file by tools/replay/embed_text.sh."
  echo "namespace $ns {"
  printf 'extern const char %s[] = R"clpool_text(' "$symbol"
  cat "$file"
  echo ')clpool_text";'
  echo "}  // namespace $ns"
} > "$out"
