#!/usr/bin/env python3
"""schema_labels.py - every limiter label the code gives is accepted by both
report schemas (issue 31: a report must never fail its own schema).

The labels come from print_rlm_labels (ps_rlm_label_name, the one table of
them in core/ratelimit_model.c), and ajv (tools/npm) judges each against the
member of schemas/conformance-report.schema.json and
schemas/load-report.schema.json that carries it (schema_labels.mjs).

usage: schema_labels.py --labels BIN --schemas DIR --npm DIR
Exit 77 (skipped) without node or tools/npm's ajv.
"""
import argparse
import os
import shutil
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--labels", required=True)
    ap.add_argument("--schemas", required=True)
    ap.add_argument("--npm", required=True)
    a = ap.parse_args()
    labels = subprocess.run([a.labels], capture_output=True, text=True, check=True, timeout=30).stdout.split()
    print("labels from ps_rlm_label_name: " + " ".join(labels))
    if len(labels) < 2 or len(set(labels)) != len(labels) or labels[0] != "unknown":
        print("FAIL: print_rlm_labels gave %r: expected 'unknown' then distinct labels" % labels)
        return 1
    node = shutil.which("node")
    if not node or not os.path.isdir(os.path.join(a.npm, "node_modules", "ajv")):
        print("skipped: needs node and ajv in %s (scripts/install-deps.sh)" % a.npm)
        return 77
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([node, os.path.join(here, "schema_labels.mjs"), a.npm, a.schemas] + labels, timeout=60)
    return 0 if r.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
