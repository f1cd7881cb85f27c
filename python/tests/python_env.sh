# What the Python test runners share (python/tests/run_py_test.sh, run_plugin_test.sh and
# examples/ci/python/example_test.sh), sourced by each:
#
#   clpool_site CORE_SO PACKAGE_DIR SITE     SITE/clpool: the package's .py files and _core.so
#   pyopencl_site_of FILE                    the site directory of the PyOpenCL package FILE is in,
#                                            as the runfiles tree has it (symlinks, not realpath's)
#   clpool_caches TMP                        POCL's and PyOpenCL's caches under TMP: a test's programs
#                                            never come from another run's (another configuration's,
#                                            another device's binaries)
#   clpool_sanitizer_env CORE_SO [pocl]      under --config=asan (CORE_SO links libasan): the
#                                            runtimes preloaded into the uninstrumented interpreter
#                                            (and so into its children), no leak check (Python frees
#                                            little at exit); with `pocl`, the instrumented mockcl,
#                                            which runs no kernels by default, asked for POCL (for
#                                            tests that check what kernels computed)

# From the repository's root or Bazel's runfiles root: preload_env.
# shellcheck source=tools/dev/testing/test_lib.sh
source tools/dev/testing/test_lib.sh

clpool_site() {
  mkdir -p "$3/clpool"
  cp "$2"/*.py "$3/clpool/"
  cp "$1" "$3/clpool/_core.so"
}

pyopencl_site_of() {
  (cd "$(dirname "$1")/.." && pwd)
}

clpool_caches() {
  export POCL_CACHE_DIR="$1/pocl-cache" XDG_CACHE_HOME="$1/xdg-cache"
}

clpool_sanitizer_env() {
  preload_env "$1"
  if ((${#preload_env[@]})); then
    export "${preload_env[@]:1}"
    if [[ "${2:-}" == pocl ]]; then
      export MOCKCL_BACKING=pocl
    fi
  fi
}
