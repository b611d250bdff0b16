#!/usr/bin/env python3
"""lg_capacity.py - petstore-load's capacity-testing behaviour against the
reference server (docs/capacity-testing.md), one case per ctest:

  schedule     1,000 keys at rate=5 and the same 5,000/s shared round-robin
               (interleaved, in rounds until both kept their schedule; none
               in three: skipped, exit 77) give medians within 2x of each
               other and, when both tails were on time, a per-key p99
               within 2x of the shared one (per-key schedules at spread phases,
               not in lockstep), the generator keeps up, lateness bounded,
               and the console names the target it followed
  saturation   more rate than the generator's share of one CPU can send: the
               generator verdict is saturated, exit 3, no capacity claimed,
               the unsent requests are in no figure of the target
  budget       5% of answers delayed past --timeout: the default 1% error
               budget fails the run (exit 99); --error-budget 20% passes
  scaling      --rate and --ramp over keys that all have a rate of their
               own scale them (never ignored); --warmup is in no figure
  connection_limited  a run that could not get the connections its rate
               needed (--connections 4 against 100 ms answers; 40 file
               descriptors for 200 connections): exit 3, verdict
               connection-limited, no capacity claimed, the reason said
  groups       keys in two groups (group=NAME): each group's offered,
               achieved and admitted rates, share of quota, 429s window full
               and early, windows filled, in the JSON (valid against the
               schema), the console, the Markdown and the HTML

usage: lg_capacity.py CASE --load L --server S [--npm DIR]
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import (check, load_json, run, run_cases, run_starved, start_server, stop_process,  # noqa: E402
                    validate_load_report)


def keys_file(path, n, rate=None, prefix="key"):
    with open(path, "w") as f:
        for i in range(n):
            f.write("%s-%05d enterprise 100000000 1000000000%s\n" % (prefix, i, " rate=%g" % rate if rate else ""))


def server(args, tmp, n_keys=1000, prefix=()):
    plain = os.path.join(tmp, "server.keys")
    keys_file(plain, n_keys)
    with open(plain, "a") as f:
        for i in range(n_keys):
            f.write("other-%05d enterprise 100000000 1000000000\n" % i)
    proc, url = start_server(list(prefix) + [args.server, "--port", "0", "--keys-file", plain], stderr=subprocess.DEVNULL)
    check(url is not None, "the reference server did not start")
    return proc, url


def case_schedule(args, tmp):
    proc, url = server(args, tmp)
    if not url:
        return
    own, shared = os.path.join(tmp, "own.keys"), os.path.join(tmp, "shared.keys")
    keys_file(own, 1000, rate=5)
    keys_file(shared, 1000, prefix="other")
    # Interleaved, in rounds, until both runs of a round kept their schedule
    # (90% of requests within 5 ms of their due time): a machine too busy
    # for that measures its own stalls, which the corrected latency counts,
    # not the schedules (then: skipped; test_lg_schedule proves the spread
    # phases without timing). The tails are compared only when 99% were
    # within 10 ms.
    compared = False
    for rnd in range(3):
        pair = {}
        for name, keys, extra in (("per-key", own, []), ("shared", shared, ["--rate", "5000"])):
            out = os.path.join(tmp, "%s-%d.json" % (name, rnd))
            rc, _, err = run([args.load, "--base-url", url, "--keys", keys, "--connections", "32", "--duration", "2s",
                              "--json", out] + extra)
            d = load_json(out)
            if not d:
                continue
            g = d["generator"]
            check(rc == 0 or (rc == 3 and g["verdict"] == "saturated"), "%s: exit %d: %s" % (name, rc, err[-600:]))
            check(abs(g["target_rps"] - 5000) < 50, "%s: target %.1f/s, expected 5000" % (name, g["target_rps"]))
            check("of 5000/s target" in err or "of 5000.0/s due" in err,
                  "%s: the console does not name the 5000/s target: %s" % (name, err[:400]))
            print("round %d %s: exit %d, generator %s, sent %d, lateness p90 %d us, p99 %d us; latency p50 %d us, "
                  "p99 %d us" % (rnd, name, rc, g["verdict"], g["sent"], g["lateness_us"]["p90"], g["lateness_us"]["p99"],
                                 d["latency_us"]["corrected"]["p50"], d["latency_us"]["corrected"]["p99"]))
            if rc == 0 and g["verdict"] == "ok" and g["lateness_us"]["p90"] <= 5000:
                pair[name] = d
        if len(pair) < 2:
            continue
        a, b = (pair[n]["latency_us"]["corrected"] for n in ("per-key", "shared"))
        for n in ("per-key", "shared"):
            g = pair[n]["generator"]
            check(g["sent"] >= 9500, "%s: sent %d of 10000" % (n, g["sent"]))
        # In lockstep 1,000 keys fire together every 200 ms: a burst takes tens
        # of ms to drain, so its median is ms (9.7 ms against 0.07 ms here).
        # The medians within 2x of each other, unless both are under 1 ms;
        # the per-key p99 at most 2x the shared one, unless under 20 ms (a
        # loaded machine's tail is noise, either way).
        x, y = a["p50"], b["p50"]
        check(max(x, y) <= 2 * min(x, y) or max(x, y) < 1000,
              "p50 per-key %d us vs shared %d us: not within 2x (nor both under 1 ms)" % (x, y))
        if all(pair[n]["generator"]["lateness_us"]["p99"] <= 10000 for n in pair):
            check(a["p99"] <= 2 * b["p99"] or a["p99"] < 20000,
                  "p99 per-key %d us over twice the shared %d us (and over 20 ms)" % (a["p99"], b["p99"]))
        else:
            print("tails not compared: a generator's lateness p99 was over 10 ms")
        compared = True
        break
    stop_process(proc)
    return None if compared else "no round where both runs kept their schedule: the machine is too busy"


def cpus():
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:
        return [0]


def case_saturation(args, tmp):
    # The server gets a CPU of its own; the generator, at nice 19, shares
    # another with two busy loops, so it gets about 1% of a CPU (the server,
    # even on a loaded machine, far more), is always running or waiting to
    # run, and the server waits on it.
    cs = cpus()
    srv_cpu, gen_cpu = str(cs[0]), str(cs[-1])
    proc, url = server(args, tmp, n_keys=10, prefix=("taskset", "-c", srv_cpu))
    if not url:
        return
    out = os.path.join(tmp, "sat.json")
    rc, _, err = run_starved([args.load, "--base-url", url, "--api-key", "key-00000", "--connections", "64",
                              "--rate", "20000", "--duration", "2s", "--json", out], gen_cpu)
    stop_process(proc)
    check(rc == 3, "saturated run: exit %d, expected 3: %s" % (rc, err[-800:]))
    d = load_json(out)
    if not d:
        return
    g = d["generator"]
    print("saturation: sent %.0f/s of %.0f/s, busy %s, unsent %d" % (g["send_rate_rps"], g["target_rps"],
                                                                     g["busy_share"], g["unsent"]))
    check(g["verdict"] == "saturated", "generator verdict %s, expected saturated: %s" % (g["verdict"], g["why"]))
    check(d["verdict"] == "saturated" and d["exit_code"] == 3, "verdict %s exit %d" % (d["verdict"], d["exit_code"]))
    check(g["unsent"] > 0 and g["send_rate_rps"] < 0.9 * g["target_rps"], "nothing unsent: %r" % g)
    check(d["timed_out"] == 0 and d["error_budget"]["passed"], "unsent requests counted against the target: %r" % d["error_budget"])
    check(d["accounting_exact"], "accounting not exact")
    check("saturated" in err and "could not keep its schedule" in err, "console: %s" % err[-600:])


def case_generator_late(args, tmp):
    """A generator kept late by its CPU (nice 19 beside two busy loops on its
    own CPU: busy about 90% of the time) at a rate it still sends in full
    (200/s): its lateness breaks p99<1ms before the target answers. Every failed threshold lost to the
    generator: exit 3, verdict generator-late, the reason naming the figures,
    never exit 99 blaming the target (its p99 is well under 1 ms; before:
    exit 99). A target whose own latency breaks the bound (p99<1us, the
    generator unhindered) still fails, exit 99."""
    cs = cpus()
    if len(cs) < 2:
        print("skipped: needs 2 CPUs", file=sys.stderr)
        sys.exit(77)
    srv_cpu, gen_cpu = str(cs[0]), str(cs[-1])
    proc, url = server(args, tmp, n_keys=1, prefix=("taskset", "-c", srv_cpu))
    if not url:
        return
    out = os.path.join(tmp, "late.json")
    base = [args.load, "--base-url", url, "--api-key", "key-00000", "--connections", "64", "--rate", "200",
            "--duration", "2s", "--warmup", "500ms"]
    rc, _, err = run_starved(base + ["--threshold", "p99<1ms", "--json", out], gen_cpu)
    d = load_json(out)
    if d:
        g, th = d["generator"], d["thresholds"][0]
        print("late generator: busy %s, lateness p99 %s us, corrected p99 %s us, own p99 %s us"
              % (g["busy_share"], th["lateness_us"], th["actual_us"], th["own_us"]), file=sys.stderr)
        if g["verdict"] != "ok" or th["lateness_us"] < 1000 or (g["busy_share"] or 0) < 0.7:
            print("skipped: the generator was %s (lateness p99 %d us): nothing to judge"
                  % (g["verdict"], th["lateness_us"]), file=sys.stderr)
            stop_process(proc)
            sys.exit(77)
        check(rc == 3 and d["verdict"] == "generator-late" and th["lost_to_generator"],
              "a late generator: exit %d, verdict %s, threshold %r: %s" % (rc, d["verdict"], th, err[-600:]))
        check("p99<1ms" in (d["aborted"] or "") and "lateness" in (d["aborted"] or "") and "generator-late" in err,
              "the reason: %r; console %s" % (d["aborted"], err[-400:]))
        validate_load_report(args.npm, out)
    else:
        check(False, "no report (exit %d): %s" % (rc, err[-500:]))
    # the target's own latency breaks p99<1us while the generator keeps up: the target's
    # failure (exit 99); only a generator busy 70% of the time (not at 200/s unhindered,
    # even beside a loaded ctest) would make it the generator's
    rc, _, err = run(base + ["--threshold", "p99<1us", "--json", out])
    stop_process(proc)
    d = load_json(out)
    if check(d is not None, "no report (exit %d)" % rc):
        th, g = d["thresholds"][0], d["generator"]
        starved = (g["busy_share"] or 0) >= 0.7
        print("p99<1us: busy %s, cpu %s s, waiting for a CPU %s s"
              % (g["busy_share"], g["thread_cpu_s"], g["runqueue_wait_s"]), file=sys.stderr)
        if starved:
            check(rc == 3 and th["lost_to_generator"], "p99<1us, a starved generator: exit %d, %r" % (rc, th))
        else:
            check(rc == 99 and d["verdict"] == "fail" and not th["lost_to_generator"],
                  "p99<1us: exit %d, verdict %s, %r" % (rc, d["verdict"], th))


def case_budget(args, tmp):
    plain = os.path.join(tmp, "server.keys")
    keys_file(plain, 1)
    proc, url = start_server([args.server, "--port", "0", "--keys-file", plain, "--delay", "0.05:2s"],
                             stderr=subprocess.DEVNULL)
    if not check(url is not None, "server did not start"):
        return
    common = [args.load, "--base-url", url, "--api-key", "key-00000", "--connections", "64", "--rate", "200",
              "--duration", "2s", "--timeout", "300ms"]
    out = os.path.join(tmp, "budget.json")
    rc, _, err = run(common + ["--json", out])
    d = load_json(out)
    check(rc == 99, "5%% timeouts under the default 1%% budget: exit %d, expected 99: %s" % (rc, err[-500:]))
    if d:
        check(not d["error_budget"]["passed"] and d["error_budget"]["budget"] == 0.01, "error_budget %r" % d["error_budget"])
        check(d["timed_out"] > 4, "timed out %d" % d["timed_out"])
        check(d["verdict"] == "fail", "verdict %s" % d["verdict"])
    check("error budget: FAIL" in err, "console says nothing of the budget: %s" % err[-500:])
    rc, _, err = run(common + ["--error-budget", "20%", "--json", out])
    stop_process(proc)
    d = load_json(out)
    check(rc == 0, "under --error-budget 20%%: exit %d: %s" % (rc, err[-500:]))
    if d:
        check(d["error_budget"]["passed"] and d["error_budget"]["budget"] == 0.2, "error_budget %r" % d["error_budget"])


def case_scaling(args, tmp):
    proc, url = server(args, tmp, n_keys=20)
    if not url:
        return
    own = os.path.join(tmp, "own.keys")
    keys_file(own, 20, rate=1)  # 20/s in all
    out = os.path.join(tmp, "scale.json")
    rc, _, err = run([args.load, "--base-url", url, "--keys", own, "--rate", "400", "--duration", "2s", "--json", out])
    d = load_json(out)
    check(rc == 0, "--rate over per-key rates: exit %d: %s" % (rc, err[-500:]))
    if d:
        check(d["parameters"]["key_rate_scale"] == [20, 20], "key_rate_scale %r" % d["parameters"]["key_rate_scale"])
        g = d["generator"]
        check(g["sent"] + g["unsent"] == 800 and abs(g["target_rps"] - 400) < 1,
              "due %d at %.1f/s, expected 800 at 400/s: %r" % (g["sent"] + g["unsent"], g["target_rps"], g))
        check("of 400/s target" in err, "console target: %s" % err[:300])
    rc, _, err = run([args.load, "--base-url", url, "--keys", own, "--ramp", "100:300", "--duration", "2s", "--json", out])
    d = load_json(out)
    check(rc == 0, "--ramp over per-key rates: exit %d: %s" % (rc, err[-500:]))
    if d:
        check(d["parameters"]["key_rate_scale"] == [5, 15], "key_rate_scale %r" % d["parameters"]["key_rate_scale"])
        g = d["generator"]
        check(395 <= g["sent"] + g["unsent"] <= 400, "ramp due %d, expected 400: %r" % (g["sent"] + g["unsent"], g))
        check("of a 100 to 300/s ramp" in err, "console ramp: %s" % err[:300])
    # --warmup: sent, in no figure; --intervals-jsonl: the JSON's intervals, a line each
    jsonl = os.path.join(tmp, "iv.jsonl")
    rc, _, err = run([args.load, "--base-url", url, "--api-key", "key-00000", "--rate", "200", "--warmup", "1s",
                      "--duration", "1s", "--json", out, "--intervals-jsonl", jsonl])
    stop_process(proc)
    d = load_json(out)
    check(rc == 0, "--warmup: exit %d: %s" % (rc, err[-500:]))
    if d:
        check(d["scheduled"] == 200 and d["generator"]["warmup_requests"] == 200,
              "warm-up counted: scheduled %d, warmup_requests %d" % (d["scheduled"], d["generator"]["warmup_requests"]))
        check(d["latency_us"]["corrected"]["count"] == 200, "latency count %d" % d["latency_us"]["corrected"]["count"])
        check(0.9 < d["duration_s"] < 1.5, "duration %.3f s, expected the measured 1 s" % d["duration_s"])
        check(d["parameters"]["warmup_s"] == 1, "warmup_s %r" % d["parameters"]["warmup_s"])
        try:
            lines = [json.loads(ln) for ln in open(jsonl)]
        except (OSError, ValueError) as e:
            lines = []
            check(False, "--intervals-jsonl unreadable: %s" % e)
        check(lines == d["intervals"], "--intervals-jsonl %r differs from intervals %r" % (lines[:3], d["intervals"][:3]))


def case_burst_progress(args, tmp):
    # --burst waits for a window reset before its schedule begins: the
    # progress says so instead of "0 req/s", and never counts past the total
    proc, url = server(args, tmp, n_keys=2)
    if not url:
        return None
    stop_process(proc)
    plain = os.path.join(tmp, "server.keys")
    proc, url = start_server([args.server, "--port", "0", "--keys-file", plain, "--time-scale", "60"],
                             stderr=subprocess.DEVNULL)
    if not check(url is not None, "server did not start"):
        return None
    rc, _, err = run([args.load, "--base-url", url, "--api-key", "key-00000", "--burst", "--connections", "4",
                      "--duration", "2s", "--progress-interval", "1s"])
    stop_process(proc)
    check(rc == 0, "burst run: exit %d: %s" % (rc, err[-400:]))
    lines = [ln for ln in err.splitlines() if ln.startswith("petstore-load: ") and ("s/" in ln or "waiting" in ln)]
    print("\n".join(lines))
    for ln in lines:
        if "waiting for a window reset" in ln:
            check("req/s" not in ln, "waiting line shows a rate: %r" % ln)
            continue
        done = ln.split()[1]  # "Ns/Ts"
        n, t = done.rstrip("s").split("s/")
        check(int(n) <= int(t) == 2, "progress past the total: %r" % ln)
    check(any("s/2s" in ln for ln in lines), "no progress line: %r" % err[:400])
    return None


def case_groups(args, tmp):
    """Key groups: two free keys at 4/3 of their quota (group background)
    and two probe keys well under theirs; the reference server's windows
    run 30 times faster, so the background windows fill in the run (the
    generator keeps sending after a 429: --ignore-retry-after)."""
    keys = os.path.join(tmp, "groups.keys")
    with open(keys, "w") as f:
        f.write("bg-key-000001 free rate=40 group=background\n"
                "bg-key-000002 free rate=40 group=background\n"
                "probe-key-001 free rate=2 group=probe\n"
                "probe-key-002 pro rate=3 group=probe\n")
    proc, url = start_server([args.server, "--port", "0", "--keys-file", keys, "--time-scale", "30",
                              "--ban-after", "0"], stderr=subprocess.DEVNULL)
    if not check(url is not None, "server did not start"):
        return None
    out, md, html = (os.path.join(tmp, "groups." + x) for x in ("json", "md", "html"))
    rc, _, err = run([args.load, "--base-url", url, "--keys", keys, "--duration", "4s", "--time-scale", "30", "--connections", "32",
                      "--verify-limits", "--ignore-retry-after", "--json", out, "--summary-md", md, "--html", html])
    stop_process(proc)
    d = load_json(out)
    if not d:
        return None
    if d["generator"]["verdict"] == "saturated":
        return "the generator saturated at 85 req/s: the machine is too busy"
    check(rc == 0, "exit %d: %s" % (rc, err[-1500:]))
    validate_load_report(args.npm, out)
    groups = {g["group"]: g for g in d.get("groups", [])}
    check(set(groups) == {"background", "probe"}, "groups %r" % sorted(groups))
    if set(groups) != {"background", "probe"}:
        return None
    bg, probe = groups["background"], groups["probe"]
    check(bg["keys"] == 2 and bg["plans"] == ["free"], "background: %r" % bg)
    check(probe["keys"] == 2 and sorted(probe["plans"]) == ["free", "pro"], "probe: %r" % probe)
    check(bg["sent"] + probe["sent"] == d["generator"]["sent"], "group sent counts do not add up")
    check(bg["admitted"] + bg["limited"] + probe["admitted"] + probe["limited"] == d["answered"],
          "group answers do not add up")
    # 80/s asked of 60/min x 30 = 30/s per key: 4/3 of quota, a third refused
    check(1.0 < bg["quota_share"] < 1.6, "background quota share %r" % bg["quota_share"])
    check(probe["quota_share"] < 0.2, "probe quota share %r" % probe["quota_share"])
    check(abs(bg["offered_rps"] - bg["sent"] / 4.0) < 0.01, "offered_rps is not sent per measured second")
    check(bg["limited"] > 0 and bg["refused_correct"] == bg["limited"] and bg["refused_early"] == 0,
          "the reference server refuses only full windows: %r" % bg)
    check(bg["windows_filled"] >= 2, "background windows filled %r" % bg["windows_filled"])
    check(probe["limited"] == 0 and probe["refused_early"] == 0, "probe refused: %r" % probe)
    free = [p for p in d["plans"] if p["plan"] == "free"][0]
    check(free["refused_correct"] == bg["refused_correct"] + probe["refused_correct"], "plan free's refusals")
    check("group background: 2 keys" in err and "window full" in err, "console: %s" % err[-1500:])
    with open(md) as f:
        text = f.read()
    check("| group background | 2 |" in text and "| plan free | 3 |" in text, "markdown: %s" % text[-1200:])
    with open(html) as f:
        text = f.read()
    check('data-group="background"' in text and 'data-plan="free"' in text, "HTML has no capacity rows")
    # the keys file's group is optional: the same file without groups has no groups[]
    with open(keys) as f:
        plain = f.read().replace(" group=background", "").replace(" group=probe", "")
    with open(keys, "w") as f:
        f.write(plain)
    proc, url = start_server([args.server, "--port", "0", "--keys-file", keys], stderr=subprocess.DEVNULL)
    if not check(url is not None, "server did not start (keys without groups)"):
        stop_process(proc)
        return None
    rc, _, err = run([args.load, "--base-url", url, "--keys", keys, "--duration", "1s", "--json", out, "--quiet"])
    stop_process(proc)
    d = load_json(out)
    check(d is not None and "groups" not in d, "a keys file without group= still reports groups")
    return None


def case_connection_limited(args, tmp):
    """Runs that could not get the connections the rate needed claim no
    capacity: exit 3, verdict connection-limited (saturated only when the
    generator itself says it ran out of CPU)."""
    import resource
    plain = os.path.join(tmp, "server.keys")
    keys_file(plain, 1)
    # every answer 100 ms late: a connection carries 10 req/s at most
    proc, url = start_server([args.server, "--port", "0", "--keys-file", plain, "--delay", "1:100ms"],
                             stderr=subprocess.DEVNULL)
    if not check(url is not None, "server did not start"):
        return None
    out = os.path.join(tmp, "limited.json")
    common = [args.load, "--base-url", url, "--api-key", "key-00000", "--duration", "2s", "--json", out]
    skip = None
    # 1. --connections 4 for 400 req/s: about 40 req/s (10%) can be sent
    rc, _, err = run(common + ["--rate", "400", "--connections", "4"])
    d = load_json(out)
    if d:
        check(rc == 3 and d["exit_code"] == 3 and d["verdict"] in ("connection-limited", "saturated"),
              "--connections 4 at 400/s: exit %d, verdict %s: %s" % (rc, d["verdict"], err[-800:]))
        if d["generator"]["verdict"] == "saturated":
            skip = "the generator saturated: the machine is too busy to tell"
        else:
            check(d["verdict"] == "connection-limited" and d["generator"]["verdict"] == "connection-limited",
                  "verdict %s, generator %s" % (d["verdict"], d["generator"]["verdict"]))
            check(d["generator"]["send_rate_rps"] < 0.5 * 400, "send rate %r" % d["generator"]["send_rate_rps"])
            check("verdict: connection-limited (exit 3)" in err and "raise --connections" in err,
                  "console: %s" % err[-800:])
        validate_load_report(args.npm, out)

    # 2. 200 connections asked with 40 descriptors: about 30 open, 300 of 600 req/s
    def low_nofile():
        resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    p = subprocess.run(common + ["--rate", "600", "--connections", "200"], capture_output=True, timeout=120,
                       env=env, preexec_fn=low_nofile)
    stop_process(proc)
    err = p.stderr.decode("utf-8", "replace")
    d = load_json(out)
    if d:
        check(p.returncode == 3 and d["verdict"] in ("connection-limited", "saturated"),
              "40 descriptors for 200 connections: exit %d, verdict %s: %s" % (p.returncode, d["verdict"], err[-800:]))
        if d["generator"]["verdict"] == "saturated":
            skip = "the generator saturated: the machine is too busy to tell"
        else:
            check(d["verdict"] == "connection-limited", "verdict %s" % d["verdict"])
            check("could not open the connections it needed" in (d["generator"]["why"] or ""),
                  "why: %r" % d["generator"]["why"])
            check("first failure: cannot open a socket: Too many open files" in err, "console: %s" % err[-800:])
    return skip


CASES = {"generator_late": case_generator_late, "connection_limited": case_connection_limited, "groups": case_groups, "burst_progress": case_burst_progress, "schedule": case_schedule, "saturation": case_saturation, "budget": case_budget, "scaling": case_scaling}


if __name__ == "__main__":
    sys.exit(run_cases(CASES, "lg_capacity_"))
