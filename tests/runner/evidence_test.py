#!/usr/bin/env python3
"""The runner's evidence of what a service stored (issue 29): every create
compared with its request, its 201 and the list (roundtrip.stored-as-answered),
bodies that are not UTF-8 and lone surrogates, credentials in every spelling
RFC 6750 allows and near misses it forbids.

Each mode starts one loopback fake of the interface (a thread of this
process, http.server) that is legal but lenient in every way the RFCs allow,
or deviates in one way, runs petstore-conform against it with the checks
the mode is about, and asserts the verdict:

  lenient          legal: bytes read with surrogatepass or replaced, lone
                   surrogates stored and echoed as \\ud800, every character
                   escaped, members in another order, a repeated member's last
                   value, any number of spaces after the scheme: passes whole,
                   twice in a row (the second run lists the first's categories)
  stored-first     a repeated member: the 201 answers the last value, the list
                   shows the first -> roundtrip.stored-as-answered
  bytes-dropped    bytes that are not UTF-8: the 201 shows U+FFFD, the list
                   the text with them dropped -> roundtrip.stored-as-answered
  auth-split       the credential split on any white space Python knows
                   (a no-break space, U+001F) -> generate.credentials, naming
                   the form
  auth-one-space   exactly one space after the scheme -> auth.credential-spellings
                   (level http: every mode runs --strict)
  strip-us         names lose a trailing U+001F -> roundtrip.fields-exact, the
                   message showing \\u001f escaped
"""
import argparse
import http.server
import json
import os
import sys
import tempfile
import threading
import time
from email.utils import formatdate

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import check, exit_status  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conform_test import MAIN_KEY, run_conform  # noqa: E402


class Service:
    """The interface, legal but lenient, with one deviation (mode)."""

    def __init__(self, mode):
        self.mode = mode
        self.lock = threading.Lock()
        self.items = []  # what the list shows
        svc = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, status, doc, extra=()):
                # ensure_ascii: every non-ASCII character escaped, lone surrogates as \ud800
                body = json.dumps(doc, ensure_ascii=True).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Date", formatdate(usegmt=True))
                # never near the limit: the checks of this test are not the limits'
                self.send_header("X-RateLimit-Limit", "100000")
                self.send_header("X-RateLimit-Remaining", "99999")
                self.send_header("X-RateLimit-Reset", str(int(time.time()) + 60))
                for name, value in extra:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def error(self, status, code, message, extra=()):
                self.reply(status, {"code": code, "message": message, "status": status}, extra)

            def authorized(self):
                values = self.headers.get_all("Authorization") or []
                value = values[0] if values else ""
                if svc.mode == "auth-split":
                    parts = value.split()  # any white space Python knows: a deviation
                    ok = len(parts) == 2 and parts[0].lower() == "bearer" and parts[1] == MAIN_KEY
                elif svc.mode == "auth-one-space":
                    ok = value.strip(" \t")[:7].lower() == "bearer " and value.strip(" \t")[7:] == MAIN_KEY
                else:
                    # RFC 6750 2.1: "Bearer" 1*SP b64token, the scheme in any case
                    scheme, _, token = value.strip(" \t").partition(" ")
                    ok = scheme.lower() == "bearer" and token.lstrip(" ") == MAIN_KEY
                if not ok:
                    self.error(401, "unauthorized", "a valid API key is required",
                               [("WWW-Authenticate", 'Bearer realm="petstore", error="invalid_token"')])
                return ok

            def body(self):
                n = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(n) if n else b""

            def do_GET(self):
                if not self.authorized():
                    return
                with svc.lock:
                    items = [dict(it) for it in svc.items]
                # members in another order than the 201's: legal
                self.reply(200, [dict(reversed(list(it.items()))) for it in items])

            def do_POST(self):
                raw = self.body()
                if not self.authorized():
                    return
                try:
                    text = raw.decode("utf-8", "surrogatepass")
                except UnicodeDecodeError:
                    text = raw.decode("utf-8", "replace")  # legal: RFC 8259 9 lets a parser accept more
                pairs = []
                try:
                    value = json.loads(text, object_pairs_hook=lambda p: pairs.append(p) or dict(p))
                except ValueError as e:
                    return self.error(400, "invalid_json", "the body is not JSON: %s" % e)
                if not isinstance(value, dict) or not isinstance(value.get("name"), str):
                    return self.error(400, "invalid_name", "name is required and must be a string")
                if "description" in value and not isinstance(value["description"], str):
                    return self.error(400, "invalid_description", "description must be a string")
                cat = {"name": value["name"]}  # dict(pairs): a repeated member's last value
                if "description" in value:
                    cat["description"] = value["description"]
                stored = dict(cat)
                if svc.mode == "stored-first":
                    top = pairs[-1]
                    stored["name"] = next(v for k, v in top if k == "name")
                elif svc.mode == "bytes-dropped":
                    stored["name"] = stored["name"].replace("\ufffd", "")
                elif svc.mode == "strip-us":
                    cat["name"] = stored["name"] = stored["name"].rstrip("\x1f")
                with svc.lock:
                    cid = len(svc.items) + 1
                    svc.items.append(dict(id=cid, **stored))
                self.reply(201, dict(id=cid, **cat))

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d/v1" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def all_checks(doc):
    """Every check of a report (grouped by suite there)."""
    return [c for suite in (doc or {}).get("suites", []) for c in suite.get("checks", [])]


def outcome(doc, check_id):
    return next((c for c in all_checks(doc) if c.get("id") == check_id), {})


def run(a, svc, only, tmp, seed=None):
    # --strict: an http-level check failing is a failure too (auth.credential-spellings is one)
    args = ["--base-url", svc.url, "--plan", "business", "--only", only, "--max-wait", "5s",
            "--timeout", "10s", "--strict"]
    if seed is not None:
        args += ["--seed", str(seed)]
    return run_conform(args, a.conform, tmp, {"PETSTORE_API_KEY": MAIN_KEY}, timeout=120)


ONLY = "auth,roundtrip,generate"
EXPECTED = {
    "stored-first": "roundtrip.stored-as-answered",
    "bytes-dropped": "roundtrip.stored-as-answered",
    "auth-split": "generate.credentials",
    "auth-one-space": "auth.credential-spellings",
    "strip-us": "roundtrip.fields-exact",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conform", required=True)
    ap.add_argument("mode", choices=["lenient"] + sorted(EXPECTED))
    a = ap.parse_args()
    svc = Service(a.mode)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if a.mode == "lenient":
                # twice: the second run's lists hold the first's lone surrogates and U+FFFD
                for n in (1, 2):
                    rc, out, err, doc, _ = run(a, svc, ONLY, tmp)
                    bad = [c["id"] + ": " + str(c.get("message")) for c in all_checks(doc)
                           if c.get("status") not in ("passed", "not_run") or
                           (c.get("status") == "not_run" and c.get("applicable", True))]
                    check(rc == 0 and not bad, "lenient run %d: exit %d, expected 0; %s" % (n, rc, bad))
                    st = outcome(doc, "roundtrip.stored-as-answered")
                    check(st.get("status") == "passed" and st.get("observations", {}).get("passed", 0) >= 100,
                          "lenient run %d: roundtrip.stored-as-answered judged %s" % (n, st))
                # the bytes probes reached the service and some were stored (replaced or surrogates)
                with svc.lock:
                    names = [it["name"] + it.get("description", "") for it in svc.items]
                check(any("\ufffd" in s for s in names), "no category holds U+FFFD: no invalid bytes were stored")
                check(any(any(0xD800 <= ord(ch) <= 0xDFFF for ch in s) for s in names),
                      "no category holds a lone surrogate: none was sent or stored")
            else:
                rc, out, err, doc, _ = run(a, svc, ONLY, tmp)
                want = EXPECTED[a.mode]
                got = outcome(doc, want)
                check(rc == 1 and got.get("status") == "failed",
                      "%s: exit %d, %s %s, expected it failed" % (a.mode, rc, want, got.get("status")))
                msg = got.get("message") or ""
                if a.mode == "strip-us":
                    check("\\u001f" in msg, "strip-us: the message does not show U+001F escaped: %r" % msg)
                if a.mode == "auth-split":
                    check("\\u001f" in msg or "\\u00a0" in msg,
                          "auth-split: the headline does not name the form that failed: %r" % msg)
                if a.mode == "auth-one-space":
                    check("spaces after the scheme" in msg,
                          "auth-one-space: the headline does not name the spelling refused: %r" % msg)
                if a.mode in ("stored-first", "bytes-dropped"):
                    check("is listed" in msg and "its 201 answered" in msg,
                          "%s: the message does not name the listed and answered bytes: %r" % (a.mode, msg))
                # nothing else failed: the deviation is named by its own check only
                others = [c["id"] for c in all_checks(doc) if c.get("status") == "failed" and
                          c["id"] not in (want, "roundtrip.stored-as-answered", "roundtrip.fields-exact",
                                          "generate.string-fields")]
                check(not others, "%s: other checks failed too: %s" % (a.mode, others))
    finally:
        svc.stop()
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
