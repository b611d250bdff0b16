#!/usr/bin/env python3
"""blackbox_probe.py - an independent black-box check of petstore-server.

It knows nothing of the server's sources or of the other tests' helpers:
it starts the binary itself (--port 0, several configurations), speaks HTTP
over raw sockets and http.client (python3 stdlib only), and checks every
rule of the interface, the documented decisions (docs/error-codes.md,
docs/rate-limits.md, docs/faults.md) and HTTP/1.1 framing from the outside.
Every check runs even when an earlier one failed; the report lists each
check as ok or FAIL with what was seen.

usage: blackbox_probe.py --server PATH [--source-dir DIR] [--only SUBSTR]
                         [--many N]      (only the N-connection check)

Exit status: 0 every check passed, 1 a check failed, 2 usage error.
Every server is stopped with SIGTERM at the end and must exit 0 with a
stderr free of sanitizer reports (so the ASan tree checks those too)."""
import email.utils
import http.client
import json
import os
import random
import re
import resource
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse

SERVER = None
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = []
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer",
                     "runtime error:")
INT_RE = re.compile(r"^[0-9]+$")


class ProbeFailure(Exception):
    pass


def need(cond, what):
    if not cond:
        raise ProbeFailure(what)


# ---- the server under test --------------------------------------------------

class Srv:
    """One petstore-server process started with --port 0."""

    def __init__(self, *args, cwd=None, timeout=20):
        self.argv = [SERVER, "--port", "0"] + list(args)
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=self.err, cwd=cwd)
        line = b""
        deadline = time.monotonic() + timeout
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                self.proc.kill()
                self.proc.wait()
                raise ProbeFailure("server did not start: %s: %s" % (self.argv, self.stderr()[-2000:]))
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if r:
                ch = os.read(self.proc.stdout.fileno(), 1)
                if ch:
                    line += ch
        self.url = line.decode().strip()
        u = urllib.parse.urlsplit(self.url)
        self.host, self.port, self.base = u.hostname, u.port, u.path
        self.path = self.base + "/categories"

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def stop(self, sig=signal.SIGTERM, check=True):
        """Stops the server; with check, a graceful exit 0 and silent sanitizers are required."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise ProbeFailure("server did not stop within 30 s of signal %d" % sig)
        err = self.stderr()
        self.proc.stdout.close()
        if check:
            for m in SANITIZER_MARKERS:
                need(m not in err, "sanitizer report %r in server stderr:\n%s" % (m, err[-4000:]))
            need(self.proc.returncode == 0, "exit status %s after SIGTERM/SIGINT:\n%s" % (self.proc.returncode,
                                                                                           err[-2000:]))
        return self.proc.returncode, err

    def request(self, method="GET", path=None, body=None, key=None, headers=None, source=None, timeout=10):
        """One request on a fresh connection: (status, {lower name: value}, raw body, JSON or None)."""
        h = dict(headers or {})
        if key is not None:
            h["Authorization"] = "Bearer " + key
        if isinstance(body, str):
            body = body.encode()
        if body is not None:
            h.setdefault("Content-Type", "application/json")
        c = http.client.HTTPConnection(self.host, self.port, timeout=timeout,
                                       source_address=(source, 0) if source else None)
        try:
            c.request(method, path or self.path, body=body, headers=h)
            r = c.getresponse()
            data = r.read()
            hdrs = {}
            for k, v in r.getheaders():
                k = k.lower()
                hdrs[k] = hdrs[k] + "\n" + v if k in hdrs else v
            try:
                parsed = json.loads(data) if data else None
            except ValueError:
                parsed = None
            return r.status, hdrs, data, parsed
        finally:
            c.close()

    def raw(self, data, timeout=3, shutdown=False, source=None):
        """Raw bytes on a fresh connection; returns everything until close or timeout."""
        s = socket.create_connection((self.host, self.port), timeout=timeout,
                                     source_address=(source, 0) if source else None)
        try:
            s.sendall(data)
            if shutdown:
                s.shutdown(socket.SHUT_WR)
            out = b""
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                try:
                    chunk = s.recv(65536)
                except (socket.timeout, ConnectionResetError):
                    break
                if not chunk:
                    break
                out += chunk
            return out
        finally:
            s.close()


def close_and_wait(s, timeout=10):
    """Closes our side of s and waits for the server to close its side: only
    then has the server freed the connection (its --max-connections slot, its
    share of --max-buffered). A plain close() returns before the server even
    saw the FIN, so a count taken right after it still includes s."""
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
    """Polls cond until it holds; a ProbeFailure naming what after timeout."""
    deadline = time.monotonic() + timeout
    while not cond():
        need(time.monotonic() < deadline, "timed out waiting for " + what)
        time.sleep(0.01)


def parse_responses(raw):
    """Splits a byte stream into HTTP responses: [(status, headers, body)] (Content-Length framed)."""
    out = []
    while raw:
        head, sep, rest = raw.partition(b"\r\n\r\n")
        if not sep:
            break
        lines = head.decode("latin-1").split("\r\n")
        m = re.match(r"HTTP/1\.[01] (\d{3}) ", lines[0] + " ")
        if not m:
            break
        hdrs = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            k = k.strip().lower()
            hdrs[k] = hdrs[k] + "\n" + v.strip() if k in hdrs else v.strip()
        n = int(hdrs.get("content-length", "0"))
        status = int(m.group(1))
        if status in (100,):
            raw = rest
            continue
        out.append((status, hdrs, rest[:n]))
        raw = rest[n:]
    return out


def one_response(raw):
    rs = parse_responses(raw)
    need(rs, "no HTTP response in %r" % raw[:200])
    return rs[0]


# ---- shared assertions -------------------------------------------------------

def check_rate_headers(h, what):
    for k in ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"):
        need(k in h, "%s: no %s header (%s)" % (what, k, sorted(h)))
        need("\n" not in h[k], "%s: %s sent twice" % (what, k))
        need(INT_RE.match(h[k]), "%s: %s is not a plain non-negative integer: %r" % (what, k, h[k]))
    reset = int(h["x-ratelimit-reset"])
    now = time.time()
    need(now - 2 <= reset <= now + 86400 * 2, "%s: X-RateLimit-Reset %d is not Unix seconds near now %d" %
         (what, reset, now))
    need(int(h["x-ratelimit-remaining"]) <= int(h["x-ratelimit-limit"]), "%s: Remaining > Limit" % what)


def check_date(h, what):
    need("date" in h, "%s: no Date header (RFC 9110 6.6.1)" % what)
    try:
        t = email.utils.parsedate_to_datetime(h["date"]).timestamp()
    except (TypeError, ValueError):
        raise ProbeFailure("%s: Date %r is not an HTTP-date" % (what, h["date"]))
    need(abs(t - time.time()) < 5 and h["date"].endswith(" GMT"), "%s: Date %r is off" % (what, h["date"]))


def check_error(status, h, body, want_status, want_code=None, what=""):
    what = what or str(want_status)
    need(status == want_status, "%s: status %d, expected %d (body %r)" % (what, status, want_status, body[:200]))
    need(h.get("content-type", "").split(";")[0].strip() == "application/json",
         "%s: Content-Type %r" % (what, h.get("content-type")))
    try:
        e = json.loads(body)
    except ValueError:
        raise ProbeFailure("%s: body is not JSON: %r" % (what, body[:200]))
    need(isinstance(e, dict) and isinstance(e.get("code"), str) and isinstance(e.get("message"), str) and
         type(e.get("status")) is int, "%s: not an Error body: %r" % (what, e))
    need(e["status"] == want_status, "%s: Error status %r != HTTP %d" % (what, e["status"], want_status))
    need(e["code"] in DOC_CODES, "%s: code %r is not documented in docs/error-codes.md" % (what, e["code"]))
    if want_code:
        need(e["code"] == want_code, "%s: code %r, expected %r" % (what, e["code"], want_code))
    check_rate_headers(h, what)
    check_date(h, what)
    return e


def load_doc_codes():
    codes = set()
    try:
        with open(os.path.join(SOURCE, "docs", "error-codes.md"), encoding="utf-8") as f:
            for line in f:
                for m in re.finditer(r"^\|\s*(?:\d{3}\s*\|\s*)?`([a-z_0-9]+)`", line):
                    codes.add(m.group(1))
    except OSError:
        pass
    return codes


DOC_CODES = set()


# ---- configurations ----------------------------------------------------------

ENT = "p-ent"
KEYS = ["--key", ENT + ":enterprise:1000000:100000000", "--key", "p-pro:pro", "--key", "p-biz:business",
        "--key", "p-day:enterprise:100000:5"]
for i in range(24):
    KEYS += ["--key", "p-free%d:free" % i]
for i in range(6):
    KEYS += ["--key", "p-burst%d:enterprise:50:1000000" % i]
KEYS += ["--key", "p-burstday:enterprise:1000000:40"]

_free = iter(range(24))


def fresh_free_key():
    return "p-free%d" % next(_free)


_src = iter(range(2, 250))


def fresh_source():
    """A loopback address of its own: unauthenticated requests are counted per client address."""
    return "127.0.%d.%d" % (7, next(_src))


# ---- checks: routing ---------------------------------------------------------

def c_list_and_create(S):
    st, h, raw, lst = S.request("GET", key=ENT)
    need(st == 200, "GET: %d" % st)
    need(h.get("content-type", "").split(";")[0] == "application/json", "GET Content-Type %r" % h.get("content-type"))
    check_rate_headers(h, "GET 200")
    check_date(h, "GET 200")
    need(isinstance(lst, list), "GET body is not an array")
    for c in lst:
        need(isinstance(c, dict) and type(c.get("id")) is int and isinstance(c.get("name"), str), "bad item %r" % c)
        need(set(c) <= {"id", "name", "description"}, "extra members %r" % c)
        need("description" not in c or isinstance(c["description"], str), "bad description %r" % c)
        need(-2 ** 63 <= c["id"] < 2 ** 63, "id not int64: %r" % c)
    st, h, raw, c = S.request("POST", body='{"name":"probe-dog","description":"d"}', key=ENT)
    need(st == 201, "POST: %d %r" % (st, raw[:200]))
    check_rate_headers(h, "POST 201")
    check_date(h, "POST 201")
    need(h.get("content-type", "").split(";")[0] == "application/json", "POST Content-Type")
    need(c.get("name") == "probe-dog" and c.get("description") == "d" and type(c.get("id")) is int, "201 body %r" % c)
    _, _, _, lst = S.request("GET", key=ENT)
    need(c in lst, "created category not listed exactly: %r" % c)


def c_unknown_paths_404(S):
    for p in ("/", S.base, S.path + "/", S.path + "/1", "/" + S.path, S.base + "/%63ategories",
              S.path.upper(), S.path + "x", S.base + "/pets", "/v2/categories", S.path + "/../categories"):
        for m in ("GET", "POST", "DELETE"):
            out = S.raw(("%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 0\r\n"
                         "Connection: close\r\n\r\n" % (m, p, ENT)).encode())
            st, h, body = one_response(out)
            check_error(st, h, body, 404, "not_found", "%s %s" % (m, p))


def c_query_and_absolute_form_route(S):
    st, _, _, lst = S.request("GET", path=S.path + "?x=1&y", key=ENT)
    need(st == 200 and isinstance(lst, list), "GET ?x=1: %d" % st)
    st, _, _, c = S.request("POST", path=S.path + "?x=1", body='{"name":"q"}', key=ENT)
    need(st == 201, "POST ?x=1: %d" % st)
    out = S.raw(("GET http://%s:%d%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n"
                 % (S.host, S.port, S.path, ENT)).encode())
    need(one_response(out)[0] == 200, "absolute-form target: %r" % out[:100])


def c_other_methods_405(S):
    for m in ("PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "HEAD"):
        if m == "HEAD":  # RFC 9110 9.1: answered as the GET, without the body
            out = S.raw(("HEAD %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                         "Connection: close\r\n\r\n" % (S.path, ENT)).encode())
            st, h, body = one_response(out)
            need(st == 200 and body == b"" and out.endswith(b"\r\n\r\n"), "HEAD: %d %r" % (st, out[-80:]))
            need(int(h.get("content-length", "-1")) > 0, "HEAD: Content-Length %r" % h.get("content-length"))
            check_rate_headers(h, "HEAD")
            continue
        out = S.raw(("%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 0\r\n"
                     "Connection: close\r\n\r\n" % (m, S.path, ENT)).encode())
        st, h, body = one_response(out)
        allow = [a.strip() for a in h.get("allow", "").split(",")]
        need(st == 405, "%s: %d" % (m, st))
        need("GET" in allow and "POST" in allow, "%s: Allow %r" % (m, h.get("allow")))
        check_error(st, h, body, 405, "method_not_allowed", m)
    # no credential: 405 still (routing before auth is documented), never 500
    st, h, body, _ = S.request("PUT", body="{}")
    need(st in (401, 405), "PUT without key: %d" % st)


def c_base_path():
    S = Srv("--base-path", "/api/v9", "--key", "bp:pro", "--no-seed")
    try:
        need(S.url.endswith("/api/v9"), "first line %r does not end with the base path" % S.url)
        st, _, _, lst = S.request("GET", path="/api/v9/categories", key="bp")
        need(st == 200 and lst == [], "GET {base}/categories: %d %r" % (st, lst))
        st, h, raw, _ = S.request("GET", path="/v1/categories", key="bp")
        check_error(st, h, raw, 404, "not_found", "old base path")
    finally:
        S.stop()


# ---- checks: authentication --------------------------------------------------

def c_auth(S):
    src = fresh_source()

    def get(value=None, extra=b""):
        hdr = b"" if value is None else b"Authorization: " + value + b"\r\n"
        out = S.raw(b"GET " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + hdr + extra +
                    b"Connection: close\r\n\r\n", source=src)
        return one_response(out)

    st, h, body = get()
    e = check_error(st, h, body, 401, "missing_credential", "no credential")
    www = h.get("www-authenticate", "")
    need(www.lower().startswith("bearer"), "missing: WWW-Authenticate %r" % www)
    need("error=" not in www, "missing: RFC 6750 3.1: no error code without a token: %r" % www)
    for v, code in ((b"Bearer nope", "invalid_key"), (b"Bearer " + b"k" * 3000, "invalid_key"),
                    (b"Bearer", "malformed_credential"), (b"Bearer ", "malformed_credential"),
                    (b"Bearer p-\xc3\xa9nt", "malformed_credential"), (b"Bearer a b", "malformed_credential"),
                    (b"Bearer " + ENT.encode() + b"=x", "malformed_credential"),
                    (b"Bearer " + ENT.encode() + b"A" * 5000, "malformed_credential")):
        st, h, body = get(v)
        check_error(st, h, body, 401, code, "Authorization %r" % v[:40])
        need('error="invalid_token"' in h.get("www-authenticate", ""), "%r: challenge %r" %
             (v[:40], h.get("www-authenticate")))
    for v in (b"Basic cDplbnQ6eA==", b"Digest x", b"Token " + ENT.encode()):
        st, h, body = get(v)
        check_error(st, h, body, 401, "unsupported_scheme", v.decode())
        need(h.get("www-authenticate", "").lower().startswith("bearer"), "Basic: challenge not Bearer")
    # two Authorization headers are ambiguous
    st, h, body = get(b"Bearer " + ENT.encode(), b"Authorization: Bearer " + ENT.encode() + b"\r\n")
    check_error(st, h, body, 401, "malformed_credential", "two Authorization headers")
    # accepted spellings: scheme in any case, several spaces, leading/trailing white space (OWS)
    for v in (b"bearer ", b"BEARER ", b"bEaReR ", b"Bearer    ", b" \tBearer "):
        st, h, _ = get(v + ENT.encode())
        need(st == 200, "Authorization %r: %d" % (v, st))
    st, _, _ = get(b"Bearer " + ENT.encode() + b" \t")
    need(st == 200, "token with trailing white space: %d" % st)
    # a tab between scheme and token is not 1*SP: refused, and not as a server error
    st, h, body = get(b"Bearer\t" + ENT.encode())
    need(st in (200, 401), "tab separator: %d" % st)
    # a control character in a field value is not a valid field (RFC 9110 5.5): 400, or a 401 at least
    st, h, body = get(b"Bearer " + ENT.encode() + b"\x7f")
    need(st in (400, 401), "DEL in the token: %d" % st)
    # whitespace before the colon could smuggle a header: 400
    out = S.raw(b"GET " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\nAuthorization : Bearer " + ENT.encode() +
                b"\r\n\r\n")
    st, h, body = one_response(out)
    check_error(st, h, body, 400, "bad_request", "Authorization<SP>:")


def c_keys_file_and_plans():
    with tempfile.NamedTemporaryFile("w", suffix=".keys") as f:
        f.write("# probe keys\n  kf-free free\nkf-biz\tbusiness # comment\nkf-ent enterprise 7 70\n\n")
        f.flush()
        S = Srv("--keys-file", f.name, "--key", "kf-flag:enterprise:11:111", "--key", "kf-pro:PRO", "--no-seed")
        try:
            for key, limit in (("kf-free", 60), ("kf-biz", 1000), ("kf-ent", 7), ("kf-flag", 11), ("kf-pro", 300)):
                st, h, _, _ = S.request("GET", key=key)
                need(st == 200, "%s: %d" % (key, st))
                need(h.get("x-ratelimit-limit") == str(limit), "%s: X-RateLimit-Limit %r, plan says %d" %
                     (key, h.get("x-ratelimit-limit"), limit))
                need(h.get("x-ratelimit-remaining") == str(limit - 1), "%s: Remaining %r" %
                     (key, h.get("x-ratelimit-remaining")))
        finally:
            S.stop()
    # the fixtures/ keys file is the default, relative to the working directory (README)
    S = Srv(cwd=SOURCE)
    try:
        st, h, _, lst = S.request("GET", key="demo-free-key")
        need(st == 200 and h.get("x-ratelimit-limit") == "60", "demo-free-key: %d" % st)
        names = {c["name"] for c in lst}
        need({"dog", "cat"} <= names, "seed from fixtures/ not loaded: %r" % sorted(names)[:10])
        ids = [c["id"] for c in lst]
        need(len(set(ids)) == len(ids), "seed ids not unique")
    finally:
        S.stop()


# ---- checks: validation ------------------------------------------------------

BAD_BODIES = [
    (b"", "empty_body"), (b" \r\n\t", "empty_body"), (b"{", "malformed_json"), (b"{'name':'x'}", "malformed_json"),
    (b'{name:"x"}', "malformed_json"), (b'{"name":"x",}', "malformed_json"), (b'{"name":"a\tb"}', "malformed_json"),
    (b"\xef\xbb\xbf{\"name\":\"bom\"}", None), (b'{"name":"x"} x', "trailing_data"),
    (b'{"name":"x"}{"name":"y"}', "trailing_data"), (b'{"name":"x"}\x00', "trailing_data"),
    (b'{"name":"\xff"}', "invalid_utf8"), (b'{"name":"\xc0\xaf"}', "invalid_utf8"),
    (b'{"name":"\xed\xa0\x80"}', "invalid_utf8"), (b'{"name":"\xf4\x90\x80\x80"}', "invalid_utf8"),
    (b'{"name":"\\ud800"}', "invalid_unicode_escape"), (b'{"name":"\\udc00x"}', "invalid_unicode_escape"),
    (b"[1]", "not_object"), (b'"name"', "not_object"), (b"3", "not_object"), (b"null", "not_object"),
    (b"true", "not_object"), (b"{}", "missing_name"), (b'{"Name":"x"}', "missing_name"),
    (b'{"description":"d"}', "missing_name"), (b'{"name":1}', "name_not_string"),
    (b'{"name":1.5e3}', "name_not_string"), (b'{"name":null}', "name_not_string"),
    (b'{"name":false}', "name_not_string"), (b'{"name":["x"]}', "name_not_string"),
    (b'{"name":{"x":1}}', "name_not_string"), (b'{"name":"x","description":2}', "description_not_string"),
    (b'{"name":"x","description":null}', "description_not_string"),
    (b'{"name":"x","description":[]}', "description_not_string"),
    (b'{"name":"x","name":"y"}', "duplicate_member"), (b"[" * 5000 + b"]" * 5000, "too_deep"),
    (b'{"name":"x","d":' + b"[" * 200 + b"]" * 200 + b"}", "too_deep"),
]


def c_validation(S):
    for body, code in BAD_BODIES:
        st, h, raw, _ = S.request("POST", body=body, key=ENT)
        e = check_error(st, h, raw, 400, code, "body %r" % body[:40])
        need("\n" not in e["message"], "body %r: message is not one line: %r" % (body[:40], e["message"]))
    # the body is parsed whatever the Content-Type says (documented), and not-JSON is a 400
    st, _, _, _ = S.request("POST", body='{"name":"ct"}', key=ENT, headers={"Content-Type": "text/plain"})
    need(st == 201, "text/plain body: %d" % st)
    # accepted: unknown members, huge numbers and nesting elsewhere, the empty name, white space around
    for body in (b'{"name":"u","colour":"red"}', b'{"name":"n","x":1e999999}',
                 b'{"name":"n","x":123456789012345678901234567890}', b'{"name":"n","x":' + b"[" * 30 + b"]" * 30 + b"}",
                 b'{"name":""}', b' \n{"name":"ws"}\n '):
        st, _, raw, c = S.request("POST", body=body, key=ENT)
        need(st == 201, "body %r: %d %r" % (body[:40], st, raw[:200]))
        need(set(c) <= {"id", "name", "description"}, "unknown members echoed: %r" % c)


def c_roundtrip(S):
    names = ["", "a\u0000b", "\u00e9\u00e8 \u91d1\u9b5a \U0001F41F", "q\"b\\s/", "\b\f\n\r\t", "\u2028\u2029",
             "<script>&amp;</script>", "\u007f\u0080\u00ff", "\U0010FFFF", "x" * 1000]
    created = []
    for n in names:
        for desc in (None, n):
            obj = {"name": n} if desc is None else {"name": n, "description": desc}
            st, _, raw, c = S.request("POST", body=json.dumps(obj), key=ENT)
            need(st == 201, "create %r: %d %r" % (n[:20], st, raw[:100]))
            need(c.get("name") == n, "name %r came back as %r" % (n[:20], c.get("name")))
            if desc is None:
                need("description" not in c, "a description was invented: %r" % c)
            else:
                need(c.get("description") == desc, "description %r came back %r" % (desc[:20], c.get("description")))
            created.append(c)
    # raw escapes in the request (not json.dumps') decode exactly
    st, _, _, c = S.request("POST", body=b'{"name":"\\u00e9\\ud83d\\ude00\\/\\"\\u0000"}', key=ENT)
    need(st == 201 and c["name"] == "\u00e9\U0001F600/\"\u0000", "escapes: %r" % (c,))
    created.append(c)
    _, _, _, lst = S.request("GET", key=ENT)
    byid = {x["id"]: x for x in lst}
    for c in created:
        need(byid.get(c["id"]) == c, "list differs from the 201 for id %d: %r vs %r" % (c["id"], byid.get(c["id"]), c))


def c_big_name_within_cap():
    S = Srv("--max-body", "2M", "--key", "big:enterprise:1000:1000", "--no-seed")
    try:
        n = "\u00e9" * (512 * 1024)  # 1 MiB of UTF-8
        st, _, raw, c = S.request("POST", body=json.dumps({"name": n}, ensure_ascii=False), key="big")
        need(st == 201 and c["name"] == n, "1 MiB name: %d" % st)
        _, _, _, lst = S.request("GET", key="big")
        need(lst and lst[-1]["name"] == n, "1 MiB name not listed back exactly")
        st, h, raw, _ = S.request("POST", body=b'{"name":"' + b"x" * (2 * 1024 * 1024) + b'"}', key="big")
        check_error(st, h, raw, 413, "body_too_large", "over --max-body 2M")
    finally:
        S.stop()


# ---- checks: store -----------------------------------------------------------

def c_ids_unique_concurrent(S):
    ids, lock, errors = [], threading.Lock(), []

    def worker(t):
        try:
            c = http.client.HTTPConnection(S.host, S.port, timeout=10)
            for i in range(10):
                c.request("POST", S.path, body=('{"name":"cc-%d-%d"}' % (t, i)).encode(),
                          headers={"Authorization": "Bearer " + ENT})
                r = c.getresponse()
                d = json.loads(r.read())
                if r.status != 201:
                    errors.append(r.status)
                else:
                    with lock:
                        ids.append((t, i, d["id"]))
            c.close()
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
    th = [threading.Thread(target=worker, args=(t,)) for t in range(20)]
    for t in th:
        t.start()
    for t in th:
        t.join(30)
    need(not errors, "concurrent creates failed: %r" % errors[:5])
    all_ids = [x[2] for x in ids]
    need(len(set(all_ids)) == len(all_ids) == 200, "ids not unique: %d of %d" % (len(set(all_ids)), len(all_ids)))
    for t in range(20):  # each client's ids increase
        mine = [x[2] for x in sorted(ids) if x[0] == t]
        need(mine == sorted(mine), "ids of one client not increasing: %r" % mine)
    _, _, _, lst = S.request("GET", key=ENT)
    listed = {c["id"] for c in lst}
    need(set(all_ids) <= listed, "created ids missing from the list")


def storm(S, nclients, acked, lock, stop):
    def client(t):
        c = None
        for i in range(100000):
            if stop.is_set():
                return
            try:
                if c is None:
                    c = http.client.HTTPConnection(S.host, S.port, timeout=5)
                c.request("POST", S.path, body=('{"name":"st-%d-%d","description":"d%d"}' % (t, i, i)).encode(),
                          headers={"Authorization": "Bearer " + ENT})
                r = c.getresponse()
                data = r.read()
                if r.status == 201:
                    with lock:
                        acked.append(json.loads(data))
            except Exception:  # noqa: BLE001 - the server went away
                return
    th = [threading.Thread(target=client, args=(t,)) for t in range(nclients)]
    for t in th:
        t.start()
    return th


def c_durability():
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "journal")
        for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGINT):
            S = Srv("--data", data, "--threads", "2", "--no-seed", *KEYS)
            before = {c["id"]: c for c in S.request("GET", key=ENT)[3]}
            acked, lock, stop = [], threading.Lock(), threading.Event()
            th = storm(S, 8, acked, lock, stop)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and len(acked) < 150:
                time.sleep(0.01)
            S.stop(sig, check=sig != signal.SIGKILL)
            stop.set()
            for t in th:
                t.join(10)
            need(len(acked) >= 150, "storm acknowledged only %d creates" % len(acked))
            S2 = Srv("--data", data, "--no-seed", *KEYS)
            try:
                after = {c["id"]: c for c in S2.request("GET", key=ENT)[3]}
                lost = [c for c in acked if after.get(c["id"]) != c]
                need(not lost, "after signal %d, %d acknowledged creates lost or changed, e.g. %r" %
                     (sig, len(lost), lost[:2]))
                need(all(after.get(i) == c for i, c in before.items()), "earlier categories changed")
                st, _, _, c = S2.request("POST", body='{"name":"after"}', key=ENT)
                need(st == 201 and c["id"] > max(after), "new id %r not above the reloaded ones" % c.get("id"))
            finally:
                S2.stop()
        # a torn last record (a crash mid-write) is dropped, the rest reloads
        size = os.path.getsize(data)
        with open(data, "r+b") as f:
            f.truncate(size - 3)
        S3 = Srv("--data", data, "--no-seed", *KEYS)
        try:
            lst = S3.request("GET", key=ENT)[3]
            need(len(lst) == len(after), "torn tail: %d categories, expected %d (all but the torn 'after')" %
                 (len(lst), len(after)))
            st, _, _, c = S3.request("POST", body='{"name":"after-torn"}', key=ENT)
            need(st == 201, "create after a torn tail: %d" % st)
        finally:
            S3.stop()
        # a journal that is not ours is refused loudly, not silently emptied
        bad = os.path.join(d, "bad")
        with open(bad, "wb") as f:
            f.write(b"this is not a journal\n" * 10)
        p = subprocess.run([SERVER, "--port", "0", "--data", bad, *KEYS], capture_output=True, timeout=20)
        if p.returncode == 0:
            raise ProbeFailure("started on a foreign journal file")
        need(bad.encode() in p.stderr, "the refusal does not name the file: %r" % p.stderr[-300:])


# ---- checks: rate limits -----------------------------------------------------

def c_headers_every_response(S):
    key = fresh_free_key()
    seen = []
    reqs = [("GET", S.path, None, key), ("POST", S.path, b'{"name":"h"}', key), ("POST", S.path, b"{", key),
            ("GET", "/nope", None, key), ("DELETE", S.path, None, key), ("GET", S.path, None, "wrong-key")]
    for m, p, b, k in reqs:
        st, h, raw, _ = S.request(m, path=p, body=b, key=k)
        check_rate_headers(h, "%s %s -> %d" % (m, p, st))
        check_date(h, "%s %s" % (m, p))
        need(h.get("content-type", "").split(";")[0] == "application/json", "%d: Content-Type %r" %
             (st, h.get("content-type")))
        if k == key:
            seen.append(h)
    # every request counts on its key, errors included, and Reset is stable in the window
    rem = [int(h["x-ratelimit-remaining"]) for h in seen]
    need(rem == list(range(59, 59 - len(rem), -1)), "Remaining does not fall by one per request: %r" % rem)
    need(len({h["x-ratelimit-reset"] for h in seen}) == 1, "Reset moved within a window: %r" %
         [h["x-ratelimit-reset"] for h in seen])
    need(all(h["x-ratelimit-limit"] == "60" for h in seen), "Limit of a free key is not 60")
    reset = int(seen[0]["x-ratelimit-reset"])
    need(time.time() + 55 <= reset <= time.time() + 62, "Reset %d is not the minute window's end" % reset)
    # protocol-level errors carry them too
    for raw in (b"GARBAGE\r\n\r\n", b"GET " + S.path.encode() + b" HTTP/3.0\r\nHost: x\r\n\r\n",
                b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n",
                b"GET " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\nX: " + b"y" * 40000 + b"\r\n\r\n"):
        st, h, body = one_response(S.raw(raw, source=fresh_source()))
        check_error(st, h, body, st, None, "raw %r -> %d" % (raw[:30], st))
        need(st in (400, 413, 431, 505), "raw %r: %d" % (raw[:30], st))


def c_plans(S):
    for key, limit in (("p-pro", 300), ("p-biz", 1000), (ENT, 1000000)):
        st, h, _, _ = S.request("GET", key=key)
        need(h.get("x-ratelimit-limit") == str(limit), "%s: Limit %r, expected %d" % (key, h.get("x-ratelimit-limit"),
                                                                                       limit))


def exhaust(S, key, n, source=None, path=None):
    out = []
    c = http.client.HTTPConnection(S.host, S.port, timeout=10, source_address=(source, 0) if source else None)
    for _ in range(n):
        h = {"Authorization": "Bearer " + key} if key else {}
        c.request("GET", path or S.path, headers=h)
        r = c.getresponse()
        body = r.read()
        out.append((r.status, {k.lower(): v for k, v in r.getheaders()}, body))
    c.close()
    return out


def check_429(st, h, body, what, code="rate_limited"):
    t0 = int(time.time())
    e = check_error(st, h, body, 429, code, what)
    need("retry-after" in h and INT_RE.match(h["retry-after"]), "%s: Retry-After %r is not delta-seconds" %
         (what, h.get("retry-after")))
    ra, reset = int(h["retry-after"]), int(h["x-ratelimit-reset"])
    need(ra >= 1, "%s: Retry-After %d < 1" % (what, ra))
    need(reset - ra in (t0 - 1, t0, t0 + 1), "%s: Retry-After %d disagrees with Reset %d at %d" % (what, ra, reset, t0))
    need(h.get("x-ratelimit-remaining") == "0", "%s: Remaining %r" % (what, h.get("x-ratelimit-remaining")))
    cc = h.get("cache-control", "")
    need("no-store" in cc or ("cache-control" not in h and "expires" not in h and "last-modified" not in h),
         "%s: 429 may be cached (RFC 6585 4): Cache-Control %r" % (what, cc))
    return e


def c_minute_limit(S):
    key = fresh_free_key()
    rs = exhaust(S, key, 63)
    sts = [r[0] for r in rs]
    need(sts == [200] * 60 + [429] * 3, "free key: statuses %r" % sts)
    for st, h, body in rs:
        need(int(h["x-ratelimit-remaining"]) >= 0, "negative Remaining")
    for st, h, body in rs[60:]:
        check_429(st, h, body, "61st request")
        need(h["x-ratelimit-limit"] == "60", "429 Limit %r" % h["x-ratelimit-limit"])
    resets = {r[1]["x-ratelimit-reset"] for r in rs}
    need(len(resets) == 1, "Reset not stable across the window: %r" % resets)
    # a refused key gets 429 on every path and method (limits come first, documented)
    st, h, raw, _ = S.request("POST", body="{", key=key)
    check_429(st, h, raw, "POST while limited")


def c_day_limit(S):
    rs = exhaust(S, "p-day", 7)
    need([r[0] for r in rs] == [200] * 5 + [429] * 2, "day limit 5: %r" % [r[0] for r in rs])
    st, h, body = rs[5]
    check_429(st, h, body, "day window")
    need(h["x-ratelimit-limit"] == "5", "day 429 Limit %r" % h["x-ratelimit-limit"])
    need(int(h["x-ratelimit-reset"]) >= time.time() + 86000, "day 429 Reset %r is not the day's end" %
         h["x-ratelimit-reset"])
    need(int(rs[4][1]["x-ratelimit-limit"]) == 5 and rs[4][1]["x-ratelimit-remaining"] == "0",
         "the headers do not describe the window with fewer requests left: %r" % rs[4][1])


def c_unauthenticated_per_address(S):
    src = fresh_source()
    rs = exhaust(S, None, 62, source=src)
    sts = [r[0] for r in rs]
    need(sts == [401] * 60 + [429] * 2, "unauthenticated from one address: %r" % sts)
    need([int(r[1]["x-ratelimit-remaining"]) for r in rs[:3]] == [59, 58, 57], "per-address Remaining")
    check_429(*rs[60], what="unauthenticated 61st")
    # guessed keys count on the address too; another address is not affected
    rs = exhaust(S, "guess", 1, source=src)
    need(rs[0][0] == 429, "a guessed key from a limited address: %d" % rs[0][0])
    rs = exhaust(S, None, 1, source=fresh_source())
    need(rs[0][0] == 401 and rs[0][1]["x-ratelimit-remaining"] == "59", "another address was limited too")
    # a valid key from the limited address is counted on the key
    rs = exhaust(S, fresh_free_key(), 1, source=src)
    need(rs[0][0] == 200, "a valid key from a limited address: %d" % rs[0][0])


def c_burst_exact(S):
    """200 threads at once on one key at a fresh window admit exactly the limit."""
    for rnd in range(7):
        key = "p-burst%d" % rnd if rnd < 5 else "p-burstday" if rnd == 5 else None
        limit = 50 if rnd < 5 else 40 if rnd == 5 else 60  # the last round: no key, one address, Free numbers
        src = fresh_source() if key is None else None
        ok_status = 200 if key else 401
        socks = []
        for _ in range(200):
            socks.append(socket.create_connection((S.host, S.port), timeout=10,
                                                  source_address=(src, 0) if src else None))
        auth = "Authorization: Bearer %s\r\n" % key if key else ""
        req = ("GET %s HTTP/1.1\r\nHost: x\r\n%sConnection: close\r\n\r\n" % (S.path, auth)).encode()
        go = threading.Barrier(len(socks))
        results = [None] * len(socks)

        def fire(i):
            try:
                go.wait(5)
            except threading.BrokenBarrierError:
                pass
            try:
                socks[i].sendall(req)
                out = b""
                while True:
                    ch = socks[i].recv(65536)
                    if not ch:
                        break
                    out += ch
                results[i] = one_response(out)
            except Exception as e:  # noqa: BLE001
                results[i] = (0, {}, repr(e).encode())
        th = [threading.Thread(target=fire, args=(i,)) for i in range(len(socks))]
        for t in th:
            t.start()
        for t in th:
            t.join(20)
        for s in socks:
            s.close()
        sts = [r[0] for r in results]
        need(sts.count(ok_status) == limit and sts.count(429) == 200 - limit,
             "round %d (%s): %d admitted, %d refused, limit %d; others %r" %
             (rnd, key or src, sts.count(ok_status), sts.count(429), limit,
              [s for s in sts if s not in (ok_status, 429)][:5]))
        rem = sorted(int(r[1]["x-ratelimit-remaining"]) for r in results if r[0] == ok_status)
        need(rem == list(range(limit)), "round %d: admitted Remaining values not each of 0..%d once" %
             (rnd, limit - 1))


def c_scaled_windows():
    S = Srv("--time-scale", "60", "--ban-after", "3", "--ban-seconds", "150", "--threads", "2", *KEYS)
    try:
        key = "p-free0"
        t0 = time.time()
        rs = exhaust(S, key, 61)
        need([r[0] for r in rs].count(200) >= 60, "scaled: fewer than 60 admitted")
        for st, h, body in rs:
            reset = int(h["x-ratelimit-reset"])
            need(t0 <= reset <= time.time() + 2.5, "--time-scale 60: Reset %d is not real Unix seconds about 1 s ahead"
                 " (now %.1f)" % (reset, time.time()))
        if rs[-1][0] == 429:
            check_429(*rs[-1], what="scaled 429")
            need(int(rs[-1][1]["retry-after"]) <= 2, "scaled Retry-After %s" % rs[-1][1]["retry-after"])
            # recovery: after Reset the key is admitted again
            reset = int(rs[-1][1]["x-ratelimit-reset"])
            time.sleep(max(0, reset - time.time()) + 0.05)
            st = exhaust(S, key, 1)[0]
            need(st[0] == 200, "not admitted again after Reset (%d)" % st[0])
        # the ban: keep sending while limited
        key = "p-free1"
        rs = exhaust(S, key, 70)
        codes = [json.loads(b)["code"] if st == 429 else st for st, h, b in rs]
        need(codes[:60].count(200) >= 55, "ban key: too few admitted %r" % codes[:60])
        need("banned" in codes, "no ban after more than --ban-after refusals: %r" % codes[55:])
        first = codes.index("banned")
        need(codes[first - 3:first] == ["rate_limited"] * 3, "ban did not start after 3 refusals: %r" %
             codes[first - 4:first + 1])
        st, h, body = rs[first]
        check_429(st, h, body, "banned", "banned")
        ban_end = int(h["x-ratelimit-reset"])
        need(time.time() + 1 <= ban_end <= time.time() + 4, "ban Reset %d is not about 2.5 s ahead" % ban_end)
        # still banned after the minute window that caused it has ended (its Reset)
        win_end = int(rs[first - 1][1]["x-ratelimit-reset"])
        need(win_end < ban_end, "the ban ends (%d) no later than the window (%d)" % (ban_end, win_end))
        time.sleep(max(0, win_end - time.time()) + 0.1)
        st, h, body = exhaust(S, key, 1)[0]
        need(st == 429 and json.loads(body)["code"] == "banned" and int(h["x-ratelimit-reset"]) == ban_end,
             "ban ended with the window: %d %r" % (st, body[:80]))
        time.sleep(max(0, ban_end - time.time()) + 0.1)
        st, h, body = exhaust(S, key, 1)[0]
        need(st == 200, "not admitted after the ban's end: %d %r" % (st, body[:80]))
    finally:
        S.stop()


# ---- checks: HTTP framing ----------------------------------------------------

def c_keepalive_semantics(S):
    A = ("Authorization: Bearer %s\r\n" % ENT).encode()
    g = b"GET " + S.path.encode()
    # HTTP/1.1: persistent by default; three requests on one connection
    s = socket.create_connection((S.host, S.port), timeout=5)
    for i in range(3):
        s.sendall(g + b" HTTP/1.1\r\nHost: x\r\n" + A + b"\r\n")
        buf = b""
        while not parse_responses(buf):
            ch = s.recv(65536)
            need(ch, "HTTP/1.1 connection closed after %d responses" % i)
            buf += ch
        st, h, _ = parse_responses(buf)[0]
        need(st == 200 and h.get("connection", "").lower() != "close", "keep-alive response %d: %d %r" % (i, st, h))
    s.close()
    # Connection: close is honoured
    out = S.raw(g + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + A + b"\r\n" + g + b" HTTP/1.1\r\nHost: x\r\n" +
                A + b"\r\n")
    rs = parse_responses(out)
    need(len(rs) == 1 and rs[0][1].get("connection", "").lower() == "close", "Connection: close: %d responses" %
         len(rs))
    # HTTP/1.0: closes unless keep-alive was asked for; answers are HTTP/1.x with a Content-Length
    out = S.raw(g + b" HTTP/1.0\r\n" + A + b"\r\n" + g + b" HTTP/1.0\r\n" + A + b"\r\n")
    rs = parse_responses(out)
    need(len(rs) == 1 and rs[0][0] == 200, "HTTP/1.0 without keep-alive: %d responses" % len(rs))
    need("content-length" in rs[0][1] and "chunked" not in rs[0][1].get("transfer-encoding", ""),
         "HTTP/1.0 response must be Content-Length framed")
    ka = g + b" HTTP/1.0\r\nConnection: keep-alive\r\n" + A + b"\r\n"
    out = S.raw(ka + ka + g + b" HTTP/1.0\r\n" + A + b"\r\n", timeout=3)
    rs = parse_responses(out)
    need([r[0] for r in rs] == [200, 200, 200], "HTTP/1.0 keep-alive: %r" % [r[0] for r in rs])
    need(rs[0][1].get("connection", "").lower() == "keep-alive", "HTTP/1.0 keep-alive answer lacks "
         "Connection: keep-alive: %r" % rs[0][1])


def c_pipelining(S):
    A = ("Authorization: Bearer %s\r\n" % ENT).encode()
    reqs, want = b"", []
    for i in range(12):
        if i % 3 == 0:
            body = ('{"name":"pipe-%d"}' % i).encode()
            reqs += (b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + A + b"Content-Length: %d\r\n\r\n" %
                     len(body) + body)
            want.append(201)
        elif i % 3 == 1:
            reqs += b"GET " + S.path.encode() + b"?i=%d HTTP/1.1\r\nHost: x\r\n" % i + A + b"\r\n"
            want.append(200)
        else:
            reqs += b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + A + b"Content-Length: 2\r\n\r\n[]"
            want.append(400)
    reqs += b"GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + A + b"\r\n"
    want.append(404)
    out = S.raw(reqs, timeout=5)
    rs = parse_responses(out)
    need([r[0] for r in rs] == want, "pipelined: %r, expected %r" % ([r[0] for r in rs], want))
    ids = [json.loads(r[2])["id"] for r in rs if r[0] == 201]
    need(ids == sorted(ids) and len(set(ids)) == len(ids), "pipelined creates: ids %r" % ids)
    # the same bytes sent one at a time
    s = socket.create_connection((S.host, S.port), timeout=5)
    for b in reqs[:400]:
        s.send(bytes([b]))
    s.sendall(reqs[400:])
    out = b""
    while True:
        try:
            ch = s.recv(65536)
        except socket.timeout:
            break
        if not ch:
            break
        out += ch
    s.close()
    need([r[0] for r in parse_responses(out)] == want, "byte-at-a-time: %r" % [r[0] for r in parse_responses(out)])


def c_bodies_without_and_with_length(S):
    A = b"Authorization: Bearer " + ENT.encode() + b"\r\n"
    # a GET may carry a body: it is read and ignored, the next request still parses
    g = b"GET " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + A
    out = S.raw(g + b"Content-Length: 12\r\n\r\nGET /nope HT" + g + b"Connection: close\r\n\r\n")
    need([r[0] for r in parse_responses(out)] == [200, 200], "GET with a body: %r" % [r[0] for r in parse_responses(out)])
    # a POST without Content-Length or Transfer-Encoding has an empty body (RFC 9112 6.3)
    out = S.raw(b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + A + b"Connection: close\r\n\r\n")
    st, h, b = one_response(out)
    check_error(st, h, b, 400, "empty_body", "POST without a length")
    # Expect: 100-continue gets the interim answer before the body is sent
    s = socket.create_connection((S.host, S.port), timeout=3)
    body = b'{"name":"expect"}'
    s.sendall(b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + A + b"Expect: 100-continue\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body))
    first = s.recv(100)
    need(first.startswith(b"HTTP/1.1 100"), "Expect: 100-continue: %r" % first[:40])
    s.sendall(body)
    out = b""
    while not parse_responses(out):
        ch = s.recv(4096)
        if not ch:
            break
        out += ch
    s.close()
    need(parse_responses(out) and parse_responses(out)[0][0] == 201, "after 100 Continue: %r" % out[:60])


def c_reader_that_never_reads(S):
    """Pipelined requests from a client that does not read must not grow the server without bound."""
    def rss_kb():
        with open("/proc/%d/status" % S.proc.pid) as f:
            return int([ln for ln in f if ln.startswith("VmRSS")][0].split()[1])
    req = ("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n" % (S.path, ENT)).encode()
    before = rss_kb()
    s = socket.create_connection((S.host, S.port), timeout=1)
    sent = 0
    t = time.monotonic()
    try:
        while time.monotonic() - t < 2 and sent < (48 << 20):
            sent += s.send(req * 500)
    except socket.timeout:
        pass
    grown = rss_kb() - before
    s.close()
    need(grown < 64 * 1024, "server grew %d KiB for %d bytes of pipelined requests never read" % (grown, sent))
    serving(S)


def c_chunked(S):
    A = ("Authorization: Bearer %s\r\n" % ENT).encode()
    head = b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + A + b"Transfer-Encoding: chunked\r\n"
    body = b'{"name":"chunky","description":"in pieces"}'
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 7]), body[i:i + 7]) for i in range(0, len(body), 7))
    out = S.raw(head + b"Connection: close\r\n\r\n" + chunks + b"0\r\n\r\n")
    st, _, b = one_response(out)
    need(st == 201 and json.loads(b)["name"] == "chunky", "valid chunked body: %d %r" % (st, b[:100]))
    out = S.raw(head + b"Connection: close\r\n\r\n5;ext=1\r\n{\"nam\r\n9\r\ne\":\"ext\"}\r\n0\r\nX-Trailer: 1\r\n\r\n")
    need(one_response(out)[0] == 201, "chunk extensions and trailers: %r" % out[:80])
    for bad, want in ((b"zz\r\n{}\r\n0\r\n\r\n", 400), (b"-2\r\n{}\r\n0\r\n\r\n", 400),
                      (b"2\r\n{}XX0\r\n\r\n", 400), (b"2\r\n{}\n0\r\n\r\n", 400), (b"2\rX{}\r\n0\r\n\r\n", 400),
                      (b"0x2\r\n{}\r\n0\r\n\r\n", 400), (b"FFFFFFFFFFFFFFFFFF\r\nab", 400),
                      (b"100000\r\nabc", 413), (b"7fffffffffffffff\r\nabc", 413)):
        t = time.monotonic()
        st, h, b = one_response(S.raw(head + b"\r\n" + bad, timeout=3))
        need(st in (400, 413) and (want == 400 or st == 413), "chunked %r: %d (expected %d)" % (bad[:20], st, want))
        check_error(st, h, b, st, None, "chunked %r" % bad[:20])
        need(time.monotonic() - t < 2, "chunked %r answered only after a timeout" % bad[:20])


def c_smuggling_class(S):
    p = b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ENT.encode() + b"\r\n"
    cases = [b"Content-Length: 1x\r\n\r\n{}", b"Content-Length: -1\r\n\r\n{}", b"Content-Length: +2\r\n\r\n{}",
             b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}x", b"Content-Length: 2, 3\r\n\r\n{}x",
             b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
             b"Content-Length: 99999999999999999999999\r\n\r\n{}",
             b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
             b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
             b"Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", b"Transfer-Encoding: gzip\r\n\r\n{}",
             b"Transfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
             b"Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n", b"NoColon\r\n\r\n", b"X: a\x00b\r\n\r\n",
             b"X-Bad\x01: 1\r\n\r\n", b"Host: y\r\n\r\n", b"X: 1\rContent-Length: 2\r\n\r\n{}",
             b"Content-Length: 0\r\n\rX\r\n\r\n"]
    for c in cases:
        out = S.raw(p + c)
        rs = parse_responses(out)
        need(len(rs) == 1, "%r: %d responses (a second request was smuggled?)" % (c[:40], len(rs)))
        st, h, b = rs[0]
        need(st in (400, 413, 501), "%r: %d, expected 400" % (c[:40], st))
        check_error(st, h, b, st, None, repr(c[:40]))
        need(h.get("connection", "").lower() == "close", "%r: connection left open after a framing error" % c[:30])
    # gzip then chunked: we do not decode gzip, so 501 (RFC 9112 6.1), never the gzip bytes as JSON
    st, h, b = one_response(S.raw(p + b"Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"))
    check_error(st, h, b, 501, None, "gzip, chunked")
    # HTTP/1.1 needs exactly one Host, and a valid one
    g = b"GET " + S.path.encode() + b" HTTP/1.1\r\nAuthorization: Bearer " + ENT.encode() + b"\r\n"
    for raw in (g + b"\r\n", g + b"Host: a\r\nHost: a\r\n\r\n", g + b"Host: a b\r\n\r\n",
                b"POST " + S.path.encode() + b" HTTP/1.0\r\nAuthorization: Bearer " + ENT.encode() +
                b"\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"):
        st, h, b = one_response(S.raw(raw))
        check_error(st, h, b, 400, "bad_request", "Host/TE rule: %r" % raw[-40:])
    # trailer fields never authenticate (RFC 9110 6.5.1)
    body = b'{"name":"trailer"}'
    st, h, b = one_response(S.raw(b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                                  b"Connection: close\r\n\r\n%x\r\n%s\r\n0\r\nAuthorization: Bearer %s\r\n\r\n" %
                                  (len(body), body, ENT.encode()), source=fresh_source()))
    check_error(st, h, b, 401, "missing_credential", "Authorization in a trailer")


def c_request_line(S):
    A = b"Authorization: Bearer " + ENT.encode() + b"\r\nConnection: close\r\n"
    for raw, want in ((b"GET " + S.path.encode() + b" HTTP/2.0\r\nHost: x\r\n" + A + b"\r\n", (505,)),
                      (b"GET " + S.path.encode() + b"\r\n\r\n", (400, 505)),
                      # RFC 9112 3: a recipient MAY parse on white space word boundaries
                      (b"GET  " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + A + b"\r\n", (200, 400, 404)),
                      (b"get " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + A + b"\r\n", (400, 405, 501)),
                      (b"GET " + S.path.encode() + b"?" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n" + A + b"\r\n",
                       (414,)),
                      (b"GET /v1/categ\x00ories HTTP/1.1\r\nHost: x\r\n" + A + b"\r\n", (400,)),
                      (b"\r\n\r\nGET " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + A + b"\r\n", (200, 400)),
                      (b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + bytes(range(64)), (400,))):
        st, h, b = one_response(S.raw(raw))
        need(st in want, "%r: %d, expected one of %r" % (raw[:40], st, want))
        if st >= 400:
            check_error(st, h, b, st, None, repr(raw[:30]))


# ---- checks: hardening -------------------------------------------------------

def serving(S):
    st, _, _, lst = S.request("GET", key=ENT, timeout=5)
    need(st == 200 and isinstance(lst, list), "server no longer serving: %d" % st)
    need(S.proc.poll() is None, "server exited")


def c_garbage_and_big_bodies(S):
    rnd = random.Random(20261121)
    for i in range(60):
        data = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 2000)))
        if i % 3 == 0:
            data = b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + data
        try:
            S.raw(data, timeout=0.3, shutdown=i % 2 == 0)
        except OSError:
            pass
    serving(S)
    # 8 MiB body: 413 from Content-Length, the server does not read it into memory
    s = socket.create_connection((S.host, S.port), timeout=10)
    s.sendall(b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ENT.encode() +
              b"\r\nContent-Length: %d\r\n\r\n" % (8 << 20))
    try:
        for _ in range(128):
            s.sendall(b"x" * 65536)
    except OSError:
        pass
    out = b""
    try:
        while True:
            ch = s.recv(65536)
            if not ch:
                break
            out += ch
    except OSError:
        pass
    s.close()
    st, h, b = one_response(out)
    check_error(st, h, b, 413, "body_too_large", "8 MiB body")
    # 8 MiB chunked, in chunks under the cap each
    s = socket.create_connection((S.host, S.port), timeout=10)
    s.sendall(b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ENT.encode() +
              b"\r\nTransfer-Encoding: chunked\r\n\r\n")
    try:
        for _ in range(256):
            s.sendall(b"8000\r\n" + b"x" * 0x8000 + b"\r\n")
    except OSError:
        pass
    out = b""
    try:
        while True:
            ch = s.recv(65536)
            if not ch:
                break
            out += ch
    except OSError:
        pass
    s.close()
    st, h, b = one_response(out)
    check_error(st, h, b, 413, "body_too_large", "8 MiB chunked body")
    # a header block over the cap
    st, h, b = one_response(S.raw(b"GET " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" +
                                  b"".join(b"X-%d: %s\r\n" % (i, b"v" * 100) for i in range(400)) + b"\r\n"))
    check_error(st, h, b, 431, "headers_too_large", "400 headers")
    serving(S)


def c_mutated_requests(S):
    """Valid requests with random edits (bytes flipped, framing tokens inserted, pieces cut or
    repeated), sent in random pieces: never a 500, never a dead or stuck server."""
    body = b'{"name":"fz","description":"d\\u00e9"}'
    A = b"Authorization: Bearer " + ENT.encode() + b"\r\n"
    seeds = [b"GET " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + A + b"\r\n",
             b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + A + b"Content-Length: %d\r\n\r\n" % len(body) + body,
             b"POST " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + A + b"Transfer-Encoding: chunked\r\n\r\n5\r\n" +
             body[:5] + b"\r\n%x\r\n" % (len(body) - 5) + body[5:] + b"\r\n0\r\nX: y\r\n\r\n",
             b"GET " + S.path.encode() + b" HTTP/1.0\r\nConnection: keep-alive\r\n" + A + b"\r\n"]
    toks = [b"\r", b"\n", b"\r\n", b" ", b"\t", b":", b"0", b"f", b"-", b"\x00", b"\xff", b";", b",", b"chunked",
            b"Content-Length: 3\r\n", b"Transfer-Encoding: chunked\r\n", b"Host: y\r\n", A, b"\r\n\r\n", b"{", b"\\u"]
    rnd = random.Random(4242)
    src = fresh_source()
    seen = {}
    for _ in range(600):
        d = bytearray(b"".join(rnd.choice(seeds) for _ in range(rnd.randint(1, 3))))
        for _ in range(rnd.randint(1, 4)):
            op, pos = rnd.random(), rnd.randrange(len(d) + 1)
            if op < 0.3 and d:
                d[min(pos, len(d) - 1)] = rnd.randrange(256)
            elif op < 0.6:
                d[pos:pos] = rnd.choice(toks)
            elif op < 0.8 and d:
                del d[pos:pos + rnd.randint(1, 8)]
            else:
                d[pos:pos] = d[rnd.randrange(len(d) + 1):][:rnd.randint(1, 40)]
        s = socket.create_connection((S.host, S.port), timeout=2, source_address=(src, 0))
        data, k = bytes(d), 0
        while k < len(data):
            step = rnd.choice([1, 7, len(data)])
            s.sendall(data[k:k + step])
            k += step
        s.shutdown(socket.SHUT_WR)
        s.settimeout(0.3)
        out = b""
        try:
            while True:
                ch = s.recv(65536)
                if not ch:
                    break
                out += ch
        except (socket.timeout, ConnectionResetError):
            pass
        s.close()
        for st, h, b in parse_responses(out):
            seen[st] = seen.get(st, 0) + 1
            need(st < 500 or st in (501, 503, 505), "mutated request %r got %d %r" % (data[:80], st, b[:100]))
    need(seen.get(400, 0) > 50 and seen.get(200, 0) + seen.get(201, 0) > 20, "the mutations did not exercise "
         "both sides: %r" % seen)
    serving(S)


def c_timeouts_and_cap():
    S = Srv("--request-timeout", "1s", "--idle-timeout", "1s", *KEYS)
    try:
        # idle connection: closed after ~1 s without an answer
        s = socket.create_connection((S.host, S.port), timeout=5)
        t = time.monotonic()
        need(s.recv(100) == b"", "idle connection got bytes")
        need(0.7 < time.monotonic() - t < 3, "idle timeout %.1f s, expected ~1 s" % (time.monotonic() - t))
        s.close()
        # slowloris: a header byte every 100 ms; 408 within ~1 s while others are served
        s = socket.create_connection((S.host, S.port), timeout=5)
        s.sendall(b"GET " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n")
        t = time.monotonic()
        got, closed = b"", False
        while time.monotonic() - t < 4 and not closed:
            try:
                s.sendall(b"X")
            except OSError:
                closed = True
                break
            s.settimeout(0.1)
            try:
                ch = s.recv(4096)
                got += ch
                closed = not ch
            except socket.timeout:
                pass
            except OSError:
                closed = True
            if time.monotonic() - t < 0.8:
                t1 = time.monotonic()
                serving(S)
                need(time.monotonic() - t1 < 1, "slowloris slowed others down")
        s.close()
        need(time.monotonic() - t < 3, "slowloris not cut off within 3 s")
        if got:
            st, h, b = one_response(got)
            check_error(st, h, b, 408, "request_timeout", "slowloris")
    finally:
        S.stop()
    # The connection cap gets a server of its own. On the one above, connections
    # the client had closed were still counted until the server read their FIN
    # (the slowloris one lingers up to 2 s after its 408), and --idle-timeout 1s
    # could close one of the 40 before its request came: on a loaded machine
    # either made a connection within the cap get a reset instead of an answer.
    S = Srv("--max-connections", "40", *KEYS)
    try:
        # beyond the cap, new connections are closed; then it serves again
        socks = [socket.create_connection((S.host, S.port), timeout=5) for _ in range(40)]
        # An answer on each proves the server has accepted (and counted) all 40;
        # a fixed sleep was not enough for a loaded ASan build.
        req = ("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n" % (S.path, ENT)).encode()
        for c in socks:
            c.sendall(req)
        for c in socks:
            need(c.recv(100).startswith(b"HTTP/1.1 "), "a connection within --max-connections got no answer")
        extra = socket.create_connection((S.host, S.port), timeout=5)
        try:
            extra.sendall(b"GET " + S.path.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            need(extra.recv(100) == b"", "a connection beyond --max-connections was served")
        except ConnectionResetError:
            pass
        extra.close()
        for s in socks:
            close_and_wait(s)
        serving(S)
    finally:
        S.stop()


def c_many_connections(S, n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, n + 512))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    need(want >= n + 100, "RLIMIT_NOFILE hard limit %d is too low for %d connections" % (hard, n))
    socks = []
    try:
        for _ in range(n):
            socks.append(socket.create_connection((S.host, S.port), timeout=20))
        serving(S)
        req = ("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n" % (S.path, ENT)).encode()
        for s in socks:
            s.sendall(req)
        ok = 0
        for s in socks:
            buf = b""
            while b"\r\n\r\n" not in buf:
                ch = s.recv(65536)
                if not ch:
                    break
                buf += ch
            ok += buf.startswith(b"HTTP/1.1 200")
        need(ok == n, "%d of %d connections answered 200" % (ok, n))
    finally:
        for s in socks:
            s.close()
    serving(S)


# ---- checks: command line and lifecycle --------------------------------------

def c_cli():
    def run(*args, cwd=None):
        try:
            return subprocess.run([SERVER, *args], capture_output=True, timeout=10, cwd=cwd)
        except subprocess.TimeoutExpired:
            raise ProbeFailure("%r did not exit (it should have refused to start)" % (args,))
    p = run("--help")
    need(p.returncode == 0 and b"--port" in p.stdout and b"--time-scale" in p.stdout and b"--fault" in p.stdout,
         "--help: %d" % p.returncode)
    p = run("--list-faults")
    need(p.returncode == 0, "--list-faults exit %d" % p.returncode)
    listed = {ln.split()[0] for ln in p.stdout.decode().splitlines() if ln.strip()}
    try:
        doc = open(os.path.join(SOURCE, "docs", "faults.md"), encoding="utf-8").read()
        documented = set(re.findall(r"^\| `([a-z0-9-]+)` \|", doc, re.M))
        need(documented and listed == documented, "--list-faults %r != docs/faults.md %r" %
             (sorted(listed ^ documented), ""))
    except OSError:
        pass
    for args, words in ((["--port", "x"], [b"--port"]), (["--threads", "0"], [b"--threads"]),
                        (["--bogus"], [b"--bogus"]), (["--fault", "no-such-fault"], [b"no-such-fault"]),
                        (["--bind", "1.2.3"], [b"--bind"]), (["--key", "k:platinum"], [b"platinum"]),
                        (["--key", "k:enterprise:1"], [b"--key"]), (["--time-scale", "0"], [b"--time-scale"]),
                        (["--max-body", "12Q"], [b"--max-body"]), (["--port"], [b"--port"]),
                        (["--keys-file", "/nonexistent/keys"], [b"/nonexistent/keys"])):
        p = run(*args)
        need(p.returncode == 2, "%r: exit %d, expected 2" % (args, p.returncode))
        need(all(w in p.stderr for w in words), "%r: message %r does not name %r" % (args, p.stderr[:200], words))
        need(b"Sanitizer" not in p.stderr and b"runtime error" not in p.stderr, "%r: sanitizer report" % args)
    with tempfile.NamedTemporaryFile("w", suffix=".keys") as f:
        f.write("ok-key free\nbad-key gold\n")
        f.flush()
        p = run("--keys-file", f.name)
        need(p.returncode == 2 and f.name.encode() in p.stderr and b"line 2" in p.stderr,
             "bad keys file: %d %r" % (p.returncode, p.stderr[:200]))
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write('[{"name":"ok"},{"name":7}]')
        f.flush()
        p = run("--seed", f.name, "--key", "k:free", "--port", "0")
        need(p.returncode != 0 and f.name.encode() in p.stderr, "bad seed file: %d %r" % (p.returncode, p.stderr[:200]))
    # a port in use: exit 1 naming the port
    S = Srv("--key", "k:free")
    try:
        p = run("--port", str(S.port), "--key", "k:free")
        need(p.returncode == 1 and str(S.port).encode() in p.stderr, "port in use: %d %r" % (p.returncode, p.stderr))
    finally:
        S.stop()
    # a fault is logged loudly
    S = Srv("--key", "k:free", "--fault", "never-limit")
    try:  # the warning is written before the address line Srv waited for
        need("never-limit" in S.stderr() and "WARNING" in S.stderr(), "fault not logged loudly: %r" % S.stderr())
    finally:
        S.stop()


def c_access_log_and_graceful_stop():
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "access.log")
        S = Srv("--access-log", log, "--delay", "1:700ms", "--threads", "2", *KEYS)
        S.request("GET", path="/nope", key=ENT)
        result = {}

        def slow():
            try:
                result["r"] = S.request("POST", body='{"name":"in-flight"}', key=ENT, timeout=10)
            except Exception as e:  # noqa: BLE001
                result["r"] = e
        t = threading.Thread(target=slow)
        t.start()

        def logged_201():  # logged when the answer is queued, before its 700 ms delay
            with open(log) as f:
                return " 201 " in f.read()
        wait_for(logged_201, "the in-flight create in the access log")
        rc, err = S.stop(signal.SIGINT)
        t.join(10)
        r = result.get("r")
        need(isinstance(r, tuple) and r[0] == 201, "in-flight request at SIGINT: %r" % (r,))
        with open(log) as f:
            lines = f.read().splitlines()
        need(len(lines) >= 2 and any(" 404 " in ln for ln in lines) and any(" 201 " in ln for ln in lines),
             "access log: %r" % lines)


def c_readme_commands():
    """README 'Running the reference server': the exact command line, from the source directory."""
    try:
        readme = open(os.path.join(SOURCE, "README.md"), encoding="utf-8").read()
    except OSError:
        return
    sec = readme.split("## Running the reference server", 1)
    need(len(sec) == 2, "README has no 'Running the reference server' section")
    block = re.search(r"```sh\n(.*?)```", sec[1], re.S).group(1)
    cmd = [ln for ln in block.splitlines() if "petstore-server" in ln and not ln.startswith("#")][0]
    args = cmd.split("#")[0].split()[1:]
    i = args.index("--port")
    args[i + 1] = "0"  # 8080 may be taken; the rest is as written
    S = Srv(*args, cwd=SOURCE)
    try:
        keys = re.findall(r"--key ([^:\s]+):([a-z]+)(?::(\d+):(\d+))?", cmd)
        need(keys, "README command has no --key")
        for key, plan, pm, pd in keys:
            st, h, _, lst = S.request("GET", key=key)
            need(st == 200 and isinstance(lst, list), "README key %s: %d" % (key, st))
            lim = {"free": 60, "pro": 300, "business": 1000}.get(plan, int(pm or 0))
            need(h.get("x-ratelimit-limit") == str(lim), "README key %s: Limit %r" % (key, h.get("x-ratelimit-limit")))
        curl = [ln for ln in block.splitlines() if ln.startswith("curl")]
        need(curl and "Authorization: Bearer" in curl[0], "README curl line missing")
        need(re.search(r"http://127\.0\.0\.1:8080/v1", block), "README URL not http://127.0.0.1:8080/v1")
        need(S.url.startswith("http://127.0.0.1:") and S.url.endswith("/v1"), "first line %r" % S.url)
    finally:
        S.stop()


# ---- driver ------------------------------------------------------------------

def run_check(name, fn, *args):
    t = time.monotonic()
    try:
        fn(*args)
        RESULTS.append((name, True, ""))
        print("ok   %-36s %.1fs" % (name, time.monotonic() - t), flush=True)
    except ProbeFailure as e:
        RESULTS.append((name, False, str(e)))
        print("FAIL %-36s %s" % (name, str(e)[:2000]), flush=True)
    except Exception:  # noqa: BLE001 - a probe bug or a dead server: report it as a failure
        RESULTS.append((name, False, traceback.format_exc()))
        print("FAIL %-36s %s" % (name, traceback.format_exc()[-2000:]), flush=True)


def main():
    global SERVER, SOURCE, DOC_CODES
    args = sys.argv[1:]
    only, many = None, None
    while args:
        a = args.pop(0)
        if a == "--server" and args:
            SERVER = args.pop(0)
        elif a == "--source-dir" and args:
            SOURCE = args.pop(0)
        elif a == "--only" and args:
            only = args.pop(0)
        elif a == "--many" and args:
            many = int(args.pop(0))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    if not SERVER or not os.access(SERVER, os.X_OK):
        print("blackbox_probe: --server PATH to petstore-server is required", file=sys.stderr)
        return 2
    DOC_CODES = load_doc_codes()
    if not DOC_CODES:
        print("blackbox_probe: cannot read docs/error-codes.md under %s" % SOURCE, file=sys.stderr)
        return 2
    t0 = time.monotonic()
    main_srv = Srv("--threads", "2", *KEYS)
    try:
        if many:
            run_check("many_connections", c_many_connections, main_srv, many)
        else:
            # each check is reported under its function's name, less the c_
            checks = [
                (c_list_and_create, main_srv),
                (c_unknown_paths_404, main_srv),
                (c_query_and_absolute_form_route, main_srv),
                (c_other_methods_405, main_srv),
                (c_base_path,),
                (c_auth, main_srv),
                (c_keys_file_and_plans,),
                (c_validation, main_srv),
                (c_roundtrip, main_srv),
                (c_big_name_within_cap,),
                (c_ids_unique_concurrent, main_srv),
                (c_durability,),
                (c_headers_every_response, main_srv),
                (c_plans, main_srv),
                (c_minute_limit, main_srv),
                (c_day_limit, main_srv),
                (c_unauthenticated_per_address, main_srv),
                (c_burst_exact, main_srv),
                (c_scaled_windows,),
                (c_keepalive_semantics, main_srv),
                (c_pipelining, main_srv),
                (c_chunked, main_srv),
                (c_bodies_without_and_with_length, main_srv),
                (c_reader_that_never_reads, main_srv),
                (c_smuggling_class, main_srv),
                (c_request_line, main_srv),
                (c_garbage_and_big_bodies, main_srv),
                (c_mutated_requests, main_srv),
                (c_timeouts_and_cap,),
                (c_cli,),
                (c_access_log_and_graceful_stop,),
                (c_readme_commands,),
            ]
            for fn, *a in checks:
                name = fn.__name__[2:]
                if only and only not in name:
                    continue
                run_check(name, fn, *a)
            if not only or "serving" in only:
                run_check("serving", serving, main_srv)
    finally:
        try:
            main_srv.stop()
        except ProbeFailure as e:
            RESULTS.append(("main_server_stop", False, str(e)))
            print("FAIL main_server_stop %s" % e)
    bad = [r for r in RESULTS if not r[1]]
    print("%d checks, %d failed, %.1f s" % (len(RESULTS), len(bad), time.monotonic() - t0))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
