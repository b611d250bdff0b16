// hdr_log_merge.js - what the hdr-histogram-js peers share
// (tests/core/hdr_js/peer.js, tests/loadgen/lg_hdr_peer.js): loading
// hdr-histogram-js, and every interval of HdrHistogram interval logs merged
// into one histogram, as a reader of our --hdr-log would merge them.
"use strict";
const fs = require("fs");
const path = require("path");

// A fail(message) for a peer: "NAME: message" on stderr, exit 2.
function failer(name) {
  return (message) => {
    process.stderr.write(`${name}: ${message}\n`);
    process.exit(2);
  };
}

function loadHdr(moduleDir, fail) {
  try {
    return require(path.resolve(moduleDir));
  } catch (e) {
    fail(`cannot load hdr-histogram-js from ${moduleDir} (run scripts/install-deps.sh): ${e.message}`);
  }
}

// Every interval of every log in files, added into one histogram of the
// first interval's range and precision: { merged, first, intervals }
// (merged and first null when no log holds an interval).
function mergeLogs(hdr, files) {
  let merged = null;
  let first = null;
  let intervals = 0;
  for (const file of files) {
    const reader = new hdr.HistogramLogReader(fs.readFileSync(file, "utf8"));
    for (let h = reader.nextIntervalHistogram(); h !== null; h = reader.nextIntervalHistogram()) {
      intervals++;
      if (!first) {
        first = h;
        merged = hdr.build({
          lowestDiscernibleValue: 1,
          highestTrackableValue: h.highestTrackableValue,
          numberOfSignificantValueDigits: h.numberOfSignificantValueDigits,
          autoResize: false,
        });
      }
      merged.add(h);
    }
  }
  return { merged, first, intervals };
}

module.exports = { failer, loadHdr, mergeLogs };
