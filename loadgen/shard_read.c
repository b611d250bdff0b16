/* shard_read.c - a shard's report checked before the merge takes anything
 * from it (shard_read.h). */
#include "loadgen/shard_read.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>

#include "core/buf.h"
#include "core/hdr_log.h"
#include "core/histogram.h"
#include "core/keys_file.h"
#include "core/plan.h"
#include "loadgen/stats.h"

typedef struct vctx {
    const char *path;
    ps_error *err;
    ps_hist *like; /* the run's layout, what every histogram must have */
    int64_t scheduled, answered, unanswered;
    int64_t warm;   /* --warmup requests: in no total, but seen by the per-key checks */
    size_t ngroups; /* shard.groups[]' length, 0: none */
} vctx;

static int bad(vctx *v, const char *member, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(vctx *v, const char *member, const char *fmt, ...)
{
    char why[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return ps_error_set(v->err, "'%s': %s: %s", v->path, member, why);
}

int ps_lg_shard_text_ok(const char *s, size_t len, size_t max)
{
    if (len == 0 || len > max) return 0;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) return 0;
    return 1;
}

/* where.key, or where alone when it already names the member. */
static void member_name(const char *where, const char *key, char *out, size_t size)
{
    size_t wl = strlen(where), kl = strlen(key);
    if (wl >= kl && strcmp(where + wl - kl, key) == 0)
        snprintf(out, size, "%s", where);
    else
        snprintf(out, size, "%s.%s", where, key);
}

/* The count at obj.key (where names obj, or the member): an integer 0..max. Absent: dflt
 * when dflt >= 0, else an error. */
static int count(vctx *v, const ps_json *obj, const char *key, const char *where, int64_t dflt,
                 int64_t max, int64_t *out)
{
    char label[128];
    member_name(where, key, label, sizeof label);
    const ps_json *j = obj ? ps_json_path(obj, key) : NULL;
    if (!j || j->type == PS_JSON_NULL) {
        if (dflt < 0) return bad(v, label, "missing");
        *out = dflt;
        return 0;
    }
    if (j->type != PS_JSON_NUMBER)
        return bad(v, label, "a %s, not a count", ps_json_type_name(j->type));
    if (!j->is_int) return bad(v, label, "'%.40s' is not an integer count", j->str);
    if (j->i < 0) return bad(v, label, "%lld is negative", (long long)j->i);
    if (j->i > max) return bad(v, label, "%lld is more than %lld", (long long)j->i, (long long)max);
    *out = j->i;
    return 0;
}

/* A finite number in [lo, hi] at obj.key; absent or null: dflt (NAN: an error). */
static int number(vctx *v, const ps_json *obj, const char *key, const char *where, double dflt,
                  double lo, double hi, double *out)
{
    char label[128];
    member_name(where, key, label, sizeof label);
    const ps_json *j = obj ? ps_json_path(obj, key) : NULL;
    if (!j || j->type == PS_JSON_NULL) {
        if (isnan(dflt)) return bad(v, label, "missing");
        *out = dflt;
        return 0;
    }
    if (j->type != PS_JSON_NUMBER)
        return bad(v, label, "a %s, not a number", ps_json_type_name(j->type));
    if (!isfinite(j->d) || j->d < lo || j->d > hi)
        return bad(v, label, "%.40s is outside %g..%g", j->str, lo, hi);
    *out = j->d;
    return 0;
}

/* The histogram text at obj.key: "" (none, total 0) or the run's layout. */
static int hist_total(vctx *v, const ps_json *j, const char *label, int64_t *total)
{
    if (!j || j->type != PS_JSON_STRING) return bad(v, label, "missing or not a string");
    *total = 0;
    if (j->len == 0) return 0;
    ps_hist *h = NULL;
    ps_error e;
    if (ps_hdr_log_decode_like(j->str, j->len, v->like, &h, &e) != 0)
        return bad(v, label, "%s", e.message);
    *total = ps_hist_total_count(h);
    ps_hist_close(h);
    return 0;
}

/* shard.histograms.PATH's corrected and uncorrected totals, which must be
 * equal; want >= 0: and equal to want. */
static int pair_total(vctx *v, const ps_json *shard, const char *path, int64_t want, int64_t *total)
{
    char label[96], p[96];
    snprintf(label, sizeof label, "shard.histograms.%s", path);
    snprintf(p, sizeof p, "histograms.%s", path);
    const ps_json *pair = ps_json_path(shard, p);
    if (!pair || pair->type != PS_JSON_OBJECT) return bad(v, label, "missing or not an object");
    int64_t c, u;
    if (hist_total(v, ps_json_get(pair, "corrected"), label, &c) != 0 ||
        hist_total(v, ps_json_get(pair, "uncorrected"), label, &u) != 0)
        return -1;
    if (c != u)
        return bad(v, label, "corrected total %lld but uncorrected %lld", (long long)c,
                   (long long)u);
    if (want >= 0 && c != want)
        return bad(v, label, "holds %lld latencies, the report's count is %lld", (long long)c,
                   (long long)want);
    *total = c;
    return 0;
}

static int totals(vctx *v, const ps_json *d, const ps_json *shard)
{
    const int64_t M = PS_LG_SHARD_COUNT_MAX;
    int64_t scheduled, answered, failed, timed_out, skipped, conn, rd, to, cf, requests;
    if (count(v, d, "scheduled", "scheduled", -1, M, &scheduled) ||
        count(v, d, "answered", "answered", -1, M, &answered) ||
        count(v, d, "failed", "failed", -1, M, &failed) ||
        count(v, d, "timed_out", "timed_out", -1, M, &timed_out) ||
        count(v, d, "skipped_retry_after", "skipped_retry_after", 0, M, &skipped) ||
        count(v, d, "errors.connect", "errors.connect", -1, M, &conn) ||
        count(v, d, "errors.read", "errors.read", -1, M, &rd) ||
        count(v, d, "errors.timeout", "errors.timeout", -1, M, &to) ||
        count(v, d, "connect_failures", "connect_failures", 0, M, &cf) ||
        count(v, d, "requests", "requests", -1, M, &requests) ||
        count(v, d, "generator.warmup_requests", "generator.warmup_requests", 0, M, &v->warm))
        return -1;
    if (answered + failed + timed_out > scheduled)
        return bad(v, "scheduled", "%lld, fewer than the %lld answered, failed or timed out",
                   (long long)scheduled, (long long)(answered + failed + timed_out));
    if (failed != conn + rd || timed_out != to)
        return bad(v, "errors",
                   "connect %lld + read %lld, timeout %lld do not make failed %lld, "
                   "timed_out %lld",
                   (long long)conn, (long long)rd, (long long)to, (long long)failed,
                   (long long)timed_out);
    v->scheduled = scheduled;
    v->answered = answered;
    v->unanswered = failed + timed_out;
    const ps_json *st = ps_json_get(d, "status");
    if (!st || st->type != PS_JSON_OBJECT) return bad(v, "status", "missing or not an object");
    int64_t sum = 0;
    for (size_t k = 0; k < st->count; k++) {
        char label[32];
        snprintf(label, sizeof label, "status.%.3s", st->keys[k]);
        const char *code = st->keys[k];
        if (strlen(code) != 3 || code[0] < '1' || code[0] > '5' || code[1] < '0' || code[1] > '9' ||
            code[2] < '0' || code[2] > '9')
            return bad(v, "status", "a member that is not an HTTP status (100-599)");
        int64_t n;
        if (count(v, st, code, label, -1, answered, &n) != 0) return -1;
        sum += n;
        /* checked at each step: 1,024 members of 2^53 would overflow */
        if (sum > answered)
            return bad(v, "status", "counts %lld answers of %lld answered", (long long)sum,
                       (long long)answered);
    }
    int64_t t, ops = 0;
    if (pair_total(v, shard, "all", answered, &t) != 0) return -1;
    for (int o = 0; o < PS_LG_OPS; o++) {
        char p[64];
        int64_t n;
        snprintf(p, sizeof p, "operations.%s.requests", ps_lg_op_names[o]);
        if (count(v, d, p, p, -1, answered, &n) != 0) return -1;
        snprintf(p, sizeof p, "operations.%s", ps_lg_op_names[o]);
        if (pair_total(v, shard, p, n, &t) != 0) return -1;
        ops += n;
    }
    if (ops != answered)
        return bad(v, "operations", "%lld requests, %lld answered", (long long)ops,
                   (long long)answered);
    int64_t classes = 0;
    for (int c = 0; c < PS_LG_CLASSES; c++) {
        char p[64];
        snprintf(p, sizeof p, "status_classes.%s", ps_lg_class_names[c]);
        if (pair_total(v, shard, p, -1, &t) != 0) return -1;
        classes += t;
    }
    if (classes > answered)
        return bad(v, "shard.histograms.status_classes", "hold %lld latencies of %lld answered",
                   (long long)classes, (long long)answered);
    return 0;
}

static bool plan_known(const char *name)
{
    for (int p = 0; p < PS_LG_PLANS; p++)
        if (strcmp(ps_plan_name((ps_plan_id)p), name) == 0) return true;
    return false;
}

static int plans(vctx *v, const ps_json *d, const ps_json *shard)
{
    const ps_json *plans = ps_json_get(d, "plans");
    if (!plans || plans->type == PS_JSON_NULL) return 0;
    if (plans->type != PS_JSON_ARRAY) return bad(v, "plans", "not an array");
    int64_t sum = 0;
    for (size_t k = 0; k < plans->count; k++) {
        const ps_json *p = plans->items[k];
        char label[48];
        snprintf(label, sizeof label, "plans[%zu]", k);
        const char *name = ps_json_get_string(p, "plan", NULL);
        if (!name || !plan_known(name)) return bad(v, label, "no known plan");
        int64_t a, l, t;
        if (count(v, p, "admitted", label, 0, v->answered, &a) ||
            count(v, p, "limited", label, 0, v->answered, &l))
            return -1;
        sum += a + l;
        /* checked at each step: a long array of 2^53 counts would overflow */
        if (sum > v->answered)
            return bad(v, "plans", "count %lld answers of %lld answered", (long long)sum,
                       (long long)v->answered);
        char hp[64];
        snprintf(hp, sizeof hp, "histograms.plans.%s", name);
        if (ps_json_path(shard, hp) && pair_total(v, shard, hp + strlen("histograms."), a + l, &t))
            return -1;
    }
    return 0;
}

static int intervals(vctx *v, const ps_json *d, const ps_json *shard, double duration_s)
{
    const ps_json *rows = ps_json_get(d, "intervals");
    const ps_json *hists = ps_json_get(shard, "interval_histograms");
    if (!rows || rows->type != PS_JSON_ARRAY) return bad(v, "intervals", "missing or not an array");
    if (!hists || hists->type != PS_JSON_ARRAY)
        return bad(v, "shard.interval_histograms", "missing or not an array");
    if (rows->count != hists->count)
        return bad(v, "shard.interval_histograms", "%zu intervals but %zu interval histograms",
                   rows->count, hists->count);
    int64_t sum = 0;
    for (size_t r = 0; r < rows->count; r++) {
        const ps_json *row = rows->items[r];
        char label[64];
        snprintf(label, sizeof label, "intervals[%zu]", r);
        if (row->type != PS_JSON_OBJECT) return bad(v, label, "not an object");
        double t_s, len;
        int64_t n, h, cls = 0, x;
        /* a row starts within the run: its measured or planned length, and a
         * minute's slack (rounding, a drain, time left out of the figures) */
        if (number(v, row, "t_s", label, NAN, 0, duration_s + 60, &t_s) ||
            number(v, row, "length_s", label, 1, 0, 3600, &len) ||
            count(v, row, "requests", label, -1, v->answered, &n))
            return -1;
        const ps_json *sc = ps_json_get(row, "status_classes");
        static const char *const names[] = {"2xx", "3xx", "4xx", "5xx"};
        for (int c = 0; c < 4; c++) {
            if (count(v, sc, names[c], label, 0, n, &x) != 0) return -1;
            cls += x;
        }
        if (cls > n || count(v, sc, "429", label, 0, n, &x) ||
            count(v, sc, "errors", label, 0, v->unanswered, &x))
            return cls > n ? bad(v, label, "status classes count more than its requests") : -1;
        snprintf(label, sizeof label, "shard.interval_histograms[%zu]", r);
        if (hist_total(v, hists->items[r], label, &h) != 0) return -1;
        if (h != n)
            return bad(v, label, "holds %lld latencies, its interval %lld requests", (long long)h,
                       (long long)n);
        sum += n;
        if (sum > v->answered)
            return bad(v, "intervals", "count more requests than the %lld answered",
                       (long long)v->answered);
    }
    return 0;
}

/* shard.keys[]: ids, labels, plans; returns the number of keys in *nkeys. */
static int keys(vctx *v, const ps_json *shard, size_t *nkeys, int64_t **responses)
{
    const ps_json *keys = ps_json_get(shard, "keys");
    if (!keys || keys->type != PS_JSON_ARRAY)
        return bad(v, "shard.keys", "missing or not an array");
    *nkeys = keys->count;
    *responses = calloc(keys->count + 1, sizeof **responses);
    if (!*responses) abort();
    for (size_t k = 0; k < keys->count; k++) {
        const ps_json *kj = keys->items[k];
        char label[48];
        snprintf(label, sizeof label, "shard.keys[%zu]", k);
        const ps_json *id = ps_json_get(kj, "id"), *name = ps_json_get(kj, "key");
        if (!id || id->type != PS_JSON_STRING || id->len != 16 ||
            strspn(id->str, "0123456789abcdef") != 16)
            return bad(v, label, "its id is not 16 hex digits");
        if (!name || name->type != PS_JSON_STRING || !ps_lg_shard_text_ok(name->str, name->len, 32))
            return bad(v, label, "its label is not 1-32 printable ASCII characters");
        const char *plan = ps_json_get_string(kj, "plan", NULL);
        if (!plan || !plan_known(plan)) return bad(v, label, "no known plan");
        int64_t x;
        double rate;
        if (count(v, kj, "per_minute", label, 0, PS_LG_SHARD_COUNT_MAX, &x) ||
            count(v, kj, "per_day", label, 0, PS_LG_SHARD_COUNT_MAX, &x) ||
            number(v, kj, "rate", label, 0, 0, 1e9, &rate))
            return -1;
        const ps_json *g = ps_json_get(kj, "group");
        if (g && g->type != PS_JSON_NULL) {
            if (!v->ngroups) return bad(v, label, "names a key group, the shard has none");
            if (count(v, kj, "group", label, -1, (int64_t)v->ngroups - 1, &x)) return -1;
        }
        const ps_json *c = ps_json_get(kj, "checks");
        if (!c || c->type == PS_JSON_NULL) continue;
        int64_t resp;
        /* the checks saw the --warmup requests' answers and failures too */
        if (count(v, c, "responses", label, 0, v->answered + v->warm, &resp) ||
            count(v, c, "missing_headers", label, 0, resp, &x) ||
            count(v, c, "bad_headers", label, 0, resp, &x) ||
            count(v, c, "missing_retry_after", label, 0, resp, &x) ||
            count(v, c, "bad_retry_after", label, 0, resp, &x) ||
            count(v, c, "failures", label, 0, v->unanswered + v->warm, &x))
            return -1;
        (*responses)[k] = resp;
    }
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* shard.groups[] (absent in shards of older versions, and of runs whose keys
 * name no group): names as the keys file allows them, each once; counts
 * within the shard's own totals, so the merge's sums are bounded by theirs. */
static int groups(vctx *v, const ps_json *shard)
{
    const ps_json *gs = ps_json_get(shard, "groups");
    v->ngroups = 0;
    if (!gs || gs->type == PS_JSON_NULL) return 0;
    if (gs->type != PS_JSON_ARRAY) return bad(v, "shard.groups", "not an array");
    if (gs->count == 0 || gs->count > PS_LG_SHARD_GROUPS_MAX)
        return bad(v, "shard.groups", "%zu key groups, not 1-%d", gs->count,
                   PS_LG_SHARD_GROUPS_MAX);
    const char **names = calloc(gs->count, sizeof *names);
    if (!names) abort();
    int64_t sent_sum = 0, answered_sum = 0;
    int rc = -1;
    for (size_t g = 0; g < gs->count; g++) {
        const ps_json *gj = gs->items[g];
        char label[48];
        snprintf(label, sizeof label, "shard.groups[%zu]", g);
        const ps_json *name = ps_json_get(gj, "group");
        if (!name || name->type != PS_JSON_STRING || strlen(name->str) != name->len ||
            !ps_keys_group_name_ok(name->str)) {
            bad(v, label, "its name is not 1-64 letters, digits, '_', '.' or '-'");
            goto out;
        }
        names[g] = name->str;
        int64_t sent, answered, admitted, limited;
        if (count(v, gj, "sent", label, -1, v->scheduled, &sent) ||
            count(v, gj, "answered", label, -1, v->answered, &answered) ||
            count(v, gj, "admitted", label, -1, answered, &admitted) ||
            count(v, gj, "limited", label, -1, answered, &limited))
            goto out;
        if (admitted + limited > answered) {
            bad(v, label, "admitted %lld + limited %lld, more than its %lld answered",
                (long long)admitted, (long long)limited, (long long)answered);
            goto out;
        }
        sent_sum += sent;
        answered_sum += answered;
        if (sent_sum > v->scheduled || answered_sum > v->answered) {
            bad(v, "shard.groups", "count more than the shard's %lld scheduled, %lld answered",
                (long long)v->scheduled, (long long)v->answered);
            goto out;
        }
    }
    qsort(names, gs->count, sizeof *names, name_cmp);
    for (size_t g = 1; g < gs->count; g++)
        if (strcmp(names[g - 1], names[g]) == 0) {
            bad(v, "shard.groups", "key group '%s' is listed twice", names[g]);
            goto out;
        }
    v->ngroups = gs->count;
    rc = 0;
out:
    free(names);
    return rc;
}

static int windows(vctx *v, const ps_json *shard, size_t nkeys, int64_t *room)
{
    const ps_json *wins = ps_json_get(shard, "windows");
    if (!wins || wins->type == PS_JSON_NULL) return 0;
    if (wins->type != PS_JSON_ARRAY) return bad(v, "shard.windows", "not an array");
    static const char *const by[] = {"list", "list_4xx", "create", "create_4xx"};
    for (size_t w = 0; w < wins->count; w++) {
        const ps_json *j = wins->items[w];
        char label[48];
        snprintf(label, sizeof label, "shard.windows[%zu]", w);
        if (j->type != PS_JSON_OBJECT) return bad(v, label, "not an object");
        int64_t key, limit, admitted, limited, x, sum = 0, lsum = 0;
        if (count(v, j, "key", label, -1, PS_LG_SHARD_COUNT_MAX, &key)) return -1;
        if ((uint64_t)key >= nkeys) return bad(v, label, "names no key of the shard");
        if (count(v, j, "limit", label, 0, PS_LG_SHARD_COUNT_MAX, &limit) ||
            count(v, j, "admitted", label, 0, v->answered + v->warm, &admitted) ||
            count(v, j, "limited", label, 0, v->answered + v->warm, &limited))
            return -1;
        /* what a window counts came from its key's responses (--warmup's too) */
        if (admitted + limited > room[key])
            return bad(v, label, "counts %lld responses, its key had %lld left",
                       (long long)(admitted + limited), (long long)room[key]);
        room[key] -= admitted + limited;
        for (int k = 0; k < 4; k++) {
            char f[32];
            int64_t a, fell;
            snprintf(f, sizeof f, "admitted_%s", by[k]);
            if (count(v, j, f, label, 0, admitted, &a)) return -1;
            snprintf(f, sizeof f, "fell_%s", by[k]);
            if (count(v, j, f, label, 0, a, &fell)) return -1;
            snprintf(f, sizeof f, "untold_%s", by[k]);
            if (count(v, j, f, label, 0, a - fell, &x)) return -1;
            sum += a;
        }
        if (count(v, j, "rises", label, 0, admitted, &x)) return -1;
        if (count(v, j, "limited_list", label, 0, limited, &x)) return -1;
        lsum += x;
        if (count(v, j, "limited_create", label, 0, limited, &x)) return -1;
        lsum += x;
        if (count(v, j, "limited_warm", label, 0, limited, &x)) return -1;
        if (sum > admitted || lsum > limited)
            return bad(v, label, "its counts by kind exceed its totals");
        static const char *const signed_fields[] = {"reset", "max_remaining", "min_remaining",
                                                    "min_ahead_s"};
        for (int f = 0; f < 4; f++) {
            const ps_json *s = ps_json_get(j, signed_fields[f]);
            if (!s || s->type == PS_JSON_NULL) continue;
            if (s->type != PS_JSON_NUMBER || !s->is_int || s->i < -PS_LG_SHARD_COUNT_MAX ||
                s->i > PS_LG_SHARD_COUNT_MAX)
                return bad(v, label, "%s is not an integer within +-2^53", signed_fields[f]);
        }
    }
    return 0;
}

static int parameters(vctx *v, const ps_json *d)
{
    const ps_json *p = ps_json_get(d, "parameters");
    if (!p || p->type != PS_JSON_OBJECT) return bad(v, "parameters", "missing or not an object");
    int64_t x;
    double y;
    if (count(v, p, "threads", "parameters.threads", -1, 1000000, &x) ||
        count(v, p, "connections", "parameters.connections", -1, 10000000, &x) ||
        count(v, p, "requests_limit", "parameters.requests_limit", 0, PS_LG_SHARD_COUNT_MAX, &x) ||
        count(v, p, "mix.list", "parameters.mix.list", 0, 1000000, &x) ||
        count(v, p, "mix.create", "parameters.mix.create", 0, 1000000, &x) ||
        number(v, p, "rate", "parameters.rate", 0, 0, 1e9, &y) ||
        number(v, p, "duration_s", "parameters.duration_s", 0, 0, 1e8, &y) ||
        number(v, p, "timeout_s", "parameters.timeout_s", 0, 0, 1e8, &y))
        return -1;
    const ps_json *ramp = ps_json_get(p, "ramp");
    if (ramp && ramp->type != PS_JSON_NULL) {
        if (ramp->type != PS_JSON_ARRAY || ramp->count != 2 ||
            ramp->items[0]->type != PS_JSON_NUMBER || ramp->items[1]->type != PS_JSON_NUMBER ||
            !(ramp->items[0]->d >= 0 && ramp->items[0]->d <= 1e9) ||
            !(ramp->items[1]->d >= 0 && ramp->items[1]->d <= 1e9))
            return bad(v, "parameters.ramp", "not two rates of 0..1e9");
    }
    if (count(v, d, "exit_code", "exit_code", -1, 255, &x)) return -1;
    static const char *const texts[] = {"verdict", "aborted"};
    for (int t = 0; t < 2; t++) {
        const ps_json *j = ps_json_get(d, texts[t]);
        if (j && j->type != PS_JSON_NULL && (j->type != PS_JSON_STRING || j->len > 1024))
            return bad(v, texts[t], "not a string of at most 1024 bytes");
    }
    const ps_json *url = ps_json_get(p, "base_url");
    if (url && (url->type != PS_JSON_STRING || !ps_lg_shard_text_ok(url->str, url->len, 4096)))
        return bad(v, "parameters.base_url", "not 1-4096 printable ASCII characters");
    return 0;
}

int ps_lg_shard_validate(const ps_json *doc, const char *path, ps_error *err)
{
    vctx v = {.path = path, .err = err};
    int64_t *room = NULL;
    size_t nkeys = 0;
    int rc = -1;
    const ps_json *shard = ps_json_get(doc, "shard");
    if (ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS, &v.like, err))
        return -1;
    const ps_json *run_id = ps_json_get(shard, "run_id");
    double start, duration;
    if (!run_id || run_id->type != PS_JSON_STRING ||
        !ps_lg_shard_text_ok(run_id->str, run_id->len, PS_LG_SHARD_TEXT_MAX)) {
        bad(&v, "shard.run_id", "not 1-%d printable ASCII characters", PS_LG_SHARD_TEXT_MAX);
        goto out;
    }
    /* a Unix time between 1970 and 2286, and a run of at most ~3 years */
    double planned;
    if (number(&v, shard, "start_unix_s", "shard.start_unix_s", NAN, 1, 1e10, &start) ||
        number(&v, doc, "duration_s", "duration_s", NAN, 0, 1e8, &duration) ||
        number(&v, doc, "parameters.duration_s", "parameters.duration_s", 0, 0, 1e8, &planned) ||
        parameters(&v, doc) || totals(&v, doc, shard) || plans(&v, doc, shard) ||
        intervals(&v, doc, shard, fmax(duration, planned)) || groups(&v, shard) ||
        keys(&v, shard, &nkeys, &room) || windows(&v, shard, nkeys, room))
        goto out;
    rc = 0;
out:
    free(room);
    ps_hist_close(v.like);
    return rc;
}

/* ---- reading: only the members the merge uses are parsed ---- */

typedef struct scan {
    const char *s;
    size_t len, pos;
} scan;

static void skip_ws(scan *c)
{
    while (c->pos < c->len && (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' ||
                               c->s[c->pos] == '\n' || c->s[c->pos] == '\r'))
        c->pos++;
}

/* Past one string (at its opening quote). */
static int skip_string(scan *c)
{
    for (c->pos++; c->pos < c->len; c->pos++) {
        if (c->s[c->pos] == '\\')
            c->pos++;
        else if (c->s[c->pos] == '"')
            return c->pos++, 0;
    }
    return -1;
}

/* Past one value, allocating nothing; elem ('{' or '"'), when not 0, is
 * what every element of an array value must start with. The parser checks
 * the skipped text again where it is kept. */
static int skip_value(scan *c, char elem)
{
    skip_ws(c);
    if (c->pos >= c->len) return -1;
    char open = c->s[c->pos];
    if (open == '"') return skip_string(c);
    if (open != '{' && open != '[') {
        size_t start = c->pos;
        while (c->pos < c->len && !strchr(",}] \t\r\n", c->s[c->pos]))
            c->pos++;
        return c->pos > start ? 0 : -1;
    }
    if (elem && open != '[') return -1;
    int depth = 0;
    for (; c->pos < c->len; c->pos++) {
        char ch = c->s[c->pos];
        if (ch == '"') {
            if (skip_string(c) != 0) return -1;
            c->pos--;
        } else if (ch == '{' || ch == '[') {
            if (++depth > 64) return -1;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0) return c->pos++, 0;
        }
        /* an element of the array starts after '[' or ',' at depth 1 */
        if (elem && depth == 1 && (ch == '[' || ch == ',')) {
            size_t save = c->pos++;
            skip_ws(c);
            if (c->pos < c->len && c->s[c->pos] != elem && !(ch == '[' && c->s[c->pos] == ']'))
                return -1;
            c->pos = save;
        }
    }
    return -1;
}

typedef struct wanted {
    const char *name;
    char elem; /* what an array's elements start with, 0: any value */
} wanted;

static const wanted top_members[] = {
    {"tool", 0},       {"parameters", 0},  {"requests", 0},
    {"duration_s", 0}, {"scheduled", 0},   {"answered", 0},
    {"failed", 0},     {"timed_out", 0},   {"skipped_retry_after", 0},
    {"status", 0},     {"errors", 0},      {"connect_failures", 0},
    {"operations", 0}, {"intervals", '{'}, {"plans", '{'},
    {"exit_code", 0},  {"verdict", 0},     {"aborted", 0},
    {"shard", 0},      {"generator", 0}, /* its warmup_requests (vctx.warm) */
    {NULL, 0},
};
static const wanted shard_members[] = {
    {"index", 0},       {"of", 0},           {"run_id", 0},
    {"start", 0},       {"start_unix_s", 0}, {"start_at_given", 0},
    {"keys_shared", 0}, {"histograms", 0},   {"interval_histograms", '"'},
    {"keys", '{'},      {"windows", '{'},    {"groups", '{'},
    {NULL, 0},
};

/* Copies the object at c into out keeping only the members in keep (the
 * "shard" member filtered the same way, one level down). */
static int filter_object(scan *c, const wanted *keep, ps_buf *out)
{
    skip_ws(c);
    if (c->pos >= c->len || c->s[c->pos] != '{') return -1;
    c->pos++;
    ps_buf_putc(out, '{');
    bool first = true;
    for (;;) {
        skip_ws(c);
        if (c->pos < c->len && c->s[c->pos] == '}') return ps_buf_putc(out, '}'), c->pos++, 0;
        if (c->pos >= c->len || c->s[c->pos] != '"') return -1;
        size_t name = c->pos;
        if (skip_string(c) != 0) return -1;
        size_t name_len = c->pos - name - 2;
        skip_ws(c);
        if (c->pos >= c->len || c->s[c->pos] != ':') return -1;
        c->pos++;
        skip_ws(c);
        const wanted *w = keep;
        while (w->name &&
               (strlen(w->name) != name_len || memcmp(w->name, c->s + name + 1, name_len)))
            w++;
        size_t start = c->pos;
        if (w->name) {
            if (!first) ps_buf_putc(out, ',');
            first = false;
            ps_buf_append(out, c->s + name, name_len + 2);
            ps_buf_putc(out, ':');
        }
        if (w->name && keep == top_members && strcmp(w->name, "shard") == 0 && c->pos < c->len &&
            c->s[c->pos] == '{') {
            if (filter_object(c, shard_members, out) != 0) return -1;
        } else {
            bool array = c->pos < c->len && c->s[c->pos] == '[';
            if (skip_value(c, w->name && array ? w->elem : 0) != 0) return -1;
            if (w->name) ps_buf_append(out, c->s + start, c->pos - start);
        }
        skip_ws(c);
        if (c->pos < c->len && c->s[c->pos] == ',') {
            c->pos++;
            continue;
        }
        if (c->pos < c->len && c->s[c->pos] == '}') return ps_buf_putc(out, '}'), c->pos++, 0;
        return -1;
    }
}

int ps_lg_shard_read(const char *path, ps_json **doc, ps_error *err)
{
    *doc = NULL;
    ps_buf text = PS_BUF_INIT, kept = PS_BUF_INIT;
    int rc = -1;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > PS_LG_SHARD_FILE_MAX) {
        ps_error_set(err, "'%s': %lld bytes, more than a shard report's %lld", path,
                     (long long)st.st_size, (long long)PS_LG_SHARD_FILE_MAX);
        goto out;
    }
    if (ps_buf_read_file(&text, path) != 0) {
        ps_error_set(err, "cannot read '%s': %s", path, strerror(errno));
        goto out;
    }
    scan c = {.s = text.data ? text.data : "", .len = text.len};
    if (filter_object(&c, top_members, &kept) != 0) {
        /* not parsed: a list of the wrong kind would cost its whole tree */
        ps_error_set(err,
                     "'%s': not a shard report near byte %zu (malformed JSON, or a list of the "
                     "wrong kind in intervals, plans, shard.keys, shard.windows, shard.groups "
                     "or shard.interval_histograms)",
                     path, c.pos);
        goto out;
    }
    ps_buf_free(&text); /* before the tree is built: one copy at a time */
    *doc = ps_json_parse(kept.data, kept.len, NULL, err);
    if (!*doc) {
        ps_error_prefix(err, "'%s': ", path);
        goto out;
    }
    rc = 0;
out:
    ps_buf_free(&text);
    ps_buf_free(&kept);
    return rc;
}
