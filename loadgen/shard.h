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
 * under-admission; the merge judges).
 *
 * This is the parse-time half (config.c calls it); what a shard writes
 * into its report is shard_report.h, so the config does not depend on the
 * report writers (no include circle config -> shard -> summary -> config). */
#ifndef PS_LG_SHARD_H
#define PS_LG_SHARD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "loadgen/config.h"

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

#endif
