#!/usr/bin/env python3
"""lg_connection_spread.py - petstore-load spreads its requests over every
connection, so a deployment balanced per connection sees all its instances.

Two petstore-server processes behind one port (haproxy in TCP mode, round
robin per connection), each counting alone: the key gets twice its plan.
--verify-limits must say over_admission (exit 1) in the open model at a
rate one connection could carry alone (200/s: with idle connections reused
last-in-first-out one instance saw almost every request and the run passed)
and in the closed model.

usage: lg_connection_spread.py --load BIN --server BIN [--runs N]
Exit 77 (skipped) without haproxy.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import check, exit_status, free_port, start_server, stop_process, wait_port  # noqa: E402

KEY = "spread-key-%04d"  # one per run: each starts on fresh counters
PLAN = "enterprise:10:100000"  # 10 a minute; --time-scale 30: 2 s windows


def start_balancer(tmp, backends):
    """haproxy on a free loopback port, TCP mode, round robin per
    connection over backends (host:port). Returns (proc, port) or (proc, None);
    a port taken between choosing and binding is retried."""
    for _ in range(5):
        port = free_port()
        cfg = os.path.join(tmp, "haproxy.cfg")
        with open(cfg, "w") as f:
            f.write("global\n  maxconn 1000\n\ndefaults\n  mode tcp\n  timeout connect 5s\n"
                    "  timeout client 60s\n  timeout server 60s\n\n"
                    "frontend fe\n  bind 127.0.0.1:%d\n  default_backend be\n\n"
                    "backend be\n  balance roundrobin\n" % port)
            for i, b in enumerate(backends):
                f.write("  server s%d %s\n" % (i, b))
        proc = subprocess.Popen(["haproxy", "-db", "-f", cfg], stdout=subprocess.DEVNULL,
                                stderr=open(os.path.join(tmp, "haproxy.err"), "w"))
        if wait_port(port, proc=proc):
            return proc, port
        stop_process(proc)
    return proc, None


def run_load(load, url, tmp, name, key, extra):
    out = os.path.join(tmp, name + ".json")
    argv = [load, "--quiet", "--base-url", url, "--api-key", key, "--plan", PLAN,
            "--connections", "8", "--duration", "1s", "--verify-limits", "--json", out] + extra
    try:
        rc = subprocess.run(argv, timeout=60).returncode
    except subprocess.TimeoutExpired:
        return -1, None
    try:
        with open(out) as f:
            return rc, json.load(f)
    except (OSError, ValueError):
        return rc, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--runs", type=int, default=2, help="open-model runs")
    a = ap.parse_args()
    if not shutil.which("haproxy"):
        print("skipped: needs haproxy", file=sys.stderr)
        return 77
    tmp = tempfile.mkdtemp(prefix="lg-spread-")
    servers, balancer = [], None
    try:
        backends = []
        cases = [("open-%d" % i, ["--rate", "200"]) for i in range(1, a.runs + 1)]
        cases.append(("closed", []))
        keys = []
        for i in range(len(cases)):
            keys += ["--key", KEY % (i + 1) + ":" + PLAN]
        for _ in range(2):
            proc, url = start_server([a.server, "--port", "0", "--no-seed", "--time-scale", "30"] + keys)
            servers.append(proc)
            if not check(url is not None, "a petstore-server printed its URL"):
                return exit_status()
            backends.append(url.split("//", 1)[1].split("/", 1)[0])
        balancer, port = start_balancer(tmp, backends)
        if not check(port is not None, "haproxy listens"):
            with open(os.path.join(tmp, "haproxy.err")) as f:
                print(f.read(), file=sys.stderr)
            return exit_status()
        url = "http://127.0.0.1:%d/v1" % port
        for i, (name, extra) in enumerate(cases):
            rc, doc = run_load(a.load, url, tmp, name, KEY % (i + 1), extra)
            lim = (doc or {}).get("limits", {})
            kinds = [v.get("kind") for v in lim.get("violations", [])]
            print("%s: exit %d, status %s, violations %s" %
                  (name, rc, (doc or {}).get("status"), kinds), file=sys.stderr)
            for v in lim.get("violations", [])[:1]:
                print("  " + v.get("message", ""), file=sys.stderr)
            check(rc == 1, "%s: exit 1 (a limit violated), got %d" % (name, rc))
            check(lim.get("verdict") == "fail", "%s: limits.verdict fail" % name)
            check("over_admission" in kinds, "%s: an over_admission violation" % name)
    finally:
        if balancer:
            stop_process(balancer)
        for p in servers:
            stop_process(p)
        shutil.rmtree(tmp, ignore_errors=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
