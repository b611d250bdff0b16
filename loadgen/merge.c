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
          "         [--summary-md F] [--threshold EXPR]... [--verify-limits]\n"
          "         [--limited-ops auto|all|list|create] [--limited-errors auto|yes|no] [--quiet]\n"
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
    M_SUMMARY_MD,
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
    {"summary-md", required_argument, NULL, M_SUMMARY_MD},
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
        case M_SUMMARY_MD:
            if (set_out(m, &m->md_path, "--summary-md") != 0) return -1;
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

static char *copy(const char *s)
{
    char *c = strdup(s);
    if (!c) abort();
    return c;
}

/* Reads one report, checks it whole and keeps its identity. Exit 2 on
 * failure; *doc is the caller's to free. */
static int load_shard(merge *m, shard_doc *s, ps_json **doc, const ps_json **shard)
{
    if (ps_lg_shard_read(s->path, doc, &m->err) != 0) return -1;
    const ps_json *d = *doc;
    const ps_json *tool = member(d, "tool", PS_JSON_STRING);
    if (!tool || strcmp(tool->str, "petstore-load") != 0)
        return ps_error_set(&m->err, "'%s' is not a petstore-load report", s->path);
    const ps_json *sh = *shard = member(d, "shard", PS_JSON_OBJECT);
    if (!sh)
        return ps_error_set(&m->err,
                            "'%s' is not a shard's report (no \"shard\" member: run with "
                            "--shard I/N or --shards N)",
                            s->path);
    const ps_json *run_id = member(sh, "run_id", PS_JSON_STRING);
    int64_t index = int_at(sh, "index"), of = int_at(sh, "of");
    s->index = index >= 1 && index <= PS_LG_MAX_SHARDS ? (int)index : 0;
    s->of = of >= 1 && of <= PS_LG_MAX_SHARDS ? (int)of : 0;
    if (!run_id || s->of < 1 || s->index < 1 || s->index > s->of ||
        !member(sh, "start_unix_s", PS_JSON_NUMBER) || !member(sh, "histograms", PS_JSON_OBJECT) ||
        !member(sh, "keys", PS_JSON_ARRAY) || !member(sh, "interval_histograms", PS_JSON_ARRAY) ||
        !member(d, "intervals", PS_JSON_ARRAY) || !member(d, "parameters", PS_JSON_OBJECT))
        return ps_error_set(&m->err, "'%s': the \"shard\" member is incomplete or damaged",
                            s->path);
    /* nothing is taken from a shard before all of it is checked (shard_read.h) */
    if (ps_lg_shard_validate(d, s->path, &m->err) != 0) return -1;
    s->run_id = copy(run_id->str);
    s->verdict = copy(ps_json_get_string(d, "verdict", "?"));
    const ps_json *why = member(d, "aborted", PS_JSON_STRING);
    s->aborted = why ? copy(why->str) : NULL;
    s->start_unix_s = num_at(sh, "start_unix_s");
    s->duration_s = num_at(d, "duration_s");
    s->requests = int_at(d, "requests");
    s->answered = int_at(d, "answered");
    s->exit_code = int_at(d, "exit_code");
    s->has_windows = member(sh, "windows", PS_JSON_ARRAY) != NULL;
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
        if (s->duration_s > longest) longest = s->duration_s;
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
        if (s->exit_code != PS_LG_EXIT_UNREACHABLE) continue;
        char verdict[64], reason[256];
        ps_lg_terminal_text(s->verdict, verdict, sizeof verdict);
        ps_lg_terminal_text(s->aborted ? s->aborted : "no reason given", reason, sizeof reason);
        ps_error_set(&m->err, "shard %d/%d ('%s') failed: %s: %s", s->index, of, s->path, verdict,
                     reason);
        code = PS_LG_EXIT_UNREACHABLE;
    }
    for (size_t i = 0; i < m->nshards && !code; i++) {
        const shard_doc *s = &m->shards[i];
        if (m->verify_limits && !s->has_windows) {
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

/* Room for n merged keys in every per-key array. */
static void keys_room(merge *m, size_t n)
{
    if (n <= m->keys_cap) return;
    size_t cap = m->keys_cap ? m->keys_cap : 64;
    while (cap < n)
        cap *= 2;
    m->cfg.keys = realloc(m->cfg.keys, cap * sizeof *m->cfg.keys);
    m->key_ids = realloc(m->key_ids, cap * sizeof *m->key_ids);
    m->key_last = realloc(m->key_last, cap * sizeof *m->key_last);
    m->key_checks = realloc(m->key_checks, cap * sizeof *m->key_checks);
    if (!m->cfg.keys || !m->key_ids || !m->key_last || !m->key_checks) abort();
    memset(m->key_checks + m->keys_cap, 0, (cap - m->keys_cap) * sizeof *m->key_checks);
    m->keys_cap = cap;
}

/* The slot of id in the key table: its key's, or the empty one it goes in. */
static size_t key_slot(const merge *m, const char *id)
{
    /* mixed: ids that differ only in their last digits must not fill one
     * run of slots (linear probing would be quadratic) */
    size_t at = (size_t)ps_hash_bytes(id, strlen(id)) & (m->key_slots_cap - 1);
    while (m->key_slots[at] && strcmp(m->key_ids[m->key_slots[at] - 1], id) != 0)
        at = (at + 1) & (m->key_slots_cap - 1);
    return at;
}

/* Keeps the key table at most half full. */
static void key_table_room(merge *m, size_t n)
{
    if (2 * n + 2 <= m->key_slots_cap) return;
    size_t cap = m->key_slots_cap ? m->key_slots_cap : 64;
    while (cap < 2 * n + 2)
        cap *= 2;
    free(m->key_slots);
    m->key_slots = calloc(cap, sizeof *m->key_slots);
    if (!m->key_slots) abort();
    m->key_slots_cap = cap;
    for (size_t k = 0; k < m->cfg.nkeys; k++)
        m->key_slots[key_slot(m, m->key_ids[k])] = k + 1;
}

/* Shard i's keys joined to the union by id, in linear time (a scan per key
 * made 80,000 keys take 11.6 s); map[k] is shard key k's merged index. A
 * shard naming one id twice is refused: its counts could not be told
 * apart. */
static int union_keys(merge *m, const shard_doc *s, size_t i, const ps_json *keys, size_t *map)
{
    ps_lg_config *cfg = &m->cfg;
    key_table_room(m, cfg->nkeys + keys->count);
    keys_room(m, cfg->nkeys + keys->count);
    for (size_t k = 0; k < keys->count; k++) {
        const ps_json *kj = keys->items[k];
        const char *id = ps_json_get_string(kj, "id", "");
        size_t at = key_slot(m, id);
        if (m->key_slots[at]) {
            size_t merged = m->key_slots[at] - 1;
            if (m->key_last[merged] == i + 1)
                return ps_error_set(&m->err, "'%s': shard.keys[%zu]: key id %s is listed twice",
                                    s->path, k, id);
            m->key_last[merged] = i + 1;
            map[k] = merged;
            continue;
        }
        size_t merged = cfg->nkeys++;
        m->key_slots[at] = merged + 1;
        m->key_last[merged] = i + 1;
        map[k] = merged;
        m->key_ids[merged] = copy(id);
        /* the key itself never left its shard: its label (shard_read.c:
         * printable, at most 32 characters) names it */
        cfg->keys[merged] = (ps_lg_key){
            .key = copy("***"),
            .plan = {plan_by_name(ps_json_get_string(kj, "plan", "unknown")),
                     ps_json_get_int(kj, "per_minute", 0), ps_json_get_int(kj, "per_day", 0)},
            .rate = ps_json_get_number(kj, "rate", 0),
        };
        snprintf(cfg->keys[merged].label, sizeof cfg->keys[merged].label, "%s",
                 ps_json_get_string(kj, "key", "***"));
    }
    return 0;
}

/* The whole run's parameters: the first shard's, and the sums of every
 * shard's shares. */
static int add_config(merge *m, const shard_doc *s, size_t i, const ps_json *d)
{
    ps_lg_config *cfg = &m->cfg;
    const ps_json *p = member(d, "parameters", PS_JSON_OBJECT);
    if (i == 0) {
        cfg->base_url = copy(ps_json_get_string(p, "base_url", ""));
        cfg->run_id = copy(s->run_id);
        cfg->duration_ns = (int64_t)llround(num_at(p, "duration_s") * 1e9);
        cfg->mix[PS_LG_OP_LIST] = (unsigned)int_at(p, "mix.list");
        cfg->mix[PS_LG_OP_CREATE] = (unsigned)int_at(p, "mix.create");
        cfg->engine = strcmp(ps_json_get_string(p, "engine", ""), "curl") == 0 ? PS_LG_ENGINE_CURL
                                                                               : PS_LG_ENGINE_EPOLL;
        cfg->timeout_ns = (int64_t)llround(num_at(p, "timeout_s") * 1e9);
        const ps_json *b = member(p, "burst", PS_JSON_BOOL),
                      *h = member(p, "honour_retry_after", PS_JSON_BOOL);
        cfg->burst = b && b->boolean;
        cfg->honour_retry_after = !h || h->boolean;
        cfg->verify_limits = m->verify_limits;
    }
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
    return 0;
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

static int add_pair(merge *m, const shard_doc *s, const ps_json *shard, const char *path,
                    ps_lg_hpair *dst)
{
    char p[96];
    snprintf(p, sizeof p, "histograms.%s", path);
    const ps_json *pair = member(shard, p, PS_JSON_OBJECT);
    if (!pair) return ps_error_set(&m->err, "'%s': shard.%s missing", s->path, p);
    if (add_hist(m, s, ps_json_get(pair, "corrected"), dst->corr, p) != 0 ||
        add_hist(m, s, ps_json_get(pair, "uncorrected"), dst->unc, p) != 0)
        return -1;
    return 0;
}

/* One shard's counts summed and histograms added into m->total. */
static int add_stats(merge *m, const shard_doc *s, const ps_json *d, const ps_json *shard)
{
    ps_lg_stats *t = &m->total;
    /* The totals' sums are checked; every other count of a shard is within
     * its answered or unanswered total (shard_read.c), so its sums cannot
     * wrap either. */
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
            return ps_error_set(&m->err, "'%s': %s: the sum over the shards passes 2^63", s->path,
                                sums[k].name);
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
        if (add_pair(m, s, shard, p, &t->op[o]) != 0) return -1;
    }
    for (int c = 0; c < PS_LG_CLASSES; c++) {
        char p[64];
        snprintf(p, sizeof p, "status_classes.%s", ps_lg_class_names[c]);
        if (add_pair(m, s, shard, p, &t->cls[c]) != 0) return -1;
    }
    if (add_pair(m, s, shard, "all", &t->all) != 0) return -1;
    const ps_json *plans = member(d, "plans", PS_JSON_ARRAY);
    for (size_t k = 0; plans && k < plans->count; k++) {
        const char *name = ps_json_get_string(plans->items[k], "plan", "unknown");
        ps_plan_id id = plan_by_name(name);
        t->plan_admitted[id] += ps_json_get_int(plans->items[k], "admitted", 0);
        t->plan_limited[id] += ps_json_get_int(plans->items[k], "limited", 0);
        char p[80];
        snprintf(p, sizeof p, "histograms.plans.%s", name);
        if (ps_json_path(shard, p) &&
            add_pair(m, s, shard, p + strlen("histograms."), &t->plan[id]) != 0)
            return -1;
    }
    return 0;
}

/* One shard's interval rows kept (counts and encoded histogram) until every
 * shard is read and the run's first second is known. */
static void add_rows(merge *m, const shard_doc *s, const ps_json *d, const ps_json *shard)
{
    const ps_json *rows = member(d, "intervals", PS_JSON_ARRAY);
    const ps_json *hists = member(shard, "interval_histograms", PS_JSON_ARRAY);
    if (m->nrows_in + rows->count > m->rows_in_cap) {
        size_t cap = m->rows_in_cap ? m->rows_in_cap : 64;
        while (cap < m->nrows_in + rows->count)
            cap *= 2;
        m->rows_in = realloc(m->rows_in, cap * sizeof *m->rows_in);
        if (!m->rows_in) abort();
        m->rows_in_cap = cap;
    }
    for (size_t r = 0; r < rows->count; r++) {
        const ps_json *row = rows->items[r];
        row_in *in = &m->rows_in[m->nrows_in++];
        memset(in, 0, sizeof *in);
        /* shard_read.c: start within 1..1e10 s, t_s within the shard's run */
        in->at_unix_s = s->start_unix_s + ps_json_get_number(row, "t_s", 0);
        in->counts.length_s = ps_json_get_number(row, "length_s", 1);
        in->counts.requests = int_at(row, "requests");
        const ps_json *classes = member(row, "status_classes", PS_JSON_OBJECT);
        for (size_t f = 0; f < PS_LG_ROW_CLASS_FIELDS; f++)
            *ps_lg_field_at(&in->counts, &ps_lg_row_class_fields[f]) =
                int_at(classes, ps_lg_row_class_fields[f].name);
        const ps_json *h = hists->items[r]; /* a string (shard_read.c) */
        in->hist = h->len ? strndup(h->str, h->len) : NULL;
        if (h->len && !in->hist) abort();
    }
}

/* One shard's key checks summed per merged key, its windows kept with
 * their merged key. */
static void add_limits(merge *m, const ps_json *shard, const size_t *map)
{
    const ps_json *keys = member(shard, "keys", PS_JSON_ARRAY);
    for (size_t k = 0; k < keys->count; k++) {
        const ps_json *c = member(keys->items[k], "checks", PS_JSON_OBJECT);
        if (c)
            add_fields(c, ps_lg_key_check_fields, PS_LG_KEY_CHECK_FIELDS, &m->key_checks[map[k]]);
    }
    const ps_json *wins = member(shard, "windows", PS_JSON_ARRAY);
    if (!wins) return;
    if (m->nwins + wins->count > m->wins_cap) {
        size_t cap = m->wins_cap ? m->wins_cap : 64;
        while (cap < m->nwins + wins->count)
            cap *= 2;
        m->wins = realloc(m->wins, cap * sizeof *m->wins);
        if (!m->wins) abort();
        m->wins_cap = cap;
    }
    for (size_t w = 0; w < wins->count; w++) {
        const ps_json *j = wins->items[w];
        const ps_json *ahead = ps_json_get(j, "min_ahead_s");
        ps_lg_window *win = &m->wins[m->nwins++];
        /* key: an index of the shard's keys (shard_read.c) */
        *win = (ps_lg_window){
            .min_ahead_s = ahead && ahead->type == PS_JSON_NUMBER ? ahead->i : INT64_MAX,
            .key = (uint32_t)map[ps_json_get_int(j, "key", 0)],
        };
        add_fields(j, ps_lg_window_fields, PS_LG_WINDOW_FIELDS, win); /* onto zeros: as read */
    }
}

/* Shard i read, checked and absorbed; its document freed before the next
 * is read, so the merge holds one shard's tree at a time. */
static int absorb_shard(merge *m, size_t i)
{
    shard_doc *s = &m->shards[i];
    ps_json *doc = NULL;
    const ps_json *shard = NULL;
    size_t *map = NULL;
    int rc = load_shard(m, s, &doc, &shard);
    if (rc == 0) {
        const ps_json *keys = member(shard, "keys", PS_JSON_ARRAY);
        map = calloc(keys->count + 1, sizeof *map);
        if (!map) abort();
        rc = add_config(m, s, i, doc);
        if (rc == 0) rc = union_keys(m, s, i, keys, map);
        if (rc == 0) rc = add_stats(m, s, doc, shard);
        if (rc == 0) rc = ps_lg_merge_groups(m, s, i, shard, map);
    }
    if (rc == 0) {
        add_rows(m, s, doc, shard);
        add_limits(m, shard, map);
        if (s->start_unix_s < m->start_unix_s) m->start_unix_s = s->start_unix_s;
        if (s->start_unix_s + s->duration_s > m->end_unix_s)
            m->end_unix_s = s->start_unix_s + s->duration_s;
    }
    free(map);
    ps_json_free(doc);
    return rc;
}

static int row_in_cmp(const void *a, const void *b)
{
    const row_in *x = a, *y = b;
    return (x->at_unix_s > y->at_unix_s) - (x->at_unix_s < y->at_unix_s);
}

/* The shards' interval rows summed per second of wall-clock time since the
 * earliest shard's start (shards started with --start-at share their
 * seconds exactly; others fall on the nearest second). Sparse: the rows are
 * sorted by time and each second merged through one scratch histogram and
 * kept encoded, so memory follows the rows the shards hold, not the span
 * between their times (shards 9.9e6 s apart took 1.08 GB). */
static int merge_intervals(merge *m)
{
    size_t n = m->nrows_in;
    qsort(m->rows_in, n, sizeof *m->rows_in, row_in_cmp);
    m->rows = calloc(n + 1, sizeof *m->rows);
    m->row_enc = calloc(n + 1, sizeof *m->row_enc);
    if (!m->rows || !m->row_enc) abort();
    ps_hist *h = NULL;
    ps_buf enc = PS_BUF_INIT;
    int rc = ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS, &h, &m->err);
    for (size_t a = 0, b; a < n && rc == 0; a = b) {
        int64_t sec = (int64_t)llround(m->rows_in[a].at_unix_s - m->start_unix_s);
        ps_lg_interval_row *mr = &m->rows[m->nrows];
        mr->t_s = (double)sec;
        ps_hist_reset(h);
        for (b = a; b < n && rc == 0; b++) {
            const row_in *in = &m->rows_in[b];
            if ((int64_t)llround(in->at_unix_s - m->start_unix_s) != sec) break;
            if (in->counts.length_s > mr->length_s) mr->length_s = in->counts.length_s;
            mr->requests += in->counts.requests;
            for (size_t f = 0; f < PS_LG_ROW_CLASS_FIELDS; f++)
                *ps_lg_field_at(mr, &ps_lg_row_class_fields[f]) +=
                    *ps_lg_field_at((void *)&in->counts, &ps_lg_row_class_fields[f]);
            if (!in->hist) continue;
            ps_hist *rh = NULL;
            rc = ps_hdr_log_decode(in->hist, strlen(in->hist), &rh, &m->err);
            if (rc == 0) ps_hist_add(h, rh);
            ps_hist_close(rh);
        }
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
    return rc;
}

/* Admissions summed per key and window across the shards. */
static void merge_limits(merge *m)
{
    ps_lg_limits_init(&m->limits, m->cfg.nkeys);
    if (m->cfg.nkeys) memcpy(m->limits.keys, m->key_checks, m->cfg.nkeys * sizeof *m->key_checks);
    for (size_t w = 0; w < m->nwins; w++)
        ps_lg_limits_add_window(&m->limits, &m->wins[w]);
}

void ps_lg_merge_free(merge *m)
{
    for (size_t i = 0; i < m->nshards; i++) {
        free(m->shards[i].run_id);
        free(m->shards[i].verdict);
        free(m->shards[i].aborted);
    }
    free(m->shards);
    for (size_t k = 0; k < m->cfg.nkeys; k++)
        free(m->key_ids[k]);
    free(m->key_ids);
    free(m->key_slots);
    free(m->key_last);
    free(m->key_checks);
    free(m->wins);
    for (size_t i = 0; i < m->nrows_in; i++)
        free(m->rows_in[i].hist);
    free(m->rows_in);
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
    free(m->tally_by_group);
    ps_buf_free(&m->json);
    ps_lg_config_free(&m->cfg);
}

int ps_lg_merge_run(merge *m, char *const *files, size_t nfiles)
{
    int code = PS_LG_EXIT_USAGE;
    m->nshards = nfiles;
    m->shards = calloc(m->nshards + 1, sizeof *m->shards);
    if (!m->shards) abort();
    if (ps_lg_stats_init(&m->total, (1u << PS_LG_PLANS) - 1, false, &m->err) != 0) return code;
    m->total_ready = true;
    m->start_unix_s = INFINITY;
    for (size_t i = 0; i < m->nshards; i++) {
        m->shards[i].path = files[i];
        if (absorb_shard(m, i) != 0) return code;
    }
    if ((code = check_set(m)) != 0) return code;
    code = PS_LG_EXIT_USAGE;
    m->duration_s = m->end_unix_s - m->start_unix_s;
    if (merge_intervals(m) != 0) return code;
    merge_limits(m);
    ps_lg_merge_group_tally(m);
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
        m->thresholds[i] = ps_lg_threshold_eval(&m->cfg.thresholds[i], &m->total, NULL);
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
        .tally_by_group = m->tally_by_group,
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
