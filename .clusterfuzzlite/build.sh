#!/bin/bash -eu
# ClusterFuzzLite's entry point: the shared build script (no Bazel inside the engines).
exec bash "$SRC/clpool/fuzz/oss-fuzz/build.sh"
