"""pstest.py - what the Python integration tests share (stdlib only): a
failure list with check() and the exit status it makes, a program that prints its base URL as its first
stdout line (the reference server, started with --port 0) started and
stopped with bounded waits, a program run on a terminal, JSON read with a
failure recorded, a line awaited on a pipe, a loopback GET, a Prometheus
server scraping loopback targets, and the main of a script of named cases
(run_cases).

Import it with the test's folder's ../lib on sys.path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
"""
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

failures = []


def check(cond, what):
    """Records what as a failure (and prints it) when cond is false; returns cond."""
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return cond


def exit_status():
    """The test's exit status, said last: the failure count and 1, or "ok" and 0."""
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        return 1
    print("ok")
    return 0


def read_first_line(proc, timeout):
    """proc's first stdout line, stripped; "" if it exits or the timeout
    passes first. Reads byte by byte so nothing after the line is taken."""
    line = b""
    deadline = time.monotonic() + timeout
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            return ""
        r, _, _ = select.select([proc.stdout], [], [], left)
        if r:
            ch = os.read(proc.stdout.fileno(), 1)
            if not ch:
                return ""  # stdout closed: the program ended
            line += ch
    return line.decode(errors="replace").strip()


def start_server(argv, timeout=10, **popen_kw):
    """Starts argv (stdout piped) and waits for its base URL line: returns
    (proc, url), url None when no http(s) URL came within timeout (proc is
    still returned, to be stopped and its stderr read)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, **popen_kw)
    line = read_first_line(proc, timeout)
    return proc, line if line.startswith("http") else None


def stop_process(proc, timeout=10, sig=signal.SIGTERM):
    """Sends sig unless proc has ended, waits up to timeout, then kills it.
    Returns its exit status."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
    return proc.returncode


def run_on_pty(argv, env, timeout=60, stdout_too=True, stderr_too=True):
    """Runs argv with stderr and stdout on a terminal (either one sent to
    /dev/null instead when its *_too is false); returns (rc, bytes)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdout=slave if stdout_too else subprocess.DEVNULL,
                         stderr=slave if stderr_too else subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.5)
        if r:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif p.poll() is not None:
            break
    rc = p.wait(10)
    os.close(master)
    return rc, b"".join(chunks)


def free_port():
    """A loopback port nothing listens on now (the kernel's pick)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=10, proc=None, host="127.0.0.1"):
    """True once host:port accepts a connection (bounded); False when
    proc (if given) ended first or the timeout passed."""
    import socket
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with socket.create_connection((host, port), timeout=1):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def make_ca(tmp, name="ca"):
    """A private CA made with openssl in tmp: returns (cert, key) paths, or
    None when openssl is missing or fails."""
    cert, key = os.path.join(tmp, name + ".pem"), os.path.join(tmp, name + ".key")
    try:
        r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                            "-subj", "/CN=petstore test %s" % name, "-keyout", key, "-out", cert],
                           capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (cert, key) if r.returncode == 0 else None


def make_cert(tmp, ca, name, san="IP:127.0.0.1,DNS:localhost"):
    """A server certificate for san (subjectAltName syntax) signed by ca
    (make_ca's pair): returns (cert, key) paths, or None."""
    cert, key, csr = (os.path.join(tmp, name + ext) for ext in (".pem", ".key", ".csr"))
    ext = os.path.join(tmp, name + ".ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=%s\nbasicConstraints=CA:FALSE\n" % san)
    try:
        for argv in (["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name,
                      "-keyout", key, "-out", csr],
                     ["openssl", "x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1],
                      "-CAcreateserial", "-days", "2", "-extfile", ext, "-out", cert]):
            if subprocess.run(argv, capture_output=True, timeout=60).returncode != 0:
                return None
    except (OSError, subprocess.TimeoutExpired):
        return None
    return cert, key


def nginx_binary():
    """nginx's path, or None."""
    import shutil
    return "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else shutil.which("nginx")


def start_nginx(tmp, servers, http_extra=""):
    """nginx (one worker, no master, no access log unless a server asks)
    with its files in tmp. servers(ports) returns the server { } blocks for
    the list of free ports it is given; call as start_nginx(tmp, fn, ...)
    with fn.nports set (default 1). Returns (proc, ports) once every port
    accepts, or (None, None); a port taken meanwhile is retried."""
    nginx = nginx_binary()
    if not nginx:
        return None, None
    nports = getattr(servers, "nports", 1)
    for _ in range(5):
        ports = [free_port() for _ in range(nports)]
        conf = os.path.join(tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write("""daemon off; master_process off; worker_processes 1; pid %(t)s/nginx.pid;
error_log %(t)s/nginx.err warn;
events { worker_connections 1024; }
http {
  access_log off; client_body_temp_path %(t)s; proxy_temp_path %(t)s;
  fastcgi_temp_path %(t)s; uwsgi_temp_path %(t)s; scgi_temp_path %(t)s;
  %(x)s
%(s)s
}
""" % {"t": tmp, "x": http_extra, "s": servers(ports)})
        proc = subprocess.Popen([nginx, "-p", tmp, "-c", conf], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        if all(wait_port(p, proc=proc) for p in ports):
            return proc, ports
        stop_process(proc)
    return None, None


def load_json(path):
    """The JSON document in path, or None with a failure recorded."""
    import json
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        check(False, "cannot read %s: %s" % (path, e))
        return None


def wait_line(stream, pattern, timeout, seen=None):
    """Reads stream (a pipe) line by line until a line matches the regular
    expression pattern: returns the match, or None when the stream ends or
    the timeout passes. Lines read are appended to seen (a list) if given."""
    import re
    deadline = time.monotonic() + timeout
    buf = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        r, _, _ = select.select([stream], [], [], left)
        if not r:
            return None
        ch = os.read(stream.fileno(), 1)
        if not ch:
            return None
        if ch != b"\n":
            buf += ch
            continue
        line = buf.decode(errors="replace")
        buf = b""
        if seen is not None:
            seen.append(line)
        m = re.search(pattern, line)
        if m:
            return m


def http_get(url, headers=None, timeout=5):
    """(status, content type, body text) of a GET on a loopback URL; status
    0 when it could not connect."""
    import urllib.error
    import urllib.request
    req = urllib.request.Request(url, headers=headers or {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode("utf-8", "replace")
    except OSError:
        return 0, "", ""


def start_prometheus(tmp, targets, interval="1s"):
    """Debian's prometheus scraping targets (host:port on loopback) every
    interval, listening on a free loopback port with its data in tmp.
    Returns (proc, port) once its API answers, or (None, None) when the
    binary is missing or it would not start (a port taken meanwhile is
    retried)."""
    import shutil
    prom = shutil.which("prometheus")
    if not prom:
        return None, None
    conf = os.path.join(tmp, "prometheus.yml")
    with open(conf, "w") as f:
        f.write("global:\n  scrape_interval: %s\n  scrape_timeout: %s\n"
                "scrape_configs:\n  - job_name: load\n    static_configs:\n      - targets: [%s]\n"
                % (interval, interval, ", ".join("'%s'" % t for t in targets)))
    for attempt in range(3):
        port = free_port()
        data = os.path.join(tmp, "prometheus-data-%d" % attempt)
        log = open(os.path.join(tmp, "prometheus.log"), "ab")
        proc = subprocess.Popen([prom, "--config.file=" + conf, "--storage.tsdb.path=" + data,
                                 "--web.listen-address=127.0.0.1:%d" % port,
                                 "--storage.tsdb.retention.time=1h"],
                                stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            status, _, _ = http_get("http://127.0.0.1:%d/-/ready" % port, timeout=2)
            if status == 200:
                return proc, port
            time.sleep(0.2)
        stop_process(proc)
    return None, None


def run(argv, timeout=240, prefix=()):
    """Runs prefix + argv without the PETSTORE_* environment (which would
    stand in for flags): (exit status, stdout text, stderr text)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    p = subprocess.run(list(prefix) + argv, capture_output=True, timeout=timeout, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def run_starved(argv, cpu, busy_loops=2, timeout=240):
    """run(argv) pinned to CPU cpu at nice 19 beside busy_loops busy loops on
    that CPU: a generator held back by its CPU (running or waiting to run
    nearly all the time), the loops ended however the run ends."""
    loops = [subprocess.Popen(["taskset", "-c", cpu, sys.executable, "-c", "while True: pass"])
             for _ in range(busy_loops)]
    try:
        return run(argv, timeout=timeout, prefix=("taskset", "-c", cpu, "nice", "-n", "19"))
    finally:
        for loop in loops:
            loop.kill()
            loop.wait(10)


def run_cases(cases, tmp_prefix):
    """The main of a script of named cases run against petstore-load and
    the reference server: parses CASE --load PATH --server PATH [--npm DIR],
    runs cases[CASE](args, tmp) in a fresh temporary folder (named
    tmp_prefix...) and returns the exit status: 77, ctest's skip, when the
    case returned a reason to skip and nothing failed; else exit_status()."""
    import argparse
    import tempfile
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(cases))
    ap.add_argument("--load", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--npm")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix=tmp_prefix) as tmp:
        skip = cases[args.case](args, tmp)
    if skip and not failures:
        print("skipped: " + skip)
        return 77
    return exit_status()


def validate_load_report(npm, path, schema="load-report.schema.json"):
    """Checks a petstore-load --json report against schemas/SCHEMA
    (load-report.schema.json, or merged-load-report.schema.json for a merge)
    with ajv (tools/npm), recording a failure; says so and returns when node
    or ajv is not there."""
    import shutil
    here = os.path.dirname(os.path.abspath(__file__))
    node = shutil.which("node")
    if not node or not npm or not os.path.isdir(os.path.join(npm, "node_modules", "ajv")):
        print("ajv not available: schema check skipped")
        return
    p = subprocess.run([node, os.path.join(here, "..", "reports", "peers", "read_reports.mjs"),
                        os.path.join(npm, "node_modules"), "schema",
                        os.path.join(here, "..", "..", "schemas", schema), path],
                       capture_output=True, timeout=60)
    out = p.stdout.decode("utf-8", "replace")
    check(p.returncode == 0 and '"valid":true' in out,
          "ajv, %s: %s %s" % (schema, out[-800:], p.stderr.decode()[-300:]))


def false_reasons(doc):
    """The reasons of a conformance --json report that are not true (issue 19
    item 7): a check not run whose message names, as what decided it, another
    check that passed in the same run, or counts a wait in negative seconds. Returns "ID: message (names PASSED,
    which passed)" lines, empty when every reason holds."""
    checks = [c for s in doc.get("suites", []) for c in s.get("checks", [])]
    passed = {c["id"] for c in checks if c.get("status") == "passed"}
    bad = []
    for c in checks:
        if c.get("status") != "not_run":
            continue
        msg = c.get("message") or ""
        # an id as a word: not part of a longer id (ratelimit.reset-unix-seconds-x)
        named = {m for m in re.findall(r"(?<![a-z0-9.-])([a-z0-9]+\.[a-z0-9-]+)(?![a-z0-9-])", msg)}
        for cid in sorted(named & passed - {c["id"]}):
            bad.append("%s: %r names %s, which passed" % (c["id"], msg[:300], cid))
        # a time still to come counted below zero (a Reset that named no time read as 0)
        if re.search(r"\bin -\d+ s\b", msg):
            bad.append("%s: %r counts negative seconds" % (c["id"], msg[:300]))
    return bad
