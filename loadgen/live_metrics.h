/* live_metrics.h - --metrics-listen: the run's counts while it runs, served
 * over HTTP as a Prometheus text (0.0.4) or OpenMetrics 1.0 exposition for a
 * Prometheus server to scrape (docs/capacity-testing.md).
 *
 * Each load thread records into a block of counters of its own (relaxed
 * atomics written by that thread alone); the server thread sums the blocks
 * when scraped, so recording takes no lock and no thread writes another's
 * cache lines. Series are labelled by plan and key group only: no key,
 * masked or not, ever appears. Warm-up requests are in none of them.
 *
 * Ownership: ps_lg_live_create returns the run's ps_lg_live, which owns the
 * threads' recorders and the server; ps_lg_live_destroy stops the server
 * (bounded: it wakes the server thread and joins it) and frees it all. */
#ifndef PS_LG_LIVE_METRICS_H
#define PS_LG_LIVE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/buf.h"
#include "core/error.h"
#include "loadgen/config.h"
#include "loadgen/stats.h"

typedef struct ps_lg_live ps_lg_live;
typedef struct ps_lg_live_rec ps_lg_live_rec;

/* Parses --metrics-listen's HOST:PORT ("127.0.0.1:9464", "[::1]:0",
 * "localhost:0"; a numeric address or localhost, never looked up; port 0
 * picks a free one) into *addr. Returns 0, or -1 with
 * a message naming the flag. */
int ps_lg_live_parse_listen(const char *text, struct sockaddr_storage *addr, socklen_t *addrlen,
                            ps_error *err);

/* The counters of a run of cfg over nthreads threads (nothing served yet). */
ps_lg_live *ps_lg_live_create(const ps_lg_config *cfg, int nthreads);
/* Thread i's recorder, owned by l. */
ps_lg_live_rec *ps_lg_live_thread(ps_lg_live *l, int i);
/* Binds cfg->metrics_listen, prints "petstore-load: metrics at
 * http://HOST:PORT/metrics" on stderr (the bound port, also when 0 was
 * asked) and starts serving. Returns 0, or -1 with err. */
int ps_lg_live_serve(ps_lg_live *l, ps_error *err);
void ps_lg_live_destroy(ps_lg_live *l);

/* Recording, by the recorder's thread only. `key` indexes cfg->keys. */
void ps_lg_live_sent(ps_lg_live_rec *r, size_t key, int64_t late_ns);
void ps_lg_live_answered(ps_lg_live_rec *r, size_t key, int status, int64_t latency_us);
void ps_lg_live_failed(ps_lg_live_rec *r, size_t key, ps_lg_failure why);
/* A request due but never sent (no key: the schedule dropped it). */
void ps_lg_live_unsent(ps_lg_live_rec *r);

/* The exposition of everything recorded so far: OpenMetrics 1.0 (ending in
 * "# EOF") when `openmetrics`, else the Prometheus text format 0.0.4. */
void ps_lg_live_render(const ps_lg_live *l, bool openmetrics, ps_buf *out);

#endif
