/* summary.c - the JSON summary and thresholds. */
#include "loadgen/summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/histogram_print.h"
#include "core/version.h"

double ps_lg_error_rate(const ps_lg_stats *t)
{
    if (t->scheduled == 0) return 0;
    int64_t e5 = 0;
    for (int s = 500; s < 600; s++)
        e5 += t->status[s];
    return (double)(t->failed + t->timed_out + e5) / (double)t->scheduled;
}

/* A latency threshold's figure of one histogram. */
static double latency_figure(const ps_lg_threshold *th, const ps_hist *h)
{
    double v = 0;
    if (!h) return v; /* a plan's histogram a merge did not carry */
    if (th->metric == PS_LG_METRIC_PERCENTILE)
        v = (double)ps_hist_value_at_percentile(h, th->percentile);
    else if (th->metric == PS_LG_METRIC_MAX)
        v = (double)ps_hist_max(h);
    else if (th->metric == PS_LG_METRIC_MEAN)
        v = ps_hist_mean(h);
    return v;
}

static bool meets(const ps_lg_threshold *th, double v)
{
    return th->or_equal ? v <= th->bound : v < th->bound;
}

ps_lg_threshold_result ps_lg_threshold_eval(const ps_lg_threshold *th, const ps_lg_stats *total,
                                            const ps_lg_generator *gen)
{
    ps_lg_threshold_result r = {0};
    if (th->metric == PS_LG_METRIC_ERROR_RATE) {
        r.actual = ps_lg_error_rate(total);
        r.passed = meets(th, r.actual);
    } else {
        /* a plan's objective: its keys' answers alone */
        const ps_lg_hpair *h =
            th->scoped && (unsigned)th->plan < PS_LG_PLANS ? &total->plan[th->plan] : &total->all;
        r.actual = latency_figure(th, h->corr);
        r.own = latency_figure(th, h->unc);
        bool late_known = total->lateness && ps_hist_total_count(total->lateness) > 0;
        r.late = late_known ? latency_figure(th, total->lateness) : -1;
        /* no answer at all cannot pass a latency threshold */
        r.passed = meets(th, r.actual) && h->corr && ps_hist_total_count(h->corr) > 0;
        /* Lateness counts a wait for a connection too: never the
         * generator's when requests waited for connections the target
         * held (connection-limited). Its CPU held it back when its threads
         * ran or waited for a CPU 70% of the time (they then read the
         * answers late too, so the target's own figure says nothing);
         * else only with no connection wait and the target's own figure
         * met. A max is one request's: the generator's worst lateness and
         * the target's worst answer may be two requests, so it needs the
         * target's own max met either way. */
        bool open_model = gen && gen->verdict != PS_LG_GEN_NOT_APPLICABLE &&
                          gen->verdict != PS_LG_GEN_CONN_LIMITED;
        bool own_met = meets(th, r.own);
        bool cpu_bound = gen && gen->busy_share >= PS_LG_BUSY_SHARE;
        r.lost_to_generator = !r.passed && open_model && total->answered > 0 && late_known &&
                              !meets(th, r.late) && (th->metric != PS_LG_METRIC_MAX || own_met) &&
                              (cpu_bound || (gen->conn_waits == 0 && own_met));
    }
    return r;
}

const ps_lg_field ps_lg_row_class_fields[PS_LG_ROW_CLASS_FIELDS] = {
    {"2xx", offsetof(ps_lg_interval_row, c2xx), 0},
    {"3xx", offsetof(ps_lg_interval_row, c3xx), 0},
    {"4xx", offsetof(ps_lg_interval_row, c4xx), 0},
    {"5xx", offsetof(ps_lg_interval_row, c5xx), 0},
    {"429", offsetof(ps_lg_interval_row, c429), 0},
    {"errors", offsetof(ps_lg_interval_row, errors), 0},
};

int64_t *ps_lg_field_at(void *obj, const ps_lg_field *f)
{
    return (int64_t *)((char *)obj + f->offset);
}

void ps_lg_fields_json(ps_jw *w, const ps_lg_field *fields, size_t n, const void *obj)
{
    for (size_t i = 0; i < n; i++)
        ps_jw_kint(w, fields[i].name, *(const int64_t *)((const char *)obj + fields[i].offset));
}

static void latency_obj(ps_jw *w, const ps_hist *h)
{
    ps_jw_object_open(w);
    if (h) {
        ps_jw_kint(w, "p50", ps_hist_value_at_percentile(h, 50));
        ps_jw_kint(w, "p75", ps_hist_value_at_percentile(h, 75));
        ps_jw_kint(w, "p90", ps_hist_value_at_percentile(h, 90));
        ps_jw_kint(w, "p95", ps_hist_value_at_percentile(h, 95));
        ps_jw_kint(w, "p99", ps_hist_value_at_percentile(h, 99));
        ps_jw_kint(w, "p99_9", ps_hist_value_at_percentile(h, 99.9));
        ps_jw_kint(w, "p99_99", ps_hist_value_at_percentile(h, 99.99));
        ps_jw_kint(w, "max", ps_hist_max(h));
        ps_jw_kdouble(w, "mean", ps_hist_mean(h), 1);
        ps_jw_kint(w, "count", ps_hist_total_count(h));
    }
    ps_jw_object_close(w);
}

static void pair_obj(ps_jw *w, const char *key, const ps_lg_hpair *p)
{
    ps_jw_key(w, key);
    ps_jw_object_open(w);
    ps_jw_key(w, "corrected");
    latency_obj(w, p->corr);
    ps_jw_key(w, "uncorrected");
    latency_obj(w, p->unc);
    ps_jw_object_close(w);
}

int ps_lg_spectrum_json(const ps_hist *h, ps_jw *w, ps_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return ps_error_set(err, "open_memstream failed");
    int rc = ps_hist_percentiles_print(h, mem, 5, 1.0, PS_HIST_FORMAT_CLASSIC);
    fclose(mem);
    if (rc != 0) {
        free(text);
        return ps_error_set(err, "cannot render the percentile spectrum");
    }
    ps_jw_array_open(w);
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        double v, p;
        long long c;
        if (line[0] != '#' && sscanf(line, "%lf %lf %lld", &v, &p, &c) == 3) {
            /* 12 digits, as the --hdr text has them: the percentile is
             * printed, not computed, so no more precision exists. */
            char pct[32];
            snprintf(pct, sizeof pct, "%.12g", p);
            ps_jw_array_open(w);
            ps_jw_double(w, v, 0);
            ps_jw_raw(w, pct);
            ps_jw_int(w, c);
            ps_jw_array_close(w);
        }
        line = nl ? nl + 1 : NULL;
    }
    ps_jw_array_close(w);
    free(text);
    return 0;
}

/* How the open model's schedule was drawn (docs/capacity-testing.md). */
static void schedule_parameters(ps_jw *w, const ps_lg_config *cfg)
{
    ps_jw_kuint(w, "seed", cfg->seed);
    ps_jw_kstring(w, "arrivals", cfg->poisson ? "poisson" : "uniform");
    ps_jw_kdouble(w, "warmup_s", (double)cfg->warmup_ns / 1e9, 3);
    ps_jw_kdouble(w, "max_lateness_s", (double)cfg->max_lateness_ns / 1e9, 6);
    ps_jw_key(w, "key_rate_scale"); /* --rate/--ramp over keys with rates of their own */
    if (cfg->key_scale_from > 0 || cfg->key_scale_to > 0) {
        ps_jw_array_open(w);
        ps_jw_double(w, cfg->key_scale_from, 6);
        ps_jw_double(w, cfg->key_scale_to, 6);
        ps_jw_array_close(w);
    } else {
        ps_jw_null(w);
    }
}

static void parameters(ps_jw *w, const ps_lg_config *cfg)
{
    ps_jw_key(w, "parameters");
    ps_jw_object_open(w);
    ps_jw_kstring(w, "base_url", cfg->base_url);
    ps_jw_kint(w, "threads", cfg->threads);
    ps_jw_kint(w, "connections", cfg->connections);
    if (cfg->duration_ns)
        ps_jw_kdouble(w, "duration_s", (double)cfg->duration_ns / 1e9, 3);
    else
        ps_jw_knull(w, "duration_s");
    if (cfg->requests)
        ps_jw_kint(w, "requests_limit", cfg->requests);
    else
        ps_jw_knull(w, "requests_limit");
    if (cfg->rate > 0)
        ps_jw_kdouble(w, "rate", cfg->rate, 3);
    else
        ps_jw_knull(w, "rate");
    ps_jw_key(w, "ramp");
    if (cfg->ramp) {
        ps_jw_array_open(w);
        ps_jw_double(w, cfg->ramp_from, 3);
        ps_jw_double(w, cfg->ramp_to, 3);
        ps_jw_array_close(w);
    } else {
        ps_jw_null(w);
    }
    ps_jw_kstring(w, "model", ps_lg_config_open_model(cfg) ? "open" : "closed");
    ps_jw_key(w, "mix");
    ps_jw_object_open(w);
    ps_jw_kuint(w, "list", cfg->mix[PS_LG_OP_LIST]);
    ps_jw_kuint(w, "create", cfg->mix[PS_LG_OP_CREATE]);
    ps_jw_object_close(w);
    ps_jw_kstring(w, "engine", cfg->engine == PS_LG_ENGINE_CURL ? "curl" : "epoll");
    ps_jw_kdouble(w, "timeout_s", (double)cfg->timeout_ns / 1e9, 3);
    ps_jw_kbool(w, "verify_limits", cfg->verify_limits);
    ps_jw_kbool(w, "burst", cfg->burst);
    ps_jw_kbool(w, "honour_retry_after", cfg->honour_retry_after);
    ps_jw_kuint(w, "keys", cfg->nkeys);
    ps_jw_key(w, "plans");
    ps_jw_array_open(w);
    for (int p = 0; p < PS_LG_PLANS; p++) {
        bool present = false;
        for (size_t k = 0; k < cfg->nkeys; k++)
            present |= cfg->keys[k].plan.id == (ps_plan_id)p;
        if (present) ps_jw_string(w, ps_plan_name((ps_plan_id)p));
    }
    ps_jw_array_close(w);
    schedule_parameters(w, cfg);
    ps_jw_object_close(w);
}

/* Counts, errors and the latency breakdowns of the merged stats. */
static void counts_and_latencies(ps_jw *w, const ps_lg_summary *s)
{
    const ps_lg_config *cfg = s->cfg;
    const ps_lg_stats *t = s->total;
    double dur = s->duration_s > 0 ? s->duration_s : 1e-9;
    ps_jw_kint(w, "requests", t->scheduled);
    ps_jw_kdouble(w, "duration_s", s->duration_s, 3);
    ps_jw_kdouble(w, "throughput_rps", (double)t->answered / dur, 1);
    ps_jw_kint(w, "scheduled", t->scheduled);
    ps_jw_kint(w, "answered", t->answered);
    ps_jw_kint(w, "failed", t->failed);
    ps_jw_kint(w, "timed_out", t->timed_out);
    ps_jw_kint(w, "skipped_retry_after", t->skipped_retry_after);
    ps_jw_kbool(w, "accounting_exact", t->scheduled == t->answered + t->failed + t->timed_out);
    if (s->generator && s->generator->verdict != PS_LG_GEN_NOT_APPLICABLE)
        ps_jw_kdouble(w, "send_rate_rps", s->generator->send_rate_rps, 1);
    else if (!s->generator && cfg->duration_ns && ps_lg_config_open_model(cfg))
        ps_jw_kdouble(
            w, "send_rate_rps",
            (double)(t->scheduled + t->skipped_retry_after) / ((double)cfg->duration_ns / 1e9), 1);
    ps_jw_key(w, "status");
    ps_jw_object_open(w);
    for (int c = 0; c < 600; c++) {
        if (!t->status[c]) continue;
        char code[8];
        snprintf(code, sizeof code, "%d", c);
        ps_jw_kint(w, code, t->status[c]);
    }
    ps_jw_object_close(w);
    ps_jw_key(w, "errors");
    ps_jw_object_open(w);
    ps_jw_kint(w, "connect", t->err_connect);
    ps_jw_kint(w, "read", t->err_read);
    ps_jw_kint(w, "timeout", t->err_timeout);
    ps_jw_object_close(w);
    ps_jw_kint(w, "connect_failures", t->connect_failures);
    ps_jw_kdouble(w, "error_rate", ps_lg_error_rate(t), 6);
    pair_obj(w, "latency_us", &t->all);
    ps_jw_key(w, "operations");
    ps_jw_object_open(w);
    for (int o = 0; o < PS_LG_OPS; o++) {
        ps_jw_key(w, ps_lg_op_names[o]);
        ps_jw_object_open(w);
        ps_jw_kint(w, "requests", t->op_requests[o]);
        pair_obj(w, "latency_us", &t->op[o]);
        ps_jw_object_close(w);
    }
    ps_jw_object_close(w);
    ps_jw_key(w, "status_classes");
    ps_jw_object_open(w);
    for (int c = 0; c < PS_LG_CLASSES; c++) {
        ps_jw_key(w, ps_lg_class_names[c]);
        ps_jw_object_open(w);
        ps_jw_kint(w, "count", t->cls[c].corr ? ps_hist_total_count(t->cls[c].corr) : 0);
        pair_obj(w, "latency_us", &t->cls[c]);
        ps_jw_object_close(w);
    }
    ps_jw_object_close(w);
}

static void intervals(ps_jw *w, const ps_lg_interval_row *rows, size_t nrows)
{
    ps_jw_key(w, "intervals");
    ps_jw_array_open(w);
    for (size_t i = 0; i < nrows; i++) {
        const ps_lg_interval_row *r = &rows[i];
        ps_jw_object_open(w);
        ps_jw_kdouble(w, "t_s", r->t_s, 3);
        ps_jw_kdouble(w, "length_s", r->length_s, 3);
        ps_jw_kint(w, "requests", r->requests);
        ps_jw_kdouble(w, "throughput_rps",
                      r->length_s > 0 ? (double)r->requests / r->length_s : 0.0, 1);
        /* no answer in the interval, no latency: null, not a measured 0 */
        static const char *const lat_names[] = {"p50_us", "p90_us", "p99_us", "max_us"};
        int64_t lat[] = {r->p50_us, r->p90_us, r->p99_us, r->max_us};
        for (size_t k = 0; k < sizeof lat / sizeof lat[0]; k++) {
            if (r->requests > 0)
                ps_jw_kint(w, lat_names[k], lat[k]);
            else
                ps_jw_knull(w, lat_names[k]);
        }
        ps_jw_key(w, "status_classes");
        ps_jw_object_open(w);
        ps_lg_fields_json(w, ps_lg_row_class_fields, PS_LG_ROW_CLASS_FIELDS, r);
        ps_jw_object_close(w);
        ps_jw_object_close(w);
    }
    ps_jw_array_close(w);
}

/* The measured time the rates are over: the duration, else the run's. */
static double measured_s(const ps_lg_summary *s)
{
    double m = s->cfg->duration_ns ? (double)s->cfg->duration_ns / 1e9 : s->duration_s;
    return m > 0 ? m : 1e-9;
}

/* Rates, share of quota and the limits' tally of some keys (a plan's or a
 * group's): what capacity testing asks of each (a plan's in a run's report,
 * a group's in a merge's too: the shards carry their groups' counts).
 * quota_rps: the keys' per-minute limits as a rate, 0 when not known. */
static void capacity_figures(ps_jw *w, const ps_lg_summary *s, int64_t sent, int64_t answered,
                             int64_t admitted, double quota_rps, const ps_lg_window_tally *tally)
{
    double measured = measured_s(s);
    double offered = (double)sent / measured;
    ps_jw_kint(w, "sent", sent);
    ps_jw_kdouble(w, "offered_rps", offered, 3);
    ps_jw_kdouble(w, "achieved_rps", (double)answered / measured, 3);
    ps_jw_kdouble(w, "admitted_rps", (double)admitted / measured, 3);
    if (quota_rps > 0)
        ps_jw_kdouble(w, "quota_share", offered / quota_rps, 4);
    else
        ps_jw_knull(w, "quota_share");
    if (!s->limits_checked || !tally) return;
    ps_jw_kuint(w, "windows_filled", tally->filled);
    ps_jw_kint(w, "refused_correct", tally->refused_correct);
    ps_jw_kint(w, "refused_early", tally->refused_early);
}

/* The per-minute limits of the keys `keep` selects, per second of the
 * service's clock (--time-scale); 0 when any of them is not known. */
static double quota_rps(const ps_lg_config *cfg, bool (*keep)(const ps_lg_key *, size_t),
                        size_t which)
{
    double quota = 0;
    for (size_t k = 0; k < cfg->nkeys; k++) {
        if (!keep(&cfg->keys[k], which)) continue;
        if (cfg->keys[k].plan.per_minute <= 0) return 0;
        quota += (double)cfg->keys[k].plan.per_minute;
    }
    return quota / 60.0 * (cfg->time_scale > 0 ? cfg->time_scale : 1);
}

static bool of_plan(const ps_lg_key *k, size_t plan)
{
    return k->plan.id == (ps_plan_id)plan;
}

/* How much of its keys' quota a plan spent: admitted over their
 * per-minute limits (per second, times --time-scale) and over their
 * per-day limits, each the keys' average; nothing when a limit is not
 * known. A key's day is spent in 1/share of the run's length, so a
 * capacity test can say before the day runs out. */
static void quota_spent(ps_jw *w, const ps_lg_summary *s, size_t plan, int64_t admitted)
{
    const ps_lg_config *cfg = s->cfg;
    double minute = quota_rps(cfg, of_plan, plan), day = 0;
    for (size_t k = 0; k < cfg->nkeys; k++) {
        if (!of_plan(&cfg->keys[k], plan)) continue;
        if (cfg->keys[k].plan.per_day <= 0) return;
        day += (double)cfg->keys[k].plan.per_day;
    }
    if (!(minute > 0) || !(day > 0)) return;
    ps_jw_kdouble(w, "minute_quota_spent", (double)admitted / measured_s(s) / minute, 4);
    ps_jw_kdouble(w, "day_quota_spent", (double)admitted / day, 4);
}

static void plans(ps_jw *w, const ps_lg_summary *s)
{
    const ps_lg_config *cfg = s->cfg;
    const ps_lg_stats *t = s->total;
    ps_jw_key(w, "plans");
    ps_jw_array_open(w);
    for (int p = 0; p < PS_LG_PLANS; p++) {
        size_t nkeys = 0;
        for (size_t k = 0; k < cfg->nkeys; k++)
            nkeys += cfg->keys[k].plan.id == (ps_plan_id)p;
        if (!nkeys) continue;
        ps_jw_object_open(w);
        ps_jw_kstring(w, "plan", ps_plan_name((ps_plan_id)p));
        ps_jw_kuint(w, "keys", nkeys);
        ps_jw_kint(w, "admitted", t->plan_admitted[p]);
        ps_jw_kint(w, "limited", t->plan_limited[p]);
        pair_obj(w, "latency_us", &t->plan[p]);
        if (s->generator)
            capacity_figures(w, s, t->plan_sent[p],
                             t->plan_admitted[p] + t->plan_limited[p] + t->plan_unavailable[p],
                             t->plan_admitted[p], quota_rps(cfg, of_plan, (size_t)p),
                             &s->tally_by_plan[p]);
        if (t->plan_unavailable[p]) ps_jw_kint(w, "unavailable", t->plan_unavailable[p]);
        if (s->generator) quota_spent(w, s, (size_t)p, t->plan_admitted[p]);
        ps_jw_object_close(w);
    }
    ps_jw_array_close(w);
}

/* What one key group holds, gathered in one pass over the keys (a scan
 * of every key per group was quadratic: 80,000 groups took 15 s). */
typedef struct {
    size_t nkeys;
    unsigned plan_mask;
    double per_minute; /* its keys' limits summed; < 0: one is not known */
} group_keys;

static group_keys *gather_group_keys(const ps_lg_config *cfg)
{
    group_keys *gk = calloc(cfg->ngroups, sizeof *gk);
    if (!gk) abort();
    for (size_t k = 0; k < cfg->nkeys; k++) {
        const ps_lg_key *key = &cfg->keys[k];
        if (key->group >= cfg->ngroups) continue;
        group_keys *g = &gk[key->group];
        g->nkeys++;
        g->plan_mask |= 1u << key->plan.id;
        if (key->plan.per_minute <= 0 || g->per_minute < 0)
            g->per_minute = -1;
        else
            g->per_minute += (double)key->plan.per_minute;
    }
    return gk;
}

/* Key groups (the keys file's group=NAME), when any key names one: a run's,
 * or a merge's from its shards' counts (merge_groups.c). */
static void groups(ps_jw *w, const ps_lg_summary *s)
{
    const ps_lg_config *cfg = s->cfg;
    const ps_lg_stats *t = s->total;
    if (!cfg->ngroups || !t->groups || t->ngroups != cfg->ngroups) return;
    group_keys *gk = gather_group_keys(cfg);
    double scale = cfg->time_scale > 0 ? cfg->time_scale : 1;
    ps_jw_key(w, "groups");
    ps_jw_array_open(w);
    for (size_t g = 0; g < cfg->ngroups; g++) {
        if (!gk[g].nkeys) continue;
        const ps_lg_group_counts *c = &t->groups[g];
        ps_jw_object_open(w);
        ps_jw_kstring(w, "group", ps_lg_config_group_name(cfg, g));
        ps_jw_kuint(w, "keys", gk[g].nkeys);
        ps_jw_key(w, "plans");
        ps_jw_array_open(w);
        for (int p = 0; p < PS_LG_PLANS; p++)
            if (gk[g].plan_mask & (1u << p)) ps_jw_string(w, ps_plan_name((ps_plan_id)p));
        ps_jw_array_close(w);
        ps_jw_kint(w, "admitted", c->admitted);
        ps_jw_kint(w, "limited", c->limited);
        capacity_figures(w, s, c->sent, c->answered, c->admitted,
                         gk[g].per_minute > 0 ? gk[g].per_minute / 60.0 * scale : 0,
                         s->tally_by_group ? &s->tally_by_group[g] : NULL);
        ps_jw_object_close(w);
    }
    ps_jw_array_close(w);
    free(gk);
}

static void limits(ps_jw *w, const ps_lg_summary *s)
{
    const ps_lg_config *cfg = s->cfg;
    /* Nothing checked is not a pass: no window seen, no violation, no verdict. */
    /* Windows seen but none filled: the limits were never put to the test. */
    const char *verdict = !s->limits_checked                       ? "not_checked"
                          : s->failing_violations                  ? "fail"
                          : s->windows == 0                        ? "not_checked"
                          : s->windows_filled == 0 && s->generator ? "not_exercised"
                                                                   : "pass";
    ps_jw_key(w, "limits");
    ps_jw_object_open(w);
    ps_jw_kstring(w, "verdict", verdict);
    ps_jw_kbool(w, "checked", s->limits_checked);
    ps_jw_kuint(w, "windows", s->windows);
    if (s->generator) ps_jw_kuint(w, "windows_filled", s->windows_filled);
    if (s->volley) {
        /* the window-opening volleys (volley.h): how many requests went out,
         * and how many of them met another on their key in flight */
        ps_jw_key(w, "volley");
        ps_jw_object_open(w);
        ps_jw_kint(w, "requests", s->volley->sent);
        ps_jw_kint(w, "concurrent", s->volley->concurrent);
        ps_jw_kint(w, "most_together", s->volley->most_together);
        ps_jw_object_close(w);
    }
    ps_jw_key(w, "violations");
    ps_jw_array_open(w);
    for (size_t i = 0; i < s->nviolations; i++) {
        const ps_lg_violation *v = &s->violations[i];
        const char *red = cfg->keys[v->key].label;
        ps_jw_object_open(w);
        ps_jw_kstring(w, "key", red);
        ps_jw_kstring(w, "plan", ps_plan_name(cfg->keys[v->key].plan.id));
        ps_jw_kstring(w, "kind", ps_lg_violation_kind_name(v->kind));
        ps_jw_kstring(w, "severity", v->fails ? "error" : "warning");
        ps_jw_kstring(w, "window", v->window);
        ps_jw_kint(w, "window_reset", v->reset);
        ps_jw_kint(w, "admitted", v->admitted);
        ps_jw_kint(w, "limit", v->limit);
        ps_jw_kint(w, "count", v->count);
        ps_jw_kstring(w, "message", v->message);
        ps_jw_object_close(w);
    }
    ps_jw_array_close(w);
    ps_jw_key(w, "models"); /* information: which limiter the headers showed */
    ps_jw_array_open(w);
    for (size_t i = 0; i < s->nmodels; i++) {
        const ps_lg_key_model *m = &s->models[i];
        const char *red = cfg->keys[m->key].label;
        ps_jw_object_open(w);
        ps_jw_kstring(w, "key", red);
        ps_jw_kint(w, "limit", m->limit);
        ps_jw_kstring(w, "model", ps_rlm_label_name(m->model));
        ps_jw_kint(w, "window_ms", m->window_ms);
        ps_jw_object_close(w);
    }
    ps_jw_array_close(w);
    ps_jw_key(w, "counting"); /* which answers the windows' admissions counted, and why */
    ps_jw_array_open(w);
    for (size_t i = 0; i < s->ncounting; i++) {
        const ps_lg_counting *c = &s->counting[i];
        const char *red = cfg->keys[c->key].label;
        ps_jw_object_open(w);
        ps_jw_kstring(w, "key", red);
        ps_jw_kstring(w, "list", ps_rlm_counted_name(c->counting.ops[PS_RLM_OP_LIST]));
        ps_jw_kstring(w, "create", ps_rlm_counted_name(c->counting.ops[PS_RLM_OP_CREATE]));
        ps_jw_kstring(w, "errors_4xx", ps_rlm_counted_name(c->counting.errors));
        ps_jw_kbool(w, "inferred", c->counting.inferred);
        ps_jw_kstring(w, "reason", c->counting.reason);
        ps_jw_object_close(w);
    }
    ps_jw_array_close(w);
    ps_jw_object_close(w);
}

static void thresholds(ps_jw *w, const ps_lg_config *cfg, const ps_lg_threshold_result *results)
{
    ps_jw_key(w, "thresholds");
    ps_jw_array_open(w);
    for (size_t i = 0; i < cfg->nthresholds; i++) {
        const ps_lg_threshold *th = &cfg->thresholds[i];
        const ps_lg_threshold_result *r = &results[i];
        ps_jw_object_open(w);
        ps_jw_kstring(w, "expression", th->expression);
        ps_jw_kbool(w, "passed", r->passed);
        if (th->metric == PS_LG_METRIC_ERROR_RATE) {
            ps_jw_kdouble(w, "actual", r->actual, 6);
            ps_jw_kdouble(w, "bound", th->bound, 6);
        } else {
            ps_jw_kdouble(w, "actual_us", r->actual, 0);
            ps_jw_kdouble(w, "bound_us", th->bound, 0);
            ps_jw_kdouble(w, "own_us", r->own, 0);
            if (r->late >= 0)
                ps_jw_kdouble(w, "lateness_us", r->late, 0);
            else
                ps_jw_knull(w, "lateness_us"); /* not measured: a closed model, a merge */
            ps_jw_kbool(w, "lost_to_generator", r->lost_to_generator);
        }
        ps_jw_object_close(w);
    }
    ps_jw_array_close(w);
}

/* The generator's health and the error budget (docs/capacity-testing.md). */
static void capacity_members(ps_jw *w, const ps_lg_summary *s)
{
    ps_lg_generator_json(w, s->generator);
    ps_jw_key(w, "error_budget");
    ps_jw_object_open(w);
    ps_jw_kdouble(w, "budget", s->cfg->error_budget, 6);
    ps_jw_kdouble(w, "error_rate", ps_lg_error_rate(s->total), 6);
    ps_jw_kbool(w, "passed", !s->error_budget_failed);
    ps_jw_object_close(w);
}

int ps_lg_summary_json(const ps_lg_summary *s, ps_buf *b, ps_error *err)
{
    const ps_lg_stats *t = s->total;
    char started[32];
    ps_clock_format_utc(s->started_wall_ns, started, sizeof started);
    ps_jw w;
    ps_jw_init(&w, b, true);
    ps_jw_object_open(&w);
    ps_jw_kstring(&w, "tool", "petstore-load");
    ps_jw_kstring(&w, "version", PS_VERSION);
    ps_jw_kint(&w, "format", 1);
    parameters(&w, s->cfg);
    ps_jw_kstring(&w, "started_at", started);
    counts_and_latencies(&w, s);
    ps_jw_key(&w, "percentile_spectrum");
    ps_jw_object_open(&w);
    ps_jw_key(&w, "corrected");
    if (ps_lg_spectrum_json(t->all.corr, &w, err) != 0) return -1;
    ps_jw_key(&w, "uncorrected");
    if (ps_lg_spectrum_json(t->all.unc, &w, err) != 0) return -1;
    ps_jw_object_close(&w);
    intervals(&w, s->rows, s->nrows);
    plans(&w, s);
    groups(&w, s);
    limits(&w, s);
    thresholds(&w, s->cfg, s->thresholds);
    if (s->generator) capacity_members(&w, s);
    ps_jw_kbool(&w, "interrupted", s->interrupted);
    ps_jw_kstring(&w, "aborted", s->aborted); /* NULL: null */
    ps_jw_kstring(&w, "verdict", s->verdict ? s->verdict : s->exit_code == 0 ? "pass" : "fail");
    ps_jw_kint(&w, "exit_code", s->exit_code);
    if (s->extra && s->extra(&w, s->extra_arg, err) != 0) return -1;
    ps_jw_object_close(&w);
    ps_buf_putc(b, '\n');
    if (!ps_jw_ok(&w)) return ps_error_set(err, "internal error: the JSON summary is malformed");
    return 0;
}
