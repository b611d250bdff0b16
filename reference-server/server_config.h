/* server_config.h - the command line of petstore-server: flags, their
 * defaults, and the messages that name a bad flag or file line. */
#ifndef PS_SERVER_CONFIG_H
#define PS_SERVER_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "reference-server/auth.h"
#include "reference-server/faults.h"
#include "reference-server/limiter.h"

/* Which operations the rate limits count (--count-ops). */
typedef enum ps_count_ops {
    PS_COUNT_ALL,    /* every request, whatever it asks */
    PS_COUNT_LIST,   /* only listCategories (GET/HEAD {base}/categories) */
    PS_COUNT_CREATE, /* only createCategory (POST {base}/categories) */
} ps_count_ops;

typedef struct ps_server_config {
    const char *bind_addr;    /* default 127.0.0.1 */
    int port;                 /* 0 = a free port */
    const char *base_path;    /* default "/v1", no trailing slash ("" allowed) */
    int threads;              /* event loops, default 1 */
    ps_keyring *keys;         /* owned */
    const char *data_path;    /* journal, NULL = memory only */
    const char *seed_path;    /* NULL = no seed */
    char *seed_default;       /* owned: DATADIR/seed-categories.json when it is the seed */
    int64_t max_body;         /* bytes, default 64 KiB */
    int64_t max_header_bytes; /* request line + headers, default 16 KiB */
    int64_t max_buffered;     /* request bytes buffered over all connections, default 256 MiB */
    int64_t max_connections;  /* 0 = auto: 20000 or what RLIMIT_NOFILE allows */
    int64_t idle_timeout_ns;  /* keep-alive idle, default 60 s */
    int64_t
        request_timeout_ns; /* whole request (headers and body) must arrive within, default 10 s */
    int64_t write_timeout_ns; /* a response must drain within, default 10 s */
    int64_t drain_timeout_ns; /* graceful stop waits at most this for in-flight requests, default 10
                                 s */
    double time_scale;        /* >= 1 */
    int64_t ban_after;        /* refusals in one window before a ban (0 = never) */
    int64_t ban_seconds;
    ps_limiter_mode limiter; /* --limiter, default fixed */
    ps_count_ops count_ops;  /* --count-ops, default all */
    bool count_errors;       /* --count-errors, default yes: 4xx answers count */
    ps_fault_set faults;
    double delay_share; /* --delay SHARE:DURATION */
    int64_t delay_ns;
    int64_t stall_at_ns; /* --stall AT:LENGTH (0 length = none) */
    int64_t stall_len_ns;
    const char *access_log; /* NULL none, "-" stderr */
} ps_server_config;

/* Parses argv into cfg (defaults first). Returns 0 to run, 1 when a
 * request was fully served (--help, --version, --list-faults: exit 0), 2 for a usage
 * error with err naming the flag or file line. out receives --help/--list. */
int ps_server_config_parse(int argc, char **argv, ps_server_config *cfg, FILE *out, ps_error *err);
void ps_server_config_free(ps_server_config *cfg);

/* The --help text. */
void ps_server_config_usage(FILE *out);

#endif
