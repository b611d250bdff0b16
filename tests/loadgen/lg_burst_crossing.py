#!/usr/bin/env python3
"""lg_burst_crossing.py - petstore-load --burst catches a check-then-count
race with as few connections as cross the limit (issue 27 item 6).

A Free key (60 a window; --time-scale 30: 2 s windows), the reference
server's over-admission-race (4 event loops), --burst --verify-limits with
61 connections: released all at once into a fresh window they crossed the
limit with the last requests a loop still had queued, served one at a time,
and the race passed 3 runs of 3 (128 connections caught it). Now a first
wave brings the window to half the connections (loadgen/volley.h,
ps_lg_volley_first_wave), so the release crosses it in its middle:

- race: each of RUNS fresh runs (61 connections, 1 and 2 threads) exits 1
  with an over_admission violation;
- clean: fixed, sliding-log and token-bucket limiters pass (exit 0,
  limits.verdict pass), the first wave never counted against them.

usage: lg_burst_crossing.py --load BIN --server BIN [--runs N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import check, exit_status, start_server, stop_process  # noqa: E402

KEY = "burst-key-0001"


def one_run(a, tmp, server_args, threads, name):
    proc, url = start_server([a.server, "--port", "0", "--no-seed", "--time-scale", "30", "--threads", "4",
                              "--key", KEY + ":free"] + server_args)
    try:
        if not check(url is not None, "%s: the server printed its URL" % name):
            return None, None
        out = os.path.join(tmp, name + ".json")
        argv = [a.load, "--quiet", "--base-url", url, "--api-key", KEY, "--plan", "free", "--connections", "61",
                "--threads", str(threads), "--burst", "--verify-limits", "--duration", "2s", "--json", out]
        try:
            rc = subprocess.run(argv, timeout=90).returncode
        except subprocess.TimeoutExpired:
            return -1, None
        try:
            with open(out) as f:
                return rc, json.load(f)
        except (OSError, ValueError):
            return rc, None
    finally:
        stop_process(proc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lg-burst-crossing-") as tmp:
        caught = 0
        for run in range(a.runs):
            threads = 1 + run % 2
            rc, doc = one_run(a, tmp, ["--fault", "over-admission-race"], threads, "race-%d" % run)
            kinds = [v.get("kind") for v in ((doc or {}).get("limits") or {}).get("violations", [])]
            ok = rc == 1 and "over_admission" in kinds
            caught += ok
            print("race run %d (%d threads): exit %s, violations %s, status %s"
                  % (run + 1, threads, rc, kinds, (doc or {}).get("status")), file=sys.stderr)
        check(caught == a.runs, "over-admission-race caught in %d of %d runs at 61 connections" % (caught, a.runs))
        for limiter in ("fixed", "sliding-log", "token-bucket"):
            rc, doc = one_run(a, tmp, ["--limiter", limiter], 2, "clean-" + limiter)
            verdict = ((doc or {}).get("limits") or {}).get("verdict")
            print("clean %s: exit %s, limits %s, status %s" % (limiter, rc, verdict, (doc or {}).get("status")),
                  file=sys.stderr)
            check(rc == 0 and verdict == "pass", "a correct %s limiter: exit %s, limits %s" % (limiter, rc, verdict))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
