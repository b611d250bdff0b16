/* replay.c - petstore-conform replay FILE (see replay.h). */
#include "runner/replay.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "runner/client.h"
#include "runner/config.h"
#include "runner/gen_case.h"
#include "runner/gen_judge.h"

static const char usage[] =
    "usage: petstore-conform replay FILE [--base-url URL] [--api-key KEY] [--timeout DUR]\n"
    "                                    [--cacert FILE | --insecure]\n"
    "                                    [--cert FILE [--key FILE]] [--verbose]\n"
    "\n"
    "Sends the request a replay file holds (written by --replay-dir) and judges the\n"
    "answer again by the clause the file names. The key comes from PETSTORE_API_KEY\n"
    "(or --api-key); the file holds none. --base-url replaces the file's base URL.\n"
    "exit status: 0 the answer is now as the spec says, 1 the failure is still\n"
    "there, 2 usage error or a bad file, 3 no answer (or 429: nothing to judge).\n";

enum {
    OPT_BASE_URL = 256,
    OPT_API_KEY,
    OPT_TIMEOUT,
    OPT_CACERT,
    OPT_INSECURE,
    OPT_CERT,
    OPT_KEY,
    OPT_VERBOSE
};

static const struct option options[] = {
    {"base-url", required_argument, NULL, OPT_BASE_URL},
    {"api-key", required_argument, NULL, OPT_API_KEY},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"insecure", no_argument, NULL, OPT_INSECURE},
    {"cert", required_argument, NULL, OPT_CERT},
    {"key", required_argument, NULL, OPT_KEY},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef struct replay_args {
    const char *file, *base_url, *api_key;
    ps_tls_client_opts tls; /* as petstore-conform's */
    int64_t timeout_ns;
    bool verbose, help;
} replay_args;

static int parse(int argc, char **argv, replay_args *a, ps_error *err)
{
    memset(a, 0, sizeof *a);
    a->timeout_ns = 10LL * 1000000000;
    ps_cli_getopt_reset();
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        const char *v = optarg;
        switch (c) {
        case 'h':
            a->help = true;
            break;
        case OPT_BASE_URL:
            a->base_url = v;
            break;
        case OPT_API_KEY:
            a->api_key = v;
            break;
        case OPT_CACERT:
            a->tls.cacert = v;
            break;
        case OPT_INSECURE:
            a->tls.insecure = true;
            break;
        case OPT_CERT:
            a->tls.cert_file = v;
            break;
        case OPT_KEY:
            a->tls.key_file = v;
            break;
        case OPT_VERBOSE:
            a->verbose = true;
            break;
        case OPT_TIMEOUT:
            if (ps_cli_parse_duration(v, 0, &a->timeout_ns, err) < 0)
                return ps_error_prefix(err, "--timeout: ");
            if (a->timeout_ns < 1000000)
                return ps_error_set(err, "--timeout: at least 1ms, got '%s'", v);
            break;
        default:
            return ps_cli_getopt_error(c, argc, argv, options, err);
        }
    }
    if (a->help) return 0;
    if (optind + 1 != argc)
        return ps_error_set(err, "replay takes one FILE (a replay file written by --replay-dir)");
    a->file = argv[optind];
    if (!a->api_key) a->api_key = ps_cli_env("PETSTORE_API_KEY");
    if (!a->api_key)
        return ps_error_set(err, "no API key: set PETSTORE_API_KEY (or give --api-key)");
    for (const unsigned char *p = (const unsigned char *)a->api_key; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            return ps_error_set(err, "the API key contains a space, control or non-ASCII byte");
    return ps_conform_tls_check(&a->tls, err);
}

static void add_secret(void *ctx, const char *secret, const char *env)
{
    ps_client_add_secret(ctx, secret, env);
}

int ps_conform_replay_main(int argc, char **argv)
{
    replay_args a;
    ps_error err = {{0}};
    ps_gen_case gc;
    ps_gen_case_init(&gc);
    char *file_url = NULL, *unknown = NULL;
    ps_client *client = NULL;
    ps_exchange ex;
    memset(&ex, 0, sizeof ex);
    ps_gen_wire w;
    memset(&w, 0, sizeof w);
    int code = 2;
    if (parse(argc, argv, &a, &err) < 0) {
        code = ps_cli_usage_error(stderr, "petstore-conform replay", err.message);
        goto out;
    }
    if (a.help) {
        fputs(usage, stdout);
        code = 0;
        goto out;
    }
    if (ps_gen_replay_read(a.file, &gc, &file_url, &unknown, &err) < 0) {
        fprintf(stderr, "petstore-conform replay: %s\n", err.message);
        goto out;
    }
    const char *url = a.base_url ? a.base_url : file_url;
    client = ps_client_create(url, a.timeout_ns, a.verbose ? stderr : NULL, &err);
    if (!client) {
        fprintf(stderr, "petstore-conform replay: %s\n", err.message);
        goto out;
    }
    ps_client_set_tls(client, &a.tls);
    ps_client_add_secret(client, a.api_key, "PETSTORE_API_KEY");
    ps_gen_key_cases(a.api_key, add_secret, client);
    ps_gen_wire_build(&gc, a.api_key, unknown, &w);
    printf("replay: %s, %s\n  clause: %s\n", ps_check_def_get(gc.ck)->id, gc.probe, gc.clause);
    if (ps_client_perform_ex(client, &w.req, w.auth2, &ex) < 0) {
        printf("  request: %s\n  no answer: %s\n", ex.curl, ex.error);
        code = 3;
        goto out;
    }
    ps_gen_verdict v;
    ps_gen_judge(&gc, w.body.data ? w.body.data : "", w.body.len, &ex, &v);
    printf("  request: %s\n  answer: %ld\n", ex.curl, ex.status);
    if (v.outcome == PS_GEN_UNJUDGED) {
        printf("  NOT JUDGED: the service answered 429; try again after its Retry-After\n");
        code = 3;
    } else if (v.outcome == PS_GEN_FAIL) {
        size_t n;
        char *msg = ps_client_redact(client, v.message, strlen(v.message), &n);
        printf("  FAIL: %s\n  expected: %s\n", msg, v.expected);
        free(msg);
        code = 1;
    } else {
        printf("  PASS: the answer is as the clause says (%s)\n", v.expected);
        code = 0;
    }
out:
    ps_gen_wire_free(&w);
    ps_exchange_free(&ex);
    ps_client_destroy(client);
    ps_gen_case_free(&gc);
    free(file_url);
    free(unknown);
    return code;
}
