#!/usr/bin/env bash
# demo.sh - the quick start's main job: installs dependencies, builds, starts
# the bundled reference server on a free loopback port (minute windows run
# 60x faster so the 429 checks take seconds), runs the conformance suite and a
# short load test against it, and leaves every report in out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
out=out/demo
mkdir -p "$out"
bin=build/bin

"$bin/petstore-server" --port 0 --time-scale 60 \
  --key demo-pro-key:pro --key demo-limit-key:free --key demo-load-key:enterprise:1000000:100000000 \
  --data "$out/categories.journal" >"$out/server.url" 2>"$out/server.log" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$out/server.url" ] && break; sleep 0.05; done
base_url=$(head -n1 "$out/server.url")
if [ -z "$base_url" ]; then
  echo "demo: the reference server did not start; its log ($out/server.log) says:" >&2
  cat "$out/server.log" >&2
  exit 1
fi
echo "demo: reference server at $base_url (log: $out/server.log)"

set +e
PETSTORE_API_KEY=demo-pro-key "$bin/petstore-conform" --base-url "$base_url" --plan pro \
  --limit-key demo-limit-key --limit-plan free \
  --tap "$out/conformance.tap" --junit "$out/conformance.junit.xml" \
  --json "$out/conformance.json" --html "$out/conformance.html"
conform_status=$?
"$bin/petstore-load" --base-url "$base_url" --api-key demo-load-key --plan enterprise \
  --threads 2 --connections 16 --duration 5s --rate 2000 --mix list=9,create=1 \
  --json "$out/load.json" --hdr "$out/load.hdr" --hdr-log "$out/load.hlog" --html "$out/load.html"
load_status=$?
set -e

echo
echo "demo: reports in $out/:"
ls -1 "$out" | sed 's/^/  /'
echo "demo: conformance exit $conform_status, load exit $load_status"
[ "$conform_status" = 0 ] && [ "$load_status" = 0 ]
