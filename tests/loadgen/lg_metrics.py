#!/usr/bin/env python3
"""lg_metrics.py - petstore-load --metrics-listen (loadgen/live_metrics.h)
against the reference server, one case per ctest:

  scrape      a run over keys in two groups serves /metrics on the port it
              prints (asked for port 0): the Prometheus text passes
              `promtool check metrics`; the series are labelled by plan and
              group, responses by code; the histogram's +Inf bucket is its
              _count; OpenMetrics when asked (ending in # EOF); no key, whole
              or masked, anywhere; other paths 404; a bad address is exit 2
              with a message naming the flag, a port in use too
  prometheus  Debian's prometheus server (loopback, temporary data, free
              port) scrapes a running petstore-load: its API says the target
              is up, and a query returns the sent count of each group
  stall       hostile scrapers (issue 30): 40 idle connections (more than
              the server keeps), 3 sending a byte every 0.5 s and 8 that
              never read their answers; scrapes are still answered within 1 s,
              a 3 s run ends on time, and a long run ends on SIGTERM

usage: lg_metrics.py CASE --load L --server S
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import (check, exit_status, http_get, load_json, start_prometheus, start_server,  # noqa: E402
                    stop_process, wait_line)

KEYS = ["metrics-background-key-0001", "metrics-background-key-0002", "metrics-probe-key-0001"]


def env():
    return {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}


def keys_file(tmp):
    path = os.path.join(tmp, "keys.txt")
    with open(path, "w") as f:
        f.write("%s enterprise 100000000 1000000000 group=background\n" % KEYS[0])
        f.write("%s enterprise 100000000 1000000000 group=background\n" % KEYS[1])
        f.write("%s pro group=probe\n" % KEYS[2])
    return path


def start_load(args, tmp, url, keys, extra=()):
    """petstore-load at a gentle rate for up to 100 s, serving its metrics on
    a port of its choosing: (proc, metrics URL or None)."""
    argv = [args.load, "--base-url", url, "--keys", keys, "--rate", "100", "--duration", "100s",
            "--metrics-listen", "127.0.0.1:0", "--quiet", "--json", os.path.join(tmp, "load.json")]
    proc = subprocess.Popen(argv + list(extra), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env())
    seen = []
    m = wait_line(proc.stderr, r"metrics at (http://127\.0\.0\.1:\d+/metrics)", 30, seen)
    check(m is not None, "no 'metrics at' line: %r" % seen)
    return proc, m.group(1) if m else None


def samples(text):
    """{(name, frozenset of label pairs): value} of an exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        if not check(m is not None, "unreadable sample line %r" % line):
            continue
        labels = frozenset(re.findall(r'([a-zA-Z_]+)="([^"]*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def value(s, name, **labels):
    return s.get((name, frozenset(labels.items())))


def wait_sent(murl, timeout=30):
    """The text scrape once both groups have sent something (bounded)."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        status, _, text = http_get(murl)
        s = samples(text) if status == 200 else {}
        if (value(s, "petstore_load_requests_sent_total", plan="enterprise", group="background") or 0) > 0 and \
           (value(s, "petstore_load_requests_sent_total", plan="pro", group="probe") or 0) > 0:
            return text
        time.sleep(0.2)
    check(False, "no request counted in %d s: %r" % (timeout, text[:500]))
    return text


def promtool_check(text, tmp):
    import shutil
    if not check(shutil.which("promtool") is not None, "promtool not installed (scripts/install-deps.sh: prometheus)"):
        return
    p = subprocess.run(["promtool", "check", "metrics"], input=text.encode(), capture_output=True, timeout=60)
    check(p.returncode == 0, "promtool check metrics: rc %d: %s %s" % (p.returncode, p.stdout.decode(),
                                                                      p.stderr.decode()))


def no_keys(text, what):
    for k in KEYS:
        for piece in (k, k[:2] + "***" + k[-2:], k[-8:]):
            check(piece not in text, "%s shows a key (%r)" % (what, piece))


def case_scrape(args, tmp):
    keys = keys_file(tmp)
    srv, url = start_server([args.server, "--port", "0", "--keys-file", keys, "--ban-after", "0"],
                            stderr=subprocess.DEVNULL)
    if not check(url is not None, "the reference server did not start"):
        return
    load, murl = start_load(args, tmp, url, keys)
    try:
        if not murl:
            return
        text = wait_sent(murl)
        status, ctype, text = http_get(murl)
        check(status == 200 and ctype.startswith("text/plain; version=0.0.4"), "text scrape: %d %r" % (status, ctype))
        promtool_check(text, tmp)
        s = samples(text)
        check((value(s, "petstore_load_responses_total", plan="enterprise", group="background", code="200") or 0) > 0,
              "no 200 counted for the background group: %s" % text[:2000])
        check((value(s, "petstore_load_responses_total", plan="pro", group="probe", code="200") or 0) > 0,
              "no 200 counted for the probe group")
        for plan, group in (("enterprise", "background"), ("pro", "probe")):
            inf = value(s, "petstore_load_latency_seconds_bucket", plan=plan, group=group, le="+Inf")
            count = value(s, "petstore_load_latency_seconds_count", plan=plan, group=group)
            check(inf is not None and inf == count and count > 0, "%s/%s: +Inf %r, count %r" % (plan, group, inf, count))
            check(value(s, "petstore_load_latency_seconds_sum", plan=plan, group=group) is not None, "no _sum")
            for reason in ("connect", "read", "timeout"):
                check(value(s, "petstore_load_request_failures_total", plan=plan, group=group, reason=reason) == 0,
                      "failures %s counted" % reason)
            check(value(s, "petstore_load_requests_late_total", plan=plan, group=group) is not None, "no late count")
        check(value(s, "petstore_load_requests_unsent_total") is not None, "no unsent count")
        no_keys(text, "the text scrape")
        status, ctype, om = http_get(murl, {"Accept": "application/openmetrics-text; version=1.0.0"})
        check(status == 200 and ctype.startswith("application/openmetrics-text"), "OpenMetrics: %d %r" % (status, ctype))
        check(om.endswith("# EOF\n"), "OpenMetrics does not end in # EOF")
        check("# TYPE petstore_load_requests_sent counter" in om, "OpenMetrics names the counter family without _total")
        no_keys(om, "the OpenMetrics scrape")
        status, _, _ = http_get(murl.replace("/metrics", "/"))
        check(status == 404, "GET / answered %d, not 404" % status)
        # the port is taken: a run that cannot serve its metrics does not start
        port = murl.split(":")[2].split("/")[0]
        p = subprocess.run([args.load, "--base-url", url, "--keys", keys, "--rate", "10", "--duration", "1s",
                            "--metrics-listen", "127.0.0.1:" + port], capture_output=True, timeout=60, env=env())
        err = p.stderr.decode()
        check(p.returncode == 2 and "--metrics-listen 127.0.0.1:%s" % port in err, "port in use: rc %d %r" % (p.returncode, err))
    finally:
        rc = stop_process(load, sig=signal.SIGINT, timeout=30)
        stop_process(srv)
    check(rc == 3, "petstore-load interrupted: exit %r, not 3" % rc)
    doc = load_json(os.path.join(tmp, "load.json"))
    check(doc is not None and doc.get("verdict") == "interrupted", "the interrupted run's JSON")
    for bad in ("nonsense", "127.0.0.1", "127.0.0.1:99999", ":80", "[::1]:x", "example.invalid:0"):
        p = subprocess.run([args.load, "--base-url", "http://127.0.0.1:1/v1", "--api-key", "k", "--rate", "1",
                            "--metrics-listen", bad], capture_output=True, timeout=60, env=env())
        err = p.stderr.decode()
        check(p.returncode == 2 and "--metrics-listen" in err and "\n" == err[-1:] and err.count("\n") <= 3,
              "--metrics-listen %s: rc %d %r" % (bad, p.returncode, err))


class Hostiles:
    """Connections to the metrics port that stall it if it serves one at a
    time: idle ones, ones dripping a request byte by byte, one that sends a
    request and never reads. Stopped (and closed) by stop()."""

    def __init__(self, murl, idle=40, drips=3):
        import socket
        import threading
        host, port = murl.split("/")[2].split(":")
        self.stopping = threading.Event()
        self.socks = []
        try:  # a server may refuse or drop what it cannot keep: allowed
            for _ in range(idle):
                self.socks.append(socket.create_connection((host, int(port)), timeout=5))
            for _ in range(8):  # more than the answers the server holds at once (4)
                hog = socket.socket()
                self.socks.append(hog)
                hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                hog.settimeout(5)
                hog.connect((host, int(port)))
                hog.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        except OSError:
            pass
        self.threads = [threading.Thread(target=self.drip, args=(host, int(port)), daemon=True) for _ in range(drips)]
        for t in self.threads:
            t.start()

    def drip(self, host, port):
        import socket
        try:
            with socket.create_connection((host, port), timeout=5) as s:
                for b in b"GET /metrics HTTP/1.1\r\nHost: x\r\n" * 100:
                    if self.stopping.wait(0.5):
                        return
                    s.sendall(bytes([b]))
        except OSError:
            pass  # the server may drop a dripping client: that is allowed

    def stop(self):
        self.stopping.set()
        for s in self.socks:
            s.close()
        for t in self.threads:
            t.join(5)


def timed_scrape(murl):
    t0 = time.monotonic()
    status, _, text = http_get(murl, timeout=20)
    return status, time.monotonic() - t0, text


def case_stall(args, tmp):
    keys = keys_file(tmp)
    srv, url = start_server([args.server, "--port", "0", "--keys-file", keys, "--ban-after", "0"],
                            stderr=subprocess.DEVNULL)
    if not check(url is not None, "the reference server did not start"):
        return
    try:
        # a 3 s run: answered beside the hostiles, and over on time
        load, murl = start_load(args, tmp, url, keys, ["--duration", "3s"])
        if not murl:
            stop_process(load, sig=signal.SIGKILL)
            return
        t0 = time.monotonic()
        hostiles = Hostiles(murl)
        try:
            times = []
            for _ in range(3):
                status, secs, text = timed_scrape(murl)
                check(status == 200 and "petstore_load_requests_sent_total" in text,
                      "scrape beside hostile clients: status %d after %.1f s" % (status, secs))
                times.append(secs)
            times.sort()
            # the median, so one scheduling hiccup on a loaded CI machine is not a verdict
            check(times[1] < 1.0 and times[2] < 3.0, "scrapes beside hostile clients took %s s" % times)
            try:
                rc = load.wait(30)
            except subprocess.TimeoutExpired:
                rc = None
            check(rc is not None, "a 3 s run still running %.0f s after it began" % (time.monotonic() - t0))
        finally:
            hostiles.stop()
            stop_process(load, sig=signal.SIGKILL)
        # a long run: SIGTERM ends it whatever its scrapers do
        load, murl = start_load(args, tmp, url, keys)
        if not murl:
            stop_process(load, sig=signal.SIGKILL)
            return
        hostiles = Hostiles(murl)
        try:
            status, secs, _ = timed_scrape(murl)
            check(status == 200, "scrape before SIGTERM: status %d after %.1f s" % (status, secs))
            load.send_signal(signal.SIGTERM)
            t0 = time.monotonic()
            try:
                rc = load.wait(20)
            except subprocess.TimeoutExpired:
                rc = None
            check(rc is not None, "petstore-load ignored SIGTERM beside hostile scrapers for 20 s")
        finally:
            hostiles.stop()
            stop_process(load, sig=signal.SIGKILL)
    finally:
        stop_process(srv)


def case_prometheus(args, tmp):
    keys = keys_file(tmp)
    srv, url = start_server([args.server, "--port", "0", "--keys-file", keys, "--ban-after", "0"],
                            stderr=subprocess.DEVNULL)
    if not check(url is not None, "the reference server did not start"):
        return
    load, murl = start_load(args, tmp, url, keys)
    prom = None
    try:
        if not murl:
            return
        target = murl[len("http://"):-len("/metrics")]
        prom, pport = start_prometheus(tmp, [target])
        if prom is None:
            print("prometheus not installed or would not start: skipped")
            sys.exit(77)
        api = "http://127.0.0.1:%d/api/v1/" % pport
        # Up as Prometheus's own API says, not after a sleep.
        health, deadline = None, time.monotonic() + 60
        while time.monotonic() < deadline and health != "up":
            status, _, body = http_get(api + "targets")
            m = re.search(r'"scrapeUrl":"%s".*?"health":"(\w+)"' % re.escape(murl), body)
            health = m.group(1) if m else None
            if health != "up":
                time.sleep(0.3)
        check(health == "up", "Prometheus never saw the target up (last %r)" % health)
        got, deadline = {}, time.monotonic() + 60
        q = urllib.parse.quote('sum by (group) (petstore_load_requests_sent_total{job="load"})')
        while time.monotonic() < deadline and len(got) < 2:
            status, _, body = http_get(api + "query?query=" + q)
            got = dict(re.findall(r'"group":"(\w+)"\},"value":\[[0-9.]+,"([0-9.e+]+)"\]', body))
            got = {g: v for g, v in got.items() if float(v) > 0}
            if len(got) < 2:
                time.sleep(0.3)
        check(set(got) == {"background", "probe"}, "query by group: %r" % got)
        q = urllib.parse.quote('petstore_load_latency_seconds_count{group="probe",plan="pro"}')
        status, _, body = http_get(api + "query?query=" + q)
        check('"result":[{' in body, "the latency histogram's count is not stored: %s" % body[:300])
    finally:
        if prom:
            check(stop_process(prom, timeout=30) == 0, "prometheus did not stop cleanly")
        stop_process(load, sig=signal.SIGINT, timeout=30)
        stop_process(srv)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=["scrape", "prometheus", "stall"])
    ap.add_argument("--load", required=True)
    ap.add_argument("--server", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lg_metrics_") as tmp:
        globals()["case_" + args.case](args, tmp)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
