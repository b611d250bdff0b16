#!/usr/bin/env python3
"""install_test.py - the installed programs work, wherever they are put.

Nothing is installed into the system: `cmake --install` goes to a temporary
prefix, the .deb is built by cpack into a temporary folder and extracted with
dpkg-deb -x into another. Each installed tree is then moved, and from
there the server runs with its default data (no --key, no --seed), the
installed runner passes against it, the installed load generator's default
--bodies is found, the man pages render with `man -l` and name every long
option of --help, and each completion offers exactly --help's options.
Exit 0 = all of that holds; otherwise the reasons are printed.

  install_test.py --build DIR --source DIR tree
  install_test.py --build DIR --source DIR deb
  install_test.py --source DIR containerfile
"""
import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from pstest import check, exit_status, start_server, stop_process  # noqa: E402

PROGRAMS = ("petstore-server", "petstore-conform", "petstore-load")
DATA_FILES = ("keys.txt", "seed-categories.json", "create-bodies.json", "openapi.yaml")
# What the Debian package must depend on: the libraries the programs link.
DEB_DEPENDS = ("libcurl4", "libyajl2", "libevent-2.1-7", "libevent-pthreads-2.1-7", "libhttp-parser2.9",
               "zlib1g", "libssl3", "libnghttp2-14", "libc6")


def clean_env():
    """The environment of an installed program: no data override, C locale."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    env["LC_ALL"] = "C"
    return env


def run(cmd, timeout=60, **kw):
    return subprocess.run(cmd, capture_output=True, timeout=timeout, **kw)


def long_options(help_text):
    return set(re.findall(r"--[a-z][a-z0-9-]*", help_text))


class Server:
    """An installed server on a free loopback port, flags only for the port
    and the time scale: keys and seed come from its data directory."""

    def __init__(self, binary, log_dir):
        self.err = open(os.path.join(log_dir, "server.err"), "wb")
        # cwd / and a clean environment: nothing relative to the caller helps.
        self.proc, self.url = start_server([binary, "--port", "0", "--time-scale", "60"],
                                           stderr=self.err, cwd="/", env=clean_env())

    def stop(self):
        stop_process(self.proc, 10)
        self.err.close()


def check_layout(root, source):
    """root is the prefix (bin/, share/...)."""
    for p in PROGRAMS:
        check(os.access(os.path.join(root, "bin", p), os.X_OK), "%s: bin/%s missing" % (root, p))
        check(os.path.isfile(os.path.join(root, "share/man/man1", p + ".1.gz")), "man page of %s missing" % p)
        check(os.path.isfile(os.path.join(root, "share/bash-completion/completions", p)),
              "bash completion of %s missing" % p)
    data = os.path.join(root, "share/petstore-conform")
    for f in DATA_FILES:
        path = os.path.join(data, f)
        if check(os.path.isfile(path) and not os.path.islink(path), "data file %s missing" % f):
            check(open(path, "rb").read() == open(os.path.join(source, "fixtures", f), "rb").read(),
                  "installed %s differs from fixtures/%s" % (f, f))
    schemas = os.path.join(source, "schemas")
    if os.path.isdir(schemas):
        want = sorted(os.path.relpath(os.path.join(d, f), schemas) for d, _, fs in os.walk(schemas) for f in fs)
        inst = os.path.join(data, "schemas")
        got = sorted(os.path.relpath(os.path.join(d, f), inst) for d, _, fs in os.walk(inst) for f in fs)
        check(got == want, "installed schemas/ %s, source has %s" % (got, want))


def check_no_build_paths(root, source, build):
    """No path into the source's fixtures/ or the build tree is compiled in."""
    for p in PROGRAMS:
        blob = open(os.path.join(root, "bin", p), "rb").read()
        for bad in (os.path.join(source, "fixtures").encode(), os.path.realpath(build).encode() + b"/"):
            check(bad not in blob, "bin/%s has %r compiled in" % (p, bad.decode()))


def check_programs_run(root, tmp):
    """The moved tree's server serves its default keys and seed; the runner
    passes against it; the load generator finds its default bodies."""
    bindir = os.path.join(root, "bin")
    srv = Server(os.path.join(bindir, "petstore-server"), tmp)
    try:
        if not check(srv.url, "installed server did not start: %s" % open(
                os.path.join(tmp, "server.err"), errors="replace").read()[-2000:]):
            return
        req = urllib.request.Request(srv.url + "/categories", headers={"Authorization": "Bearer demo-pro-key"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = json.load(r)
        items = body if isinstance(body, list) else body.get("items", body.get("categories", []))
        seed = json.load(open(os.path.join(root, "share/petstore-conform/seed-categories.json")))
        check(len(items) == len(seed), "default seed: %d categories served, the seed has %d" % (len(items), len(seed)))

        env = clean_env()
        env.update({"PETSTORE_API_KEY": "demo-pro-key", "PETSTORE_LIMIT_KEY": "demo-free-key"})
        report = os.path.join(tmp, "conform.json")
        p = run([os.path.join(bindir, "petstore-conform"), "--base-url", srv.url, "--plan", "pro",
                 "--limit-plan", "free", "--json", report], timeout=120, cwd="/", env=env)
        if not check(p.returncode == 0, "installed runner against the installed server: exit %d" % p.returncode):
            sys.stderr.write(p.stdout.decode(errors="replace")[-3000:] + p.stderr.decode(errors="replace")[-2000:])
        else:
            check(json.load(open(report))["verdict"] == "pass", "runner verdict is not pass")

        # --mix with creates and no --bodies: the default bodies file is read.
        load_json = os.path.join(tmp, "load.json")
        p = run([os.path.join(bindir, "petstore-load"), "--base-url", srv.url, "--api-key", "demo-enterprise-key",
                 "--plan", "enterprise:100000:100000000", "--mix", "list=1,create=1", "--requests", "50",
                 "--connections", "2", "--quiet", "--json", load_json], timeout=60, cwd="/", env=clean_env())
        check(p.returncode == 0, "installed petstore-load with its default --bodies: exit %d: %s" % (
            p.returncode, p.stderr.decode(errors="replace")[-1500:]))
    finally:
        srv.stop()


def check_man_pages(root, source, build):
    for p in PROGRAMS:
        page = os.path.join(root, "share/man/man1", p + ".1.gz")
        if not os.path.isfile(page):
            continue
        env = clean_env()
        env["MANWIDTH"] = "200"
        r = run(["man", "-l", page], env=env)
        text = r.stdout.decode(errors="replace")
        check(r.returncode == 0 and text.strip(), "man -l %s: exit %d %s" % (page, r.returncode, r.stderr[-500:]))
        check(not r.stderr.strip(), "man -l %s warns: %s" % (p, r.stderr.decode(errors="replace")[:500]))
        help_text = run([os.path.join(root, "bin", p), "--help"], env=clean_env()).stdout.decode()
        version = run([os.path.join(root, "bin", p), "--version"], env=clean_env()).stdout.decode().split()
        missing = sorted(o for o in long_options(help_text) if o not in text)
        check(not missing, "man page of %s lacks options of its --help: %s" % (p, missing))
        check(re.search(r"^NAME\s*\n\s*%s - " % re.escape(p), text, re.M), "man page of %s: no NAME line" % p)
        check(len(version) == 2 and version[1] in text, "man page of %s does not name version %s" % (p, version))
        roff = gzip.open(page, "rt").read()
        check(".TH " in roff, "man page of %s lacks .TH" % p)
        for bad in (source, os.path.realpath(build)):
            check(bad not in roff, "man page of %s names %s" % (p, bad))


def check_completions(root, tmp):
    """Sourced in bash, each completion offers exactly --help's options for
    '--', and file names after an option whose value is FILE."""
    probe = os.path.join(tmp, "probe-file.json")
    open(probe, "w").close()
    for p in PROGRAMS:
        comp = os.path.join(root, "share/bash-completion/completions", p)
        if not os.path.isfile(comp):
            continue
        help_text = run([os.path.join(root, "bin", p), "--help"], env=clean_env()).stdout.decode()
        fn = "_" + re.sub(r"[^A-Za-z0-9]", "_", p)
        script = ('source "$1"; complete -p %s >/dev/null || exit 3; COMP_WORDS=(%s "$2"); COMP_CWORD=1; %s; '
                  'printf "%%s\\n" "${COMPREPLY[@]}"' % (p, p, fn))
        r = run(["bash", "-c", script, "bash", comp, "--"])
        offered = set(r.stdout.decode().split())
        check(r.returncode == 0 and offered == long_options(help_text),
              "completion of %s: offers %s, --help has %s (exit %d %s)" % (
                  p, sorted(offered ^ long_options(help_text)), "the difference", r.returncode, r.stderr[-300:]))
        file_opt = re.search(r"(--[a-z][a-z0-9-]*)[ =]FILE", help_text)
        if file_opt:
            script = ('source "$1"; COMP_WORDS=(%s %s "$2"); COMP_CWORD=2; %s; printf "%%s\\n" "${COMPREPLY[@]}"'
                      % (p, file_opt.group(1), fn))
            r = run(["bash", "-c", script, "bash", comp, probe[:-3]])
            check(probe in r.stdout.decode().split(), "completion of %s %s does not offer file names" % (
                p, file_opt.group(1)))


def check_installed_tree(prefix, source, build, tmp):
    check_layout(prefix, source)
    check_no_build_paths(prefix, source, build)
    # Moved after installing: nothing may depend on where it was put.
    moved = os.path.join(tmp, "moved")
    shutil.move(prefix, moved)
    check_programs_run(moved, tmp)
    check_man_pages(moved, source, build)
    check_completions(moved, tmp)


def mode_tree(a, tmp):
    prefix = os.path.join(tmp, "prefix")
    r = run(["cmake", "--install", a.build, "--prefix", prefix, "--strip"], timeout=120)
    if not check(r.returncode == 0, "cmake --install: %s" % r.stderr.decode(errors="replace")[-2000:]):
        return
    check_installed_tree(prefix, a.source, a.build, tmp)


def mode_deb(a, tmp):
    out = os.path.join(tmp, "pkg")
    r = run(["cpack", "-G", "DEB", "-B", out, "--config", os.path.join(a.build, "CPackConfig.cmake")],
            timeout=300, cwd=a.build)
    debs = [f for f in os.listdir(out) if f.endswith(".deb")] if os.path.isdir(out) else []
    if not check(r.returncode == 0 and len(debs) == 1, "cpack -G DEB: exit %d, %s: %s" % (
            r.returncode, debs, (r.stdout + r.stderr).decode(errors="replace")[-3000:])):
        return
    deb = os.path.join(out, debs[0])
    fields = {f: run(["dpkg-deb", "-f", deb, f]).stdout.decode().strip() for f in ("Package", "Depends", "Version")}
    print("package %s: Depends: %s" % (debs[0], fields["Depends"]), file=sys.stderr)
    check(fields["Package"] == "petstore-conform", "Package %r" % fields["Package"])
    names = {d.split()[0] for alt in fields["Depends"].split(",") for d in alt.split("|") if d.strip()}
    for dep in DEB_DEPENDS:
        check(dep in names, "Depends lacks %s: %s" % (dep, fields["Depends"]))
    contents = run(["dpkg-deb", "-c", deb]).stdout.decode()
    check("./usr/local" not in contents, "the package installs under /usr/local")
    root = os.path.join(tmp, "root")
    r = run(["dpkg-deb", "-x", deb, root])
    if not check(r.returncode == 0, "dpkg-deb -x: %s" % r.stderr.decode(errors="replace")):
        return
    check_installed_tree(os.path.join(root, "usr"), a.source, a.build, tmp)


def mode_containerfile(a, tmp):
    """The recipe cannot be built here: its structure is what is checked."""
    text = open(os.path.join(a.source, "Containerfile")).read()
    lines = [l for l in re.sub(r"\\\n", " ", text).splitlines() if l.strip() and not l.lstrip().startswith("#")]
    stages = []
    for l in lines:
        m = re.match(r"FROM\s+(\S+)(?:\s+AS\s+(\S+))?\s*$", l, re.I)
        if m:
            stages.append({"image": m.group(1), "name": m.group(2), "lines": []})
        elif check(stages, "instruction before FROM: %s" % l):
            stages[-1]["lines"].append(l)
    if not check(len(stages) >= 2, "not multi-stage: %d stages" % len(stages)):
        return
    for s in stages:
        check(s["image"] == "debian:12-slim", "stage %s is FROM %s" % (s["name"], s["image"]))
        check(s["name"], "a stage without a name (FROM ... AS NAME)")
    build, final = stages[0], stages[-1]
    check(any("cpack -G DEB" in l for l in build["lines"]), "the build stage does not run cpack -G DEB")
    check(any(re.match(r"COPY\s+--from=%s\s" % re.escape(build["name"] or "?"), l) for l in final["lines"]),
          "the final stage does not copy from the build stage")
    check(any(re.search(r"apt-get install .*\.deb", l) for l in final["lines"]),
          "the final stage does not install the .deb with apt-get")
    users = [l.split()[1] for l in final["lines"] if l.upper().startswith("USER ")]
    check(users and users[-1] not in ("root", "0") and not users[-1].startswith("0:"),
          "the final stage runs as %s, not a non-root USER" % (users[-1] if users else "root (no USER)"))
    check(not any(l.upper().startswith(("RUN ", "COPY ", "ADD ")) for l in final["lines"][
        max(i for i, l in enumerate(final["lines"]) if l.upper().startswith("USER ")):]) if users else True,
          "instructions after USER in the final stage")
    ignore = os.path.join(a.source, ".containerignore")
    check(os.path.isfile(ignore) and "build*/" in open(ignore).read(), ".containerignore does not leave out build trees")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build")
    ap.add_argument("--source", required=True)
    ap.add_argument("mode", choices=["tree", "deb", "containerfile"])
    a = ap.parse_args()
    a.source = os.path.realpath(a.source)
    with tempfile.TemporaryDirectory(prefix="ps-install-") as tmp:
        {"tree": mode_tree, "deb": mode_deb, "containerfile": mode_containerfile}[a.mode](a, tmp)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
