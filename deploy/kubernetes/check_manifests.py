#!/usr/bin/env python3
# check_manifests.py - ctest deploy_kubernetes: the manifests parse and hold
# what docs/distributed.md relies on (an Indexed Job with completions =
# parallelism = --shards N, every shard writing --json to the shared volume,
# and a merge Job reading exactly those N reports from the same claim).
import re, sys, pathlib
try:
    import yaml
except ImportError:
    print("skipped: needs python3-yaml (scripts/install-deps.sh)")
    sys.exit(77)
here = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent)
docs = {d["kind"] + "/" + d["metadata"]["name"]: d
        for f in ("load-shards.yaml", "merge-job.yaml")
        for d in yaml.safe_load_all((here / f).read_text()) if d}
def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)
shards = docs.get("Job/petstore-load-shards") or fail("no Job petstore-load-shards")
merge = docs.get("Job/petstore-load-merge") or fail("no Job petstore-load-merge")
pvc = docs.get("PersistentVolumeClaim/petstore-load-results") or fail("no results claim")
s = shards["spec"]
if s.get("completionMode") != "Indexed": fail("shards Job is not Indexed")
n = s["completions"]
if s.get("parallelism") != n: fail("parallelism != completions")
cmd = " ".join(s["template"]["spec"]["containers"][0]["args"])
m = re.search(r"--shards (\d+)", cmd) or fail("no --shards")
if int(m.group(1)) != n: fail(f"--shards {m.group(1)} but completions {n}")
for flag in ("--start-at", "--json /results/shard-$JOB_COMPLETION_INDEX.json", "--verify-limits"):
    if flag not in cmd: fail(f"shard command lacks {flag}")
mcmd = " ".join(merge["spec"]["template"]["spec"]["containers"][0]["args"])
if "petstore-load merge" not in mcmd: fail("merge Job does not run petstore-load merge")
inputs = re.findall(r"/results/shard-(\d+)\.json", mcmd)
if sorted(map(int, inputs)) != list(range(n)): fail(f"merge reads shards {inputs}, want 0..{n-1}")
for job in (shards, merge):
    vols = job["spec"]["template"]["spec"]["volumes"]
    if vols[0]["persistentVolumeClaim"]["claimName"] != pvc["metadata"]["name"]: fail("volume claim differs")
    if job["spec"]["template"]["spec"]["restartPolicy"] != "Never": fail("restartPolicy must be Never")
if "ReadWriteMany" not in pvc["spec"]["accessModes"]: fail("the claim must be ReadWriteMany (N writers)")
print(f"ok: Indexed Job of {n} shards, merge of {n} reports, shared claim")
