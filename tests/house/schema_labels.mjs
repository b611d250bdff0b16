// schema_labels.mjs - each limiter label against the member of each report
// schema that carries it, with ajv (draft 2020-12, ajv-formats, strict), as
// the report peers validate whole reports. Called by schema_labels.py.
//
//   node schema_labels.mjs NPM_DIR SCHEMA_DIR LABEL...
//
// Prints one line "FAIL: ..." per label a schema rejects (and per place
// that is gone), exit 1 then.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const [npmDir, schemaDir, ...labels] = process.argv.slice(2);
// Where each report carries a limiter label (the writers: runner/suites/
// ratelimit_judge_model.c and loadgen/summary.c, both ps_rlm_label_name).
const PLACES = [
  ["conformance-report.schema.json", "#/properties/ratelimit/items/properties/model"],
  ["load-report.schema.json", "#/properties/limits/properties/models/items/properties/model"],
];
let failed = false;
const fail = (m) => { console.log(`FAIL: ${m}`); failed = true; };

async function load(name) {
  const require = createRequire(path.join(path.resolve(npmDir), "package.json"));
  return await import(pathToFileURL(require.resolve(name)).href);
}

const { default: Ajv2020 } = await load("ajv/dist/2020");
const { default: addFormats } = await load("ajv-formats");
const ajv = new Ajv2020({ allErrors: true, strictSchema: true, strictTuples: true });
addFormats(ajv);
const ids = {};
for (const f of fs.readdirSync(schemaDir).filter((f) => f.endsWith(".schema.json")).sort()) {
  const s = JSON.parse(fs.readFileSync(path.join(schemaDir, f), "utf8"));
  ajv.addSchema(s);
  ids[f] = s.$id;
}
if (labels.length < 2) fail(`too few labels to check: ${JSON.stringify(labels)}`);
for (const [file, pointer] of PLACES) {
  let validate;
  try {
    validate = ajv.getSchema(ids[file] + pointer);
  } catch (e) {
    validate = undefined;
  }
  if (!validate) {
    fail(`schemas/${file} has no ${pointer} (the limiter label's place): update PLACES in tests/house/schema_labels.mjs`);
    continue;
  }
  for (const label of labels)
    if (!validate(label))
      fail(`schemas/${file} rejects the limiter label "${label}" at ${pointer}, which ps_rlm_label_name ` +
           `(core/ratelimit_model.c) gives: add it to that enum: ${ajv.errorsText(validate.errors)}`);
  // the validator really judges this member: a label no code gives is refused
  if (validate("no-such-limiter")) fail(`schemas/${file} accepts any string at ${pointer}`);
  console.log(`${file} ${pointer}: checked ${labels.length} labels`);
}
process.exit(failed ? 1 : 0);
