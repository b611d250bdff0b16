"""serverlib.py - starts build/bin/petstore-server on loopback for the
integration tests and speaks plain HTTP/1.1 to it (python3 stdlib only).

Every server is started with --port 0 (its first stdout line is the base
URL) and killed when the test ends; every request has a timeout."""
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import read_first_line, stop_process  # noqa: E402

BIN = os.environ.get("PS_SERVER_BIN", "")
KEY_FREE = "t-free"
KEY_PRO = "t-pro"
KEY_BIG = "t-big"
DEFAULT_KEYS = ["--key", KEY_FREE + ":free", "--key", KEY_PRO + ":pro",
                "--key", KEY_BIG + ":enterprise:1000000:100000000"]


class Server:
    """One petstore-server process. Use as a context manager."""

    def __init__(self, *args, keys=True, seed=True, start_timeout=15):
        argv = [BIN, "--port", "0"]
        if keys:
            argv += DEFAULT_KEYS
        if not seed:
            argv.append("--no-seed")
        argv += list(args)
        self.argv = argv
        self.stderr_file = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.stderr_file)
        self.url = read_first_line(self.proc, start_timeout)
        if not self.url:
            self.kill()
            raise RuntimeError("server did not start: %s\n%s" % (argv, self.stderr()))
        u = urllib.parse.urlsplit(self.url)
        self.host, self.port, self.base = u.hostname, u.port, u.path

    def stderr(self):
        self.stderr_file.seek(0)
        return self.stderr_file.read().decode(errors="replace")

    def kill(self, sig=signal.SIGKILL):
        if self.proc.poll() is None:
            self.stopped_by_test = True
        return stop_process(self.proc, 20, sig)

    def __enter__(self):
        return self

    def __exit__(self, exc_type=None, *exc):
        """Stops the server with SIGTERM: a graceful stop must exit 0, and
        the sanitizers (ASan leak check at exit, TSan, UBSan) must be silent."""
        by_test = getattr(self, "stopped_by_test", False)
        rc = stop_process(self.proc, 30)
        err = self.stderr()
        if self.proc.stdout:
            self.proc.stdout.close()
        self.stderr_file.close()
        if exc_type is not None:
            return
        for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer",
                       "runtime error:"):
            if marker in err:
                raise AssertionError("petstore-server reported %r:\n%s" % (marker, err[-6000:]))
        if not by_test and rc != 0:
            raise AssertionError("petstore-server did not stop cleanly on SIGTERM (exit %s):\n%s" % (rc, err[-3000:]))

    def conn(self, timeout=10):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method, path="/categories", body=None, headers=None, key=KEY_FREE,
                scheme="Bearer", timeout=10, raw_path=False):
        """Returns (status, {lowercase header: value}, body bytes, parsed JSON or None)."""
        h = dict(headers or {})
        if key is not None and "Authorization" not in h:
            h["Authorization"] = "%s %s" % (scheme, key)
        if body is not None and "Content-Type" not in h:
            h["Content-Type"] = "application/json"
        if isinstance(body, str):
            body = body.encode()
        c = self.conn(timeout)
        try:
            c.request(method, path if raw_path else self.base + path, body=body, headers=h)
            r = c.getresponse()
            data = r.read()
            hdrs = {}
            for k, v in r.getheaders():
                hdrs.setdefault(k.lower(), v)
            try:
                parsed = json.loads(data) if data else None
            except ValueError:
                parsed = None
            return r.status, hdrs, data, parsed
        finally:
            c.close()

    def get(self, **kw):
        return self.request("GET", **kw)

    def post(self, body, **kw):
        return self.request("POST", body=body, **kw)

    def raw(self, data, read_timeout=5, shutdown=False):
        """Sends raw bytes on a fresh connection and returns what came back until close or timeout."""
        s = socket.create_connection((self.host, self.port), timeout=read_timeout)
        try:
            s.sendall(data)
            if shutdown:
                s.shutdown(socket.SHUT_WR)
            out = b""
            deadline = time.monotonic() + read_timeout
            while time.monotonic() < deadline:
                try:
                    chunk = s.recv(65536)
                except socket.timeout:
                    break
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                out += chunk
            return out
        finally:
            s.close()


def close_and_wait(s, timeout=10):
    """Closes our side of socket s and waits until the server has closed its
    side: only then has it freed the connection (its --max-connections slot,
    its share of --max-buffered). A plain close() returns before the server
    even read the FIN, so a count taken right after still includes s."""
    try:
        s.shutdown(socket.SHUT_WR)
        s.settimeout(timeout)
        while s.recv(65536):
            pass
    except OSError:
        pass  # a reset also means the server let go
    finally:
        s.close()


def wait_for(cond, what, timeout=15):
    """Polls cond() until it is true; AssertionError naming what after timeout."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.01)


def split_response(raw):
    """Parses one raw HTTP response: (status, {lowercase header: value}, body)."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode(errors="replace").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    hdrs = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdrs.setdefault(k.strip().lower(), v.strip())
    return status, hdrs, body


def main():
    global BIN
    args = sys.argv[1:]
    if "--server" in args:
        i = args.index("--server")
        BIN = args[i + 1]
        del args[i:i + 2]
    if not BIN or not os.access(BIN, os.X_OK):
        print("petstore-server binary not found; pass --server PATH", file=sys.stderr)
        sys.exit(2)
    os.environ["PS_SERVER_BIN"] = BIN
    unittest.main(argv=[sys.argv[0]] + args, verbosity=2, module="__main__")
