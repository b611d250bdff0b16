#!/usr/bin/env python3
"""field_netns_test.py - the service on another host: a network namespace
made by the test (tests/lib/netns.py), joined to this one by a veth pair
(MTU 1500, an IPv4 /30 of 10.231.0.0/16), so every request crosses a real
non-loopback path to an address of the host's own, and nothing leaves the
machine. On that host run the reference server (4 event loops) and nginx
terminating TLS with a certificate for the host's address, made by a CA the
test makes, keep-alive to the server. From here, over
https://HOST_IP:PORT/v1 with --cacert:

- clean: one full petstore-conform run passes whole (exit 0, nothing
  failed, nothing untested), its report's transport naming TLS and the
  certificate's subject (CN=HOST_IP), and the bytes went over the veth;
- race: the over-admission-race fault (a 100 us check-then-count race) is
  caught in each of 3 fresh default runs (no --race-bursts: the default
  hunt, issue 27; --max-wait 10s as fault_once gives every fault run, room
  for its 3 bursts at 2 s windows): limit429.no-over-admission failed, exit 1;
- load: petstore-load at a constant 100 requests a second for 3 s exits 0,
  every request answered 200 on its epoll engine, its JSON report valid
  against schemas/load-report.schema.json.

usage: field_netns_test.py --conform BIN --server BIN --load BIN [--npm DIR]
Exit 77 (skipped, the reason on stderr) when not root, when `ip netns add`
is refused, or without ip, nginx or openssl.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import conform_test as ct  # noqa: E402 (its Server, run_conform, fault_once and checks: one copy)
import fieldlab  # noqa: E402
import pstest  # noqa: E402
from netns import NetnsHost, NetnsUnavailable  # noqa: E402

SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schemas")
RACE_RUNS = 3
LOAD_RATE, LOAD_SECONDS = 100, 3  # the pro key's 300 a (1 s) window is never reached


def check(cond, what):
    """conform_test's check: its failure list is the one fault_once adds to."""
    return ct.check(cond, what)


class HostService:
    """On host: the reference server bound to its address (4 event loops;
    server_args after the usual ones, the last --time-scale winning) and nginx
    terminating TLS there with ca's certificate. url is nginx's https URL."""

    def __init__(self, host, a, ca, tmp, server_args=()):
        self.server = ct.Server(a.server, ["--bind", host.ip, "--threads", "4"] + list(server_args), tmp,
                                pre=host.exec_prefix)
        self.nginx = None
        try:
            upstream = self.server.url.split("//")[1].split("/")[0]
            if upstream.split(":")[0] != host.ip:
                raise RuntimeError("the server says it listens at %s, not on %s" % (self.server.url, host.ip))
            self.nginx = fieldlab.Nginx(tmp, upstream, ca[1], ca[2], bind=host.ip, pre=host.exec_prefix)
        except BaseException:
            self.stop()
            raise
        self.url = self.nginx.url

    def stop(self):
        if self.nginx:
            self.nginx.stop()
        self.server.stop()


def tx_bytes(dev):
    """Bytes this namespace has sent out of dev (the veth's root end)."""
    with open("/sys/class/net/%s/statistics/tx_bytes" % dev) as f:
        return int(f.read())


def schema_errors(doc, schema_name, npm, path):
    """Validates doc (written at path) against schemas/schema_name: with
    Python's jsonschema when it is installed, else with ajv (pstest, which
    records its own failure and says when it cannot run). Returns the
    jsonschema error messages, [] when valid or when ajv judged."""
    try:
        import jsonschema
    except ImportError:
        pstest.validate_load_report(npm, path, schema_name)
        return []
    with open(os.path.join(SCHEMAS, schema_name)) as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    return ["/%s: %s" % ("/".join(map(str, e.absolute_path)), e.message) for e in validator.iter_errors(doc)][:5]


def clean_run(host, a, ca, tmp):
    """One full run through the host's nginx passes whole, over TLS, over the veth."""
    env = {"PETSTORE_API_KEY": ct.MAIN_KEY, "PETSTORE_LIMIT_KEY": ct.LIMIT_KEY}
    # 6 s windows (--time-scale 10), as runner_field_proxy_clean: through TLS and nginx on a
    # loaded machine the limit key's exhaustion may outlive a 1 s window
    svc = HostService(host, a, ca, tmp, ["--time-scale", "10"])
    try:
        sent_before = tx_bytes(host.root_dev)
        rc, out, err, doc, _ = ct.run_conform(["--base-url", svc.url, "--plan", "pro", "--limit-plan", "free",
                                               "--max-wait", "20s", "--cacert", ca[0]],
                                              a.conform, tmp, env, timeout=170)
        sent = tx_bytes(host.root_dev) - sent_before
    finally:
        svc.stop()
    print("clean run: %d bytes sent over %s" % (sent, host.root_dev), file=sys.stderr)
    # the runner's requests (hundreds, the limit bursts' handshakes among them) left by the veth
    check(sent > 50000, "clean run: only %d bytes left by the veth %s" % (sent, host.root_dev))
    if not check(doc is not None, "clean run: no JSON report (exit %d): %s" % (rc, err[-600:])):
        return
    ct.assert_contract(doc)
    by = ct.checks_by_status(doc)
    check(rc == 0 and doc["verdict"] == "pass" and not by.get("failed") and not ct.untested_ids(doc),
          "clean run on the host: exit %d, verdict %s, failed %s, untested %s"
          % (rc, doc["verdict"], sorted(by.get("failed", [])), sorted(ct.untested_ids(doc))))
    check(doc["target"]["base_url"] == svc.url, "report target %r, expected %s" % (doc["target"]["base_url"], svc.url))
    t = doc.get("transport") or {}
    check((t.get("tls_version") or "").startswith("TLSv1.") and t.get("http_version") == "1.1"
          and "CN=" + host.ip in (t.get("certificate_subject") or "") and t.get("proxy") is None,
          "clean run: transport %r, expected TLS, HTTP/1.1, the subject CN=%s, no proxy" % (t, host.ip))
    problems = schema_errors(doc, "conformance-report.schema.json", a.npm, os.path.join(tmp, "report.json"))
    check(not problems, "clean run: the report is not valid against its schema: %s" % problems)


def race_runs(host, a, ca, tmp):
    """over-admission-race through the host's nginx, caught in each of RACE_RUNS fresh runs."""
    # the default run (its hunt of 3 bursts, issue 27), the server's 2 s windows (FAULT_SERVER_ARGS)
    ct.FAULT_RUNNER_ARGS["over-admission-race"] = ["--verbose"]
    fault = argparse.Namespace(conform=a.conform, server=a.server, name="over-admission-race",
                               expected="limit429.no-over-admission", strict=False, advice=False)

    def via(url):
        ng = fieldlab.Nginx(tmp, url.split("//")[1].split("/")[0], ca[1], ca[2], bind=host.ip,
                            pre=host.exec_prefix)
        return ng.url, ["--cacert", ca[0]], ng.stop

    caught = 0
    for run in range(RACE_RUNS):
        failed_before = len(ct.failures)
        ct.fault_once(fault, tmp, via, pre=host.exec_prefix, server_extra=["--bind", host.ip])
        missed = len(ct.failures) > failed_before
        caught += not missed
        print("over-admission-race on the host, run %d of %d: %s" % (run + 1, RACE_RUNS, "missed" if missed else "caught"),
              file=sys.stderr)
        if missed:
            print("\n".join(fault.bursts_seen), file=sys.stderr)
    print("over-admission-race caught in %d of %d runs on the host" % (caught, RACE_RUNS), file=sys.stderr)


def load_run(host, a, ca, tmp):
    """petstore-load at a constant rate over https to the host: every request answered 200."""
    report = os.path.join(tmp, "load.json")
    svc = HostService(host, a, ca, tmp)
    try:
        t0 = time.monotonic()
        rc, out, err = pstest.run([a.load, "--base-url", svc.url, "--cacert", ca[0], "--api-key", ct.MAIN_KEY,
                                   "--plan", "pro", "--rate", str(LOAD_RATE), "--duration", "%ds" % LOAD_SECONDS,
                                   "--connections", "4", "--quiet", "--json", report], timeout=60)
        print("petstore-load exit %d in %.1f s" % (rc, time.monotonic() - t0), file=sys.stderr)
    finally:
        svc.stop()
    check(rc == 0, "petstore-load over https to the host: exit %d: %s" % (rc, err[-600:]))
    doc = pstest.load_json(report)
    if not doc:
        return
    want = LOAD_RATE * LOAD_SECONDS
    check(doc["parameters"]["base_url"] == svc.url and doc["parameters"]["engine"] == "epoll",
          "load parameters: %s" % doc["parameters"])
    # a run of R a second for D seconds schedules R*D requests, give or take the last tick
    check(abs(doc["scheduled"] - want) <= LOAD_RATE // 10 and doc["answered"] == doc["scheduled"]
          and doc["status"].get("200") == doc["answered"] and doc["failed"] == 0 and doc["timed_out"] == 0,
          "load: scheduled %s (about %d), answered %s, failed %s, timed out %s, status %s"
          % (doc["scheduled"], want, doc["answered"], doc["failed"], doc["timed_out"], doc["status"]))
    check(doc["verdict"] == "pass" and doc["exit_code"] == 0, "load verdict %s, exit_code %s"
          % (doc["verdict"], doc["exit_code"]))
    problems = schema_errors(doc, "load-report.schema.json", a.npm, report)
    check(not problems, "load: the report is not valid against its schema: %s" % problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conform", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--load", required=True)
    ap.add_argument("--npm")
    a = ap.parse_args()
    for tool in ("ip", "openssl"):
        if not shutil.which(tool):
            print("skipped: needs %s" % tool, file=sys.stderr)
            return 77
    if not fieldlab.nginx_binary():
        print("skipped: needs nginx", file=sys.stderr)
        return 77
    # a proxy variable would send the requests through a proxy, perhaps off this machine
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        os.environ.pop(name, None)
    with tempfile.TemporaryDirectory(prefix="field-netns-") as tmp:
        try:
            host = NetnsHost()
        except NetnsUnavailable as e:
            print("skipped: %s" % e, file=sys.stderr)
            return 77
        try:  # the host goes before the folder: nginx and the server write in it
            print("host %s at %s (here %s on %s)" % (host.name, host.ip, host.root_ip, host.root_dev), file=sys.stderr)
            check(host.route_device() == host.root_dev,
                  "the route to %s leaves by %s, not the veth %s" % (host.ip, host.route_device(), host.root_dev))
            check(host.mtu() == (NetnsHost.MTU, NetnsHost.MTU), "veth MTUs %s, expected 1500" % (host.mtu(),))
            ca = fieldlab.make_ca(tmp, cn=host.ip, ip=host.ip)
            for name, step in (("clean", clean_run), ("race", race_runs), ("load", load_run)):
                t0 = time.monotonic()
                step(host, a, ca, tmp)
                print("%s: %.1f s" % (name, time.monotonic() - t0), file=sys.stderr)
        finally:
            host.stop()
    every = ct.failures + pstest.failures
    if every:
        print("%d failure(s)" % len(every), file=sys.stderr)
        return 1
    print("ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
