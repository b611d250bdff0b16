/* shard.h - one run split over several petstore-load processes (--shard I/N,
 * or --shards N with the index from JOB_COMPLETION_INDEX as Kubernetes
 * Indexed Jobs set it), started together (--start-at), each writing what a
 * merge needs (merge.h) into its --json report's "shard" member.
 *
 * Dividing the work: shard I of N takes 1/N of --rate and --ramp, and its
 * share of --connections and --requests (integers: the first `total % N`
 * shards take one more, so the shares add up to the total exactly). With
 * several keys, key k (0-based, in file order) belongs to the shard whose
 * 0-based index is k % N: each key is driven by one shard, so Retry-After
 * politeness stays per key. With one key, every shard drives it (a shared
 * key: no single shard sees a window whole, so shards do not report
 * under-admission; the merge judges). */
#ifndef PS_LG_SHARD_H
#define PS_LG_SHARD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/json_writer.h"
#include "loadgen/config.h"
#include "loadgen/limits.h"
#include "loadgen/stats.h"
#include "loadgen/summary.h"

/* Parses "I/N" (1 <= I <= N <= PS_LG_MAX_SHARDS). */
#define PS_LG_MAX_SHARDS 10000
int ps_lg_shard_parse(const char *text, int *index, int *of, ps_error *err);
/* --shards N with JOB_COMPLETION_INDEX (0-based text, env may be NULL):
 * the 1-based index. */
int ps_lg_shard_from_env(int of, const char *env, int *index, ps_error *err);
/* --start-at: Unix seconds (fractions allowed) or RFC 3339
 * (2026-05-01T12:00:00Z, 2026-05-01T14:00:00.5+02:00). Wall-clock ns. */
int ps_lg_parse_start_at(const char *text, int64_t *wall_ns, ps_error *err);
/* Shard index's (0-based) share of total over of shards. */
int64_t ps_lg_share(int64_t total, int index0, int of);

/* Turns cfg (the whole run's parameters, shard/shards set) into this
 * shard's: derives the run id when none was given (from --start-at and the
 * whole run's parameters, so every shard derives the same), then divides
 * rate, ramp, connections, requests and keys. */
int ps_lg_shard_apply(ps_lg_config *cfg, ps_error *err);

/* A shard's key, as the shard report names it: a hash of run id and key (the
 * same in every shard of the run, never the key itself). out: 17 bytes. */
void ps_lg_shard_key_id(const ps_lg_config *cfg, const char *key, char out[17]);

/* With a shared key, drops under-admission warnings (a partial view) from
 * v; returns the new count. */
size_t ps_lg_shard_drop_partial_views(const ps_lg_config *cfg, ps_lg_violation *v, size_t n);

/* What a shard report adds for the merge. */
typedef struct ps_lg_shard_report {
    const ps_lg_config *cfg;
    int64_t start_wall_ns;    /* the schedule's origin: --start-at, or the start */
    const ps_lg_stats *total; /* every plan's histograms present */
    char *const *row_hists;   /* base64 V2 histogram of each interval row */
    size_t nrows;
    const ps_lg_limits *limits; /* NULL without --verify-limits */
} ps_lg_shard_report;

/* The counts of shard.keys[].checks, and of shard.windows[] (whose "key"
 * and "min_ahead_s", null when not known, are written apart): shard.c
 * writes them, merge.c reads them back. */
#define PS_LG_KEY_CHECK_FIELDS 6
extern const ps_lg_field ps_lg_key_check_fields[PS_LG_KEY_CHECK_FIELDS];
#define PS_LG_WINDOW_FIELDS 16
extern const ps_lg_field ps_lg_window_fields[PS_LG_WINDOW_FIELDS];

/* Writes the "shard" member (ps_lg_summary's extra hook). */
int ps_lg_shard_json(ps_jw *w, const void *report, ps_error *err);

#endif
