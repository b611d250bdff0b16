/* config.c - flags and environment of petstore-conform. */
#include "runner/config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cli.h"

static const char usage[] =
    "usage: petstore-conform --base-url URL [--api-key KEY] [--plan PLAN] [options]\n"
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
    "  --max-body SIZE     reply bytes kept and parsed (default 1M; a longer list is not judged)\n"
    "  --strict            HTTP-RFC checks (level http) fail the run instead of warning\n"
    "  --verbose           print every exchange (keys redacted) to stderr\n"
    "  --no-color          no colour on the console (also: NO_COLOR set)\n"
    "reports:\n"
    "  --json FILE         JSON report (docs/report-json.md)\n"
    "  --tap FILE          TAP 14\n"
    "  --junit FILE        JUnit XML\n"
    "  --html FILE         self-contained HTML report\n"
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
                                *p == ' ' ? "a space" : *p == '\n' || *p == '\r' ? "a line break"
                                : *p >= 0x7f ? "a non-ASCII byte" : "a control character",
                                (size_t)(p - (const unsigned char *)key));
    return 0;
}

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int ps_conform_config_parse(ps_conform_config *cfg, int argc, char **argv, ps_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->plan.id = PS_PLAN_UNKNOWN;
    cfg->limit_plan.id = PS_PLAN_UNKNOWN;
    cfg->max_wait_ns = 75LL * 1000000000;
    cfg->timeout_ns = 10LL * 1000000000;
    cfg->max_body = (size_t)1 << 20;
    bool plan_given = false, limit_plan_given = false;
    const char *plan_text = NULL, *limit_plan_text = NULL;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) break;
        if (strncmp(arg, "--", 2) != 0)
            return ps_error_set(err, "unexpected argument '%s' (flags start with --)", arg);
        /* --flag=value or --flag value */
        char name[64];
        const char *value = NULL;
        const char *eq = strchr(arg, '=');
        size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
        if (n >= sizeof name) return ps_error_set(err, "unknown flag '%s' (see --help)", arg);
        memcpy(name, arg, n);
        name[n] = '\0';
        if (eq) value = eq + 1;

        static const char *const booleans[] = {"--list", "--verbose", "--strict", "--help",
                                                "--version", "--no-color", "-h"};
        bool is_bool = false;
        for (size_t b = 0; b < sizeof booleans / sizeof booleans[0]; b++)
            if (strcmp(name, booleans[b]) == 0) is_bool = true;
        if (is_bool) {
            if (value) return ps_error_set(err, "flag %s takes no value", name);
            if (strcmp(name, "--list") == 0) cfg->list = true;
            else if (strcmp(name, "--verbose") == 0) cfg->verbose = true;
            else if (strcmp(name, "--strict") == 0) cfg->strict = true;
            else if (strcmp(name, "--version") == 0) cfg->version = true;
            else if (strcmp(name, "--no-color") == 0) cfg->no_color = true;
            else cfg->help = true;
            continue;
        }
        static const char *const valued[] = {"--base-url", "--api-key", "--plan", "--limit-key",
                                              "--limit-plan", "--only", "--skip", "--max-wait",
                                              "--timeout", "--json", "--tap", "--junit", "--html",
                                              "--cacert", "--max-body"};
        bool known = false;
        for (size_t v = 0; v < sizeof valued / sizeof valued[0]; v++)
            if (strcmp(name, valued[v]) == 0) known = true;
        if (!known) return ps_error_set(err, "unknown flag '%s' (see --help)", name);
        if (!value) {
            if (i + 1 >= argc) return ps_error_set(err, "flag %s needs a value", name);
            value = argv[++i];
        }
        if (!*value) return ps_error_set(err, "flag %s needs a non-empty value", name);

        if (strcmp(name, "--base-url") == 0) cfg->base_url = value;
        else if (strcmp(name, "--api-key") == 0) cfg->api_key = value;
        else if (strcmp(name, "--limit-key") == 0) cfg->limit_key = value;
        else if (strcmp(name, "--plan") == 0) plan_text = value, plan_given = true;
        else if (strcmp(name, "--limit-plan") == 0) limit_plan_text = value, limit_plan_given = true;
        else if (strcmp(name, "--only") == 0) cfg->only = value;
        else if (strcmp(name, "--skip") == 0) cfg->skip = value;
        else if (strcmp(name, "--json") == 0) cfg->json_path = value;
        else if (strcmp(name, "--tap") == 0) cfg->tap_path = value;
        else if (strcmp(name, "--junit") == 0) cfg->junit_path = value;
        else if (strcmp(name, "--html") == 0) cfg->html_path = value;
        else if (strcmp(name, "--max-body") == 0) {
            int64_t bytes;
            if (ps_cli_parse_size(value, &bytes, err) < 0) return ps_error_prefix(err, "--max-body: ");
            if (bytes < 1024 || bytes > ((int64_t)1 << 30))
                return ps_error_set(err, "--max-body: between 1K and 1G, got '%s'", value);
            cfg->max_body = (size_t)bytes;
        } else if (strcmp(name, "--cacert") == 0) {
            if (access(value, R_OK) != 0)
                return ps_error_set(err, "--cacert: cannot read '%s': %s", value, strerror(errno));
            cfg->ca_file = value;
        }
        else if (strcmp(name, "--max-wait") == 0) {
            if (ps_cli_parse_duration(value, 1, &cfg->max_wait_ns, err) < 0)
                return ps_error_prefix(err, "--max-wait: ");
        } else if (strcmp(name, "--timeout") == 0) {
            if (ps_cli_parse_duration(value, 0, &cfg->timeout_ns, err) < 0)
                return ps_error_prefix(err, "--timeout: ");
            if (cfg->timeout_ns < 1000000)
                return ps_error_set(err, "--timeout: at least 1ms, got '%s'", value);
        }
    }
    if (cfg->help || cfg->version || cfg->list) return 0;

    if (!cfg->base_url) cfg->base_url = env_nonempty("PETSTORE_BASE_URL");
    if (!cfg->api_key) cfg->api_key = env_nonempty("PETSTORE_API_KEY");
    if (!cfg->limit_key) cfg->limit_key = env_nonempty("PETSTORE_LIMIT_KEY");
    if (!cfg->base_url) return ps_error_set(err, "no target: give --base-url URL or set PETSTORE_BASE_URL");
    if (strncmp(cfg->base_url, "http://", 7) != 0 && strncmp(cfg->base_url, "https://", 8) != 0)
        return ps_error_set(err, "--base-url '%s' must start with http:// or https://", cfg->base_url);
    if (!cfg->api_key) return ps_error_set(err, "no API key: set PETSTORE_API_KEY (or give --api-key)");
    if (check_key(cfg->api_key, "the API key", err) < 0) return -1;
    if (cfg->limit_key && check_key(cfg->limit_key, "the limit key", err) < 0) return -1;
    if (plan_given && ps_plan_parse(plan_text, &cfg->plan, err) < 0) return ps_error_prefix(err, "--plan: ");
    if (limit_plan_given) {
        if (ps_plan_parse(limit_plan_text, &cfg->limit_plan, err) < 0)
            return ps_error_prefix(err, "--limit-plan: ");
        if (!cfg->limit_key)
            return ps_error_set(err, "--limit-plan needs a limit key (--limit-key or PETSTORE_LIMIT_KEY)");
    } else if (!cfg->limit_key || strcmp(cfg->limit_key, cfg->api_key) == 0) {
        cfg->limit_plan = cfg->plan;
    }
    cfg->limit_key_given = cfg->limit_key && strcmp(cfg->limit_key, cfg->api_key) != 0;
    if (!cfg->limit_key_given) cfg->limit_key = cfg->api_key;
    return 0;
}
