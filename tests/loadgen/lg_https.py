#!/usr/bin/env python3
"""lg_https.py - petstore-load over https on its epoll engine with TLS.

nginx terminates TLS (a CA made by the test) in front of two reference
servers, a clean one and one admitting Limit+1 (off-by-one-admission):
- a mixed run with --cacert is answered in full on the epoll engine, its
  accounting exact, its limits verified; nginx closes connections after 25
  requests and the reconnections resume their TLS sessions (nginx's
  $ssl_session_reused);
- --burst --verify-limits over https passes the clean limiter and catches
  the faulty one (exit 1, 11 admitted of 10), as over http;
- certificate verification is on by default: no --cacert, the wrong CA or
  a certificate for another name is exit 3 with a message saying what to
  do; --insecure runs;
- a server asking for a client certificate (nginx ssl_verify_client on) is
  answered with --cert/--key on both engines, not without; a key that is
  not the certificate's or an unreadable file is exit 2;
- https:// at a plain port says "use http://";
- --engine curl still runs https, and a proxy variable that applies makes
  --engine auto pick it (NO_PROXY exempting the host keeps epoll).

usage: lg_https.py --load BIN --server BIN
Exit 77 (skipped) without nginx or openssl.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import (check, exit_status, free_port, make_ca, make_cert, nginx_binary,  # noqa: E402
                    start_nginx, start_server, stop_process)

BIG = "big-key-0001"
LIMITED = "lim-key-0001"
PLAN = "enterprise:10:100000"  # 10 a minute; --time-scale 30: 2 s windows


def run_load(a, tmp, name, args, env_extra=None, timeout=90):
    """petstore-load with args; returns (exit code, JSON doc or None, stderr)."""
    out = os.path.join(tmp, name + ".json")
    if os.path.exists(out):
        os.unlink(out)
    env = dict(os.environ)
    for k in ("https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        env.pop(k, None)
    env.update(env_extra or {})
    try:
        p = subprocess.run([a.load, "--quiet", "--json", out] + args, env=env, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        check(False, "%s: petstore-load did not finish within %d s" % (name, timeout))
        return -1, None, ""
    doc = None
    try:
        with open(out) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        pass
    print("%s: exit %d%s" % (name, p.returncode, (": " + p.stderr.strip()[-300:]) if p.stderr.strip() else ""),
          file=sys.stderr)
    return p.returncode, doc, p.stderr


def accounting_exact(doc):
    return (doc.get("accounting_exact") is True and
            doc["scheduled"] == doc["answered"] + doc["failed"] + doc["timed_out"])


def sessions_reused(log):
    """(connections resumed, connections with a full handshake) in nginx's
    log of '$connection $ssl_session_reused' lines."""
    seen = {}
    try:
        with open(log) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    seen[parts[0]] = parts[1] == "r"
    except OSError:
        pass
    return sum(seen.values()), sum(1 for v in seen.values() if not v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load", required=True)
    ap.add_argument("--server", required=True)
    a = ap.parse_args()
    if not shutil.which("openssl") or not nginx_binary():
        print("skipped: needs openssl and nginx", file=sys.stderr)
        return 77
    tmp = tempfile.mkdtemp(prefix="lg-https-")
    os.chmod(tmp, 0o755)
    procs = []
    try:
        ca, other = make_ca(tmp, "ca"), make_ca(tmp, "other-ca")
        good = ca and make_cert(tmp, ca, "server")
        wrong_name = ca and make_cert(tmp, ca, "elsewhere", san="DNS:elsewhere.test")
        client = ca and make_cert(tmp, ca, "client", san="DNS:petstore-client.test")
        stranger = ca and make_cert(tmp, ca, "stranger", san="DNS:stranger.test")
        if not check(ca and other and good and wrong_name and client and stranger,
                     "openssl made the CA and certificates"):
            return exit_status()
        keys = ["--key", BIG + ":enterprise:100000000:1000000000", "--key", LIMITED + ":" + PLAN]
        clean, clean_url = start_server([a.server, "--port", "0", "--no-seed", "--time-scale", "30"] + keys)
        procs.append(clean)
        faulty, faulty_url = start_server([a.server, "--port", "0", "--no-seed", "--time-scale", "30",
                                           "--fault", "off-by-one-admission"] + keys)
        procs.append(faulty)
        if not check(clean_url and faulty_url, "the reference servers printed their URLs"):
            return exit_status()
        hostport = [u.split("//", 1)[1].split("/", 1)[0] for u in (clean_url, faulty_url)]
        reuse_log = {v: os.path.join(tmp, "reuse-%s.log" % v) for v in ("TLSv1.2", "TLSv1.3")}

        def servers(ports):
            proxy = 'location / { proxy_pass http://%s; proxy_http_version 1.1; proxy_set_header Connection ""; }'
            tls = "listen 127.0.0.1:%d ssl; ssl_certificate %s; ssl_certificate_key %s;"
            # the clean server over TLS 1.2 and over TLS 1.3 (tickets used once); connections
            # closed after 25 requests, so they are reopened
            resumed = "server { %s ssl_protocols %s; keepalive_requests 25; access_log %s reuse; %s }"
            return "\n".join([
                resumed % (tls % (ports[0], good[0], good[1]), "TLSv1.2", reuse_log["TLSv1.2"], proxy % hostport[0]),
                "server { %s %s }" % (tls % (ports[1], good[0], good[1]), proxy % hostport[1]),
                "server { %s %s }" % (tls % (ports[2], wrong_name[0], wrong_name[1]), proxy % hostport[0]),
                resumed % (tls % (ports[3], good[0], good[1]), "TLSv1.3", reuse_log["TLSv1.3"], proxy % hostport[0]),
                # mutual TLS: a client certificate signed by the CA is required
                "server { %s ssl_client_certificate %s; ssl_verify_client on; %s }"
                % (tls % (ports[4], good[0], good[1]), ca[0], proxy % hostport[0]),
            ])
        servers.nports = 5
        ng, ports = start_nginx(tmp, servers, "log_format reuse '$connection $ssl_session_reused';")
        if not check(ng is not None, "nginx terminating TLS started"):
            return exit_status()
        procs.append(ng)
        base = ["https://127.0.0.1:%d/v1" % p for p in ports]

        # 1. a mixed run, verified against the CA, on the epoll engine
        rc, doc, _ = run_load(a, tmp, "mixed", [
            "--base-url", base[0], "--cacert", ca[0], "--api-key", BIG, "--plan", "enterprise:100000000:1000000000",
            "--threads", "2", "--connections", "8", "--requests", "400", "--mix", "list=3,create=1",
            "--verify-limits"])
        # 400 requests never reach a limit of 100,000,000: the limits were
        # verified but not exercised, which is no pass (exit 3)
        check(rc == 3, "mixed https run: exit 3 (limits not exercised), got %d" % rc)
        if check(doc is not None, "mixed https run wrote its JSON"):
            check(doc["parameters"]["engine"] == "epoll", "https runs on the epoll engine: %s" %
                  doc["parameters"]["engine"])
            st = doc.get("status", {})
            check(st.get("200", 0) + st.get("201", 0) == 400, "400 answered 200/201: %s" % st)
            check(st.get("201", 0) > 0, "creates were sent and answered 201: %s" % st)
            check(accounting_exact(doc), "accounting exact over https")
            check(doc["limits"]["verdict"] == "not_exercised" and doc["verdict"] == "not-exercised",
                  "limits: %s, verdict %s" % (doc["limits"]["verdict"], doc["verdict"]))
        rc, doc, _ = run_load(a, tmp, "tls13", [
            "--base-url", base[3], "--cacert", ca[0], "--api-key", BIG, "--threads", "2", "--connections", "8",
            "--requests", "400"])
        check(rc == 0 and doc and doc["status"].get("200") == 400, "400 answered over TLS 1.3: exit %d" % rc)
        for version, log in sorted(reuse_log.items()):
            resumed, full = sessions_reused(log)
            print("  nginx %s: %d connections resumed their TLS session, %d full handshakes" %
                  (version, resumed, full), file=sys.stderr)
            # 400 requests at 25 a connection: 16 or more connections (the probe sends none);
            # only the threads' first 8 may lack a ticket, every reconnection resumes (a
            # connection closed without a shutdown, or a TLS 1.3 ticket used twice, did not)
            check(full <= 8 and resumed >= 4, "%s: reconnections resume TLS sessions: %d resumed, %d full" %
                  (version, resumed, full))

        # 2. --burst --verify-limits over https: the clean limiter passes, Limit+1 is caught
        burst = ["--cacert", ca[0], "--api-key", LIMITED, "--plan", PLAN, "--threads", "2",
                 "--connections", "32", "--duration", "1s", "--burst", "--verify-limits"]
        rc, doc, _ = run_load(a, tmp, "burst-clean", ["--base-url", base[0]] + burst)
        check(rc == 0, "--burst over https, clean limiter: exit 0, got %d" % rc)
        if doc:
            check(doc["limits"]["verdict"] == "pass", "clean burst verdict %s" % doc["limits"]["verdict"])
            check(doc.get("status", {}).get("429", 0) > 0, "the burst reached the limit (429s)")
        rc, doc, _ = run_load(a, tmp, "burst-faulty", ["--base-url", base[1]] + burst)
        check(rc == 1, "--burst over https, off-by-one limiter: exit 1, got %d" % rc)
        if doc:
            v = doc["limits"].get("violations", [])
            check(v and v[0]["kind"] == "over_admission" and v[0]["admitted"] == 11 and v[0]["limit"] == 10,
                  "over_admission 11 of 10 over https: %s" % (v[:1],))

        # 3. verification on by default, clear refusals
        short = ["--api-key", BIG, "--requests", "20", "--timeout", "20s"]
        for name, args, want in [
                ("system-cas", ["--base-url", base[0]], "--cacert"),
                ("wrong-ca", ["--base-url", base[0], "--cacert", other[0]], "--cacert"),
                ("wrong-name", ["--base-url", base[2], "--cacert", ca[0]], "another name")]:
            rc, doc, err = run_load(a, tmp, name, args + short)
            check(rc == 3, "%s: exit 3, got %d" % (name, rc))
            check("certificate did not verify" in err and want in err,
                  "%s: the message names the certificate and %r: %r" % (name, want, err[-300:]))
        rc, doc, _ = run_load(a, tmp, "insecure", ["--base-url", base[2], "--insecure"] + short)
        check(rc == 0 and doc and doc["status"].get("200") == 20, "--insecure: exit %d" % rc)

        # 3b. client certificates (--cert/--key), on both engines; bad files are exit 2
        for engine in ("epoll", "curl"):
            rc, doc, _ = run_load(a, tmp, "mtls-" + engine, ["--base-url", base[4], "--cacert", ca[0], "--cert",
                                                             client[0], "--key", client[1], "--engine", engine] + short)
            check(rc == 0 and doc and doc["status"].get("200") == 20,
                  "mutual TLS with --cert on %s: exit %d, %s" % (engine, rc, doc and doc["status"]))
            rc, doc, err = run_load(a, tmp, "mtls-none-" + engine, ["--base-url", base[4], "--cacert", ca[0],
                                                                    "--engine", engine] + short)
            check(not (doc and doc["status"].get("200")), "mutual TLS without --cert on %s: answered 200" % engine)
            # as the runner says it: the server asked for a certificate, give one with --cert
            check(rc == 3 and "client certificate" in err and "--cert" in err,
                  "mutual TLS without --cert on %s: exit %d, no clear message: %r" % (engine, rc, err[-400:]))
        for name, args, want in [
                ("mismatched", ["--base-url", base[4], "--cert", client[0], "--key", stranger[1]],
                 "is not the private key"),
                ("unreadable", ["--base-url", base[4], "--cert", os.path.join(tmp, "none.pem")], "cannot read"),
                ("plain-target", ["--base-url", clean_url, "--cert", client[0]], "https:// targets only")]:
            rc, doc, err = run_load(a, tmp, name, args + short)
            check(rc == 2 and want in err, "%s: exit %d (want 2), %r" % (name, rc, err[-300:]))
            check("PRIVATE KEY" not in err, "%s: key material in the message" % name)

        # 4. https:// at a plain port
        plain = clean_url.replace("http://", "https://")
        rc, doc, err = run_load(a, tmp, "plain-port", ["--base-url", plain, "--insecure"] + short)
        check(rc == 3 and "answered in plain HTTP: use http://" in err, "https at a plain port: exit %d, %r" %
              (rc, err[-200:]))

        # 5. the curl engine: asked for, or picked for a proxy that applies
        rc, doc, _ = run_load(a, tmp, "curl", ["--base-url", base[0], "--cacert", ca[0], "--engine", "curl"] + short)
        check(rc == 0 and doc and doc["parameters"]["engine"] == "curl" and doc["status"].get("200") == 20,
              "--engine curl over https: exit %d" % rc)
        dead_proxy = "http://127.0.0.1:%d" % free_port()
        rc, doc, _ = run_load(a, tmp, "proxied", ["--base-url", base[0], "--cacert", ca[0]] + short,
                              {"https_proxy": dead_proxy})
        check(doc is not None and doc["parameters"]["engine"] == "curl",
              "https_proxy set: --engine auto picks curl (%s)" % (doc or {}).get("parameters", {}).get("engine"))
        check(rc == 3, "through a proxy that is down: exit 3, got %d" % rc)
        rc, doc, _ = run_load(a, tmp, "no-proxy", ["--base-url", base[0], "--cacert", ca[0]] + short,
                              {"https_proxy": dead_proxy, "NO_PROXY": "localhost,127.0.0.1"})
        check(rc == 0 and doc and doc["parameters"]["engine"] == "epoll",
              "NO_PROXY covering the host keeps the epoll engine: exit %d" % rc)
    finally:
        for p in reversed(procs):
            stop_process(p)
        shutil.rmtree(tmp, ignore_errors=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
