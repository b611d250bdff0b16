/* config.c - flags and environment of petstore-conform. */
#include "runner/config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cli.h"

/* Limit bursts of the default run (--race-bursts): the first crosses the
 * limit with 6 admitted and 6 refused at once, each repeat twice as many, so
 * a check-then-count race shows through a proxy's connection pool (the
 * crossing of 2 of old reached one upstream worker: nginx missed it 6 runs
 * of 6). Each repeat costs a window, so --max-wait bounds them: with minute
 * windows and the default 75 s, two bursts. Measured in
 * docs/conformance-checks.md ("The default run's race hunt"). */
#define DEFAULT_RACE_BURSTS 3

static const char usage[] =
    "usage: petstore-conform --base-url URL [--api-key KEY] [--plan PLAN] [options]\n"
    "       petstore-conform replay FILE [--base-url URL] [--api-key KEY] [--timeout DUR]\n"
    "\n"
    "Checks a Pet Store Categories service against its interface specification.\n"
    "\n"
    "target:\n"
    "  --base-url URL      base address ending in /v1 (env PETSTORE_BASE_URL)\n"
    "  --api-key KEY       API key (env PETSTORE_API_KEY; prefer it: flags show in ps)\n"
    "  --plan PLAN         plan of the key: free, pro, business, enterprise[:PER_MIN:PER_DAY]\n"
    "  --limit-key KEY     second key for the checks that exhaust a limit\n"
    "                      (env PETSTORE_LIMIT_KEY; default: the main key, those checks last)\n"
    "  --limit-plan PLAN   plan of the limit key (default: --plan)\n"
    "selection:\n"
    "  --list              print every check (id, level, tags, clause) and exit\n"
    "  --only LIST         run only checks matching ids, suites, tags or globs (comma list)\n"
    "  --skip LIST         leave out the matching checks\n"
    "behaviour:\n"
    "  --max-wait DUR      longest wait for a rate-limit window (default 75s)\n"
    "  --timeout DUR       per request (default 10s)\n"
    "  --cacert FILE       CA certificates (PEM) for an https:// target with a private CA\n"
    "  --insecure          https: do not verify the server's certificate or name\n"
    "  --cert FILE         https: client certificate (PEM chain) for a server that asks\n"
    "                      for one (mutual TLS); its key in FILE too, or with --key\n"
    "  --key FILE          https: the client certificate's private key (PEM, unencrypted)\n"
    "  --max-body SIZE     reply bytes kept and parsed (default 1M; a longer list is not judged)\n"
    "  --race-bursts N     the limit burst's race hunt: it crosses the limit with 12\n"
    "                      requests at once (6 refused; twice as many each repeat, up to\n"
    "                      96) and is sent up to N times (default 3), each at a fresh\n"
    "                      window, while none over-admits and the waits fit --max-wait\n"
    "                      (minute windows: a correct service costs about a minute more\n"
    "                      than N=1; docs/conformance-checks.md). 1: one burst crossing\n"
    "                      with 2 at once, one refused (provokes no ban; misses most races\n"
    "                      behind a proxy)\n"
    "  --strict            HTTP-RFC checks (level http) fail the run instead of warning\n"
    "generative phase:\n"
    "  --seed N            seed of the generated requests and the run's names (printed;\n"
    "                      the same seed sends the same requests byte for byte)\n"
    "  --examples N        generated requests at most (default 200; 0: no generation)\n"
    "  --generate-time DUR time bound of the generative phase (default 20s)\n"
    "  --create-budget N   categories the run may create (default 200; staging keeps them)\n"
    "  --replay-dir DIR    write each shrunk failure there as a replay file\n"
    "                      (petstore-conform replay FILE sends it again)\n"
    "  --verbose           print every exchange (keys redacted) to stderr\n"
    "  --quiet             no progress on stderr (a line per suite, each Retry-After wait)\n"
    "  --color WHEN        colour the console: auto (default), always or never;\n"
    "                      --color wins, then NO_COLOR (no), FORCE_COLOR (yes), TERM=dumb\n"
    "                      (no), else colour on a terminal; --no-color = --color=never\n"
    "reports:\n"
    "  --json FILE         JSON report (docs/report-json.md)\n"
    "  --tap FILE          TAP 13\n"
    "  --junit FILE        JUnit XML\n"
    "  --html FILE         self-contained HTML report\n"
    "  --summary-md FILE   Markdown summary for a CI job page ($GITHUB_STEP_SUMMARY)\n"
    "other:\n"
    "  -h, --help          this text\n"
    "  --version           print the version and exit\n"
    "Long flags may be abbreviated to a unique prefix; --flag=VALUE works too.\n"
    "\n"
    "exit status: 0 all checks passed, 1 a check failed, 2 usage or configuration\n"
    "error, 3 the target could not be reached, the run was aborted, or it was\n"
    "incomplete (no check failed, but some could not be tested: e.g. a 429 asked\n"
    "for a wait beyond --max-wait).\n";

const char *ps_conform_usage(void)
{
    return usage;
}

/* A bearer token is visible ASCII (RFC 6750 b64token is narrower still); a
 * space, newline or control byte, typically from a secrets file, would
 * break or inject header lines. */
static int check_key(const char *key, const char *what, ps_error *err)
{
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            return ps_error_set(err, "%s contains %s at position %zu (a trailing newline?)", what,
                                *p == ' '                  ? "a space"
                                : *p == '\n' || *p == '\r' ? "a line break"
                                : *p >= 0x7f               ? "a non-ASCII byte"
                                                           : "a control character",
                                (size_t)(p - (const unsigned char *)key));
    return 0;
}

enum {
    OPT_BASE_URL = 256,
    OPT_API_KEY,
    OPT_PLAN,
    OPT_LIMIT_KEY,
    OPT_LIMIT_PLAN,
    OPT_LIST,
    OPT_ONLY,
    OPT_SKIP,
    OPT_MAX_WAIT,
    OPT_TIMEOUT,
    OPT_CACERT,
    OPT_MAX_BODY,
    OPT_STRICT,
    OPT_VERBOSE,
    OPT_QUIET,
    OPT_COLOR,
    OPT_NO_COLOR,
    OPT_JSON,
    OPT_TAP,
    OPT_JUNIT,
    OPT_HTML,
    OPT_SUMMARY_MD,
    OPT_VERSION,
    OPT_SEED,
    OPT_EXAMPLES,
    OPT_GENERATE_TIME,
    OPT_CREATE_BUDGET,
    OPT_REPLAY_DIR,
    OPT_INSECURE,
    OPT_CERT,
    OPT_KEY,
    OPT_RACE_BURSTS,
};

static const struct option options[] = {
    {"base-url", required_argument, NULL, OPT_BASE_URL},
    {"api-key", required_argument, NULL, OPT_API_KEY},
    {"plan", required_argument, NULL, OPT_PLAN},
    {"limit-key", required_argument, NULL, OPT_LIMIT_KEY},
    {"limit-plan", required_argument, NULL, OPT_LIMIT_PLAN},
    {"list", no_argument, NULL, OPT_LIST},
    {"only", required_argument, NULL, OPT_ONLY},
    {"skip", required_argument, NULL, OPT_SKIP},
    {"max-wait", required_argument, NULL, OPT_MAX_WAIT},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"insecure", no_argument, NULL, OPT_INSECURE},
    {"cert", required_argument, NULL, OPT_CERT},
    {"key", required_argument, NULL, OPT_KEY},
    {"race-bursts", required_argument, NULL, OPT_RACE_BURSTS},
    {"max-body", required_argument, NULL, OPT_MAX_BODY},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"color", required_argument, NULL, OPT_COLOR},
    {"no-color", no_argument, NULL, OPT_NO_COLOR},
    {"json", required_argument, NULL, OPT_JSON},
    {"tap", required_argument, NULL, OPT_TAP},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"html", required_argument, NULL, OPT_HTML},
    {"summary-md", required_argument, NULL, OPT_SUMMARY_MD},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {"seed", required_argument, NULL, OPT_SEED},
    {"examples", required_argument, NULL, OPT_EXAMPLES},
    {"generate-time", required_argument, NULL, OPT_GENERATE_TIME},
    {"create-budget", required_argument, NULL, OPT_CREATE_BUDGET},
    {"replay-dir", required_argument, NULL, OPT_REPLAY_DIR},
    {NULL, 0, NULL, 0},
};

int ps_conform_tls_check(const ps_tls_client_opts *tls, ps_error *err)
{
    if (tls->key_file && !tls->cert_file) return ps_error_set(err, "--key needs --cert FILE");
    if (!tls->cert_file) return 0;
    ps_tls_client_opts only_cert = {
        .insecure = true, .cert_file = tls->cert_file, .key_file = tls->key_file};
    return ps_tls_client_opts_check(&only_cert, err);
}

int ps_conform_config_parse(ps_conform_config *cfg, int argc, char **argv, ps_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->plan.id = PS_PLAN_UNKNOWN;
    cfg->limit_plan.id = PS_PLAN_UNKNOWN;
    cfg->max_wait_ns = 75LL * 1000000000;
    cfg->timeout_ns = 10LL * 1000000000;
    cfg->max_body = (size_t)1 << 20;
    cfg->race_bursts = DEFAULT_RACE_BURSTS;
    cfg->examples = PS_CONFORM_DEFAULT_EXAMPLES;
    cfg->generate_time_ns = PS_CONFORM_DEFAULT_GENERATE_TIME_S * 1000000000LL;
    cfg->create_budget = PS_CONFORM_DEFAULT_CREATE_BUDGET;
    bool plan_given = false, limit_plan_given = false;
    const char *plan_text = NULL, *limit_plan_text = NULL;

    ps_cli_getopt_reset();
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        const char *value = optarg;
        if (value && !*value && c != OPT_COLOR)
            return ps_error_set(err, "--%s: needs a non-empty value", ps_cli_long_name(options, c));
        switch (c) {
        case 'h':
            cfg->help = true;
            break;
        case OPT_VERSION:
            cfg->version = true;
            break;
        case OPT_LIST:
            cfg->list = true;
            break;
        case OPT_VERBOSE:
            cfg->verbose = true;
            break;
        case OPT_STRICT:
            cfg->strict = true;
            break;
        case OPT_QUIET:
            cfg->quiet = true;
            break;
        case OPT_NO_COLOR:
            cfg->color = PS_CLI_COLOR_NEVER;
            break;
        case OPT_COLOR:
            if (ps_cli_parse_color(value, &cfg->color, err) < 0)
                return ps_error_prefix(err, "--color: ");
            break;
        case OPT_BASE_URL:
            cfg->base_url = value;
            break;
        case OPT_API_KEY:
            cfg->api_key = value;
            break;
        case OPT_LIMIT_KEY:
            cfg->limit_key = value;
            break;
        case OPT_PLAN:
            plan_text = value, plan_given = true;
            break;
        case OPT_LIMIT_PLAN:
            limit_plan_text = value, limit_plan_given = true;
            break;
        case OPT_ONLY:
            cfg->only = value;
            break;
        case OPT_SKIP:
            cfg->skip = value;
            break;
        case OPT_JSON:
            cfg->json_path = value;
            break;
        case OPT_TAP:
            cfg->tap_path = value;
            break;
        case OPT_JUNIT:
            cfg->junit_path = value;
            break;
        case OPT_HTML:
            cfg->html_path = value;
            break;
        case OPT_SUMMARY_MD:
            cfg->summary_md_path = value;
            break;
        case OPT_MAX_BODY: {
            int64_t bytes;
            if (ps_cli_parse_size(value, &bytes, err) < 0)
                return ps_error_prefix(err, "--max-body: ");
            if (bytes < 1024 || bytes > ((int64_t)1 << 30))
                return ps_error_set(err, "--max-body: between 1K and 1G, got '%s'", value);
            cfg->max_body = (size_t)bytes;
            break;
        }
        case OPT_CACERT:
            if (access(value, R_OK) != 0)
                return ps_error_set(err, "--cacert: cannot read '%s': %s", value, strerror(errno));
            cfg->tls.cacert = value;
            break;
        case OPT_INSECURE:
            cfg->tls.insecure = true;
            break;
        case OPT_CERT:
            cfg->tls.cert_file = value;
            break;
        case OPT_KEY:
            cfg->tls.key_file = value;
            break;
        case OPT_MAX_WAIT:
            if (ps_cli_parse_duration(value, 1, &cfg->max_wait_ns, err) < 0)
                return ps_error_prefix(err, "--max-wait: ");
            break;
        case OPT_TIMEOUT:
            if (ps_cli_parse_duration(value, 0, &cfg->timeout_ns, err) < 0)
                return ps_error_prefix(err, "--timeout: ");
            if (cfg->timeout_ns < 1000000)
                return ps_error_set(err, "--timeout: at least 1ms, got '%s'", value);
            break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(value, &end, 10);
            if (errno || *end || !isdigit((unsigned char)*value))
                return ps_error_set(err, "--seed: expected a decimal integer below 2^64, got '%s'",
                                    value);
            cfg->seed = v;
            cfg->seed_given = true;
            break;
        }
        case OPT_RACE_BURSTS: {
            int64_t v;
            if (ps_cli_parse_int(value, 1, 20, &v, err) < 0)
                return ps_error_prefix(err, "--race-bursts: ");
            cfg->race_bursts = (int)v;
            break;
        }
        case OPT_EXAMPLES:
        case OPT_CREATE_BUDGET: {
            int64_t v;
            if (ps_cli_parse_int(value, 0, 100000, &v, err) < 0)
                return ps_error_prefix(err, "--%s: ", ps_cli_long_name(options, c));
            if (c == OPT_EXAMPLES)
                cfg->examples = (unsigned)v;
            else
                cfg->create_budget = (unsigned)v;
            break;
        }
        case OPT_GENERATE_TIME:
            /* 0 bounds nothing: --examples 0 is how generation is skipped */
            if (ps_cli_parse_duration(value, 0, &cfg->generate_time_ns, err) < 0)
                return ps_error_prefix(err, "--generate-time: ");
            break;
        case OPT_REPLAY_DIR:
            if (access(value, W_OK) != 0)
                return ps_error_set(err, "--replay-dir: cannot write into '%s': %s", value,
                                    strerror(errno));
            cfg->replay_dir = value;
            break;
        default: /* '?' or ':' */
            return ps_cli_getopt_error(c, argc, argv, options, err);
        }
    }
    if (optind < argc)
        return ps_error_set(err, "unexpected argument '%s' (flags start with --)", argv[optind]);
    if (cfg->help || cfg->version || cfg->list) return 0;

    if (!cfg->base_url) cfg->base_url = ps_cli_env("PETSTORE_BASE_URL");
    if (!cfg->api_key) cfg->api_key = ps_cli_env("PETSTORE_API_KEY");
    if (!cfg->limit_key) cfg->limit_key = ps_cli_env("PETSTORE_LIMIT_KEY");
    if (!cfg->base_url)
        return ps_error_set(err, "no target: give --base-url URL or set PETSTORE_BASE_URL");
    if (strncmp(cfg->base_url, "http://", 7) != 0 && strncmp(cfg->base_url, "https://", 8) != 0)
        return ps_error_set(err, "--base-url '%s' must start with http:// or https://",
                            cfg->base_url);
    if (!cfg->api_key)
        return ps_error_set(err, "no API key: set PETSTORE_API_KEY (or give --api-key)");
    if (check_key(cfg->api_key, "the API key", err) < 0) return -1;
    if (cfg->limit_key && check_key(cfg->limit_key, "the limit key", err) < 0) return -1;
    if (plan_given && ps_plan_parse(plan_text, &cfg->plan, err) < 0)
        return ps_error_prefix(err, "--plan: ");
    if (limit_plan_given) {
        if (ps_plan_parse(limit_plan_text, &cfg->limit_plan, err) < 0)
            return ps_error_prefix(err, "--limit-plan: ");
        if (!cfg->limit_key)
            return ps_error_set(
                err, "--limit-plan needs a limit key (--limit-key or PETSTORE_LIMIT_KEY)");
    } else {
        cfg->limit_plan = cfg->plan; /* as --help says, a limit key of its own included */
    }
    cfg->limit_key_given = cfg->limit_key && strcmp(cfg->limit_key, cfg->api_key) != 0;
    if (!cfg->limit_key_given) cfg->limit_key = cfg->api_key;
    return ps_conform_tls_check(&cfg->tls, err);
}
