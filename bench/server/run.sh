#!/usr/bin/env bash
# run.sh - petstore-server against nginx serving the same JSON, in one run.
#
# GET /v1/categories with wrk -t1 -c32 against nginx (1 worker, static file,
# access_log off) and petstore-server --threads 1 (enterprise key, huge
# limits), alternating, BENCH_RUNS times (default 3): for each side req/s and
# the server process's CPU microseconds per request (utime+stime from
# /proc/PID/stat over the requests wrk counted), medians, and the ratios
# petstore/nginx of throughput and of requests per CPU-second (goal >= 1.0x
# both); petstore-server --threads 1 and 2 under wrk -t2 -c64 for scaling;
# POST (every request a create) without and with --data (journal, one
# fdatasync per batch).
#
# usage: bench/server/run.sh [BUILD_DIR] [DURATION]   (defaults: build, 5s)
# Prints one line per measurement and the ratios; exits non-zero if a tool is
# missing or a server does not start. It asserts no speed (a shared machine's
# figures swing; CPU us/req holds steadier than req/s). Everything listens on
# 127.0.0.1 only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
dur=${2:-5s}
runs=${BENCH_RUNS:-3}
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

# measure PID WRK_ARGS...: runs wrk, sets RPS (req/s) and US (PID's CPU us per request)
measure() {
  local pid=$1 before after out n
  shift
  before=$(bench_cpu_ms "$pid")
  out=$(wrk "$@")
  after=$(bench_cpu_ms "$pid")
  RPS=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  US=$(bench_us_per_req $((after - before)) "$n")
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
# line LABEL RPS US
line() { printf '%-32s %10.0f req/s %8.2f us/req\n' "$1" "$2" "$3"; }

start_server url1 --threads 1 --no-seed
spid1=${pids[-1]}
# the same bytes for nginx: the server's own list
for i in $(seq 20); do
  curl -sf -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
       -d "{\"name\":\"category $i\",\"description\":\"a benchmark category\"}" "$url1/categories" >/dev/null
done
mkdir -p "$tmp/www/v1"
curl -sf -H "Authorization: Bearer $key" "$url1/categories" >"$tmp/www/v1/categories"
bytes=$(wc -c <"$tmp/www/v1/categories")

# keepalive_requests: nginx 1.22 closes a connection after 1000 requests by
# default; the server never does, so neither side reconnects during a run
bench_nginx_start "$tmp" \
  "root $tmp/www; location = /v1/categories { default_type application/json; }" \
  "keepalive_requests 100000000;"
nport=$BENCH_NGINX_PORT
curl -sf "http://127.0.0.1:$nport/v1/categories" | cmp -s - "$tmp/www/v1/categories" ||
  { echo "run.sh: nginx does not serve the file" >&2; cat "$tmp/error.log" "$tmp/nginx.err" >&2; exit 1; }

echo "GET /v1/categories, $bytes-byte JSON body, wrk -t1 -c32 -d$dur, $runs runs each (alternating), medians"
nr=() nu=() pr=() pu=()
for _ in $(seq "$runs"); do
  measure "$BENCH_NGINX_PID" -t1 -c32 -d"$dur" -H "Authorization: Bearer $key" "http://127.0.0.1:$nport/v1/categories"
  nr+=("$RPS") nu+=("$US")
  measure "$spid1" -t1 -c32 -d"$dur" -H "Authorization: Bearer $key" "$url1/categories"
  pr+=("$RPS") pu+=("$US")
done
n1=$(median "${nr[@]}") nus=$(median "${nu[@]}") p1=$(median "${pr[@]}") pus=$(median "${pu[@]}")
line "nginx (1 worker)" "$n1" "$nus"
line "petstore-server --threads 1" "$p1" "$pus"
echo "  runs: nginx ${nr[*]} req/s, ${nu[*]} us/req; petstore ${pr[*]} req/s, ${pu[*]} us/req"
echo "ratio petstore/nginx: throughput $(bench_ratio "$p1" "$n1")x, requests per CPU-second $(bench_ratio "$nus" "$pus")x (goal >= 1.0x both)"

echo "scaling, wrk -t2 -c64 -d$dur"
measure "$spid1" -t2 -c64 -d"$dur" -H "Authorization: Bearer $key" "$url1/categories"
q1=$RPS
line "petstore-server --threads 1" "$RPS" "$US"
stop_last_server
start_server url2 --threads 2 --no-seed
measure "${pids[-1]}" -t2 -c64 -d"$dur" -H "Authorization: Bearer $key" "$url2/categories"
q2=$RPS
line "petstore-server --threads 2" "$RPS" "$US"
echo "ratio threads 2/1: $(bench_ratio "$q2" "$q1")x (2 cores, shared with wrk)"
stop_last_server

echo "POST /v1/categories (every request a create), wrk -t1 -c32 -d$dur -s post.lua"
start_server url3 --threads 1 --no-seed
measure "${pids[-1]}" -t1 -c32 -d"$dur" -s "$here/post.lua" -H "Authorization: Bearer $key" "$url3/categories"
m=$RPS
line "petstore-server, memory only" "$RPS" "$US"
stop_last_server
start_server url4 --threads 1 --no-seed --data "$tmp/journal"
measure "${pids[-1]}" -t1 -c32 -d"$dur" -s "$here/post.lua" -H "Authorization: Bearer $key" "$url4/categories"
j=$RPS
line "petstore-server, --data" "$RPS" "$US"
echo "ratio --data/memory: $(bench_ratio "$j" "$m")x (group commit: one write + fdatasync per batch)"
stop_last_server
