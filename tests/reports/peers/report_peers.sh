#!/bin/sh
# report_peers.sh SERVER CONFORM LOAD RENDER NPM_DIR SCHEMAS_DIR OUTDIR - real
# runs' reports read by the tools CI systems read them with. Starts the
# reference server on loopback and runs petstore-conform three times (all
# pass; against deliberate faults: fail; limit windows in real time with
# --max-wait 1s: incomplete) and petstore-load once, then as 2 shards and
# their merge (petstore-load merge), then feeds the reports
# to Debian's prove (TAP), tap-parser, junit2json, xmllint with the Jenkins
# xunit plugin's junit-10.xsd, and ajv with our JSON Schemas (schemas/).
# Two documents no server produces are made from a real one and rendered with
# render_report: a message holding U+2028 (tap-parser must lose nothing after
# it) and an aborted run. Bounded: every program runs under a KILL timeout.
set -u
server=$1 conform=$2 load=$3 render=$4 npm=$5 schemas=$6 out=$7
here=$(cd "$(dirname "$0")" && pwd)
xsd=$here/junit-10.xsd
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
die() { echo "FAIL: $*"; exit 1; }

for tool in prove xmllint node; do
    command -v $tool >/dev/null 2>&1 || die "$tool is not installed (scripts/install-deps.sh installs it)"
done
[ -d "$npm/node_modules/tap-parser" ] && [ -d "$npm/node_modules/junit2json" ] && [ -d "$npm/node_modules/ajv" ] ||
    die "the npm readers are not installed in $npm (scripts/install-deps.sh installs them)"
rm -rf "$out" && mkdir -p "$out" || die "cannot create $out"

spid=
stop_server() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; spid=; }
trap stop_server EXIT INT TERM
# start_server NAME ARGS...: sets url; the server's first stdout line is its base URL
start_server() {
    name=$1
    shift
    "$server" --port 0 --no-seed --key peer-main-k3y:pro --key peer-limit-k3y:free "$@" \
        >"$out/$name-server.out" 2>"$out/$name-server.err" &
    spid=$!
    url=
    for _ in $(seq 100); do
        url=$(head -n 1 "$out/$name-server.out" 2>/dev/null)
        [ -n "$url" ] && break
        kill -0 "$spid" 2>/dev/null || break
        sleep 0.05
    done
    case $url in http://127.0.0.1:*) ;; *) die "the server ($name) printed no loopback base URL (got '$url')";; esac
}
# conform NAME EXPECTED_EXIT ARGS...: one run writing NAME.json, .tap, .xml
conform() {
    name=$1 want=$2
    shift 2
    PETSTORE_API_KEY=peer-main-k3y PETSTORE_LIMIT_KEY=peer-limit-k3y timeout -s KILL 120 "$conform" \
        --base-url "$url" --plan pro --limit-plan free --no-color "$@" \
        --json "$out/$name.json" --tap "$out/$name.tap" --junit "$out/$name.xml" >"$out/$name.out" 2>&1
    rc=$?
    [ $rc -eq "$want" ] || die "petstore-conform ($name) exited $rc, expected $want (see $out/$name.out)"
}

start_server pass --time-scale 60
conform pass 0
stop_server
start_server fail --time-scale 60 --fault content-type-text --fault error-missing-code
conform fail 1
stop_server
# real-time windows: the limit key's 429 asks for up to a minute, beyond --max-wait
start_server incomplete
conform incomplete 3 --max-wait 1s
# the pro key declared as free: its 300 a minute are violations of free's 60
# (exit 1), so the report has violations; both kinds of threshold pass
timeout -s KILL 60 "$load" --base-url "$url" --api-key peer-main-k3y --plan free --connections 4 --duration 2s \
    --rate 400 --mix list=9,create=1 --verify-limits --threshold 'p99<10s' --threshold 'error_rate<50%' --quiet \
    --json "$out/load.json" >"$out/load.out" 2>&1
rc=$?
[ $rc -eq 1 ] || die "petstore-load (a pro key declared free) exited $rc, expected 1 (see $out/load.out)"
grep -q '"kind": *"bad_headers"' "$out/load.json" || die "the load report has no violation to validate"
stop_server
# a sharded run (2 shards started together, as docs/distributed.md runs
# them) and its merge: each shard's report has "shard", the merge's "merged"
start_server shards --key peer-shard-k3y:pro
start_at=$(($(date +%s) + 1))
pids=
for i in 1 2; do
    timeout -s KILL 60 "$load" --base-url "$url" --api-key peer-shard-k3y --plan pro --connections 2 --duration 2s \
        --rate 100 --shard $i/2 --start-at $start_at --verify-limits --quiet --json "$out/shard$i.json" \
        >"$out/shard$i.out" 2>&1 &
    pids="$pids $!"
done
for pid in $pids; do wait "$pid"; done
for i in 1 2; do
    grep -q '"shard": {' "$out/shard$i.json" 2>/dev/null || die "shard $i/2 wrote no shard report (see $out/shard$i.out)"
done
timeout -s KILL 60 "$load" merge "$out/shard1.json" "$out/shard2.json" --verify-limits --threshold 'p99<10s' --quiet \
    --json "$out/merged.json" >"$out/merged.out" 2>&1
rc=$?
[ $rc -eq 0 ] || die "petstore-load merge exited $rc, expected 0 (see $out/merged.out)"
node -e '
const r = (f) => JSON.parse(require("fs").readFileSync(f, "utf8")).requests;
const [a, b, m] = process.argv.slice(1).map(r);
if (!(a > 50 && b > 50 && m === a + b)) throw new Error(`shards ${a} + ${b} requests, merged ${m}`);
' "$out/shard1.json" "$out/shard2.json" "$out/merged.json" || die "the merged report is not the sum of 2 real shards"
stop_server

# Made from the failing run: a U+2028, U+2029 and NEL in the first failed
# check's message and reply body; an aborted run (nothing untested left).
node -e '
const fs = require("fs");
const [from, sep, aborted] = process.argv.slice(1);
const doc = JSON.parse(fs.readFileSync(from, "utf8"));
const c = doc.suites.flatMap((s) => s.checks).find((k) => k.status === "failed");
c.message = "before\u2028after\u2029end\u0085 # not a directive";
if (c.evidence && c.evidence.response) c.evidence.response.body = "x\u2028y";
fs.writeFileSync(sep, JSON.stringify(doc));
const pass = JSON.parse(fs.readFileSync(from.replace(/fail\.json$/, "pass.json"), "utf8"));
Object.assign(pass, { verdict: "aborted", exit_code: 3, aborted: "interrupted by a signal" });
fs.writeFileSync(aborted, JSON.stringify(pass));
' "$out/fail.json" "$out/separator.json" "$out/aborted.json" || die "cannot make the crafted documents"
for name in separator aborted; do
    "$render" tap "$out/$name.json" "$out/$name.tap" && "$render" junit "$out/$name.json" "$out/$name.xml" ||
        die "render_report could not write the $name reports"
done

# Debian's prove: the verdict and the counts it prints
for name in pass fail incomplete separator aborted; do
    verdict=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).verdict' "$out/$name.json")
    timeout -s KILL 30 prove -e cat "$out/$name.tap" >"$out/$name.prove" 2>&1
    rc=$?
    total=$(sed -n 's/^Files=1, Tests=\([0-9]*\),.*/\1/p' "$out/$name.prove")
    failed=$(sed -n 's/.*(Wstat: [0-9]* Tests: [0-9]* Failed: \([0-9]*\)).*/\1/p' "$out/$name.prove")
    want_total=$(grep -c '^\(not \)\?ok ' "$out/$name.tap")
    want_failed=$(grep -c '^not ok ' "$out/$name.tap")
    if [ "$verdict" = pass ]; then
        grep -q '^Result: PASS$' "$out/$name.prove" && [ $rc -eq 0 ] || fail "prove does not read the passing run as PASS"
        [ "$total" = "$want_total" ] || fail "prove read $total tests in $name.tap, it has $want_total"
    else
        if [ "$name" = aborted ]; then
            # every check passed before the stop: prove's verdict is the bail-out
            grep -q '^FAILED--Further testing stopped: interrupted by a signal$' "$out/$name.prove" && [ $rc -ne 0 ] ||
                fail "prove did not stop on the aborted run's Bail out! (exit $rc)"
        else
            grep -q '^Result: FAIL$' "$out/$name.prove" && [ $rc -ne 0 ] ||
                fail "prove does not read the $verdict run ($name) as FAIL"
            [ "$total" = "$want_total" ] || fail "prove read ${total:-no} tests in $name.tap, it has $want_total"
            [ "$failed" = "$want_failed" ] && [ "$want_failed" -gt 0 ] ||
                fail "prove read ${failed:-no} failed tests in $name.tap ($verdict), expected $want_failed"
        fi
    fi
    grep -q 'Parse errors' "$out/$name.prove" && fail "prove found parse errors in $name.tap"
    echo "prove $name ($verdict): $(tail -n 1 "$out/$name.prove"), tests ${total:-?}, failed ${failed:-0}"
done

# tap-parser and junit2json, compared with the JSON document
for name in pass fail incomplete separator aborted; do
    node "$here/read_reports.mjs" "$npm" tap "$out/$name.json" "$out/$name.tap" >"$out/$name.tap-parser" 2>&1 ||
        fail "tap-parser on $name.tap: $(grep FAIL "$out/$name.tap-parser" | head -n 3)"
    node "$here/read_reports.mjs" "$npm" junit "$out/$name.json" "$out/$name.xml" >"$out/$name.junit2json" 2>&1 ||
        fail "junit2json on $name.xml: $(grep FAIL "$out/$name.junit2json" | head -n 3)"
    xmllint --noout --schema "$xsd" "$out/$name.xml" >"$out/$name.xmllint" 2>&1 ||
        fail "xmllint: $name.xml is not valid against junit-10.xsd: $(head -n 3 "$out/$name.xmllint")"
    echo "read $name: tap-parser $(head -c 120 "$out/$name.tap-parser"); junit2json $(head -c 100 "$out/$name.junit2json")"
done
# the separators came through the YAML block and the message is whole
grep -q '\\u2028after\\u2029end\\u0085' "$out/separator.tap" || fail "separator.tap does not escape U+2028/U+2029/NEL"

# ajv: every real document valid against its schema; a broken one rejected
for name in pass fail incomplete aborted; do
    node "$here/read_reports.mjs" "$npm" schema "$schemas/conformance-report.schema.json" "$out/$name.json" \
        >"$out/$name.ajv" 2>&1 || fail "ajv: $(grep FAIL "$out/$name.ajv" | head -c 600)"
done
node "$here/read_reports.mjs" "$npm" schema "$schemas/load-report.schema.json" "$out/load.json" >"$out/load.ajv" 2>&1 ||
    fail "ajv: $(grep FAIL "$out/load.ajv" | head -c 600)"
for name in shard1 shard2 merged; do
    node "$here/read_reports.mjs" "$npm" schema "$schemas/load-report.schema.json" "$out/$name.json" >"$out/$name.ajv" 2>&1 ||
        fail "ajv: $(grep FAIL "$out/$name.ajv" | head -c 600)"
done
node "$here/read_reports.mjs" "$npm" schema "$schemas/merged-load-report.schema.json" "$out/merged.json" \
    >"$out/merged-only.ajv" 2>&1 || fail "ajv: $(grep FAIL "$out/merged-only.ajv" | head -c 600)"
node "$here/read_reports.mjs" "$npm" schema "$schemas/merged-load-report.schema.json" "$out/shard1.json" invalid \
    >"$out/shard-as-merged.ajv" 2>&1 || fail "ajv accepted a shard's report as a merged report"
node -e '
const fs = require("fs");
const [conf, load, outdir] = process.argv.slice(1);
const c = JSON.parse(fs.readFileSync(conf, "utf8"));
c.verdict = "green";
fs.writeFileSync(outdir + "/bad-verdict.json", JSON.stringify(c));
const l = JSON.parse(fs.readFileSync(load, "utf8"));
delete l.latency_us;
fs.writeFileSync(outdir + "/bad-load.json", JSON.stringify(l));
const s = JSON.parse(fs.readFileSync(outdir + "/shard1.json", "utf8"));
s.shard.histograms.all.corrected = "not a histogram";
fs.writeFileSync(outdir + "/bad-shard.json", JSON.stringify(s));
' "$out/pass.json" "$out/load.json" "$out"
node "$here/read_reports.mjs" "$npm" schema "$schemas/conformance-report.schema.json" "$out/bad-verdict.json" invalid \
    >"$out/bad-verdict.ajv" 2>&1 || fail "ajv accepted a conformance report with verdict 'green'"
node "$here/read_reports.mjs" "$npm" schema "$schemas/load-report.schema.json" "$out/bad-load.json" invalid \
    >"$out/bad-load.ajv" 2>&1 || fail "ajv accepted a load report without latency_us"
node "$here/read_reports.mjs" "$npm" schema "$schemas/load-report.schema.json" "$out/bad-shard.json" invalid \
    >"$out/bad-shard.ajv" 2>&1 || fail "ajv accepted a shard report whose histogram is not one"

[ $failures -eq 0 ] || die "$failures reader(s) read our reports wrong (files in $out)"
echo "ok: prove, tap-parser, junit2json, xmllint (junit-10.xsd) and ajv read every report right ($out)"
