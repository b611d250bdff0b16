// categories.js - what the express and fastify apps of tests/frameworks share:
// the command line, bearer-key matching, NewCategory validation, the in-memory
// category list and the Error body. Only the rate limiting differs per app: it
// is each framework's stock plugin, so that is what the runner judges.
'use strict';

const USAGE = 'usage: APP --key KEY [--key KEY...] [--window-ms MS] [--deviation NAME]';

// The free plan: 60 requests per window. The window is short (not a minute)
// so the runner's limit429 suite, which waits for a fresh window, ends fast;
// X-RateLimit-Limit still says 60, the plan figure the runner checks.
const PLAN_LIMIT = 60;

// Parses argv (after the script name); exits 2 with usage on a bad flag or a
// deviation the app does not know (deviations: its list of names).
function parseArgs(argv, deviations) {
  const opts = { keys: new Set(), windowMs: 5000, deviation: 'none' };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) usage('missing value for ' + flag);
    i++;
    if (flag === '--key') opts.keys.add(value);
    else if (flag === '--window-ms') opts.windowMs = Number(value);
    else if (flag === '--deviation') opts.deviation = value;
    else usage('unknown flag ' + flag);
  }
  if (!opts.keys.size) usage('at least one --key is needed');
  if (!Number.isInteger(opts.windowMs) || opts.windowMs < 1000) usage('--window-ms: an integer >= 1000');
  if (opts.deviation !== 'none' && !deviations.includes(opts.deviation))
    usage('--deviation: one of none, ' + deviations.join(', '));
  return opts;
}

function usage(why) {
  process.stderr.write(why + '\n' + USAGE + '\n');
  process.exit(2);
}

// The valid API key of an Authorization header value, or null. The scheme is
// matched case-insensitively (RFC 9110 11.1), the key whole.
function validKey(header, keys) {
  const m = /^bearer +(\S+)$/i.exec(header || '');
  return m && keys.has(m[1]) ? m[1] : null;
}

// The rate-limit key of a request: its API key when valid, else the client
// address, so refused credentials are limited too and their 401 carries the
// headers of that (anonymous) limit.
function limitKey(header, keys, ip) {
  const key = validKey(header, keys);
  return key ? 'key:' + key : 'ip:' + ip;
}

// The WWW-Authenticate challenge of a 401 (RFC 6750 3: no error code when no
// credential was sent).
function challenge(header) {
  return header ? 'Bearer realm="petstore", error="invalid_token"' : 'Bearer realm="petstore"';
}

function errorBody(status, code, message) {
  return { code, message, status };
}

// Validates a createCategory body (the raw text): returns { category } with
// the NewCategory members, or { error } with an Error body (status 400).
function parseNewCategory(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { error: errorBody(400, 'invalid_json', 'the body is not JSON: ' + e.message) };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { error: errorBody(400, 'invalid_body', 'the body must be a JSON object') };
  if (typeof value.name !== 'string')
    return { error: errorBody(400, 'invalid_name', 'name is required and must be a string') };
  if ('description' in value && typeof value.description !== 'string')
    return { error: errorBody(400, 'invalid_description', 'description must be a string') };
  const category = { name: value.name };
  if ('description' in value) category.description = value.description;
  return { category };
}

// The category list; ids are assigned here, never taken from the client.
function createStore() {
  const items = [];
  return {
    list: () => items,
    add(category) {
      const created = Object.assign({ id: items.length + 1 }, category);
      items.push(created);
      return created;
    },
  };
}

// Prints the base URL as the first stdout line: the test waits for it.
function announce(port) {
  process.stdout.write('http://127.0.0.1:' + port + '/v1\n');
}

module.exports = {
  PLAN_LIMIT,
  parseArgs,
  validKey,
  limitKey,
  challenge,
  errorBody,
  parseNewCategory,
  createStore,
  announce,
};
