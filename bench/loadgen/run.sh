#!/usr/bin/env bash
# run.sh - petstore-load's speed, rate accuracy and memory, each against a
# peer measured in the same run (figures drift between runs and machines;
# the ratios are what to compare).
#
# 1. Closed model, one thread, 32 connections, 5 s against nginx (1 worker,
#    access_log off, a static 66-byte JSON at /v1/categories): wrk -t1 -c32
#    and petstore-load --threads 1 --connections 32: req/s, each client's CPU
#    microseconds per request (its rusage over the requests it completed) and
#    nginx's, and the ratios petstore-load/wrk.
#    The same over https: nginx terminating TLS (`return 200`, a certificate
#    from a CA made here), wrk against petstore-load's epoll engine with TLS
#    (and its curl engine), the ratio printed beside the http one.
# 2. Open model at 1k, 10k, 50k and 100k req/s: sent and answered rate vs
#    asked, the generator's lateness (p50, p99), its CPU microseconds per
#    request and its verdict.
# 3. The knee petstore-load search finds (p99 < 25 ms) against nginx
#    `return 200` and the bundled server, their ratio, and the CPU
#    microseconds per request of the generator and of the target beside
#    each (not with BENCH_QUICK=1).
# 4. Peak memory (VmHWM via /usr/bin/time) of a 10 s fixed-rate run, and of a
#    100 s one when BENCH_LONG=1 (too slow for CI).
#
# Usage: bench/loadgen/run.sh [BUILD_DIR]   (default: build)
# Env: BENCH_SECONDS (default 5), BENCH_QUICK=1 skips the knee and memory, BENCH_LONG=1 adds 100 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
load="$build/bin/petstore-load"
[ -x "$load" ] || { echo "run.sh: $load not built" >&2; exit 2; }
command -v wrk >/dev/null || { echo "run.sh: wrk not installed" >&2; exit 2; }
. bench/lib.sh
bench_nginx_find
secs=${BENCH_SECONDS:-5}

tmp=$(mktemp -d)
chmod 755 "$tmp"
cleanup() {
  bench_nginx_stop
  rm -rf "$tmp"
}
trap cleanup EXIT

# Exactly 66 bytes, like the anchors' measurements.
printf '[{"id":1,"name":"Dog","description":"Domestic dogs of all breeds"}]' >"$tmp/categories.json"
truncate -s 66 "$tmp/categories.json"

# https: a CA and a certificate for 127.0.0.1 made here (wrk does not verify;
# petstore-load does, with --cacert, as a user would).
have_tls=0
if command -v openssl >/dev/null &&
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/ca.key" -out "$tmp/ca.pem" -days 2 \
    -subj "/CN=bench CA" 2>/dev/null &&
  openssl req -newkey rsa:2048 -nodes -keyout "$tmp/tls.key" -out "$tmp/tls.csr" -subj "/CN=127.0.0.1" 2>/dev/null &&
  printf 'subjectAltName=IP:127.0.0.1\n' >"$tmp/ext.cnf" &&
  openssl x509 -req -in "$tmp/tls.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" -CAcreateserial \
    -out "$tmp/tls.pem" -days 2 -extfile "$tmp/ext.cnf" 2>/dev/null; then
  have_tls=1
  chmod 644 "$tmp/tls.key"
fi
tls_port=$(bench_free_port)
tls_server=""
[ "$have_tls" = 1 ] && tls_server="server { listen 127.0.0.1:$tls_port ssl; ssl_certificate $tmp/tls.pem;
    ssl_certificate_key $tmp/tls.key; location = /v1/categories { default_type application/json;
    return 200 '$(cat "$tmp/categories.json")'; } }"

bench_nginx_start "$tmp" \
  "location = /v1/categories { default_type application/json; alias $tmp/categories.json; }
   location = /r200/v1/categories { default_type application/json; return 200 '$(cat "$tmp/categories.json")'; }" \
  "keepalive_requests 100000000; $tls_server"
base="http://127.0.0.1:$BENCH_NGINX_PORT/v1"
echo "nginx $("$BENCH_NGINX_BIN" -v 2>&1 | sed 's/.*\///') on $base, 66-byte JSON"

jnum() { # jnum FILE NAME: a top-level number member of a petstore-load JSON
  sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" "$1" | head -n1
}

echo
echo "== closed model, 1 thread, 32 connections, ${secs}s"
# each client's CPU (its rusage) over the requests it completed; nginx's too
n_before=$(bench_cpu_ms "$BENCH_NGINX_PID")
bench_run_cpu wrk_ms wrk -t1 -c32 -d"${secs}s" "$base/categories" >"$tmp/wrk.txt"
n_mid=$(bench_cpu_ms "$BENCH_NGINX_PID")
wrk_rps=$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk.txt")
wrk_n=$(awk '/requests in/ {print $1}' "$tmp/wrk.txt")
bench_run_cpu pl_ms "$load" --quiet --base-url "$base" --api-key bench-key-0001 --threads 1 --connections 32 \
  --duration "${secs}s" --json "$tmp/closed.json"
n_after=$(bench_cpu_ms "$BENCH_NGINX_PID")
pl_rps=$(jnum "$tmp/closed.json" throughput_rps)
pl_n=$(jnum "$tmp/closed.json" answered)
wrk_us=$(bench_us_per_req "$wrk_ms" "$wrk_n")
pl_us=$(bench_us_per_req "$pl_ms" "$pl_n")
printf '%-14s %10.0f req/s %8s client CPU us/req %8s nginx CPU us/req\n' \
  wrk "$wrk_rps" "$wrk_us" "$(bench_us_per_req $((n_mid - n_before)) "$wrk_n")" \
  petstore-load "$pl_rps" "$pl_us" "$(bench_us_per_req $((n_after - n_mid)) "$pl_n")"
echo "ratio petstore-load/wrk: throughput $(bench_ratio "$pl_rps" "$wrk_rps") (target >= 0.70)," \
  "requests per CPU-second $(bench_ratio "$wrk_us" "$pl_us")"
http_ratio=$(bench_ratio "$wrk_us" "$pl_us")

if [ "$have_tls" = 1 ]; then
  echo
  echo "== https, nginx terminating TLS (return 200), closed model, 1 thread, 32 connections, ${secs}s"
  tbase="https://127.0.0.1:$tls_port/v1"
  bench_run_cpu twrk_ms wrk -t1 -c32 -d"${secs}s" "$tbase/categories" >"$tmp/twrk.txt"
  twrk_rps=$(awk '/Requests\/sec/ {print $2}' "$tmp/twrk.txt")
  twrk_n=$(awk '/requests in/ {print $1}' "$tmp/twrk.txt")
  bench_run_cpu tpl_ms "$load" --quiet --base-url "$tbase" --cacert "$tmp/ca.pem" --api-key bench-key-0001 \
    --threads 1 --connections 32 --duration "${secs}s" --json "$tmp/tls.json"
  tpl_rps=$(jnum "$tmp/tls.json" throughput_rps)
  tpl_n=$(jnum "$tmp/tls.json" answered)
  bench_run_cpu tcu_ms "$load" --quiet --base-url "$tbase" --cacert "$tmp/ca.pem" --api-key bench-key-0001 \
    --threads 1 --connections 32 --duration "${secs}s" --engine curl --json "$tmp/tlscurl.json"
  tcu_rps=$(jnum "$tmp/tlscurl.json" throughput_rps)
  tcu_n=$(jnum "$tmp/tlscurl.json" answered)
  twrk_us=$(bench_us_per_req "$twrk_ms" "$twrk_n")
  tpl_us=$(bench_us_per_req "$tpl_ms" "$tpl_n")
  tcu_us=$(bench_us_per_req "$tcu_ms" "$tcu_n")
  printf '%-22s %10.0f req/s %8s client CPU us/req\n' wrk "$twrk_rps" "$twrk_us" \
    "petstore-load (epoll)" "$tpl_rps" "$tpl_us" "petstore-load (curl)" "$tcu_rps" "$tcu_us"
  echo "ratio petstore-load/wrk, requests per CPU-second: http ${http_ratio}, https $(bench_ratio "$twrk_us" "$tpl_us")" \
    "(target >= 1.0; throughput https $(bench_ratio "$tpl_rps" "$twrk_rps"); curl engine https $(bench_ratio "$twrk_us" "$tcu_us"))"
else
  echo
  echo "== https: skipped (no openssl)"
fi

echo
echo "== closed model, curl engine (--engine curl: proxies, HTTP/2) against the epoll one, 1 thread, 32 connections, ${secs}s"
"$load" --quiet --base-url "$base" --api-key bench-key-0001 --threads 1 --connections 32 \
  --duration "${secs}s" --engine curl --json "$tmp/curl.json"
curl_rps=$(jnum "$tmp/curl.json" throughput_rps)
awk -v e="$pl_rps" -v c="$curl_rps" 'BEGIN {
  printf "epoll engine  %10.0f req/s\ncurl engine   %10.0f req/s\nratio curl/epoll: %.2f\n", e, c, c / e }'

echo
echo "== open model, rate accuracy and lateness (2 threads, 64 connections, ${secs}s each)"
# the generator's own figures (docs/capacity-testing.md): what it sent, how
# late requests left (send time - due time), and its verdict; a saturated
# generator exits 3, which here is a result, not an error
printf '%10s %10s %10s %9s %9s %9s %9s %6s  %s\n' asked sent/s answered/s late_p50 late_p99 p99_ms cpu_us/req exit \
  generator
for rate in 1000 10000 50000 100000; do
  rc=0
  "$load" --quiet --base-url "$base" --api-key bench-key-0001 --threads 2 --connections 64 \
    --rate "$rate" --duration "${secs}s" --json "$tmp/rate.json" || rc=$?
  python3 - "$tmp/rate.json" "$rate" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["generator"]
# the generator's CPU (user + system, the whole process) per request sent
cpu_us = (g["process_user_cpu_s"] + g["process_sys_cpu_s"]) * 1e6 / max(g["sent"] + g["warmup_requests"], 1)
print("%10s %10.1f %10.1f %8.3fms %8.3fms %9.3f %9.2f %6s  %s" % (
    sys.argv[2], g["send_rate_rps"], d["throughput_rps"], g["lateness_us"]["p50"] / 1e3,
    g["lateness_us"]["p99"] / 1e3, d["latency_us"]["corrected"]["p99"] / 1e3, cpu_us, sys.argv[3], g["verdict"]))
PY
done

peak() { # peak SECONDS RATE
  /usr/bin/time -v "$load" --quiet --base-url "$base" --api-key bench-key-0001 --threads 2 \
    --connections 64 --rate "$2" --duration "$1s" --hdr-log "$tmp/peak.hlog" \
    --json "$tmp/peak.json" 2>"$tmp/time.txt" >/dev/null
  kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$tmp/time.txt")
  printf '%5ss at %6s req/s: peak RSS %6.1f MiB, %s requests\n' "$1" "$2" "$(awk -v k="$kb" 'BEGIN{print k/1024}')" \
    "$(jnum "$tmp/peak.json" requests)"
}
if [ "${BENCH_QUICK:-0}" = 1 ]; then exit 0; fi

# The knee: petstore-load search (docs/capacity-testing.md), p99 < 25 ms,
# 2 s steps after 1 s warm-up, from 2k req/s, against nginx `return 200` and
# against the bundled server (one event loop, an enterprise key with a limit
# out of reach). Beside each knee: the CPU microseconds per request of the
# generator (its rusage over the whole search) and of the target (its
# /proc times), over the requests the search sent (each step's send rate
# times its warm-up and step). Exit 3 means the generator saturated first:
# the knee is beyond what this machine's generator can offer, and the bench
# says so.
knee() { # knee NAME BASE_URL TARGET_PID
  local t0 t1 kms
  t0=$(bench_cpu_ms "$3")
  bench_run_cpu kms sh -c '"$@"; echo $? >"$0"' "$tmp/knee.rc" "$load" search --quiet --base-url "$2" \
    --api-key bench-key-0001 --threads 2 --connections 64 --slo 'p99<25ms' --from 2000 --to 400000 \
    --step 2s --warmup 1s --json "$tmp/knee.json"
  t1=$(bench_cpu_ms "$3")
  python3 - "$tmp/knee.json" "$1" "$(cat "$tmp/knee.rc")" "$kms" "$((t1 - t0))" <<'PY' | tee -a "$tmp/knees.txt"
import json, sys
s = json.load(open(sys.argv[1]))["search"]
steps = sorted(s["steps"], key=lambda x: x["rate"])
sent = sum(st["generator"]["send_rate_rps"] * 3.0 for st in steps)  # 1 s warm-up + 2 s step
gen_us = float(sys.argv[4]) * 1e3 / sent if sent else float("nan")
tgt_us = float(sys.argv[5]) * 1e3 / sent if sent else float("nan")
print("%-16s knee %s req/s (lowest failing %s), %s, exit %s; CPU us/req: generator %.2f, target %.2f; steps %s" % (
    sys.argv[2], s["max_rate"], s["min_failing_rate"], s["result"], sys.argv[3], gen_us, tgt_us,
    " ".join("%.0f%s" % (st["rate"], "+" if st["passed"] else "-") for st in steps)))
print("KNEE %s %s" % (sys.argv[2], s["max_rate"] or 0))
PY
}
echo
echo "== the knee: petstore-load search, p99 < 25 ms (2 threads, 64 connections)"
knee nginx-return200 "http://127.0.0.1:$BENCH_NGINX_PORT/r200/v1" "$BENCH_NGINX_PID" | grep -v '^KNEE'
srv_keys="$tmp/server-keys.txt"
echo "bench-key-0001 enterprise 1000000000 100000000000" >"$srv_keys"
"$build/bin/petstore-server" --port 0 --keys-file "$srv_keys" >"$tmp/server.url" 2>/dev/null &
srv_pid=$!
for _ in $(seq 1 50); do [ -s "$tmp/server.url" ] && break; sleep 0.1; done
knee petstore-server "$(head -n1 "$tmp/server.url")" "$srv_pid" | grep -v '^KNEE'
kill "$srv_pid" 2>/dev/null
wait "$srv_pid" 2>/dev/null || true
awk '/^KNEE/ { k[$2] = $3 } END { if (k["nginx-return200"] > 0)
  printf "ratio knee petstore-server/nginx return 200: %.2f\n", k["petstore-server"] / k["nginx-return200"] }' \
  "$tmp/knees.txt"

echo
echo "== peak memory (2 threads, 64 connections, --hdr-log on)"
peak 10 10000
if [ "${BENCH_LONG:-0}" = 1 ]; then
  peak 100 10000
else
  echo "  (the 100 s run: BENCH_LONG=1 $0)"
fi
