#!/usr/bin/env python3
"""lg_key_secrecy.py - keys cannot be recovered from what the programs write
(issue 22), tried against the real programs and the reference server.

brute_force: a shard report of a run with one 10-character key. Its key id
  and derived run id were FNV-1a (core/hash.c) of run id and key, and its
  label showed 4 of its characters: a search over the key's space found it
  (22 s on one core for a real key; here a space of 10^4 made from the
  label's characters). Now the label shows none, and the search over the
  same space under the old derivation finds nothing; the ids are an HMAC
  under PBKDF2-HMAC-SHA256 of every key (recomputed here from the keys, as
  only someone holding them can).
search_outputs: a run with keys of 5 to 25 characters (short ones
  included), unsharded and as two shards merged, plus the runner and a
  keys file with errors: every output (stdout, stderr, --json, --html,
  --hdr, --hdr-log, shard files, the merge's outputs, the server's stderr
  and access log, the runner's reports) is searched for every key and
  every 12-character prefix of one; nothing may be found.
short_keys: keys of 3 and 7 characters (q7z, pk-4821), each the only key of
  its run, unsharded and as two shards given PETSTORE_LOAD_KEY_SECRET: a
  search of each key's small space, derived as a key alone used to give
  the secret (issue 30), matches no label or key id; the shards agree.

usage: lg_key_secrecy.py --load L --server S --conform C CASE
"""
import argparse
import glob
import hashlib
import hmac
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import check, exit_status, start_server, stop_process  # noqa: E402

ROUNDS = 8192  # loadgen/key_label.h PS_LG_KEY_SECRET_ROUNDS
SALT = b"petstore-load key secret v1"


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_") and k != "JOB_COMPLETION_INDEX"}
    e["NO_COLOR"] = "1"
    return e


def run(argv, cwd, timeout=120, secret=None):
    e = env()
    if secret is not None:
        e["PETSTORE_LOAD_KEY_SECRET"] = secret
    p = subprocess.run(argv, capture_output=True, timeout=timeout, env=e, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def old_hash(data):
    """core/hash.c: the fast hash the key ids and run ids were made of."""
    h = 1469598103934665603
    for b in data:
        h ^= b
        h = (h * 1099511628211) & (2**64 - 1)
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & (2**64 - 1)
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & (2**64 - 1)
    h ^= h >> 33
    return h


def server(a, tmp, keys_text):
    path = os.path.join(tmp, "server-keys.txt")
    with open(path, "w") as f:
        f.write(keys_text)
    err = open(os.path.join(tmp, "out-server.stderr"), "wb")
    srv, url = start_server([a.server, "--port", "0", "--no-seed", "--keys-file", path,
                             "--access-log", os.path.join(tmp, "out-server-access.log")], stderr=err)
    if not url:
        stop_process(srv)
        sys.exit("FAIL: the server printed no base URL")
    return srv, url


def case_brute_force(a, tmp):
    key = "Kq4-7301zx"  # 10 characters: the label used to show "Kq" and "zx"
    srv, url = server(a, tmp, "%s pro\n" % key)
    try:
        rc, _, err = run([a.load, "--base-url", url, "--api-key", key, "--plan", "pro", "--shard", "1/2",
                          "--connections", "1", "--requests", "5", "--verify-limits", "--quiet",
                          "--json", "s1.json"], tmp, secret=SHARED)
        check(rc == 0, "the shard exited %d: %r" % (rc, err[-300:]))
    finally:
        stop_process(srv)
    doc = json.load(open(os.path.join(tmp, "s1.json")))
    shard = doc["shard"]
    entry = shard["keys"][0]
    label, key_id, run_id = entry["key"], entry["id"], shard["run_id"]
    check(label.startswith("***~"), "the label %r shows characters of the 10-character key" % label)
    # the old attack: the label's characters known, the middle searched (10^4 of the key's space here)
    found = None
    for mid in range(10000):
        guess = "Kq4-%04dzx" % mid
        if "%016x" % old_hash(("%s\n%s" % (run_id, guess)).encode()) == key_id:
            found = guess
            break
    check(found is None, "the key id is still a fast hash of run id and key: found %r" % found)
    # the keys and the shards' shared secret give it: PBKDF2 over both, then HMACs under it
    secret = shared_secret(key + "\n", SHARED)
    want = hmac.new(secret, ("%s\n%s" % (run_id, key)).encode(), hashlib.sha256).hexdigest()[:16]
    check(key_id == want, "the key id %s is not HMAC(PBKDF2(keys, secret), run id, key) %s" % (key_id, want))
    tag = hmac.new(secret, ("label\n%s" % key).encode(), hashlib.sha256).hexdigest()[:6]
    check(label == "***~" + tag, "the label %r, expected '***~%s'" % (label, tag))
    # the keys alone (issue 22's derivation) no longer give it
    alone = hashlib.pbkdf2_hmac("sha256", (key + "\n").encode(), SALT, ROUNDS, 32)
    check(hmac.new(alone, ("%s\n%s" % (run_id, key)).encode(), hashlib.sha256).hexdigest()[:16] != key_id,
          "the key id is still derived from the key alone")


SHARED = "9f4c2e7d1b8a6035e2f1c4d7a9b0e3f6"  # what every shard of a run is given (docs/distributed.md)


def shared_secret(keys_text, shared):
    return hashlib.pbkdf2_hmac("sha256", (keys_text + "secret\n%s\n" % shared).encode(), SALT, ROUNDS, 32)


def outputs_of(tmp):
    """(label tags, key ids) anywhere in the files out-* of tmp."""
    import re
    tags, ids = set(), set()
    for path in glob.glob(os.path.join(tmp, "out-*")):
        data = open(path, "rb").read().decode("utf-8", "replace")
        tags.update(re.findall(r"\*\*\*~([0-9a-f]{6})", data))
        if path.endswith(".json"):
            try:
                doc = json.loads(data)
            except ValueError:
                continue
            for entry in (doc.get("shard") or {}).get("keys") or []:
                ids.add((doc["shard"]["run_id"], entry.get("id")))
    return tags, ids


def case_short_keys(a, tmp):
    """Keys of 3 and 7 characters over a small alphabet, each the only key of
    its run: an unsharded run (--json, --summary-md, --html, stdout) and two
    shards given PETSTORE_LOAD_KEY_SECRET, merged. Every guess in the keys'
    space is derived the way a key alone used to give the secret (issue 30:
    pk-4821 came back in 16 s); no label tag or key id may match one. The
    shards still agree: the same label, the same key id, a clean merge."""
    import itertools
    spaces = {"q7z": ["".join(p) for p in itertools.product("qz7x2", repeat=3)],
              "pk-4821": ["pk-" + "".join(p) for p in itertools.product("4821", repeat=4)]}
    srv, url = server(a, tmp, "".join("%s pro\n" % k for k in spaces))
    try:
        for key in spaces:
            common = ["--base-url", url, "--api-key", key, "--plan", "pro", "--connections", "2", "--requests",
                      "4", "--verify-limits", "--quiet"]
            rc, out, err = run([a.load] + common + ["--json", "out-%s.json" % key, "--summary-md",
                                                    "out-%s.md" % key, "--html", "out-%s.html" % key], tmp)
            # 3: --verify-limits saw no limit reached in 4 requests; the labels are written all the same
            check(rc in (0, 1, 3), "the run of %s exited %d: %r" % (key, rc, err[-300:]))
            for i in (1, 2):
                rc, _, err = run([a.load] + common + ["--shard", "%d/2" % i, "--json", "out-%s-s%d.json" % (key, i)],
                                 tmp, secret=SHARED)
                check(rc in (0, 1, 3), "shard %d of %s exited %d: %r" % (i, key, rc, err[-300:]))
            rc, _, err = run([a.load, "merge", "out-%s-s1.json" % key, "out-%s-s2.json" % key, "--verify-limits",
                              "--quiet", "--json", "out-%s-merged.json" % key], tmp)
            check(rc in (0, 1, 3), "the merge of %s's shards exited %d: %r" % (key, rc, err[-300:]))
            s1, s2 = (json.load(open(os.path.join(tmp, "out-%s-s%d.json" % (key, i))))["shard"]["keys"][0]
                      for i in (1, 2))
            check(s1["key"] == s2["key"] and s1["id"] == s2["id"],
                  "the shards of %s disagree: %r %r" % (key, s1, s2))
    finally:
        stop_process(srv)
    tags, ids = outputs_of(tmp)
    check(len(tags) >= 2 and len(ids) >= 2, "too few labels (%d) or key ids (%d) to search" % (len(tags), len(ids)))
    found = []
    for key, space in spaces.items():
        for guess in space:
            secret = hashlib.pbkdf2_hmac("sha256", (guess + "\n").encode(), SALT, ROUNDS, 32)
            if hmac.new(secret, ("label\n%s" % guess).encode(), hashlib.sha256).hexdigest()[:6] in tags:
                found.append((guess, "label"))
            for run_id, key_id in ids:
                if hmac.new(secret, ("%s\n%s" % (run_id, guess)).encode(), hashlib.sha256).hexdigest()[:16] == key_id:
                    found.append((guess, "key id"))
    check(not found, "keys recovered from the outputs: %r" % found)
    print("tried %d guesses against %d label tags and %d key ids" % (sum(map(len, spaces.values())), len(tags),
                                                                      len(ids)))


def case_search_outputs(a, tmp):
    keys = ["q~Z_7", "Kx.9-w_Q2", "pro-key-short~1", "long-customer-key-0001~Zx"]
    plans = ["pro", "free", "enterprise 100 100000", "pro"]
    keys_text = "".join("%s %s\n" % (k, p) for k, p in zip(keys, plans))
    with open(os.path.join(tmp, "keys.txt"), "w") as f:
        f.write(keys_text)
    srv, url = server(a, tmp, keys_text)
    runs = []
    try:
        common = ["--base-url", url, "--keys", "keys.txt", "--connections", "2", "--requests", "60",
                  "--mix", "list=3,create=1", "--verify-limits"]
        runs.append(("load", run([a.load] + common + ["--json", "out-load.json", "--html", "out-load.html",
                                                       "--hdr", "out-load.hdr", "--hdr-log", "out-load.hlog"],
                                 tmp)))
        for i in (1, 2):
            runs.append(("shard%d" % i, run([a.load] + common + ["--shard", "%d/2" % i, "--json",
                                                                  "out-shard%d.json" % i, "--html",
                                                                  "out-shard%d.html" % i], tmp)))
        runs.append(("merge", run([a.load, "merge", "out-shard1.json", "out-shard2.json", "--verify-limits",
                                   "--json", "out-merged.json", "--html", "out-merged.html", "--hdr",
                                   "out-merged.hdr", "--hdr-log", "out-merged.hlog"], tmp)))
        runs.append(("conform", run([a.conform, "--base-url", url, "--api-key", keys[0], "--plan", "pro",
                                     "--limit-key", keys[1], "--only", "auth", "--json", "out-conform.json",
                                     "--tap", "out-conform.tap", "--junit", "out-conform.xml", "--html",
                                     "out-conform.html", "--verbose"], tmp)))
    finally:
        stop_process(srv)
    for name, (rc, out, err) in runs:
        check(rc in (0, 1, 3) or name == "conform", "%s exited %d: %r" % (name, rc, err[-300:]))
        with open(os.path.join(tmp, "out-%s.stdout" % name), "wb") as f:
            f.write(out)
        with open(os.path.join(tmp, "out-%s.stderr" % name), "wb") as f:
            f.write(err)
    # keys-file errors, in both programs: the key listed twice, a key with no plan
    for n, text in enumerate(["%s pro\n%s free\n" % (keys[0], keys[0]), "%s\n" % keys[3]]):
        bad = os.path.join(tmp, "bad%d.txt" % n)
        with open(bad, "w") as f:
            f.write(text)
        rc, out, err = run([a.load, "--base-url", url, "--keys", bad, "--requests", "1"], tmp)
        check(rc == 2, "petstore-load with a bad keys file exited %d" % rc)
        rc2, out2, err2 = run([a.server, "--port", "0", "--keys-file", bad], tmp)
        check(rc2 == 2, "petstore-server with a bad keys file exited %d" % rc2)
        with open(os.path.join(tmp, "out-badkeys%d.txt" % n), "wb") as f:
            f.write(out + err + out2 + err2)
    needles = set()
    for k in keys:
        needles.add(k)
        for i in range(0, max(1, len(k) - 11)):
            needles.add(k[i:i + 12])
    outputs = sorted(glob.glob(os.path.join(tmp, "out-*")))
    check(len(outputs) >= 25, "only %d outputs written" % len(outputs))
    for path in outputs:
        if path.endswith((".json", ".html", ".hlog", ".tap", ".xml")):
            check(os.path.getsize(path) > 0, "%s is empty" % os.path.basename(path))
    for path in outputs:
        data = open(path, "rb").read()
        for needle in needles:
            if needle.encode() in data:
                at = data.index(needle.encode())
                check(False, "%s holds %r: ...%r..." % (os.path.basename(path), needle, data[max(0, at - 60):at + 60]))
    print("searched %d outputs for %d keys and prefixes" % (len(outputs), len(needles)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--conform", required=True)
    ap.add_argument("case")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lg-key-secrecy-") as tmp:
        globals()["case_" + a.case](a, tmp)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
