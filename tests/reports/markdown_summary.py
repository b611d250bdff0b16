#!/usr/bin/env python3
"""markdown_summary.py - the --summary-md reports, read by a real renderer
(cmark-gfm with GitHub's table extension, as GitHub renders job summaries).

1. Real runs: petstore-conform against a server admitting Limit+1, and
   petstore-load --burst --verify-limits with thresholds against it: each
   summary renders to HTML whose tables carry the verdict, the counts of the
   --json report, the failed check with its level and clause, the limit
   violation (11 of 10) and the thresholds; the curl line to reproduce names
   ${PETSTORE_LIMIT_KEY}, never the key.
2. Hostile text: a report whose message, id and curl line hold markup (HTML,
   '|', emphasis, links, math, a ``` run) renders as that literal text in
   one table cell and one code block, with no tag or link of its making.
3. A real `petstore-load search` summary shows the knee and every step.
4. `petstore-load merge --summary-md` of two real shards renders the merged
   run: its counts match the merged --json, with a failing threshold shown.

usage: markdown_summary.py --server BIN --conform BIN --load BIN --render BIN
Exit 77 (skipped) without cmark-gfm.
"""
import argparse
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import check, exit_status, start_server, stop_process  # noqa: E402

MAIN, LIMIT = "md-main-key-0001", "md-limit-key-0001"


class Page(html.parser.HTMLParser):
    """Tables (rows of cell texts), headings, code blocks and every tag."""

    def __init__(self):
        super().__init__()
        self.tables, self.headings, self.codes, self.tags, self.links = [], [], [], [], []
        self._cell = self._heading = self._code = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag in ("h2", "h3"):
            self._heading = ""
        elif tag == "pre":
            self._code = ""
        elif tag == "a":
            self.links.append(dict(attrs).get("href"))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(self._cell.strip())
            self._cell = None
        elif tag in ("h2", "h3") and self._heading is not None:
            self.headings.append(self._heading.strip())
            self._heading = None
        elif tag == "pre" and self._code is not None:
            self.codes.append(self._code)
            self._code = None

    def handle_data(self, data):
        for attr in ("_cell", "_heading", "_code"):
            if getattr(self, attr) is not None:
                setattr(self, attr, getattr(self, attr) + data)


def render(md_path, unsafe=False):
    """The Markdown file rendered by cmark-gfm (tables on), parsed."""
    argv = ["cmark-gfm", "-e", "table", "-e", "strikethrough", "-e", "autolink"]
    if unsafe:
        argv.append("--unsafe")  # raw HTML passed through: none may be ours to pass
    out = subprocess.run(argv + [md_path], capture_output=True, text=True, timeout=30)
    check(out.returncode == 0, "cmark-gfm renders %s" % md_path)
    p = Page()
    p.feed(out.stdout)
    return p, out.stdout


def table_with(page, header0):
    for t in page.tables:
        if t and t[0] and t[0][0] == header0:
            return t
    return None


def real_runs(a, tmp):
    proc, url = start_server([a.server, "--port", "0", "--time-scale", "30", "--fault", "off-by-one-admission",
                              "--key", MAIN + ":pro", "--key", LIMIT + ":enterprise:10:100000"])
    try:
        if not check(url is not None, "petstore-server printed its URL"):
            return
        env = dict(os.environ, PETSTORE_API_KEY=MAIN, PETSTORE_LIMIT_KEY=LIMIT)
        md, js = os.path.join(tmp, "conform.md"), os.path.join(tmp, "conform.json")
        r = subprocess.run([a.conform, "--base-url", url, "--plan", "pro", "--limit-plan", "enterprise:10:100000",
                            "--quiet", "--json", js, "--summary-md", md], env=env, capture_output=True,
                           text=True, timeout=240)
        check(r.returncode == 1, "petstore-conform against off-by-one: exit 1, got %d" % r.returncode)
        doc = json.load(open(js))
        text = open(md).read()
        page, html_text = render(md)
        check(page.headings and page.headings[0] == "petstore-conform: \u274c fail",
              "conform heading: %r" % page.headings[:1])
        counts = table_with(page, "checks")
        s = doc["summary"]
        check(counts is not None and counts[1] == [str(s[k]) for k in
                                                    ("total", "passed", "failed", "warnings", "not_run",
                                                     "not_applicable")],
              "counts table matches the JSON summary: %r vs %r" % (counts, s))
        failed = [c for su in doc["suites"] for c in su["checks"] if c["status"] == "failed"]
        rows = table_with(page, "check")
        check(rows is not None and len(rows) == 1 + len(failed), "one row per failed check: %r" % rows)
        if rows and failed:
            byid = {r[0]: r for r in rows[1:]}
            for c in failed:
                row = byid.get(c["id"])
                check(row == [c["id"], c["level"], c["clause"], c["message"]],
                      "failed check row %s: %r" % (c["id"], row))
        check(any("limit429" in h or "ratelimit" in h for h in (r[0] for r in (rows or [[]])[1:])),
              "the over-admission is among the failed checks")
        check(any("${PETSTORE_LIMIT_KEY}" in c or "${PETSTORE_API_KEY}" in c for c in page.codes),
              "a curl line to reproduce, with the key as a variable")
        check(MAIN not in text and LIMIT not in text, "no key in the Markdown")
        check(html_text.count("<table>") >= 2, "tables rendered")

        md, js = os.path.join(tmp, "load.md"), os.path.join(tmp, "load.json")
        r = subprocess.run([a.load, "--quiet", "--base-url", url, "--api-key", LIMIT, "--plan",
                            "enterprise:10:100000", "--connections", "16", "--duration", "1s", "--burst",
                            "--verify-limits", "--threshold", "p99<30s", "--threshold", "error_rate<1%",
                            "--json", js, "--summary-md", md], capture_output=True, text=True, timeout=120)
        check(r.returncode == 1, "petstore-load --burst against off-by-one: exit 1, got %d" % r.returncode)
        doc = json.load(open(js))
        page, html_text = render(md)
        check(page.headings and page.headings[0] == "petstore-load: \u274c fail", "load heading %r" % page.headings)
        counts = table_with(page, "requests")
        check(counts is not None and counts[1][:5] == [str(doc[k]) for k in ("scheduled", "answered", "failed",
                                                                               "timed_out")] +
              [str(doc["status"].get("429", 0))], "load counts match the JSON: %r" % counts)
        th = table_with(page, "threshold")
        check(th is not None and [r[0] for r in th[1:]] == ["p99<30s", "error_rate<1%"] and
              all("pass" in r[2] for r in th[1:]), "thresholds table: %r" % th)
        lat = table_with(page, "latency")
        check(lat is not None and lat[1][0] == "corrected" and len(lat[1]) == 6, "latency table: %r" % lat)
        v = table_with(page, "key")
        check(v is not None and len(v) >= 2 and v[1][1] == "over_admission" and v[1][3] == "11" and v[1][4] == "10",
              "violations table: %r" % (v[:2] if v else v))
        check(LIMIT not in open(md).read(), "no key in the load Markdown")
        check("Verdict: <strong>fail</strong>" in html_text, "the limits verdict is shown")
    finally:
        stop_process(proc)


HOSTILE = ("<script>alert(1)</script> | *bold* _it_ [link](http://evil.example) ![i](x) $x^2$ ~~s~~ "
           "&amp; `tick` www.evil.example me@evil.example https://evil.example/x")


def hostile(a, tmp):
    doc = {
        "tool": "petstore-conform", "version": "0.1.0", "verdict": "fail", "exit_code": 1,
        "target": {"base_url": "http://127.0.0.1:1/v1|x`y"}, "duration_s": 1.0,
        "summary": {"total": 1, "passed": 0, "failed": 1, "warnings": 0, "not_run": 0, "not_applicable": 0},
        "aborted": None, "incomplete": None,
        "suites": [{"name": "x", "checks": [{
            "id": "x.``odd|id", "level": "spec", "clause": "spec 8 | *rule*", "status": "failed",
            "message": HOSTILE + "\nsecond line\x07",
            "evidence": {"curl": "curl 'http://x/v1'\n```\n<b>not bold</b>"}}]}],
    }
    src, md = os.path.join(tmp, "hostile.json"), os.path.join(tmp, "hostile.md")
    json.dump(doc, open(src, "w"))
    r = subprocess.run([a.render, "md-conform", src, md], capture_output=True, text=True, timeout=30)
    if not check(r.returncode == 0, "render_report md-conform: %s" % r.stderr):
        return
    for unsafe in (False, True):
        page, out = render(md, unsafe)
        rows = table_with(page, "check")
        check(rows is not None and len(rows) == 2 and len(rows[1]) == 4, "one row of four cells: %r" % rows)
        if rows and len(rows) == 2 and len(rows[1]) == 4:
            check(rows[1][0] == "x.``odd|id", "id cell literal: %r" % rows[1][0])
            check(rows[1][2] == "spec 8 | *rule*", "clause cell literal: %r" % rows[1][2])
            check(rows[1][3] == HOSTILE + " second line", "message cell literal: %r" % rows[1][3])
        check("script" not in page.tags and "b" not in page.tags and "em" not in page.tags and
              "del" not in page.tags and "img" not in page.tags,
              "no tag made from the report's text (unsafe=%s): %r" % (unsafe, sorted(set(page.tags))))
        # GFM links e-mail addresses whatever the escaping (mailto:, harmless); never a web link
        check(not [h for h in page.links if not h.startswith("mailto:")],
              "no web link made from the report's text: %r" % page.links)
        check(any("```\n<b>not bold</b>" in c for c in page.codes), "the curl block kept whole: %r" % page.codes)
        check("<code>http://127.0.0.1:1/v1|x`y</code>" in out, "target shown as code")



def search_run(a, tmp):
    """A real `petstore-load search` (two 1 s steps): its summary shows the
    knee (search.max_rate) and one row per step."""
    proc, url = start_server([a.server, "--port", "0", "--no-seed", "--key",
                              "md-big-key-0001:enterprise:100000000:1000000000"])
    try:
        if not check(url is not None, "petstore-server printed its URL"):
            return
        md, js = os.path.join(tmp, "search.md"), os.path.join(tmp, "search.json")
        r = subprocess.run([a.load, "search", "--quiet", "--base-url", url, "--api-key", "md-big-key-0001",
                            "--slo", "p99<5s", "--slo", "error_rate<50%", "--from", "50", "--to", "100",
                            "--step", "1s", "--warmup", "0s", "--json", js, "--summary-md", md],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode in (0, 3, 99), "petstore-load search ran: exit %d %s" % (r.returncode, r.stderr[-300:]))
        if not check(os.path.exists(md) and os.path.exists(js), "search wrote --json and --summary-md"):
            return
        search = json.load(open(js))["search"]
        page, out = render(md)
        check("Capacity search" in page.headings, "a capacity search section: %r" % page.headings)
        if search.get("max_rate") is not None:
            check("Knee: <strong>%g req/s</strong>" % search["max_rate"] in out, "the knee is max_rate %r" %
                  search.get("max_rate"))
        steps = table_with(page, "rate")
        check(steps is not None and len(steps) == 1 + len(search["steps"]) and
              [r[0] for r in steps[1:]] == ["%g" % st["rate"] for st in search["steps"]],
              "one row per step: %r" % steps)
        check("<code>p99&lt;5s</code>" in out, "the objectives are shown")
    finally:
        stop_process(proc)


def merge_run(a, tmp):
    """Two real shards merged with --summary-md: the counts are the merged
    JSON's, the threshold that fails on the merged latencies is shown failing."""
    key = "md-merge-key-0001"
    proc, url = start_server([a.server, "--port", "0", "--no-seed", "--key", key + ":pro"])
    shards = []
    try:
        if not check(url is not None, "petstore-server printed its URL"):
            return
        for i in (1, 2):
            path = os.path.join(tmp, "shard%d.json" % i)
            r = subprocess.run([a.load, "--quiet", "--base-url", url, "--api-key", key, "--plan", "pro", "--shard",
                                "%d/2" % i, "--connections", "2", "--requests", "40", "--json", path],
                               capture_output=True, text=True, timeout=120)
            check(r.returncode == 0, "shard %d/2: exit %d %s" % (i, r.returncode, r.stderr[-300:]))
            shards.append(path)
    finally:
        stop_process(proc)
    md, js = os.path.join(tmp, "merged.md"), os.path.join(tmp, "merged.json")
    r = subprocess.run([a.load, "merge"] + shards + ["--quiet", "--threshold", "p50<1us", "--json", js,
                                                     "--summary-md", md], capture_output=True, text=True, timeout=60)
    check(r.returncode == 99, "merge with a failing threshold: exit %d (want 99) %s" % (r.returncode, r.stderr[-300:]))
    if not check(os.path.exists(md) and os.path.exists(js), "merge wrote --json and --summary-md"):
        return
    doc = json.load(open(js))
    page, out = render(md)
    check(page.headings and page.headings[0].startswith("petstore-load:") and "fail" in page.headings[0],
          "merged heading %r" % page.headings[:1])
    counts = table_with(page, "requests")
    check(counts is not None and counts[1][:4] == [str(doc[k]) for k in ("scheduled", "answered", "failed",
                                                                         "timed_out")]
          and doc["scheduled"] == 40, "merged counts match the merged JSON: %r" % counts)
    th = table_with(page, "threshold")
    check(th is not None and th[1][0] == "p50<1us" and "fail" in th[1][2].lower(), "thresholds table: %r" % th)


def main():
    ap = argparse.ArgumentParser()
    for f in ("server", "conform", "load", "render"):
        ap.add_argument("--" + f, required=True)
    a = ap.parse_args()
    if not shutil.which("cmark-gfm"):
        print("skipped: needs cmark-gfm", file=sys.stderr)
        return 77
    tmp = tempfile.mkdtemp(prefix="md-summary-")
    try:
        hostile(a, tmp)
        real_runs(a, tmp)
        search_run(a, tmp)
        merge_run(a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
