/* http_server.h - the HTTP/1.1 side of petstore-server: one libevent loop
 * per thread, each with its own SO_REUSEPORT listening socket on the same
 * port, requests parsed with http_parser, and the request handling of the
 * Categories interface (routing, auth, rate limits, validation, store).
 *
 * Lifecycle: create (binds, so the port is known) -> start (threads run) ->
 * stop (any thread; listeners close, in-flight requests finish, idle
 * connections close) -> wait (joins) -> destroy (after the store is closed,
 * so no store callback can arrive later). */
#ifndef PS_HTTP_SERVER_H
#define PS_HTTP_SERVER_H

#include "core/error.h"
#include "reference-server/limiter.h"
#include "reference-server/server_config.h"
#include "reference-server/store.h"

typedef struct ps_http_server ps_http_server;

/* cfg, store and limiter are borrowed and must outlive the server. */
int ps_http_server_create(const ps_server_config *cfg, ps_store *store, ps_limiter *limiter,
                          ps_http_server **out, ps_error *err);
/* The port actually bound (useful with --port 0). */
int ps_http_server_port(const ps_http_server *s);
int ps_http_server_start(ps_http_server *s, ps_error *err);
/* Begins the graceful stop; thread-safe, returns at once. */
void ps_http_server_stop(ps_http_server *s);
/* Joins the loop threads (returns when every loop has drained or hit the
 * drain timeout). */
void ps_http_server_wait(ps_http_server *s);
void ps_http_server_destroy(ps_http_server *s);

#endif
