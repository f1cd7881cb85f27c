#!/usr/bin/env bash
# Writes the C++ source that builds the profiles in: embed_profiles.sh OUT.cc FILE.profile...
# Each profile's name is its file's base name; its text is kept verbatim in a raw string.
# Used by //device_model:builtin_profiles_cc and by fuzz/oss-fuzz/build.sh.
set -euo pipefail
out="$1"
shift
{
  echo '// Generated from device_model/profiles/*.profile by device_model/embed_profiles.sh.'
  echo '#include <cstddef>'
  echo 'namespace clpool::device_model {'
  echo 'struct builtin_profile_text { const char* name; const char* text; };'
  echo 'extern const builtin_profile_text builtin_profiles[] = {'
  for f in "$@"; do
    if grep -q ')clpool_profile"' "$f"; then
      echo "embed_profiles.sh: $f contains the raw-string delimiter" >&2
      exit 1
    fi
    printf '  {"%s", R"clpool_profile(' "$(basename "$f" .profile)"
    cat "$f"
    echo ')clpool_profile"},'
  done
  echo '};'
  echo 'extern const std::size_t builtin_profile_count = sizeof builtin_profiles / sizeof builtin_profiles[0];'
  echo '}  // namespace clpool::device_model'
} > "$out"
