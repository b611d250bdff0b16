#!/usr/bin/env python3
"""hostile_test.py - petstore-conform against hostile services (issue 11).

A CI gate must end within its timeouts whatever the target sends, stop on
SIGTERM, never publish a key a service echoes, and print --verbose dumps in
few writes. Each mode starts a fake service of its own on loopback (one
thread per connection), runs the real binary and asserts one behaviour; every
wait is for a state (a request received, a line printed), bounded.

  hostile_test.py --conform BIN worst_json | drip | sigterm | echoed_keys | near_miss_keys | verbose_writes
                  | burst_memory | giant_header | verbose_controls

Helpers (run_conform, check, the test keys) are conform_test.py's.
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conform_test as ct  # noqa: E402

MAIN_KEY, LIMIT_KEY, check = ct.MAIN_KEY, ct.LIMIT_KEY, ct.check


class HostileFake(threading.Thread):
    """A loopback service answering every request with reply(method, path,
    authorization) -> bytes (or None: hold the connection open), each
    connection in a thread of its own so a held one blocks nothing.
    got_request is set at the first request."""

    def __init__(self, reply):
        super().__init__(daemon=True)
        self.reply = reply
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d/v1" % self.port
        self.stopping = threading.Event()
        self.got_request = threading.Event()
        self.requests = 0

    def run(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn):
        kept = False
        try:
            conn.settimeout(5)
            while not self.stopping.is_set():
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, body = data.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                fields = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
                length = int(fields.get("content-length", "0") or 0)
                while len(body) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    body += chunk
                self.requests += 1
                self.got_request.set()
                out = self.reply(self, conn, method, path, fields.get("authorization", ""))
                if out is None:
                    kept = True  # the reply function holds or dripped to the connection
                    return
                conn.sendall(out)
        except OSError:
            pass
        finally:
            if not kept:
                conn.close()

    def stop(self):
        self.stopping.set()
        self.sock.close()
        self.join(5)


def response(status, body, extra_headers=b"", content_type=b"application/json"):
    reset = int(time.time()) + 60
    return (b"HTTP/1.1 %d X\r\nContent-Type: %s\r\nX-RateLimit-Limit: 300\r\nX-RateLimit-Remaining: 299\r\n"
            b"X-RateLimit-Reset: %d\r\n" % (status, content_type, reset) + extra_headers +
            b"Content-Length: %d\r\n\r\n" % len(body) + body)


def run_bounded(cmd, env, timeout):
    """Runs cmd; returns (rc, out, err, wall seconds)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        check(False, "%s did not end within %d s" % (cmd[0], timeout))
    wall = time.monotonic() - t0
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), wall


def runner_env():
    env = dict(os.environ)
    for k in ("PETSTORE_BASE_URL", "PETSTORE_API_KEY", "PETSTORE_LIMIT_KEY", "NO_COLOR"):
        env.pop(k, None)
    env["PETSTORE_API_KEY"] = MAIN_KEY
    return env


# The worst JSON a reply can carry to a parser: 1 MB of members named ""
# (the repeated-name case), of distinct names, and arrays of 1024-member
# objects (each object at the member limit).
def worst_bodies():
    mb = 1 << 20
    same = b"{" + b'"":0,' * (mb // 5 - 2) + b'"":0}'
    # under --max-body's 1 MiB, as the others: read and refused for its members, not cut (at
    # mb // 10 it was 1.09 MiB, and the run's report named too_many_members only where a
    # check's first failure fell on `same`, which a request more or less moved)
    distinct = b"{" + b",".join(b'"m%d":0' % i for i in range(mb // 12)) + b"}"
    obj = b"{" + b",".join(b'"k%d":0' % i for i in range(1024)) + b"}"
    arr = b"[" + b",".join([obj] * (mb // len(obj))) + b"]"
    return [same, distinct, arr]


def mode_worst_json(a, tmp):
    """Every reply is 1 MB of worst-case JSON: the run ends in seconds, not
    minutes (a 1 MB reply of {"":0,...} once took over 10 minutes), and the
    report names the reason."""
    bodies = worst_bodies()

    def reply(fake, conn, method, path, auth):
        return response(200 if method == "GET" else 201, bodies[fake.requests % len(bodies)])

    fake = HostileFake(reply)
    fake.start()
    try:
        t0 = time.monotonic()
        r0 = os.times()
        rc, out, err, doc, _ = ct.run_conform(["--base-url", fake.url, "--timeout", "2s", "--max-wait", "1s"],
                                              a.conform, tmp, {"PETSTORE_API_KEY": MAIN_KEY}, timeout=170)
        wall, r1 = time.monotonic() - t0, os.times()
    finally:
        fake.stop()
    cpu = (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)
    print("worst_json: %d replies of 1 MB, runner %.1f s wall, %.2f s CPU" % (fake.requests, wall, cpu),
          file=sys.stderr)
    check(rc in (1, 3), "worst_json: exit %d" % rc)
    check(doc is not None, "worst_json: no JSON report")
    # A per-reply bound: parsing 1 MB is milliseconds, far under --timeout.
    check(cpu < 0.5 * max(fake.requests, 1), "worst_json: %.2f s of CPU for %d replies" % (cpu, fake.requests))
    check("too_many_members" in json.dumps(doc) if doc else False, "worst_json: the report never says too_many_members")


def mode_drip(a, tmp):
    """Replies drip their body a byte at a time, forever: each exchange ends
    at --timeout with that reason, and the run gives up after its limit of
    consecutive failures (10) instead of dripping on. First every reply
    drips (the first probe gives up), then only those after the first
    (the checks meet one dripping reply after another)."""

    def drip_from(first):
        def reply(fake, conn, method, path, auth):
            if fake.requests < first:
                return response(200, b"[]")
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n[")
            while not fake.stopping.is_set():
                try:
                    conn.sendall(b" ")
                except OSError:
                    return None
                time.sleep(0.05)
            return None
        return reply

    for first in (1, 2):
        fake = HostileFake(drip_from(first))
        fake.start()
        try:
            t0 = time.monotonic()
            rc, out, err, doc, _ = ct.run_conform(["--base-url", fake.url, "--timeout", "1s", "--max-wait", "1s"],
                                                  a.conform, tmp, {"PETSTORE_API_KEY": MAIN_KEY}, timeout=60)
            wall = time.monotonic() - t0
        finally:
            fake.stop()
        print("drip from request %d: %d requests, %.1f s" % (first, fake.requests, wall), file=sys.stderr)
        check(rc == 3, "drip from %d: exit %d, expected 3 (aborted)" % (first, rc))
        reason = (doc or {}).get("aborted") or ""
        check("within the timeout" in reason, "drip from %d: abort reason %r" % (first, reason))
        # at most 10 dripping exchanges of 1 s each, then the run stops
        check(fake.requests <= 12, "drip from %d: %d exchanges before giving up" % (first, fake.requests))
        check(wall < 10 * 1 + 15, "drip from %d: the run took %.1f s" % (first, wall))


def start_runner(a, url, extra, jpath):
    cmd = [a.conform, "--base-url", url, "--json", jpath] + extra
    return subprocess.Popen(cmd, env=runner_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def stop_with_sigterm(p, what):
    """SIGTERM now; returns the seconds until the runner ended, and its output."""
    t0 = time.monotonic()
    p.terminate()
    try:
        out, err = p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    took = time.monotonic() - t0
    print("sigterm %s: ended %.2f s after the signal, exit %d" % (what, took, p.returncode), file=sys.stderr)
    check(p.returncode == 3, "sigterm %s: exit %d, expected 3" % (what, p.returncode))
    check(took < 3, "sigterm %s: the runner took %.1f s to stop" % (what, took))  # libcurl polls its progress callback at least once a second
    check(b"interrupted" in err, "sigterm %s: stderr does not say interrupted: %r" % (what, err[-300:]))
    return out, err


def assert_interrupted_report(jpath, what):
    if check(os.path.exists(jpath) and os.path.getsize(jpath) > 0, "sigterm %s: no JSON report" % what):
        doc = json.load(open(jpath))
        check(doc["verdict"] == "aborted" and "interrupted" in (doc["aborted"] or ""),
              "sigterm %s: report verdict %s, aborted %r" % (what, doc["verdict"], doc["aborted"]))


def mode_sigterm(a, tmp):
    """SIGTERM stops the run within ~2 s wherever it is: in a stalled
    exchange (no byte comes), in a dripping transfer, in a Retry-After wait;
    exit 3, reports written, verdict aborted."""
    # 1. stalled: the request arrived, no reply ever comes (--timeout 60 s)
    held = []

    def stall(fake, conn, method, path, auth):
        held.append(conn)
        return None

    # 2. dripping: bytes keep coming, never the whole body
    def drip(fake, conn, method, path, auth):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n[")
        while not fake.stopping.is_set():
            try:
                conn.sendall(b"0,")
            except OSError:
                break
            time.sleep(0.01)
        return None

    for what, reply in (("stalled", stall), ("dripping", drip)):
        fake = HostileFake(reply)
        fake.start()
        jpath = os.path.join(tmp, "%s.json" % what)
        p = start_runner(a, fake.url, ["--timeout", "60s"], jpath)
        try:
            if check(fake.got_request.wait(20), "sigterm %s: the runner never sent a request" % what):
                stop_with_sigterm(p, what)
                assert_interrupted_report(jpath, what)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
            fake.stop()
            for conn in held:
                conn.close()

    # 3. in a Retry-After wait: every reply is a 429 asking for 30 s
    def refuse(fake, conn, method, path, auth):
        body = b'{"code":"rate_limited","message":"later","status":429}'
        return response(429, body, b"Retry-After: 30\r\nConnection: close\r\n").replace(
            b"X-RateLimit-Remaining: 299", b"X-RateLimit-Remaining: 0")

    fake = HostileFake(refuse)
    fake.start()
    jpath = os.path.join(tmp, "wait.json")
    p = start_runner(a, fake.url, ["--timeout", "5s", "--max-wait", "60s", "--verbose"], jpath)
    try:
        # --verbose says when it starts waiting: that line is the state to wait for.
        waiting = b""
        deadline = time.monotonic() + 20
        os.set_blocking(p.stderr.fileno(), False)
        while b"waiting" not in waiting and time.monotonic() < deadline and p.poll() is None:
            import select
            r, _, _ = select.select([p.stderr], [], [], 0.5)
            if r:
                waiting += p.stderr.read() or b""
        if check(b"waiting" in waiting, "sigterm wait: the runner never said it was waiting: %r" % waiting[-300:]):
            os.set_blocking(p.stderr.fileno(), True)
            stop_with_sigterm(p, "in a Retry-After wait")
            assert_interrupted_report(jpath, "in a Retry-After wait")
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        fake.stop()


def mode_echoed_keys(a, tmp):
    """A service that echoes the keys it knows and the Authorization it got
    (in a header, in error messages, in a list body): no output of the runner
    shows a key, nor its first len-1 characters (the near misses the auth
    suite sends), in any format or in --verbose."""

    def reply(fake, conn, method, path, auth):
        leak = ("keys %s %s got [%s]" % (MAIN_KEY, LIMIT_KEY, auth)).encode()
        echo = b"X-Echo: " + leak + b"\r\nWWW-Authenticate: Bearer realm=\"" + leak + b"\"\r\n"
        if method == "GET" and auth.endswith(MAIN_KEY):
            body = json.dumps([{"id": 1, "name": leak.decode()}, {"id": "x", "name": MAIN_KEY}]).encode()
            return response(200, body, echo)
        body = json.dumps({"code": "unauthorized", "message": leak.decode(), "status": 418}).encode()
        return response(401, body, echo, b"text/" + leak.replace(b" ", b"-"))

    fake = HostileFake(reply)
    fake.start()
    try:
        rc, out, err, doc, paths = ct.run_conform(
            ["--base-url", fake.url, "--timeout", "2s", "--max-wait", "1s", "--verbose", "--strict"], a.conform, tmp,
            {"PETSTORE_API_KEY": MAIN_KEY, "PETSTORE_LIMIT_KEY": LIMIT_KEY}, timeout=120)
    finally:
        fake.stop()
    check(rc == 1, "echoed_keys: exit %d, expected 1" % rc)
    texts = {"console": out, "--verbose stderr": err}
    for f, path in paths.items():
        texts["--" + f] = open(path, encoding="utf-8", errors="replace").read() if os.path.exists(path) else ""
    check(all(texts.values()), "echoed_keys: an output is empty: %s" % [k for k, v in texts.items() if not v])
    # the reflected bytes did reach every report (so the test can fail)
    for name, text in texts.items():
        check("***" in text, "echoed_keys: %s does not show a redacted echo" % name)
    for key in (MAIN_KEY, LIMIT_KEY):
        for name, text in texts.items():
            check(key[:-1] not in text, "echoed_keys: %s...%s leaks into %s" % (key[:6], key[-3:], name))


def mode_near_miss_keys(a, tmp):
    """The auth suite's near misses (the key less its last character, the
    key plus one) never show, --verbose included, for a key too short for
    the client's own near-miss matching (8 characters; 9 or more are matched
    by their first len-1), against a service that compares key prefixes and
    echoes the Authorization it got, so the check fails with evidence. A key
    under 5 characters gets no near misses sent: not applicable."""
    key = "k8shortk"

    def reply(fake, conn, method, path, auth):
        got = auth[7:] if auth.startswith("Bearer ") else ""
        echo = b"X-Echo: " + auth.encode() + b"\r\n"
        if got.startswith(key[:-1]):  # a prefix comparison: both near misses get in
            return response(200, json.dumps([{"id": 1, "name": "got " + auth}]).encode(), echo)
        body = json.dumps({"code": "unauthorized", "message": "got " + auth, "status": 401}).encode()
        return response(401, body, echo + b'WWW-Authenticate: Bearer realm="x"\r\n')

    fake = HostileFake(reply)
    fake.start()
    try:
        rc, out, err, doc, paths = ct.run_conform(
            ["--base-url", fake.url, "--only", "auth.near-miss-keys", "--timeout", "2s", "--verbose"], a.conform, tmp,
            {"PETSTORE_API_KEY": key}, timeout=60)
        texts = {"console": out, "--verbose stderr": err}
        for f, path in paths.items():
            texts["--" + f] = open(path, encoding="utf-8", errors="replace").read() if os.path.exists(path) else ""
        rc4, out4, err4, doc4, _ = ct.run_conform(
            ["--base-url", fake.url, "--only", "auth.near-miss-keys", "--timeout", "2s", "--verbose"], a.conform, tmp,
            {"PETSTORE_API_KEY": "k4ey"}, timeout=60)
    finally:
        fake.stop()
    check(rc == 1, "near_miss_keys: exit %d, expected 1 (a prefix-matching service)" % rc)
    check(doc and ct.checks_by_status(doc).get("failed") == {"auth.near-miss-keys"},
          "near_miss_keys: %s" % (doc and ct.checks_by_status(doc)))
    check("> Authorization: Bearer ***" in err, "near_miss_keys: --verbose shows no redacted request:\n" + err[-800:])
    check("${PETSTORE_API_KEY%?}" in texts["--json"], "near_miss_keys: the curl line does not name the near miss")
    for name, text in texts.items():
        for miss in (key[:-1], key + "x"):
            check(miss not in text, "near_miss_keys: the near miss %r leaks into %s" % (miss, name))
    check(rc4 == 0 and doc4 and ct.checks_by_status(doc4).get("not_run") == {"auth.near-miss-keys"},
          "near_miss_keys: a 4-character key: exit %d, %s" % (rc4, doc4 and ct.checks_by_status(doc4)))
    check("k4e" not in err4 and "k4e" not in out4, "near_miss_keys: a 4-character key's near miss was sent")


def mode_verbose_writes(a, tmp):
    """--verbose writes each exchange in a few calls: a reply with 100 KB of
    headers took 100,871 write(2) calls (0.4 s became 120 s). Counted with
    strace, not timed."""
    if not shutil.which("strace"):
        print("skipped: needs strace (scripts/install-deps.sh installs it)", file=sys.stderr)
        sys.exit(77)
    headers = b"".join(b"X-Padding-%04d: %s\r\n" % (i, b"p" * 80) for i in range(1000))

    def reply(fake, conn, method, path, auth):
        return response(200, b"[]", headers)

    fake = HostileFake(reply)
    fake.start()
    trace = os.path.join(tmp, "strace.txt")
    try:
        cmd = ["strace", "-f", "-qq", "-e", "trace=write,writev", "-o", trace, a.conform, "--base-url", fake.url,
               "--only", "list.status-200", "--timeout", "5s", "--verbose"]
        env = runner_env()
        # LeakSanitizer cannot run under ptrace (an ASan build): leaks are other tests' business.
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
        rc, out, err, wall = run_bounded(cmd, env, 120)
    finally:
        fake.stop()
    if rc != 0 and "ptrace" in err:
        print("skipped: strace cannot trace here: %s" % err[-300:], file=sys.stderr)
        sys.exit(77)
    check(fake.requests >= 1, "verbose_writes: no request reached the fake")
    check(err.count("X-Padding-") >= 1000 * fake.requests, "verbose_writes: the dump lacks the headers")
    calls = [l for l in open(trace) if " write(2," in l or " writev(2," in l]
    print("verbose_writes: %d exchanges, %d writes to stderr, %.1f s" % (fake.requests, len(calls), wall),
          file=sys.stderr)
    check(len(calls) <= 10 * fake.requests + 10, "verbose_writes: %d writes to stderr for %d exchanges" % (
        len(calls), fake.requests))


def mode_verbose_controls(a, tmp):
    """--verbose shows a reply's headers and body escaped as replay prints
    them (ps_buf_put_visible): ESC, BEL, DEL, C1 controls (bare or as UTF-8,
    8-bit CSI included) and invalid UTF-8 become visible \\xNN / \\u00NN,
    never bytes a terminal acts on; printable UTF-8 stays as it is."""
    evil = b"\x1b]0;pwned\x07 \x1b[2J \x9b31m \xc2\x9b32m \x7f caf\xc3\xa9"

    def reply(fake, conn, method, path, auth):
        return response(200, b"[]", b"X-Evil: " + evil + b"\r\n")

    fake = HostileFake(reply)
    fake.start()
    try:
        cmd = [a.conform, "--base-url", fake.url, "--only", "list.status-200", "--timeout", "5s", "--verbose"]
        p = subprocess.run(cmd, env=runner_env(), capture_output=True, timeout=120)
    finally:
        fake.stop()
    err = p.stderr
    check(fake.requests >= 1, "verbose_controls: no request reached the fake")
    line = next((l for l in err.split(b"\n") if l.startswith(b"< X-Evil:")), None)
    if not check(line is not None, "verbose_controls: the dump lacks X-Evil: %r" % err[-800:]):
        return
    check(not [c for c in line if c < 0x20 or c == 0x7f], "verbose_controls: C0/DEL bytes reach the terminal: %r" % line)
    check(b"\x9b" not in line.replace(b"\xc2\x9b", b""), "verbose_controls: a bare C1 byte (8-bit CSI) reaches the terminal: %r" % line)
    check(b"\xc2\x9b" not in line, "verbose_controls: a C1 control as UTF-8 reaches the terminal: %r" % line)
    want = b"< X-Evil: \\x1b]0;pwned\\x07 \\x1b[2J \\x9b31m \\u009b32m \\x7f caf\xc3\xa9"
    check(line == want, "verbose_controls: shown as %r, expected %r" % (line, want))


class SelectorFake(threading.Thread):
    """A loopback service on one thread (selectors), for thousands of
    connections: an ordinary request gets a small JSON answer announcing a
    fresh window of `limit` (Remaining limit - 1); a limit-burst request
    (Connection: close) gets a 200 status line and then header lines without
    end, as long as the client reads."""

    def __init__(self, limit):
        import selectors
        super().__init__(daemon=True)
        self.limit, self.sel = limit, selectors.DefaultSelector()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8192)
        self.sock.setblocking(False)
        self.url = "http://127.0.0.1:%d/v1" % self.sock.getsockname()[1]
        self.sel.register(self.sock, selectors.EVENT_READ, None)
        self.stopping, self.burst_requests = False, 0
        self.junk = b"".join(b"X-Endless-%06d: %s\r\n" % (i, b"h" * 100) for i in range(512))

    def answer(self, request):
        import selectors
        head = request.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
        if "connection: close" in head:
            self.burst_requests += 1
            return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", True
        body = b"[]" if head.startswith("get") else b'{"id":1,"name":"x"}'
        status = b"200 OK" if head.startswith("get") else b"201 Created"
        if "authorization: bearer " + MAIN_KEY.lower() not in head and \
                "authorization: bearer " + LIMIT_KEY.lower() not in head:
            status, body = b"401 Unauthorized", b'{"code":"u","message":"no","status":401}'
        reset = int(time.time()) + 60
        return (b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                b"WWW-Authenticate: Bearer\r\nX-RateLimit-Limit: %d\r\nX-RateLimit-Remaining: %d\r\n"
                b"X-RateLimit-Reset: %d\r\n\r\n%s" % (status, len(body), self.limit, self.limit - 1,
                                                         reset, body)), False

    def run(self):
        import selectors
        bufs = {}
        while not self.stopping:
            for key, ev in self.sel.select(0.1):
                if key.data is None:
                    try:
                        c, _ = self.sock.accept()
                    except OSError:
                        continue
                    c.setblocking(False)
                    bufs[c] = [b"", False]
                    self.sel.register(c, selectors.EVENT_READ, "conn")
                    continue
                c, st = key.fileobj, bufs.get(key.fileobj)
                try:
                    if ev & selectors.EVENT_READ:
                        data = c.recv(65536)
                        if not data:
                            raise OSError("closed")
                        st[0] += data
                        if b"\r\n\r\n" in st[0] and not st[1]:
                            reply, endless = self.answer(st[0])
                            st[0] = b""
                            c.send(reply)
                            if endless:
                                st[1] = True
                                self.sel.modify(c, selectors.EVENT_READ | selectors.EVENT_WRITE, "conn")
                    if ev & selectors.EVENT_WRITE and st[1]:
                        c.send(self.junk)
                except (OSError, BlockingIOError) as e:
                    if isinstance(e, BlockingIOError):
                        continue
                    self.sel.unregister(c)
                    bufs.pop(c, None)
                    c.close()

    def stop(self):
        self.stopping = True
        self.join(10)
        self.sock.close()


def mode_burst_memory(a, tmp):
    """A target announcing a plan of 4,998 a window (Remaining 4,997) and
    answering every limit-burst request with endless headers cannot inflate
    the runner (issue 22: 3 bursts of 4,998 connections kept 1 MiB each, a
    4.18 GB peak): each reply is kept to its share of the burst's 64 MiB
    budget, the replies are named as heads over the cap (never 'sent without
    a reply', never admitted), and limit429.no-over-admission is untested."""
    import resource
    fake = SelectorFake(4998)
    fake.start()
    try:
        env = runner_env()
        cmd = [a.conform, "--base-url", fake.url, "--plan", "enterprise:4998:100000", "--only", "limit429",
               "--timeout", "10s", "--max-wait", "5s", "--json", os.path.join(tmp, "r.json")]
        rc, out, err, wall = run_bounded(cmd, env, 200)
    finally:
        fake.stop()
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print("burst_memory: exit %d in %.1f s, %d burst requests, peak RSS %.0f MB" % (
        rc, wall, fake.burst_requests, peak_mb), file=sys.stderr)
    check(fake.burst_requests >= 1000, "burst_memory: only %d burst requests reached the fake" % fake.burst_requests)
    check(peak_mb < 600, "burst_memory: the runner's peak RSS was %.0f MB" % peak_mb)
    # the runner then goes on one request at a time (keep-alive, ordinary answers): the
    # fake never refuses, so limit429.enforced fails; over-admission stays untested
    check(rc in (1, 3), "burst_memory: exit %d, expected 1 or 3" % rc)
    doc = json.load(open(os.path.join(tmp, "r.json")))
    print("burst_memory: %s" % [(c["id"], c["status"], c.get("message", "")[:300]) for s in doc["suites"]
                                for c in s["checks"] if c["status"] in ("failed", "not_run")], file=sys.stderr)
    noa = [c for s in doc["suites"] for c in s["checks"] if c["id"] == "limit429.no-over-admission"][0]
    msg = noa.get("message", "")
    check(noa["status"] == "not_run" and "its head over the cap" in msg and " 0 sent without a reply" in msg,
          "burst_memory: limit429.no-over-admission %s: %r" % (noa["status"], msg))


def mode_giant_header(a, tmp):
    """A reply whose head holds one 300 KiB header line (issue 22): libcurl
    refuses it as "Out of memory". The run names the reply it could not read,
    never "could not reach" the target nor the machine's memory alone."""
    def reply(fake, conn, method, path, auth):
        return response(200, b"[]", extra_headers=b"X-Giant: " + b"g" * (300 << 10) + b"\r\n")

    fake = HostileFake(reply)
    fake.start()
    try:
        rc, out, err, _ = run_bounded([a.conform, "--base-url", fake.url, "--plan", "pro", "--timeout", "10"],
                                      runner_env(), 120)
    finally:
        fake.stop()
    check(fake.requests >= 1, "giant_header: the fake got no request")
    check(rc == 3, "giant_header: exit %d, not 3 (aborted)" % rc)
    text = out + err
    check("could not reach" not in text, "giant_header: blamed the reach: %r" % text[-400:])
    check("no usable reply from" in text and "header line longer than the 100 KiB" in text,
          "giant_header: the message does not name the reply's head: %r" % text[-400:])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--conform", required=True)
    p.add_argument("mode", choices=["worst_json", "drip", "sigterm", "echoed_keys", "near_miss_keys",
                                    "verbose_writes", "burst_memory", "giant_header",
                                    "verbose_controls"])
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="hostile-test-") as tmp:
        globals()["mode_" + a.mode](a, tmp)
    if ct.failures:
        print("%d failure(s)" % len(ct.failures), file=sys.stderr)
        return 1
    print("ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
