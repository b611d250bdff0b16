#!/usr/bin/env bash
# merge_scale.sh - time and memory that grow with the number of keys, each
# beside a linear reference (issue 21): the same at a tenth of the size,
# times 10. A linear figure prints a ratio near 1 (or below: fixed costs);
# a quadratic one near 10.
#
# 1. petstore-server start-up with a keys file of 100,000 keys (exec to the
#    base URL line), against 10,000 keys x 10.
# 2. petstore-load merge of 4 real shard reports of 80,000 keys each (a
#    --shard I/4 run of 320,000 keys against the server, one request per
#    key, --verify-limits): wall time and peak RSS, against 4 shards of
#    8,000 keys x 10. The shards' own runs (--keys loading of 320,000 keys)
#    are timed too.
#
# Usage: bench/loadgen/merge_scale.sh [BUILD_DIR]   (default: build)
# Env: BENCH_KEYS (default 80000, keys per shard; the server's figure uses
#      BENCH_SERVER_KEYS, default 100000).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
load="$build/bin/petstore-load"
server="$build/bin/petstore-server"
[ -x "$load" ] && [ -x "$server" ] || { echo "merge_scale.sh: build $build first" >&2; exit 2; }
per_shard=${BENCH_KEYS:-80000}
server_keys=${BENCH_SERVER_KEYS:-100000}

tmp=$(mktemp -d)
srv_pid=
cleanup() {
  [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

keys_file() { # N FILE: N keys of the pro plan with a high limit
  python3 -c "
import sys
n = int(sys.argv[1])
with open(sys.argv[2], 'w') as f:
    for i in range(n):
        f.write('bench-customer-key-%08d enterprise 1000 100000\n' % i)" "$1" "$2"
}

# Starts the server on KEYS_FILE; sets srv_pid, url and startup_s (exec to URL line).
start_server() {
  local out="$tmp/server.out"
  : >"$out"
  local t0 t1
  t0=$(date +%s.%N)
  "$server" --port 0 --no-seed --threads 2 --keys-file "$1" >"$out" 2>"$tmp/server.err" &
  srv_pid=$!
  for _ in $(seq 1 6000); do
    grep -q '^http' "$out" && break
    kill -0 "$srv_pid" 2>/dev/null || { cat "$tmp/server.err" >&2; exit 1; }
    sleep 0.01
  done
  t1=$(date +%s.%N)
  url=$(head -1 "$out")
  startup_s=$(python3 -c "print('%.3f' % ($t1 - $t0))")
}
stop_server() {
  kill "$srv_pid" && wait "$srv_pid" 2>/dev/null || true
  srv_pid=
}

echo "== petstore-server start-up: $server_keys keys against $((server_keys / 10)) x 10 =="
keys_file "$((server_keys / 10))" "$tmp/small.txt"
keys_file "$server_keys" "$tmp/big.txt"
start_server "$tmp/small.txt"
small_s=$startup_s
stop_server
start_server "$tmp/big.txt"
big_s=$startup_s
stop_server
python3 -c "
s, b = $small_s, $big_s
print('start-up: %d keys %.3f s; %d keys %.3f s; linear reference %.3f s; ratio %.2f'
      % ($((server_keys / 10)), s, $server_keys, b, 10 * s, b / (10 * s) if s > 0 else 0))"

# Runs 4 shards of N keys each (4N keys in all, one request per key) and merges them.
# Prints "run_s merge_s merge_rss_kb".
shards_and_merge() {
  local n=$1 dir="$tmp/m$1"
  mkdir -p "$dir"
  keys_file "$((4 * n))" "$dir/keys.txt"
  start_server "$dir/keys.txt"
  local t0 t1
  t0=$(date +%s.%N)
  for i in 1 2 3 4; do
    "$load" --base-url "$url" --keys "$dir/keys.txt" --shard "$i/4" --threads 2 --connections 16 \
      --requests "$n" --verify-limits --quiet --json "$dir/s$i.json" >/dev/null 2>"$dir/s$i.err" ||
      { echo "shard $i failed:" >&2; tail -3 "$dir/s$i.err" >&2; exit 1; }
  done
  t1=$(date +%s.%N)
  stop_server
  /usr/bin/time -f "%e %M" -o "$dir/time" "$load" merge "$dir"/s[1-4].json --verify-limits --quiet \
    --json "$dir/merged.json" 2>"$dir/merge.err" || { cat "$dir/merge.err" >&2; exit 1; }
  read -r merge_s rss <"$dir/time"
  python3 -c "print('%.2f %s %s' % ($t1 - $t0, '$merge_s', '$rss'))"
}

echo "== petstore-load merge: 4 shards of $per_shard keys against 4 of $((per_shard / 10)) x 10 =="
read -r run_small merge_small rss_small < <(shards_and_merge "$((per_shard / 10))")
read -r run_big merge_big rss_big < <(shards_and_merge "$per_shard")
python3 -c "
ks, kb = $((per_shard / 10)), $per_shard
print('shard runs (4, one request per key): %d keys each %.2f s; %d keys each %.2f s; linear reference %.2f s; ratio %.2f'
      % (ks, $run_small, kb, $run_big, 10 * $run_small, $run_big / (10 * $run_small)))
print('merge time: %d keys x 4 %.2f s; %d keys x 4 %.2f s; linear reference %.2f s; ratio %.2f'
      % (ks, $merge_small, kb, $merge_big, 10 * $merge_small, $merge_big / max(10 * $merge_small, 0.01)))
print('merge peak RSS: %d keys x 4 %.0f MB; %d keys x 4 %.0f MB; linear reference %.0f MB; ratio %.2f'
      % (ks, $rss_small / 1024, kb, $rss_big / 1024, 10 * $rss_small / 1024, $rss_big / (10 * $rss_small)))"
