#!/usr/bin/env bash
# loaded-ctest.sh [BUILD_DIR [RUNS [CTEST_ARGS...]]] - runs a built tree's ctest
# at -j4 RUNS times in a row beside a busy CPU (a shell loop spinning on one
# core), as CI machines are loaded; stops at the first failing run. Proves the
# suite waits for states rather than for time (issue 11). Defaults: build, 5.
# Example: scripts/loaded-ctest.sh build-asan 5 -LE 'bench|browser|peer|fuzz|slow'
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
runs=${2:-5}
shift 2 2>/dev/null || shift $#
if [ ! -f "$dir/CTestTestfile.cmake" ]; then
  echo "loaded-ctest: $dir is not a configured build tree (scripts/build.sh $dir first)" >&2
  exit 2
fi
sh -c 'while :; do :; done' &
hog=$!
trap 'kill $hog 2>/dev/null' EXIT

case "$dir" in
  *asan*) export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:exitcode=86" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86" ;;
  *tsan*) export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ;;
esac
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  if (cd "$dir" && ctest -j4 --output-on-failure --timeout 600 "$@" >"ctest-loaded-$i.log" 2>&1); then
    echo "loaded-ctest: run $i/$runs passed in $(( $(date +%s) - start )) s ($(grep -E 'tests passed' "$dir/ctest-loaded-$i.log"))"
  else
    echo "loaded-ctest: run $i/$runs FAILED; log: $dir/ctest-loaded-$i.log" >&2
    grep -E '\*\*\*|Failed|tests passed' "$dir/ctest-loaded-$i.log" | tail -15 >&2
    exit 1
  fi
done
echo "loaded-ctest: $runs of $runs runs passed beside a busy CPU"
