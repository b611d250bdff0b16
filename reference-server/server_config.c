/* server_config.c - flag parsing for petstore-server. */
#include "reference-server/server_config.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cli.h"
#include "core/datadir.h"
#include "core/version.h"

/* Defaults, looked up in the data directory (core/datadir.h). */
#define PS_DEFAULT_KEYS_FILE "keys.txt"
#define PS_DEFAULT_SEED_FILE "seed-categories.json"

void ps_server_config_usage(FILE *out)
{
    fputs(
        "usage: petstore-server [options]\n"
        "The reference implementation of the Pet Store Categories interface:\n"
        "GET and POST {base}/categories with bearer keys, validation, rate limits.\n"
        "The first line on stdout is the base URL it listens on.\n"
        "\n"
        "Listening:\n"
        "  --bind ADDR             address to listen on (default 127.0.0.1)\n"
        "  --port N                port, 0 = a free one (default 8080)\n"
        "  --base-path PATH        path prefix of the resource (default /v1)\n"
        "  --threads N             event loops, each accepting on the port (default 1)\n"
        "Keys and plans:\n"
        "  --keys-file FILE        lines 'KEY PLAN' or 'KEY enterprise PER_MINUTE PER_DAY', # "
        "comments\n"
        "                          (default DATADIR/" PS_DEFAULT_KEYS_FILE
        " when no --key/--keys-file is given)\n"
        "  --key KEY:PLAN          add a key (repeatable); KEY:enterprise:PER_MINUTE:PER_DAY for "
        "custom limits\n"
        "Data:\n"
        "  --data FILE             journal: every acknowledged create is synced here and reloaded "
        "at start\n"
        "  --seed FILE             categories loaded into an empty store (default "
        "DATADIR/" PS_DEFAULT_SEED_FILE ")\n"
        "  --no-seed               start empty\n"
        "Rate limits:\n"
        "  --time-scale N          windows and bans run N times faster (headers keep real times)\n"
        "  --ban-after N           refusals in one window before a temporary ban (default 100, 0 = "
        "never)\n"
        "  --ban-seconds S         ban length in seconds (default 600)\n"
        "  --limiter MODE          fixed (default), sliding-log, sliding-counter or token-bucket\n"
        "  --count-ops WHICH       operations the limits count: all (default), list or create\n"
        "  --count-errors yes|no   whether admitted requests answered 4xx count (default yes)\n"
        "Hardening:\n"
        "  --max-body SIZE         largest request body, larger gets 413 (default 64K)\n"
        "  --max-header-size SIZE  largest request line + headers, larger gets 431 (default 16K)\n"
        "  --max-buffered SIZE     request bytes (headers, bodies) held over all connections at "
        "once;\n"
        "                          a request that would go beyond gets 503 (default 256M)\n"
        "  --max-connections N     open connections; beyond it new ones are closed at once "
        "(default 20000)\n"
        "  --idle-timeout DUR      close keep-alive connections idle this long (default 60s)\n"
        "  --request-timeout DUR   a request must arrive completely within this (default 10s; 408 "
        "after)\n"
        "  --write-timeout DUR     a response must be taken by the client within this (default "
        "10s)\n"
        "  --drain-timeout DUR     on SIGINT/SIGTERM wait this long for in-flight requests "
        "(default 10s)\n"
        "Testing aids:\n"
        "  --fault NAME            deliberate deviation (repeatable); --list-faults prints them\n"
        "  --list-faults           print the fault names and descriptions, then exit\n"
        "  --delay SHARE:DURATION  delay that share of responses (0..1) by DURATION, e.g. 0.1:50ms "
        "(a timer, not a block)\n"
        "  --stall AT:LENGTH       at AT after start every event loop blocks for LENGTH, like a GC "
        "pause, e.g. 2s:1s\n"
        "Other:\n"
        "  --access-log FILE       one line per response, '-' for stderr\n"
        "  -h, --help              this text\n"
        "  --version               print the version and exit\n"
        "Durations take us, ms, s, m, h, d; sizes take K, M, G. Long flags may be\n"
        "abbreviated to a unique prefix (--max-conn); --flag=VALUE works too.\n"
        "DATADIR is $" PS_DATA_DIR_ENV
        " if set, else ../share/petstore-conform from the program's\n"
        "directory (as installed; a build tree mirrors it).\n"
        "Exit status: 0 after a graceful stop, 2 for usage errors (flags, keys file),\n"
        "1 when the server cannot start (seed file, journal, address in use, access log).\n",
        out);
}

static int split_pair(const char *value, char *left, size_t cap, const char **right, ps_error *err)
{
    const char *colon = strchr(value, ':');
    if (!colon || colon == value || !colon[1] || (size_t)(colon - value) >= cap)
        return ps_error_set(err, "'%s': expected two values separated by ':'", value);
    memcpy(left, value, (size_t)(colon - value));
    left[colon - value] = '\0';
    *right = colon + 1;
    return 0;
}

enum {
    OPT_BIND = 256,
    OPT_PORT,
    OPT_BASE_PATH,
    OPT_THREADS,
    OPT_KEYS_FILE,
    OPT_KEY,
    OPT_DATA,
    OPT_SEED,
    OPT_NO_SEED,
    OPT_MAX_BODY,
    OPT_MAX_HEADER_SIZE,
    OPT_MAX_BUFFERED,
    OPT_MAX_CONNECTIONS,
    OPT_IDLE_TIMEOUT,
    OPT_REQUEST_TIMEOUT,
    OPT_WRITE_TIMEOUT,
    OPT_DRAIN_TIMEOUT,
    OPT_TIME_SCALE,
    OPT_BAN_AFTER,
    OPT_BAN_SECONDS,
    OPT_FAULT,
    OPT_LIST_FAULTS,
    OPT_DELAY,
    OPT_STALL,
    OPT_ACCESS_LOG,
    OPT_VERSION,
    OPT_LIMITER,
    OPT_COUNT_OPS,
    OPT_COUNT_ERRORS,
};

static const struct option options[] = {
    {"bind", required_argument, NULL, OPT_BIND},
    {"port", required_argument, NULL, OPT_PORT},
    {"base-path", required_argument, NULL, OPT_BASE_PATH},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"keys-file", required_argument, NULL, OPT_KEYS_FILE},
    {"key", required_argument, NULL, OPT_KEY},
    {"data", required_argument, NULL, OPT_DATA},
    {"seed", required_argument, NULL, OPT_SEED},
    {"no-seed", no_argument, NULL, OPT_NO_SEED},
    {"max-body", required_argument, NULL, OPT_MAX_BODY},
    {"max-header-size", required_argument, NULL, OPT_MAX_HEADER_SIZE},
    {"max-buffered", required_argument, NULL, OPT_MAX_BUFFERED},
    {"max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS},
    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
    {"request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT},
    {"write-timeout", required_argument, NULL, OPT_WRITE_TIMEOUT},
    {"drain-timeout", required_argument, NULL, OPT_DRAIN_TIMEOUT},
    {"time-scale", required_argument, NULL, OPT_TIME_SCALE},
    {"ban-after", required_argument, NULL, OPT_BAN_AFTER},
    {"ban-seconds", required_argument, NULL, OPT_BAN_SECONDS},
    {"fault", required_argument, NULL, OPT_FAULT},
    {"list-faults", no_argument, NULL, OPT_LIST_FAULTS},
    {"delay", required_argument, NULL, OPT_DELAY},
    {"stall", required_argument, NULL, OPT_STALL},
    {"access-log", required_argument, NULL, OPT_ACCESS_LOG},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {"limiter", required_argument, NULL, OPT_LIMITER},
    {"count-ops", required_argument, NULL, OPT_COUNT_OPS},
    {"count-errors", required_argument, NULL, OPT_COUNT_ERRORS},
    {NULL, 0, NULL, 0},
};

/* --count-ops and --count-errors: one of a few words. */
static int parse_count_ops(const char *value, ps_count_ops *out, ps_error *err)
{
    static const char *const names[] = {"all", "list", "create"};
    for (int i = 0; i < 3; i++)
        if (strcmp(value, names[i]) == 0) {
            *out = (ps_count_ops)i;
            return 0;
        }
    return ps_error_set(err, "'%s': expected all, list or create", value);
}

static int parse_yes_no(const char *value, bool *out, ps_error *err)
{
    if (strcmp(value, "yes") == 0)
        *out = true;
    else if (strcmp(value, "no") == 0)
        *out = false;
    else
        return ps_error_set(err, "'%s': expected yes or no", value);
    return 0;
}

int ps_server_config_parse(int argc, char **argv, ps_server_config *cfg, FILE *out, ps_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->bind_addr = "127.0.0.1";
    cfg->port = 8080;
    cfg->base_path = "/v1";
    cfg->threads = 1;
    cfg->keys = ps_keyring_create();
    cfg->seed_path = NULL;
    cfg->max_body = 64 * 1024;
    cfg->max_header_bytes = 16 * 1024;
    cfg->max_buffered = 256 * 1024 * 1024;
    cfg->max_connections = 0; /* auto: 20000 or what RLIMIT_NOFILE allows */
    cfg->idle_timeout_ns = 60 * 1000000000LL;
    cfg->request_timeout_ns = 10 * 1000000000LL;
    cfg->write_timeout_ns = 10 * 1000000000LL;
    cfg->drain_timeout_ns = 10 * 1000000000LL;
    cfg->time_scale = 1;
    cfg->ban_after = 100;
    cfg->ban_seconds = 600;
    cfg->limiter = PS_RLM_FIXED;
    cfg->count_ops = PS_COUNT_ALL;
    cfg->count_errors = true;
    bool keys_given = false, seed_given = false, no_seed = false;
    const char *keys_file = NULL;

    ps_cli_getopt_reset();
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        const char *value = optarg;
        int64_t v;
        int rc = 0;
        switch (c) {
        case 'h':
            ps_server_config_usage(out);
            return 1;
        case OPT_VERSION:
            fputs("petstore-server " PS_VERSION "\n", out);
            return 1;
        case OPT_LIST_FAULTS:
            ps_fault_print_list(out);
            return 1;
        case OPT_NO_SEED:
            no_seed = true;
            break;
        case OPT_BIND: {
            unsigned char addr[16];
            if (inet_pton(AF_INET, value, addr) != 1 && inet_pton(AF_INET6, value, addr) != 1)
                rc = ps_error_set(err, "'%s' is not an IPv4 or IPv6 address", value);
            cfg->bind_addr = value;
            break;
        }
        case OPT_PORT:
            rc = ps_cli_parse_int(value, 0, 65535, &v, err);
            cfg->port = (int)v;
            break;
        case OPT_BASE_PATH: {
            size_t n = strlen(value);
            if (n > 0 && (value[0] != '/' || value[n - 1] == '/' || strpbrk(value, "?# ")))
                rc = ps_error_set(
                    err, "'%s' must start with '/' and not end with '/' (e.g. /v1), or be empty",
                    value);
            cfg->base_path = value;
            break;
        }
        case OPT_THREADS:
            rc = ps_cli_parse_int(value, 1, 256, &v, err);
            cfg->threads = (int)v;
            break;
        case OPT_KEYS_FILE:
            keys_file = value;
            keys_given = true;
            rc = ps_keyring_load_file(cfg->keys, value, err);
            break;
        case OPT_KEY:
            keys_given = true;
            rc = ps_keyring_add_flag(cfg->keys, value, err);
            break;
        case OPT_DATA:
            if (!*value) rc = ps_error_set(err, "expected a file name");
            cfg->data_path = value;
            break;
        case OPT_SEED:
            if (!*value) rc = ps_error_set(err, "expected a file name");
            cfg->seed_path = value;
            seed_given = true;
            break;
        case OPT_MAX_BODY:
            rc = ps_cli_parse_size(value, &cfg->max_body, err);
            if (!rc && (cfg->max_body < 1 || cfg->max_body > 1024LL * 1024 * 1024))
                rc = ps_error_set(err, "'%s' must be between 1 byte and 1G", value);
            break;
        case OPT_MAX_HEADER_SIZE:
            rc = ps_cli_parse_size(value, &cfg->max_header_bytes, err);
            if (!rc && (cfg->max_header_bytes < 256 || cfg->max_header_bytes > 1024 * 1024))
                rc = ps_error_set(err, "'%s' must be between 256 bytes and 1M", value);
            break;
        case OPT_MAX_BUFFERED:
            rc = ps_cli_parse_size(value, &cfg->max_buffered, err);
            if (!rc &&
                (cfg->max_buffered < 64 * 1024 || cfg->max_buffered > 64LL * 1024 * 1024 * 1024))
                rc = ps_error_set(err, "'%s' must be between 64K and 64G", value);
            break;
        case OPT_MAX_CONNECTIONS:
            rc = ps_cli_parse_int(value, 1, 10000000, &cfg->max_connections, err);
            break;
        case OPT_IDLE_TIMEOUT:
            rc = ps_cli_parse_duration(value, 0, &cfg->idle_timeout_ns, err);
            break;
        case OPT_REQUEST_TIMEOUT:
            rc = ps_cli_parse_duration(value, 0, &cfg->request_timeout_ns, err);
            break;
        case OPT_WRITE_TIMEOUT:
            rc = ps_cli_parse_duration(value, 0, &cfg->write_timeout_ns, err);
            break;
        case OPT_DRAIN_TIMEOUT:
            rc = ps_cli_parse_duration(value, 0, &cfg->drain_timeout_ns, err);
            break;
        case OPT_TIME_SCALE:
            rc = ps_cli_parse_double(value, 1, 1e6, &cfg->time_scale, err);
            break;
        case OPT_BAN_AFTER:
            rc = ps_cli_parse_int(value, 0, INT64_MAX / 4, &cfg->ban_after, err);
            break;
        case OPT_BAN_SECONDS:
            rc = ps_cli_parse_int(value, 1, 365LL * 86400, &cfg->ban_seconds, err);
            break;
        case OPT_FAULT:
            rc = ps_fault_enable(&cfg->faults, value, err);
            break;
        case OPT_LIMITER:
            rc = ps_rlm_algo_parse(value, &cfg->limiter, err);
            break;
        case OPT_COUNT_OPS:
            rc = parse_count_ops(value, &cfg->count_ops, err);
            break;
        case OPT_COUNT_ERRORS:
            rc = parse_yes_no(value, &cfg->count_errors, err);
            break;
        case OPT_DELAY: {
            char left[64];
            const char *right;
            rc = split_pair(value, left, sizeof left, &right, err);
            if (!rc) rc = ps_cli_parse_double(left, 0, 1, &cfg->delay_share, err);
            if (!rc) rc = ps_cli_parse_duration(right, 0, &cfg->delay_ns, err);
            break;
        }
        case OPT_STALL: {
            char left[64];
            const char *right;
            rc = split_pair(value, left, sizeof left, &right, err);
            if (!rc) rc = ps_cli_parse_duration(left, 1, &cfg->stall_at_ns, err);
            if (!rc) rc = ps_cli_parse_duration(right, 0, &cfg->stall_len_ns, err);
            break;
        }
        case OPT_ACCESS_LOG:
            if (!*value) rc = ps_error_set(err, "expected a file name or '-'");
            cfg->access_log = value;
            break;
        default: /* '?' or ':' */
            ps_cli_getopt_error(c, argc, argv, options, err);
            return 2;
        }
        if (rc != 0) {
            ps_error_prefix(err, "--%s: ", ps_cli_long_name(options, c));
            return 2;
        }
    }
    if (optind < argc) {
        ps_error_set(err, "unexpected argument '%s' (flags start with --)", argv[optind]);
        return 2;
    }
    (void)keys_file;
    if (!keys_given) {
        char *path = ps_data_path(PS_DEFAULT_KEYS_FILE);
        int lrc =
            path ? ps_keyring_load_file(cfg->keys, path, err)
                 : ps_error_set(err, "cannot locate the data directory (set " PS_DATA_DIR_ENV ")");
        free(path);
        if (lrc != 0) {
            ps_error_prefix(err, "no --key or --keys-file given and the default failed: ");
            return 2;
        }
    }
    if (ps_keyring_count(cfg->keys) == 0) {
        ps_error_set(err, "no API keys configured (--key KEY:PLAN or --keys-file FILE)");
        return 2;
    }
    if (no_seed) {
        cfg->seed_path = NULL;
    } else if (!seed_given) {
        char *path = ps_data_path(PS_DEFAULT_SEED_FILE);
        if (path && access(path, R_OK) == 0)
            cfg->seed_path = cfg->seed_default = path;
        else
            free(path);
    }
    return 0;
}

void ps_server_config_free(ps_server_config *cfg)
{
    ps_keyring_destroy(cfg->keys);
    cfg->keys = NULL;
    free(cfg->seed_default);
    cfg->seed_default = NULL;
}
