#!/usr/bin/env python3
"""lg_merge_hostile.py - shard files a broken or hostile pod could leave,
one case per row of issue 21's table, made from two real shard reports
(fixtures/shards/run1-shard*.json, a 2-shard run against the reference
server with --verify-limits). Each is refused with exit 2 and one line
naming the file and the member, or (where the input is legal) merged
correctly; never a crash, a wrapped sum or memory out of proportion to the
data. The ASan+UBSan tree runs it too: a sanitizer's report is an exit code
no case expects.

usage: lg_merge_hostile.py --load L --fixtures DIR CASE
"""
import argparse
import base64
import copy
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import check, exit_status  # noqa: E402

INT64_MAX = 2**63 - 1


def run(argv, timeout=120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, timeout=timeout, env=env)
    return p.returncode, p.stderr.decode("utf-8", "replace"), time.monotonic() - t0


class Case:
    def __init__(self, a, tmp):
        self.a, self.tmp = a, tmp
        self.s1 = os.path.join(a.fixtures, "run1-shard1.json")
        self.s2 = os.path.join(a.fixtures, "run1-shard2.json")
        self.base = json.load(open(self.s2))

    def variant(self, name, change, base=None):
        doc = copy.deepcopy(base or self.base)
        change(doc)
        path = os.path.join(self.tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def merge(self, files, *extra):
        out = os.path.join(self.tmp, "merged.json")
        rc, err, secs = run([self.a.load, "merge", "--verify-limits", "--quiet", "--json", out] + files + list(extra))
        return rc, err, out, secs

    def refused(self, what, change, member):
        """A variant of shard 2 merged with shard 1: exit 2, one line naming the file and member."""
        path = self.variant(what.replace(" ", "_"), change)
        rc, err, _, _ = self.merge([self.s1, path])
        lines = err.splitlines()
        ok = rc == 2 and len(lines) == 1 and os.path.basename(path) in lines[0] and member in lines[0]
        check(ok, "%s: exit %d, stderr %r; expected exit 2 and one line naming %s and %r"
              % (what, rc, err[:400], os.path.basename(path), member))


def sh(doc):
    return doc["shard"]


def hist_with_count(count):
    """An HdrHistogram V2 (compressed) of the run's layout (1 us..1 h, 3 digits) holding
    count values of 1 us: the zigzag LEB128 payload HdrHistogram writes."""
    def zigzag(v):
        z = (v << 1) ^ (v >> 63)
        out = b""
        while True:
            b = z & 0x7F
            z >>= 7
            if z:
                out += bytes([b | 0x80])
            else:
                return out + bytes([b])
    payload = zigzag(0) + zigzag(count)  # index 0 (value 0) empty, index 1 (value 1) count
    inner = struct.pack(">IIIiqqd", 0x1C849313, len(payload), 0, 3, 1, 3600000000, 1.0) + payload
    packed = zlib.compress(inner)
    return base64.b64encode(struct.pack(">II", 0x1C849314, len(packed)) + packed).decode()


def case_negative_counts(c):
    c.refused("negative requests", lambda d: d.update(requests=-1000), "requests: -1000 is negative")
    c.refused("negative answered", lambda d: d.update(answered=-1000), "answered: -1000 is negative")
    c.refused("negative window", lambda d: sh(d)["windows"][0].update(admitted=-5), "admitted: -5 is negative")
    c.refused("negative status", lambda d: d["status"].update({"200": -3}), "status.200: -3 is negative")


def case_near_int64_max(c):
    big = INT64_MAX - 7
    c.refused("huge answered", lambda d: d.update(answered=big, scheduled=big), "is more than")
    c.refused("huge requests", lambda d: d.update(requests=big), "requests: %d is more than" % big)
    c.refused("huge window", lambda d: sh(d)["windows"][0].update(admitted=big), "admitted: %d is more" % big)
    c.refused("huge interval", lambda d: d["intervals"][0].update(requests=big), "requests: %d" % big)
    # a histogram whose count nears INT64_MAX (UBSan: core/histogram.c:192 when added)
    h = hist_with_count(big)
    c.refused("huge histogram", lambda d: sh(d)["histograms"]["all"].update(corrected=h, uncorrected=h),
              "shard.histograms.all: holds %d latencies" % big)
    # two shards each at the largest legal count: the sum still fits, and is exact
    n = 2**53 - 10000

    def top(d):
        d.update(scheduled=d["scheduled"] + n, failed=d["failed"] + n)
        d["errors"]["connect"] += n
    p1 = c.variant("top1", top, base=json.load(open(c.s1)))
    p2 = c.variant("top2", top)
    rc, err, out, _ = c.merge([p1, p2])
    ok = rc == 0 and json.load(open(out)).get("failed") == 2 * n
    check(ok, "two shards of 2^53 failed each: exit %d %r, failed %s" % (
        rc, err[:300], json.load(open(out)).get("failed") if rc == 0 else None))


def case_string_count(c):
    c.refused("string scheduled", lambda d: d.update(scheduled="30"), "scheduled: a string, not a count")
    c.refused("fraction answered", lambda d: d.update(answered=30.5), "answered: '30.5' is not an integer")
    c.refused("string window", lambda d: sh(d)["windows"][0].update(limited="0"), "limited: a string")
    c.refused("bool check", lambda d: sh(d)["keys"][0]["checks"].update(responses=True), "responses: a boolean")


def case_totals_disagree(c):
    def more_answered(d):
        d.update(answered=d["answered"] + 5, scheduled=d["scheduled"] + 5)
        d["operations"]["list"]["requests"] += 5
    c.refused("answered beyond its histogram", more_answered, "shard.histograms.all: holds")
    c.refused("interval beyond its histogram",
              lambda d: d["intervals"][0].update(requests=d["intervals"][0]["requests"] + 1),
              "shard.interval_histograms[0]: holds")
    c.refused("window beyond its key's responses",
              lambda d: sh(d)["windows"][0].update(admitted=sh(d)["windows"][0]["admitted"] + 50),
              "shard.windows[0]")
    c.refused("failed not its errors", lambda d: d.update(failed=d["failed"] + 1, scheduled=d["scheduled"] + 1),
              "errors: connect")
    c.refused("status beyond answered", lambda d: d["status"].update({"500": d["answered"]}), "status: counts")
    c.refused("a key id twice", lambda d: sh(d)["keys"].append(dict(sh(d)["keys"][0])), "is listed twice")
    c.refused("histogram of another layout",
              lambda d: sh(d)["histograms"]["all"].update(corrected=hist_with_count(1)[:0] + _other_layout()),
              "range 1..1000 at 2 significant figures")


def _other_layout():
    payload = b"\x02\x02"
    inner = struct.pack(">IIIiqqd", 0x1C849313, len(payload), 0, 2, 1, 1000, 1.0) + payload
    packed = zlib.compress(inner)
    return base64.b64encode(struct.pack(">II", 0x1C849314, len(packed)) + packed).decode()


def case_terminal_text(c):
    """Issue 22: text from shard files reached the terminal raw (clear screen, OSC titles and
    links, CR). A run id is refused unless printable; a failed shard's verdict and reason are
    shown escaped."""
    esc = "\x1b]0;pwned\x07\x1b[2J\r\u009b31m"
    c.refused("run id with escapes", lambda d: sh(d).update(run_id="r" + esc), "shard.run_id: not 1-128 printable")
    path = c.variant("failed_with_escapes", lambda d: d.update(exit_code=3, verdict="unreachable" + esc,
                                                                aborted="no connection" + esc))
    rc, err, _, _ = c.merge([c.s1, path])
    check(rc == 3 and "\x1b" not in err and "\r" not in err and "\u009b" not in err and "\a" not in err,
          "a failed shard's escapes: exit %d, stderr %r" % (rc, err))
    check("unreachable\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\x9b31m" in err, "escapes not shown as \\xHH: %r" % err)


def peak_rss_kb_of(argv):
    """Runs argv in a child and returns (rc, stderr, its peak RSS in KB)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(w, 2)
        os.execv(argv[0], argv)
    os.close(w)
    err = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        err += chunk
    _, status, usage = os.wait4(pid, 0)
    os.close(r)
    return os.waitstatus_to_exitcode(status), err.decode("utf-8", "replace"), usage.ru_maxrss


def case_starts_far_apart(c):
    # 9.9e6 s apart: not one run (the merge took 1.08 GB for the span before)
    c.refused("starts 9.9e6 s apart", lambda d: sh(d).update(start_unix_s=sh(d)["start_unix_s"] + 9.9e6),
              "not one run")
    # an interval far beyond its shard's run (2 s) is not a time of the run
    c.refused("interval beyond the run", lambda d: d["intervals"][0].update(t_s=1e6),
              "intervals[0].t_s: 1000000.0 is outside")
    # 3000 s apart (shards started by hand): legal, merged, memory follows the rows, not the span
    path = c.variant("starts_3000_apart", lambda d: sh(d).update(start_unix_s=sh(d)["start_unix_s"] + 3000))
    out = os.path.join(c.tmp, "m3000.json")
    rc, err, rss = peak_rss_kb_of([c.a.load, "merge", "--quiet", "--json", out, c.s1, path])
    check(rc == 0, "starts 3000 s apart: exit %d %r" % (rc, err[:300]))
    if rc == 0:
        doc = json.load(open(out))
        check(doc["duration_s"] > 3000 and len(doc["intervals"]) >= 2,
              "starts 3000 s apart: duration %s, %d intervals" % (doc["duration_s"], len(doc["intervals"])))
    check(rss < 200 * 1024, "starts 3000 s apart: peak RSS %d KB" % rss)


def case_wide_array(c):
    wide = [0] * 4000000  # 8 MB of JSON
    path = c.variant("wide_elsewhere", lambda d: sh(d).update(extra=wide))
    rc, err, rss = peak_rss_kb_of([c.a.load, "merge", "--quiet", c.s1, path])
    check(rc == 0, "an 8 MB array under a member the merge does not read: exit %d %r" % (rc, err[:300]))
    check(rss < 200 * 1024, "an 8 MB array elsewhere: peak RSS %d KB (538 MB before)" % rss)
    path = c.variant("wide_keys", lambda d: sh(d).update(keys=wide))
    rc, err, rss = peak_rss_kb_of([c.a.load, "merge", "--quiet", c.s1, path])
    check(rc == 2 and "wide_keys.json" in err and "a list of the\nwrong kind".replace("\n", " ") in err,
          "an 8 MB array of numbers as shard.keys: exit %d %r" % (rc, err[:300]))
    check(rss < 200 * 1024, "an 8 MB array as shard.keys: peak RSS %d KB" % rss)


def case_many_keys(c):
    """80,000 keys over two shards (11.6 s before: a scan per key) merge in linear time."""
    def with_keys(base, tag):
        def change(d):
            keys = sh(d)["keys"]
            proto = {k: v for k, v in keys[0].items() if k != "checks"}
            for i in range(40000 - len(keys)):
                keys.append(dict(proto, id="%s%013x" % (tag, i), key="sy***%02d" % (i % 100)))
        return change
    p1 = c.variant("keys1", with_keys(None, "a00"), base=json.load(open(c.s1)))
    p2 = c.variant("keys2", with_keys(None, "b00"))
    out = os.path.join(c.tmp, "mkeys.json")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc, err, _ = run([c.a.load, "merge", "--verify-limits", "--quiet", "--json", out, p1, p2])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU time: a busy machine stretches wall time
    secs = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    check(rc == 0, "80,000 keys: exit %d %r" % (rc, err[:300]))
    if rc == 0:
        check(json.load(open(out))["parameters"]["keys"] == 80000, "80,000 keys: not all in the merged report")
    print("80,000 keys merged in %.2f s of CPU" % secs)
    check(secs < 8, "80,000 keys took %.1f s of CPU to merge (linear: ~0.5 s; a scan per key: 11.6 s)" % secs)


def with_groups(names=("default", "g1")):
    """Gives a shard report key groups as a keys file naming them would:
    every key in the last group, which holds all its counts."""
    def change(d):
        last = len(names) - 1
        sh(d)["groups"] = [dict(group=n, sent=0, answered=0, admitted=0, limited=0) for n in names]
        sh(d)["groups"][last].update(sent=d["scheduled"], answered=d["answered"], admitted=d["answered"])
        for k in sh(d)["keys"]:
            k["group"] = last
    return change


def case_groups(c):
    """Key groups (shard.groups, shard.keys[].group): legal ones merge into
    groups[]; a bad index, type, name or count, a huge list, or shards that
    name other groups are refused naming the member."""
    c.base = json.load(open(c.variant("g2", with_groups())))
    g1 = c.variant("g1", with_groups(), base=json.load(open(c.s1)))
    rc, err, out, _ = c.merge([g1, os.path.join(c.tmp, "g2.json")])
    check(rc == 0, "shards with groups: exit %d %r" % (rc, err[:300]))
    if rc == 0:
        doc, s1, s2 = json.load(open(out)), json.load(open(c.s1)), c.base
        groups = doc.get("groups") or []
        check(len(groups) == 1 and groups[0]["group"] == "g1" and groups[0]["sent"] == s1["scheduled"] + s2["scheduled"]
              and groups[0]["admitted"] == s1["answered"] + s2["answered"] and groups[0]["keys"] == doc["parameters"]["keys"],
              "shards with groups merged into %r" % groups)
    s1_saved = c.s1
    c.s1 = g1
    c.refused("group index out of range", lambda d: sh(d)["keys"][0].update(group=7), "shard.keys[0].group: 7 is more than 1")
    c.refused("negative group index", lambda d: sh(d)["keys"][0].update(group=-1), "shard.keys[0].group: -1 is negative")
    c.refused("string group index", lambda d: sh(d)["keys"][0].update(group="1"), "shard.keys[0].group: a string")
    c.refused("groups not a list", lambda d: sh(d).update(groups={"g1": 1}), "shard.groups: not an array")
    c.refused("group not an object", lambda d: sh(d).update(groups=[1, 2]), "shard.groups")
    c.refused("empty groups", lambda d: sh(d).update(groups=[]), "shard.groups: 0 key groups")
    c.refused("huge groups", lambda d: sh(d)["groups"].extend(
        dict(group="x%d" % i, sent=0, answered=0, admitted=0, limited=0) for i in range(70000)),
        "shard.groups: 70002 key groups, not 1-65536")
    c.refused("group name not a name", lambda d: sh(d)["groups"][1].update(group="g 1\u001b"), "shard.groups[1]: its name")
    c.refused("group name twice", lambda d: sh(d)["groups"][0].update(group="g1"), "key group 'g1' is listed twice")
    c.refused("group count a string", lambda d: sh(d)["groups"][1].update(sent="5"), "shard.groups[1].sent: a string")
    c.refused("group count beyond the shard's",
              lambda d: sh(d)["groups"][1].update(answered=d["answered"] + 1), "shard.groups[1].answered")
    c.refused("group admitted beyond its answers",
              lambda d: sh(d)["groups"][1].update(limited=1), "shard.groups[1]: admitted")
    c.refused("other group names", lambda d: sh(d)["groups"][1].update(group="g2"),
              "shard.groups[1]: key group 'g2'")
    c.refused("other group count", lambda d: sh(d)["groups"].append(
        dict(group="g3", sent=0, answered=0, admitted=0, limited=0)), "shard.groups: 3 key groups")
    c.refused("key group without groups", lambda d: sh(d).pop("groups"), "names a key group, the shard has none")
    c.s1 = s1_saved


def case_summed_overflow(c):
    """Counts that are each legal (at most 2^53) but whose sum over a long array
    passes INT64_MAX (issue 30): refused naming the array, never wrapped (a
    wrapped sum is negative and passed the check; UBSan ends the run)."""
    n = 2**53

    def huge(d):
        d.update(answered=n, scheduled=n, requests=n, skipped_retry_after=0)
        d["status"] = {"200": n}
        d["operations"]["list"]["requests"] = n
        d["operations"]["create"]["requests"] = 0
        h, empty = hist_with_count(n), ""
        hs = sh(d)["histograms"]
        hs["all"] = {"corrected": h, "uncorrected": h}
        hs["operations"]["list"] = {"corrected": h, "uncorrected": h}
        hs["operations"]["create"] = {"corrected": empty, "uncorrected": empty}
        for cls in hs["status_classes"]:
            hs["status_classes"][cls] = {"corrected": h if cls == "2xx" else empty,
                                         "uncorrected": h if cls == "2xx" else empty}
        hs["plans"] = {}
        d["plans"] = [{"plan": d["plans"][0]["plan"], "admitted": n, "limited": 0}] * 1100
    c.refused("plans summing past INT64_MAX", huge, "plans: count")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("case")
    a = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with tempfile.TemporaryDirectory(prefix="lg-merge-hostile-") as tmp:
        globals()["case_" + a.case](Case(a, tmp))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
