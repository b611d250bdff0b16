/* merge.c - `petstore-load merge`: the shard reports of one run merged into
 * one report, judged as one run (merge.h). */
#include "loadgen/merge.h"
#include "loadgen/merge_internal.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/hash.h"
#include "core/hdr_log.h"
#include "core/histogram_print.h"
#include "core/json.h"
#include "loadgen/run.h"
#include "loadgen/shard_read.h"
#include "loadgen/shard_report.h"
#include "loadgen/summary.h"
#include "reports/html_report.h"

static void usage(FILE *out)
{
    fputs("usage: petstore-load merge SHARD.json... [--json F] [--hdr F] [--hdr-log F] [--html F]\n"
          "         [--threshold EXPR]... [--verify-limits] [--limited-ops auto|all|list|create]\n"
          "         [--limited-errors auto|yes|no] [--quiet]\n"
          "  merges the --json reports of every shard of one run (petstore-load --shard I/N or\n"
          "  --shards N) as if one process had run, and judges it: limits on the sums per key\n"
          "  and window, thresholds on the merged latencies.\n"
          "  -h, --help  this text (docs/distributed.md walks through a sharded run)\n"
          "exit: 0 ok, 1 rate limit violated, 2 usage or mismatched reports, 99 threshold failed,\n"
          "      3 a shard missing or failed\n",
          out);
}

enum {
    M_JSON = 256,
    M_HDR,
    M_HDR_LOG,
    M_HTML,
    M_THRESHOLD,
    M_VERIFY,
    M_QUIET,
    M_HELP,
    M_LIMITED_OPS,
    M_LIMITED_ERRORS
};

static const struct option merge_options[] = {
    {"json", required_argument, NULL, M_JSON},
    {"hdr", required_argument, NULL, M_HDR},
    {"hdr-log", required_argument, NULL, M_HDR_LOG},
    {"html", required_argument, NULL, M_HTML},
    {"threshold", required_argument, NULL, M_THRESHOLD},
    {"verify-limits", no_argument, NULL, M_VERIFY},
    {"quiet", no_argument, NULL, M_QUIET},
    {"limited-ops", required_argument, NULL, M_LIMITED_OPS},
    {"limited-errors", required_argument, NULL, M_LIMITED_ERRORS},
    {"help", no_argument, NULL, M_HELP},
    {NULL, 0, NULL, 0},
};

/* An output file: given once, not empty. */
static int set_out(merge *m, const char **slot, const char *flag)
{
    if (*slot) return ps_error_set(&m->err, "%s: given twice", flag);
    if (!*optarg) return ps_error_set(&m->err, "%s: empty file name", flag);
    *slot = optarg;
    return 0;
}

/* The command line, in the one style of the three programs (core/cli.h):
 * getopt_long, -h, errors naming the flag. Returns 0, 1 for --help, -1
 * with a message. Shard paths are the remaining arguments. */
static int parse_args(merge *m, int argc, char **argv, int *first_file)
{
    ps_lg_config *cfg = &m->cfg;
    int c;
    ps_cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", merge_options, NULL)) != -1) {
        switch (c) {
        case M_JSON:
            if (set_out(m, &m->json_path, "--json") != 0) return -1;
            break;
        case M_HDR:
            if (set_out(m, &m->hdr_path, "--hdr") != 0) return -1;
            break;
        case M_HDR_LOG:
            if (set_out(m, &m->hdr_log_path, "--hdr-log") != 0) return -1;
            break;
        case M_HTML:
            if (set_out(m, &m->html_path, "--html") != 0) return -1;
            break;
        case M_THRESHOLD:
            cfg->thresholds =
                realloc(cfg->thresholds, (cfg->nthresholds + 1) * sizeof *cfg->thresholds);
            if (!cfg->thresholds) abort();
            if (ps_lg_threshold_parse(optarg, &cfg->thresholds[cfg->nthresholds], &m->err) != 0)
                return ps_error_prefix(&m->err, "--threshold: ");
            cfg->nthresholds++;
            break;
        case M_VERIFY:
            m->verify_limits = true;
            break;
        case M_QUIET:
            m->quiet = true;
            break;
        case M_LIMITED_OPS:
            if (ps_lg_limited_ops_parse(optarg, &cfg->limited_ops, &m->err) != 0) return -1;
            break;
        case M_LIMITED_ERRORS:
            if (ps_lg_limited_errors_parse(optarg, &cfg->limited_errors, &m->err) != 0) return -1;
            break;
        case 'h':
        case M_HELP:
            return 1;
        default: /* '?' or ':' */
            return ps_cli_getopt_error(c, argc, argv, merge_options, &m->err);
        }
    }
    if (optind >= argc)
        return ps_error_set(&m->err, "no shard report given (petstore-load merge SHARD.json...)");
    *first_file = optind;
    return 0;
}

static const ps_json *member(const ps_json *o, const char *path, ps_json_type type)
{
    const ps_json *v = o ? ps_json_path(o, path) : NULL;
    return v && v->type == type ? v : NULL;
}

static int64_t int_at(const ps_json *o, const char *path)
{
    const ps_json *v = member(o, path, PS_JSON_NUMBER);
    return v && v->is_int ? v->i : 0; /* counts are integers (shard_read.c refuses others) */
}

static double num_at(const ps_json *o, const char *path)
{
    const ps_json *v = member(o, path, PS_JSON_NUMBER);
    return v ? v->d : 0;
}

/* Adds o's members named by the n fields to obj's counts (a missing member
 * adds the field's absent value). */
static void add_fields(const ps_json *o, const ps_lg_field *fields, size_t n, void *obj)
{
    for (size_t i = 0; i < n; i++)
        *ps_lg_field_at(obj, &fields[i]) += ps_json_get_int(o, fields[i].name, fields[i].absent);
}

/* Reads one report and its identity. Exit 2 on failure. */
static int load_shard(merge *m, shard_doc *s)
{
    if (ps_lg_shard_read(s->path, &s->doc, &m->err) != 0) return -1;
    const ps_json *tool = member(s->doc, "tool", PS_JSON_STRING);
    if (!tool || strcmp(tool->str, "petstore-load") != 0)
        return ps_error_set(&m->err, "'%s' is not a petstore-load report", s->path);
    s->shard = member(s->doc, "shard", PS_JSON_OBJECT);
    if (!s->shard)
        return ps_error_set(&m->err,
                            "'%s' is not a shard's report (no \"shard\" member: run with "
                            "--shard I/N or --shards N)",
                            s->path);
    const ps_json *run_id = member(s->shard, "run_id", PS_JSON_STRING);
    int64_t index = int_at(s->shard, "index"), of = int_at(s->shard, "of");
    s->index = index >= 1 && index <= PS_LG_MAX_SHARDS ? (int)index : 0;
    s->of = of >= 1 && of <= PS_LG_MAX_SHARDS ? (int)of : 0;
    if (!run_id || s->of < 1 || s->index < 1 || s->index > s->of ||
        !member(s->shard, "start_unix_s", PS_JSON_NUMBER) ||
        !member(s->shard, "histograms", PS_JSON_OBJECT) ||
        !member(s->shard, "keys", PS_JSON_ARRAY) ||
        !member(s->shard, "interval_histograms", PS_JSON_ARRAY) ||
        !member(s->doc, "intervals", PS_JSON_ARRAY) ||
        !member(s->doc, "parameters", PS_JSON_OBJECT))
        return ps_error_set(&m->err, "'%s': the \"shard\" member is incomplete or damaged",
                            s->path);
    /* nothing is taken from a shard before all of it is checked (shard_read.h) */
    if (ps_lg_shard_validate(s->doc, s->path, &m->err) != 0) return -1;
    s->run_id = run_id->str;
    s->start_unix_s = num_at(s->shard, "start_unix_s");
    return 0;
}

/* Same run, each shard once, none missing, none failed. Returns the exit
 * code (0 when the set is whole). */
static int check_set(merge *m)
{
    const shard_doc *a = &m->shards[0];
    for (size_t i = 1; i < m->nshards; i++) {
        const shard_doc *b = &m->shards[i];
        if (strcmp(a->run_id, b->run_id) != 0 || a->of != b->of) {
            ps_error_set(&m->err,
                         "shards of different runs: '%s' is shard %d/%d of run %s, '%s' is shard "
                         "%d/%d of run %s",
                         a->path, a->index, a->of, a->run_id, b->path, b->index, b->of, b->run_id);
            return PS_LG_EXIT_USAGE;
        }
    }
    /* Times lie within the run: pods start within minutes of each other, or
     * together with --start-at; starts further apart than the longest
     * shard's run and an hour are not one run. */
    const shard_doc *first = a, *latest = a;
    double longest = 0;
    for (size_t i = 0; i < m->nshards; i++) {
        const shard_doc *s = &m->shards[i];
        if (s->start_unix_s < first->start_unix_s) first = s;
        if (s->start_unix_s > latest->start_unix_s) latest = s;
        double d = num_at(s->doc, "duration_s");
        if (d > longest) longest = d;
    }
    if (latest->start_unix_s - first->start_unix_s > longest + 3600) {
        ps_error_set(&m->err,
                     "'%s': shard.start_unix_s: %.0f s after '%s' started, more than the longest "
                     "shard's %.0f s run and an hour: not one run",
                     latest->path, latest->start_unix_s - first->start_unix_s, first->path,
                     longest);
        return PS_LG_EXIT_USAGE;
    }
    int of = a->of;
    const shard_doc **seen = calloc((size_t)of + 1, sizeof *seen);
    if (!seen) abort();
    int code = 0;
    for (size_t i = 0; i < m->nshards && !code; i++) {
        const shard_doc *s = &m->shards[i];
        if (seen[s->index]) {
            ps_error_set(&m->err, "shard %d/%d given twice: '%s' and '%s'", s->index, of,
                         seen[s->index]->path, s->path);
            code = PS_LG_EXIT_USAGE;
        }
        seen[s->index] = s;
    }
    if (!code) {
        ps_buf missing = PS_BUF_INIT;
        int nmissing = 0;
        for (int i = 1; i <= of; i++)
            if (!seen[i]) ps_buf_printf(&missing, "%s%d", nmissing++ ? ", " : "", i);
        if (nmissing) {
            ps_error_set(&m->err, "run %s has %d shards: %s missing (%s %s)", a->run_id, of,
                         nmissing == 1 ? "one is" : "some are", nmissing == 1 ? "shard" : "shards",
                         missing.data);
            code = PS_LG_EXIT_UNREACHABLE;
        }
        ps_buf_free(&missing);
    }
    for (size_t i = 0; i < m->nshards && !code; i++) {
        const shard_doc *s = &m->shards[i];
        if (int_at(s->doc, "exit_code") != PS_LG_EXIT_UNREACHABLE) continue;
        const ps_json *why = member(s->doc, "aborted", PS_JSON_STRING);
        char verdict[64], reason[256];
        ps_lg_terminal_text(ps_json_get_string(s->doc, "verdict", "?"), verdict, sizeof verdict);
        ps_lg_terminal_text(why ? why->str : "no reason given", reason, sizeof reason);
        ps_error_set(&m->err, "shard %d/%d ('%s') failed: %s: %s", s->index, of, s->path, verdict,
                     reason);
        code = PS_LG_EXIT_UNREACHABLE;
    }
    for (size_t i = 0; i < m->nshards && !code; i++) {
        const shard_doc *s = &m->shards[i];
        if (m->verify_limits && !member(s->shard, "windows", PS_JSON_ARRAY)) {
            ps_error_set(&m->err,
                         "--verify-limits: shard %d/%d ('%s') was run without --verify-limits",
                         s->index, of, s->path);
            code = PS_LG_EXIT_USAGE;
        }
    }
    free(seen);
    return code;
}

static ps_plan_id plan_by_name(const char *name)
{
    for (int p = 0; p < PS_LG_PLANS; p++)
        if (strcmp(ps_plan_name((ps_plan_id)p), name) == 0) return (ps_plan_id)p;
    return PS_PLAN_UNKNOWN;
}

/* The union of the shards' keys by id, in linear time: ids (16 hex
 * digits, shard_read.c) in an open-addressing table kept at most half
 * full (a scan per key made 80,000 keys take 11.6 s). A shard naming one
 * id twice is refused: its counts could not be told apart. */
static int union_keys(merge *m)
{
    ps_lg_config *cfg = &m->cfg;
    size_t total = 0, cap = 16;
    for (size_t i = 0; i < m->nshards; i++)
        total += member(m->shards[i].shard, "keys", PS_JSON_ARRAY)->count;
    while (cap < 2 * total + 2)
        cap *= 2;
    size_t *slots = calloc(cap, sizeof *slots);     /* merged index + 1, 0: empty */
    size_t *last = calloc(total + 1, sizeof *last); /* shard index + 1 that named it last */
    cfg->keys = calloc(total + 1, sizeof *cfg->keys);
    m->key_ids = calloc(total + 1, sizeof *m->key_ids);
    if (!slots || !last || !cfg->keys || !m->key_ids) abort();
    int rc = 0;
    for (size_t i = 0; i < m->nshards && rc == 0; i++) {
        shard_doc *s = &m->shards[i];
        const ps_json *keys = member(s->shard, "keys", PS_JSON_ARRAY);
        s->key_map = calloc(keys->count + 1, sizeof *s->key_map);
        if (!s->key_map) abort();
        for (size_t k = 0; k < keys->count; k++) {
            const ps_json *kj = keys->items[k];
            const char *id = ps_json_get_string(kj, "id", "");
            /* mixed: ids that differ only in their last digits must not
             * fill one run of slots (linear probing would be quadratic) */
            size_t at = (size_t)ps_hash_bytes(id, strlen(id)) & (cap - 1);
            while (slots[at] && strcmp(m->key_ids[slots[at] - 1], id) != 0)
                at = (at + 1) & (cap - 1);
            if (slots[at]) {
                size_t merged = slots[at] - 1;
                if (last[merged] == i + 1) {
                    rc = ps_error_set(&m->err, "'%s': shard.keys[%zu]: key id %s is listed twice",
                                      s->path, k, id);
                    break;
                }
                last[merged] = i + 1;
                s->key_map[k] = merged;
                continue;
            }
            size_t merged = cfg->nkeys++;
            slots[at] = merged + 1;
            last[merged] = i + 1;
            s->key_map[k] = merged;
            m->key_ids[merged] = strdup(id);
            if (!m->key_ids[merged]) abort();
            /* the key itself never left its shard: its label (shard_read.c:
             * printable, at most 32 characters) names it */
            cfg->keys[merged] = (ps_lg_key){
                .key = strdup("***"),
                .plan = {plan_by_name(ps_json_get_string(kj, "plan", "unknown")),
                         ps_json_get_int(kj, "per_minute", 0), ps_json_get_int(kj, "per_day", 0)},
                .rate = ps_json_get_number(kj, "rate", 0),
            };
            if (!cfg->keys[merged].key) abort();
            snprintf(cfg->keys[merged].label, sizeof cfg->keys[merged].label, "%s",
                     ps_json_get_string(kj, "key", "***"));
        }
    }
    free(slots);
    free(last);
    return rc;
}

/* The whole run's parameters (the sums of the shards' shares) and keys (the
 * union, by key id). */
static int build_config(merge *m)
{
    ps_lg_config *cfg = &m->cfg;
    const ps_json *p1 = member(m->shards[0].doc, "parameters", PS_JSON_OBJECT);
    cfg->base_url = strdup(ps_json_get_string(p1, "base_url", ""));
    cfg->run_id = strdup(m->shards[0].run_id);
    if (!cfg->base_url || !cfg->run_id) abort();
    cfg->duration_ns = (int64_t)llround(num_at(p1, "duration_s") * 1e9);
    cfg->mix[PS_LG_OP_LIST] = (unsigned)int_at(p1, "mix.list");
    cfg->mix[PS_LG_OP_CREATE] = (unsigned)int_at(p1, "mix.create");
    cfg->engine = strcmp(ps_json_get_string(p1, "engine", ""), "curl") == 0 ? PS_LG_ENGINE_CURL
                                                                            : PS_LG_ENGINE_EPOLL;
    cfg->timeout_ns = (int64_t)llround(num_at(p1, "timeout_s") * 1e9);
    const ps_json *b = member(p1, "burst", PS_JSON_BOOL),
                  *h = member(p1, "honour_retry_after", PS_JSON_BOOL);
    cfg->burst = b && b->boolean;
    cfg->honour_retry_after = !h || h->boolean;
    cfg->verify_limits = m->verify_limits;
    for (size_t i = 0; i < m->nshards; i++) {
        shard_doc *s = &m->shards[i];
        const ps_json *p = member(s->doc, "parameters", PS_JSON_OBJECT);
        if (__builtin_add_overflow(cfg->threads, (int)int_at(p, "threads"), &cfg->threads) ||
            __builtin_add_overflow(cfg->connections, (int)int_at(p, "connections"),
                                   &cfg->connections) ||
            __builtin_add_overflow(cfg->requests, int_at(p, "requests_limit"), &cfg->requests))
            return ps_error_set(&m->err, "'%s': parameters: the sums over the shards overflow",
                                s->path);
        cfg->rate += num_at(p, "rate");
        const ps_json *ramp = member(p, "ramp", PS_JSON_ARRAY);
        if (ramp && ramp->count == 2) {
            cfg->ramp = true;
            cfg->ramp_from += ramp->items[0]->d;
            cfg->ramp_to += ramp->items[1]->d;
        }
    }
    return union_keys(m);
}

static int add_hist(merge *m, const shard_doc *s, const ps_json *text, ps_hist *dst,
                    const char *what)
{
    if (!text || text->type != PS_JSON_STRING)
        return ps_error_set(&m->err, "'%s': histogram %s missing", s->path, what);
    if (text->len == 0) return 0;
    ps_hist *h = NULL;
    if (ps_hdr_log_decode(text->str, text->len, &h, &m->err) != 0)
        return ps_error_prefix(&m->err, "'%s': histogram %s: ", s->path, what);
    ps_hist_add(dst, h);
    ps_hist_close(h);
    return 0;
}

static int add_pair(merge *m, const shard_doc *s, const char *path, ps_lg_hpair *dst)
{
    char p[96];
    snprintf(p, sizeof p, "histograms.%s", path);
    const ps_json *pair = member(s->shard, p, PS_JSON_OBJECT);
    if (!pair) return ps_error_set(&m->err, "'%s': shard.%s missing", s->path, p);
    if (add_hist(m, s, ps_json_get(pair, "corrected"), dst->corr, p) != 0 ||
        add_hist(m, s, ps_json_get(pair, "uncorrected"), dst->unc, p) != 0)
        return -1;
    return 0;
}

/* Counts summed, histograms added. */
static int merge_stats(merge *m)
{
    if (ps_lg_stats_init(&m->total, (1u << PS_LG_PLANS) - 1, false, &m->err) != 0) return -1;
    m->total_ready = true;
    ps_lg_stats *t = &m->total;
    double end = 0;
    m->start_unix_s = INFINITY;
    for (size_t i = 0; i < m->nshards; i++) {
        const shard_doc *s = &m->shards[i];
        const ps_json *d = s->doc;
        /* The totals' sums are checked; every other count of a shard is
         * within its answered or unanswered total (shard_read.c), so its
         * sums cannot wrap either. */
        struct {
            const char *name;
            int64_t *sum;
        } const sums[] = {
            {"scheduled", &t->scheduled},
            {"answered", &t->answered},
            {"failed", &t->failed},
            {"timed_out", &t->timed_out},
            {"skipped_retry_after", &t->skipped_retry_after},
            {"errors.connect", &t->err_connect},
            {"errors.read", &t->err_read},
            {"errors.timeout", &t->err_timeout},
            {"connect_failures", &t->connect_failures},
        };
        for (size_t k = 0; k < sizeof sums / sizeof sums[0]; k++)
            if (__builtin_add_overflow(*sums[k].sum, int_at(d, sums[k].name), sums[k].sum))
                return ps_error_set(&m->err, "'%s': %s: the sum over the shards passes 2^63",
                                    s->path, sums[k].name);
        const ps_json *st = member(d, "status", PS_JSON_OBJECT);
        for (size_t k = 0; st && k < st->count; k++) {
            int code = atoi(st->keys[k]);
            if (code >= 100 && code < 600 && st->items[k]->type == PS_JSON_NUMBER)
                t->status[code] += st->items[k]->i;
        }
        for (int o = 0; o < PS_LG_OPS; o++) {
            char p[64];
            snprintf(p, sizeof p, "operations.%s.requests", ps_lg_op_names[o]);
            t->op_requests[o] += int_at(d, p);
            snprintf(p, sizeof p, "operations.%s", ps_lg_op_names[o]);
            if (add_pair(m, s, p, &t->op[o]) != 0) return -1;
        }
        for (int c = 0; c < PS_LG_CLASSES; c++) {
            char p[64];
            snprintf(p, sizeof p, "status_classes.%s", ps_lg_class_names[c]);
            if (add_pair(m, s, p, &t->cls[c]) != 0) return -1;
        }
        if (add_pair(m, s, "all", &t->all) != 0) return -1;
        const ps_json *plans = member(d, "plans", PS_JSON_ARRAY);
        for (size_t k = 0; plans && k < plans->count; k++) {
            const char *name = ps_json_get_string(plans->items[k], "plan", "unknown");
            ps_plan_id id = plan_by_name(name);
            t->plan_admitted[id] += ps_json_get_int(plans->items[k], "admitted", 0);
            t->plan_limited[id] += ps_json_get_int(plans->items[k], "limited", 0);
            char p[80];
            snprintf(p, sizeof p, "histograms.plans.%s", name);
            if (ps_json_path(s->shard, p) &&
                add_pair(m, s, p + strlen("histograms."), &t->plan[id]) != 0)
                return -1;
        }
        if (s->start_unix_s < m->start_unix_s) m->start_unix_s = s->start_unix_s;
        double e = s->start_unix_s + num_at(d, "duration_s");
        if (e > end) end = e;
    }
    m->duration_s = end - m->start_unix_s;
    return 0;
}

/* One interval row of one shard, placed on the merged run's seconds. */
typedef struct row_ref {
    int64_t sec;
    size_t shard, row;
} row_ref;

static int row_ref_cmp(const void *a, const void *b)
{
    const row_ref *x = a, *y = b;
    if (x->sec != y->sec) return x->sec < y->sec ? -1 : 1;
    if (x->shard != y->shard) return x->shard < y->shard ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* Adds shard row r's counts and histogram into merged row mr and h. */
static int add_row(merge *m, const shard_doc *s, size_t r, ps_lg_interval_row *mr, ps_hist *h)
{
    const ps_json *row = member(s->doc, "intervals", PS_JSON_ARRAY)->items[r];
    const ps_json *hists = member(s->shard, "interval_histograms", PS_JSON_ARRAY);
    double len = ps_json_get_number(row, "length_s", 1);
    if (len > mr->length_s) mr->length_s = len;
    mr->requests += int_at(row, "requests");
    const ps_json *classes = member(row, "status_classes", PS_JSON_OBJECT);
    for (size_t f = 0; f < PS_LG_ROW_CLASS_FIELDS; f++)
        *ps_lg_field_at(mr, &ps_lg_row_class_fields[f]) +=
            int_at(classes, ps_lg_row_class_fields[f].name);
    return add_hist(m, s, hists->items[r], h, "of an interval");
}

/* Each shard's interval rows, summed per second of wall-clock time since
 * the earliest shard's start (shards started with --start-at share their
 * seconds exactly; others fall on the nearest second). Sparse: the rows
 * are sorted by second and each second merged through one scratch
 * histogram and kept encoded, so memory follows the rows the shards hold,
 * not the span between their times (shards 9.9e6 s apart took 1.08 GB). */
static int merge_intervals(merge *m)
{
    size_t total = 0;
    for (size_t i = 0; i < m->nshards; i++)
        total += member(m->shards[i].doc, "intervals", PS_JSON_ARRAY)->count;
    row_ref *refs = calloc(total + 1, sizeof *refs);
    m->rows = calloc(total + 1, sizeof *m->rows);
    m->row_enc = calloc(total + 1, sizeof *m->row_enc);
    if (!refs || !m->rows || !m->row_enc) abort();
    size_t n = 0;
    for (size_t i = 0; i < m->nshards; i++) {
        const shard_doc *s = &m->shards[i];
        const ps_json *rows = member(s->doc, "intervals", PS_JSON_ARRAY);
        for (size_t r = 0; r < rows->count; r++) {
            /* shard_read.c: both within 1..1e10 s, t_s within the shard's run */
            double at =
                s->start_unix_s + ps_json_get_number(rows->items[r], "t_s", 0) - m->start_unix_s;
            refs[n++] = (row_ref){.sec = (int64_t)llround(at), .shard = i, .row = r};
        }
    }
    qsort(refs, n, sizeof *refs, row_ref_cmp);
    ps_hist *h = NULL;
    ps_buf enc = PS_BUF_INIT;
    int rc = ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS, &h, &m->err);
    for (size_t a = 0, b; a < n && rc == 0; a = b) {
        ps_lg_interval_row *mr = &m->rows[m->nrows];
        mr->t_s = (double)refs[a].sec;
        ps_hist_reset(h);
        for (b = a; b < n && refs[b].sec == refs[a].sec && rc == 0; b++)
            rc = add_row(m, &m->shards[refs[b].shard], refs[b].row, mr, h);
        if (rc != 0) break;
        mr->p50_us = ps_hist_value_at_percentile(h, 50);
        mr->p90_us = ps_hist_value_at_percentile(h, 90);
        mr->p99_us = ps_hist_value_at_percentile(h, 99);
        mr->max_us = ps_hist_max(h);
        enc.len = 0;
        rc = ps_hdr_log_encode(h, &enc, &m->err);
        if (rc == 0) {
            m->row_enc[m->nrows] = strndup(enc.data, enc.len);
            if (!m->row_enc[m->nrows]) abort();
            m->nrows++;
        }
    }
    ps_buf_free(&enc);
    ps_hist_close(h);
    free(refs);
    return rc;
}

/* Admissions summed per key and window across the shards. */
static int merge_limits(merge *m)
{
    ps_lg_limits_init(&m->limits, m->cfg.nkeys);
    for (size_t i = 0; i < m->nshards; i++) {
        const shard_doc *s = &m->shards[i];
        const ps_json *keys = member(s->shard, "keys", PS_JSON_ARRAY);
        for (size_t k = 0; k < keys->count; k++) {
            const ps_json *c = member(keys->items[k], "checks", PS_JSON_OBJECT);
            if (!c) continue;
            ps_lg_key_checks *d = &m->limits.keys[s->key_map[k]];
            add_fields(c, ps_lg_key_check_fields, PS_LG_KEY_CHECK_FIELDS, d);
        }
        const ps_json *wins = member(s->shard, "windows", PS_JSON_ARRAY);
        for (size_t w = 0; wins && w < wins->count; w++) {
            const ps_json *j = wins->items[w];
            int64_t key = ps_json_get_int(j, "key", -1);
            if (key < 0 || (size_t)key >= keys->count)
                return ps_error_set(&m->err, "'%s': window %zu names no key of the shard", s->path,
                                    w);
            const ps_json *ahead = ps_json_get(j, "min_ahead_s");
            ps_lg_window win = {
                .min_ahead_s = ahead && ahead->type == PS_JSON_NUMBER ? ahead->i : INT64_MAX,
                .key = (uint32_t)s->key_map[key],
            };
            add_fields(j, ps_lg_window_fields, PS_LG_WINDOW_FIELDS, &win); /* onto zeros: as read */
            ps_lg_limits_add_window(&m->limits, &win);
        }
    }
    return 0;
}

void ps_lg_merge_free(merge *m)
{
    for (size_t i = 0; i < m->nshards; i++) {
        ps_json_free(m->shards[i].doc);
        free(m->shards[i].key_map);
    }
    free(m->shards);
    for (size_t k = 0; k < m->cfg.nkeys; k++)
        free(m->key_ids[k]);
    free(m->key_ids);
    if (m->total_ready) ps_lg_stats_free(&m->total);
    for (size_t i = 0; i < m->nrows; i++)
        free(m->row_enc[i]);
    free(m->rows);
    free(m->row_enc);
    if (m->limits.slots) ps_lg_limits_free(&m->limits);
    free(m->violations);
    free(m->models);
    free(m->counting);
    free(m->thresholds);
    ps_buf_free(&m->json);
    ps_lg_config_free(&m->cfg);
}

int ps_lg_merge_run(merge *m, char *const *files, size_t nfiles)
{
    int code = PS_LG_EXIT_USAGE;
    m->nshards = nfiles;
    m->shards = calloc(m->nshards + 1, sizeof *m->shards);
    if (!m->shards) abort();
    for (size_t i = 0; i < m->nshards; i++) {
        m->shards[i].path = files[i];
        if (load_shard(m, &m->shards[i]) != 0) return code;
    }
    if ((code = check_set(m)) != 0) return code;
    code = PS_LG_EXIT_USAGE;
    if (build_config(m) != 0 || merge_stats(m) != 0 || merge_intervals(m) != 0 ||
        merge_limits(m) != 0)
        return code;
    if (m->verify_limits) {
        m->failing = ps_lg_limits_verify(&m->limits, &m->cfg, &m->violations, &m->nviolations);
        ps_lg_limits_models(&m->limits, &m->cfg, &m->models, &m->nmodels);
        ps_lg_limits_counting(&m->limits, &m->cfg, &m->counting, &m->ncounting);
        m->windows_checked = ps_lg_limits_counted_windows(&m->limits, &m->cfg);
    }
    m->thresholds = calloc(m->cfg.nthresholds + 1, sizeof *m->thresholds);
    if (!m->thresholds) abort();
    bool thr_failed = false;
    for (size_t i = 0; i < m->cfg.nthresholds; i++) {
        m->thresholds[i] = ps_lg_threshold_eval(&m->cfg.thresholds[i], &m->total);
        thr_failed |= !m->thresholds[i].passed;
    }
    code = m->failing ? PS_LG_EXIT_LIMITS : thr_failed ? PS_LG_EXIT_THRESHOLD : PS_LG_EXIT_OK;
    ps_lg_summary sum = {
        .cfg = &m->cfg,
        .total = &m->total,
        .rows = m->rows,
        .nrows = m->nrows,
        .limits_checked = m->verify_limits,
        .windows = m->windows_checked,
        .violations = m->violations,
        .nviolations = m->nviolations,
        .failing_violations = m->failing,
        .models = m->models,
        .nmodels = m->nmodels,
        .counting = m->counting,
        .ncounting = m->ncounting,
        .thresholds = m->thresholds,
        .duration_s = m->duration_s,
        .started_wall_ns = (int64_t)llround(m->start_unix_s * 1e9),
        .exit_code = code,
        .extra = ps_lg_merged_json,
        .extra_arg = m,
    };
    if (ps_lg_summary_json(&sum, &m->json, &m->err) != 0) return PS_LG_EXIT_USAGE;
    m->merged = true;
    return code;
}

int ps_lg_merge_main(int argc, char **argv)
{
    merge m = {.json = PS_BUF_INIT};
    int first = 0;
    int p = parse_args(&m, argc, argv, &first);
    if (p == 1) {
        usage(stdout);
        ps_lg_merge_free(&m);
        return 0;
    }
    if (p != 0) {
        ps_cli_usage_error(stderr, "petstore-load merge", m.err.message);
        ps_lg_merge_free(&m);
        return PS_LG_EXIT_USAGE;
    }
    int code = ps_lg_merge_run(&m, argv + first, (size_t)(argc - first));
    if (m.merged && ps_lg_merge_write_outputs(&m) != 0) {
        code = PS_LG_EXIT_USAGE;
        m.merged = false;
    }
    if (m.merged)
        ps_lg_merge_print_summary(&m, code);
    else
        fprintf(stderr, "petstore-load merge: %s\n", m.err.message);
    ps_lg_merge_free(&m);
    return code;
}
