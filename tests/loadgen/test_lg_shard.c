/* test_lg_shard.c - selecting a shard and dividing the work (loadgen/shard.h):
 * shares add up to the total, keys go to exactly one shard, bad input is a
 * clear error. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "loadgen/config.h"
#include "loadgen/shard_report.h"

static void selecting(void)
{
    ps_error err;
    int i = 0, n = 0;
    CHECK_INT(ps_lg_shard_parse("2/4", &i, &n, &err), 0);
    CHECK_INT(i, 2);
    CHECK_INT(n, 4);
    CHECK_INT(ps_lg_shard_parse("0/4", &i, &n, &err), -1);
    CHECK_INT(ps_lg_shard_parse("5/4", &i, &n, &err), -1);
    CHECK(strstr(err.message, "does not exist") != NULL);
    CHECK_INT(ps_lg_shard_parse("3", &i, &n, &err), -1);
    CHECK_INT(ps_lg_shard_from_env(4, "0", &i, &err), 0);
    CHECK_INT(i, 1);
    CHECK_INT(ps_lg_shard_from_env(4, "3", &i, &err), 0);
    CHECK_INT(i, 4);
    CHECK_INT(ps_lg_shard_from_env(4, "4", &i, &err), -1);
    CHECK_INT(ps_lg_shard_from_env(4, NULL, &i, &err), -1);
    CHECK(strstr(err.message, "JOB_COMPLETION_INDEX") != NULL);
}

static void start_at(void)
{
    ps_error err;
    int64_t ns = 0;
    CHECK_INT(ps_lg_parse_start_at("1767225600", &ns, &err), 0);
    CHECK_INT(ns, INT64_C(1767225600) * 1000000000);
    CHECK_INT(ps_lg_parse_start_at("2026-01-01T00:00:00Z", &ns, &err), 0);
    CHECK_INT(ns, INT64_C(1767225600) * 1000000000);
    CHECK_INT(ps_lg_parse_start_at("2026-01-01T02:00:00.5+02:00", &ns, &err), 0);
    CHECK_INT(ns, INT64_C(1767225600) * 1000000000 + 500000000);
    CHECK_INT(ps_lg_parse_start_at("2026-01-01", &ns, &err), -1);
    CHECK_INT(ps_lg_parse_start_at("2026-13-01T00:00:00Z", &ns, &err), -1);
    /* past 2262 the nanoseconds overflow int64 (undefined behaviour; wrapped, accepted) */
    CHECK_INT(ps_lg_parse_start_at("9999-12-31T23:59:59Z", &ns, &err), -1);
    CHECK_INT(ps_lg_parse_start_at("2262-04-12T00:00:00Z", &ns, &err), -1);
    CHECK_INT(ps_lg_parse_start_at("2262-04-10T00:00:00Z", &ns, &err), 0);
    CHECK_INT(ps_lg_parse_start_at("soon", &ns, &err), -1);
}

static void shares_sum(void)
{
    for (int n = 1; n <= 7; n++)
        for (int64_t total = 0; total < 30; total++) {
            int64_t sum = 0;
            for (int i = 0; i < n; i++) {
                int64_t s = ps_lg_share(total, i, n);
                CHECK(s == total / n || s == total / n + 1);
                sum += s;
            }
            CHECK_INT(sum, total);
        }
}

static int parse(ps_lg_config *cfg, const char *shard, const char *keys, const char *conns,
                 ps_error *err)
{
    const char *argv[] = {"petstore-load",
                          "--base-url",
                          "http://127.0.0.1:1/v1",
                          keys ? "--keys" : "--api-key",
                          keys ? keys : "one-key-0001",
                          "--shard",
                          shard,
                          "--rate",
                          "100",
                          "--connections",
                          conns,
                          "--start-at",
                          "1767225600",
                          NULL};
    return ps_lg_config_parse(13, (char **)argv, "bodies.json", cfg, err);
}

static void dividing(void)
{
    ps_error err;
    ps_lg_config cfg;
    /* one key: shared, rate and connections divided */
    CHECK_INT(parse(&cfg, "3/4", NULL, "10", &err), PS_LG_CONFIG_OK);
    CHECK_INT(cfg.connections, 2); /* 10 = 3 + 3 + 2 + 2 */
    CHECK(cfg.rate > 24.999 && cfg.rate < 25.001);
    CHECK(cfg.shard_keys_shared);
    CHECK_INT(cfg.nkeys, 1);
    char *id = strdup(cfg.run_id);
    ps_lg_config_free(&cfg);
    /* the same run in another shard derives the same run id */
    CHECK_INT(parse(&cfg, "1/4", NULL, "10", &err), PS_LG_CONFIG_OK);
    CHECK_INT(cfg.connections, 3);
    CHECK_STR(cfg.run_id, id);
    free(id);
    ps_lg_config_free(&cfg);
    /* keys: each to exactly one shard */
    char path[] = "/tmp/lg-shard-keys-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (int k = 0; k < 7; k++)
        fprintf(f, "key-%04d-abcd pro\n", k);
    fclose(f);
    int seen[7] = {0};
    for (int s = 1; s <= 3; s++) {
        char sh[8];
        snprintf(sh, sizeof sh, "%d/3", s);
        CHECK_INT(parse(&cfg, sh, path, "9", &err), PS_LG_CONFIG_OK);
        CHECK(!cfg.shard_keys_shared);
        for (size_t k = 0; k < cfg.nkeys; k++)
            seen[atoi(cfg.keys[k].key + 4)]++;
        ps_lg_config_free(&cfg);
    }
    for (int k = 0; k < 7; k++)
        CHECK_INT(seen[k], 1);
    /* errors: too few keys, connections below threads */
    CHECK_INT(parse(&cfg, "1/8", path, "16", &err), PS_LG_CONFIG_ERROR);
    CHECK(strstr(err.message, "7 keys cannot be divided among 8 shards") != NULL);
    ps_lg_config_free(&cfg);
    CHECK_INT(parse(&cfg, "4/4", NULL, "3", &err), PS_LG_CONFIG_ERROR);
    CHECK(strstr(err.message, "gives shard 4 0 connection") != NULL);
    ps_lg_config_free(&cfg);
    remove(path);
}

static void partial_views(void)
{
    ps_lg_config cfg = {.shard_keys_shared = true};
    ps_lg_violation v[3] = {{.kind = PS_LG_V_UNDER_ADMISSION},
                            {.kind = PS_LG_V_OVER_ADMISSION},
                            {.kind = PS_LG_V_UNDER_ADMISSION}};
    CHECK_INT(ps_lg_shard_drop_partial_views(&cfg, v, 3), 1);
    CHECK_INT(v[0].kind, PS_LG_V_OVER_ADMISSION);
    cfg.shard_keys_shared = false;
    ps_lg_violation w[1] = {{.kind = PS_LG_V_UNDER_ADMISSION}};
    CHECK_INT(ps_lg_shard_drop_partial_views(&cfg, w, 1), 1);
}

int main(void)
{
    RUN(selecting);
    RUN(start_at);
    RUN(shares_sum);
    RUN(dividing);
    RUN(partial_views);
    return TEST_EXIT();
}
