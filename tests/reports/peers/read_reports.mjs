// read_reports.mjs - the npm readers of our reports, as CI systems use them:
// tap-parser reads the TAP file, junit2json the JUnit file, ajv (draft
// 2020-12, with ajv-formats) checks a JSON report against its schema (the
// other schemas of its directory loaded for $ref). Each
// command prints what the reader read as one JSON line and compares it with
// the petstore-conform JSON document the reports were written from; a
// difference is a line "FAIL: ..." and exit 1. Called by report_peers.sh.
//
//   node read_reports.mjs NPM_DIR tap DOC.json FILE.tap
//   node read_reports.mjs NPM_DIR junit DOC.json FILE.xml
//   node read_reports.mjs NPM_DIR schema SCHEMA.json DOC.json [invalid]
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const [npmDir, command, ...args] = process.argv.slice(2);
let failed = false;
function check(cond, message) {
  if (!cond) {
    console.log(`FAIL: ${message}`);
    failed = true;
  }
}
function die(message) {
  console.log(`FAIL: ${message}`);
  process.exit(1);
}

async function load(name) {
  const require = createRequire(path.join(path.resolve(npmDir), "package.json"));
  try {
    return await import(pathToFileURL(require.resolve(name)).href);
  } catch (e) {
    die(`cannot load ${name} from ${npmDir} (run scripts/install-deps.sh): ${e.message}`);
  }
}

// What a reader must see, from the document: failed checks and checks that
// apply but could not be tested fail; not-applicable ones are skips.
function expected(doc) {
  const e = { tests: 0, failed: 0, untested: 0, skipped: 0, failedIds: [] };
  for (const suite of doc.suites)
    for (const c of suite.checks) {
      e.tests++;
      if (c.status === "failed") e.failed++;
      else if (c.status === "not_run" && c.applicable === true) e.untested++;
      else if (c.status === "not_run") e.skipped++;
      if (c.status === "failed" || (c.status === "not_run" && c.applicable === true)) e.failedIds.push(c.id);
    }
  return e;
}

async function readTap(docFile, tapFile) {
  const { Parser } = await load("tap-parser");
  const doc = JSON.parse(fs.readFileSync(docFile, "utf8"));
  const want = expected(doc);
  const results = await new Promise((resolve) => {
    const parser = new Parser({ passes: true }, resolve);
    parser.end(fs.readFileSync(tapFile, "utf8"));
  });
  const read = {
    ok: results.ok, plan: results.plan.end, count: results.count, pass: results.pass, fail: results.fail,
    skip: results.skip, bailout: results.bailout, failures: results.failures.map((f) => f.name),
  };
  console.log(JSON.stringify(read));
  check(read.count === want.tests && read.plan === want.tests,
        `tap-parser read ${read.count} test points (plan ${read.plan}); the document has ${want.tests}`);
  check(read.fail === want.failed + want.untested,
        `tap-parser read ${read.fail} failing; expected ${want.failed} failed + ${want.untested} not tested`);
  check(read.skip === want.skipped, `tap-parser read ${read.skip} skips; expected ${want.skipped}`);
  check(read.ok === (doc.verdict === "pass"), `tap-parser says ok=${read.ok} for verdict ${doc.verdict}`);
  check(Boolean(read.bailout) === (doc.aborted !== null && doc.aborted !== undefined),
        `tap-parser bailout ${read.bailout} for aborted ${doc.aborted}`);
  // Every failing point carries its message intact through the YAML block
  // (escapes included: U+2028 must come back as U+2028).
  const byId = new Map();
  for (const suite of doc.suites) for (const c of suite.checks) byId.set(c.id, c);
  for (const f of results.failures) {
    if (!f.name) continue; // a bail-out or plan error, counted above
    const id = f.name.split(":")[0];
    const c = byId.get(id);
    check(c && f.diag && f.diag.message === c.message,
          `tap-parser read the message of ${id} as ${JSON.stringify(f.diag && f.diag.message)}; ` +
          `the document says ${JSON.stringify(c && c.message)}`);
  }
}

async function readJunit(docFile, xmlFile) {
  const { parse } = await load("junit2json");
  const doc = JSON.parse(fs.readFileSync(docFile, "utf8"));
  const want = expected(doc);
  const root = await parse(fs.readFileSync(xmlFile, "utf8"));
  const read = { tests: 0, failures: 0, errors: 0, skipped: 0, root: {}, properties: {} };
  for (const key of ["tests", "failures", "errors"]) read.root[key] = root[key];
  let runErrors = 0;
  for (const suite of root.testsuite || []) {
    for (const p of suite.properties || []) read.properties[p.name] = p.value;
    for (const tc of suite.testcase || []) {
      read.tests++;
      if (tc.failure) read.failures++;
      if (tc.error) read.errors++;
      if (tc.skipped) read.skipped++;
      if (tc.error && tc.classname === "petstore-conform.run") runErrors++;
    }
  }
  console.log(JSON.stringify(read));
  check(read.tests === want.tests + runErrors && read.root.tests === read.tests,
        `junit2json read ${read.tests} testcases (root says ${read.root.tests}); the document has ${want.tests}`);
  check(read.failures === want.failed && read.root.failures === want.failed,
        `junit2json read ${read.failures} failures (root ${read.root.failures}); expected ${want.failed}`);
  check(read.errors === want.untested + runErrors && read.root.errors === read.errors,
        `junit2json read ${read.errors} errors (root ${read.root.errors}); expected ${want.untested} not tested`);
  check(read.skipped === want.skipped, `junit2json read ${read.skipped} skipped; expected ${want.skipped}`);
  const green = read.failures === 0 && read.errors === 0;
  check(green === (doc.verdict === "pass"), `JUnit reads ${green ? "green" : "red"} for verdict ${doc.verdict}`);
  check(read.properties.verdict === doc.verdict && Number(read.properties.exit_code) === doc.exit_code,
        `JUnit properties say verdict ${read.properties.verdict}, exit code ${read.properties.exit_code}`);
  check(read.properties.version === doc.version && read.properties.plan === doc.target.plan,
        `JUnit properties version/plan ${read.properties.version}/${read.properties.plan}`);
  check(read.properties.base_url === doc.target.base_url,
        `JUnit base_url property ${read.properties.base_url} (a loopback URL has nothing to redact)`);
}

async function validate(schemaFile, docFile, mustFail) {
  const { default: Ajv2020 } = await load("ajv/dist/2020");
  const { default: addFormats } = await load("ajv-formats");
  // strict about the schema itself (unknown keywords, tuples); "required"
  // inside if/then names members declared one level up, which is fine
  const ajv = new Ajv2020({ allErrors: true, strictSchema: true, strictTuples: true });
  addFormats(ajv);
  let valid;
  try {
    // the schemas next to it, for $ref by relative name (the merged load
    // report's refers to the load report's)
    const dir = path.dirname(path.resolve(schemaFile));
    for (const f of fs.readdirSync(dir))
      if (f.endsWith(".schema.json") && path.join(dir, f) !== path.resolve(schemaFile))
        ajv.addSchema(JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")));
    valid = ajv.validate(JSON.parse(fs.readFileSync(schemaFile, "utf8")), JSON.parse(fs.readFileSync(docFile, "utf8")));
  } catch (e) {
    die(`ajv cannot use ${schemaFile}: ${e.message}`);
  }
  console.log(JSON.stringify({ schema: path.basename(schemaFile), doc: path.basename(docFile), valid,
                               errors: (ajv.errors || []).slice(0, 5) }));
  if (mustFail) check(!valid, `${docFile} should be rejected by ${schemaFile}`);
  else check(valid, `${docFile} is not valid against ${schemaFile}: ${ajv.errorsText()}`);
}

if (command === "tap" && args.length === 2) await readTap(...args);
else if (command === "junit" && args.length === 2) await readJunit(...args);
else if (command === "schema" && (args.length === 2 || (args.length === 3 && args[2] === "invalid")))
  await validate(args[0], args[1], args.length === 3);
else die("usage: read_reports.mjs NPM_DIR tap|junit DOC FILE | schema SCHEMA DOC [invalid]");
process.exit(failed ? 1 : 0);
