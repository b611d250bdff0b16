// fastify_app.js - the Categories interface on fastify 5 with @fastify/rate-limit
// (its LocalStore: a fixed window per key), legal by default; --deviation
// switches on one stock behaviour the runner must name (frameworks_test.py).
//
//   NODE_PATH=tools/npm/node_modules node fastify_app.js --key K [--key K2]
//       [--window-ms 5000] [--deviation delta-reset|default-429-body]
//
// The plugin's x-ratelimit-reset is the seconds UNTIL the reset (Math.ceil of
// the store's ttl), and the interface wants a Unix timestamp. The legal config
// keeps the plugin's counting and headers but sends its own x-ratelimit-reset:
// the store (LocalStore, subclassed only to note each key's window end) says
// when the window of the key ends, and an onSend hook writes that in Unix
// seconds. Converting the delta in onSend (now + delta) would not do: both are
// rounded, so Reset would wobble by a second inside one window.
'use strict';

const fastify = require('fastify')({ logger: false });
const LocalStore = require('@fastify/rate-limit/store/LocalStore');
const c = require('./categories');

const opts = c.parseArgs(process.argv.slice(2), ['delta-reset', 'default-429-body']);
const store = c.createStore();
const unixReset = opts.deviation !== 'delta-reset';

// key -> end of its current window (ms since the epoch), as the store counts it
const windowEnds = new Map();
class WindowEndStore extends LocalStore {
  constructor(params) {
    super(params.continueExceeding, params.exponentialBackoff);
  }

  incr(key, cb, timeWindow, max) {
    super.incr(
      key,
      (err, res) => {
        if (!err) windowEnds.set(key, res.iterationStartMs + timeWindow);
        cb(err, res);
      },
      timeWindow,
      max
    );
  }

  child(routeOptions) {
    return new WindowEndStore(routeOptions);
  }
}

const limitKeyOf = (req) => c.limitKey(req.headers.authorization, opts.keys, req.ip);
const headerSet = { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': !unixReset };

const limiterOptions = {
  global: true,
  max: c.PLAN_LIMIT,
  timeWindow: opts.windowMs,
  keyGenerator: limitKeyOf,
  addHeadersOnExceeding: headerSet,
  addHeaders: Object.assign({ 'retry-after': true }, headerSet),
  // thrown by the plugin; the error handler below turns it into an Error body
  errorResponseBuilder: (req, ctx) => ({
    statusCode: ctx.statusCode,
    code: 'rate_limited',
    message: 'rate limit exceeded, retry in ' + ctx.after,
  }),
};
if (unixReset) limiterOptions.store = WindowEndStore;
if (opts.deviation === 'default-429-body') delete limiterOptions.errorResponseBuilder;

fastify.register(require('@fastify/rate-limit'), limiterOptions);

if (unixReset) {
  fastify.addHook('onSend', async (req, reply, payload) => {
    const end = windowEnds.get(limitKeyOf(req));
    if (end !== undefined) reply.header('x-ratelimit-reset', String(Math.ceil(end / 1000)));
    return payload;
  });
}

// Bodies are read as text whatever their Content-Type: parseNewCategory judges them.
fastify.removeAllContentTypeParsers();
fastify.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 65536 }, (req, body, done) => done(null, body));

// Auth inside the handlers, not a hook: global hooks would run before the
// rate-limit preHandler of the not-found route and leave its 401 without headers.
function authorized(req, reply) {
  const header = req.headers.authorization;
  if (c.validKey(header, opts.keys)) return true;
  reply.header('www-authenticate', c.challenge(header));
  reply.code(401).send(c.errorBody(401, 'unauthorized', 'a valid API key is required (Authorization: Bearer <key>)'));
  return false;
}

fastify.after(() => {
  fastify.get('/v1/categories', (req, reply) => {
    if (authorized(req, reply)) reply.send(store.list());
  });
  fastify.post('/v1/categories', (req, reply) => {
    if (!authorized(req, reply)) return;
    const parsed = c.parseNewCategory(typeof req.body === 'string' ? req.body : '');
    if (parsed.error) reply.code(400).send(parsed.error);
    else reply.code(201).send(store.add(parsed.category));
  });
  fastify.setNotFoundHandler({ preHandler: fastify.rateLimit() }, (req, reply) => {
    if (authorized(req, reply)) reply.code(404).send(c.errorBody(404, 'not_found', 'no such resource'));
  });
});

fastify.setErrorHandler((err, req, reply) => {
  if (opts.deviation === 'default-429-body' && err.statusCode === 429) {
    reply.send(err); // fastify's stock error serialisation of the plugin's stock error
    return;
  }
  const status = err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
  reply.code(status).send(c.errorBody(status, err.code ? String(err.code) : 'error', err.message));
});

fastify.listen({ port: 0, host: '127.0.0.1' }).then(
  () => c.announce(fastify.server.address().port),
  (err) => {
    process.stderr.write('fastify_app: ' + err.message + '\n');
    process.exit(1);
  }
);
process.on('SIGTERM', () => process.exit(0)); // idle keep-alive connections would hold close()
