/* limits_view.h - the windows of a run as its counting sees them, built
 * once by limits.c (the collector, which hands the evidence to the shared
 * model, core/ratelimit_model.h) and judged by limits_verdict.c. Internal
 * to the load generator's limit verification. */
#ifndef PS_LG_LIMITS_VIEW_H
#define PS_LG_LIMITS_VIEW_H

#include <stddef.h>

#include "loadgen/limits.h"

typedef struct ps_lg_view {
    ps_lg_counting *counting; /* per config key: what counts, decided once */
    ps_lg_window *store;      /* owned copies: each window's counted admissions */
    const ps_lg_window **ws;  /* into store, in (key, limit, reset) order */
    size_t nw;
} ps_lg_view;

/* Builds the view of l under cfg's keys and rules; ps_lg_view_free frees it. */
void ps_lg_view_build(ps_lg_view *v, const ps_lg_limits *l, const ps_lg_config *cfg);
void ps_lg_view_free(ps_lg_view *v);
/* What window w of key may admit: the declared plan's figure for the
 * window it governs when the plan's figures are known, else its Limit. */
int64_t ps_lg_view_allowed(const ps_lg_key *key, const ps_lg_window *w);

#endif
