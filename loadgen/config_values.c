/* config_values.c - parsers of single flag values that other commands
 * share with the run's parser (config.h): --threshold expressions (also
 * search's --slo and merge's --threshold), and --limited-ops and
 * --limited-errors (also merge's). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "loadgen/config.h"

int ps_lg_threshold_parse(const char *text, ps_lg_threshold *out, ps_error *err)
{
    memset(out, 0, sizeof *out);
    const char *lt = strchr(text, '<');
    if (!lt)
        return ps_error_set(err, "threshold '%s': expected METRIC<VALUE or METRIC<=VALUE", text);
    /* Spaces around the metric, the operator and the value are allowed
     * ('p99 < 200ms', as k6 writes them); none inside a name or number. */
    const char *mstart = text;
    while (*mstart == ' ' || *mstart == '\t')
        mstart++;
    const char *mend = lt;
    while (mend > mstart && (mend[-1] == ' ' || mend[-1] == '\t'))
        mend--;
    size_t mlen = mstart < mend ? (size_t)(mend - mstart) : 0;
    const char *vstart = lt + 1;
    if (*vstart == '=') {
        out->or_equal = true;
        vstart++;
    }
    while (*vstart == ' ' || *vstart == '\t')
        vstart++;
    size_t vlen_all = strlen(vstart);
    while (vlen_all > 0 && (vstart[vlen_all - 1] == ' ' || vstart[vlen_all - 1] == '\t'))
        vlen_all--;
    char val[64];
    if (vlen_all >= sizeof val) return ps_error_set(err, "threshold '%s': overlong value", text);
    memcpy(val, vstart, vlen_all);
    val[vlen_all] = '\0';
    char metric[32];
    if (mlen == 0 || mlen >= sizeof metric)
        return ps_error_set(err, "threshold '%s': missing or overlong metric name", text);
    memcpy(metric, mstart, mlen);
    metric[mlen] = '\0';
    /* "pro.p99": a plan's objective, judged on its keys' answers alone
     * (a percentile's own dot, p99.9, names no plan) */
    char *dot = strchr(metric, '.');
    if (dot) {
        *dot = '\0';
        ps_plan plan;
        ps_error perr = {{0}};
        if (ps_plan_parse(metric, &plan, &perr) == 0) {
            out->scoped = true;
            out->plan = plan.id;
            memmove(metric, dot + 1, strlen(dot + 1) + 1);
        } else if (metric[0] == 'p' && metric[1] >= '0' && metric[1] <= '9') {
            *dot = '.'; /* p99.9 */
        } else {
            return ps_error_set(err,
                                "threshold '%s': '%s' is not a plan (free, pro, business, "
                                "enterprise: PLAN.p99<50ms); a key group's latency is not "
                                "judged apart",
                                text, metric);
        }
    }
    if (out->scoped && strcmp(metric, "error_rate") == 0)
        return ps_error_set(err,
                            "threshold '%s': a plan's error rate is not measured apart (give "
                            "error_rate for the whole run, a plan's latency as PLAN.p99)",
                            text);
    if (strcmp(metric, "error_rate") == 0) {
        out->metric = PS_LG_METRIC_ERROR_RATE;
        size_t vlen = strlen(val);
        bool pct = vlen > 0 && val[vlen - 1] == '%';
        char num[32];
        if (vlen == 0 || vlen >= sizeof num)
            return ps_error_set(err, "threshold '%s': bad error rate", text);
        memcpy(num, val, vlen - (pct ? 1 : 0));
        num[vlen - (pct ? 1 : 0)] = '\0';
        if (ps_cli_parse_double(num, 0, pct ? 100 : 1, &out->bound, err) != 0)
            return ps_error_prefix(err, "threshold '%s': ", text);
        if (pct) out->bound /= 100.0;
    } else {
        if (strcmp(metric, "max") == 0) {
            out->metric = PS_LG_METRIC_MAX;
        } else if (strcmp(metric, "mean") == 0 || strcmp(metric, "avg") == 0) {
            out->metric = PS_LG_METRIC_MEAN;
        } else if (metric[0] == 'p' && metric[1]) {
            /* p99, p99.9, p99_9 (the JSON's spelling) all mean the 99.9th. */
            char num[32];
            snprintf(num, sizeof num, "%s", metric + 1);
            for (char *c = num; *c; c++)
                if (*c == '_') *c = '.';
            if (ps_cli_parse_double(num, 0, 100, &out->percentile, err) != 0)
                return ps_error_prefix(err, "threshold '%s': percentile: ", text);
            out->metric = PS_LG_METRIC_PERCENTILE;
        } else {
            return ps_error_set(err,
                                "threshold '%s': unknown metric '%s' (expected p50, p90, p95, p99, "
                                "p99.9, max, mean or error_rate)",
                                text, metric);
        }
        /* A latency with a unit: us, ms or s (required, so '200' is never ambiguous). */
        char *end;
        errno = 0;
        double v = strtod(val, &end);
        /* strtod takes "nan" and "inf": no bound a latency can be judged against */
        if (end == val || errno || !isfinite(v) || v < 0)
            return ps_error_set(err, "threshold '%s': expected a latency like 200ms", text);
        if (strcmp(end, "us") == 0)
            out->bound = v;
        else if (strcmp(end, "ms") == 0)
            out->bound = v * 1e3;
        else if (strcmp(end, "s") == 0)
            out->bound = v * 1e6;
        else
            return ps_error_set(err, "threshold '%s': latency unit must be us, ms or s", text);
    }
    out->expression = strdup(text);
    if (!out->expression) abort();
    return 0;
}

int ps_lg_limited_ops_parse(const char *text, ps_lg_limited_ops *out, ps_error *err)
{
    static const char *const names[] = {"auto", "all", "list", "create"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(text, names[i]) == 0) {
            *out = (ps_lg_limited_ops)i;
            return 0;
        }
    return ps_error_set(err, "--limited-ops: expected auto, all, list or create, got '%s'", text);
}

int ps_lg_limited_errors_parse(const char *text, ps_lg_limited_errors *out, ps_error *err)
{
    static const char *const names[] = {"auto", "yes", "no"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(text, names[i]) == 0) {
            *out = (ps_lg_limited_errors)i;
            return 0;
        }
    return ps_error_set(err, "--limited-errors: expected auto, yes or no, got '%s'", text);
}
