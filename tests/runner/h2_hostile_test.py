#!/usr/bin/env python3
"""h2_hostile_test.py - the limit burst's HTTP/2 form against servers that
break the protocol on purpose (issue 30 item 5).

The burst (runner/suites/burst_h2.c) goes over TLS with h2 picked in ALPN,
one connection, its requests as streams. A hostile server can end it many
ways; each must end the run (no hang: the burst's deadline bounds it) and
the report must name what the server did, not only "N sent without a
reply". Each mode starts its own TLS server on loopback (python3-h2 for
the framing) that answers like a small fixed-window limiter on every
connection until it meets the burst's shape - a GET whose HEADERS frame
does not end the stream, which libcurl's requests never are - and then
misbehaves on that connection only:

  goaway       GOAWAY(ENHANCE_YOUR_CALM, last stream = the first stream), then a close
  rst          RST_STREAM(REFUSED_STREAM) on every stream of the burst
  zero_window  SETTINGS_INITIAL_WINDOW_SIZE 0 and never a WINDOW_UPDATE (final frames held)
  ping_flood   an endless stream of PING frames

  h2_hostile_test.py --conform BIN MODE

Exits 77 (skip) when the h2 package or openssl is missing.
"""
import argparse
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

try:
    import h2.config
    import h2.connection
    import h2.errors
    import h2.events
    import h2.exceptions
    import h2.settings
except ImportError:
    print("skipped: needs python3-h2 (import h2 failed)", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conform_test as ct  # noqa: E402

MAIN_KEY, LIMIT_KEY, check = ct.MAIN_KEY, ct.LIMIT_KEY, ct.check
LIMIT, WINDOW_S = 10, 2.0
# What each mode's report must say: the server's act, by its protocol name.
EXPECTED = {
    "goaway": ["GOAWAY (ENHANCE_YOUR_CALM, last stream 1)"],
    "rst": ["with RST_STREAM (REFUSED_STREAM)"],
    "zero_window": ["flow-control window stayed at zero"],
    "ping_flood": ["flooded the HTTP/2 connection", "PING"],
}


class HostileH2(threading.Thread):
    """A TLS server offering h2 and answering as a limiter (LIMIT requests per
    key per WINDOW_S, X-RateLimit-* on every reply) until a connection shows
    the burst's shape; that connection then gets the mode's hostility.
    burst_seen is set when it does; hostile_done once the act is written."""

    def __init__(self, mode, cert, key):
        super().__init__(daemon=True)
        self.mode = mode
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        self.ctx.set_alpn_protocols(["h2"])
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.url = "https://127.0.0.1:%d/v1" % self.port
        self.stopping = threading.Event()
        self.burst_seen = threading.Event()
        self.hostile_done = threading.Event()
        self.lock = threading.Lock()
        self.windows = {}
        self.errors = []

    def run(self):
        while not self.stopping.is_set():
            try:
                raw, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self.serve, args=(raw,), daemon=True).start()

    def stop(self):
        self.stopping.set()
        self.sock.close()

    def answer(self, method, headers, body):
        """(status, extra headers, JSON body) of one request, as a limiter."""
        auth = headers.get("authorization", "")
        key = auth[7:] if auth.lower().startswith("bearer ") else None
        if key not in (MAIN_KEY, LIMIT_KEY):
            return 401, [("www-authenticate", 'Bearer realm="h2"')], b'{"code":"unauthorized","message":"no","status":401}'
        now = time.time()
        with self.lock:
            w = self.windows.get(key)
            if not w or now >= w[0]:
                w = self.windows[key] = [now + WINDOW_S, 0]
            reset = int(w[0]) + 1
            refused = w[1] >= LIMIT
            if not refused:
                w[1] += 1
            rl = [("x-ratelimit-limit", str(LIMIT)), ("x-ratelimit-remaining", str(LIMIT - w[1])),
                  ("x-ratelimit-reset", str(reset))]
        if refused:
            return 429, rl + [("retry-after", str(max(1, reset - int(now))))], \
                b'{"code":"rate_limited","message":"slow down","status":429}'
        if method == "POST":
            return 201, rl, b'{"id":1,"name":"x"}'
        return 200, rl, b"[]"

    def serve(self, raw):
        try:
            conn = self.ctx.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):
            raw.close()
            return
        try:
            conn.settimeout(30)
            if conn.selected_alpn_protocol() != "h2":
                return  # the runner's clients all offer h2; nothing else is served
            self.serve_h2(conn)
        except (OSError, ssl.SSLError, h2.exceptions.ProtocolError):
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def serve_h2(self, conn):
        h = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        h.initiate_connection()
        conn.sendall(h.data_to_send())
        streams = {}  # id -> [method, headers, body]
        hostile = False
        while not self.stopping.is_set():
            data = conn.recv(65536)
            if not data:
                return
            for ev in h.receive_data(data):
                if isinstance(ev, h2.events.RequestReceived):
                    fields = dict(ev.headers)
                    method = fields.get(":method")
                    burst = method == "GET" and ev.stream_ended is None
                    if burst and not hostile:
                        hostile = True
                        self.burst_seen.set()
                        if not self.act_first(conn, h, ev.stream_id):
                            return
                    if hostile and self.mode == "rst":
                        h.reset_stream(ev.stream_id, h2.errors.ErrorCodes.REFUSED_STREAM)
                        continue
                    streams[ev.stream_id] = [method, fields, b""]
                elif isinstance(ev, h2.events.DataReceived):
                    if ev.stream_id in streams:
                        streams[ev.stream_id][2] += ev.data
                    if not (hostile and self.mode == "zero_window"):
                        h.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id in streams:
                    method, fields, body = streams.pop(ev.stream_id)
                    status, extra, payload = self.answer(method, fields, body)
                    h.send_headers(ev.stream_id, [(":status", str(status)), ("content-type", "application/json"),
                                                  ("content-length", str(len(payload)))] + extra)
                    h.send_data(ev.stream_id, payload, end_stream=True)
            out = h.data_to_send()
            if out:
                conn.sendall(out)
            if hostile and self.mode == "rst":
                self.hostile_done.set()

    def act_first(self, conn, h, stream_id):
        """The mode's act at the burst's first stream: False when the
        connection is done with (closed or flooded)."""
        if self.mode == "goaway":
            h.close_connection(error_code=h2.errors.ErrorCodes.ENHANCE_YOUR_CALM, last_stream_id=stream_id)
            conn.sendall(h.data_to_send())
            self.hostile_done.set()
            # FIN after the GOAWAY, then read until the client closes: an unread
            # byte at close would make the kernel send RST, which may drop the GOAWAY
            socket.socket.shutdown(conn, socket.SHUT_WR)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and socket.socket.recv(conn, 65536):
                pass
            return False
        if self.mode == "zero_window":
            h.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
            self.hostile_done.set()
            return True
        if self.mode == "ping_flood":
            conn.sendall(h.data_to_send())
            ping = b"\x00\x00\x08\x06\x00\x00\x00\x00\x00" + b"floodme!"
            self.hostile_done.set()
            for _ in range(1000):  # 1,000,000 PINGs at most, until the client closes
                conn.sendall(ping * 1000)
            return False
        return True


def make_cert(tmp):
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                       capture_output=True, timeout=60)
    if r.returncode != 0:
        raise SystemExit("openssl: %r" % r.stderr[-300:])
    return cert, key


def run_mode(a, tmp):
    cert, key = make_cert(tmp)
    srv = HostileH2(a.mode, cert, key)
    srv.start()
    try:
        env = {"PETSTORE_API_KEY": MAIN_KEY, "PETSTORE_LIMIT_KEY": LIMIT_KEY}
        # --timeout 2s: a burst whose server holds it ends at its deadline
        # (--timeout + 5 s), well within the 120 s allowed here
        t0 = time.monotonic()
        rc, out, err, doc, paths = ct.run_conform(
            ["--base-url", srv.url, "--cacert", cert, "--only", "limit429", "--timeout", "2s", "--verbose"],
            a.conform, tmp, env, timeout=120)
        took = time.monotonic() - t0
    finally:
        srv.stop()
    check(srv.burst_seen.is_set(), "%s: the burst never came over HTTP/2 (exit %d): %s" % (a.mode, rc, err[-1500:]))
    check(srv.hostile_done.is_set(), "%s: the server's act was never written" % a.mode)
    check(rc in (0, 1, 3), "%s: exit %d, expected a verdict or an incomplete run" % (a.mode, rc))
    check(took < 90, "%s: the run took %.0f s" % (a.mode, took))
    burst = ((doc or {}).get("transport") or {}).get("burst") or {}
    check(burst.get("via") == "h2", "%s: the burst went via %r, not h2" % (a.mode, burst.get("via")))
    named = burst.get("h2_peer_errors") or ""
    reason = ""
    for suite in (doc or {}).get("suites", []):
        for c in suite["checks"]:
            if c["id"] == "limit429.no-over-admission":
                reason = c.get("reason") or c.get("message") or ""
    for want in EXPECTED[a.mode]:
        check(want in named, "%s: transport.burst.h2_peer_errors %r does not name %r" % (a.mode, named, want))
        check(want in err, "%s: --verbose does not name %r: %s" % (a.mode, want, err[-1500:]))
        check(want in reason or want in out, "%s: neither limit429.no-over-admission (%r) nor the console names %r"
              % (a.mode, reason, want))
    print("%s: %.1f s, exit %d: %s" % (a.mode, took, rc, named), file=sys.stderr)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--conform", required=True)
    p.add_argument("mode", choices=sorted(EXPECTED))
    a = p.parse_args()
    if not shutil.which("openssl"):
        print("skipped: needs openssl", file=sys.stderr)
        return 77
    with tempfile.TemporaryDirectory(prefix="h2-hostile-test-") as tmp:
        run_mode(a, tmp)
    if ct.failures:
        print("%d failure(s)" % len(ct.failures), file=sys.stderr)
        return 1
    print("ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
