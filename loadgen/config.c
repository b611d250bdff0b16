/* config.c - petstore-load's flags, keys file and thresholds. */
#include "loadgen/config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/tls_client.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/keys_file.h"
#include "loadgen/customers.h"
#include "loadgen/live_metrics.h"
#include "loadgen/shard.h"

static bool no_proxy_covers(const char *list, const char *host)
{
    size_t hl = strlen(host);
    const char *p = list;
    while (*p) {
        p += strspn(p, ", \t");
        size_t n = strcspn(p, ", \t");
        const char *e = p;
        size_t el = n;
        if (el > 0 && e[0] == '.') e++, el--;
        if ((n == 1 && p[0] == '*') ||
            (el > 0 && hl >= el && strncasecmp(host + hl - el, e, el) == 0 &&
             (hl == el || host[hl - el - 1] == '.')))
            return true;
        p += n;
    }
    return false;
}

bool ps_lg_proxy_applies(const ps_lg_config *cfg, const char *(*get)(const char *))
{
    /* libcurl: http_proxy in lower case only (HTTP_PROXY can be set by a
     * CGI request's Proxy header), https_proxy or HTTPS_PROXY, then
     * all_proxy or ALL_PROXY; no_proxy or NO_PROXY exempts hosts. */
    const char *const names[] = {cfg->https ? "https_proxy" : "http_proxy",
                                 cfg->https ? "HTTPS_PROXY" : NULL, "all_proxy", "ALL_PROXY"};
    const char *proxy = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !proxy; i++) {
        const char *v = names[i] ? get(names[i]) : NULL;
        if (v && *v) proxy = v;
    }
    if (!proxy) return false;
    const char *no = get("no_proxy");
    if (!no || !*no) no = get("NO_PROXY");
    return !(no && no_proxy_covers(no, cfg->host));
}

bool ps_lg_config_open_model(const ps_lg_config *cfg)
{
    if (cfg->rate > 0 || cfg->ramp) return true;
    for (size_t i = 0; i < cfg->nkeys; i++)
        if (cfg->keys[i].rate > 0) return true;
    return false;
}

static void add_key(ps_lg_config *cfg, const char *key, size_t len, const ps_plan *plan,
                    double rate, int line)
{
    cfg->keys = realloc(cfg->keys, (cfg->nkeys + 1) * sizeof *cfg->keys);
    if (!cfg->keys) abort();
    ps_lg_key *k = &cfg->keys[cfg->nkeys++];
    k->key = strndup(key, len);
    if (!k->key) abort();
    k->plan = *plan;
    k->rate = rate;
    k->line = line;
    k->group = 0;
}

static int parse_mix(const char *text, ps_lg_config *cfg, ps_error *err)
{
    unsigned mix[PS_LG_OPS] = {0, 0};
    char *copy = strdup(text);
    if (!copy) abort();
    int rc = -1;
    for (char *save, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            ps_error_set(err, "--mix: expected NAME=WEIGHT, got '%s'", tok);
            goto out;
        }
        *eq = '\0';
        int op;
        if (strcmp(tok, "list") == 0)
            op = PS_LG_OP_LIST;
        else if (strcmp(tok, "create") == 0)
            op = PS_LG_OP_CREATE;
        else {
            ps_error_set(err, "--mix: unknown operation '%s' (expected list or create)", tok);
            goto out;
        }
        int64_t w;
        if (ps_cli_parse_int(eq + 1, 0, 1000, &w, err) != 0) {
            ps_error_prefix(err, "--mix %s weight: ", tok);
            goto out;
        }
        mix[op] = (unsigned)w;
    }
    if (mix[0] + mix[1] == 0) {
        ps_error_set(err, "--mix '%s': the weights add up to 0", text);
        goto out;
    }
    memcpy(cfg->mix, mix, sizeof mix);
    rc = 0;
out:
    free(copy);
    return rc;
}

static int parse_url(const char *url, ps_lg_config *cfg, ps_error *err)
{
    const char *p;
    if (strncasecmp(url, "http://", 7) == 0) {
        p = url + 7;
    } else if (strncasecmp(url, "https://", 8) == 0) {
        p = url + 8;
        cfg->https = true;
    } else {
        return ps_error_set(err, "--base-url '%s': must start with http:// or https://", url);
    }
    const char *host_end, *host = p;
    if (*p == '[') {
        host = p + 1;
        host_end = strchr(p, ']');
        if (!host_end) return ps_error_set(err, "--base-url '%s': unclosed '[' in the host", url);
        p = host_end + 1;
    } else {
        host_end = p + strcspn(p, ":/?#");
        p = host_end;
    }
    if (host_end == host) return ps_error_set(err, "--base-url '%s': no host", url);
    cfg->host = strndup(host, (size_t)(host_end - host));
    if (*p == ':') {
        p++;
        size_t n = strcspn(p, "/?#");
        char port[8];
        int64_t v;
        if (n == 0 || n >= sizeof port) return ps_error_set(err, "--base-url '%s': bad port", url);
        memcpy(port, p, n);
        port[n] = '\0';
        if (ps_cli_parse_int(port, 1, 65535, &v, err) != 0)
            return ps_error_prefix(err, "--base-url '%s' port: ", url);
        cfg->port = strdup(port);
        p += n;
    } else {
        cfg->port = strdup(cfg->https ? "443" : "80");
    }
    if (*p && *p != '/')
        return ps_error_set(err, "--base-url '%s': query or fragment not allowed", url);
    size_t n = strlen(p);
    while (n > 0 && p[n - 1] == '/')
        n--;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f || p[i] == '?' ||
            p[i] == '#')
            return ps_error_set(err, "--base-url '%s': the path holds a byte not allowed here",
                                url);
    cfg->path_prefix = strndup(p, n);
    cfg->base_url = strdup(url);
    if (!cfg->host || !cfg->port || !cfg->path_prefix || !cfg->base_url) abort();
    return 0;
}

enum {
    OPT_BASE_URL = 256,
    OPT_API_KEY,
    OPT_PLAN,
    OPT_KEYS,
    OPT_THREADS,
    OPT_CONNECTIONS,
    OPT_DURATION,
    OPT_REQUESTS,
    OPT_RATE,
    OPT_RAMP,
    OPT_MIX,
    OPT_BODIES,
    OPT_TIMEOUT,
    OPT_JSON,
    OPT_HDR,
    OPT_HDR_LOG,
    OPT_HTML,
    OPT_THRESHOLD,
    OPT_VERIFY,
    OPT_BURST,
    OPT_IGNORE_RA,
    OPT_ENGINE,
    OPT_QUIET,
    OPT_HELP,
    OPT_CACERT,
    OPT_INSECURE,
    OPT_CERT,
    OPT_KEY,
    OPT_PROGRESS,
    OPT_COLOR,
    OPT_VERSION,
    OPT_SHARD,
    OPT_SHARDS,
    OPT_START_AT,
    OPT_RUN_ID,
    OPT_LIMITED_OPS,
    OPT_LIMITED_ERRORS,
    /* capacity testing */
    OPT_SEED,
    OPT_ARRIVALS,
    OPT_MAX_LATENESS,
    OPT_ERROR_BUDGET,
    OPT_WARMUP,
    OPT_CUSTOMERS,
    OPT_QUOTA,
    OPT_TIME_SCALE,
    OPT_WRITE_KEYS,
    OPT_INTERVALS_JSONL,
    OPT_METRICS_LISTEN,
    /* --summary-md (reports/report_markdown.h) */
    OPT_SUMMARY_MD,
};

static const struct option options[] = {
    {"base-url", required_argument, NULL, OPT_BASE_URL},
    {"api-key", required_argument, NULL, OPT_API_KEY},
    {"plan", required_argument, NULL, OPT_PLAN},
    {"keys", required_argument, NULL, OPT_KEYS},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"connections", required_argument, NULL, OPT_CONNECTIONS},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"requests", required_argument, NULL, OPT_REQUESTS},
    {"rate", required_argument, NULL, OPT_RATE},
    {"ramp", required_argument, NULL, OPT_RAMP},
    {"mix", required_argument, NULL, OPT_MIX},
    {"bodies", required_argument, NULL, OPT_BODIES},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"json", required_argument, NULL, OPT_JSON},
    {"hdr", required_argument, NULL, OPT_HDR},
    {"hdr-log", required_argument, NULL, OPT_HDR_LOG},
    {"html", required_argument, NULL, OPT_HTML},
    {"threshold", required_argument, NULL, OPT_THRESHOLD},
    {"verify-limits", no_argument, NULL, OPT_VERIFY},
    {"burst", no_argument, NULL, OPT_BURST},
    {"ignore-retry-after", no_argument, NULL, OPT_IGNORE_RA},
    {"engine", required_argument, NULL, OPT_ENGINE},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"insecure", no_argument, NULL, OPT_INSECURE},
    {"cert", required_argument, NULL, OPT_CERT},
    {"key", required_argument, NULL, OPT_KEY},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {"progress-interval", required_argument, NULL, OPT_PROGRESS},
    {"color", required_argument, NULL, OPT_COLOR},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"shards", required_argument, NULL, OPT_SHARDS},
    {"start-at", required_argument, NULL, OPT_START_AT},
    {"run-id", required_argument, NULL, OPT_RUN_ID},
    {"limited-ops", required_argument, NULL, OPT_LIMITED_OPS},
    {"limited-errors", required_argument, NULL, OPT_LIMITED_ERRORS},
    /* capacity testing */
    {"seed", required_argument, NULL, OPT_SEED},
    {"arrivals", required_argument, NULL, OPT_ARRIVALS},
    {"max-lateness", required_argument, NULL, OPT_MAX_LATENESS},
    {"error-budget", required_argument, NULL, OPT_ERROR_BUDGET},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"customers", required_argument, NULL, OPT_CUSTOMERS},
    {"quota", required_argument, NULL, OPT_QUOTA},
    {"time-scale", required_argument, NULL, OPT_TIME_SCALE},
    {"write-customer-keys", required_argument, NULL, OPT_WRITE_KEYS},
    {"intervals-jsonl", required_argument, NULL, OPT_INTERVALS_JSONL},
    {"metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN},
    /* --summary-md (reports/report_markdown.h) */
    {"summary-md", required_argument, NULL, OPT_SUMMARY_MD},
    {NULL, 0, NULL, 0},
};

/* --cert and --key load and belong together, for both engines
 * (core/tls_client.h): a wrong file is said before the run (exit 2),
 * naming the file, never its content. */
static int check_client_cert(const ps_lg_config *cfg, ps_error *err)
{
    if (cfg->key_file && !cfg->cert_file) return ps_error_set(err, "--key needs --cert FILE");
    if (!cfg->cert_file) return 0;
    ps_tls_client_opts only_cert = {
        .insecure = true, .cert_file = cfg->cert_file, .key_file = cfg->key_file};
    return ps_tls_client_opts_check(&only_cert, err);
}

static int set_path(char **slot, const char *value, const char *flag, ps_error *err)
{
    if (!*value) return ps_error_set(err, "%s: empty file name", flag);
    char *copy = strdup(value); /* before the free: value may be *slot itself */
    if (!copy) abort();
    free(*slot);
    *slot = copy;
    return 0;
}

/* Capacity testing's flags (docs/capacity-testing.md), kept together. */
static void capacity_defaults(ps_lg_config *cfg)
{
    cfg->seed = 1;
    /* Loose by default: a loaded machine's scheduling delays reach tens of
     * milliseconds, a saturated generator's lateness grows by the second. */
    cfg->max_lateness_ns = 500 * INT64_C(1000000);
    cfg->error_budget = 0.01;
    cfg->quota = 0.95;
    cfg->time_scale = 1;
}

static int capacity_option(int opt, const char *arg, ps_lg_config *cfg, ps_error *err)
{
    int64_t v;
    switch (opt) {
    case OPT_SEED:
        if (ps_cli_parse_int(arg, 0, INT64_MAX, &v, err) != 0)
            return ps_error_prefix(err, "--seed: ");
        cfg->seed = (uint64_t)v;
        return 0;
    case OPT_ARRIVALS:
        if (strcmp(arg, "uniform") == 0)
            cfg->poisson = false;
        else if (strcmp(arg, "poisson") == 0)
            cfg->poisson = true;
        else
            return ps_error_set(err, "--arrivals: expected uniform or poisson, got '%s'", arg);
        return 0;
    case OPT_MAX_LATENESS:
        if (ps_cli_parse_duration(arg, 1, &cfg->max_lateness_ns, err) != 0)
            return ps_error_prefix(err, "--max-lateness: ");
        return 0;
    case OPT_ERROR_BUDGET: {
        size_t n = strlen(arg);
        bool pct = n > 0 && arg[n - 1] == '%';
        char num[32];
        if (n == 0 || n >= sizeof num)
            return ps_error_set(err, "--error-budget: expected e.g. 1%%");
        memcpy(num, arg, n - pct);
        num[n - pct] = '\0';
        if (ps_cli_parse_double(num, 0, pct ? 100 : 1, &cfg->error_budget, err) != 0)
            return ps_error_prefix(err, "--error-budget: ");
        if (pct) cfg->error_budget /= 100.0;
        return 0;
    }
    case OPT_WARMUP:
        if (ps_cli_parse_duration(arg, 1, &cfg->warmup_ns, err) != 0)
            return ps_error_prefix(err, "--warmup: ");
        return 0;
    case OPT_CUSTOMERS:
        cfg->have_customers = true;
        return ps_lg_customers_parse(arg, cfg->customers, err);
    case OPT_QUOTA:
        if (ps_cli_parse_double(arg, 0.001, 10, &cfg->quota, err) != 0)
            return ps_error_prefix(err, "--quota: ");
        return 0;
    case OPT_TIME_SCALE:
        if (ps_cli_parse_double(arg, 1, 1e6, &cfg->time_scale, err) != 0)
            return ps_error_prefix(err, "--time-scale: ");
        return 0;
    case OPT_WRITE_KEYS:
        return set_path(&cfg->write_keys_path, arg, "--write-customer-keys", err);
    case OPT_INTERVALS_JSONL:
        return set_path(&cfg->intervals_jsonl_path, arg, "--intervals-jsonl", err);
    case OPT_METRICS_LISTEN: {
        struct sockaddr_storage addr;
        socklen_t len;
        if (ps_lg_live_parse_listen(arg, &addr, &len, err) != 0) return -1;
        return set_path(&cfg->metrics_listen, arg, "--metrics-listen", err);
    }
    default:
        return ps_error_set(err, "internal error: option %d", opt);
    }
}

/* After the keys are known: --rate/--ramp over keys that all have their own
 * rate scale them (never ignored), and --warmup needs a duration. */
static int capacity_check(ps_lg_config *cfg, bool all_own, ps_error *err)
{
    if (cfg->warmup_ns && !cfg->duration_ns) return ps_error_set(err, "--warmup needs --duration");
    if (cfg->warmup_ns && cfg->burst) return ps_error_set(err, "--warmup does not go with --burst");
    if (!all_own || !(cfg->rate > 0 || cfg->ramp)) return 0;
    double sum = 0;
    for (size_t i = 0; i < cfg->nkeys; i++)
        sum += cfg->keys[i].rate;
    if (!(sum > 0)) return 0;
    cfg->key_scale_from = (cfg->ramp ? cfg->ramp_from : cfg->rate) / sum;
    cfg->key_scale_to = (cfg->ramp ? cfg->ramp_to : cfg->rate) / sum;
    return 0;
}

/* What the flags say that is checked only once all are read. */
typedef struct parse_state {
    const char *api_key, *plan_text, *keys_path;
    bool have_duration;
    int64_t shards_n;
} parse_state;

/* Takes option c (getopt_long's, its value in optarg) into cfg or st. */
/* The options of what a run writes and how it is divided: outputs,
 * thresholds, progress, shards (take_option's rest). */
static ps_lg_parse_status take_report_option(int c, int argc, char **argv, ps_lg_config *cfg,
                                             parse_state *st, ps_error *err)
{
    switch (c) {
    case OPT_JSON:
        if (set_path(&cfg->json_path, optarg, "--json", err)) return PS_LG_CONFIG_ERROR;
        break;
    case OPT_HDR:
        if (set_path(&cfg->hdr_path, optarg, "--hdr", err)) return PS_LG_CONFIG_ERROR;
        break;
    case OPT_HDR_LOG:
        if (set_path(&cfg->hdr_log_path, optarg, "--hdr-log", err)) return PS_LG_CONFIG_ERROR;
        break;
    case OPT_HTML:
        if (set_path(&cfg->html_path, optarg, "--html", err)) return PS_LG_CONFIG_ERROR;
        break;
    case OPT_SUMMARY_MD:
        if (set_path(&cfg->summary_md_path, optarg, "--summary-md", err)) return PS_LG_CONFIG_ERROR;
        break;
    case OPT_THRESHOLD: {
        cfg->thresholds =
            realloc(cfg->thresholds, (cfg->nthresholds + 1) * sizeof *cfg->thresholds);
        if (!cfg->thresholds) abort();
        if (ps_lg_threshold_parse(optarg, &cfg->thresholds[cfg->nthresholds], err) != 0) {
            ps_error_prefix(err, "--threshold: ");
            return PS_LG_CONFIG_ERROR;
        }
        cfg->nthresholds++;
        break;
    }
    case OPT_SHARD:
        if (st->shards_n) return ps_error_set(err, "give --shard I/N or --shards N, not both");
        if (ps_lg_shard_parse(optarg, &cfg->shard, &cfg->shards, err) != 0)
            return PS_LG_CONFIG_ERROR;
        break;
    case OPT_SHARDS:
        if (cfg->shards) return ps_error_set(err, "give --shard I/N or --shards N, not both");
        if (ps_cli_parse_int(optarg, 1, PS_LG_MAX_SHARDS, &st->shards_n, err) != 0)
            return ps_error_prefix(err, "--shards: ");
        break;
    case OPT_START_AT:
        if (ps_lg_parse_start_at(optarg, &cfg->start_at_ns, err) != 0) return PS_LG_CONFIG_ERROR;
        break;
    case OPT_RUN_ID:
        if (!*optarg || strlen(optarg) > 64 ||
            strspn(optarg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklm"
                           "nopqrstuvwxyz0123456789._-") != strlen(optarg))
            return ps_error_set(err, "--run-id: 1-64 letters, digits, '.', '_' or '-'");
        free(cfg->run_id);
        cfg->run_id = strdup(optarg);
        if (!cfg->run_id) abort();
        break;
    case OPT_PROGRESS:
        if (ps_cli_parse_duration(optarg, 1, &cfg->progress_interval_ns, err) != 0)
            return ps_error_prefix(err, "--progress-interval: ");
        break;
    case OPT_COLOR:
        if (ps_cli_parse_color(optarg, &cfg->color, err) != 0)
            return ps_error_prefix(err, "--color: ");
        break;
    default: /* '?' or ':' */
        return ps_cli_getopt_error(c, argc, argv, options, err);
    }
    return PS_LG_CONFIG_OK;
}

static ps_lg_parse_status take_option(int c, int argc, char **argv, ps_lg_config *cfg,
                                      parse_state *st, ps_error *err)
{
    int64_t v;
    switch (c) {
    case OPT_BASE_URL:
        if (cfg->base_url) return ps_error_set(err, "--base-url given twice");
        if (parse_url(optarg, cfg, err) != 0) return PS_LG_CONFIG_ERROR;
        break;
    case OPT_API_KEY:
        if (!ps_keys_key_text_ok(optarg, strlen(optarg)))
            return ps_error_set(err, "--api-key: the key must be 1-512 printable ASCII bytes");
        st->api_key = optarg;
        break;
    case OPT_PLAN:
        st->plan_text = optarg;
        break;
    case OPT_KEYS:
        st->keys_path = optarg;
        break;
    case OPT_THREADS:
        if (ps_cli_parse_int(optarg, 1, 256, &v, err) != 0)
            return ps_error_prefix(err, "--threads: ");
        cfg->threads = (int)v;
        break;
    case OPT_CONNECTIONS:
        if (ps_cli_parse_int(optarg, 1, 100000, &v, err) != 0)
            return ps_error_prefix(err, "--connections: ");
        cfg->connections = (int)v;
        break;
    case OPT_DURATION:
        if (ps_cli_parse_duration(optarg, 0, &cfg->duration_ns, err) != 0)
            return ps_error_prefix(err, "--duration: ");
        st->have_duration = true;
        break;
    case OPT_REQUESTS:
        if (ps_cli_parse_int(optarg, 1, INT64_C(1) << 40, &cfg->requests, err) != 0)
            return ps_error_prefix(err, "--requests: ");
        break;
    case OPT_RATE:
        if (ps_cli_parse_double(optarg, 0.001, 10e6, &cfg->rate, err) != 0)
            return ps_error_prefix(err, "--rate: ");
        break;
    case OPT_RAMP: {
        const char *colon = strchr(optarg, ':');
        char from[32];
        if (!colon || (size_t)(colon - optarg) >= sizeof from)
            return ps_error_set(err, "--ramp: expected R1:R2 (req/s), got '%s'", optarg);
        memcpy(from, optarg, (size_t)(colon - optarg));
        from[colon - optarg] = '\0';
        if (ps_cli_parse_double(from, 0, 10e6, &cfg->ramp_from, err) != 0 ||
            ps_cli_parse_double(colon + 1, 0, 10e6, &cfg->ramp_to, err) != 0)
            return ps_error_prefix(err, "--ramp: ");
        if (cfg->ramp_from + cfg->ramp_to <= 0)
            return ps_error_set(err, "--ramp: both rates are 0");
        cfg->ramp = true;
        break;
    }
    case OPT_MIX:
        if (parse_mix(optarg, cfg, err) != 0) return PS_LG_CONFIG_ERROR;
        break;
    case OPT_LIMITED_OPS:
        if (ps_lg_limited_ops_parse(optarg, &cfg->limited_ops, err)) return PS_LG_CONFIG_ERROR;
        break;
    case OPT_LIMITED_ERRORS:
        if (ps_lg_limited_errors_parse(optarg, &cfg->limited_errors, err))
            return PS_LG_CONFIG_ERROR;
        break;
    case OPT_BODIES:
        if (set_path(&cfg->bodies_path, optarg, "--bodies", err)) return PS_LG_CONFIG_ERROR;
        break;
    case OPT_TIMEOUT:
        if (ps_cli_parse_duration(optarg, 0, &cfg->timeout_ns, err) != 0)
            return ps_error_prefix(err, "--timeout: ");
        break;
    case OPT_VERIFY:
        cfg->verify_limits = true;
        break;
    case OPT_BURST:
        cfg->burst = true;
        break;
    case OPT_IGNORE_RA:
        cfg->honour_retry_after = false;
        break;
    case OPT_ENGINE:
        if (strcmp(optarg, "auto") == 0)
            cfg->engine = PS_LG_ENGINE_AUTO;
        else if (strcmp(optarg, "epoll") == 0)
            cfg->engine = PS_LG_ENGINE_EPOLL;
        else if (strcmp(optarg, "curl") == 0)
            cfg->engine = PS_LG_ENGINE_CURL;
        else
            return ps_error_set(err, "--engine: expected auto, epoll or curl, got '%s'", optarg);
        break;
    case OPT_QUIET:
        cfg->quiet = true;
        break;
    case OPT_CACERT:
        if (access(optarg, R_OK) != 0)
            return ps_error_set(err, "--cacert '%s': %s", optarg, strerror(errno));
        if (set_path(&cfg->cacert, optarg, "--cacert", err)) return PS_LG_CONFIG_ERROR;
        break;
    case OPT_INSECURE:
        cfg->insecure = true;
        break;
    case OPT_CERT:
        if (set_path(&cfg->cert_file, optarg, "--cert", err)) return PS_LG_CONFIG_ERROR;
        break;
    case OPT_KEY:
        if (set_path(&cfg->key_file, optarg, "--key", err)) return PS_LG_CONFIG_ERROR;
        break;
    case 'h':
    case OPT_HELP:
        return PS_LG_CONFIG_HELP;
    case OPT_VERSION:
        return PS_LG_CONFIG_VERSION;
    case OPT_SEED:
    case OPT_ARRIVALS:
    case OPT_MAX_LATENESS:
    case OPT_ERROR_BUDGET:
    case OPT_WARMUP:
    case OPT_CUSTOMERS:
    case OPT_QUOTA:
    case OPT_TIME_SCALE:
    case OPT_WRITE_KEYS:
    case OPT_INTERVALS_JSONL:
    case OPT_METRICS_LISTEN:
        if (capacity_option(c, optarg, cfg, err) != 0) return PS_LG_CONFIG_ERROR;
        break;
    default:
        return take_report_option(c, argc, argv, cfg, st, err);
    }
    return PS_LG_CONFIG_OK;
}

/* The target from the environment when no flag gave it, and the keys:
 * --api-key (or PETSTORE_API_KEY), --keys or --customers. */
static ps_lg_parse_status take_keys(ps_lg_config *cfg, parse_state *st, ps_error *err)
{
    /* As petstore-conform: the environment stands in for a flag not given,
     * so the key need not be on the command line, where ps shows it. */
    const char *env_url = ps_cli_env("PETSTORE_BASE_URL");
    if (!cfg->base_url && env_url && parse_url(env_url, cfg, err) != 0)
        return ps_error_prefix(err, "PETSTORE_BASE_URL: ");
    if (!st->api_key && !st->keys_path && (st->api_key = ps_cli_env("PETSTORE_API_KEY")) &&
        !ps_keys_key_text_ok(st->api_key, strlen(st->api_key)))
        return ps_error_set(err, "PETSTORE_API_KEY: the key must be 1-512 printable ASCII bytes");
    if (!cfg->base_url && !cfg->write_keys_path)
        return ps_error_set(err, "--base-url: required (or set PETSTORE_BASE_URL)");
    if (st->api_key && st->keys_path)
        return ps_error_set(err, "give --api-key or --keys, not both");
    if (cfg->have_customers && st->api_key && !st->keys_path)
        return ps_error_set(err,
                            "--customers takes keys from --keys, or makes its own: not --api-key");
    if (cfg->write_keys_path && (!cfg->have_customers || st->keys_path))
        return ps_error_set(err,
                            "--write-customer-keys writes the keys --customers makes (no --keys)");
    if (!st->api_key && !st->keys_path && !cfg->have_customers)
        return ps_error_set(err, "--api-key: KEY (or PETSTORE_API_KEY) or --keys FILE is required");
    if (st->keys_path && st->plan_text)
        return ps_error_set(err, "--plan goes with --api-key; the keys file gives each key's plan");
    if (st->api_key) {
        ps_plan plan = {PS_PLAN_UNKNOWN, 0, 0};
        if (st->plan_text && ps_plan_parse(st->plan_text, &plan, err) != 0)
            return ps_error_prefix(err, "--plan: ");
        add_key(cfg, st->api_key, strlen(st->api_key), &plan, 0, 0);
    } else if (st->keys_path && ps_lg_keys_load(cfg, st->keys_path, err) != 0) {
        return PS_LG_CONFIG_ERROR;
    }
    if (cfg->have_customers && ps_lg_customers_apply(cfg, err) != 0) return PS_LG_CONFIG_ERROR;
    return PS_LG_CONFIG_OK;
}

/* What the flags say together: the run's bounds, rates, engine, TLS files,
 * bodies and shard. */
static ps_lg_parse_status check_config(ps_lg_config *cfg, const parse_state *st,
                                       const char *default_bodies, ps_error *err)
{
    if (st->have_duration && cfg->requests)
        return ps_error_set(err, "give --duration or --requests, not both");
    if (!st->have_duration && !cfg->requests) cfg->duration_ns = 10 * INT64_C(1000000000);
    if (cfg->ramp && cfg->rate > 0) return ps_error_set(err, "give --rate or --ramp, not both");
    if (cfg->ramp && !cfg->duration_ns) return ps_error_set(err, "--ramp needs --duration");
    if (cfg->connections < cfg->threads)
        return ps_error_set(err, "--connections (%d) must be at least --threads (%d)",
                            cfg->connections, cfg->threads);
    bool shared_rate = cfg->rate > 0 || cfg->ramp;
    bool any_own = false, all_own = true;
    for (size_t i = 0; i < cfg->nkeys; i++) {
        if (cfg->keys[i].rate > 0)
            any_own = true;
        else
            all_own = false;
    }
    if (any_own && !all_own && !shared_rate)
        return ps_error_set(err, "some keys in the keys file have a RATE and some do not: give "
                                 "--rate (shared by the keys without one) or a rate for every key");
    if (capacity_check(cfg, all_own, err) != 0) return PS_LG_CONFIG_ERROR;
    if (cfg->engine == PS_LG_ENGINE_AUTO)
        cfg->engine = ps_lg_proxy_applies(cfg, ps_cli_env) ? PS_LG_ENGINE_CURL : PS_LG_ENGINE_EPOLL;
    if ((cfg->cacert || cfg->insecure || cfg->cert_file || cfg->key_file) && !cfg->https)
        return ps_error_set(
            err, "--cacert, --insecure, --cert and --key apply to https:// targets only");
    if (check_client_cert(cfg, err) != 0) return PS_LG_CONFIG_ERROR;
    if (cfg->burst && cfg->engine != PS_LG_ENGINE_EPOLL)
        return ps_error_set(err, "--burst needs the epoll engine (no proxy, no --engine curl)");
    if (cfg->mix[PS_LG_OP_CREATE] > 0)
        if (set_path(&cfg->bodies_path, cfg->bodies_path ? cfg->bodies_path : default_bodies,
                     "--bodies", err))
            return PS_LG_CONFIG_ERROR;
    if (st->shards_n) {
        cfg->shards = (int)st->shards_n;
        if (ps_lg_shard_from_env(cfg->shards, getenv("JOB_COMPLETION_INDEX"), &cfg->shard, err) !=
            0)
            return PS_LG_CONFIG_ERROR;
    }
    if (cfg->run_id && !cfg->shards)
        return ps_error_set(err, "--run-id goes with --shard or --shards");
    if (ps_lg_shard_apply(cfg, err) != 0) return PS_LG_CONFIG_ERROR;
    return PS_LG_CONFIG_OK;
}

ps_lg_parse_status ps_lg_config_parse(int argc, char **argv, const char *default_bodies,
                                      ps_lg_config *cfg, ps_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->threads = 1;
    cfg->connections = 10;
    cfg->mix[PS_LG_OP_LIST] = 1;
    cfg->timeout_ns = 10 * INT64_C(1000000000);
    cfg->honour_retry_after = true;
    parse_state st = {0};
    int c;
    cfg->progress_interval_ns = 10 * INT64_C(1000000000);
    capacity_defaults(cfg);
    ps_cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        ps_lg_parse_status taken = take_option(c, argc, argv, cfg, &st, err);
        if (taken != PS_LG_CONFIG_OK) return taken;
    }
    if (optind < argc) return ps_error_set(err, "unexpected argument '%s'", argv[optind]);
    ps_lg_parse_status status = take_keys(cfg, &st, err);
    if (status != PS_LG_CONFIG_OK) return status;
    return check_config(cfg, &st, default_bodies, err);
}

void ps_lg_config_free(ps_lg_config *cfg)
{
    free(cfg->base_url);
    free(cfg->host);
    free(cfg->port);
    free(cfg->path_prefix);
    for (size_t i = 0; i < cfg->nkeys; i++)
        free(cfg->keys[i].key);
    free(cfg->keys);
    for (size_t i = 0; i < cfg->npool; i++)
        free(cfg->customer_pool[i].key);
    free(cfg->customer_pool);
    free(cfg->json_path);
    free(cfg->hdr_path);
    free(cfg->hdr_log_path);
    free(cfg->html_path);
    free(cfg->summary_md_path);
    free(cfg->bodies_path);
    free(cfg->cacert);
    free(cfg->cert_file);
    free(cfg->key_file);
    for (size_t i = 0; i < cfg->nthresholds; i++)
        free(cfg->thresholds[i].expression);
    free(cfg->thresholds);
    free(cfg->run_id);
    free(cfg->write_keys_path);
    free(cfg->intervals_jsonl_path);
    free(cfg->metrics_listen);
    for (size_t g = 0; g < cfg->ngroups; g++)
        free(cfg->groups[g]);
    free(cfg->groups);
    memset(cfg, 0, sizeof *cfg);
}
