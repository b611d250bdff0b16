#!/usr/bin/env bash
# run.sh - how long the whole conformance suite takes against the reference
# server ("the whole suite takes seconds"), in one run with its peer.
#
# RUNS times (default 5): petstore-conform, every check, against
# petstore-server --time-scale 60 (the 429 suite waits out a 1 s window),
# then the same with --skip 'limit429.*' (no waiting at all). Peer: one curl
# process sending the same number of GET requests over one keep-alive
# connection, i.e. the bare HTTP cost of that many exchanges; the ratios say
# how much of the suite is checking and waiting rather than HTTP.
#
# usage: bench/runner/run.sh [BUILD_DIR] [RUNS]   (defaults: build, 5)
# Prints one line per run, medians and ratios; exits non-zero if a run does
# not pass or a tool is missing. Everything listens on 127.0.0.1 only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
runs=${2:-5}
conform="$build/bin/petstore-conform"
server="$build/bin/petstore-server"
for f in "$conform" "$server"; do
  [ -x "$f" ] || { echo "run.sh: $f not built (cmake --build $build)" >&2; exit 2; }
done
for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool not found" >&2; exit 2; }
done

tmp=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
  rm -rf "$tmp"
}
trap cleanup EXIT

# Fresh server per run so every run starts from empty windows.
start_server() {
  "$server" --port 0 --no-seed --time-scale 60 --key bench-main:pro --key bench-limit:free \
    --key bench-peer:enterprise:1000000000:1000000000 >"$tmp/url" 2>"$tmp/server.err" &
  server_pid=$!
  for _ in $(seq 200); do [ -s "$tmp/url" ] && break; sleep 0.02; done
  url=$(head -n1 "$tmp/url")
  [ -n "$url" ] || { echo "run.sh: server did not start: $(cat "$tmp/server.err")" >&2; exit 2; }
}
stop_server() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; : >"$tmp/url"; }

now() { python3 -c 'import time; print(time.monotonic())'; }
elapsed() { python3 -c "print('%.3f' % ($2 - $1))"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

full=() skip=() peer=()
for i in $(seq "$runs"); do
  for mode in full skip; do
    start_server
    args=(--base-url "$url" --plan pro --limit-key bench-limit --limit-plan free --json "$tmp/r.json")
    [ "$mode" = skip ] && args+=(--skip 'limit429.*')
    t0=$(now)
    PETSTORE_API_KEY=bench-main "$conform" "${args[@]}" >"$tmp/out" 2>&1 || {
      echo "run.sh: run $i ($mode) did not pass:" >&2; tail -20 "$tmp/out" >&2; exit 1; }
    t1=$(now)
    s=$(elapsed "$t0" "$t1")
    n=$(python3 -c "import json; d=json.load(open('$tmp/r.json')); print(d['exchanges'])")
    if [ "$mode" = full ]; then
      full+=("$s"); full_n=$n
      # Peer: the same number of requests, one curl process, one connection.
      urls=()
      for _ in $(seq "$n"); do urls+=("$url/categories"); done
      t0=$(now)
      curl -s -H "Authorization: Bearer bench-peer" "${urls[@]}" >/dev/null
      t1=$(now)
      peer+=("$(elapsed "$t0" "$t1")")
      echo "run $i: whole suite ${s}s ($n exchanges); curl, $n GETs: ${peer[-1]}s"
    else
      skip+=("$s")
      echo "run $i: without the 429 suite ${s}s ($n exchanges)"
    fi
    stop_server
  done
done

mf=$(median "${full[@]}") ms=$(median "${skip[@]}") mp=$(median "${peer[@]}")
echo
echo "median over $runs runs: whole suite ${mf}s, without limit429.* ${ms}s, curl peer (${full_n} GETs) ${mp}s"
python3 - "$mf" "$ms" "$mp" <<'EOF'
import sys
full, skip, peer = map(float, sys.argv[1:])
print("ratio whole suite / curl peer: %.1fx (the rest is the 429 window the suite waits out)" % (full / max(peer, 1e-3)))
print("ratio suite without limit429 / curl peer: %.1fx" % (skip / max(peer, 1e-3)))
EOF
