/* merge_internal.h - what merge.c (reading and summing the shards) and
 * merge_output.c (the merged report's files and console lines) share. */
#ifndef PS_LG_MERGE_INTERNAL_H
#define PS_LG_MERGE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/json_writer.h"
#include "loadgen/config.h"
#include "loadgen/limits.h"
#include "loadgen/stats.h"
#include "loadgen/summary.h"

/* What the merge keeps of one shard once its report is absorbed (the
 * parsed document lives only while its shard is read: memory per shard). */
typedef struct shard_doc {
    const char *path;
    int index, of;
    char *run_id, *verdict, *aborted; /* owned; aborted may be NULL */
    double start_unix_s, duration_s;
    int64_t requests, answered, exit_code;
    bool has_windows;
} shard_doc;

/* One interval row of one shard, until every shard is read. */
typedef struct row_in {
    double at_unix_s; /* the row's start, wall clock */
    ps_lg_interval_row counts;
    char *hist; /* its encoded histogram, owned; NULL: none */
} row_in;

typedef struct merge {
    const char *json_path, *hdr_path, *hdr_log_path, *html_path;
    const char *md_path; /* --summary-md: from the merged JSON, as a run's */
    bool verify_limits, quiet;
    shard_doc *shards;
    size_t nshards;
    ps_lg_config cfg;                 /* the whole run's, as the summary writer takes it */
    char **key_ids;                   /* per merged key */
    size_t keys_cap;                  /* of cfg.keys, key_ids, key_last, key_checks */
    size_t *key_slots, key_slots_cap; /* key ids by hash: merged index + 1, 0 empty */
    size_t *key_last;                 /* per merged key: shard index + 1 that named it last */
    ps_lg_key_checks *key_checks;     /* per merged key, summed */
    ps_lg_window *wins;               /* every shard's windows, keys merged */
    size_t nwins, wins_cap;
    row_in *rows_in;
    size_t nrows_in, rows_in_cap;
    ps_lg_stats total;
    bool total_ready;
    ps_lg_interval_row *rows;
    char **row_enc; /* per merged row: its histogram, encoded (ps_hdr_log_encode) */
    size_t nrows;
    double start_unix_s, end_unix_s, duration_s;
    ps_lg_limits limits;
    ps_lg_violation *violations;
    size_t nviolations, failing;
    ps_lg_key_model *models;
    size_t nmodels;
    ps_lg_counting *counting;
    size_t ncounting, windows_checked;
    ps_lg_window_tally *tally_by_group; /* --verify-limits with key groups; NULL: none */
    ps_lg_threshold_result *thresholds;
    ps_buf json;
    bool merged; /* json holds the merged report */
    ps_error err;
} merge;

/* Reads, checks and merges the nfiles shard reports into m (parse_args'
 * fields set, the rest zero, json PS_BUF_INIT): m->json holds the merged
 * report when m->merged. Returns the exit code; on failure m->err says why.
 * Writes nothing: the caller does (ps_lg_merge_write_outputs). */
int ps_lg_merge_run(merge *m, char *const *files, size_t nfiles);
void ps_lg_merge_free(merge *m);

/* Shard i's key groups (merge_groups.c): the first shard's become the run's,
 * every other must name the same; their counts summed, and each merged key
 * (map: shard key k's merged index) given its group. Returns 0, or -1 with
 * m->err (exit 2). */
int ps_lg_merge_groups(merge *m, const shard_doc *s, size_t i, const ps_json *shard,
                       const size_t *map);
/* With --verify-limits and key groups, m->tally_by_group from the merged
 * windows, as a run tallies its own (after merge_limits). */
void ps_lg_merge_group_tally(merge *m);

/* The "merged" member (the summary's extra hook; arg is the merge). */
int ps_lg_merged_json(ps_jw *w, const void *arg, ps_error *err);
/* Writes --json, --hdr, --hdr-log and --html. Returns 0, or -1 with m->err. */
int ps_lg_merge_write_outputs(merge *m);
/* The console summary on stderr (nothing with --quiet). */
void ps_lg_merge_print_summary(const merge *m, int code);
/* Text from a shard file for the terminal: C0 and C1 controls and DEL
 * become \xHH, so a shard cannot clear the screen, set a title or hide
 * a line (issue 22); cut to fit out. */
void ps_lg_terminal_text(const char *s, char *out, size_t size);

#endif
