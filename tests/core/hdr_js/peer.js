// peer.js - the hdr-histogram-js side of test_hdr_peer: reads what our C code
// wrote, or writes what our C code must read, and prints what it sees.
//
//   node peer.js MODULE_DIR read-log LOG_FILE
//       decodes every interval of an HdrHistogram interval log, merges them
//       and prints the merged histogram's numbers.
//   node peer.js MODULE_DIR encode OUT_FILE
//       records a fixed pseudo-random data set, writes its compressed base64
//       encoding to OUT_FILE and prints the histogram's numbers.
//
// Output: one "key value" line per number, then "counts i:c i:c ..." with every
// non-zero bucket, so the C side can compare bucket for bucket, then a line
// "spectrum" followed by outputPercentileDistribution(5, 1000)'s text.
"use strict";
const fs = require("fs");
const { failer, loadHdr, mergeLogs } = require("../../lib/hdr_log_merge.js");

const fail = failer("peer.js");
const [moduleDir, mode, file] = process.argv.slice(2);
if (!moduleDir || !mode || !file) fail("usage: peer.js MODULE_DIR read-log|encode FILE");
const hdr = loadHdr(moduleDir, fail);

// spectrumOf is the histogram whose text is printed (default h).
function report(h, extra, spectrumOf = h) {
  const lines = [];
  for (const [k, v] of Object.entries(extra)) lines.push(`${k} ${v}`);
  lines.push(`total ${h.totalCount}`);
  for (const p of [0, 50, 90, 99, 99.9, 100]) lines.push(`p${p} ${h.getValueAtPercentile(p)}`);
  lines.push(`max ${h.highestEquivalentValue(h.maxValue)}`);
  lines.push(`mean ${h.mean.toFixed(6)}`);
  lines.push(`counts_len ${h.countsArrayLength}`);
  const counts = [];
  for (let i = 0; i < h.countsArrayLength; i++) {
    const c = h.getCountAtIndex(i);
    if (c !== 0) counts.push(`${i}:${c}`);
  }
  lines.push(`counts ${counts.join(" ")}`);
  // Last: HdrHistogram's percentile text (values in thousands), to the end.
  lines.push("spectrum");
  process.stdout.write(lines.join("\n") + "\n" + spectrumOf.outputPercentileDistribution(5, 1000));
}

if (mode === "read-log") {
  const { merged, first, intervals } = mergeLogs(hdr, [file]);
  if (!merged) fail(`no interval found in ${file}`);
  report(merged, {
    intervals,
    highest: first.highestTrackableValue,
    sigfigs: first.numberOfSignificantValueDigits,
    start_ms: first.startTimeStampMsec,
  });
} else if (mode === "encode") {
  const h = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60000000,
    numberOfSignificantValueDigits: 3,
    autoResize: false,
  });
  // xorshift32: deterministic and exact in JS integers.
  let x = 2463534242;
  const next = () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
  for (let i = 0; i < 20000; i++) {
    const shift = next() % 26;
    h.recordValue(Math.min(60000000, (1 << shift) + (next() & ((1 << shift) - 1))));
  }
  h.recordValueWithCount(0, 3);
  h.recordValueWithCount(777, 1000000);
  const encoded = hdr.encodeIntoCompressedBase64(h);
  fs.writeFileSync(file, encoded + "\n");
  // The text comes from a decoded copy: the JS port's footer prints the max
  // as recorded, where Java (and our JAVA layout) print its bucket's top;
  // a decoded histogram's max already is that top.
  report(h, {}, hdr.decodeFromCompressedBase64(encoded));
} else {
  fail(`unknown mode ${mode}`);
}
