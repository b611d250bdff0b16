#!/bin/sh
# browser_report.sh KIND RENDER IN.json OUTDIR - renders an HTML report and
# opens it in headless Chromium from a file:// URL: the inline script must
# have run (data-script="ran" in the DOM), the console must stay silent (no
# errors, no failed loads), and a screenshot is left in OUTDIR for a human.
# Exit 77 (ctest SKIP_RETURN_CODE) only when chromium is not installed.
set -u
kind=$1 render=$2 input=$3 outdir=$4
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
    echo "SKIP: $chromium not installed"
    exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$outdir" || fail "cannot create $outdir"
html=$outdir/$kind-report.html
"$render" "$kind" "$input" "$html" || fail "render_report $kind $input failed"
profile=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$profile"' EXIT INT TERM

# Everything that could reach a network is off; the page must need none of it.
run() {
    timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" "$@"
}

url="file://$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"

# 1. the DOM after scripts ran
run --dump-dom "$url" >"$outdir/$kind-dom.html" 2>"$outdir/$kind-dom.log" ||
    fail "chromium --dump-dom failed (see $outdir/$kind-dom.log)"
grep -q 'data-script="ran"' "$outdir/$kind-dom.html" || fail "the inline script did not run"
grep -q '</svg>\|class="check"\|class="cards"' "$outdir/$kind-dom.html" || fail "the DOM has no report content"

# 2. console: our pages log nothing, so any console line is an error
run --enable-logging=stderr --v=0 --window-size=1280,2000 \
    --screenshot="$outdir/$kind-report.png" "$url" >/dev/null 2>"$outdir/$kind-console.log" ||
    fail "chromium --screenshot failed (see $outdir/$kind-console.log)"
if grep -E 'CONSOLE|Uncaught|Failed to load resource|net::ERR_' "$outdir/$kind-console.log"; then
    fail "console errors while loading $url"
fi
[ -s "$outdir/$kind-report.png" ] || fail "no screenshot written"

# 3. conformance filtering works with no server: #show=failed hides the passed rows
if [ "$kind" = conform ]; then
    run --dump-dom "$url#show=failed" >"$outdir/$kind-filtered.html" 2>/dev/null ||
        fail "chromium --dump-dom (filtered) failed"
    shown=$(grep -o 'class="check" data-status="failed"[^>]*>' "$outdir/$kind-filtered.html" | grep -vc hidden)
    hidden=$(grep -o 'class="check" data-status="passed"[^>]*>' "$outdir/$kind-filtered.html" | grep -c hidden)
    passed=$(grep -o 'class="check" data-status="passed"' "$outdir/$kind-filtered.html" | grep -c .)
    [ "$shown" -ge 1 ] || fail "#show=failed hid the failed checks"
    [ "$passed" -ge 1 ] && [ "$hidden" -eq "$passed" ] || fail "#show=failed left passed checks visible ($hidden of $passed hidden)"
fi
echo "ok: $kind report renders in Chromium without console errors; screenshot $outdir/$kind-report.png"
