#!/usr/bin/env python3
"""front_test.py - petstore-conform through a front that answers in the
service's place (issue 27 item 3): replies a gateway made are named, never
judged as the service's; a gateway that enforces the limit with 503 is
reported as exactly that; a correct service behind haproxy closing its
server connections (option http-server-close) passes.

  front_test.py --conform BIN --server BIN nginx_limit_req | haproxy_down | haproxy_server_close

Every daemon binds 127.0.0.1 on a free port; waits are for a port or the
runner's exit, never a fixed sleep. Exit 77 (skipped) without nginx or haproxy.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import conform_test as ct  # noqa: E402
from pstest import free_port, start_nginx, stop_process, wait_port  # noqa: E402

check = ct.check
# the service's own checks: a gateway's page must never fail them
SERVICE_CHECKS = {"schema.content-type-json", "errors.schema", "errors.status-matches",
                  "ratelimit.headers-present", "ratelimit.headers-integers", "create.status-201",
                  "list.status-200", "roundtrip.appears-in-list"}


def conform(a, tmp, url, extra=()):
    args = ["--base-url", url, "--plan", "pro", "--limit-plan", "free", "--max-wait", "10s"] + list(extra)
    return ct.run_conform(args, a.conform, tmp, {"PETSTORE_API_KEY": ct.MAIN_KEY, "PETSTORE_LIMIT_KEY": ct.LIMIT_KEY},
                          timeout=180)


def messages(doc):
    return {c["id"]: c.get("message") or "" for s in doc["suites"] for c in s["checks"]}


def no_service_failure(doc, where):
    failed = ct.checks_by_status(doc).get("failed", set())
    wrong = sorted(i for i in failed if i in SERVICE_CHECKS or i.startswith("generate."))
    check(not wrong, "%s: service checks failed on a gateway's replies: %s" % (where, wrong))
    for i, m in messages(doc).items():
        check("said -1" not in m and "Remaining -1" not in m, "%s: %s shows the internal -1: %s" % (where, i, m))


def start_haproxy(tmp, backend_port, option):
    """haproxy in HTTP mode on a free port in front of 127.0.0.1:backend_port."""
    for _ in range(5):
        port = free_port()
        cfg = os.path.join(tmp, "haproxy.cfg")
        with open(cfg, "w") as f:
            f.write("global\n  maxconn 2000\n\ndefaults\n  mode http\n  option %s\n  timeout connect 2s\n"
                    "  timeout client 60s\n  timeout server 60s\n  retries 0\n\n"
                    "frontend fe\n  bind 127.0.0.1:%d\n  default_backend be\n\n"
                    "backend be\n  server s0 127.0.0.1:%d\n" % (option, port, backend_port))
        proc = subprocess.Popen(["haproxy", "-db", "-f", cfg], stdout=subprocess.DEVNULL,
                                stderr=open(os.path.join(tmp, "haproxy.err"), "w"))
        if wait_port(port, proc=proc):
            return proc, "http://127.0.0.1:%d/v1" % port
        stop_process(proc)
    return None, None


def mode_nginx_limit_req(a, tmp):
    """nginx limit_req (503 with its HTML page, no X-RateLimit-*) stricter
    than the service: limit429.enforced fails naming nginx and 503, no
    service check fails on the pages, the report names the front."""
    srv = ct.Server(a.server, [], tmp)  # --time-scale 60: 60 a second on the free key
    port = int(srv.url.rsplit(":", 1)[1].split("/")[0])

    def servers(ports):
        return ("upstream app { server 127.0.0.1:%d; keepalive 16; }\n"
                "server { listen 127.0.0.1:%d; location / { limit_req zone=k burst=10 nodelay;\n"
                "  proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"
                % (port, ports[0]))
    ng, ports = start_nginx(tmp, servers, "limit_req_zone $http_authorization zone=k:1m rate=10r/s;")
    if not ng:
        srv.stop()
        return "nginx did not start"
    try:
        summary = os.path.join(tmp, "summary.md")
        rc, out, err, doc, _ = conform(a, tmp, "http://127.0.0.1:%d/v1" % ports[0], ["--summary-md", summary])
    finally:
        stop_process(ng)
        srv.stop()
    check(rc == 1, "nginx limit_req: exit %d, expected 1" % rc)
    if not check(doc is not None, "no JSON report"):
        return None
    msg = messages(doc).get("limit429.enforced", "")
    check("limit429.enforced" in ct.checks_by_status(doc).get("failed", set()) and "503" in msg and "nginx" in msg,
          "nginx limit_req: limit429.enforced does not fail naming nginx's 503: %r" % msg)
    no_service_failure(doc, "nginx limit_req")
    fronts = doc.get("fronts") or {}
    check(fronts.get("who") == "nginx" and fronts.get("replies", 0) > 0 and "503" in fronts.get("statuses", {}),
          "nginx limit_req: report's fronts %r" % fronts)
    check("front: " in out and "nginx in front of the service" in out, "the console names no front")
    with open(summary, encoding="utf-8") as f:
        check("**Front:**" in f.read(), "the Markdown summary names no front")
    return None


def mode_haproxy_down(a, tmp):
    """haproxy in front of nothing (its 503 page for every request): no
    check fails, the run is incomplete (exit 3) and says haproxy answered."""
    dead = free_port()  # nothing listens there
    hp, url = start_haproxy(tmp, dead, "http-server-close")
    if not hp:
        return "haproxy did not start"
    try:
        rc, out, err, doc, _ = conform(a, tmp, url)
    finally:
        stop_process(hp)
    check(rc == 3, "haproxy down: exit %d, expected 3 (incomplete: the service was never reached)" % rc)
    if not check(doc is not None, "no JSON report"):
        return None
    failed = ct.checks_by_status(doc).get("failed", set())
    check(not failed, "haproxy down: checks failed on haproxy's own pages: %s" % sorted(failed))
    fronts = doc.get("fronts") or {}
    check(fronts.get("who") == "haproxy", "haproxy down: report's fronts %r" % fronts)
    check("haproxy in front of the service" in out, "the console names no front")
    return None


def mode_haproxy_server_close(a, tmp):
    """A correct service behind haproxy option http-server-close (a new
    server connection per request) passes whole (issue 27: 2 of 2 failed)."""
    srv = ct.Server(a.server, ["--time-scale", "30"], tmp)
    port = int(srv.url.rsplit(":", 1)[1].split("/")[0])
    hp, url = start_haproxy(tmp, port, "http-server-close")
    if not hp:
        srv.stop()
        return "haproxy did not start"
    try:
        rc, out, err, doc, _ = conform(a, tmp, url)
    finally:
        stop_process(hp)
        srv.stop()
    if not check(doc is not None, "no JSON report"):
        return None
    by = ct.checks_by_status(doc)
    check(rc == 0, "haproxy http-server-close: exit %d, failed %s, untested %s"
          % (rc, sorted(by.get("failed", set())), sorted(ct.untested_ids(doc))))
    check(doc.get("fronts") is None, "haproxy http-server-close: fronts %r" % doc.get("fronts"))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conform", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("case", choices=["nginx_limit_req", "haproxy_down", "haproxy_server_close"])
    a = ap.parse_args()
    if a.case.startswith("haproxy") and not shutil.which("haproxy"):
        print("skipped: needs haproxy")
        return 77
    with tempfile.TemporaryDirectory(prefix="front-") as tmp:
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
