#!/usr/bin/env bash
# Installs the Debian 12 packages clpool needs, only when some are missing.
# Idempotent: with everything present it costs one dpkg-query (well under a second).
set -euo pipefail

PACKAGES=(
  # Build: Bazel 4.2.3 and its platforms repository, the C++ toolchains.
  bazel-bootstrap bazel-platforms g++ clang-14 libclang-rt-14-dev
  # Test and benchmark libraries.
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  # OpenCL: the ICD loader, headers, POCL's CPU device and real clients.
  ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-headers pocl-opencl-icd clinfo python3-pyopencl
  # Real OpenCL programs on POCL and on mockcl (//tools/dev/real_programs: hashcat_test, clpeak_test);
  # piglit is not installed here (it pulls in Mesa); where it is, tools/test.sh's step 7 runs its
  # OpenCL api tests, and its whole cl profile is a manual test.
  hashcat clpeak
  # The formatters and linters (tools/dev/lint/check_format.sh, tools/test.sh's step 0).
  clang-format-14 black flake8 python3-pyflakes
  # PyOpenCL's own test files on clpool's pool (tools/test.sh, when CLPOOL_PYOPENCL_SRC is set).
  python3-pytest
  # The pytest plugin's tests with several workers (python/clpool/pytest_plugin.py).
  python3-pytest-xdist
  # Python bindings (python/): pybind11, the CPython headers, numpy for PageLockedMemoryPool.
  pybind11-dev python3-pybind11 python3-dev python3-numpy
  # Native stacks in traces (stacks/): libunwind, opened at run time; without it the capture falls
  # back to glibc's backtrace, about six times slower (tools/layer/README.md).
  libunwind8
  # Tools: command-line parsing, JSON, formatting.
  libcli11-dev nlohmann-json3-dev libfmt-dev
  # The install test (tools/install_test.sh): a consumer built with pkg-config and with CMake.
  cmake pkg-config
  # The HTML page's browser test (//tools/replay:html_browser_test): headless Chromium, its
  # WebDriver and Selenium.
  chromium chromium-driver python3-selenium
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "clpool setup: missing packages: ${missing[*]}" >&2
    echo "clpool setup: run as root (or install them with apt-get) and try again." >&2
    exit 1
  fi
  echo "clpool setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q "${missing[@]}" >&2
fi
