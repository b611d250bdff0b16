# lib.sh - helpers the bench scripts source: a free loopback port and a
# throw-away nginx (one worker, access_log off, everything under one
# directory) to measure against in the same run.
#
# Usage (bash, after `set -euo pipefail`):
#   . "$root/bench/lib.sh"
#   bench_nginx_find                     # sets BENCH_NGINX_BIN, exits 2 without nginx
#   bench_nginx_start DIR SERVER_BODY [HTTP_EXTRA]
#       writes DIR/nginx.conf and starts nginx in the background, listening on
#       127.0.0.1:BENCH_NGINX_PORT (a free port; another is tried when bind
#       fails); SERVER_BODY goes inside server { }, HTTP_EXTRA inside http { }.
#       Sets BENCH_NGINX_PID; exits 2 (with nginx's errors) if it cannot start.
#   bench_nginx_stop                     # stops it (safe to call twice; call it from the EXIT trap)
#   bench_tls_cert DIR                   # DIR/ca.pem, and DIR/tls.pem + DIR/tls.key for 127.0.0.1
#                                        # signed by it (openssl); exits 2 if openssl fails
#
# CPU time, the steady figure on a shared machine (req/s swings with the
# neighbours' load, CPU microseconds per request hold to a few percent):
#   bench_cpu_ms PID...                  # CPU ms (user+system, all threads) PIDs and
#                                        # their child processes have used so far
#   bench_run_cpu VAR CMD...             # runs CMD (its stdout is ours), sets VAR to
#                                        # the CPU ms it used (its rusage, via `times`)
#   bench_us_per_req CPU_MS REQUESTS     # prints CPU microseconds per request
#   bench_ratio A B                      # prints A/B with two decimals

# A port nothing listens on now (the kernel's pick; random when python3 is missing).
bench_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo $((20000 + RANDOM % 40000))
}

bench_nginx_find() {
  BENCH_NGINX_BIN=$(command -v nginx || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true)
  [ -n "$BENCH_NGINX_BIN" ] || { echo "$(basename "$0"): nginx not installed" >&2; exit 2; }
}

BENCH_NGINX_PID=
bench_nginx_start() {
  local dir=$1 body=$2 extra=${3:-}
  [ -n "${BENCH_NGINX_BIN:-}" ] || bench_nginx_find
  # started as root, nginx's worker runs as another user: it must reach DIR
  chmod 755 "$dir"
  for _ in $(seq 30); do
    BENCH_NGINX_PORT=$(bench_free_port)
    cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  $extra
  server {
    listen 127.0.0.1:$BENCH_NGINX_PORT;
    $body
  }
}
CONF
    : >"$dir/error.log"
    "$BENCH_NGINX_BIN" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" 2>"$dir/nginx.err" &
    BENCH_NGINX_PID=$!
    sleep 0.3
    # A taken port makes nginx retry bind() for seconds before it exits:
    # its [emerg] line is the sign to try another port.
    if kill -0 "$BENCH_NGINX_PID" 2>/dev/null && ! grep -qs emerg "$dir/error.log" "$dir/nginx.err"; then
      return 0
    fi
    bench_nginx_stop
  done
  echo "$(basename "$0"): could not start nginx" >&2
  cat "$dir/error.log" "$dir/nginx.err" >&2 2>/dev/null || true
  exit 2
}

bench_nginx_stop() {
  if [ -n "${BENCH_NGINX_PID:-}" ]; then
    kill "$BENCH_NGINX_PID" 2>/dev/null || true
    wait "$BENCH_NGINX_PID" 2>/dev/null || true
    BENCH_NGINX_PID=
  fi
}

bench_tls_cert() {
  local d=$1
  if ! { openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/ca.key" -out "$d/ca.pem" -days 2 \
    -subj "/CN=bench CA" &&
    openssl req -newkey rsa:2048 -nodes -keyout "$d/tls.key" -out "$d/tls.csr" -subj "/CN=127.0.0.1" &&
    printf 'subjectAltName=IP:127.0.0.1\n' >"$d/ext.cnf" &&
    openssl x509 -req -in "$d/tls.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
      -out "$d/tls.pem" -days 2 -extfile "$d/ext.cnf"; } 2>/dev/null; then
    echo "$(basename "$0"): openssl could not make a certificate" >&2
    exit 2
  fi
  # started as root, nginx's worker runs as another user: it must read the key
  chmod 644 "$d/tls.key"
}

# ---- CPU time -------------------------------------------------------------

BENCH_CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)

# utime + stime (fields 14 and 15 of /proc/PID/stat; the comm field may hold
# spaces, so count from the last ')') of each PID and of its children (an
# nginx master's worker), in milliseconds.
bench_cpu_ms() {
  local ticks=0 p kids t
  for p in "$@"; do
    kids=$(pgrep -P "$p" 2>/dev/null || true)
    for t in $p $kids; do
      [ -r "/proc/$t/stat" ] || continue
      ticks=$((ticks + $(sed 's/.*) //' "/proc/$t/stat" | awk '{print $12 + $13}')))
    done
  done
  echo $((ticks * 1000 / BENCH_CLK_TCK))
}

# A process that has exited is gone from /proc: a one-shot client's CPU is
# its rusage, which `times` prints for a subshell's waited-for children
# (second line: children's user and system time, e.g. 0m1.234s 0m0.210s).
bench_run_cpu() {
  local var=$1 out
  shift
  out=$(mktemp)
  ( set +e; "$@"; times >"$out" )
  printf -v "$var" '%s' "$(awk 'NR == 2 {
      ms = 0
      for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); ms += (a[1] * 60 + a[2]) * 1000 }
      printf "%d", ms }' "$out")"
  rm -f "$out"
}

bench_us_per_req() {
  awk -v ms="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.2f", ms * 1000 / n; else print "nan" }'
}

bench_ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "nan" }'
}
