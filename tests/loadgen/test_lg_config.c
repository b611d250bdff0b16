/* test_lg_config.c - petstore-load's flags, keys file, thresholds, and the
 * open-model schedule and operation mix. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "loadgen/config.h"
#include "loadgen/schedule.h"

static int parse(ps_lg_config *cfg, ps_error *err, const char *a0, ...)
{
    char *argv[40];
    int argc = 0;
    argv[argc++] = (char *)"petstore-load";
    va_list ap;
    va_start(ap, a0);
    for (const char *a = a0; a && argc < 39; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    return ps_lg_config_parse(argc, argv, "/nonexistent/bodies.json", cfg, err);
}

static void good_flags(void)
{
    ps_lg_config c;
    ps_error err;
    CHECK_INT(parse(&c, &err, "--base-url", "http://127.0.0.1:8080/v1/", "--api-key", "secret-key",
                    "--plan", "pro", "--threads", "2", "--connections", "16", "--duration", "2m",
                    "--rate", "1500", "--mix", "list=9,create=1", "--threshold", "p99<200ms",
                    "--threshold", "p99.9<=1s", "--timeout", "250ms", NULL),
              PS_LG_CONFIG_OK);
    CHECK_STR(c.host, "127.0.0.1");
    CHECK_STR(c.port, "8080");
    CHECK_STR(c.path_prefix, "/v1");
    CHECK_INT(c.threads, 2);
    CHECK_INT(c.connections, 16);
    CHECK_INT(c.duration_ns, INT64_C(120000000000));
    CHECK_INT(c.timeout_ns, 250000000);
    CHECK_INT(c.mix[PS_LG_OP_LIST], 9);
    CHECK_INT(c.mix[PS_LG_OP_CREATE], 1);
    CHECK_INT(c.nkeys, 1);
    CHECK_INT(c.keys[0].plan.per_minute, 300);
    CHECK_INT(c.nthresholds, 2);
    CHECK_INT(c.thresholds[1].bound, 1000000);
    CHECK(c.thresholds[1].or_equal);
    CHECK(ps_lg_config_open_model(&c));
    CHECK_INT(c.engine, PS_LG_ENGINE_EPOLL);
    CHECK_STR(c.bodies_path, "/nonexistent/bodies.json");
    ps_lg_config_free(&c);

    CHECK_INT(parse(&c, &err, "--base-url", "https://[::1]/v1", "--api-key", "k", NULL),
              PS_LG_CONFIG_OK);
    CHECK_STR(c.host, "::1");
    CHECK_STR(c.port, "443");
    CHECK_INT(c.engine, PS_LG_ENGINE_EPOLL); /* https too, unless a proxy applies */
    CHECK(!ps_lg_config_open_model(&c));
    CHECK_INT(c.duration_ns, INT64_C(10000000000));
    ps_lg_config_free(&c);

    /* --help and --version need no target */
    CHECK_INT(parse(&c, &err, "--version", NULL), PS_LG_CONFIG_VERSION);
    ps_lg_config_free(&c);
    CHECK_INT(parse(&c, &err, "--help", NULL), PS_LG_CONFIG_HELP);
    ps_lg_config_free(&c);
}

/* The proxy variables as libcurl reads them decide --engine auto. */
static const char *const *proxy_env;

static const char *proxy_get(const char *name)
{
    for (size_t i = 0; proxy_env[i]; i += 2)
        if (strcmp(proxy_env[i], name) == 0) return proxy_env[i + 1];
    return NULL;
}

static void proxy_choice(void)
{
    static const struct {
        const char *url;
        const char *env[7];
        bool applies;
    } cases[] = {
        {"https://api.example.com/v1", {NULL}, false},
        {"https://api.example.com/v1", {"https_proxy", "http://p:3128", NULL}, true},
        {"https://api.example.com/v1", {"HTTPS_PROXY", "http://p:3128", NULL}, true},
        {"https://api.example.com/v1", {"http_proxy", "http://p:3128", NULL}, false},
        {"http://api.example.com/v1", {"http_proxy", "http://p:3128", NULL}, true},
        /* libcurl ignores HTTP_PROXY in capitals (a CGI's Proxy header sets it) */
        {"http://api.example.com/v1", {"HTTP_PROXY", "http://p:3128", NULL}, false},
        {"http://api.example.com/v1", {"ALL_PROXY", "socks5://p", NULL}, true},
        {"https://api.example.com/v1", {"https_proxy", "", NULL}, false},
        {"https://api.example.com/v1",
         {"https_proxy", "http://p", "NO_PROXY", "example.com", NULL},
         false},
        {"https://api.example.com/v1",
         {"https_proxy", "http://p", "no_proxy", ".example.com", NULL},
         false},
        {"https://api.example.com/v1",
         {"https_proxy", "http://p", "NO_PROXY", "ample.com", NULL},
         true},
        {"https://127.0.0.1:8443/v1",
         {"https_proxy", "http://p", "NO_PROXY", "localhost, 127.0.0.1", NULL},
         false},
        {"https://10.0.0.1/v1", {"https_proxy", "http://p", "NO_PROXY", "*", NULL}, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ps_lg_config c;
        ps_error err;
        CHECK_INT(parse(&c, &err, "--base-url", cases[i].url, "--api-key", "k", NULL),
                  PS_LG_CONFIG_OK);
        proxy_env = cases[i].env;
        bool got = ps_lg_proxy_applies(&c, proxy_get);
        if (got != cases[i].applies) fprintf(stderr, "proxy case %zu: got %d\n", i, got);
        CHECK(got == cases[i].applies);
        ps_lg_config_free(&c);
    }
}

static void bad_flags(void)
{
    struct {
        const char *a[6];
        const char *msg;
    } cases[] = {
        {{"--api-key", "k", NULL}, "--base-url: required"},
        {{"--base-url", "ftp://x/v1", "--api-key", "k", NULL}, "http://"},
        {{"--base-url", "http://x:99999/v1", "--api-key", "k", NULL}, "port"},
        {{"--base-url", "http://x/v1", NULL}, "--api-key"},
        {{"--base-url", "http://x/v1", "--api-key", "k", "--threads", "0"}, "--threads"},
        {{"--base-url", "http://x/v1", "--api-key", "k", "--rate", "fast"}, "--rate"},
        {{"--base-url", "http://x/v1", "--api-key", "k", "--mix", "delete=1"}, "delete"},
        {{"--base-url", "http://x/v1", "--api-key", "k", "--mix", "list=0"}, "add up to 0"},
        {{"--base-url", "http://x/v1", "--api-key", "k", "--threshold", "p99<200"}, "unit"},
        {{"--base-url", "http://x/v1", "--api-key", "k", "--threshold", "p101<2s"}, "percentile"},
        {{"--base-url", "http://x/v1", "--api-key", "k", "--plan", "gold"}, "gold"},
        {{"--base-url", "http://x/v1", "--api-key", "k", "--bogus", NULL}, "--bogus"},
        {{"--base-url", "http://x/v1", "--api-key", "k", "--duration", NULL}, "needs a value"},
        {{"--base-url", "http://x/v1", "--api-key", "k", "--ramp", "100"}, "R1:R2"},
        {{"--base-url", "http://x/v1", "--api-key", "two words", NULL}, "printable"},
        {{"--base-url", "https://x/v1", "--api-key", "k", "--engine=curl", "--burst"}, "epoll"},
        {{"--base-url", "https://x/v1", "--api-key", "k", "--engine", "fast"},
         "auto, epoll or curl"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ps_lg_config c;
        ps_error err = {{0}};
        int rc = parse(&c, &err, cases[i].a[0], cases[i].a[1], cases[i].a[2], cases[i].a[3],
                       cases[i].a[4], cases[i].a[5], NULL);
        CHECK_INT(rc, PS_LG_CONFIG_ERROR);
        if (!strstr(err.message, cases[i].msg))
            fprintf(stderr, "case %zu: message '%s' lacks '%s'\n", i, err.message, cases[i].msg);
        CHECK(strstr(err.message, cases[i].msg) != NULL);
        ps_lg_config_free(&c);
    }
    ps_lg_config c;
    ps_error err;
    CHECK_INT(parse(&c, &err, "--base-url", "http://x/v1", "--api-key", "k", "--duration", "1s",
                    "--requests", "5", NULL),
              PS_LG_CONFIG_ERROR);
    ps_lg_config_free(&c);
}

static void keys_file(void)
{
    char path[] = "/tmp/lg-keys-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    const char *text = "# keys for the test\n"
                       "free-key-0001 free 2.5   # a slow one\n"
                       "\n"
                       "pro-key-00002 pro\n"
                       "ent-key-00003 enterprise:1000:50000 10\n";
    CHECK_INT(write(fd, text, strlen(text)), (long long)strlen(text));
    close(fd);
    ps_lg_config c;
    ps_error err;
    CHECK_INT(parse(&c, &err, "--base-url", "http://x/v1", "--keys", path, "--rate", "100", NULL),
              PS_LG_CONFIG_OK);
    CHECK_INT(c.nkeys, 3);
    if (c.nkeys == 3) {
        CHECK_STR(c.keys[0].key, "free-key-0001");
        CHECK(fabs(c.keys[0].rate - 2.5) < 1e-9);
        CHECK_INT(c.keys[1].plan.id, PS_PLAN_PRO);
        CHECK_INT(c.keys[1].line, 4);
        CHECK_INT(c.keys[2].plan.per_minute, 1000);
    }
    ps_lg_config_free(&c);
    /* Mixed rates need --rate for the keys without one. */
    CHECK_INT(parse(&c, &err, "--base-url", "http://x/v1", "--keys", path, NULL),
              PS_LG_CONFIG_ERROR);
    ps_lg_config_free(&c);

    const char *bad[] = {"k free 1 extra\n", "k\n", "k gold\n", "k free -3\n", "# nothing\n"};
    const char *want[] = {"line 1", "line 1", "gold", "rate", "no key"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i], f);
        fclose(f);
        err.message[0] = '\0';
        CHECK_INT(parse(&c, &err, "--base-url", "http://x/v1", "--keys", path, NULL),
                  PS_LG_CONFIG_ERROR);
        if (!strstr(err.message, want[i])) fprintf(stderr, "keys case %zu: '%s'\n", i, err.message);
        CHECK(strstr(err.message, want[i]) != NULL);
        ps_lg_config_free(&c);
    }
    unlink(path);
    CHECK_INT(parse(&c, &err, "--base-url", "http://x/v1", "--keys", path, NULL),
              PS_LG_CONFIG_ERROR);
    CHECK(strstr(err.message, "cannot read") != NULL);
    ps_lg_config_free(&c);
}

/* Issue 21: --keys with 100,000 keys (a capacity test's customers) loads in
 * linear time, labels and the key secret included (--verify-limits, two
 * shards: every key is labelled and hashed before they are divided). */
static void hundred_thousand_keys_load_fast(void)
{
    char path[] = "/tmp/lg-keys-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < 100000; i++)
        fprintf(f, "customer-key-%07d pro rate=1\n", i);
    fclose(f);
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a); /* CPU: a busy machine stretches wall time */
    ps_lg_config c;
    ps_error err;
    CHECK_INT(parse(&c, &err, "--base-url", "http://x/v1", "--keys", path, "--verify-limits",
                    "--shard", "1/2", "--connections", "2", NULL),
              PS_LG_CONFIG_OK);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    fprintf(stderr, "  100000 keys loaded in %.3f s of CPU\n", s);
    CHECK_INT(c.nkeys, 50000); /* this shard's half */
    if (c.nkeys == 50000) {
        CHECK(strncmp(c.keys[0].label, "cu***00~", 8) == 0 && strlen(c.keys[0].label) == 14);
        CHECK_STR(c.keys[49999].key, "customer-key-0099998");
    }
    CHECK(s < PS_TEST_SLOW * 3.0); /* ~0.25 s; a scan per key took 9 s */
    ps_lg_config_free(&c);
    unlink(path);
}

static void thresholds(void)
{
    ps_lg_threshold t;
    ps_error err;
    CHECK_INT(ps_lg_threshold_parse("p99.99<1500us", &t, &err), 0);
    CHECK(fabs(t.percentile - 99.99) < 1e-9);
    CHECK(fabs(t.bound - 1500) < 1e-9);
    free(t.expression);
    CHECK_INT(ps_lg_threshold_parse("p99_9<2ms", &t, &err), 0);
    CHECK(fabs(t.percentile - 99.9) < 1e-9);
    free(t.expression);
    CHECK_INT(ps_lg_threshold_parse("error_rate<1%", &t, &err), 0);
    CHECK_INT(t.metric, PS_LG_METRIC_ERROR_RATE);
    CHECK(fabs(t.bound - 0.01) < 1e-12);
    free(t.expression);
    CHECK_INT(ps_lg_threshold_parse("max<=0.5s", &t, &err), 0);
    CHECK(fabs(t.bound - 500000) < 1e-6);
    free(t.expression);
    /* Spaces around the operator (and the ends) are accepted. */
    CHECK_INT(ps_lg_threshold_parse("p99 < 200ms", &t, &err), 0);
    CHECK_INT(t.metric, PS_LG_METRIC_PERCENTILE);
    CHECK(fabs(t.percentile - 99) < 1e-9);
    CHECK(fabs(t.bound - 200000) < 1e-6);
    CHECK(!t.or_equal);
    CHECK_STR(t.expression, "p99 < 200ms");
    free(t.expression);
    CHECK_INT(ps_lg_threshold_parse(" max <=  2s ", &t, &err), 0);
    CHECK_INT(t.metric, PS_LG_METRIC_MAX);
    CHECK(t.or_equal);
    CHECK(fabs(t.bound - 2000000) < 1e-6);
    free(t.expression);
    CHECK_INT(ps_lg_threshold_parse("error_rate < 1%", &t, &err), 0);
    CHECK(fabs(t.bound - 0.01) < 1e-12);
    free(t.expression);
    CHECK_INT(ps_lg_threshold_parse("p99 < 200 ms", &t, &err), -1); /* not inside the value */
    CHECK_INT(ps_lg_threshold_parse(" < 200ms", &t, &err), -1);
    CHECK_INT(ps_lg_threshold_parse("p99>200ms", &t, &err), -1);
    CHECK_INT(ps_lg_threshold_parse("latency<200ms", &t, &err), -1);
    CHECK_INT(ps_lg_threshold_parse("error_rate<200%", &t, &err), -1);
}

static void redaction(void)
{
    char out[8];
    ps_lg_redact("abcdefgh-secret-yz", out);
    CHECK_STR(out, "ab***yz");
    ps_lg_redact("short", out);
    CHECK_STR(out, "***");
}

/* The number of requests due before t is the integral of the rate. */
static void schedule_counts(void)
{
    ps_lg_rate flat = {1000, 1000, 0, 0};
    CHECK_INT(ps_lg_rate_due_ns(&flat, 0), 0);
    CHECK_INT(ps_lg_rate_due_ns(&flat, 1000), 1000000000);
    ps_lg_rate ramp = {100, 1000, 10, 0};
    /* N(10 s) = (100 + 1000) / 2 * 10 = 5500; N(5 s) = 100*5 + 45*25 = 1625. */
    int64_t n10 = 0, n5 = 0;
    for (int64_t k = 0; k < 10000; k++) {
        int64_t d = ps_lg_rate_due_ns(&ramp, k);
        if (d < INT64_C(10000000000)) n10++;
        if (d < INT64_C(5000000000)) n5++;
    }
    CHECK_INT(n10, 5500);
    CHECK_INT(n5, 1625);
    /* Due times never go backwards, also from a standing start. */
    ps_lg_rate up = {0, 500, 4, 0.25};
    int64_t prev = -1;
    int mono = 1;
    for (int64_t k = 0; k < 3000; k++) {
        int64_t d = ps_lg_rate_due_ns(&up, k);
        if (d < prev) mono = 0;
        prev = d;
    }
    CHECK(mono);
    CHECK(prev != INT64_MAX);
    ps_lg_rate none = {0, 0, 0, 0};
    CHECK_INT(ps_lg_rate_due_ns(&none, 1), INT64_MAX);
}

static void mix_ratio(void)
{
    unsigned mix[PS_LG_OPS] = {9, 1};
    int creates = 0, run = 0, max_run = 0;
    for (uint64_t k = 0; k < 1000; k++) {
        if (ps_lg_mix_op(mix, k) == PS_LG_OP_CREATE) {
            creates++;
            run = 0;
        } else if (++run > max_run) {
            max_run = run;
        }
    }
    CHECK_INT(creates, 100);
    CHECK_INT(max_run, 9);
    unsigned only_create[PS_LG_OPS] = {0, 3};
    CHECK_INT(ps_lg_mix_op(only_create, 5), PS_LG_OP_CREATE);
    unsigned half[PS_LG_OPS] = {1, 1};
    int c = 0;
    for (uint64_t k = 0; k < 10; k++)
        c += ps_lg_mix_op(half, k) == PS_LG_OP_CREATE;
    CHECK_INT(c, 5);
}

int main(void)
{
    /* --engine auto reads the proxy variables: none here, whatever the caller's */
    static const char *const proxies[] = {"https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy",
                                          "ALL_PROXY"};
    for (size_t i = 0; i < sizeof proxies / sizeof proxies[0]; i++)
        unsetenv(proxies[i]);
    RUN(good_flags);
    RUN(bad_flags);
    RUN(proxy_choice);
    RUN(keys_file);
    RUN(hundred_thousand_keys_load_fast);
    RUN(thresholds);
    RUN(redaction);
    RUN(schedule_counts);
    RUN(mix_ratio);
    return TEST_EXIT();
}
