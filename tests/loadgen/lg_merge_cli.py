#!/usr/bin/env python3
"""lg_merge_cli.py - `petstore-load merge` on the command line: usage errors
in the one style of the three programs (core/cli.h: "petstore-load merge:
--flag: what is wrong", then "see 'petstore-load merge --help'", exit 2),
-h/--help on stdout, and every bad set of shard reports a one-line error
with the documented exit code (loadgen/merge.h), never a crash: reports of
two real shards (run against the reference server) merged, then given
twice, one missing, of another run, unreadable, truncated, not a shard's,
and with a damaged "shard" member (histogram, index, intervals, windows).
Runs in the ASan and TSan trees too (label tsan), where a sanitizer's abort
is an exit code no case expects.

usage: lg_merge_cli.py --load L --server S
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import check, exit_status, failures, start_server, stop_process  # noqa: E402


def run(argv, timeout=60):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_") and k != "JOB_COMPLETION_INDEX"}
    p = subprocess.run(argv, capture_output=True, timeout=timeout, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def usage_errors(load):
    see = "see 'petstore-load merge --help'"
    cases = [
        (["--bogus", "a.json"], "--bogus: unknown flag"),
        (["-x", "a.json"], "-x: unknown flag"),
        (["a.json", "--json"], "--json: needs a value"),
        (["a.json", "--json="], "--json: empty file name"),
        (["a.json", "--html", "a.html", "--html", "b.html"], "--html: given twice"),
        (["a.json", "--verify-limits=yes"], "--verify-limits: takes no value"),
        (["a.json", "--h"], "--h: ambiguous (--hdr, --hdr-log, --html, --help)"),
        (["a.json", "--threshold", "p99"], "--threshold: "),
        ([], "no shard report given"),
    ]
    for args, want in cases:
        rc, out, err = run([load, "merge"] + args)
        lines = err.splitlines()
        what = "merge " + " ".join(args)
        check(rc == 2, "%s: exit %d, expected 2" % (what, rc))
        check(out == "", "%s: wrote to stdout: %r" % (what, out[:200]))
        check(len(lines) == 2 and lines[0].startswith("petstore-load merge: " + want) and lines[1] == see,
              "%s: stderr %r, expected 'petstore-load merge: %s...' then %r" % (what, err[:300], want, see))
    for flag in ("-h", "--help", "--he"):
        rc, out, err = run([load, "merge", flag])
        check(rc == 0 and out.startswith("usage: petstore-load merge SHARD.json...") and err == "",
              "merge %s: exit %d, stdout %r, stderr %r" % (flag, rc, out[:80], err[:200]))


def bad_sets(load, server, tmp):
    srv, url = start_server([server, "--port", "0", "--no-seed", "--key", "merge-cli-k3y:pro", "--threads", "2"],
                            stderr=subprocess.DEVNULL)
    if not url:
        stop_process(srv)
        sys.exit("FAIL: the server printed no base URL")
    try:
        shards = []
        for i in (1, 2):
            path = os.path.join(tmp, "s%d.json" % i)
            rc, _, err = run([load, "--base-url", url, "--api-key", "merge-cli-k3y", "--plan", "pro", "--shard",
                              "%d/2" % i, "--connections", "2", "--requests", "40", "--verify-limits", "--quiet",
                              "--json", path])
            check(rc == 0, "shard %d/2 exited %d: %s" % (i, rc, err[:300]))
            shards.append(path)
        plain = os.path.join(tmp, "plain.json")
        rc, _, err = run([load, "--base-url", url, "--api-key", "merge-cli-k3y", "--connections", "1",
                          "--requests", "5", "--quiet", "--json", plain])
        check(rc == 0, "the unsharded run exited %d: %s" % (rc, err[:300]))
    finally:
        stop_process(srv)
    if failures:
        return
    s1, s2 = shards
    merged = os.path.join(tmp, "merged.json")
    rc, _, err = run([load, "merge", s1, s2, "--verify-limits", "--quiet", "--json", merged])
    check(rc == 0, "merge of 2 real shards: exit %d: %s" % (rc, err[:300]))
    if rc == 0:
        doc = json.load(open(merged))
        check(doc.get("requests") == 40 and doc.get("merged", {}).get("of") == 2,
              "the merge holds %s requests of 40, merged %s" % (doc.get("requests"), doc.get("merged")))
    base = json.load(open(s2))

    def variant(name, change):
        doc = copy.deepcopy(base)
        change(doc)
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def sh(doc):
        return doc["shard"]

    truncated = os.path.join(tmp, "truncated.json")
    with open(s2) as f, open(truncated, "w") as g:
        text = f.read()
        g.write(text[: len(text) // 2])
    cases = [
        ("given twice", [s1, s2, s1], 2, "given twice"),
        ("one missing", [s1], 3, "missing (shard 2)"),
        ("unreadable", [s1, os.path.join(tmp, "nonexistent.json")], 2, "cannot read"),
        ("truncated", [s1, truncated], 2, "truncated.json"),
        ("not a shard's", [s1, plain], 2, "is not a shard's report"),
        ("another run", [s1, variant("other-run", lambda d: sh(d).update(run_id="another-run"))], 2,
         "shards of different runs"),
        ("another count", [s1, variant("of3", lambda d: sh(d).update(of=3))], 2, "shards of different runs"),
        ("index 0", [s1, variant("index0", lambda d: sh(d).update(index=0))], 2, "incomplete or damaged"),
        ("no histograms", [s1, variant("nohist", lambda d: sh(d).pop("histograms"))], 2, "incomplete or damaged"),
        ("bad histogram", [s1, variant("badhist", lambda d: sh(d)["histograms"]["all"].update(
            corrected="HISTFAAAAnotahistogram"))], 2, "badhist.json"),
        ("histogram not a string", [s1, variant("numhist", lambda d: sh(d)["histograms"]["all"].update(
            corrected=7))], 2, "numhist.json"),
        ("intervals mismatch", [s1, variant("rows", lambda d: sh(d)["interval_histograms"].append(""))], 2,
         "interval histograms"),
        ("bad interval t_s", [s1, variant("ts", lambda d: d["intervals"][0].update(t_s=-1e300))], 2,
         "intervals[0].t_s: -1e+300 is outside"),
        ("window of no key", [s1, variant("win", lambda d: sh(d)["windows"][0].update(key=99))], 2,
         "names no key"),
        ("without --verify-limits", [s1, variant("nowin", lambda d: sh(d).update(windows=None))], 2,
         "was run without --verify-limits"),
        ("a failed shard", [s1, variant("failed", lambda d: d.update(exit_code=3, verdict="unreachable",
                                                                     aborted="no connection"))], 3,
         "failed: unreachable: no connection"),
    ]
    for what, files, want_rc, want in cases:
        rc, out, err = run([load, "merge", "--verify-limits"] + files + ["--json", os.path.join(tmp, "x.json")])
        lines = err.splitlines()
        check(rc == want_rc, "merge, %s: exit %d, expected %d (%s)" % (what, rc, want_rc, err[:300]))
        check(len(lines) == 1 and lines[0].startswith("petstore-load merge: ") and want in lines[0],
              "merge, %s: stderr %r, expected one line holding %r" % (what, err[:400], want))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load", required=True)
    ap.add_argument("--server", required=True)
    a = ap.parse_args()
    usage_errors(a.load)
    with tempfile.TemporaryDirectory(prefix="lg-merge-cli-") as tmp:
        bad_sets(a.load, a.server, tmp)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
