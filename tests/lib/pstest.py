"""pstest.py - what the Python integration tests share (stdlib only): a
failure list with check() and the exit status it makes, a program that prints its base URL as its first
stdout line (the reference server, started with --port 0) started and
stopped with bounded waits, and a program run on a terminal.

Import it with the test's folder's ../lib on sys.path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
"""
import os
import pty
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


def run_on_pty(argv, env, timeout=60, stdout_too=True):
    """Runs argv with stderr (and stdout) on a terminal; returns (rc, bytes)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdout=slave if stdout_too else subprocess.DEVNULL, stderr=slave, env=env)
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
