#!/usr/bin/env python3
"""cli_test.py - the one command-line style of petstore-server,
petstore-conform and petstore-load (issue 9), tried on the real programs:
-h/--help and --version, a usage error as one line naming the flag then
"see 'PROGRAM --help'" (exit 2), unique prefixes, colour (--color, NO_COLOR,
FORCE_COLOR, TERM=dumb), petstore-load's PETSTORE_BASE_URL/PETSTORE_API_KEY,
progress on stderr (load: plain lines off a terminal, a live line on one;
conform: a line per suite and each Retry-After wait), and the message for
TLS spoken to a plain port or plain HTTP to a TLS port.

usage: cli_test.py --server S --conform C --load L CASE
"""
import argparse
import http.server
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import check, failures, read_first_line, run_on_pty, start_server, stop_process  # noqa: E402

KEY = "cli-test-key-0001"


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PETSTORE_") and k not in ("NO_COLOR", "FORCE_COLOR")}
    env["TERM"] = "xterm"
    env.update(extra)
    return env


def run(argv, env=None, timeout=60):
    p = subprocess.run(argv, capture_output=True, timeout=timeout, env=env or clean_env())
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


class Server:
    """The reference server on a free loopback port."""

    def __init__(self, binary, *extra):
        self.p, self.url = start_server([binary, "--port", "0", "--no-seed", "--key",
                                         KEY + ":enterprise:100000:10000000"] + list(extra),
                                        stderr=subprocess.DEVNULL)
        if not self.url:
            stop_process(self.p)
            raise SystemExit("server did not start")

    def stop(self):
        stop_process(self.p, 15)


def programs(a):
    return [("petstore-server", a.server), ("petstore-conform", a.conform), ("petstore-load", a.load)]


def case_help_version(a):
    for name, binary in programs(a):
        for flag in ("-h", "--help", "--he"):
            rc, out, err = run([binary, flag])
            check(rc == 0 and out.startswith("usage: " + name) and not err,
                  "%s %s: exit %d, %r" % (name, flag, rc, out[:80]))
            check("-h, --help" in out, "%s --help does not list -h" % name)
        rc, out, _ = run([binary, "--version"])
        check(rc == 0 and re.fullmatch(re.escape(name) + r" \d+\.\d+\.\d+\S*\n", out),
              "%s --version: exit %d, %r" % (name, rc, out))
        rc, out2, _ = run([binary, "--vers"])  # a unique prefix
        check(rc == 0 and out2 == out, "%s --vers (prefix): exit %d, %r" % (name, rc, out2))


def usage_error(name, binary, args, pattern, env=None):
    rc, out, err = run([binary] + args, env=env)
    lines = err.splitlines()
    ok = check(rc == 2, "%s %s: exit %d, expected 2" % (name, args, rc))
    ok = check(len(lines) == 2, "%s %s: %d lines on stderr, expected 2: %r" % (name, args, len(lines), err)) and ok
    if lines:
        ok = check(re.fullmatch(re.escape(name + ": ") + pattern, lines[0]) is not None,
                   "%s %s: first line %r does not match %r" % (name, args, lines[0], pattern)) and ok
        ok = check(lines[-1] == "see '%s --help'" % name, "%s %s: last line %r" % (name, args, lines[-1])) and ok
    check(out == "", "%s %s: wrote to stdout: %r" % (name, args, out[:200]))
    return ok


def case_usage_errors(a):
    base = {"petstore-conform": ["--base-url", "http://127.0.0.1:9/v1", "--api-key", "k"],
            "petstore-load": ["--base-url", "http://127.0.0.1:9/v1", "--api-key", "k"],
            "petstore-server": ["--key", "k:pro"]}
    bad_value = {"petstore-server": ("--threads", "0"), "petstore-conform": ("--timeout", "soon"),
                 "petstore-load": ("--threads", "0")}
    for name, binary in programs(a):
        usage_error(name, binary, base[name] + ["--bogus"], r"--bogus: unknown flag")
        usage_error(name, binary, base[name] + ["--bogus=1"], r"--bogus: unknown flag")
        usage_error(name, binary, base[name] + ["-Z"], r"-Z: unknown flag")
        usage_error(name, binary, base[name] + ["--help=yes"], r"--help: takes no value")
        usage_error(name, binary, base[name] + ["stray"], r"unexpected argument 'stray'.*")
        flag, value = bad_value[name]
        usage_error(name, binary, base[name] + [flag, value], re.escape(flag) + r": .*" + re.escape(value) + ".*")
        usage_error(name, binary, base[name] + [flag], re.escape(flag) + r": needs a value")
        # a unique prefix is the flag; an ambiguous one names the candidates
        usage_error(name, binary, base[name] + [flag[:7], value], re.escape(flag) + r": .*")
    usage_error("petstore-server", a.server, ["--max", "1"], r"--max: ambiguous \(--max-body, .*\)")
    usage_error("petstore-conform", a.conform, ["--limit", "k"], r"--limit: ambiguous \(--limit-key, --limit-plan\)")
    usage_error("petstore-load", a.load, ["--thr", "1"], r"--thr: ambiguous \(--threads, --threshold\)")
    usage_error("petstore-conform", a.conform, ["--color=sometimes"], r"--color: expected auto, always or never.*")
    usage_error("petstore-load", a.load, ["--progress-interval", "soon"], r"--progress-interval: .*soon.*")
    # petstore-load no longer prints its whole usage after an error
    rc, _, err = run([a.load, "--bogus"])
    check("usage:" not in err, "petstore-load printed its usage after an error: %r" % err[:300])


def conform_console(a, env, on_pty, args=()):
    """The conform console of a quick aborted run (nothing listens)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    argv = [a.conform, "--base-url", "http://127.0.0.1:%d/v1" % port, "--api-key", "k", "--timeout", "2s"] + list(args)
    if on_pty:
        return run_on_pty(argv, env)[1]
    p = subprocess.run(argv, capture_output=True, env=env, timeout=60)
    return p.stdout


def case_color(a):
    esc = b"\033["
    got = conform_console(a, clean_env(), True)
    check(esc in got and b"SKIP" in got, "no colour on a terminal: %r" % got[:200])
    for what, env, args in [("--color=never", clean_env(), ["--color=never"]),
                            ("--no-color", clean_env(), ["--no-color"]),
                            ("NO_COLOR=1", clean_env(NO_COLOR="1"), []),
                            ("TERM=dumb", clean_env(TERM="dumb"), []),
                            ("NO_COLOR beats FORCE_COLOR", clean_env(NO_COLOR="1", FORCE_COLOR="1"), [])]:
        got = conform_console(a, env, True, args)
        check(b"SKIP" in got and esc not in got, "%s on a terminal: colour anyway: %r" % (what, got[:200]))
    for what, env, args in [("FORCE_COLOR=1", clean_env(FORCE_COLOR="1"), []),
                            ("--color=always", clean_env(NO_COLOR="1"), ["--color=always"]),
                            ("FORCE_COLOR beats TERM=dumb", clean_env(FORCE_COLOR="1", TERM="dumb"), [])]:
        got = conform_console(a, env, False, args)
        check(b"SKIP" in got and esc in got, "%s into a pipe: no colour: %r" % (what, got[:200]))
    got = conform_console(a, clean_env(), False)
    check(b"SKIP" in got and esc not in got, "colour into a pipe without FORCE_COLOR: %r" % got[:200])


def case_load_env(a):
    srv = Server(a.server)
    try:
        env = clean_env(PETSTORE_BASE_URL=srv.url, PETSTORE_API_KEY=KEY)
        rc, _, err = run([a.load, "--requests", "20", "--quiet"], env=env)
        check(rc == 0, "PETSTORE_BASE_URL/PETSTORE_API_KEY not used: exit %d %r" % (rc, err[-300:]))
        # flags win over the environment
        env = clean_env(PETSTORE_BASE_URL="http://127.0.0.1:9/v1", PETSTORE_API_KEY="wrong-key-000")
        rc, _, err = run([a.load, "--base-url", srv.url, "--api-key", KEY, "--requests", "20", "--quiet",
                          "--json", "-"], env=env)
        check(rc == 0, "flags did not win over the environment: exit %d %r" % (rc, err[-300:]))
        # an empty variable is no value
        rc, _, err = run([a.load, "--requests", "5"], env=clean_env(PETSTORE_BASE_URL=srv.url, PETSTORE_API_KEY=""))
        check(rc == 2 and "PETSTORE_API_KEY" in err, "empty PETSTORE_API_KEY: exit %d %r" % (rc, err))
    finally:
        srv.stop()


def case_load_progress(a):
    srv = Server(a.server)
    try:
        common = [a.load, "--base-url", srv.url, "--rate", "50", "--duration", "3s"]
        env = clean_env(PETSTORE_API_KEY=KEY)
        rc, _, err = run(common + ["--progress-interval", "1s"], env=env)
        lines = [l for l in err.splitlines() if re.match(r"petstore-load: \d+s/3s  ETA \d+s  \d+ req/s  429s \d+  "
                                                         r"errors \d+  p99 so far [\d.]+ ms$", l)]
        check(rc == 0 and 2 <= len(lines) <= 4, "--progress-interval 1s, 3 s off a terminal: %d lines (exit %d): %r"
              % (len(lines), rc, err[:600]))
        check("\r" not in err, "a carriage return off a terminal")
        for off in (["--quiet"], ["--progress-interval", "0"]):
            rc, _, err = run(common + ["--progress-interval", "1s"] + off if off[0] == "--quiet" else common + off, env=env)
            check(rc == 0 and "ETA" not in err, "%s: progress anyway: %r" % (off, err[:300]))
        rc, _, err = run([a.load, "--base-url", srv.url, "--rate", "50", "--requests", "100",
                          "--progress-interval", "1s"], env=env)
        check(re.search(r"petstore-load: \d+s, \d+/100 requests  ETA", err) is not None,
              "--requests run: no 'N/100 requests' progress: %r" % err[:400])
        # a terminal: one line redrawn with \r
        rc, got = run_on_pty(common, env)
        text = got.decode("utf-8", "replace")
        check(rc == 0 and text.count("\r") >= 2 and "ETA" in text and "429s" in text and "p99 so far" in text,
              "no live line on a terminal (exit %d): %r" % (rc, text[:400]))
    finally:
        srv.stop()


def case_conform_progress(a):
    srv = Server(a.server)
    try:
        env = clean_env(PETSTORE_API_KEY=KEY)
        rc, _, err = run([a.conform, "--base-url", srv.url, "--only", "auth.*"], env=env)
        suites = re.findall(r"^petstore-conform: suite (\w+): ", err, re.M)
        check(suites[:2] == ["probe", "auth"], "suite lines: %r (exit %d): %r" % (suites, rc, err[:400]))
        rc, _, err = run([a.conform, "--base-url", srv.url, "--only", "auth.*", "--quiet"], env=env)
        check("suite" not in err, "--quiet: progress anyway: %r" % err[:300])
    finally:
        srv.stop()

    # A service that answers the first request 429 (Retry-After 1): the wait is announced.
    class Handler(http.server.BaseHTTPRequestHandler):
        first = [True]

        def log_message(self, *args):
            pass

        def do_any(self):
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
            if Handler.first[0]:
                Handler.first[0] = False
                body, status, extra = b'{"code":"rate_limited","message":"wait","status":429}', 429, [("Retry-After", "1")]
            else:
                body, status, extra = b"[]", 200, []
            self.send_response(status)
            for k, v in [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                         ("X-RateLimit-Limit", "100"), ("X-RateLimit-Remaining", "5"),
                         ("X-RateLimit-Reset", str(int(time.time()) + 30))] + extra:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_any

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = "http://127.0.0.1:%d/v1" % httpd.server_address[1]
        rc, _, err = run([a.conform, "--base-url", url, "--timeout", "2s", "--max-wait", "5s"], env=env, timeout=120)
        check(re.search(r"^petstore-conform: waiting [12] s for the main key's rate-limit window \(Retry-After 1\)$",
                        err, re.M) is not None, "no announcement of the Retry-After wait (exit %d): %r" % (rc, err[:600]))
    finally:
        httpd.shutdown()


def tls_server(tmp):
    """A TLS server on loopback with a throwaway self-signed certificate;
    returns its port (None when openssl is missing)."""
    if not shutil.which("openssl"):
        return None
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                        "/CN=127.0.0.1", "-keyout", key, "-out", cert], capture_output=True)
    if r.returncode != 0:
        return None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)

    def serve():
        while True:
            try:
                conn, _ = ls.accept()
            except OSError:
                return

            def one(conn):
                try:
                    with ctx.wrap_socket(conn, server_side=True) as t:
                        t.recv(4096)
                except (OSError, ssl.SSLError):
                    pass
                finally:
                    conn.close()
            threading.Thread(target=one, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return ls.getsockname()[1]


def case_tls_mismatch(a):
    srv = Server(a.server)
    try:
        https = srv.url.replace("http://", "https://")
        env = clean_env(PETSTORE_API_KEY=KEY)
        rc, _, err = run([a.conform, "--base-url", https, "--timeout", "2s"], env=env)
        check(rc == 3 and "answered in plain HTTP: use http://" in err,
              "conform https:// to a plain port: exit %d %r" % (rc, err[-500:]))
        rc, _, err = run([a.load, "--base-url", https, "--insecure", "--duration", "1s"], env=env)
        check(rc == 3 and "answered in plain HTTP: use http://" in err,
              "load https:// to a plain port: exit %d %r" % (rc, err[-500:]))
    finally:
        srv.stop()
    with tempfile.TemporaryDirectory() as tmp:
        port = tls_server(tmp)
        if port is None:
            print("skipped plain-to-TLS: no openssl", file=sys.stderr)
            return
        url = "http://127.0.0.1:%d/v1" % port
        env = clean_env(PETSTORE_API_KEY=KEY)
        rc, _, err = run([a.conform, "--base-url", url, "--timeout", "2s"], env=env)
        check(rc == 3 and "answered in TLS: use https://" in err,
              "conform http:// to a TLS port: exit %d %r" % (rc, err[-500:]))
        rc, _, err = run([a.load, "--base-url", url, "--duration", "1s"], env=env)
        check(rc == 3 and "answered in TLS: use https://" in err,
              "load http:// to a TLS port: exit %d %r" % (rc, err[-500:]))


def _core_limit(pid):
    """(soft, hard) of 'Max core file size' in /proc/PID/limits, as text."""
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max core file size"):
                return tuple(line.split()[4:6])
    return None


def case_no_core_dumps(a):
    """Issue 22: each program holds API keys; where dumps are on (ulimit -c
    unlimited) a crash wrote them to disk. Each is started with dumps
    allowed, found with RLIMIT_CORE 0, then aborted: no core written."""
    import resource

    def allow_dumps():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    env = clean_env(PETSTORE_API_KEY=KEY)
    with tempfile.TemporaryDirectory() as cwd:
        runs = [
            ("petstore-server", [a.server, "--port", "0", "--no-seed", "--key", KEY + ":pro"], True),
            ("petstore-load", [a.load, "--base-url", "URL", "--duration", "60s",
                               "--connections", "1", "--threads", "1", "--quiet"], False),
            ("petstore-conform", [a.conform, "--base-url", "URL", "--plan", "pro"], False),
        ]
        for name, argv, prints_url in runs:
            # a port of its own that accepts and never answers: its first
            # connection shows main has begun its work (none left from another)
            silent = socket.socket()
            silent.bind(("127.0.0.1", 0))
            silent.listen(64)
            url = "http://127.0.0.1:%d/v1" % silent.getsockname()[1]
            argv = [url if x == "URL" else x for x in argv]
            p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, preexec_fn=allow_dumps)
            try:
                if prints_url:
                    ready = read_first_line(p, 10).startswith("http")
                else:
                    silent.settimeout(20)
                    try:
                        conn, _ = silent.accept()
                        ready = True
                    except socket.timeout:
                        ready = False
                check(ready, "%s did not start" % name)
                limit = _core_limit(p.pid)
                check(limit == ("0", "0"), "%s: core file size limit %r, want (0, 0)" % (name, limit))
                os.kill(p.pid, signal.SIGABRT)
                _, status = os.waitpid(p.pid, 0)
                p.returncode = -1  # reaped here
                check(os.WIFSIGNALED(status) and not os.WCOREDUMP(status),
                      "%s: aborted with dumps allowed: status %#x (core dumped: %s)"
                      % (name, status, os.WIFSIGNALED(status) and os.WCOREDUMP(status)))
            finally:
                if p.returncode is None:
                    stop_process(p, 5, signal.SIGKILL)
                silent.close()
        check(not [f for f in os.listdir(cwd) if f.startswith("core")], "a core file was written")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--conform", required=True)
    ap.add_argument("--load", required=True)
    ap.add_argument("case")
    a = ap.parse_args()
    globals()["case_" + a.case](a)
    print("%s: %s" % (a.case, "FAILED" if failures else "ok"), file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
