// lg_hdr_peer.js - the hdr-histogram-js side of lg_hdr_peer: decodes a
// petstore-load --hdr-log (HdrHistogram V2 compressed interval log), merges
// every interval (of every log given: the shards of a run, for lg_shards_merge)
// and prints the merged histogram's percentiles, one "key value" line each,
// for the C side to compare with the --json summary.
//
//   node lg_hdr_peer.js HDR_HISTOGRAM_JS_DIR LOG_FILE...
"use strict";
const fs = require("fs");
const path = require("path");

function fail(message) {
  process.stderr.write(`lg_hdr_peer.js: ${message}\n`);
  process.exit(2);
}

const [moduleDir, ...files] = process.argv.slice(2);
if (!moduleDir || files.length === 0) fail("usage: lg_hdr_peer.js HDR_HISTOGRAM_JS_DIR LOG_FILE...");
let hdr;
try {
  hdr = require(path.resolve(moduleDir));
} catch (e) {
  fail(`cannot load hdr-histogram-js from ${moduleDir} (run scripts/install-deps.sh): ${e.message}`);
}

let merged = null;
let intervals = 0;
for (const file of files) {
  const reader = new hdr.HistogramLogReader(fs.readFileSync(file, "utf8"));
  for (let h = reader.nextIntervalHistogram(); h !== null; h = reader.nextIntervalHistogram()) {
    intervals++;
    if (!merged)
      merged = hdr.build({
        lowestDiscernibleValue: 1,
        highestTrackableValue: h.highestTrackableValue,
        numberOfSignificantValueDigits: h.numberOfSignificantValueDigits,
        autoResize: false,
      });
    merged.add(h);
  }
}
if (!merged) fail(`no interval found in ${files.join(", ")}`);
const lines = [`intervals ${intervals}`, `count ${merged.totalCount}`];
for (const [name, p] of [["p50", 50], ["p75", 75], ["p90", 90], ["p95", 95], ["p99", 99],
                         ["p99_9", 99.9], ["p99_99", 99.99]])
  lines.push(`${name} ${merged.getValueAtPercentile(p)}`);
lines.push(`max ${merged.highestEquivalentValue(merged.maxValue)}`);
process.stdout.write(lines.join("\n") + "\n");
