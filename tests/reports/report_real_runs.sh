#!/bin/sh
# report_real_runs.sh SERVER CONFORM LOAD RENDER NUMBERS OUTDIR - the HTML
# reports against real JSON: starts the reference server on loopback (with
# two faults, so the conformance run has failures to show), runs
# petstore-conform and a short petstore-load against it with --json and
# --html, then renders both JSON documents with render_report and checks
# every plotted number against them (test_html_numbers). Bounded: every
# step runs under a KILL timeout and the server is stopped on exit.
set -u
server=$1 conform=$2 load=$3 render=$4 numbers=$5 outdir=$6
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$outdir" || fail "cannot create $outdir"
rm -f "$outdir"/real-*

spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; }
trap cleanup EXIT INT TERM

"$server" --port 0 --no-seed --time-scale 60 --key ps-rep-main-k3y:pro --key ps-rep-limit-k3y:free \
    --fault content-type-text --fault no-www-authenticate >"$outdir/real-server.out" 2>"$outdir/real-server.err" &
spid=$!
url=
for _ in $(seq 50); do
    url=$(head -n 1 "$outdir/real-server.out" 2>/dev/null)
    [ -n "$url" ] && break
    sleep 0.1
done
case $url in http://127.0.0.1:*) ;; *) fail "the server printed no loopback base URL (got '$url')";; esac

PETSTORE_API_KEY=ps-rep-main-k3y PETSTORE_LIMIT_KEY=ps-rep-limit-k3y \
    timeout -s KILL 60 "$conform" --base-url "$url" --plan pro --limit-plan free --no-color \
    --json "$outdir/real-conform.json" --html "$outdir/real-conform-own.html" >"$outdir/real-conform.out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "petstore-conform against a faulty server exited $rc, expected 1 (see $outdir/real-conform.out)"

# pro allows 300 a minute and a minute lasts 1 s at --time-scale 60: 400/s meets 429s
timeout -s KILL 30 "$load" --base-url "$url" --api-key ps-rep-main-k3y --plan pro --connections 4 \
    --duration 2s --rate 400 --mix list=9,create=1 --verify-limits --quiet \
    --json "$outdir/real-load.json" --html "$outdir/real-load-own.html" >"$outdir/real-load.out" 2>&1
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "petstore-load exited $rc (see $outdir/real-load.out)"

for kind in conform load; do
    own=$outdir/real-$kind-own.html
    head -c 15 "$own" 2>/dev/null | grep -q '<!DOCTYPE html>' || fail "petstore-$kind --html wrote no HTML report"
    grep -q "data-report=\"$kind\"" "$own" || fail "petstore-$kind --html is not the $kind report"
    "$render" "$kind" "$outdir/real-$kind.json" "$outdir/real-$kind.html" || fail "render_report $kind failed"
done
"$numbers" "$outdir/real-load.json" "$outdir/real-conform.json" || fail "plotted numbers differ from the JSON"
echo "ok: reports of a real conformance run and load run agree with their JSON ($outdir)"
