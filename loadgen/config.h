/* config.h - petstore-load's command line and --keys file: parsed into one
 * read-only ps_lg_config shared by every thread.
 *
 * Ownership: the config owns every string and array in it; free with
 * ps_lg_config_free. Parsing never exits the process: it returns a code and
 * a message the caller prints (exit code 2 is the caller's choice). */
#ifndef PS_LG_CONFIG_H
#define PS_LG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/cli.h"
#include "core/error.h"
#include "core/plan.h"

typedef enum ps_lg_engine {
    PS_LG_ENGINE_AUTO, /* epoll, or curl when a proxy variable applies (ps_lg_proxy_applies) */
    PS_LG_ENGINE_EPOLL,
    PS_LG_ENGINE_CURL,
} ps_lg_engine;

typedef enum ps_lg_op { PS_LG_OP_LIST, PS_LG_OP_CREATE, PS_LG_OPS } ps_lg_op;

/* Which operations the service's limits count (--limited-ops): the spec
 * (section 8 rule 4) leaves it open, so AUTO (0) infers it from the
 * responses (loadgen/limits.h). */
typedef enum ps_lg_limited_ops {
    PS_LG_LIMITED_AUTO,
    PS_LG_LIMITED_ALL,
    PS_LG_LIMITED_LIST,
    PS_LG_LIMITED_CREATE,
} ps_lg_limited_ops;

/* Whether admitted requests answered 4xx count (--limited-errors); AUTO (0)
 * infers it. */
typedef enum ps_lg_limited_errors {
    PS_LG_ERRORS_AUTO,
    PS_LG_ERRORS_YES,
    PS_LG_ERRORS_NO,
} ps_lg_limited_errors;

/* A key's label in reports (loadgen/key_label.h): "ab***yz~1f2e3d" */
#define PS_LG_LABEL_SIZE 40

typedef struct ps_lg_key {
    char *key;
    ps_plan plan;
    double rate;  /* its own req/s (--keys RATE column), 0 = shares --rate / closed model */
    int line;     /* line in the keys file, 0 for --api-key */
    size_t group; /* its key group: index for ps_lg_config_group_name */
    char label[PS_LG_LABEL_SIZE]; /* what reports show; set by ps_lg_key_labels */
} ps_lg_key;

typedef enum ps_lg_metric {
    PS_LG_METRIC_PERCENTILE, /* latency at `percentile` */
    PS_LG_METRIC_MAX,
    PS_LG_METRIC_MEAN,
    PS_LG_METRIC_ERROR_RATE, /* (failed + timed out + 5xx) / scheduled */
} ps_lg_metric;

typedef struct ps_lg_threshold {
    char *expression; /* as given, for the report */
    ps_lg_metric metric;
    double percentile; /* 0..100 for PERCENTILE */
    bool or_equal;     /* "<=" rather than "<" */
    double bound;      /* microseconds, or a fraction for ERROR_RATE */
    /* "pro.p99<50ms": judged on one plan's answers alone (scoped; plan is
     * its id), else on every answer */
    bool scoped;
    ps_plan_id plan;
} ps_lg_threshold;

typedef struct ps_lg_config {
    char *base_url;
    bool https;
    char *host;        /* without brackets for IPv6 */
    char *port;        /* decimal text */
    char *path_prefix; /* path of the base URL without trailing '/', may be "" */
    ps_lg_key *keys;
    size_t nkeys;
    int threads, connections;
    int64_t duration_ns; /* 0 when --requests bounds the run */
    int64_t requests;    /* 0 = unbounded (the duration bounds the run) */
    double rate;         /* total req/s, 0 = closed model */
    bool ramp;
    double ramp_from, ramp_to;
    unsigned mix[PS_LG_OPS];
    int64_t timeout_ns;
    char *json_path, *hdr_path, *hdr_log_path, *html_path, *bodies_path;
    char *summary_md_path; /* --summary-md: GitHub-flavoured Markdown summary */
    ps_lg_threshold *thresholds;
    size_t nthresholds;
    bool verify_limits, burst, honour_retry_after, quiet;
    ps_lg_limited_ops limited_ops;       /* --limited-ops, default auto */
    ps_lg_limited_errors limited_errors; /* --limited-errors, default auto */
    char *cacert;                        /* https: CA bundle to verify the server with */
    bool insecure;                       /* https: no certificate verification */
    char *cert_file, *key_file;          /* https: --cert, --key (NULL: none; key in cert) */
    ps_lg_engine engine;                 /* resolved: never AUTO after parsing */
    int64_t progress_interval_ns;        /* off a terminal, a progress line this often (0 = none) */
    ps_cli_color color; /* --color, resolved with the environment by ps_cli_color_enabled */
    /* Sharding (loadgen/shard.h): this process is shard `shard` (1-based) of
     * `shards` (0 of 0: not sharded); rate, ramp, connections, requests and
     * keys above are then already this shard's share. */
    int shard, shards;
    bool shard_keys_shared; /* one key, driven by every shard */
    int64_t start_at_ns;    /* --start-at (wall clock ns), 0 = start now */
    char *run_id;           /* --run-id, or derived; NULL when not sharded */
    /* Capacity testing (docs/capacity-testing.md): */
    uint64_t seed;           /* --seed: the schedules' phases and Poisson draws */
    bool poisson;            /* --arrivals poisson (default uniform) */
    int64_t max_lateness_ns; /* --max-lateness: the generator's p90 lateness bound */
    double error_budget;     /* --error-budget: the error rate a passing run may have */
    int64_t warmup_ns;       /* --warmup: sent, not counted in any figure */
    /* --rate/--ramp over keys that all have a rate of their own scale those
     * rates: by key_scale_from at the start to key_scale_to at the end of the
     * duration (0: not scaled). */
    double key_scale_from, key_scale_to;
    /* --customers (loadgen/customers.h): customers per plan id (all 0: not
     * given), each at --quota of its plan's per-minute limit, times
     * --time-scale; --write-customer-keys: write their keys and stop. */
    int64_t customers[PS_PLAN_UNKNOWN + 1];
    bool have_customers;
    double quota, time_scale;
    /* --customers with --keys: every key of the file, the pool a search's
     * steps draw their customers from (keys[] hold copies); npool 0 when
     * the customers' keys are made up */
    ps_lg_key *customer_pool;
    size_t npool;
    char *write_keys_path;
    char *intervals_jsonl_path; /* --intervals-jsonl: one JSON line per second, as it ends */
    char *metrics_listen;       /* --metrics-listen HOST:PORT (loadgen/live_metrics.h) */
    /* Key groups (the keys file's group=NAME): groups[0] is "default", the
     * group of keys without one; ngroups 0 when no key names a group. */
    char **groups;
    size_t ngroups;
    /* the run's key secret (loadgen/key_label.h), derived from every key
     * before the shards divide them; key_secret_set false: none derived */
    unsigned char key_secret[32];
    bool key_secret_set;
} ps_lg_config;

typedef enum ps_lg_parse_status {
    PS_LG_CONFIG_OK = 0,
    PS_LG_CONFIG_ERROR = -1,
    PS_LG_CONFIG_HELP = 1,    /* --help: usage printed, exit 0 */
    PS_LG_CONFIG_VERSION = 2, /* --version: version printed, exit 0 */
} ps_lg_parse_status;

/* Parses argv into cfg (zeroed by the call). default_bodies is the create
 * bodies file used when --bodies is not given. */
ps_lg_parse_status ps_lg_config_parse(int argc, char **argv, const char *default_bodies,
                                      ps_lg_config *cfg, ps_error *err);
void ps_lg_config_free(ps_lg_config *cfg);
void ps_lg_config_usage(FILE *out);

/* Reads a keys file (core/keys_file.h, docs/keys-file.md) and appends
 * its keys to cfg. */
int ps_lg_keys_load(ps_lg_config *cfg, const char *path, ps_error *err);
/* The name of key group `group` ("default" for keys without one). */
const char *ps_lg_config_group_name(const ps_lg_config *cfg, size_t group);
/* How many key groups the run reports on (at least 1). */
size_t ps_lg_config_group_count(const ps_lg_config *cfg);

/* Parses one threshold ("p99<200ms", "max<=1s", "error_rate<1%"). */
int ps_lg_threshold_parse(const char *text, ps_lg_threshold *out, ps_error *err);
/* Key masked: first 2 + "***" + last 2 characters ("***" alone for keys
 * shorter than 16, so a short key shows none). out needs 8 bytes. Reports
 * show ps_lg_key.label (key_label.h), which adds a keyed hash. */
void ps_lg_redact(const char *key, char out[8]);

/* Parses --limited-ops (auto|all|list|create) and --limited-errors
 * (auto|yes|no) values; petstore-load merge takes the same flags. */
int ps_lg_limited_ops_parse(const char *text, ps_lg_limited_ops *out, ps_error *err);
int ps_lg_limited_errors_parse(const char *text, ps_lg_limited_errors *out, ps_error *err);

/* True when libcurl would send requests to cfg's target through a proxy
 * named in the environment (get: ps_cli_env, or a test's table): --engine auto
 * then picks the curl engine, the only one that speaks to proxies. */
bool ps_lg_proxy_applies(const ps_lg_config *cfg, const char *(*get)(const char *));

/* True when the run uses the open model (a rate on the command line or
 * in the keys file). */
bool ps_lg_config_open_model(const ps_lg_config *cfg);

#endif
