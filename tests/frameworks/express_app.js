// express_app.js - the Categories interface on express 5 with express-rate-limit
// (its MemoryStore: a fixed window per key), legal by default; --deviation
// switches on one stock behaviour the runner must name (frameworks_test.py).
//
//   NODE_PATH=tools/npm/node_modules node express_app.js --key K [--key K2]
//       [--window-ms 5000] [--deviation default-429-body|draft-headers|admits-61]
'use strict';

const express = require('express');
const { rateLimit, ipKeyGenerator } = require('express-rate-limit');
const c = require('./categories');

const opts = c.parseArgs(process.argv.slice(2), ['default-429-body', 'draft-headers', 'admits-61']);
const store = c.createStore();
const app = express();

const limiterOptions = {
  windowMs: opts.windowMs,
  limit: c.PLAN_LIMIT,
  legacyHeaders: true, // X-RateLimit-Limit/-Remaining/-Reset (Reset in Unix seconds)
  standardHeaders: false,
  keyGenerator: (req) => c.limitKey(req.get('authorization'), opts.keys, ipKeyGenerator(req.ip)),
  handler: (req, res) => {
    if (opts.deviation === 'admits-61') announcePlan(req, res);
    res.status(429).json(c.errorBody(429, 'rate_limited', 'rate limit exceeded; retry after Retry-After'));
  },
};
if (opts.deviation === 'default-429-body') {
  // stock: res.status(429).send('Too many requests, please try again later.'), text/html
  delete limiterOptions.handler;
} else if (opts.deviation === 'draft-headers') {
  // stock "standardHeaders: true" without the legacy X-RateLimit-* ones
  limiterOptions.legacyHeaders = false;
  limiterOptions.standardHeaders = 'draft-6';
} else if (opts.deviation === 'admits-61') {
  // the plugin configured one too high while the service announces the plan's 60
  limiterOptions.limit = c.PLAN_LIMIT + 1;
}
app.use(rateLimit(limiterOptions));
if (opts.deviation === 'admits-61') {
  app.use((req, res, next) => {
    announcePlan(req, res);
    next();
  });
}

// admits-61: the headers tell the plan's 60 while the plugin counts to 61.
function announcePlan(req, res) {
  res.set('X-RateLimit-Limit', String(c.PLAN_LIMIT));
  res.set('X-RateLimit-Remaining', String(Math.max(0, req.rateLimit.remaining - 1)));
}

// Every route needs a valid key; a refusal is a 401 Error with a challenge.
app.use((req, res, next) => {
  const header = req.get('authorization');
  if (c.validKey(header, opts.keys)) return next();
  res.set('WWW-Authenticate', c.challenge(header));
  res.status(401).json(c.errorBody(401, 'unauthorized', 'a valid API key is required (Authorization: Bearer <key>)'));
});

app.get('/v1/categories', (req, res) => res.json(store.list()));
// The body is read as text whatever its Content-Type: parseNewCategory judges it.
app.post('/v1/categories', express.text({ type: () => true, limit: '64kb' }), (req, res) => {
  const parsed = c.parseNewCategory(typeof req.body === 'string' ? req.body : '');
  if (parsed.error) return res.status(400).json(parsed.error);
  res.status(201).json(store.add(parsed.category));
});

app.use((req, res) => res.status(404).json(c.errorBody(404, 'not_found', 'no such resource')));
// body-parser errors (too large, bad charset) keep their status, in an Error body
app.use((err, req, res, next) => {
  void next;
  const status = err.status >= 400 && err.status < 600 ? err.status : 500;
  res.status(status).json(c.errorBody(status, status === 500 ? 'internal' : 'bad_request', err.message));
});

const server = app.listen(0, '127.0.0.1', () => c.announce(server.address().port));
process.on('SIGTERM', () => process.exit(0)); // idle keep-alive connections would hold close()
