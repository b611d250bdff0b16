/* shard_report.h - the "shard" member a shard writes into its --json report
 * (loadgen/shard.h divides the run; merge.h reads the member back): the
 * run's histograms losslessly, each interval's histogram, the keys by id and
 * label (and key group, when a key names one), the key groups' counts, and
 * the windows' counts. */
#ifndef PS_LG_SHARD_REPORT_H
#define PS_LG_SHARD_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/json_writer.h"
#include "loadgen/config.h"
#include "loadgen/limits.h"
#include "loadgen/shard.h"
#include "loadgen/stats.h"
#include "loadgen/summary.h"

/* A shard's key, as the shard report names it: a keyed hash of run id and
 * key (key_label.h: the same in every shard of the run, never the key
 * itself). out: 17 bytes. */
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
#define PS_LG_WINDOW_FIELDS 22
extern const ps_lg_field ps_lg_window_fields[PS_LG_WINDOW_FIELDS];

/* The counts of shard.groups[] (each with its "group" name, written apart):
 * one key group's requests sent, answered, admitted and limited. */
#define PS_LG_GROUP_FIELDS 4
extern const ps_lg_field ps_lg_group_fields[PS_LG_GROUP_FIELDS];

/* Writes the "shard" member (ps_lg_summary's extra hook). */
int ps_lg_shard_json(ps_jw *w, const void *report, ps_error *err);

#endif
