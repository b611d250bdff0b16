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
