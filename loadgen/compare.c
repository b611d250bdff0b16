/* compare.c - petstore-load compare: two load reports side by side
 * (compare.h). */
#include "loadgen/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/json.h"
#include "loadgen/run.h"

static void usage(FILE *out)
{
    fputs("usage: petstore-load compare BASE.json NEW.json [--max-regression P%]\n"
          "         [--min-delta D]\n"
          "\n"
          "Two load reports (--json of a run, a merge or a search) side by side: the\n"
          "corrected latency percentiles, throughput, error rate and, when both are\n"
          "searches, the knee (highest rate measured passing). A figure regressed when it\n"
          "moved the wrong way by more than --max-regression; a latency also by more than\n"
          "--min-delta, the error rate also by more than 0.1 point. max is shown, not\n"
          "judged (one request's).\n"
          "\n"
          "  --max-regression P%  how much worse a figure may get (default 10%)\n"
          "  --min-delta D        how much slower a latency may get whatever its share\n"
          "                       (default 1ms)\n"
          "exit: 0 no regression, 99 a regression, 2 usage or a file that is no load report\n",
          out);
}

typedef enum kind { LATENCY, RATE, ERRORS } kind;

typedef struct figure {
    const char *name, *path; /* path: in the report (ps_json_path) */
    kind kind;
    bool judged;
} figure;

static const figure figures[] = {
    {"p50 ms", "latency_us.corrected.p50", LATENCY, true},
    {"p90 ms", "latency_us.corrected.p90", LATENCY, true},
    {"p99 ms", "latency_us.corrected.p99", LATENCY, true},
    {"p99.9 ms", "latency_us.corrected.p99_9", LATENCY, true},
    {"max ms", "latency_us.corrected.max", LATENCY, false},
    {"throughput req/s", "throughput_rps", RATE, true},
    {"error rate %", "error_rate", ERRORS, true},
    {"knee req/s", "search.max_rate", RATE, true},
};

typedef struct compare {
    const char *paths[2];
    double max_regression; /* fraction */
    int64_t min_delta_ns;
    ps_json *docs[2];
    ps_error err;
} compare;

/* Returns 0, 1 for --help, -1 with C->err. */
static int parse_args(compare *C, int argc, char **argv)
{
    int npaths = 0;
    C->max_regression = 0.10;
    C->min_delta_ns = 1000000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
        bool mr = !strcmp(a, "--max-regression"), md = !strcmp(a, "--min-delta");
        if (mr || md) {
            if (i + 1 >= argc) return ps_error_set(&C->err, "%s: needs a value", a);
            const char *v = argv[++i];
            if (md) {
                if (ps_cli_parse_duration(v, 1, &C->min_delta_ns, &C->err) != 0)
                    return ps_error_prefix(&C->err, "--min-delta: ");
                continue;
            }
            char num[32];
            size_t n = strlen(v);
            bool pct = n > 0 && v[n - 1] == '%';
            if (n == 0 || n >= sizeof num)
                return ps_error_set(&C->err, "--max-regression: expected e.g. 10%%");
            memcpy(num, v, n - pct);
            num[n - pct] = '\0';
            if (ps_cli_parse_double(num, 0, 1000, &C->max_regression, &C->err) != 0)
                return ps_error_prefix(&C->err, "--max-regression (percent, 0 to 1000): ");
            C->max_regression /= 100;
            continue;
        }
        if (a[0] == '-' && a[1]) return ps_error_set(&C->err, "%s: unknown option", a);
        if (npaths == 2) return ps_error_set(&C->err, "'%s': give two reports, BASE and NEW", a);
        C->paths[npaths++] = a;
    }
    if (npaths != 2) return ps_error_set(&C->err, "give two reports: BASE.json NEW.json");
    return 0;
}

/* Reads a load report. Returns 0, or -1 with err. */
static int load(const char *path, ps_json **out, ps_error *err)
{
    ps_buf text = PS_BUF_INIT;
    int rc = -1;
    *out = NULL;
    if (ps_buf_read_file(&text, path) != 0) {
        ps_error_set(err, "'%s': cannot read it", path);
        goto out;
    }
    *out = ps_json_parse(text.data, text.len, NULL, err);
    if (!*out) {
        ps_error_prefix(err, "'%s': ", path);
        goto out;
    }
    if ((*out)->type != PS_JSON_OBJECT || !ps_json_path(*out, "latency_us.corrected") ||
        !ps_json_get(*out, "throughput_rps")) {
        ps_error_set(err, "'%s': not a petstore-load report (no latency_us, throughput_rps)", path);
        ps_json_free(*out);
        *out = NULL;
        goto out;
    }
    rc = 0;
out:
    ps_buf_free(&text);
    return rc;
}

/* Whether new regressed from base by the rules of compare.h. */
static bool regressed(const compare *C, const figure *f, double base, double new_)
{
    if (!f->judged) return false;
    switch (f->kind) {
    case LATENCY:
        return new_ - base > C->max_regression * base &&
               new_ - base > (double)C->min_delta_ns / 1e3;
    case RATE:
        return base - new_ > C->max_regression * base;
    case ERRORS:
        return new_ - base > 0.001 && new_ - base > C->max_regression * base;
    }
    return false;
}

/* Prints the table; returns the number of regressions. */
static int report(const compare *C, FILE *out)
{
    int bad = 0;
    fprintf(out,
            "petstore-load compare: base %s, new %s (a regression: over %g%% worse; a latency "
            "also over %.3f ms, the error rate over 0.1 point)\n"
            "  %-17s %12s %12s %9s  %s\n",
            C->paths[0], C->paths[1], 100 * C->max_regression, (double)C->min_delta_ns / 1e6,
            "figure", "base", "new", "change", "verdict");
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
        const figure *f = &figures[i];
        const ps_json *a = ps_json_path(C->docs[0], f->path),
                      *b = ps_json_path(C->docs[1], f->path);
        if (!a || !b || a->type != PS_JSON_NUMBER || b->type != PS_JSON_NUMBER) continue;
        double scale = f->kind == LATENCY ? 1e-3 : f->kind == ERRORS ? 100 : 1;
        double change = a->d > 0 ? 100 * (b->d - a->d) / a->d : 0;
        bool r = regressed(C, f, a->d, b->d);
        bad += r;
        fprintf(out, "  %-17s %12.3f %12.3f %+8.1f%%  %s\n", f->name, a->d * scale, b->d * scale,
                change,
                !f->judged ? "(not judged)"
                : r        ? "REGRESSED"
                           : "ok");
    }
    if (bad)
        fprintf(out, "result: %d regression%s (exit 99)\n", bad, bad > 1 ? "s" : "");
    else
        fputs("result: no regression (exit 0)\n", out);
    return bad;
}

int ps_lg_compare_main(int argc, char **argv)
{
    compare C = {0};
    int code = PS_LG_EXIT_USAGE;
    int p = parse_args(&C, argc, argv);
    if (p == 1) {
        usage(stdout);
        code = 0;
        goto out;
    }
    if (p != 0) {
        ps_cli_usage_error(stderr, "petstore-load compare", C.err.message);
        goto out;
    }
    for (int i = 0; i < 2; i++)
        if (load(C.paths[i], &C.docs[i], &C.err) != 0) {
            fprintf(stderr, "petstore-load compare: %s\n", C.err.message);
            goto out;
        }
    code = report(&C, stdout) > 0 ? PS_LG_EXIT_THRESHOLD : PS_LG_EXIT_OK;
out:
    ps_json_free(C.docs[0]);
    ps_json_free(C.docs[1]);
    return code;
}
