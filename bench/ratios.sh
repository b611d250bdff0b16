#!/usr/bin/env bash
# ratios.sh - every speed ratio of issue 32 in one run, each side measured
# in the same minute against the same nginx:
#
#   http    petstore-load --threads 1 --connections 32 against wrk -t1 -c32,
#           nginx `return 200` (66-byte JSON): client CPU us/req, req/s
#   https   the same over TLS (nginx terminating it, a CA made here)
#   server  petstore-server --threads 1 against nginx `return 200` with the
#           server's own list bytes, both driven by wrk -t1 -c32: the server
#           process's CPU us/req (its /proc times over the requests wrk counted)
#
# Each pair alternates BENCH_RUNS times (default 3); the medians and the
# ratios in requests per CPU-second are printed (goals: 1.5x wrk over http
# and https, 1.3x nginx for the server). Nothing is asserted: on a shared
# machine req/s swings with the neighbours, CPU per request much less.
#
# BENCH_COUNTS=1 adds the figures that do not depend on the machine's load:
# user-space instructions per request of petstore-load and wrk (valgrind
# --tool=callgrind, the difference of a 6 s and a 3 s run, so start-up
# cancels out, TLS handshakes left out) and syscalls per request of every side (strace -c -f).
#
# Usage: bench/ratios.sh [BUILD_DIR]   (default: build; a RelWithDebInfo or
# Release tree is what the figures in bench/*/README.md were taken with)
# Env: BENCH_SECONDS (default 3), BENCH_RUNS (default 3), BENCH_COUNTS=1.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
load="$build/bin/petstore-load"
server="$build/bin/petstore-server"
for f in "$load" "$server"; do [ -x "$f" ] || { echo "ratios.sh: $f not built" >&2; exit 2; }; done
for tool in wrk curl openssl; do
  command -v "$tool" >/dev/null || { echo "ratios.sh: $tool not installed" >&2; exit 2; }
done
. bench/lib.sh
bench_nginx_find
secs=${BENCH_SECONDS:-3}
runs=${BENCH_RUNS:-3}
key=bench-key-0001

tmp=$(mktemp -d)
chmod 755 "$tmp"
srv_pid=
cleanup() {
  [ -n "$srv_pid" ] && { kill "$srv_pid" 2>/dev/null || true; wait "$srv_pid" 2>/dev/null || true; }
  bench_nginx_stop
  rm -rf "$tmp"
}
trap cleanup EXIT

# the server first: nginx serves its list's bytes
"$server" --port 0 --key "$key:enterprise:1000000000000:1000000000000" --threads 1 --no-seed \
  >"$tmp/server.url" 2>"$tmp/server.err" &
srv_pid=$!
for _ in $(seq 100); do [ -s "$tmp/server.url" ] && break; sleep 0.05; done
[ -s "$tmp/server.url" ] || { echo "ratios.sh: petstore-server did not start" >&2; cat "$tmp/server.err" >&2; exit 1; }
surl=$(head -n1 "$tmp/server.url")
for i in $(seq 20); do
  curl -sf -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    -d "{\"name\":\"category $i\",\"description\":\"a benchmark category\"}" "$surl/categories" >/dev/null
done
list=$(curl -sf -H "Authorization: Bearer $key" "$surl/categories")
small='[{"id":1,"name":"Dog","description":"Domestic dogs of all breeds"}]'
small=${small:0:66}

bench_tls_cert "$tmp"
tls_port=$(bench_free_port)
bench_nginx_start "$tmp" \
  "location = /v1/categories { default_type application/json; return 200 '$small'; }
   location = /list/v1/categories { default_type application/json; return 200 '$list'; }" \
  "keepalive_requests 100000000;
   server { listen 127.0.0.1:$tls_port ssl; ssl_certificate $tmp/tls.pem; ssl_certificate_key $tmp/tls.key;
     location = /v1/categories { default_type application/json; return 200 '$small'; } }"
base="http://127.0.0.1:$BENCH_NGINX_PORT/v1"
tbase="https://127.0.0.1:$tls_port/v1"
curl -sf "http://127.0.0.1:$BENCH_NGINX_PORT/list/v1/categories" | cmp -s - <(printf '%s' "$list") ||
  { echo "ratios.sh: nginx does not serve the server's list" >&2; exit 1; }

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
jnum() { sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" "$1" | head -n1; }

# wrk_client URL [WRK_ARGS]: sets RPS, N and US (wrk's own CPU us/req)
wrk_client() {
  local url=$1 ms
  shift
  bench_run_cpu ms wrk -t1 -c32 -d"${secs}s" "$@" "$url" >"$tmp/wrk.txt"
  RPS=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk.txt")
  N=$(awk '/requests in/ {print $1}' "$tmp/wrk.txt")
  US=$(bench_us_per_req "$ms" "$N")
}
# load_client BASE_URL [ARGS]: the same for petstore-load
load_client() {
  local url=$1 ms
  shift
  bench_run_cpu ms "$load" --quiet --base-url "$url" --api-key "$key" --threads 1 --connections 32 \
    --duration "${secs}s" --json "$tmp/load.json" "$@"
  RPS=$(jnum "$tmp/load.json" throughput_rps)
  N=$(jnum "$tmp/load.json" answered)
  US=$(bench_us_per_req "$ms" "$N")
}
# target PID URL: wrk drives URL; sets RPS and US (PID's CPU us/req)
target() {
  local pid=$1 url=$2 before after
  before=$(bench_cpu_ms "$pid")
  wrk_client "$url" -H "Authorization: Bearer $key"
  after=$(bench_cpu_ms "$pid")
  US=$(bench_us_per_req $((after - before)) "$N")
}

declare -A rps us
add() { rps[$1]+="$2 "; us[$1]+="$3 "; }
echo "ratios.sh: $runs alternating runs of ${secs}s each, 1 client thread, 32 connections;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$runs"); do
  wrk_client "$base/categories"; add wrk_http "$RPS" "$US"
  load_client "$base"; add load_http "$RPS" "$US"
  wrk_client "$tbase/categories"; add wrk_https "$RPS" "$US"
  load_client "$tbase" --cacert "$tmp/ca.pem"; add load_https "$RPS" "$US"
  target "$BENCH_NGINX_PID" "http://127.0.0.1:$BENCH_NGINX_PORT/list/v1/categories"; add nginx "$RPS" "$US"
  target "$srv_pid" "$surl/categories"; add server "$RPS" "$US"
  echo "  run $r done"
done

declare -A mr mu
printf '\n%-34s %12s %14s   %s\n' "" "req/s" "CPU us/req" "(runs: CPU us/req)"
row() { # row NAME LABEL
  # shellcheck disable=SC2086
  mr[$1]=$(median ${rps[$1]}) mu[$1]=$(median ${us[$1]})
  printf '%-34s %12.0f %14.2f   (%s)\n' "$2" "${mr[$1]}" "${mu[$1]}" "${us[$1]% }"
}
row wrk_http "http   wrk (client CPU)"
row load_http "http   petstore-load (client CPU)"
row wrk_https "https  wrk (client CPU)"
row load_https "https  petstore-load (client CPU)"
row nginx "server nginx return 200 (its CPU)"
row server "server petstore-server (its CPU)"
echo
echo "ratios, requests per CPU-second (medians), throughput beside:"
echo "  http   petstore-load/wrk:           $(bench_ratio "${mu[wrk_http]}" "${mu[load_http]}")x" \
  "(goal 1.5x; throughput $(bench_ratio "${mr[load_http]}" "${mr[wrk_http]}")x)"
echo "  https  petstore-load/wrk:           $(bench_ratio "${mu[wrk_https]}" "${mu[load_https]}")x" \
  "(goal 1.5x; throughput $(bench_ratio "${mr[load_https]}" "${mr[wrk_https]}")x)"
echo "  server petstore-server/nginx r200:  $(bench_ratio "${mu[nginx]}" "${mu[server]}")x" \
  "(goal 1.3x; throughput $(bench_ratio "${mr[server]}" "${mr[nginx]}")x)"

[ "${BENCH_COUNTS:-0}" = 1 ] || exit 0

echo
echo "== counts that do not depend on the machine's load (per request)"
# callgrind_ir OUT CMD...: runs CMD under callgrind (its stdout to OUT) and
# prints the instructions counted in all its threads, less the TLS
# handshakes (SSL_do_handshake, inclusive; SSL_connect calls it): under
# valgrind they take seconds, and how many complete in a run varies
callgrind_ir() {
  local out=$1
  shift
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" >"$out" 2>/dev/null
  callgrind_annotate --inclusive=yes "$tmp/cg.out" 2>/dev/null | awk '
    /PROGRAM TOTALS/ { gsub(",", "", $1); t = $1 }
    /:SSL_do_handshake / && !h { gsub(",", "", $1); h = $1 }
    END { printf "%d", t - h }'
}
# Per request: the difference of a 3 s and a 6 s run, so start-up and the
# report cancel out
ir_load() { # ir_load BASE_URL [ARGS]
  local url=$1 a b na nb
  shift
  a=$(callgrind_ir /dev/null "$load" --quiet --base-url "$url" --api-key "$key" --threads 1 \
    --connections 32 --duration 3s --json "$tmp/ir1.json" "$@")
  b=$(callgrind_ir /dev/null "$load" --quiet --base-url "$url" --api-key "$key" --threads 1 \
    --connections 32 --duration 6s --json "$tmp/ir3.json" "$@")
  na=$(jnum "$tmp/ir1.json" answered) nb=$(jnum "$tmp/ir3.json" answered)
  awk -v a="$a" -v b="$b" -v na="$na" -v nb="$nb" 'BEGIN { printf "%.0f", (b - a) / (nb - na) }'
}
ir_wrk() { # ir_wrk URL
  local a b na nb
  a=$(callgrind_ir "$tmp/w1" wrk -t1 -c32 -d3s "$1")
  b=$(callgrind_ir "$tmp/w3" wrk -t1 -c32 -d6s "$1")
  na=$(awk '/requests in/ {print $1}' "$tmp/w1") nb=$(awk '/requests in/ {print $1}' "$tmp/w3")
  awk -v a="$a" -v b="$b" -v na="$na" -v nb="$nb" 'BEGIN { printf "%.0f", (b - a) / (nb - na) }'
}
if command -v valgrind >/dev/null; then
  echo "user-space instructions per request (callgrind; TLS handshakes left out):"
  echo "  http   wrk $(ir_wrk "$base/categories"), petstore-load $(ir_load "$base")"
  echo "  https  wrk $(ir_wrk "$tbase/categories"), petstore-load $(ir_load "$tbase" --cacert "$tmp/ca.pem")"
else
  echo "(valgrind not installed: no instruction counts)"
fi

# syscalls_per_req FILE N: the calls strace -c counted, less the ones that
# are not per request (sleeps, start-up), per request
syscalls_per_req() {
  awk -v n="$2" '$NF ~ /^(read|write|readv|writev|sendto|recvfrom|sendmsg|recvmsg|ioctl|epoll_wait|epoll_pwait|epoll_pwait2|epoll_ctl|sendfile)$/ {
      c[$NF] = $4; t += $4 }
    END { printf "%.2f (", t / n; sep = ""
      for (k in c) if (c[k] / n >= 0.005) { printf "%s%s %.2f", sep, k, c[k] / n; sep = ", " }
      printf ")" }' "$1"
}
if command -v strace >/dev/null; then
  echo "syscalls per request (strace -c -f; read/write/epoll family):"
  strace -f -c -o "$tmp/s.wrk" wrk -t1 -c32 -d2s "$base/categories" >"$tmp/w.txt"
  echo "  http   wrk           $(syscalls_per_req "$tmp/s.wrk" "$(awk '/requests in/ {print $1}' "$tmp/w.txt")")"
  strace -f -c -o "$tmp/s.load" "$load" --quiet --base-url "$base" --api-key "$key" --threads 1 \
    --connections 32 --duration 2s --json "$tmp/s.json"
  echo "  http   petstore-load $(syscalls_per_req "$tmp/s.load" "$(jnum "$tmp/s.json" answered)")"
  strace -f -c -o "$tmp/s.wrk" wrk -t1 -c32 -d2s "$tbase/categories" >"$tmp/w.txt"
  echo "  https  wrk           $(syscalls_per_req "$tmp/s.wrk" "$(awk '/requests in/ {print $1}' "$tmp/w.txt")")"
  strace -f -c -o "$tmp/s.load" "$load" --quiet --base-url "$tbase" --cacert "$tmp/ca.pem" --api-key "$key" \
    --threads 1 --connections 32 --duration 2s --json "$tmp/s.json"
  echo "  https  petstore-load $(syscalls_per_req "$tmp/s.load" "$(jnum "$tmp/s.json" answered)")"
  # the servers: strace attached while wrk drives them
  for side in nginx server; do
    if [ "$side" = nginx ]; then
      pid=$(pgrep -P "$BENCH_NGINX_PID" | head -n1) url="http://127.0.0.1:$BENCH_NGINX_PORT/list/v1/categories"
    else
      pid=$srv_pid url="$surl/categories"
    fi
    strace -f -c -p "$pid" -o "$tmp/s.$side" 2>/dev/null &
    spid=$!
    sleep 0.5
    wrk -t1 -c32 -d2s -H "Authorization: Bearer $key" "$url" >"$tmp/w.txt"
    sleep 0.2
    kill -INT "$spid" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
    printf '  server %-13s %s\n' "$side" "$(syscalls_per_req "$tmp/s.$side" "$(awk '/requests in/ {print $1}' "$tmp/w.txt")")"
  done
else
  echo "(strace not installed: no syscall counts)"
fi
