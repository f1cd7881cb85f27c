#!/usr/bin/env bash
# Builds PyOpenCL 2026.1.2 (nanobind) without network, from a directory of source archives, into a
# site directory that a program or a test puts on PYTHONPATH:
#
#   python/compat/build_pyopencl.sh SRC_DIR OUT_DIR
#   PYTHONPATH=OUT_DIR /usr/bin/python3 -c 'import pyopencl; print(pyopencl.VERSION_TEXT)'
#
# SRC_DIR holds `git archive` outputs of the public repositories (python/README.md, "PyOpenCL
# versions"); if it has a SHA256SUMS file, every archive must be listed there with its checksum
# (one that is not listed, or does not match, is named with the expected and the found sha256),
# else each archive's sha256 is printed, unchecked. Every archive is tested as gzip before the
# build (a corrupt one is named with its sha256). The build (minutes: python/README.md) is cached
# under ${CLPOOL_CACHE_DIR:-$HOME/.cache/clpool}/pyopencl-<key>, keyed by the archives' checksums,
# this script and the interpreter, so a second run only copies. It says what it builds and prints
# each step with the time since the start, and the compile's progress in tens of percent.
# OUT_DIR is replaced (it must be empty, missing, or a site this script made).
#
# Exit status: 0 built (or copied from the cache); 2 bad arguments; 3 an archive or a build tool
# is missing (the message names each and where to get it); 1 an archive not listed in SHA256SUMS,
# not matching it or corrupt, or the build itself failed.
set -euo pipefail

usage() {
  echo "usage: $0 SRC_DIR OUT_DIR   (PYTHON=/usr/bin/python3 by default)" >&2
  exit 2
}
die() { echo "build_pyopencl: $1" >&2; exit "${2:-1}"; }
start=$SECONDS
say() { echo "build_pyopencl: [$((SECONDS - start)) s] $*" >&2; }

[[ $# -eq 2 ]] || usage
src=$1
out=$2
python=${PYTHON:-/usr/bin/python3}
[[ -n "$src" && -n "$out" ]] || usage
[[ -d "$src" ]] || die "SRC_DIR '$src' is not a directory" 3

# The archives, each as `git archive` of the repository at the tag or commit named.
declare -A WHERE=(
  [pyopencl]="https://github.com/inducer/pyopencl, tag v2026.1.2"
  [compyte]="https://github.com/inducer/compyte, commit 46d7320a (PyOpenCL's submodule pyopencl/compyte at v2026.1.2)"
  [nanobind]="https://github.com/wjakob/nanobind, tag v2.15.0"
  [robin-map]="https://github.com/Tessil/robin-map, commit 4ec1bf19 (nanobind's submodule ext/robin_map at v2.15.0)"
  [pytools]="https://github.com/inducer/pytools, tag v2026.1.1"
  [typing_extensions]="https://github.com/python/typing_extensions, tag 4.12.2"
)
declare -A ARCHIVE=()
missing=()
for name in pyopencl compyte nanobind robin-map pytools typing_extensions; do
  matches=("$src"/"$name"-*.tar.gz)
  if [[ ! -f "${matches[0]}" ]]; then
    missing+=("  $name-*.tar.gz: git archive of ${WHERE[$name]}")
  elif ((${#matches[@]} > 1)); then
    die "more than one $name-*.tar.gz in $src: ${matches[*]}" 2
  else
    ARCHIVE[$name]=${matches[0]}
  fi
done
if ((${#missing[@]})); then
  printf 'build_pyopencl: %s lacks these source archives:\n%s\n' "$src" \
    "$(printf '%s\n' "${missing[@]}")" >&2
  exit 3
fi
[[ "$(basename "${ARCHIVE[pyopencl]}")" == pyopencl-2026.1.2.tar.gz ]] ||
  die "this script builds PyOpenCL 2026.1.2; found $(basename "${ARCHIVE[pyopencl]}")" 2

# The archives, checked before anything else: against SHA256SUMS when SRC_DIR has one (each must be
# listed), and as gzip (a corrupt one is named, not left to tar's own words mid-build).
declare -A SUM=()
for name in "${!ARCHIVE[@]}"; do SUM[$name]=$(sha256sum < "${ARCHIVE[$name]}" | cut -d' ' -f1); done
if [[ -f "$src/SHA256SUMS" ]]; then
  for name in pyopencl compyte nanobind robin-map pytools typing_extensions; do
    file=$(basename "${ARCHIVE[$name]}")
    expected=$(awk -v f="$file" '$2 == f || $2 == "*" f { print $1; exit }' "$src/SHA256SUMS")
    [[ -n "$expected" ]] ||
      die "$src/$file is not listed in $src/SHA256SUMS (found sha256 ${SUM[$name]}): not checked, so not built; list it, or use the archive that is listed" 1
    [[ "$expected" == "${SUM[$name]}" ]] ||
      die "$src/$file does not match $src/SHA256SUMS: expected sha256 $expected, found ${SUM[$name]} (a corrupt or different archive)" 1
  done
else
  for name in pyopencl compyte nanobind robin-map pytools typing_extensions; do
    echo "build_pyopencl: note: $src has no SHA256SUMS: $(basename "${ARCHIVE[$name]}") not checked (sha256 ${SUM[$name]})" >&2
  done
fi
for name in pyopencl compyte nanobind robin-map pytools typing_extensions; do
  if ! why=$(gzip -t < "${ARCHIVE[$name]}" 2>&1); then
    why=$(printf '%s' "$why" | tr '\n' ' ' | sed 's/^ *//; s/ *$//')
    die "$src/$(basename "${ARCHIVE[$name]}") is corrupt (sha256 ${SUM[$name]}): $why" 1
  fi
done

tools_missing=()
for tool in cmake make g++ sha256sum tar; do
  command -v "$tool" >/dev/null || tools_missing+=("$tool")
done
[[ -x "$python" ]] || tools_missing+=("$python")
[[ -f /usr/include/CL/cl.h ]] || tools_missing+=("/usr/include/CL/cl.h (opencl-headers)")
((${#tools_missing[@]} == 0)) ||
  die "missing build tools: ${tools_missing[*]} (tools/setup.sh installs them)" 3
"$python" -c 'import numpy, platformdirs' 2>/dev/null ||
  die "$python lacks numpy or platformdirs (python3-numpy, python3-platformdirs)" 3

# The cache key: the archives, this script, the interpreter's version and ABI.
key=$( {
  for name in pyopencl compyte nanobind robin-map pytools typing_extensions; do
    echo "${SUM[$name]}  -"
  done
  sha256sum < "$0"
  "$python" -c 'import sys, sysconfig; print(sys.version, sysconfig.get_config_var("SOABI"))'
} | sha256sum | cut -c1-16)
cache_root=${CLPOOL_CACHE_DIR:-${HOME:-/tmp}/.cache/clpool}
cached=$cache_root/pyopencl-2026.1.2-$key
marker=.clpool-pyopencl-site

if [[ ! -f "$cached/site/$marker" ]]; then
  say "building PyOpenCL 2026.1.2 (nanobind 2.15.0, pytools 2026.1.1, typing_extensions 4.12.2) for" \
    "$python from $(for n in pyopencl compyte nanobind robin-map pytools typing_extensions; do
      printf '%s ' "$(basename "${ARCHIVE[$n]}")"; done)into $cached (minutes; later runs copy it)"
  mkdir -p "$cache_root"
  work=$(mktemp -d "$cache_root/build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  say "1/4 unpacking the archives"
  # Each archive holds one top-level directory (git archive --prefix): strip it.
  x() { mkdir -p "$2" && tar -xzf "$1" -C "$2" --strip-components=1; }
  x "${ARCHIVE[pyopencl]}" "$work/pyopencl"
  x "${ARCHIVE[compyte]}" "$work/pyopencl/pyopencl/compyte"
  # `import nanobind` must work for PyOpenCL's CMake: a package directory holding nanobind's
  # __init__.py with its src/, include/, cmake/ and ext/ beside it.
  x "${ARCHIVE[nanobind]}" "$work/nanobind-tree"
  x "${ARCHIVE[robin-map]}" "$work/nanobind-tree/ext/robin_map"
  mkdir -p "$work/nbpkg/nanobind"
  cp "$work/nanobind-tree/src/__init__.py" "$work/nbpkg/nanobind/"
  for d in src include cmake ext; do cp -r "$work/nanobind-tree/$d" "$work/nbpkg/nanobind/"; done
  x "${ARCHIVE[pytools]}" "$work/pytools"
  x "${ARCHIVE[typing_extensions]}" "$work/typing_extensions"

  (
    cd "$work/pyopencl"
    mkdir build && cd build
    say "2/4 configuring the extension _cl (cmake)"
    PYTHONPATH="$work/nbpkg" cmake .. -DSKBUILD=1 -DSKBUILD_PROJECT_VERSION=2026.1.2 \
      -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$python" \
      -DPYTHON_EXECUTABLE="$python" > "$work/cmake.log" 2>&1 ||
      { tail -30 "$work/cmake.log" >&2; exit 1; }
    say "3/4 compiling _cl (make -j$(nproc) _cl; the log: $work/make.log while it runs)"
    # make's "[ 42%]" lines, as a progress line per ten percent.
    make -j"$(nproc)" _cl 2>&1 | tee "$work/make.log" | {
      shown=-10
      while IFS= read -r line; do
        [[ "$line" =~ ^\[\ *([0-9]+)%\] ]] || continue
        pct=${BASH_REMATCH[1]}
        if ((pct >= shown + 10)); then shown=$((pct / 10 * 10)); say "3/4 compiling _cl: $pct%"; fi
      done
    } || { tail -40 "$work/make.log" >&2; exit 1; }
  ) || die "the build failed (logs above)" 1
  say "4/4 assembling the site (pyopencl, pytools, typing_extensions, a siphash24 stand-in)"

  site=$work/site
  mkdir -p "$site"
  cp -r "$work/pyopencl/pyopencl" "$site/"
  find "$work/pyopencl/build" -maxdepth 2 -name '_cl*.so' -exec cp {} "$site/pyopencl/" \;
  ls "$site"/pyopencl/_cl*.so >/dev/null 2>&1 || die "the build made no _cl*.so" 1
  cp -r "$work/pytools/pytools" "$site/"
  cp "$work/typing_extensions/src/typing_extensions.py" "$site/"
  # pytools imports siphash13 from siphash24, a C extension Debian 12 does not package; pytools
  # stores it as a class attribute and uses it only for cache keys, so a class over hashlib's
  # BLAKE2 stands in (same interface: update, digest, hexdigest).
  cat > "$site/siphash24.py" <<'EOF'
"""Stand-in for the siphash24 extension (not packaged by Debian 12), made by clpool's
python/compat/build_pyopencl.sh: pytools uses siphash13 only for cache keys."""
import hashlib


class siphash13:  # noqa: N801 (the extension's name)
    digest_size = 8

    def __init__(self, data=b""):
        self._h = hashlib.blake2b(digest_size=8)
        if data:
            self._h.update(data)

    def update(self, data):
        self._h.update(data)

    def digest(self):
        return self._h.digest()

    def hexdigest(self):
        return self._h.hexdigest()

    def intdigest(self):
        return int.from_bytes(self._h.digest(), "little")

    def copy(self):
        c = siphash13()
        c._h = self._h.copy()
        return c


siphash24 = siphash13
EOF
  # pyopencl.VERSION_TEXT comes from the distribution's metadata; without it Debian's 2022.3.1
  # metadata would answer.
  for dist in pyopencl:2026.1.2 pytools:2026.1.1 typing_extensions:4.12.2; do
    name=${dist%%:*} version=${dist#*:}
    mkdir -p "$site/$name-$version.dist-info"
    printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$name" "$version" \
      > "$site/$name-$version.dist-info/METADATA"
  done
  echo "PyOpenCL 2026.1.2 site built by clpool's python/compat/build_pyopencl.sh" > "$site/$marker"
  PYTHONPATH="$site" "$python" -c 'import pyopencl, pyopencl.array, pyopencl.tools
assert pyopencl.VERSION_TEXT == "2026.1.2", pyopencl.VERSION_TEXT' ||
    die "the built PyOpenCL does not import" 1
  rm -rf "$cached"
  mkdir -p "$cached"
  mv "$site" "$cached/site"
else
  say "PyOpenCL 2026.1.2 for $python already built in $cached: copying it"
fi

# OUT_DIR: replaced only when it is empty, missing, or a site this script made.
if [[ -e "$out" ]]; then
  [[ -d "$out" ]] || die "OUT_DIR '$out' exists and is not a directory" 2
  if [[ -n "$(ls -A "$out")" && ! -f "$out/$marker" ]]; then
    die "OUT_DIR '$out' is not empty and was not made by this script; not replacing it" 2
  fi
  rm -rf "$out"
fi
mkdir -p "$(dirname "$out")"
cp -r "$cached/site" "$out"
say "PyOpenCL 2026.1.2 in $out (PYTHONPATH=$out)"
