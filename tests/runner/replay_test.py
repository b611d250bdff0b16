#!/usr/bin/env python3
"""replay_test.py - `petstore-conform replay FILE` treats the file as hostile
(issue 30): a replay file is what a bug report attaches, so opening one must
not send the reader's key anywhere the reader did not name, put headers of the
file's choosing on the wire, take memory out of proportion, or drive the
terminal.

  replay_test.py --conform BIN origin | headers | memory | escape

Each mode starts loopback catchers (127.0.0.1 and 127.0.0.2) that record every
request they get, runs the real binary and asserts what reached which catcher.
Every wait is the binary's exit (bounded by a timeout), never a sleep.
"""
import argparse
import http.server
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading

KEY = "pk-replay-secret-7f3a"
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return ok


class Catcher:
    """An HTTP server on host:0 recording (request line, raw header block)
    for each request, answering 500 with a body holding ESC and BEL."""

    def __init__(self, host):
        self.got = []
        catcher = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def handle_one(self):
                catcher.got.append((self.requestline, str(self.headers)))
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                body = b'{"code":500,"message":"boom \x1b[31m\x07"}'
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = handle_one

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer((host, 0), Handler)
        self.url = "http://%s:%d/v1" % (host, self.httpd.server_address[1])
        self.hostport = "%s:%d" % (host, self.httpd.server_address[1])
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def replay_doc(base_url, **request):
    req = {"method": "POST", "authorization": ["Bearer {key}"], "content_type": "application/json",
           "body": '{"name":"x"}'}
    req.update(request)
    return {"format": "petstore-conform-replay/1", "check": "generate.string-fields",
            "clause": "spec 2: a valid NewCategory is created", "probe": "name: a plain value",
            "expect": "created", "seed": 1, "base_url": base_url, "unknown_key": "petstore-conform-unknown",
            "request": req, "message": "", "curl": ""}


def write(tmp, name, doc):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def replay(a, args, limit_as=None, **extra_env):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    env["PETSTORE_API_KEY"] = KEY
    env.update(extra_env)

    def cap():
        if limit_as:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))

    p = subprocess.run([a.conform, "replay"] + args, env=env, capture_output=True, timeout=60, preexec_fn=cap)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def sanitized(binary):
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()  # gcc links libasan dynamically: its import is named


def mode_origin(a, tmp):
    home, other = Catcher("127.0.0.1"), Catcher("127.0.0.2")
    try:
        # the file names another host and the reader names none: nothing is sent
        path = write(tmp, "other.json", replay_doc(other.url))
        rc, out, err = replay(a, [path])
        check(rc == 2 and "--base-url" in err, "no --base-url, file names 127.0.0.2: exit %d, %r" % (rc, err))
        # the reader names home: only home hears from the run, and is named first
        rc, out, err = replay(a, [path, "--base-url", home.url])
        check(rc in (0, 1) and len(home.got) == 1, "--base-url home: exit %d, home got %d: %r" %
              (rc, len(home.got), out + err))
        check(out.startswith("replay: sending to %s" % home.url), "the target is not printed first: %r" % out)
        check(other.url in out, "the file's other base_url is not shown: %r" % out)
        # PETSTORE_BASE_URL names the target as --base-url does
        rc, out, err = replay(a, [path], PETSTORE_BASE_URL=home.url)
        check(rc in (0, 1) and len(home.got) == 2 and out.startswith(
            "replay: sending to %s (from PETSTORE_BASE_URL)" % home.url),
            "PETSTORE_BASE_URL home: exit %d, home got %d: %r" % (rc, len(home.got), out + err))
        # userinfo that makes another host read like localhost, in the file or the flag
        sneaky = "http://127.0.0.1:%s@%s/v1" % (home.hostport.split(":")[1], other.hostport)
        path2 = write(tmp, "userinfo.json", replay_doc(sneaky))
        rc, out, err = replay(a, [path2, "--use-file-url"])
        check(rc == 2 and "user:password" in err, "userinfo base_url with --use-file-url: exit %d, %r" % (rc, err))
        rc, out, err = replay(a, [path, "--base-url", sneaky])
        check(rc == 2 and "user:password" in err, "userinfo --base-url: exit %d, %r" % (rc, err))
        for bad in ("ftp://127.0.0.2/v1", "file:///etc/passwd", "gopher://127.0.0.2:70/"):
            rc, out, err = replay(a, [write(tmp, "scheme.json", replay_doc(bad)), "--use-file-url"])
            check(rc == 2 and "http" in err, "scheme %s: exit %d, %r" % (bad, rc, err))
        check(len(other.got) == 0, "the key reached 127.0.0.2: %r" % other.got)
        check(len(home.got) == 2, "home got %d requests, expected 2" % len(home.got))
        # --use-file-url is the reader's explicit consent to the file's address
        rc, out, err = replay(a, [path, "--use-file-url"])
        check(rc in (0, 1) and len(other.got) == 1 and ("Bearer " + KEY) in other.got[0][1],
              "--use-file-url: exit %d, 127.0.0.2 got %d: %r" % (rc, len(other.got), err))
        check(out.startswith("replay: sending to %s (from the file" % other.url), "--use-file-url target: %r" % out)
        rc, out, err = replay(a, [path, "--use-file-url", "--base-url", home.url])
        check(rc == 2, "--use-file-url with --base-url: exit %d" % rc)
        check(KEY not in out + err, "the key was printed")
    finally:
        home.stop()
        other.stop()


def mode_headers(a, tmp):
    home = Catcher("127.0.0.1")
    try:
        cases = {
            "authorization CR LF": {"authorization": ["Bearer {key}\r\nX-Injected: yes"]},
            "authorization LF": {"authorization": ["Bearer {key}", "x\nX-Injected: yes"]},
            "authorization NUL": {"authorization": ["Bearer {key}\u0000X-Injected: yes"]},
            "content_type CR LF": {"content_type": "application/json\r\nX-Injected: yes"},
            "content_type ESC": {"content_type": "application/json\u001b"},
            "content_type DEL": {"content_type": "application/json\u007f"},
        }
        for name, req in cases.items():
            rc, out, err = replay(a, [write(tmp, "h.json", replay_doc(home.url, **req)), "--base-url", home.url])
            check(rc == 2 and ("control byte" in err or "not a string" in err),
                  "%s: exit %d, %r" % (name, rc, err))
        doc = replay_doc(home.url, authorization=["Bearer {unknown}"])
        doc["unknown_key"] = "nope\r\nX-Injected: yes"
        rc, out, err = replay(a, [write(tmp, "h.json", doc), "--base-url", home.url])
        check(rc == 2 and "unknown_key" in err, "unknown_key CR LF: exit %d, %r" % (rc, err))
        check(not home.got, "a file with a bad template was sent: %r" % home.got)
        # what a field value may hold still goes: HTAB, SP, obs-text (the generator's own forms)
        rc, out, err = replay(a, [write(tmp, "ok.json", replay_doc(home.url, authorization=["\tBearer {key} \u00e9"])),
                                  "--base-url", home.url])
        check(rc in (0, 1) and len(home.got) == 1, "a tab-led authorization: exit %d, %r" % (rc, err))
        check(all("X-Injected" not in h for _, h in home.got), "a header was injected: %r" % home.got)
    finally:
        home.stop()


def mode_memory(a, tmp):
    home = Catcher("127.0.0.1")
    # On today's main a 60 MB array took 4 GB: capped at 1 GiB of address space
    # it fails instead of eating the shared machine (ASan reserves terabytes of
    # address space, so its build runs without the cap and with a larger bound).
    limit = None if sanitized(a.conform) else 1 << 30
    try:
        big = os.path.join(tmp, "big.json")
        with open(big, "w") as f:
            f.write('{"format":"petstore-conform-replay/1","x":[')
            f.write("0," * (30 << 20))
            f.write("0]}")
        rc, out, err = replay(a, [big, "--base-url", home.url], limit)
        check(rc == 2 and "larger than" in err and "1024 KiB" in err, "a 60 MB file: exit %d, %r" % (rc, err[-300:]))
        # just under the budget, one big array: refused as a bad file, in bounded memory
        near = os.path.join(tmp, "near.json")
        with open(near, "w") as f:
            f.write('{"x":[')
            f.write("0," * ((1 << 19) - 8))
            f.write("0]}")
        check(os.path.getsize(near) <= 1 << 20, "the near-budget file is over the budget")
        rc, out, err = replay(a, [near, "--base-url", home.url], limit)
        # the largest of every child so far: each of them must stay under it
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        check(rc == 2 and "petstore-conform-replay/1" in err, "near-budget file: exit %d, %r" % (rc, err[-300:]))
        bound = 600 if limit is None else 200
        check(peak_mb < bound, "near-budget file peaked at %.0f MB (bound %d)" % (peak_mb, bound))
        check(not home.got, "an oversized file was sent")
    finally:
        home.stop()


def mode_escape(a, tmp):
    home = Catcher("127.0.0.1")
    try:
        doc = replay_doc("http://127.0.0.2:1/\x1b]0;owned\x07v1")
        doc["probe"] = "name: \x1b[2J\x07 cleared"
        doc["clause"] = "spec \x1b[31mred\u009b31m C1"
        doc["request"]["body"] = '{"name":"\x1b[5m"}'
        path = write(tmp, "esc.json", doc)
        outs = []
        rc, out, err = replay(a, [path, "--base-url", home.url, "--verbose"])
        check(rc in (0, 1), "hostile text: exit %d, %r" % (rc, err[-300:]))
        outs.append(out + err)
        check("\\x1b[2J" in out, "the probe is not shown escaped: %r" % out)
        rc, out, err = replay(a, [path])  # refused: the file's base_url is printed
        check(rc == 2 and "\\x1b]0;owned" in err, "refusal names the base_url escaped: %r" % err)
        outs.append(out + err)
        rc, out, err = replay(a, [path, "--use-file-url"])  # a bad file's base_url in an error
        outs.append(out + err)
        for text in outs:
            for c in ("\x1b", "\x07", "\u009b"):
                check(c not in text, "%r reached the terminal: %r" % (c, text[:400]))
    finally:
        home.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conform", required=True)
    ap.add_argument("mode", choices=["origin", "headers", "memory", "escape"])
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        globals()["mode_" + a.mode](a, tmp)
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
