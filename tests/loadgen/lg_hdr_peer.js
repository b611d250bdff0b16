// lg_hdr_peer.js - the hdr-histogram-js side of lg_hdr_peer: decodes a
// petstore-load --hdr-log (HdrHistogram V2 compressed interval log), merges
// every interval (of every log given: the shards of a run, for lg_shards_merge)
// and prints the merged histogram's percentiles, one "key value" line each,
// for the C side to compare with the --json summary.
//
//   node lg_hdr_peer.js HDR_HISTOGRAM_JS_DIR LOG_FILE...
"use strict";
const { failer, loadHdr, mergeLogs } = require("../lib/hdr_log_merge.js");

const fail = failer("lg_hdr_peer.js");
const [moduleDir, ...files] = process.argv.slice(2);
if (!moduleDir || files.length === 0) fail("usage: lg_hdr_peer.js HDR_HISTOGRAM_JS_DIR LOG_FILE...");
const hdr = loadHdr(moduleDir, fail);

const { merged, intervals } = mergeLogs(hdr, files);
if (!merged) fail(`no interval found in ${files.join(", ")}`);
const lines = [`intervals ${intervals}`, `count ${merged.totalCount}`];
for (const [name, p] of [["p50", 50], ["p75", 75], ["p90", 90], ["p95", 95], ["p99", 99],
                         ["p99_9", 99.9], ["p99_99", 99.99]])
  lines.push(`${name} ${merged.getValueAtPercentile(p)}`);
lines.push(`max ${merged.highestEquivalentValue(merged.maxValue)}`);
process.stdout.write(lines.join("\n") + "\n");
