/* shard_report.c - the "shard" member of a shard's report (shard_report.h),
 * what merge.c reads back. */
#include "loadgen/shard_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/hash.h"
#include "core/hdr_log.h"
#include "loadgen/key_label.h"

void ps_lg_shard_key_id(const ps_lg_config *cfg, const char *key, char out[17])
{
    ps_lg_key_id(cfg, key, out);
}

size_t ps_lg_shard_drop_partial_views(const ps_lg_config *cfg, ps_lg_violation *v, size_t n)
{
    if (!cfg->shard_keys_shared) return n;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].kind != PS_LG_V_UNDER_ADMISSION) v[kept++] = v[i];
    return kept;
}

const ps_lg_field ps_lg_key_check_fields[PS_LG_KEY_CHECK_FIELDS] = {
    {"responses", offsetof(ps_lg_key_checks, responses), 0},
    {"missing_headers", offsetof(ps_lg_key_checks, missing_headers), 0},
    {"bad_headers", offsetof(ps_lg_key_checks, bad_headers), 0},
    {"missing_retry_after", offsetof(ps_lg_key_checks, missing_retry_after), 0},
    {"bad_retry_after", offsetof(ps_lg_key_checks, bad_retry_after), 0},
    {"failures", offsetof(ps_lg_key_checks, failures), 0},
};

const ps_lg_field ps_lg_window_fields[PS_LG_WINDOW_FIELDS] = {
    {"limit", offsetof(ps_lg_window, limit), 0},
    {"reset", offsetof(ps_lg_window, reset), 0},
    {"admitted", offsetof(ps_lg_window, admitted), 0},
    {"limited", offsetof(ps_lg_window, limited), 0},
    {"max_remaining", offsetof(ps_lg_window, max_remaining), -1},
    {"min_remaining", offsetof(ps_lg_window, min_remaining), -1},
    /* per kind (ps_lg_kind) and operation: what the merge's counting rule needs */
    {"admitted_list", offsetof(ps_lg_window, admitted_by[PS_LG_KIND_LIST]), 0},
    {"admitted_list_4xx", offsetof(ps_lg_window, admitted_by[PS_LG_KIND_LIST_4XX]), 0},
    {"admitted_create", offsetof(ps_lg_window, admitted_by[PS_LG_KIND_CREATE]), 0},
    {"admitted_create_4xx", offsetof(ps_lg_window, admitted_by[PS_LG_KIND_CREATE_4XX]), 0},
    {"fell_list", offsetof(ps_lg_window, fell_by[PS_LG_KIND_LIST]), 0},
    {"fell_list_4xx", offsetof(ps_lg_window, fell_by[PS_LG_KIND_LIST_4XX]), 0},
    {"fell_create", offsetof(ps_lg_window, fell_by[PS_LG_KIND_CREATE]), 0},
    {"fell_create_4xx", offsetof(ps_lg_window, fell_by[PS_LG_KIND_CREATE_4XX]), 0},
    {"limited_list", offsetof(ps_lg_window, limited_by[PS_LG_OP_LIST]), 0},
    {"limited_create", offsetof(ps_lg_window, limited_by[PS_LG_OP_CREATE]), 0},
    {"untold_list", offsetof(ps_lg_window, untold_by[PS_LG_KIND_LIST]), 0},
    {"untold_list_4xx", offsetof(ps_lg_window, untold_by[PS_LG_KIND_LIST_4XX]), 0},
    {"untold_create", offsetof(ps_lg_window, untold_by[PS_LG_KIND_CREATE]), 0},
    {"untold_create_4xx", offsetof(ps_lg_window, untold_by[PS_LG_KIND_CREATE_4XX]), 0},
    {"rises", offsetof(ps_lg_window, rises), 0},
    /* of limited, the --warmup requests' 429s: left out of the refusal
     * tallies, in groups[] too (absent in older shards: none) */
    {"limited_warm", offsetof(ps_lg_window, limited_warm), 0},
};

const ps_lg_field ps_lg_group_fields[PS_LG_GROUP_FIELDS] = {
    {"sent", offsetof(ps_lg_group_counts, sent), 0},
    {"answered", offsetof(ps_lg_group_counts, answered), 0},
    {"admitted", offsetof(ps_lg_group_counts, admitted), 0},
    {"limited", offsetof(ps_lg_group_counts, limited), 0},
};

/* True when the shard reports its key groups: some key named one. */
static bool has_groups(const ps_lg_config *cfg, const ps_lg_stats *t)
{
    return cfg->ngroups && t->groups && t->ngroups == cfg->ngroups;
}

static int hist_member(ps_jw *w, const char *key, const ps_hist *h, ps_error *err)
{
    ps_buf b = PS_BUF_INIT;
    if (ps_hdr_log_encode(h, &b, err) != 0) {
        ps_buf_free(&b);
        return -1;
    }
    ps_jw_kstring_len(w, key, b.data, b.len);
    ps_buf_free(&b);
    return 0;
}

static int pair_member(ps_jw *w, const char *key, const ps_lg_hpair *p, ps_error *err)
{
    if (!p->corr || !p->unc) return 0;
    ps_jw_key(w, key);
    ps_jw_object_open(w);
    if (hist_member(w, "corrected", p->corr, err) != 0 ||
        hist_member(w, "uncorrected", p->unc, err) != 0)
        return -1;
    ps_jw_object_close(w);
    return 0;
}

static int histograms(ps_jw *w, const ps_lg_stats *t, ps_error *err)
{
    ps_jw_key(w, "histograms");
    ps_jw_object_open(w);
    if (pair_member(w, "all", &t->all, err) != 0) return -1;
    ps_jw_key(w, "operations");
    ps_jw_object_open(w);
    for (int o = 0; o < PS_LG_OPS; o++)
        if (pair_member(w, ps_lg_op_names[o], &t->op[o], err) != 0) return -1;
    ps_jw_object_close(w);
    ps_jw_key(w, "status_classes");
    ps_jw_object_open(w);
    for (int c = 0; c < PS_LG_CLASSES; c++)
        if (pair_member(w, ps_lg_class_names[c], &t->cls[c], err) != 0) return -1;
    ps_jw_object_close(w);
    ps_jw_key(w, "plans");
    ps_jw_object_open(w);
    for (int p = 0; p < PS_LG_PLANS; p++)
        if (t->plan[p].corr && ps_hist_total_count(t->plan[p].corr) > 0 &&
            pair_member(w, ps_plan_name((ps_plan_id)p), &t->plan[p], err) != 0)
            return -1;
    ps_jw_object_close(w);
    ps_jw_object_close(w);
    return 0;
}

/* Every key group of the run (not only this shard's keys'), in the run's
 * order, with this shard's counts: the merge sums them into groups[]. */
static void groups_member(ps_jw *w, const ps_lg_config *cfg, const ps_lg_stats *t)
{
    ps_jw_key(w, "groups");
    ps_jw_array_open(w);
    for (size_t g = 0; g < cfg->ngroups; g++) {
        ps_jw_object_open(w);
        ps_jw_kstring(w, "group", ps_lg_config_group_name(cfg, g));
        ps_lg_fields_json(w, ps_lg_group_fields, PS_LG_GROUP_FIELDS, &t->groups[g]);
        ps_jw_object_close(w);
    }
    ps_jw_array_close(w);
}

static void keys_and_windows(ps_jw *w, const ps_lg_config *cfg, const ps_lg_limits *l, bool groups)
{
    ps_jw_key(w, "keys");
    ps_jw_array_open(w);
    for (size_t k = 0; k < cfg->nkeys; k++) {
        char id[17];
        ps_lg_shard_key_id(cfg, cfg->keys[k].key, id);
        const char *red = cfg->keys[k].label;
        ps_jw_object_open(w);
        ps_jw_kstring(w, "id", id);
        ps_jw_kstring(w, "key", red);
        ps_jw_kstring(w, "plan", ps_plan_name(cfg->keys[k].plan.id));
        ps_jw_kint(w, "per_minute", cfg->keys[k].plan.per_minute);
        ps_jw_kint(w, "per_day", cfg->keys[k].plan.per_day);
        ps_jw_kdouble(w, "rate", cfg->keys[k].rate, 3);
        if (groups) ps_jw_kuint(w, "group", cfg->keys[k].group); /* index of shard.groups */
        if (l && k < l->nkeys) {
            ps_jw_key(w, "checks");
            ps_jw_object_open(w);
            ps_lg_fields_json(w, ps_lg_key_check_fields, PS_LG_KEY_CHECK_FIELDS, &l->keys[k]);
            ps_jw_object_close(w);
        }
        ps_jw_object_close(w);
    }
    ps_jw_array_close(w);
    ps_jw_key(w, "windows");
    if (!l) {
        ps_jw_null(w);
        return;
    }
    ps_jw_array_open(w);
    for (size_t i = 0; i < l->cap; i++) {
        const ps_lg_window *win = &l->slots[i];
        if (!win->used) continue;
        ps_jw_object_open(w);
        ps_jw_kint(w, "key", win->key);
        ps_lg_fields_json(w, ps_lg_window_fields, PS_LG_WINDOW_FIELDS, win);
        if (win->min_ahead_s == INT64_MAX)
            ps_jw_knull(w, "min_ahead_s");
        else
            ps_jw_kint(w, "min_ahead_s", win->min_ahead_s);
        ps_jw_object_close(w);
    }
    ps_jw_array_close(w);
}

int ps_lg_shard_json(ps_jw *w, const void *report, ps_error *err)
{
    const ps_lg_shard_report *r = report;
    const ps_lg_config *cfg = r->cfg;
    char start[40];
    ps_clock_format_utc(r->start_wall_ns, start, sizeof start);
    ps_jw_key(w, "shard");
    ps_jw_object_open(w);
    ps_jw_kint(w, "index", cfg->shard);
    ps_jw_kint(w, "of", cfg->shards);
    ps_jw_kstring(w, "run_id", cfg->run_id);
    ps_jw_kstring(w, "start", start);
    ps_jw_kdouble(w, "start_unix_s", (double)r->start_wall_ns / 1e9, 3);
    ps_jw_kbool(w, "start_at_given", cfg->start_at_ns != 0);
    ps_jw_kbool(w, "keys_shared", cfg->shard_keys_shared);
    if (histograms(w, r->total, err) != 0) return -1;
    /* One per intervals[] row, in order: that row's corrected latencies. */
    ps_jw_key(w, "interval_histograms");
    ps_jw_array_open(w);
    for (size_t i = 0; i < r->nrows; i++)
        ps_jw_string(w, r->row_hists[i] ? r->row_hists[i] : "");
    ps_jw_array_close(w);
    bool groups = has_groups(cfg, r->total);
    if (groups) groups_member(w, cfg, r->total);
    keys_and_windows(w, cfg, r->limits, groups);
    ps_jw_object_close(w);
    return 0;
}
