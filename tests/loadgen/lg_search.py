#!/usr/bin/env python3
"""lg_search.py - `petstore-load search` (loadgen/search.c), one case per
ctest:

  known_capacity  a service of known capacity (fake_capacity_server.py: one
                  worker, 10 ms a request, so 100 req/s): the search reports
                  max_rate within 10% of it, exit 0; its JSON is valid
                  against schemas/load-report.schema.json (ajv, when node
                  and tools/npm are there); the HTML has the step table and
                  the latency-vs-rate and answered-vs-target plots; the
                  console the table, the curve and the result
  first_fail      the first step already over capacity: exit 99, no max_rate
  saturated       a generator starved of CPU (nice, pinned beside busy
                  loops) against the reference server: exit 3,
                  generator-saturated, no capacity claimed
  cli             usage errors in the one style (exit 2): no --slo, a flag
                  the search sets itself, bad values; --help on stdout

usage: lg_search.py CASE --load L --server S [--npm DIR]
"""
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "lib"))
from pstest import (check, load_json, run, run_cases, run_starved, start_server, stop_process,  # noqa: E402
                    validate_load_report)



def starved(proc):
    """After stop_process on a fake service: whether it answered over 1% of
    its requests more than 50 ms after its model's time (its CPU starved,
    so its capacity was not the one modelled), with its line for the log."""
    try:
        tail = proc.stdout.read().decode(errors="replace").split()
        late, answered = int(tail[-3]), int(tail[-1])
    except (ValueError, IndexError, OSError):
        return False, "no late line"
    return late > 0.01 * max(answered, 1), "service late %d of %d" % (late, answered)


def fake(service_ms, *extra):
    proc, url = start_server([sys.executable, os.path.join(here, "fake_capacity_server.py"), str(service_ms)]
                             + [str(e) for e in extra])
    check(url is not None, "the fake service did not start")
    return proc, url


def case_known_capacity(args, tmp):
    # Up to two searches: one where the generator itself ran late (90% of a
    # step's requests over 50 ms after their due time) at or below 110 req/s
    # measured the machine's stalls, which the corrected latency counts, not
    # the service. Neither valid: skipped (77), the machine is too busy.
    for attempt in range(2):
        result = known_capacity_search(args, tmp)
        if result != "invalid":
            return result
    return "the generator or the service ran late in both searches: the machine is too busy to measure"


def known_capacity_search(args, tmp):
    proc, url = fake(10)
    if not url:
        return None
    out, html = os.path.join(tmp, "search.json"), os.path.join(tmp, "search.html")
    # p90, not p99: a loaded machine's scheduling stalls (up to ~170 ms at
    # the p90 of a step at 60% of capacity beside ctest -j4) reach the
    # slowest percent below capacity too; above it the queue grows without
    # bound and the p90 with it: 10% over for the 5 s of warm-up and step is
    # ~500 ms by the end.
    rc, _, err = run([args.load, "search", "--base-url", url, "--api-key", "any-key-0001", "--connections", "64",
                      "--slo", "p90<300ms", "--from", "60", "--to", "1000",
                      "--step", "3s", "--warmup", "2s", "--json", out, "--html", html])
    stop_process(proc)
    print(err)
    was_starved, line = starved(proc)
    print(line)
    d = load_json(out)
    if not d:
        return None
    s = d["search"]
    late = [st for st in s["steps"] if st["rate"] <= 110 and st["generator"]["lateness_us"]["p90"] > 50000]
    if late:
        print("the generator ran late at %s req/s: search not valid" % ", ".join("%g" % st["rate"] for st in late))
        return "invalid"
    if was_starved and not (rc == 0 and 90 <= (s["max_rate"] or 0) <= 110):
        print("the service itself was starved of CPU (%s): search not valid" % line)
        return "invalid"
    check(rc == 0, "search against a 100 req/s service: exit %d" % rc)
    check(s["result"] == "found", "result %s" % s["result"])
    mx = s["max_rate"] or 0
    check(90 <= mx <= 110, "max_rate %s, expected within 10%% of 100" % mx)
    check(s["min_failing_rate"] and s["min_failing_rate"] > mx, "min_failing_rate %s" % s["min_failing_rate"])
    check(s["min_failing_rate"] - mx <= 0.05 * mx + 1e-9, "not resolved to 5%%: %s .. %s" % (mx, s["min_failing_rate"]))
    for st in s["steps"]:
        if st["passed"]:
            check(st["rate"] <= mx, "a step at %s passed above max_rate %s" % (st["rate"], mx))
        else:
            check(st["why"], "a failed step without why: %r" % st)
    check(d["parameters"]["rate"] == mx and d["exit_code"] == 0, "the report is not the max_rate step's run")
    check(s["slos"] == ["p90<300ms"] and s["step_s"] == 3 and s["warmup_s"] == 2, "search parameters %r" % s)
    # the boundary measured three times each: the answer passed every run,
    # the knee's spread is the p90 over those runs
    k = s.get("knee") or {}
    hp, lf = k.get("highest_passing", {}), k.get("lowest_failing", {})
    check(k.get("objective") == "p90<300ms" and hp.get("rate") == mx and lf.get("rate") == s["min_failing_rate"],
          "knee %r" % k)
    check(hp.get("runs") == 3 and hp.get("runs_passed") == 3 and lf.get("runs") == 3 and lf.get("runs_passed", 3) < 3,
          "boundary runs %r" % k)
    check(hp.get("figure_min_us") is not None and hp["figure_min_us"] <= hp["figure_max_us"] < 300000,
          "spread at the answer %r" % hp)
    check("knee (p90<300ms), spread over the boundary's runs" in err, "console knee: %s" % err[-800:])
    validate_load_report(args.npm, out)
    try:
        page = open(html).read()
    except OSError:
        page = ""
    check('data-plot="search-latency"' in page and 'data-plot="search-throughput"' in page,
          "HTML lacks the search plots")
    check(page.count("<tr data-step>") == len(s["steps"]), "HTML step rows")
    check("<p data-knee>Knee (p90&lt;300ms), spread over the boundary's runs:" in page
          and 'data-series="objective"' in page, "HTML lacks the knee or the objective's line")
    check("p99 latency against the target rate" in err and "result: found; highest rate measured passing" in err,
          "console: %s" % err[-600:])
    return None


def case_first_fail(args, tmp):
    proc, url = fake(10)
    if not url:
        return
    out = os.path.join(tmp, "first.json")
    rc, _, err = run([args.load, "search", "--base-url", url, "--api-key", "any-key-0001", "--connections", "64",
                      "--slo", "p90<150ms", "--from", "400", "--to", "1000", "--step", "1s", "--warmup", "500ms",
                      "--json", out])
    stop_process(proc)
    check(rc == 99, "first step 4x over capacity: exit %d, expected 99: %s" % (rc, err[-500:]))
    d = load_json(out)
    if d:
        s = d["search"]
        check(s["result"] == "first-step-failed" and s["max_rate"] is None and len(s["steps"]) == 1,
              "search %r" % {k: s[k] for k in ("result", "max_rate", "min_failing_rate")})
        check("even the first step failed" in err, "console: %s" % err[-400:])


def pinned_server(args, tmp):
    """The reference server pinned to the first CPU, with one enterprise key
    (key-00001) of limits no search reaches: (process, base URL or None, the
    CPU left for the generator)."""
    cs = sorted(os.sched_getaffinity(0))
    keys = os.path.join(tmp, "keys")
    with open(keys, "w") as f:
        f.write("key-00001 enterprise 100000000 1000000000\n")
    proc, url = start_server(["taskset", "-c", str(cs[0]), args.server, "--port", "0", "--keys-file", keys],
                             stderr=subprocess.DEVNULL)
    check(url is not None, "the reference server did not start")
    return proc, url, str(cs[-1])


def case_saturated(args, tmp):
    proc, url, gen = pinned_server(args, tmp)
    if not url:
        return
    out = os.path.join(tmp, "sat.json")
    rc, _, err = run_starved([args.load, "search", "--base-url", url, "--api-key", "key-00001", "--connections", "64",
                              "--slo", "p99<5s", "--from", "100000", "--to", "200000", "--step", "1s",
                              "--warmup", "500ms", "--json", out], gen)
    stop_process(proc)
    check(rc == 3, "a starved generator: exit %d, expected 3: %s" % (rc, err[-800:]))
    d = load_json(out)
    if d:
        s = d["search"]
        check(s["result"] == "generator-saturated" and s["max_rate"] is None, "search result %s max %s" % (s["result"], s["max_rate"]))
        check(s["steps"][0]["generator"]["verdict"] == "saturated", "step generator %r" % d["generator"])
        check(d["verdict"] == "saturated", "report verdict %s" % d["verdict"])


def case_late(args, tmp):
    """A generator kept late by its CPU (pinned at nice 19 beside two busy loops)
    at a rate it still sends in full (200/s): its own lateness breaks p99<1ms
    before the target answers, so the step claims nothing of the target: exit
    3, result generator-saturated, the step's why naming the generator's
    lateness, never exit 99 "the first step failed" (the target's p99 is well
    under 1 ms). Before: exit 99 at 200/s."""
    if len(os.sched_getaffinity(0)) < 2:
        return "needs 2 CPUs"
    proc, url, gen = pinned_server(args, tmp)
    if not url:
        return None
    out = os.path.join(tmp, "late.json")
    rc, _, err = run_starved([args.load, "search", "--base-url", url, "--api-key", "key-00001", "--connections", "64",
                              "--slo", "p99<1ms", "--from", "200", "--to", "200", "--step", "1s",
                              "--warmup", "500ms", "--json", out], gen)
    stop_process(proc)
    d = load_json(out)
    if not check(d is not None, "no report (exit %d): %s" % (rc, err[-500:])):
        return None
    st = d["search"]["steps"][0]
    late_p99 = st["generator"]["lateness_us"]["p99"]
    if late_p99 < 1000:
        return "the generator was not late (lateness p99 %d us): nothing to judge" % late_p99
    check(rc == 3 and d["search"]["result"] == "generator-saturated",
          "a late generator: exit %d, result %s: %s" % (rc, d["search"]["result"], err[-600:]))
    check(not st["passed"] and "the generator itself left requests that late" in (st["why"] or ""),
          "step why %r" % st["why"])


def case_cli(args, tmp):
    see = "see 'petstore-load search --help'"
    base = ["--base-url", "http://127.0.0.1:9/v1", "--api-key", "k"]
    cases = [
        ([], "--slo: at least one objective is required"),
        (["--slo", "p99<1ms", "--rate", "100"], "--rate: the search sets it"),
        (["--slo", "p99<1ms", "--ra=1:2"], "--rate: the search sets it"),
        (["--slo", "p99<1ms", "--duration", "5s"], "--duration: the search sets it (each step lasts --step)"),
        (["--slo", "p99<1ms", "--threshold", "p99<1s"], "--threshold: the search sets it (give objectives with --slo)"),
        (["--slo", "p99"], "--slo: threshold 'p99'"),
        (["--slo", "p99<1ms", "--resolution", "0%"], "--resolution (percent, 0.1 to 100)"),
        (["--slo", "p99<1ms", "--from", "500", "--to", "100"], "--to (100) is below --from (500)"),
        (["--slo", "p99<1ms", "--repeat", "0"], "--repeat: "),
        (["--slo", "p99<1ms", "--step"], "--step: needs a value"),
        (["--slo", "p99<1ms", "--shard", "1/2"], "--shard: the search sets it"),
        (["--slo", "p99<1ms", "--step", "0"], "--step: duration '0' must be greater than zero"),
        (["--slo", "p99<1ms", "--boundary-runs", "0"], "--boundary-runs: "),
        (["--slo", "p99<nanms"], "--slo: threshold 'p99<nanms': expected a latency"),
    ]
    for extra, want in cases:
        rc, out, err = run([args.load, "search"] + base + extra, timeout=30)
        lines = err.splitlines()
        what = "search " + " ".join(extra)
        check(rc == 2, "%s: exit %d, expected 2 (%s)" % (what, rc, err[-300:]))
        check(len(lines) == 2 and lines[0].startswith("petstore-load search: " + want) and lines[1] == see,
              "%s: stderr %r, expected 'petstore-load search: %s...'" % (what, err[:300], want))
    # search --customers: keys from a keys file (the pool each step draws
    # from), each customer at most at its quota
    ck = os.path.join(tmp, "ck.keys")
    with open(ck, "w") as f:
        f.write("k1 free\n")
    for extra, want in ((["--customers", "free=1"], "--customers: a search draws each step's customers from --keys"),
                        (["--keys", ck, "--customers", "free=1", "--quota", "1.2"], "--quota 1.2: a search offers")):
        rc, out, err = run([args.load, "search", "--base-url", "http://127.0.0.1:9/v1", "--slo", "p99<1ms"] + extra,
                           timeout=30)
        check(rc == 2 and err.startswith("petstore-load search: " + want), "%s: %d %r" % (extra, rc, err[:300]))
    # a run's threshold that is not a number is refused naming the flag
    rc, out, err = run([args.load] + base + ["--threshold", "p99<nanms"], timeout=30)
    check(rc == 2 and err.startswith("petstore-load: --threshold: threshold 'p99<nanms'"), "nan: %d %r" % (rc, err[:300]))
    rc, out, err = run([args.load, "search", "--help"], timeout=30)
    check(rc == 0 and out.startswith("usage: petstore-load search") and err == "", "--help: %d %r" % (rc, err))


def case_customers(args, tmp):
    keys = os.path.join(tmp, "customers.keys")
    rc, _, err = run([args.load, "--customers", "free=10,pro=4", "--write-customer-keys", keys], timeout=30)
    check(rc == 0, "--write-customer-keys: exit %d: %s" % (rc, err))
    # no bans: the run at 120% of quota is refused often, and a ban would
    # still hold the keys in the search after it
    proc, url = start_server([args.server, "--port", "0", "--keys-file", keys, "--time-scale", "60",
                              "--ban-after", "0"], stderr=subprocess.DEVNULL)
    if not check(url is not None, "the reference server did not start"):
        return None
    # at 120% of quota every customer's windows fill: limits exercised and kept
    out = os.path.join(tmp, "run.json")
    rc, _, err = run([args.load, "--base-url", url, "--customers", "free=5,pro=2", "--quota", "1.2", "--time-scale",
                      "60", "--duration", "3s", "--verify-limits", "--connections", "64", "--json", out])
    d = load_json(out)
    check(rc == 0, "customers run: exit %d: %s" % (rc, err[-500:]))
    if d:
        check(d["limits"]["verdict"] == "pass" and d["limits"]["windows_filled"] > 0, "limits %r" % d["limits"]["verdict"])
        # 5 x 72/s + 2 x 360/s = 1080/s asked (Retry-After skips what the windows refuse)
        check(abs(d["generator"]["target_rps"] - 1080) < 20, "target %s" % d["generator"]["target_rps"])
        # per plan: offered, share of quota, refusals, windows filled
        rows = {r["plan"]: r for r in d["plans"]}
        for plan, n in (("free", 5), ("pro", 2)):
            r = rows.get(plan, {})
            check(r.get("keys") == n and r.get("sent", 0) > 0 and r.get("windows_filled", 0) >= n,
                  "plan %s row %r" % (plan, {k: r.get(k) for k in ("keys", "sent", "windows_filled")}))
            check(r.get("quota_share") and 0.3 < r["quota_share"] <= 1.25 and r.get("limited", 0) > 0,
                  "plan %s quota_share %s limited %s" % (plan, r.get("quota_share"), r.get("limited")))
        check("plan free: 5 keys, offered" in err and "windows filled" in err, "console plan lines: %s" % err[:600])
    # The mix at half its quota (450/s), searched up to twice that: the
    # second step holds twice the customers (the keys file's ten free and
    # four pro), each at its own half quota, never one key at twice it.
    out = os.path.join(tmp, "search.json")
    rc, _, err = run([args.load, "search", "--base-url", url, "--keys", keys, "--customers", "free=5,pro=2",
                      "--quota", "0.5", "--time-scale", "60", "--slo", "p99<5s", "--to", "900", "--step", "1s",
                      "--warmup", "1500ms", "--json", out, "--html", out + ".html", "--summary-md", out + ".md"])
    stop_process(proc)
    d = load_json(out)
    check(rc == 0, "search --customers: exit %d: %s" % (rc, err[-500:]))
    if d:
        s = d["search"]
        check(s["from_rps"] == 450 and s["result"] == "all-passed", "search from %s result %s" % (s["from_rps"], s["result"]))
        check(s["customers"] == {"free": 10, "pro": 4}, "customers at max_rate %r" % s.get("customers"))
        check([st.get("customers") for st in s["steps"]] == [{"free": 5, "pro": 2}, {"free": 10, "pro": 4}],
              "customers per step %r" % [st.get("customers") for st in s["steps"]])
        for st in s["steps"]:
            c = st.get("customers", {})
            check(abs(st["rate"] - (c.get("free", 0) * 30 + c.get("pro", 0) * 150)) < 0.01,
                  "step at %s: not its customers at half their quota %r" % (st["rate"], c))
            check(st["offered_share"] >= 0.9, "step at %s offered %s" % (st["rate"], st["offered_share"]))
        rows = {r["plan"]: r for r in d["plans"]}
        check(rows.get("free", {}).get("keys") == 10 and rows.get("pro", {}).get("keys") == 4,
              "the report's plans %r" % {k: r.get("keys") for k, r in rows.items()})
        check(0.4 < rows.get("free", {}).get("quota_share", 0) <= 0.55, "free quota share %r" % rows.get("free"))
        # quota accounting: half of each key's minute, and its day's share
        # (10 free keys, 1,000 a day each)
        fr = rows.get("free", {})
        check(0.4 < fr.get("minute_quota_spent", 0) <= 0.55, "free minute quota spent %r" % fr)
        check(abs(fr.get("day_quota_spent", -1) - fr.get("admitted", 0) / 10000.0) < 1e-3, "free day quota spent %r" % fr)
        check("free customers at that rate: 10" in err and "free=10,pro=4 pass" in err, "console: %s" % err[-900:])
        try:
            page = open(out + ".html").read()
        except OSError:
            page = ""
        check(page.count("<td data-customers>") == 2 and "<td data-customers>free 10, pro 4<" in page,
              "HTML customers column")
        try:
            md = open(out + ".md").read()
        except OSError:
            md = ""
        check("Customers at the knee: free 10, pro 4" in md and "| 450 (free 5, pro 2) |" in md,
              "Markdown summary: %s" % md[-800:])
        validate_load_report(args.npm, out)
    return None


def pool(args, tmp, spec):
    keys = os.path.join(tmp, "pool.keys")
    rc, _, err = run([args.load, "--customers", spec, "--write-customer-keys", keys], timeout=30)
    check(rc == 0, "--write-customer-keys: exit %d: %s" % (rc, err))
    return keys


def customers_search(args, tmp, url, keys, extra):
    out = os.path.join(tmp, "cs.json")
    if os.path.exists(out):
        os.unlink(out)
    rc, _, err = run([args.load, "search", "--base-url", url, "--keys", keys, "--connections", "64",
                      "--json", out] + extra)
    print(err)
    return rc, load_json(out), err


def case_customers_capacity(args, tmp):
    """Customers of known cost: a service of 100 req/s (one worker, 10 ms a
    request) and free customers at 95% of 60/min at --time-scale 6 (5.7
    req/s each): 17.5 customers is the truth. The answer must be within 10%
    (16 to 19 customers), exit 0, resting on a step measured passing."""
    keys = pool(args, tmp, "free=40")
    for attempt in range(2):
        proc, url = fake(10)
        rc, d, err = customers_search(args, tmp, url, keys, [
            "--customers", "free=5", "--time-scale", "6", "--slo", "p90<300ms", "--step", "2s", "--warmup", "1s"])
        stop_process(proc)
        was_starved, line = starved(proc)
        print(line)
        if not check(d is not None, "no report (exit %d)" % rc):
            return None
        s = d["search"]
        free = (s.get("customers") or {}).get("free")
        late = [st for st in s["steps"] if st["rate"] <= 110 and st["generator"]["lateness_us"]["p90"] > 50000]
        # a service starved of CPU had less capacity than modelled: a wrong
        # answer then says nothing of the search
        late = late or (was_starved and not (rc == 0 and free is not None and 16 <= free <= 19))
        if late and attempt == 0:
            print("the generator or the service ran late: measured again")
            continue
        if late:
            return "the generator or the service ran late in both searches: the machine is too busy to measure"
        check(rc == 0 and s["result"] == "found", "exit %d result %s" % (rc, s["result"]))
        check(free is not None and 16 <= free <= 19, "free customers %r, truth 17.5 (16 to 19 within 10%%)" % free)
        best = [st for st in s["steps"] if st["passed"] and st.get("customers") == s["customers"]]
        check(best and abs(best[0]["rate"] - s["max_rate"]) < 0.01, "the answer is no step measured passing")
        for st in s["steps"]:
            check(st["answered"] >= st["answers_needed"] or not st["passed"],
                  "a step passed on %d answers, %d needed" % (st["answered"], st["answers_needed"]))
        check("free customers at that rate: %s" % free in err, "console: %s" % err[-500:])
        return None
    return None


def case_customers_cost(args, tmp):
    """Customers of known per-customer cost: each active customer makes
    every request costlier (5 ms x (1 + customers / 20)); free customers at
    5.7 req/s each (--time-scale 6): N x 5.7 x 0.005 x (1 + N/20) = 1 at
    N = 18.3, the truth. The answer must be within 10% (17 to 20
    customers), exit 0; a run the machine starved is measured again, then
    skipped (77)."""
    keys = pool(args, tmp, "free=60")
    truth = (-20 + (400 + 4 * 20 / (5.7 * 0.005)) ** 0.5) / 2
    for attempt in range(2):
        proc, url = fake(5, 0, 20)
        rc, d, err = customers_search(args, tmp, url, keys, [
            "--customers", "free=5", "--time-scale", "6", "--slo", "p90<300ms", "--step", "2s", "--warmup", "1s"])
        stop_process(proc)
        was_starved, line = starved(proc)
        print(line)
        if not check(d is not None, "no report (exit %d)" % rc):
            return None
        s = d["search"]
        free = (s.get("customers") or {}).get("free")
        ok = rc == 0 and free is not None and abs(free - truth) <= 0.1 * truth
        late = [st for st in s["steps"] if st["rate"] <= 120 and st["generator"]["lateness_us"]["p90"] > 50000]
        if (late or was_starved) and not ok:
            if attempt == 0:
                print("the generator or the service ran late: measured again")
                continue
            return "the generator or the service ran late in both searches: the machine is too busy to measure"
        check(ok, "exit %d, free customers %r, truth %.1f (within 10%%)" % (rc, free, truth))
        check(s["knee"] and s["knee"]["highest_passing"]["runs_passed"] == s["knee"]["highest_passing"]["runs"],
              "knee %r" % s["knee"])
        return None
    return None


def case_customers_keys_out(args, tmp):
    """The keys file runs out before the service does: 40 free keys at 1.9
    req/s each (76 req/s) against 500 req/s (2 ms a request; p50 under 1 s
    holds on a loaded machine). Every mix passed, so there is no answer:
    exit 3, result keys-exhausted, saying the keys ran out, never a rate
    multiplied past them."""
    keys = pool(args, tmp, "free=40")
    proc, url = fake(2)
    rc, d, err = customers_search(args, tmp, url, keys, [
        "--customers", "free=10", "--time-scale", "2", "--slo", "p50<1s", "--step", "1s", "--warmup", "500ms"])
    stop_process(proc)
    if not check(d is not None, "no report (exit %d)" % rc):
        return None
    s = d["search"]
    check(rc == 3 and s["result"] == "keys-exhausted", "exit %d result %s" % (rc, s["result"]))
    check([st["customers"]["free"] for st in s["steps"]] == [10, 20, 40], "steps %r" % [st.get("customers") for st in s["steps"]])
    check(all(abs(st["rate"] - st["customers"]["free"] * 1.9) < 0.01 for st in s["steps"]), "a key above its quota")
    check("40 free keys" in (s.get("keys_why") or "") and "the keys ran out" in err, "keys_why %r" % s.get("keys_why"))
    return None


def case_customers_quota(args, tmp):
    """Customers refused below their quota (the server grants the free
    keys 30 a minute, the customers send at 95% of 60): the step fails
    saying so (and, when Retry-After held back over 10%, that its load was
    not offered), however fast the little sent was answered: exit 99."""
    keys = pool(args, tmp, "free=5")
    half = os.path.join(tmp, "half.keys")
    with open(keys) as f, open(half, "w") as g:
        for line in f:
            if not line.startswith("#"):
                g.write("%s enterprise 30 100000000\n" % line.split()[0])
    proc, url = start_server([args.server, "--port", "0", "--keys-file", half, "--time-scale", "60", "--ban-after", "0"],
                             stderr=subprocess.DEVNULL)
    if not check(url is not None, "the reference server did not start"):
        return None
    rc, d, err = customers_search(args, tmp, url, keys, [
        "--customers", "free=5", "--time-scale", "60", "--slo", "p99<5s", "--step", "1s", "--warmup", "1s"])
    stop_process(proc)
    if not check(d is not None, "no report (exit %d)" % rc):
        return None
    s = d["search"]
    why = s["steps"][0]["why"] or ""
    check(rc == 99 and s["result"] == "first-step-failed" and s["customers"] is None,
          "exit %d result %s customers %r" % (rc, s["result"], s.get("customers")))
    check("free customers did not get their quota: admitted" in why, "why %r" % why)
    # 57/s for 2 s a step spends 114 of a free key's 1,000 a day: said first
    check("warning: each free customer spends 114 of its 1000 requests a day in a step" in err, "console: %s" % err[:500])
    # how much Retry-After held back depends on where in its windows each
    # key was refused: the step says so whenever it sent under 90%
    offered = s["steps"][0]["offered_share"]
    check((offered >= 0.9) == ("load not offered" not in why), "offered %s, why %r" % (offered, why))
    return None


def case_gateway_503(args, tmp):
    """A gateway's limiter answering 503 (every third request, no
    X-RateLimit-* headers) in front of a fast service: the plan's row names
    the 503s and never calls them admitted (before: "admitted 12.0/s ... 0
    refused" with a third of the answers 503)."""
    proc, url = fake(1, 3)
    keys = os.path.join(tmp, "k.keys")
    with open(keys, "w") as f:
        f.write("key-1 enterprise 100000 1000000\n")
    out = os.path.join(tmp, "g.json")
    rc, _, err = run([args.load, "--base-url", url, "--keys", keys, "--rate", "60", "--duration", "2s",
                      "--ignore-retry-after", "--error-budget", "100%", "--json", out])
    stop_process(proc)
    d = load_json(out)
    if not check(d is not None, "no report (exit %d): %s" % (rc, err[-400:])):
        return None
    row = d["plans"][0]
    n503 = d["status"].get("503", 0)
    check(n503 > 0 and row.get("unavailable") == n503, "503s %d, row %r" % (n503, row))
    check(row["admitted"] + row["limited"] + row["unavailable"] == d["answered"], "row %r" % row)
    check(abs(row["admitted_rps"] - row["achieved_rps"] * 2 / 3) < 3, "admitted_rps %r" % row)
    check("answered 503 (a limiter's refusal or overload: not admitted)" in err, "console: %s" % err[-600:])
    validate_load_report(args.npm, out)
    return None


def case_plan_thresholds(args, tmp):
    """Per-plan objectives, judged apart on each plan's answers: a free
    key's p99 against 1us fails, a pro key's against 10s passes, each
    reported with its own figure (the plan row's p99): exit 99. A plan's
    error rate and a group name are refused naming the flag."""
    keys = os.path.join(tmp, "k.keys")
    with open(keys, "w") as f:
        f.write("kfree-0001 free\nkpro-00001 pro\n")
    proc, url = start_server([args.server, "--port", "0", "--keys-file", keys], stderr=subprocess.DEVNULL)
    if not check(url is not None, "the reference server did not start"):
        return None
    out = os.path.join(tmp, "p.json")
    rc, _, err = run([args.load, "--base-url", url, "--keys", keys, "--rate", "20", "--duration", "1s",
                      "--threshold", "free.p99<1us", "--threshold", "pro.p99<10s", "--json", out])
    stop_process(proc)
    d = load_json(out)
    if not check(d is not None, "no report (exit %d): %s" % (rc, err[-400:])):
        return None
    check(rc == 99, "exit %d, expected 99 (free.p99<1us)" % rc)
    th = {t["expression"]: t for t in d["thresholds"]}
    rows = {r["plan"]: r for r in d["plans"]}
    check(th["free.p99<1us"]["passed"] is False and th["pro.p99<10s"]["passed"] is True, "thresholds %r" % th)
    for plan, expr in (("free", "free.p99<1us"), ("pro", "pro.p99<10s")):
        check(th[expr]["actual_us"] == rows[plan]["latency_us"]["corrected"]["p99"],
              "%s judged on %s, the plan's p99 is %s" % (expr, th[expr]["actual_us"],
                                                         rows[plan]["latency_us"]["corrected"]["p99"]))
    check("free.p99<1us" in err and "pro.p99<10s" in err, "console: %s" % err[-600:])
    for expr, want in (("pro.error_rate<1%", "a plan's error rate is not measured apart"),
                       ("background.p99<5ms", "'background' is not a plan")):
        rc, _, err = run([args.load, "--base-url", url, "--api-key", "k", "--threshold", expr], timeout=30)
        check(rc == 2 and err.startswith("petstore-load: --threshold: threshold '%s': " % expr) and want in err,
              "%s: %d %r" % (expr, rc, err[:300]))
    return None


def case_compare(args, tmp):
    """petstore-load compare: two runs against a service of 2 ms and one of
    25 ms a request: the second's latency regressed (exit 99, REGRESSED on
    p50); a report against itself has none (exit 0); the knee of two
    searches (max_rate 100 against 80: 20% lower) regressed, within
    --max-regression 25% not; usage errors exit 2."""
    reports = []
    for ms in (2, 25):
        proc, url = fake(ms)
        out = os.path.join(tmp, "run%d.json" % ms)
        rc, _, err = run([args.load, "--base-url", url, "--api-key", "k", "--rate", "20", "--duration", "1s",
                          "--json", out])
        stop_process(proc)
        if not check(rc == 0 and load_json(out), "run at %d ms: exit %d: %s" % (ms, rc, err[-300:])):
            return None
        reports.append(out)
    rc, out, err = run([args.load, "compare"] + reports, timeout=30)
    p50 = [l for l in out.splitlines() if l.strip().startswith("p50 ms")]
    check(rc == 99 and p50 and p50[0].endswith("REGRESSED") and "result: " in out and "(exit 99)" in out,
          "compare 2 ms / 25 ms: exit %d: %s %s" % (rc, out, err))
    rc, out, err = run([args.load, "compare", reports[1], reports[1]], timeout=30)
    check(rc == 0 and "result: no regression (exit 0)" in out and "REGRESSED" not in out, "itself: %d %s" % (rc, out))
    # the knee: the same run as two searches, max_rate 100 then 80
    d = load_json(reports[0])
    knees = []
    for mx in (100, 80):
        d["search"] = {"max_rate": mx}
        path = os.path.join(tmp, "search%d.json" % mx)
        with open(path, "w") as f:
            json.dump(d, f)
        knees.append(path)
    rc, out, err = run([args.load, "compare"] + knees, timeout=30)
    knee = [l for l in out.splitlines() if l.strip().startswith("knee req/s")]
    check(rc == 99 and knee and "-20.0%" in knee[0] and knee[0].endswith("REGRESSED"), "knee: %d %s" % (rc, out))
    rc, out, err = run([args.load, "compare", "--max-regression", "25%"] + knees, timeout=30)
    check(rc == 0, "knee within 25%%: %d %s" % (rc, out))
    see = "see 'petstore-load compare --help'"
    for extra, want in (([reports[0]], "give two reports"),
                        (["--max-regression", "x"] + reports, "--max-regression (percent, 0 to 1000)"),
                        (["--min-delta"] + reports, "--min-delta: ")):
        rc, out, err = run([args.load, "compare"] + extra, timeout=30)
        check(rc == 2 and err.startswith("petstore-load compare: " + want) and err.rstrip().endswith(see),
              "%s: %d %r" % (extra, rc, err))
    junk = os.path.join(tmp, "junk.json")
    with open(junk, "w") as f:
        f.write('{"a": 1}')
    rc, out, err = run([args.load, "compare", junk, reports[0]], timeout=30)
    check(rc == 2 and "not a petstore-load report" in err, "junk: %d %r" % (rc, err))
    rc, out, err = run([args.load, "compare", "--help"], timeout=30)
    check(rc == 0 and out.startswith("usage: petstore-load compare"), "--help: %d" % rc)
    return None


CASES = {"customers_cost": case_customers_cost, "compare": case_compare, "plan_thresholds": case_plan_thresholds, "gateway_503": case_gateway_503, "customers": case_customers, "customers_capacity": case_customers_capacity,
         "customers_keys_out": case_customers_keys_out, "customers_quota": case_customers_quota, "known_capacity": case_known_capacity, "first_fail": case_first_fail, "saturated": case_saturated, "late": case_late,
         "cli": case_cli}


if __name__ == "__main__":
    sys.exit(run_cases(CASES, "lg_search_"))
