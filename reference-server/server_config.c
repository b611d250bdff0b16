/* server_config.c - flag parsing for petstore-server. */
#include "reference-server/server_config.h"

#include <arpa/inet.h>
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
    fputs("usage: petstore-server [options]\n"
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
          "  --keys-file FILE        lines 'KEY PLAN' or 'KEY enterprise PER_MINUTE PER_DAY', # comments\n"
          "                          (default DATADIR/" PS_DEFAULT_KEYS_FILE " when no --key/--keys-file is given)\n"
          "  --key KEY:PLAN          add a key (repeatable); KEY:enterprise:PER_MINUTE:PER_DAY for custom limits\n"
          "Data:\n"
          "  --data FILE             journal: every acknowledged create is synced here and reloaded at start\n"
          "  --seed FILE             categories loaded into an empty store (default DATADIR/" PS_DEFAULT_SEED_FILE ")\n"
          "  --no-seed               start empty\n"
          "Rate limits:\n"
          "  --time-scale N          windows and bans run N times faster (headers keep real times)\n"
          "  --ban-after N           refusals in one window before a temporary ban (default 100, 0 = never)\n"
          "  --ban-seconds S         ban length in seconds (default 600)\n"
          "  --limiter MODE          fixed (default), sliding-log, sliding-counter or token-bucket\n"
          "  --count-ops WHICH       operations the limits count: all (default), list or create\n"
          "  --count-errors yes|no   whether admitted requests answered 4xx count (default yes)\n"
          "Hardening:\n"
          "  --max-body SIZE         largest request body, larger gets 413 (default 64K)\n"
          "  --max-header-size SIZE  largest request line + headers, larger gets 431 (default 16K)\n"
          "  --max-buffered SIZE     request bytes (headers, bodies) held over all connections at once;\n"
          "                          a request that would go beyond gets 503 (default 256M)\n"
          "  --max-connections N     open connections; beyond it new ones are closed at once (default 20000)\n"
          "  --idle-timeout DUR      close keep-alive connections idle this long (default 60s)\n"
          "  --request-timeout DUR   a request must arrive completely within this (default 10s; 408 after)\n"
          "  --write-timeout DUR     a response must be taken by the client within this (default 10s)\n"
          "  --drain-timeout DUR     on SIGINT/SIGTERM wait this long for in-flight requests (default 10s)\n"
          "Testing aids:\n"
          "  --fault NAME            deliberate deviation (repeatable); --list-faults prints them\n"
          "  --list-faults           print the fault names and descriptions, then exit\n"
          "  --delay SHARE:DURATION  delay that share of responses (0..1) by DURATION, e.g. 0.1:50ms (a timer, not a block)\n"
          "  --stall AT:LENGTH       at AT after start every event loop blocks for LENGTH, like a GC pause, e.g. 2s:1s\n"
          "Other:\n"
          "  --access-log FILE       one line per response, '-' for stderr\n"
          "  --help                  this text\n"
          "  --version               print the version and exit\n"
          "Durations take us, ms, s, m, h, d; sizes take K, M, G.\n"
          "DATADIR is $" PS_DATA_DIR_ENV " if set, else ../share/petstore-conform from the program's\n"
          "directory (as installed; a build tree mirrors it).\n"
          "Exit status: 0 after a graceful stop, 2 for usage errors (flags, keys file),\n"
          "1 when the server cannot start (seed file, journal, address in use, access log).\n",
          out);
}

static int split_pair(const char *flag, const char *value, char *left, size_t cap, const char **right,
                      ps_error *err)
{
    const char *colon = strchr(value, ':');
    if (!colon || colon == value || !colon[1] || (size_t)(colon - value) >= cap)
        return ps_error_set(err, "%s '%s': expected two values separated by ':'", flag, value);
    memcpy(left, value, (size_t)(colon - value));
    left[colon - value] = '\0';
    *right = colon + 1;
    return 0;
}

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
    if (strcmp(value, "yes") == 0) *out = true;
    else if (strcmp(value, "no") == 0) *out = false;
    else return ps_error_set(err, "'%s': expected yes or no", value);
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
    cfg->limiter = PS_LIMITER_FIXED;
    cfg->count_ops = PS_COUNT_ALL;
    cfg->count_errors = true;
    bool keys_given = false, seed_given = false, no_seed = false;
    const char *keys_file = NULL;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            ps_server_config_usage(out);
            return 1;
        }
        if (strcmp(arg, "--version") == 0) {
            fputs("petstore-server " PS_VERSION "\n", out);
            return 1;
        }
        if (strcmp(arg, "--list-faults") == 0) {
            ps_fault_print_list(out);
            return 1;
        }
        if (strcmp(arg, "--no-seed") == 0) {
            no_seed = true;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0) {
            ps_error_set(err, "unexpected argument '%s' (flags start with --; see --help)", arg);
            return 2;
        }
        /* --flag VALUE or --flag=VALUE */
        char name[64];
        const char *value;
        const char *eq = strchr(arg, '=');
        if (eq) {
            size_t n = (size_t)(eq - arg);
            if (n >= sizeof name) n = sizeof name - 1;
            memcpy(name, arg, n);
            name[n] = '\0';
            value = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", arg);
            if (i + 1 >= argc) {
                bool known = strstr(" --bind --port --base-path --threads --keys-file --key --data --seed "
                                    "--max-body --max-header-size --max-buffered --max-connections --idle-timeout "
                                    "--request-timeout --write-timeout --drain-timeout --time-scale "
                                    "--ban-after --ban-seconds --fault --delay --stall --access-log --limiter "
                                    "--count-ops --count-errors ",
                                    name) != NULL;
                if (known) ps_error_set(err, "%s needs a value", name);
                else ps_error_set(err, "unknown flag '%s' (see --help)", name);
                return 2;
            }
            value = argv[++i];
        }
        int64_t v;
        int rc = 0;
        if (strcmp(name, "--bind") == 0) {
            unsigned char addr[16];
            if (inet_pton(AF_INET, value, addr) != 1 && inet_pton(AF_INET6, value, addr) != 1)
                rc = ps_error_set(err, "'%s' is not an IPv4 or IPv6 address", value);
            cfg->bind_addr = value;
        } else if (strcmp(name, "--port") == 0) {
            rc = ps_cli_parse_int(value, 0, 65535, &v, err);
            cfg->port = (int)v;
        } else if (strcmp(name, "--base-path") == 0) {
            size_t n = strlen(value);
            if (n > 0 && (value[0] != '/' || value[n - 1] == '/' || strpbrk(value, "?# ")))
                rc = ps_error_set(err, "'%s' must start with '/' and not end with '/' (e.g. /v1), or be empty",
                                  value);
            cfg->base_path = value;
        } else if (strcmp(name, "--threads") == 0) {
            rc = ps_cli_parse_int(value, 1, 256, &v, err);
            cfg->threads = (int)v;
        } else if (strcmp(name, "--keys-file") == 0) {
            keys_file = value;
            keys_given = true;
            if (ps_keyring_load_file(cfg->keys, value, err) != 0) return 2;
        } else if (strcmp(name, "--key") == 0) {
            keys_given = true;
            if (ps_keyring_add_flag(cfg->keys, value, err) != 0) return 2;
        } else if (strcmp(name, "--data") == 0) {
            if (!*value) rc = ps_error_set(err, "expected a file name");
            cfg->data_path = value;
        } else if (strcmp(name, "--seed") == 0) {
            if (!*value) rc = ps_error_set(err, "expected a file name");
            cfg->seed_path = value;
            seed_given = true;
        } else if (strcmp(name, "--max-body") == 0) {
            rc = ps_cli_parse_size(value, &cfg->max_body, err);
            if (!rc && (cfg->max_body < 1 || cfg->max_body > 1024LL * 1024 * 1024))
                rc = ps_error_set(err, "'%s' must be between 1 byte and 1G", value);
        } else if (strcmp(name, "--max-header-size") == 0) {
            rc = ps_cli_parse_size(value, &cfg->max_header_bytes, err);
            if (!rc && (cfg->max_header_bytes < 256 || cfg->max_header_bytes > 1024 * 1024))
                rc = ps_error_set(err, "'%s' must be between 256 bytes and 1M", value);
        } else if (strcmp(name, "--max-buffered") == 0) {
            rc = ps_cli_parse_size(value, &cfg->max_buffered, err);
            if (!rc && (cfg->max_buffered < 64 * 1024 || cfg->max_buffered > 64LL * 1024 * 1024 * 1024))
                rc = ps_error_set(err, "'%s' must be between 64K and 64G", value);
        } else if (strcmp(name, "--max-connections") == 0) {
            rc = ps_cli_parse_int(value, 1, 10000000, &cfg->max_connections, err);
        } else if (strcmp(name, "--idle-timeout") == 0) {
            rc = ps_cli_parse_duration(value, 0, &cfg->idle_timeout_ns, err);
        } else if (strcmp(name, "--request-timeout") == 0) {
            rc = ps_cli_parse_duration(value, 0, &cfg->request_timeout_ns, err);
        } else if (strcmp(name, "--write-timeout") == 0) {
            rc = ps_cli_parse_duration(value, 0, &cfg->write_timeout_ns, err);
        } else if (strcmp(name, "--drain-timeout") == 0) {
            rc = ps_cli_parse_duration(value, 0, &cfg->drain_timeout_ns, err);
        } else if (strcmp(name, "--time-scale") == 0) {
            rc = ps_cli_parse_double(value, 1, 1e6, &cfg->time_scale, err);
        } else if (strcmp(name, "--ban-after") == 0) {
            rc = ps_cli_parse_int(value, 0, INT64_MAX / 4, &cfg->ban_after, err);
        } else if (strcmp(name, "--ban-seconds") == 0) {
            rc = ps_cli_parse_int(value, 1, 365LL * 86400, &cfg->ban_seconds, err);
        } else if (strcmp(name, "--fault") == 0) {
            rc = ps_fault_enable(&cfg->faults, value, err);
        } else if (strcmp(name, "--limiter") == 0) {
            rc = ps_limiter_mode_parse(value, &cfg->limiter, err);
        } else if (strcmp(name, "--count-ops") == 0) {
            rc = parse_count_ops(value, &cfg->count_ops, err);
        } else if (strcmp(name, "--count-errors") == 0) {
            rc = parse_yes_no(value, &cfg->count_errors, err);
        } else if (strcmp(name, "--delay") == 0) {
            char left[64];
            const char *right;
            rc = split_pair(name, value, left, sizeof left, &right, err);
            if (!rc) rc = ps_cli_parse_double(left, 0, 1, &cfg->delay_share, err);
            if (!rc) rc = ps_cli_parse_duration(right, 0, &cfg->delay_ns, err);
        } else if (strcmp(name, "--stall") == 0) {
            char left[64];
            const char *right;
            rc = split_pair(name, value, left, sizeof left, &right, err);
            if (!rc) rc = ps_cli_parse_duration(left, 1, &cfg->stall_at_ns, err);
            if (!rc) rc = ps_cli_parse_duration(right, 0, &cfg->stall_len_ns, err);
        } else if (strcmp(name, "--access-log") == 0) {
            if (!*value) rc = ps_error_set(err, "expected a file name or '-'");
            cfg->access_log = value;
        } else {
            ps_error_set(err, "unknown flag '%s' (see --help)", name);
            return 2;
        }
        if (rc != 0) {
            ps_error_prefix(err, "%s: ", name);
            return 2;
        }
    }
    (void)keys_file;
    if (!keys_given) {
        char *path = ps_data_path(PS_DEFAULT_KEYS_FILE);
        int lrc = path ? ps_keyring_load_file(cfg->keys, path, err)
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
        if (path && access(path, R_OK) == 0) cfg->seed_path = cfg->seed_default = path;
        else free(path);
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
