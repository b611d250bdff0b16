#!/usr/bin/env python3
"""action_test.py - the repository's GitHub Action (action.yml) run as a
runner runs it, against the bundled server.

action.yml is parsed with python3-yaml; its composite steps run in order
the way GitHub runs them: `shell: bash` as `bash --noprofile --norc -eo
pipefail`, `${{ inputs.* }}` (with defaults), `${{ github.action_path }}`
expanded, GITHUB_PATH / GITHUB_OUTPUT / GITHUB_STEP_SUMMARY as files, a
step's `if:` (always(), the default success()), the keys in the environment
as a workflow's `env:` puts secrets there. The install step takes the .deb
cpack builds from this tree (extracted, not installed into the system).
`uses:` steps (upload-artifact) are not run: their inputs are checked (the
report folder, filled).

Two runs: a clean server (exit 0, verdict pass) and one admitting Limit+1
(the step fails with exit 1 and the upload still runs). Each job summary is
rendered by cmark-gfm and must show the verdict, the counts of the JSON
report and, for the failure, the failed check; no report holds a key.

usage: action_test.py --build DIR --source DIR --server BIN
Exit 77 (skipped) without python3-yaml, cmark-gfm, cpack or dpkg-deb.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import check, exit_status, start_server, stop_process  # noqa: E402

MAIN, LIMIT = "act-main-key-0001", "act-limit-key-0001"
REQUIRED_INPUTS = ("base-url", "plan", "limit-plan", "max-wait", "args")


def expand(text, inputs, action_path):
    """${{ inputs.x }} and ${{ github.action_path }} as the runner expands them."""
    def one(m):
        expr = m.group(1).strip()
        if expr.startswith("inputs."):
            return inputs[expr[len("inputs."):]]
        if expr == "github.action_path":
            return action_path
        raise ValueError("expression the test does not know: " + expr)
    return re.sub(r"\$\{\{(.*?)\}\}", one, str(text))


def read_kv(path):
    out = {}
    if os.path.exists(path):
        for line in open(path):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                out[k] = v
    return out


def run_action(action, a, tmp, name, with_inputs, env_extra):
    """Runs action's steps; returns (outcome per step, outputs of step ids, summary text)."""
    work = os.path.join(tmp, name)
    os.makedirs(os.path.join(work, "runner-temp"))
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    inputs.update(with_inputs)
    files = {n: os.path.join(work, n) for n in ("path", "output", "summary", "env")}
    for f in files.values():
        open(f, "w").close()
    path_dirs = []
    outcomes, outputs, failed = [], {}, False
    for i, step in enumerate(action["runs"]["steps"]):
        cond = step.get("if", "success()")
        if not (cond == "always()" or (cond == "success()" and not failed)):
            outcomes.append((step.get("name"), "skipped"))
            continue
        if "uses" in step:
            outcomes.append((step.get("name"), "uses", {k: expand(v, inputs, a.source)
                                                        for k, v in step.get("with", {}).items()}))
            continue
        check(step.get("shell") == "bash", "step %r runs in bash" % step.get("name"))
        script = os.path.join(work, "step%d.sh" % i)
        open(script, "w").write(expand(step["run"], inputs, a.source))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "GITHUB_"))}
        env.update(env_extra)
        env.update({"GITHUB_PATH": files["path"], "GITHUB_OUTPUT": files["output"],
                    "GITHUB_STEP_SUMMARY": files["summary"], "GITHUB_ENV": files["env"],
                    "GITHUB_ACTION_PATH": a.source, "RUNNER_TEMP": os.path.join(work, "runner-temp"),
                    "PATH": os.pathsep.join(path_dirs + [env.get("PATH", "/usr/bin:/bin")])})
        env.update({k: expand(v, inputs, a.source) for k, v in step.get("env", {}).items()})
        try:
            r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], env=env,
                               cwd=work, capture_output=True, text=True, timeout=300)
            rc, err = r.returncode, r.stdout[-1500:] + r.stderr[-1500:]
        except subprocess.TimeoutExpired:
            rc, err = -1, "timed out"
        print("%s: step %r exit %d" % (name, step.get("name"), rc), file=sys.stderr)
        if rc != 0:
            print(err, file=sys.stderr)
        failed = failed or rc != 0
        outcomes.append((step.get("name"), rc))
        # GITHUB_PATH lines apply to the steps after this one, newest first
        path_dirs = [l.strip() for l in reversed(open(files["path"]).read().splitlines()) if l.strip()]
        if step.get("id"):
            outputs[step["id"]] = read_kv(files["output"])
    return outcomes, outputs, open(files["summary"]).read(), work


def render(md_text, tmp, name):
    p = os.path.join(tmp, name + ".md")
    open(p, "w").write(md_text)
    r = subprocess.run(["cmark-gfm", "-e", "table", p], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "cmark-gfm renders the job summary")
    return r.stdout


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
    for tool in ("cmark-gfm", "cpack", "dpkg-deb"):
        if not shutil.which(tool):
            print("skipped: needs " + tool, file=sys.stderr)
            return 77
    action = yaml.safe_load(open(os.path.join(a.source, "action.yml")))
    check(action["runs"]["using"] == "composite", "a composite action")
    for k in REQUIRED_INPUTS:
        check(k in action["inputs"], "input %s" % k)
    check(action["inputs"]["base-url"].get("required") is True, "base-url is required")
    text = open(os.path.join(a.source, "action.yml")).read()
    check("secrets." not in re.sub(r"(?m)^#.*$", "", text), "no secret is read from inputs (keys come via env)")
    uploads = [s for s in action["runs"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    check(len(uploads) == 1 and uploads[0].get("if") == "always()", "the reports are uploaded, also on failure")

    tmp = tempfile.mkdtemp(prefix="action-")
    procs = []
    try:
        debdir = os.path.join(tmp, "deb")
        r = subprocess.run(["cpack", "-G", "DEB", "-B", debdir, "--config",
                            os.path.join(a.build, "CPackConfig.cmake")], capture_output=True, timeout=240)
        debs = [f for f in os.listdir(debdir) if f.endswith(".deb")] if os.path.isdir(debdir) else []
        if not check(r.returncode == 0 and len(debs) == 1, "cpack built the .deb: %s" % r.stderr[-500:]):
            return exit_status()
        deb = os.path.join(debdir, debs[0])
        keys = ["--key", MAIN + ":pro", "--key", LIMIT + ":free"]
        env = {"PETSTORE_API_KEY": MAIN, "PETSTORE_LIMIT_KEY": LIMIT}
        for name, fault, want_rc, want_verdict in (("clean", [], 0, "pass"),
                                                   ("faulty", ["--fault", "off-by-one-admission"], 1, "fail")):
            proc, url = start_server([a.server, "--port", "0", "--time-scale", "60"] + keys + fault,
                                     stderr=subprocess.DEVNULL)
            procs.append(proc)
            if not check(url is not None, "petstore-server printed its URL"):
                return exit_status()
            outcomes, outputs, summary, work = run_action(
                action, a, tmp, name, {"base-url": url, "plan": "pro", "limit-plan": "free", "max-wait": "20s",
                                       "args": "--timeout '10s' --quiet", "deb": deb}, env)
            stop_process(proc)
            print("%s: %s" % (name, outcomes), file=sys.stderr)
            check(outcomes[0][1] == 0, "%s: the install step succeeded" % name)
            check(outcomes[1][1] == want_rc, "%s: the run step exits %d: %r" % (name, want_rc, outcomes[1]))
            check(outputs.get("conform", {}).get("exit-code") == str(want_rc) and
                  outputs["conform"].get("verdict") == want_verdict, "%s: outputs %r" % (name, outputs))
            up = outcomes[2]
            report_dir = os.path.join(work, up[2]["path"]) if up[1] == "uses" else None
            check(up[1] == "uses" and sorted(os.listdir(report_dir)) == sorted(
                "conformance." + e for e in ("json", "junit.xml", "tap", "html", "md")),
                "%s: the upload step runs, over the five reports: %r" % (name, up))
            if not report_dir:
                continue
            doc = json.load(open(os.path.join(report_dir, "conformance.json")))
            page = render(summary, tmp, name)
            mark = "\u2705" if want_verdict == "pass" else "\u274c"
            check("<h2>petstore-conform: %s %s</h2>" % (mark, want_verdict) in page, "%s: summary heading" % name)
            s = doc["summary"]
            row = "".join('<td align="right">%d</td>\n' % s[k] for k in
                          ("total", "passed", "failed", "warnings", "not_run", "not_applicable"))
            check(row in page, "%s: the counts table matches the JSON" % name)
            failed = [c["id"] for su in doc["suites"] for c in su["checks"] if c["status"] == "failed"]
            check(bool(failed) == (want_rc == 1), "%s: failed checks %r" % (name, failed))
            for cid in failed:
                check("<td><code>%s</code></td>" % cid in page, "%s: the summary names %s" % (name, cid))
            for f in os.listdir(report_dir) + ["../summary"]:
                body = open(os.path.join(report_dir, f), errors="replace").read()
                check(MAIN not in body and LIMIT not in body, "%s: no key in %s" % (name, f))
    finally:
        for p in procs:
            stop_process(p)
        shutil.rmtree(tmp, ignore_errors=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
