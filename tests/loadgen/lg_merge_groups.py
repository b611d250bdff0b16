#!/usr/bin/env python3
"""lg_merge_groups.py - key groups survive a sharded run: a keys file whose
keys name two groups (group=alpha, group=beta; each shard drives a key of
each), two shards run together against the reference server with
--verify-limits, merged. The merged report's groups[] is, per group, the sum
of the shards' own single-run groups[] figures (keys, sent, answered,
admitted, limited, windows filled, refusals; rates over the same measured
time), with and without --warmup, and validates against schemas/merged-load-report.schema.json (ajv,
when node and tools/npm are there). Shards without groups (an older
version's) still merge, with no groups[]; a set mixing the two is exit 2.

usage: lg_merge_groups.py --load L --server S [--npm DIR]
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import check, exit_status, failures, start_server, stop_process, validate_load_report  # noqa: E402

# file order: key k goes to shard k % 2, so each shard drives one key of each
# group; the free key (60 a minute) is sent more than its minute allows
KEYS = [("grp-alpha-key-1", "free", "alpha"), ("grp-beta-key-01", "pro", "beta"),
        ("grp-alpha-key-2", "pro", "alpha"), ("grp-beta-key-02", "pro", "beta")]
COUNTS = ("keys", "sent", "admitted", "limited", "windows_filled", "refused_correct", "refused_early")
RATES = ("offered_rps", "achieved_rps", "admitted_rps")


def run(argv, timeout=90):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_") and k != "JOB_COMPLETION_INDEX"}
    p = subprocess.run(argv, capture_output=True, timeout=timeout, env=env)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def run_shards(load, server, tmp, extra=()):
    """The two shards, started together (extra: more flags for both); their
    report paths."""
    args = [server, "--port", "0", "--no-seed", "--threads", "2"]
    for key, plan, _ in KEYS:
        args += ["--key", "%s:%s" % (key, plan)]
    srv, url = start_server(args, stderr=subprocess.DEVNULL)
    if not url:
        stop_process(srv)
        sys.exit("FAIL: the server printed no base URL")
    keys = os.path.join(tmp, "keys.txt")
    with open(keys, "w") as f:
        for key, plan, group in KEYS:
            f.write("%s %s group=%s\n" % (key, plan, group))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_") and k != "JOB_COMPLETION_INDEX"}
    paths, procs = [], []
    try:
        for i in (1, 2):
            path = os.path.join(tmp, "s%d%s.json" % (i, "-warm" if extra else ""))
            paths.append(path)
            procs.append(subprocess.Popen(
                [load, "--base-url", url, "--keys", keys, "--shard", "%d/2" % i, "--run-id", "groups-test",
                 "--connections", "4", "--threads", "2", "--duration", "2", "--rate", "200",
                 "--verify-limits", "--quiet", "--json", path] + list(extra),
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env))
        for i, p in enumerate(procs, 1):
            _, err = p.communicate(timeout=90)
            check(p.returncode == 0, "shard %d/2 exited %d: %s" % (i, p.returncode, err.decode()[:300]))
    finally:
        stop_process(srv)
    return paths


def by_group(doc):
    return {g["group"]: g for g in doc.get("groups") or []}


def sums_match(shards, merged):
    """Per group, the merged figures against the sums of the shards' own."""
    want = {}
    answered = {}
    for s in shards:
        for name, g in by_group(s).items():
            w = want.setdefault(name, {k: 0 for k in COUNTS + RATES})
            w.setdefault("plans", set()).update(g["plans"])
            for k in COUNTS + RATES:
                w[k] += g.get(k, 0)
        for g in s["shard"].get("groups", []):
            answered[g["group"]] = answered.get(g["group"], 0) + g["answered"]
    got = by_group(merged)
    check(sorted(got) == ["alpha", "beta"], "merged groups %s, expected alpha and beta" % sorted(got))
    check(sorted(want) == ["alpha", "beta"], "the shards' own groups %s, expected alpha and beta" % sorted(want))
    measured = merged["parameters"]["duration_s"]
    for name in sorted(want):
        g, w = got.get(name, {}), want[name]
        for k in COUNTS:
            check(g.get(k) == w[k], "group %s: merged %s %s, the shards' sum %s" % (name, k, g.get(k), w[k]))
        for k in RATES:  # each rounded to 3 decimals
            check(abs(g.get(k, -1) - w[k]) <= 0.002, "group %s: merged %s %s, the shards' sum %s"
                  % (name, k, g.get(k), w[k]))
        check(set(g.get("plans", [])) == w["plans"], "group %s: plans %s, expected %s" % (name, g.get("plans"), w["plans"]))
        check(g.get("admitted", 0) + g.get("limited", 0) == answered.get(name),
              "group %s: admitted + limited %s, the shards answered %s"
              % (name, g.get("admitted", 0) + g.get("limited", 0), answered.get(name)))
        check(abs(g.get("achieved_rps", 0) * measured - answered.get(name, 0)) < 1,
              "group %s: achieved_rps %s over %s s, %s answered" % (name, g.get("achieved_rps"), measured,
                                                                   answered.get(name)))
    check(got.get("alpha", {}).get("limited", 0) > 0,
          "group alpha: nothing limited (its free key was sent past its minute's 60)")
    total = merged["answered"]
    check(sum(answered.values()) == total, "the groups answered %d, the run %d" % (sum(answered.values()), total))


def strip_groups(path, out):
    doc = json.load(open(path))
    doc["shard"].pop("groups", None)
    doc.pop("groups", None)
    for k in doc["shard"]["keys"]:
        k.pop("group", None)
    with open(out, "w") as f:
        json.dump(doc, f)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--npm", default=None)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lg-merge-groups-") as tmp:
        paths = run_shards(a.load, a.server, tmp)
        if failures:
            return exit_status()
        merged = os.path.join(tmp, "merged.json")
        rc, err = run([a.load, "merge", "--verify-limits", "--quiet", "--json", merged] + paths)
        check(rc == 0, "merge of the 2 shards: exit %d: %s" % (rc, err[:300]))
        if rc == 0:
            shards = [json.load(open(p)) for p in paths]
            sums_match(shards, json.load(open(merged)))
            validate_load_report(a.npm, merged, "merged-load-report.schema.json")
            for p in paths:
                validate_load_report(a.npm, p)
        # shards run with --warmup: their per-key checks saw the warm-up's answers, which no
        # total counts (the merge refused them: "shard.keys[1].responses: 238 is more than 200")
        warm = run_shards(a.load, a.server, tmp, ["--warmup", "1s"])
        rc, err = run([a.load, "merge", "--verify-limits", "--quiet", "--json", merged] + warm)
        check(rc == 0, "merge of 2 shards run with --warmup: exit %d: %s" % (rc, err[:300]))
        if rc == 0:
            sums_match([json.load(open(p)) for p in warm], json.load(open(merged)))
        # shards of an older version carry no groups: merged, without groups[]
        old = [strip_groups(p, os.path.join(tmp, "old%d.json" % i)) for i, p in enumerate(paths, 1)]
        rc, err = run([a.load, "merge", "--verify-limits", "--quiet", "--json", merged] + old)
        check(rc == 0, "merge of 2 shards without groups: exit %d: %s" % (rc, err[:300]))
        if rc == 0:
            check("groups" not in json.load(open(merged)), "shards without groups merged into a groups[]")
        # one with, one without: not the same keys file
        rc, err = run([a.load, "merge", "--verify-limits", "--quiet", "--json", merged, paths[0], old[1]])
        lines = err.splitlines()
        check(rc == 2 and len(lines) == 1 and "old2.json" in lines[0] and "shard.groups: 0 key groups" in lines[0],
              "merge of a shard with groups and one without: exit %d, %r" % (rc, err[:300]))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
