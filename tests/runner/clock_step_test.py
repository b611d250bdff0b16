#!/usr/bin/env python3
"""clock_step_test.py - a service clock that steps during the run is named
as a clock step, never blamed on another check (issue 27 item 4).

The reference server runs under libfaketime reading its offset from a file
(FAKETIME_TIMESTAMP_FILE, re-read at every call); its limiter and its Date
follow that wall clock. While the runner waits out the limit suite's 429
(its --verbose stream fell silent after the window probe's answer), the
test steps the clock back 2 s: the window then ends 2 s later than the
Retry-After said. Once, limit429.recovers failed 8 of 8 such runs blaming
Retry-After rounding.

  clock_step_test.py --conform BIN --server BIN step_back | step_back_no_recovery | step_back_token_bucket

step_back: nothing fails, the report's transport.clock_steps is 1 or more
and the console says the clock stepped. step_back_no_recovery (--fault
no-recovery: the key stays limited): limit429.recovers still fails. step_back_token_bucket (the whole run, stepped
as the roundtrip suite begins): nothing fails. Exit 77 without libfaketime.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import conform_test as ct  # noqa: E402
from pstest import start_server, stop_process  # noqa: E402

check = ct.check
QUIET_S = 1.5  # the runner silent this long after the probe's answer: waiting out the 429
STEP = "-2"


def run(a, tmp, server_extra, runner_extra=("--only", "limit429"), at_suite=None):
    """at_suite: step as soon as the runner announces that suite (else while
    it waits out the limit suite's 429)."""
    libs = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1") + glob.glob("/usr/lib/faketime/libfaketime.so.1"))
    if not libs:
        return None, "needs libfaketime (Debian faketime)"
    stamp = os.path.join(tmp, "faketime")
    with open(stamp, "w") as f:
        f.write("+0\n")
    env = dict(os.environ, LD_PRELOAD=libs[0], FAKETIME_TIMESTAMP_FILE=stamp, FAKETIME_NO_CACHE="1",
               FAKETIME_DONT_FAKE_MONOTONIC="1",
               ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0").lstrip(":"))
    # 10 s windows: the wait for the 429 leaves seconds after the step
    srv, url = start_server([a.server, "--port", "0", "--no-seed", "--time-scale", "6", "--key", ct.MAIN_KEY + ":pro",
                             "--key", ct.LIMIT_KEY + ":free"] + server_extra,
                            stderr=open(os.path.join(tmp, "server.err"), "w"), env=env)
    if not url:
        stop_process(srv)
        check(False, "the server did not start under libfaketime")
        return None, None
    report = os.path.join(tmp, "report.json")
    cenv = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    p = subprocess.Popen([a.conform, "--base-url", url, "--api-key", ct.MAIN_KEY, "--plan", "pro", "--limit-key",
                          ct.LIMIT_KEY, "--limit-plan", "free", "--max-wait", "30s", "--verbose",
                          "--json", report] + list(runner_extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                         env=cenv)
    state = {"probed": False, "last": time.monotonic()}

    def read_err():
        in_suite = False
        for line in p.stderr:
            state["last"] = time.monotonic()
            if at_suite and "suite %s:" % at_suite in line:
                state["now"] = True
            in_suite = in_suite or "suite limit429: exhaust" in line
            if in_suite and line.startswith("< Date"):
                state["probed"] = True

    reader = threading.Thread(target=read_err, daemon=True)
    reader.start()
    stepped = False
    deadline = time.monotonic() + 150
    while p.poll() is None and time.monotonic() < deadline:
        due = state.get("now") if at_suite else state["probed"] and time.monotonic() - state["last"] > QUIET_S
        if not stepped and due:
            with open(stamp, "w") as f:
                f.write(STEP + "\n")
            stepped = True
        time.sleep(0.02)
    if p.poll() is None:
        p.kill()
    out = p.stdout.read()
    p.wait()
    reader.join(5)
    stop_process(srv)
    check(stepped, "the runner never fell silent after the window probe: the clock was not stepped")
    print("runner exit %d" % p.returncode, file=sys.stderr)
    doc = None
    if os.path.exists(report) and os.path.getsize(report):
        import json
        with open(report) as f:
            doc = json.load(f)
    return (p.returncode, out, doc), None


def mode_step_back(a, tmp):
    res, skip = run(a, tmp, [])
    if skip or not res:
        return skip
    rc, out, doc = res
    if not check(doc is not None, "no JSON report"):
        return None
    failed = ct.checks_by_status(doc).get("failed", set())
    check(rc == 0 and not failed, "a clock step back of 2 s: exit %d, failed %s\n%s" % (rc, sorted(failed), out[-2500:]))
    steps = (doc.get("transport") or {}).get("clock_steps", 0)
    check(steps >= 1, "the clock step is not in the report's transport.clock_steps (%r)" % steps)
    check("(stepped " in out, "the console does not say the service's clock stepped")
    return None


def mode_step_back_no_recovery(a, tmp):
    # the crossing with creates and 400s would wait out a key limited for the day
    res, skip = run(a, tmp, ["--fault", "no-recovery"], ["--only", "limit429", "--skip", "limit429.every-operation"])
    if skip or not res:
        return skip
    rc, out, doc = res
    if not check(doc is not None, "no JSON report"):
        return None
    failed = ct.checks_by_status(doc).get("failed", set())
    check(rc == 1 and "limit429.recovers" in failed,
          "no-recovery with a clock step: exit %d, failed %s (limit429.recovers expected)" % (rc, sorted(failed)))
    return None


def mode_step_back_token_bucket(a, tmp):
    """A token bucket counted in wall time loses 2 s of refill with the step:
    its Remaining falls by more than one request across it, which once failed
    ratelimit.headers-consistent blaming two limiters. The whole run, the
    clock stepped as the roundtrip suite begins."""
    res, skip = run(a, tmp, ["--limiter", "token-bucket"], (), at_suite="roundtrip")
    if skip or not res:
        return skip
    rc, out, doc = res
    if not check(doc is not None, "no JSON report"):
        return None
    failed = ct.checks_by_status(doc).get("failed", set())
    check(rc == 0 and not failed, "token bucket, a clock step back of 2 s: exit %d, failed %s\n%s"
          % (rc, sorted(failed), out[-2500:]))
    check((doc.get("transport") or {}).get("clock_steps", 0) >= 1, "the clock step is not in the report")
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conform", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("case", choices=["step_back", "step_back_no_recovery", "step_back_token_bucket"])
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="clockstep-") as tmp:
        skip = globals()["mode_" + a.case](a, tmp)
    if skip and not ct.failures:
        print("skipped: " + skip)
        return 77
    if ct.failures:
        print("%d failure(s)" % len(ct.failures), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
