#!/usr/bin/env python3
"""action_test.py - the repository's GitHub Action (action.yml) and the two
GitHub jobs of docs/ci-gate.md, run the way a runner runs them, against the
bundled server.

Every `run:` script is taken from the YAML as written and run as GitHub
runs it: `shell: bash` as `bash --noprofile --norc -eo pipefail FILE`, no
shell as `bash -e FILE`, in the job's workspace, with GITHUB_OUTPUT (a fresh
file per step), GITHUB_STEP_SUMMARY, GITHUB_PATH, GITHUB_ENV, RUNNER_TEMP,
GITHUB_JOB/RUN_ID/RUN_ATTEMPT set and `${{ ... }}` expressions (inputs,
steps' outputs, secrets, github, strategy, runner, hashFiles) substituted.
A step's `if:` is judged (always(), success(), failure(), == and !=). A
composite action's steps see its inputs (with defaults) and its own steps.

`uses:` steps are not fetched (nothing here touches the network); each is
played by what it does: actions/checkout copies a stand-in repository (a
CA file at .ci/staging-ca.pem), actions/cache restores the executable of
this build tree (a cache hit), actions/upload-artifact records its name and
folder and fails on a name already used in the run, as v4 does, and
OWNER/petstore-conform@... runs action.yml. Third-party actions must be
pinned by a full commit SHA with the tag in a comment. apt-get and sudo are
stand-ins that record their arguments (the packages are installed here).

Cases (each job's summary must be non-empty, and rendered by cmark-gfm):
the Action passing (its .deb from a loopback HTTP server, sha256 checked),
failing (exit 1, the summary naming the failed checks), misconfigured (exit
2, verdict none: an unknown flag; args with an unbalanced quote; a given
artifact-name used as is), with a wrong deb-sha256 (the install fails, nothing
runs); the docs' Action workflow (checkout, the build cache) failing; the
docs' by-hand job as two matrix legs, passing and failing, whose artifacts
must not collide. No report may hold a key.

usage: action_test.py --build DIR --source DIR --server BIN
Exit 77 (skipped) without python3-yaml, cmark-gfm, cpack, dpkg-deb, curl
or openssl.
"""
import argparse
import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import check, exit_status, make_ca, start_server, stop_process  # noqa: E402

MAIN, LIMIT = "act-main-key-0001", "act-limit-key-0001"
SECRETS = {"PETSTORE_STAGING_KEY": MAIN, "PETSTORE_STAGING_FREE_KEY": LIMIT,
           "STAGING_KEY": MAIN, "STAGING_FREE_KEY": LIMIT}
STAGING = "https://staging.petstore.example/v1"
REPORTS = sorted("conformance." + e for e in ("json", "junit.xml", "tap", "html", "md"))
PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s*actions/[\w-]+@[0-9a-f]{40}\s+#\s*v\d+(\.\d+)*\s*$")


class Run:
    """One workflow run: what its jobs share (artifact names, the tools)."""

    def __init__(self, a, tmp, name, server_url):
        self.a, self.tmp, self.url = a, tmp, server_url
        self.artifacts = {}
        self.stubs = os.path.join(tmp, name + "-stubs")
        self.apt_log = os.path.join(tmp, name + "-apt.log")
        os.makedirs(self.stubs, exist_ok=True)
        for tool in ("apt-get", "sudo"):
            with open(os.path.join(self.stubs, tool), "w") as f:
                # sudo runs its command; apt-get records what it was asked
                f.write('#!/bin/sh\n' + ('exec "$@"\n' if tool == "sudo" else
                                         'echo "apt-get $*" >>"%s"\n' % self.apt_log))
            os.chmod(os.path.join(self.stubs, tool), 0o755)


class Job:
    """One job's runner state: workspace, RUNNER_TEMP, the GITHUB_* files."""

    def __init__(self, run, name, ctx):
        self.run, self.name, self.ctx = run, name, ctx
        self.root = os.path.join(run.tmp, name)
        self.work = os.path.join(self.root, "workspace")
        self.temp = os.path.join(self.root, "runner-temp")
        os.makedirs(self.work)
        os.makedirs(self.temp)
        self.files = {n: os.path.join(self.root, n) for n in ("path", "summary", "env")}
        for f in self.files.values():
            open(f, "w").close()
        self.path_dirs, self.failed, self.log = [], False, []
        self.uploads = []

    def summary(self):
        return open(self.files["summary"]).read()


def evaluate(expr, scope):
    """One `${{ }}` expression's value as the runner gives it, from scope."""
    expr = expr.strip()
    m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
    if m:
        return scope["steps"].get(m.group(1), {}).get(m.group(2), "")
    if expr.startswith("hashFiles("):
        return "0123456789abcdef"  # the workspace's hash: any fixed value plays it here
    head, _, rest = expr.partition(".")
    table = scope.get(head)
    if table is None or rest not in table:
        raise ValueError("expression the test does not know: " + expr)
    return table[rest]


def expand(text, scope):
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(evaluate(m.group(1), scope)), str(text))


def condition(cond, scope, failed):
    """A step's if: (default success()); a condition without a status
    function runs only when nothing failed, as GitHub's does."""
    cond = re.sub(r"^\$\{\{(.*)\}\}$", r"\1", str(cond or "success()").strip()).strip()
    status = {"always()": True, "success()": not failed, "failure()": failed}
    if cond in status:
        return status[cond]
    m = re.fullmatch(r"([\w.-]+)\s*(==|!=)\s*'([^']*)'", cond)
    if not m:
        raise ValueError("if: the test does not know: " + cond)
    value = evaluate(m.group(1), scope)
    return not failed and ((value == m.group(3)) == (m.group(2) == "=="))


def run_script(job, step, scope, env_extra, label):
    """A run: step as GitHub runs it; returns its exit status and outputs."""
    script = os.path.join(job.root, "step-%s.sh" % label)
    with open(script, "w") as f:
        f.write(expand(step["run"], scope))
    output = os.path.join(job.root, "output-%s" % label)
    open(output, "w").close()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "GITHUB_", "INPUT_"))}
    env.update({"GITHUB_PATH": job.files["path"], "GITHUB_OUTPUT": output, "GITHUB_ENV": job.files["env"],
                "GITHUB_STEP_SUMMARY": job.files["summary"], "GITHUB_WORKSPACE": job.work,
                "GITHUB_JOB": job.ctx["github"]["job"], "GITHUB_RUN_ID": job.ctx["github"]["run_id"],
                "GITHUB_RUN_ATTEMPT": job.ctx["github"]["run_attempt"], "RUNNER_TEMP": job.temp,
                "RUNNER_NAME": "act-runner", "CI": "true", "GITHUB_ACTIONS": "true",
                "PATH": os.pathsep.join(job.path_dirs + [job.run.stubs, env.get("PATH", "/usr/bin:/bin")])})
    if "action_path" in scope["github"]:
        env["GITHUB_ACTION_PATH"] = scope["github"]["action_path"]
    env.update(env_extra)
    env.update({k: expand(v, scope) for k, v in (step.get("env") or {}).items()})
    shell = step.get("shell")
    check(shell in (None, "bash"), "%s: step %r runs in bash" % (job.name, step.get("name")))
    argv = ["bash", "--noprofile", "--norc", "-eo", "pipefail", script] if shell == "bash" else ["bash", "-e", script]
    try:
        r = subprocess.run(argv, env=env, cwd=job.work, capture_output=True, text=True, timeout=240)
        rc, out = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        rc, out = -1, "timed out"
    job.log.append(out)
    print("%s: step %r exit %d" % (job.name, step.get("name") or step["run"][:40], rc), file=sys.stderr)
    if rc != 0:
        print(out[-2000:], file=sys.stderr)
    # GITHUB_PATH lines apply to the steps after this one, newest first
    job.path_dirs = [l.strip() for l in reversed(open(job.files["path"]).read().splitlines()) if l.strip()]
    outputs = {}
    for line in open(output):
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            outputs[k] = v
    return rc, outputs


def play_uses(job, step, scope, env_extra, cache_hit):
    """A uses: step played by what it does; returns (status, outputs)."""
    uses = step["uses"]
    with_ = {k: expand(v, scope) for k, v in (step.get("with") or {}).items()}
    if uses.startswith("actions/checkout@"):
        shutil.copytree(os.path.join(job.run.tmp, "repo"), job.work, dirs_exist_ok=True)
        return 0, {}
    if uses.startswith("actions/cache@"):
        if not cache_hit:
            return 0, {"cache-hit": "false"}
        dest = os.path.join(job.work, with_["path"])
        dest = os.path.join(dest, "petstore-conform") if not dest.endswith("petstore-conform") else dest
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy2(os.path.join(job.run.a.build, "bin", "petstore-conform"), dest)
        return 0, {"cache-hit": "true"}
    if uses.startswith("actions/upload-artifact@"):
        name, path = with_.get("name", ""), os.path.join(job.work, with_.get("path", ""))
        job.uploads.append((name, path))
        if not check(name and name not in job.run.artifacts,
                     "%s: artifact name %r is new in the run (upload-artifact v4 refuses a second): %r"
                     % (job.name, name, sorted(job.run.artifacts))):
            return 1, {}
        job.run.artifacts[name] = path
        return 0, {}
    if re.match(r"[\w-]+/petstore-conform@", uses):
        env = dict(env_extra)
        env.update({k: expand(v, scope) for k, v in (step.get("env") or {}).items()})
        with_.update(job.ctx.get("override", {}))
        outcomes, outputs = run_action(job, with_, env, cache_hit)
        return (1 if any(o[1] not in (0, "skipped") for o in outcomes) else 0), outputs
    raise ValueError("uses: the test does not know: " + uses)


def run_steps(job, steps, scope, env_extra, cache_hit, prefix=""):
    """Runs steps in order; returns [(name, status)], status an exit code or "skipped"."""
    outcomes = []
    for i, step in enumerate(steps):
        name = step.get("name") or step.get("uses") or step["run"][:40]
        if not condition(step.get("if"), scope, job.failed):
            outcomes.append((name, "skipped"))
            continue
        if "uses" in step:
            rc, outputs = play_uses(job, step, scope, env_extra, cache_hit)
        else:
            rc, outputs = run_script(job, step, scope, env_extra, "%s%d" % (prefix, i))
        job.failed = job.failed or rc != 0
        outcomes.append((name, rc))
        if step.get("id"):
            scope["steps"][step["id"]] = outputs
    return outcomes


def run_action(job, with_inputs, env, cache_hit):
    """The composite action's steps with these inputs; returns (outcomes, its outputs)."""
    action = job.run.action
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    unknown = set(with_inputs) - set(inputs)
    check(not unknown, "%s: the Action has the inputs given to it: %r" % (job.name, unknown))
    inputs.update(with_inputs)
    scope = {"inputs": inputs, "steps": {}, "secrets": {},
             "github": dict(job.ctx["github"], action_path=job.run.a.source)}
    outcomes = run_steps(job, action["runs"]["steps"], scope, env, cache_hit, prefix="a")
    job.action_outcomes = outcomes
    return outcomes, {k: expand(v["value"], scope) for k, v in action["outputs"].items()}


def workflow_job(run, name, steps, job_index=0, cache_hit=True, override=None):
    """A job of a workflow: steps with the workflow's contexts."""
    ctx = {"github": {"job": "conform", "run_id": "4242", "run_attempt": "1", "event_name": "workflow_dispatch"},
           "override": override or {}}
    job = Job(run, name, ctx)
    scope = {"github": ctx["github"], "secrets": SECRETS, "steps": {},
             "strategy": {"job-index": str(job_index)}, "runner": {"arch": "X64", "temp": job.temp}}
    # the job's own env has the service where the docs say staging
    env = {}
    for s in steps:
        for k, v in (s.get("env") or {}).items():
            if v == STAGING:
                s["env"][k] = run.url
    job.outcomes = run_steps(job, steps, scope, env, cache_hit)
    job.outputs = scope["steps"]
    return job


def render(md_text, tmp, name):
    p = os.path.join(tmp, name + ".md")
    with open(p, "w") as f:
        f.write(md_text)
    r = subprocess.run(["cmark-gfm", "-e", "table", p], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "cmark-gfm renders the job summary")
    return r.stdout


def check_reports(name, folder, summary, tmp, want_verdict, files=REPORTS):
    """The reports uploaded and the summary rendered agree with the JSON; no key anywhere."""
    have = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    if not check(have == sorted(files), "%s: the uploaded folder holds %r: %r" % (name, files, have)):
        return
    page = render(summary, tmp, name)
    json_name = [f for f in files if f.endswith(".json")][0]
    doc = json.load(open(os.path.join(folder, json_name)))
    check(doc["verdict"] == want_verdict, "%s: the JSON's verdict %r" % (name, doc["verdict"]))
    mark = "\u2705" if want_verdict == "pass" else "\u274c"
    check("<h2>petstore-conform: %s %s</h2>" % (mark, want_verdict) in page, "%s: summary heading" % name)
    s = doc["summary"]
    row = "".join('<td align="right">%d</td>\n' % s[k] for k in
                  ("total", "passed", "failed", "warnings", "not_run", "not_applicable"))
    check(row in page, "%s: the counts table matches the JSON" % name)
    failed = [c["id"] for su in doc["suites"] for c in su["checks"] if c["status"] == "failed"]
    check(bool(failed) == (want_verdict == "fail"), "%s: failed checks %r" % (name, failed))
    for cid in failed:
        check("<td><code>%s</code></td>" % cid in page, "%s: the summary names %s" % (name, cid))
    for text in [open(os.path.join(folder, f), errors="replace").read() for f in have] + [summary]:
        check(MAIN not in text and LIMIT not in text, "%s: no key in the reports or the summary" % name)


def serve_folder(folder):
    """A loopback HTTP server of folder's files (the release .deb's URL)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=folder)
    handler.log_message = lambda *args: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def docs_jobs(source):
    """The GitHub YAML blocks of docs/ci-gate.md: (the Action's workflow, the by-hand job)."""
    import yaml
    text = open(os.path.join(source, "docs", "ci-gate.md")).read()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    gh = [b for b in blocks if "runs-on:" in b]
    return [yaml.safe_load(b) for b in gh], gh


def static_checks(a, action, docs_texts):
    check(action["runs"]["using"] == "composite", "a composite action")
    check(action["inputs"]["base-url"].get("required") is True, "base-url is required")
    text = open(os.path.join(a.source, "action.yml")).read()
    check("secrets." not in re.sub(r"(?m)^\s*#.*$", "", text), "no secret is read from inputs (keys come via env)")
    uploads = [s for s in action["runs"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    check(len(uploads) == 1 and uploads[0].get("if") == "always()", "the reports are uploaded, also on failure")
    for where, t in [("action.yml", text)] + [("docs/ci-gate.md", d) for d in docs_texts]:
        for line in t.splitlines():
            if re.match(r"^\s*(-\s+)?uses:\s*actions/", line):
                check(PINNED.match(line), "%s: pinned by commit with its tag in a comment: %r" % (where, line))
    doc = open(os.path.join(a.source, "docs", "ci-gate.md")).read()
    for out in action["outputs"]:
        check("| `%s` |" % out in doc, "docs/ci-gate.md's outputs table has %s" % out)
    for inp in action["inputs"]:
        check("| `%s` |" % inp in doc, "docs/ci-gate.md's inputs table has %s" % inp)
    check("`none`" in doc, "docs/ci-gate.md says when verdict is none")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--server", required=True)
    a = ap.parse_args()
    try:
        import yaml
    except ImportError:
        print("skipped: needs python3-yaml", file=sys.stderr)
        return 77
    for tool in ("cmark-gfm", "cpack", "dpkg-deb", "curl", "openssl"):
        if not shutil.which(tool):
            print("skipped: needs " + tool, file=sys.stderr)
            return 77
    action = yaml.safe_load(open(os.path.join(a.source, "action.yml")))
    docs_yaml, docs_texts = docs_jobs(a.source)
    if not check(len(docs_yaml) == 2, "docs/ci-gate.md has two GitHub jobs (runs-on:): the Action's and by hand"):
        return exit_status()
    wf = docs_yaml[0]
    static_checks(a, action, docs_texts)

    tmp = tempfile.mkdtemp(prefix="action-")
    procs, httpd = [], None
    try:
        debdir = os.path.join(tmp, "deb")
        r = subprocess.run(["cpack", "-G", "DEB", "-B", debdir, "--config",
                            os.path.join(a.build, "CPackConfig.cmake")], capture_output=True, timeout=240)
        debs = [f for f in os.listdir(debdir) if f.endswith(".deb")] if os.path.isdir(debdir) else []
        if not check(r.returncode == 0 and len(debs) == 1, "cpack built the .deb: %s" % r.stderr[-500:]):
            return exit_status()
        deb = os.path.join(debdir, debs[0])
        sha = hashlib.sha256(open(deb, "rb").read()).hexdigest()
        httpd = serve_folder(debdir)
        deb_url = "http://127.0.0.1:%d/%s" % (httpd.server_address[1], debs[0])
        # the stand-in repository a checkout gives: the CA file the docs' args name
        ca = make_ca(tmp, "staging-ca")
        os.makedirs(os.path.join(tmp, "repo", ".ci"))
        shutil.copy(ca[0], os.path.join(tmp, "repo", ".ci", "staging-ca.pem"))

        keys = ["--key", MAIN + ":pro", "--key", LIMIT + ":free"]
        env = {"PETSTORE_API_KEY": MAIN, "PETSTORE_LIMIT_KEY": LIMIT}
        servers = {}
        for name, fault in (("clean", []), ("faulty", ["--fault", "off-by-one-admission"])):
            proc, url = start_server([a.server, "--port", "0", "--time-scale", "60"] + keys + fault,
                                     stderr=subprocess.DEVNULL)
            procs.append(proc)
            if not check(url is not None, "petstore-server printed its URL"):
                return exit_status()
            servers[name] = url
        base = {"plan": "pro", "limit-plan": "free", "max-wait": "20s", "args": "--timeout '10s' --quiet"}

        # The Action by itself: (case, server, inputs, run step's exit, verdict)
        run = Run(a, tmp, "action", None)
        run.action = action
        cases = (("clean", "clean", {"deb": deb_url, "deb-sha256": sha}, 0, "pass"),
                 ("faulty", "faulty", {"deb": deb}, 1, "fail"),
                 ("usage", "clean", {"deb": deb, "args": "--no-such-flag", "artifact-name": "mine-1"}, 2, "none"),
                 ("quote", "clean", {"deb": deb, "args": "--timeout '10s"}, 2, "none"),
                 ("bad-sha", "clean", {"deb": deb, "deb-sha256": "0" * 64}, None, ""))
        names = []
        for name, server, extra, want_rc, want_verdict in cases:
            job = Job(run, "action-" + name, {"github": {"job": "conform", "run_id": "4242", "run_attempt": "1"}})
            inputs = dict(base, **{"base-url": servers[server]})
            inputs.update(extra)
            outcomes, outputs = run_action(job, inputs, env, cache_hit=False)
            print("%s: %s %s" % (name, outcomes, outputs), file=sys.stderr)
            steps = dict(outcomes)
            install = [o for o in outcomes if o[0] == "Install petstore-conform"][0][1]
            up = job.uploads[0] if job.uploads else None
            check(up is not None, "%s: the upload step runs: %r" % (name, outcomes))
            if want_rc is None:
                check(install not in (0, "skipped"), "%s: a wrong deb-sha256 fails the install" % name)
                check(steps.get("Run petstore-conform") == "skipped" and outputs["exit-code"] == "",
                      "%s: nothing runs after a failed install: %r %r" % (name, outcomes, outputs))
                check("does not match deb-sha256" in "".join(job.log), "%s: the log says the sha256 differs" % name)
                continue
            check(install == 0, "%s: the install step succeeded" % name)
            check(steps.get("Run petstore-conform") == want_rc and outputs["exit-code"] == str(want_rc)
                  and outputs["verdict"] == want_verdict, "%s: exit %s, verdict %s: %r %r"
                  % (name, want_rc, want_verdict, outcomes, outputs))
            summary = job.summary()
            check(summary.strip() != "", "%s: the job summary is written under bash -e" % name)
            names.append(outputs["artifact-name"])
            check(up and up[0] == outputs["artifact-name"], "%s: the artifact-name output is the upload's" % name)
            if "artifact-name" in extra:
                check(outputs["artifact-name"] == extra["artifact-name"], "%s: the artifact-name input is used" % name)
            if want_rc == 2:
                check("exit 2" in summary, "%s: the summary says exit 2: %r" % (name, summary))
            elif up:
                check_reports("action-" + name, up[1], summary, tmp, want_verdict)
        check(len(set(names)) == len(names), "the Action's artifact names differ per use: %r" % names)

        # The docs' Action workflow, against the failing server: the checkout
        # gives the CA file, the build comes from the cache (no deb).
        run = Run(a, tmp, "docs-action", servers["faulty"])
        run.action = action
        steps = wf["jobs"]["conform"]["steps"]
        gate = [s for s in steps if re.match(r"[\w-]+/petstore-conform@", s.get("uses", ""))][0]
        check(steps.index(gate) > 0 and steps[0].get("uses", "").startswith("actions/checkout@"),
              "docs' Action workflow checks out before it uses a repository file (.ci/staging-ca.pem)")
        job = workflow_job(run, "docs-action", steps,
                           override={"base-url": servers["faulty"]})
        out = dict(job.outcomes)
        check(out.get(gate["uses"]) == 1, "docs-action: the gate fails the job: %r" % job.outcomes)
        check("verdict fail, exit 1" in "".join(job.log), "docs-action: the echo step shows the outputs")
        check(job.summary().strip() != "", "docs-action: the job summary is written")
        if job.uploads:
            check_reports("docs-action", job.uploads[0][1], job.summary(), tmp, "fail")
        check(not any("build-essential" in l for l in open(run.apt_log)) if os.path.exists(run.apt_log) else True,
              "docs-action: a cache hit installs no compiler")

        # The docs' by-hand job as two legs of a matrix in one run.
        run = Run(a, tmp, "docs-byhand", None)
        files = ["conformance." + e for e in ("json", "junit.xml", "tap", "html")] + ["summary.md"]
        names = []
        for leg, (server, want_rc, want_verdict) in enumerate((("clean", 0, "pass"), ("faulty", 1, "fail"))):
            run.url = servers[server]
            job = workflow_job(run, "docs-byhand-%d" % leg, yaml.safe_load(docs_texts[1])["jobs"]["conform"]["steps"],
                               job_index=leg)
            out = [o for o in job.outcomes if o[0] == "petstore-conform against staging"]
            check(out and out[0][1] == want_rc, "docs-byhand-%d: the gate exits %d: %r" % (leg, want_rc, job.outcomes))
            check(job.summary().strip() != "", "docs-byhand-%d: the job summary is written under bash -e" % leg)
            check(len(job.uploads) == 1, "docs-byhand-%d: the upload runs: %r" % (leg, job.outcomes))
            if job.uploads:
                names.append(job.uploads[0][0])
                check_reports("docs-byhand-%d" % leg, job.uploads[0][1], job.summary(), tmp, want_verdict, files)
        check(len(set(names)) == 2, "the by-hand legs' artifact names differ: %r" % names)
    finally:
        for p in procs:
            stop_process(p)
        if httpd:
            httpd.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
