#!/usr/bin/env python3
"""generate_test.py - the runner's generative phase (runner/suites/generate.c).

  generate_test.py --conform BIN --server BIN old_miss DOCS/faults.md
      every fault that docs/faults.md says the generative phase (or the
      http date checks) catches passes every other check: only the new
      phase catches it
  generate_test.py --conform BIN --server BIN replay
      a failure that needs a long input (description-length-500) is shrunk
      to the shortest failing one (a 1001-byte description) and saved with
      --replay-dir, without the key; `petstore-conform replay FILE` re-sends
      it and fails it again, and passes it against a correct server
  generate_test.py --conform BIN --server BIN seed
      two runs with one --seed send the generative phase's requests byte
      for byte alike (against two fresh servers); another seed does not

Helpers (the reference server on port 0, the runner's reports) come from
conform_test.py; every child is stopped with a bounded wait.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conform_test as ct  # noqa: E402

KEYS = {"PETSTORE_API_KEY": ct.MAIN_KEY, "PETSTORE_LIMIT_KEY": ct.LIMIT_KEY}
NEW_CHECKS = "generate,http.date-present,http.retry-after-imf-fixdate,ratelimit.reset-not-past,limit429.every-operation"
# advice the old checks give on a fault without catching it: reset-clock-behind's
# Retry-After (right) ends after its Reset (30 s behind), a warning only
OLD_ADVICE = {"reset-clock-behind": {"limit429.retry-after-agrees"}}


def generate_faults(doc_path):
    """(fault, check, strict) of the docs/faults.md rows the new checks catch."""
    rows = []
    for line in open(doc_path, encoding="utf-8"):
        m = re.match(r"^\| `([a-z0-9-]+)` \|.*\| runner( \(--strict\))?: ([a-z0-9.-]+) \|$", line.strip())
        if m and (m.group(3).startswith("generate.") or m.group(3) in NEW_CHECKS.split(",")):
            rows.append((m.group(1), m.group(3), bool(m.group(2))))
    return rows


def mode_old_miss(a, tmp):
    rows = generate_faults(a.doc)
    ct.check(len(rows) >= 10, "docs/faults.md names %d faults of the new checks" % len(rows))
    for fault, cid, strict in rows:
        srv = ct.Server(a.server, ["--fault", fault] + ct.FAULT_SERVER_ARGS.get(fault, []), tmp)
        try:
            args = ["--base-url", srv.url, "--plan", "pro", "--limit-plan", "free", "--max-wait", "10s",
                    "--skip", NEW_CHECKS] + (["--strict"] if strict else [])
            rc, out, err, doc, _ = ct.run_conform(args, a.conform, tmp, KEYS)
        finally:
            srv.stop()
        by = ct.checks_by_status(doc) if doc else {}
        ct.check(rc == 0 and not by.get("failed") and not by.get("warning", set()) - OLD_ADVICE.get(fault, set()),
                 "%s: the old checks alone catch it (exit %d, failed %s, warnings %s): then %s is not "
                 "what catches it" % (fault, rc, sorted(by.get("failed", [])), sorted(by.get("warning", [])), cid))


def mode_replay(a, tmp):
    replay_dir = os.path.join(tmp, "replay")
    os.mkdir(replay_dir)
    srv = ct.Server(a.server, ["--fault", "description-length-500"], tmp)
    try:
        rc, out, err, doc, _ = ct.run_conform(
            ["--base-url", srv.url, "--plan", "pro", "--only", "generate.string-fields", "--replay-dir", replay_dir],
            a.conform, tmp, KEYS)
        ct.check(rc == 1, "exit %d against description-length-500, expected 1" % rc)
        files = sorted(os.listdir(replay_dir))
        if not ct.check(len(files) == 1, "replay files: %s" % files):
            return
        path = os.path.join(replay_dir, files[0])
        text = open(path, encoding="utf-8").read()
        ct.check(ct.MAIN_KEY not in text and ct.MAIN_KEY[:-1] not in text, "the replay file holds the key")
        rep = json.loads(text)
        ct.check(rep["check"] == "generate.string-fields", "replay check %r" % rep["check"])
        ct.check("${PETSTORE_API_KEY}" in rep["curl"], "the curl line does not name ${PETSTORE_API_KEY}")
        body = json.loads(rep["request"]["body"])
        desc = body.get("description", "").encode("utf-8")
        # the fault answers 500 above 1000 bytes: the shortest failing description has 1001
        ct.check(len(desc) == 1001, "the failure was shrunk to a %d-byte description, not 1001" % len(desc))
        checks = {c["id"]: c for s in doc["suites"] for c in s["checks"]} if doc else {}
        msg = checks.get("generate.string-fields", {}).get("message", "")
        ct.check("shrunk from" in msg and "replay" in msg and str(doc["generate"]["seed"]) in msg,
                 "the failure message names no shrinking, seed or replay file: %r" % msg)
        env = dict(os.environ, **KEYS)
        # the file's own base_url only with --use-file-url (issue 30: the key goes where the reader says)
        p = subprocess.run([a.conform, "replay", path, "--use-file-url"], env=env, capture_output=True, timeout=30)
        out = p.stdout.decode("utf-8", "replace")
        ct.check(p.returncode == 1 and "FAIL" in out and "500" in out,
                 "replay against the faulty server: exit %d: %s" % (p.returncode, out[-600:]))
        ct.check(ct.MAIN_KEY not in out + p.stderr.decode("utf-8", "replace"), "replay printed the key")
    finally:
        srv.stop()
    good = ct.Server(a.server, [], tmp)
    try:
        env = dict(os.environ, **KEYS)
        p = subprocess.run([a.conform, "replay", path, "--base-url", good.url], env=env, capture_output=True,
                           timeout=30)
        out = p.stdout.decode("utf-8", "replace")
        ct.check(p.returncode == 0 and "PASS" in out,
                 "replay against a correct server: exit %d: %s" % (p.returncode, out[-600:]))
        p = subprocess.run([a.conform, "replay", os.path.join(tmp, "missing.json")], env=env,
                           capture_output=True, timeout=30)
        ct.check(p.returncode == 2 and b"missing.json" in p.stderr, "replay of a missing file: exit %d" % p.returncode)
    finally:
        good.stop()


def generated_requests(err):
    """The requests --verbose printed from the generative phase on, port masked."""
    at = err.find("suite generate:")
    lines = [l for l in err[at:].splitlines() if l.startswith("> ")]
    return [re.sub(r"127\.0\.0\.1:\d+", "HOST", l) for l in lines]


def mode_seed(a, tmp):
    runs = []
    for seed in ("12345", "12345", "54321"):
        srv = ct.Server(a.server, [], tmp)
        try:
            # 80 requests stay within the pro key's window: no 429 retry changes the sequence
            rc, out, err, doc, _ = ct.run_conform(
                ["--base-url", srv.url, "--plan", "pro", "--seed", seed, "--examples", "80", "--verbose",
                 "--only", "generate.string-fields,generate.members,generate.content-type,generate.credentials"],
                a.conform, tmp, KEYS)
        finally:
            srv.stop()
        ct.check(rc == 0, "seed %s: exit %d" % (seed, rc))
        ct.check(doc is not None and doc["generate"]["seed"] == int(seed), "the report does not name seed %s" % seed)
        ct.check("seed %s" % seed in err, "the seed is not printed on stderr")
        runs.append(generated_requests(err))
    ct.check(len(runs[0]) > 200, "only %d request lines in the generative phase" % len(runs[0]))
    diff = next(((x, y) for x, y in zip(runs[0], runs[1]) if x != y), (len(runs[0]), len(runs[1])))
    ct.check(runs[0] == runs[1], "one seed, different requests: first difference %r" % (diff,))
    ct.check(runs[0] != runs[2], "another seed sent the same requests")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--conform", required=True)
    p.add_argument("--server", required=True)
    sub = p.add_subparsers(dest="mode", required=True)
    om = sub.add_parser("old_miss")
    om.add_argument("doc")
    sub.add_parser("replay")
    sub.add_parser("seed")
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="generate-test-") as tmp:
        globals()["mode_" + a.mode](a, tmp)
    if ct.failures:
        print("%d failure(s)" % len(ct.failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
