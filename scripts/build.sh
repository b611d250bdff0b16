#!/usr/bin/env bash
# build.sh [DIR [CMAKE_ARGS...]] - configures and builds one build tree
# (default: build/, warnings as errors). Programs land in DIR/bin.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -DPETSTORE_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)" -- --no-print-directory
