/* config.h - petstore-conform's configuration: command-line flags, with
 * PETSTORE_BASE_URL, PETSTORE_API_KEY and PETSTORE_LIMIT_KEY standing in for
 * --base-url, --api-key and --limit-key (so keys stay out of `ps`).
 *
 * Ownership: strings in ps_conform_config point into argv or the
 * environment (borrowed, never freed). ps_conform_config_parse returns 0, or
 * -1 with err naming the bad flag or value (the caller exits 2). */
#ifndef PS_RUNNER_CONFIG_H
#define PS_RUNNER_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cli.h"
#include "core/error.h"
#include "core/plan.h"
#include "core/tls_client.h"

typedef struct ps_conform_config {
    const char *base_url;
    const char *api_key;
    ps_plan plan;          /* PS_PLAN_UNKNOWN when --plan is not given */
    const char *limit_key; /* NULL: the main key (limit tests run last) */
    ps_plan limit_plan;    /* defaults to plan */
    bool limit_key_given;
    const char *only, *skip; /* comma lists, NULL = none */
    int64_t max_wait_ns;     /* longest wait for a rate-limit window */
    int64_t timeout_ns;      /* per request */
    int race_bursts; /* --race-bursts: limit bursts at fresh windows while none over-admits */
    ps_tls_client_opts tls; /* --cacert, --insecure, --cert, --key: every https connection's */
    size_t max_body;        /* --max-body: reply bytes kept and parsed */
    bool verbose, strict, list, help, version, quiet;
    ps_cli_color
        color; /* --color / --no-color; resolved with the environment by ps_cli_color_enabled */
    const char *json_path, *tap_path, *junit_path, *html_path;
    /* the generative phase (runner/suites/generate.c) */
    uint64_t seed; /* --seed; drawn at random unless seed_given */
    bool seed_given;
    unsigned examples;           /* --examples: generated requests at most */
    int64_t generate_time_ns;    /* --generate-time: the phase's time bound */
    unsigned create_budget;      /* --create-budget: categories the run may create */
    const char *replay_dir;      /* --replay-dir: where failures' replay files go (NULL: none) */
    const char *summary_md_path; /* --summary-md: GitHub-flavoured Markdown */
} ps_conform_config;

/* The defaults of the generative phase's bounds. */
#define PS_CONFORM_DEFAULT_EXAMPLES 200
#define PS_CONFORM_DEFAULT_GENERATE_TIME_S 20
#define PS_CONFORM_DEFAULT_CREATE_BUDGET 200

/* Fills cfg from argv and getenv. --help/--version/--list need no target. */
int ps_conform_config_parse(ps_conform_config *cfg, int argc, char **argv, ps_error *err);

/* --cert and --key load and belong together (core/tls_client.h), checked
 * before any request: a wrong file is a usage error (exit 2), not a run of
 * failed handshakes; --key alone is one too. The CA file is left to the
 * connection. Returns 0, or -1 with err (file names, never contents). */
int ps_conform_tls_check(const ps_tls_client_opts *tls, ps_error *err);

/* The usage text. */
const char *ps_conform_usage(void);

#endif
