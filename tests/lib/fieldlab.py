"""fieldlab.py - the field a CI gate meets, built on loopback for tests: a
private CA and a server certificate made by the test (openssl), nginx
terminating TLS in front of an upstream (keep-alive to it), and a latency
proxy adding a delay each way (asyncio, in a thread). Every daemon binds
127.0.0.1 on a free port (nginx another address when asked, e.g. a test
host's in a network namespace: netns.py), waits are bounded, and stop() ends
what it started.

Import it with the test's folder's ../lib on sys.path (see pstest.py).
"""
import asyncio
import math
import os
import subprocess
import threading

from pstest import free_port, nginx_binary, wait_port  # noqa: F401 (the one copy; tests import them from here too)


def make_ca(tmp, cn="127.0.0.1", ip="127.0.0.1"):
    """A CA and a server certificate for the address ip (its subjectAltName;
    cn its common name) signed by it: returns (ca_cert, server_cert,
    server_key) paths."""
    ca_key, ca = os.path.join(tmp, "ca.key"), os.path.join(tmp, "ca.pem")
    key, csr, cert = os.path.join(tmp, "srv.key"), os.path.join(tmp, "srv.csr"), os.path.join(tmp, "srv.pem")
    ext = os.path.join(tmp, "srv.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:%s\nbasicConstraints=CA:FALSE\n" % ip)
    steps = [
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-days", "2", "-subj", "/CN=petstore field test CA", "-keyout", ca_key, "-out", ca],
        ["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-subj", "/O=petstore field/CN=" + cn, "-keyout", key, "-out", csr],
        ["openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
         "-days", "2", "-extfile", ext, "-out", cert],
    ]
    for argv in steps:
        r = subprocess.run(argv, capture_output=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("openssl failed: %s" % r.stderr[-300:])
    return ca, cert, key


class Nginx:
    """nginx on bind:port in front of upstream (host:port), terminating
    TLS with cert/key when given (offering h2 in ALPN when http2, allowing
    h2_streams concurrent streams when given), keep-alive to the upstream.
    nginx writes its own Date (not the upstream's), from the time it cached
    at its event loop's last turn; with date_lag_ms it renews that time only
    so often (timer_resolution), so its Date lags the moment it is written by
    up to that, as Envoy's does (it renews its Date every 500 ms).
    pre is an argv prefix it is started with (["ip", "netns", "exec", NAME]:
    on a test host, bind being that host's address); the port is one free
    on this host's loopback, so free in a namespace just made."""

    def __init__(self, tmp, upstream, cert=None, key=None, workers=1, keepalive=64, http2=False,
                 h2_streams=None, date_lag_ms=None, bind="127.0.0.1", pre=()):
        self.port = free_port()
        self.dir = os.path.join(tmp, "nginx-%d" % self.port)
        os.makedirs(self.dir)
        conf = os.path.join(self.dir, "nginx.conf")
        listen = "%s:%d" % (bind, self.port)
        tls = ""
        if cert:
            listen += " ssl http2" if http2 else " ssl"
            tls = "ssl_certificate %s; ssl_certificate_key %s;" % (cert, key)
            if h2_streams:
                tls += " http2_max_concurrent_streams %d;" % h2_streams
        with open(conf, "w") as f:
            f.write("""daemon off; master_process off; worker_processes %(w)d; pid %(t)s/nginx.pid;
error_log %(t)s/nginx.err warn;
events { worker_connections 4096; }
%(lag)s
http {
  access_log off; client_body_temp_path %(t)s; proxy_temp_path %(t)s;
  fastcgi_temp_path %(t)s; uwsgi_temp_path %(t)s; scgi_temp_path %(t)s;
  upstream app { server %(u)s;%(ka)s }
  server {
    listen %(l)s; %(tls)s
    location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
""" % {"t": self.dir, "l": listen, "tls": tls, "u": upstream, "w": workers,
               "ka": " keepalive %d;" % keepalive if keepalive else "",
               "lag": "timer_resolution %dms;" % date_lag_ms if date_lag_ms else ""})
        self.proc = subprocess.Popen(list(pre) + [nginx_binary(), "-p", self.dir, "-c", conf],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_port(self.port, proc=self.proc, host=bind):
            self.stop()
            raise RuntimeError("nginx did not listen on %s:%d" % (bind, self.port))
        self.url = "%s://%s:%d/v1" % ("https" if cert else "http", bind, self.port)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


class LatencyProxy(threading.Thread):
    """A TCP proxy on 127.0.0.1 adding delay_s to every chunk each way
    (bytes keep their order; a chunk leaves delay_s after it arrived, rounded
    up to the next SLOT_S). A wire delays packets sent together by the same
    time, so they arrive together; a timer per chunk would wake once per
    chunk instead, and on a loaded machine spread a burst's last requests
    over milliseconds (a 100 us race then cannot show: seen in CI). Chunks
    due in one slot share one timer instant and leave in one loop pass."""

    SLOT_S = 0.002

    def __init__(self, upstream_port, delay_s):
        super().__init__(daemon=True)
        self.upstream_port, self.delay_s = upstream_port, delay_s
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.port = None

    async def pipe(self, reader, writer):
        queue = asyncio.Queue()

        async def sender():
            while True:
                due, data = await queue.get()
                if data is None:
                    break
                if due > self.loop.time():
                    # at the slot's instant itself (asyncio.sleep would count from now)
                    woken = self.loop.create_future()
                    self.loop.call_at(due, lambda f=woken: f.done() or f.set_result(None))
                    await woken
                writer.write(data)
                await writer.drain()
            try:
                writer.write_eof()
            except OSError:
                pass

        task = asyncio.ensure_future(sender())
        try:
            while True:
                data = await reader.read(65536)
                due = math.ceil((self.loop.time() + self.delay_s) / self.SLOT_S) * self.SLOT_S
                queue.put_nowait((due, data or None))
                if not data:
                    break
            await task
        except (OSError, asyncio.CancelledError):
            task.cancel()
        finally:
            writer.close()

    async def handle(self, reader, writer):
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.close()
            return
        try:
            await asyncio.gather(self.pipe(reader, up_w), self.pipe(up_r, writer), return_exceptions=True)
        except asyncio.CancelledError:
            pass  # the proxy stopping (stop()): its connections end with it

    def run(self):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            asyncio.start_server(self.handle, "127.0.0.1", 0, backlog=4096))
        self.port = server.sockets[0].getsockname()[1]
        self.server = server
        self.ready.set()
        self.loop.run_forever()
        server.close()

    def start_proxy(self):
        self.start()
        if not self.ready.wait(10):
            raise RuntimeError("the latency proxy did not start")
        return self.port

    def stop(self):
        def cancel_all():
            for task in asyncio.all_tasks(self.loop):
                task.cancel()
            self.loop.call_later(0.05, self.loop.stop)  # the cancelled tasks end first
        self.loop.call_soon_threadsafe(cancel_all)
        self.join(5)
