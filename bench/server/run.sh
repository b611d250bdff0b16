#!/usr/bin/env bash
# run.sh - petstore-server against nginx serving the same JSON, in one run.
#
# GET /v1/categories with wrk -t1 -c32 against nginx (1 worker, static file,
# access_log off) and petstore-server --threads 1, then the ratio (goal:
# >= 0.6x); petstore-server --threads 2 for scaling; POST throughput without
# and with --data (journal, fdatasync per batch).
#
# usage: bench/server/run.sh [BUILD_DIR] [DURATION]   (defaults: build, 5s)
# Prints one line per measurement and the ratios; exits non-zero if a tool is
# missing or a server does not start, or (with BENCH_MIN_RATIO=0.6 etc. in
# the environment) if the GET ratio petstore/nginx is below it. Everything
# listens on 127.0.0.1 only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
dur=${2:-5s}
server="$build/bin/petstore-server"
for tool in wrk curl python3; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool not found" >&2; exit 2; }
done
. "$root/bench/lib.sh"
bench_nginx_find
[ -x "$server" ] || { echo "run.sh: $server not built (cmake --build $build --target petstore-server)" >&2; exit 2; }

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  bench_nginx_stop
  rm -rf "$tmp"
}
trap cleanup EXIT

key=bench-key

# start_server OUTVAR ARGS...: starts petstore-server, sets OUTVAR to its base URL
start_server() {
  local var=$1; shift
  local out="$tmp/server.$RANDOM.out"
  "$server" --port 0 --key "$key:enterprise:1000000000000:1000000000000" "$@" >"$out" 2>"$out.err" &
  pids+=($!)
  for _ in $(seq 100); do
    [ -s "$out" ] && break
    sleep 0.05
  done
  [ -s "$out" ] || { echo "run.sh: petstore-server did not start:" >&2; cat "$out.err" >&2; exit 1; }
  printf -v "$var" '%s' "$(head -1 "$out")"
}
stop_last_server() {
  local p=${pids[-1]}
  kill "$p"; wait "$p" 2>/dev/null || true
  unset 'pids[-1]'
}

# rps WRK_ARGS...: prints wrk's Requests/sec
rps() {
  wrk "$@" | awk '/^Requests\/sec:/ {print $2}'
}

start_server url1 --threads 1 --no-seed
# the same bytes for nginx: the server's own list
for i in $(seq 20); do
  curl -sf -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
       -d "{\"name\":\"category $i\",\"description\":\"a benchmark category\"}" "$url1/categories" >/dev/null
done
mkdir -p "$tmp/www/v1"
curl -sf -H "Authorization: Bearer $key" "$url1/categories" >"$tmp/www/v1/categories"
bytes=$(wc -c <"$tmp/www/v1/categories")

bench_nginx_start "$tmp" \
  "root $tmp/www; location = /v1/categories { default_type application/json; }"
nport=$BENCH_NGINX_PORT
curl -sf "http://127.0.0.1:$nport/v1/categories" | cmp -s - "$tmp/www/v1/categories" ||
  { echo "run.sh: nginx does not serve the file" >&2; cat "$tmp/error.log" "$tmp/nginx.err" >&2; exit 1; }

echo "GET /v1/categories, $bytes-byte JSON body, wrk -t1 -c32 -d$dur"
n1=$(rps -t1 -c32 -d"$dur" -H "Authorization: Bearer $key" "http://127.0.0.1:$nport/v1/categories")
echo "nginx (1 worker)              : $n1 req/s"
p1=$(rps -t1 -c32 -d"$dur" -H "Authorization: Bearer $key" "$url1/categories")
echo "petstore-server --threads 1   : $p1 req/s"
python3 -c "print('ratio petstore/nginx          : %.2fx (goal >= 0.60x)' % ($p1/$n1))"
if [ -n "${BENCH_MIN_RATIO:-}" ] && ! python3 -c "import sys; sys.exit(0 if $p1/$n1 >= $BENCH_MIN_RATIO else 1)"; then
  echo "run.sh: GET ratio below BENCH_MIN_RATIO=$BENCH_MIN_RATIO" >&2
  exit 1
fi

echo "scaling, wrk -t2 -c64 -d$dur"
q1=$(rps -t2 -c64 -d"$dur" -H "Authorization: Bearer $key" "$url1/categories")
echo "petstore-server --threads 1   : $q1 req/s"
stop_last_server
start_server url2 --threads 2 --no-seed
q2=$(rps -t2 -c64 -d"$dur" -H "Authorization: Bearer $key" "$url2/categories")
echo "petstore-server --threads 2   : $q2 req/s"
python3 -c "print('ratio threads 2/1             : %.2fx (2 cores shared with wrk)' % ($q2/$q1))"
stop_last_server

echo "POST /v1/categories (creates), wrk -t1 -c32 -d$dur -s post.lua"
start_server url3 --threads 1 --no-seed
m=$(rps -t1 -c32 -d"$dur" -s "$here/post.lua" -H "Authorization: Bearer $key" "$url3/categories")
echo "petstore-server, memory only  : $m req/s"
stop_last_server
start_server url4 --threads 1 --no-seed --data "$tmp/journal"
j=$(rps -t1 -c32 -d"$dur" -s "$here/post.lua" -H "Authorization: Bearer $key" "$url4/categories")
echo "petstore-server, --data       : $j req/s (group commit: one fdatasync per batch)"
python3 -c "print('ratio --data/memory           : %.2fx' % ($j/$m))"
stop_last_server
