/* shard.c - selecting a shard and dividing the work (shard.h); the report's
 * "shard" member is shard_report.c. */
#include "loadgen/shard.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/clock.h"
#include "loadgen/key_label.h"

int ps_lg_shard_parse(const char *text, int *index, int *of, ps_error *err)
{
    const char *slash = strchr(text, '/');
    char left[16];
    int64_t i, n;
    if (!slash || (size_t)(slash - text) >= sizeof left)
        return ps_error_set(err, "--shard: expected I/N (1-based, e.g. 2/4), got '%s'", text);
    memcpy(left, text, (size_t)(slash - text));
    left[slash - text] = '\0';
    if (ps_cli_parse_int(left, 1, PS_LG_MAX_SHARDS, &i, err) != 0 ||
        ps_cli_parse_int(slash + 1, 1, PS_LG_MAX_SHARDS, &n, err) != 0)
        return ps_error_prefix(err, "--shard '%s': ", text);
    if (i > n)
        return ps_error_set(err, "--shard '%s': shard %lld of %lld does not exist (1-based)", text,
                            (long long)i, (long long)n);
    *index = (int)i;
    *of = (int)n;
    return 0;
}

int ps_lg_shard_from_env(int of, const char *env, int *index, ps_error *err)
{
    if (!env || !*env)
        return ps_error_set(err,
                            "--shards %d: JOB_COMPLETION_INDEX is not set (a Kubernetes Indexed "
                            "Job sets it; elsewhere give --shard I/N)",
                            of);
    int64_t i;
    if (ps_cli_parse_int(env, 0, of - 1, &i, err) != 0)
        return ps_error_prefix(
            err, "--shards %d: JOB_COMPLETION_INDEX '%s' (0-based, below %d): ", of, env, of);
    *index = (int)i + 1;
    return 0;
}

/* RFC 3339: YYYY-MM-DD[Tt ]HH:MM:SS[.frac](Z|z|+HH:MM|-HH:MM). */
static int parse_rfc3339(const char *s, int64_t *wall_ns)
{
    int Y, M, D, h, m, sec, used = 0;
    char sep;
    if (sscanf(s, "%4d-%2d-%2d%c%2d:%2d:%2d%n", &Y, &M, &D, &sep, &h, &m, &sec, &used) != 7 ||
        used != 19)
        return -1;
    if (sep != 'T' && sep != 't' && sep != ' ') return -1;
    if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60 || Y < 1970) return -1;
    const char *p = s + used;
    int64_t frac_ns = 0;
    if (*p == '.') {
        p++;
        int64_t scale = 100000000;
        if (!isdigit((unsigned char)*p)) return -1;
        for (; isdigit((unsigned char)*p); p++) {
            frac_ns += (*p - '0') * scale;
            scale /= 10;
        }
    }
    int64_t offset_s = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om, n = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &n) != 2 || n != 5 || oh > 23 || om > 59)
            return -1;
        offset_s = (oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return -1;
    }
    if (*p) return -1;
    struct tm tm = {.tm_year = Y - 1900,
                    .tm_mon = M - 1,
                    .tm_mday = D,
                    .tm_hour = h,
                    .tm_min = m,
                    .tm_sec = sec};
    time_t t = timegm(&tm);
    /* nanoseconds since 1970 fit int64 until 2262; past that the product
     * would overflow (undefined), so such a time is refused */
    if (t == (time_t)-1 || (int64_t)t - offset_s > INT64_MAX / INT64_C(1000000000) - 1) return -1;
    *wall_ns = ((int64_t)t - offset_s) * INT64_C(1000000000) + frac_ns;
    return 0;
}

int ps_lg_parse_start_at(const char *text, int64_t *wall_ns, ps_error *err)
{
    if (strchr(text, '-') && parse_rfc3339(text, wall_ns) == 0) return 0;
    double s;
    ps_error e2;
    if (!strchr(text, '-') && ps_cli_parse_double(text, 1, 1e10, &s, &e2) == 0) {
        *wall_ns = (int64_t)llround(s * 1e9);
        return 0;
    }
    return ps_error_set(err,
                        "--start-at '%s': expected Unix seconds (1767225600) or RFC 3339 "
                        "(2026-01-01T00:00:00Z)",
                        text);
}

int64_t ps_lg_share(int64_t total, int index0, int of)
{
    return total / of + (index0 < total % of ? 1 : 0);
}

static void derive_run_id(ps_lg_config *cfg)
{
    ps_buf b = PS_BUF_INIT;
    ps_buf_printf(&b, "%lld|%s|%d|%.6f|%d|%.6f|%.6f|%lld|%lld|%d|%d|%u|%u|%zu",
                  (long long)cfg->start_at_ns, cfg->base_url, cfg->shards, cfg->rate, cfg->ramp,
                  cfg->ramp_from, cfg->ramp_to, (long long)cfg->duration_ns,
                  (long long)cfg->requests, cfg->connections, cfg->threads, cfg->mix[0],
                  cfg->mix[1], cfg->nkeys);
    /* the keys enter through the secret only: a fast hash of them, published
     * as the run id, gave a short key back (issue 22) */
    char digest[17], id[24];
    ps_lg_key_digest(cfg, b.data, digest);
    ps_buf_free(&b);
    snprintf(id, sizeof id, "r%s", digest);
    cfg->run_id = strdup(id);
    if (!cfg->run_id) abort();
}

int ps_lg_shard_apply(ps_lg_config *cfg, ps_error *err)
{
    /* labels (and the secret every shard derives alike) before the keys
     * are divided */
    ps_lg_key_labels(cfg);
    if (cfg->shards <= 0) return 0;
    int i0 = cfg->shard - 1, n = cfg->shards;
    if (!cfg->run_id) derive_run_id(cfg);
    int64_t conns = ps_lg_share(cfg->connections, i0, n);
    if (conns < cfg->threads)
        return ps_error_set(err,
                            "--connections %d over %d shards gives shard %d %lld connection(s), "
                            "fewer than --threads %d",
                            cfg->connections, n, cfg->shard, (long long)conns, cfg->threads);
    cfg->connections = (int)conns;
    if (cfg->requests) {
        int64_t r = ps_lg_share(cfg->requests, i0, n);
        if (r == 0)
            return ps_error_set(err, "--requests %lld over %d shards leaves shard %d none",
                                (long long)cfg->requests, n, cfg->shard);
        cfg->requests = r;
    }
    cfg->rate /= n;
    cfg->ramp_from /= n;
    cfg->ramp_to /= n;
    if (cfg->nkeys == 1) {
        cfg->shard_keys_shared = n > 1;
        return 0;
    }
    if (cfg->nkeys < (size_t)n)
        return ps_error_set(err,
                            "%zu keys cannot be divided among %d shards (each key is driven by "
                            "one shard): give at least %d keys, or one key for all to share",
                            cfg->nkeys, n, n);
    size_t kept = 0;
    for (size_t k = 0; k < cfg->nkeys; k++) {
        if (k % (size_t)n == (size_t)i0)
            cfg->keys[kept++] = cfg->keys[k];
        else
            free(cfg->keys[k].key);
    }
    cfg->nkeys = kept;
    /* Keys with a rate of their own keep it whole: they are this shard's
     * alone. Keys without one share this shard's part of --rate; a shard
     * left only keys with rates has no use for it. */
    bool any_shared = false;
    for (size_t k = 0; k < cfg->nkeys; k++)
        any_shared |= cfg->keys[k].rate <= 0;
    if (!any_shared) cfg->rate = 0, cfg->ramp = false;
    return 0;
}
