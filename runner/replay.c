/* replay.c - petstore-conform replay FILE (see replay.h). */
#include "runner/replay.h"

#include <curl/curl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/cli.h"
#include "runner/client.h"
#include "runner/config.h"
#include "runner/gen_case.h"
#include "runner/gen_judge.h"

/* Appends s for a terminal, escaped (ps_buf_put_visible): text from a
 * replay file (or a reply) must not drive it. */
static void put_visible(ps_buf *b, const char *s)
{
    s = s ? s : "";
    ps_buf_put_visible(b, s, strlen(s), false);
}

/* Prints fmt with each %s argument made visible (put_visible). */
static void print_visible(FILE *f, const char *fmt, ...)
{
    ps_buf out = PS_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    for (const char *p = fmt; *p; p++) {
        if (p[0] == '%' && p[1] == 's') {
            put_visible(&out, va_arg(ap, const char *));
            p++;
        } else {
            ps_buf_putc(&out, *p);
        }
    }
    va_end(ap);
    fwrite(out.data ? out.data : "", 1, out.len, f);
    ps_buf_free(&out);
}

static const char usage[] =
    "usage: petstore-conform replay FILE [--base-url URL | --use-file-url] [--api-key KEY]\n"
    "                                    [--timeout DUR] [--cacert FILE | --insecure]\n"
    "                                    [--cert FILE [--key FILE]] [--verbose]\n"
    "\n"
    "Sends the request a replay file holds (written by --replay-dir) and judges the\n"
    "answer again by the clause the file names. The key comes from PETSTORE_API_KEY\n"
    "(or --api-key); the file holds none.\n"
    "\n"
    "The key goes only where you say: to --base-url URL (or PETSTORE_BASE_URL),\n"
    "never to the base URL the file names unless --use-file-url asks for it. The\n"
    "address must be http:// or https:// with no user:password@ part, and is\n"
    "printed before anything is sent. The file may be at most 1 MiB, and its\n"
    "authorization, content_type and unknown_key must be valid header values\n"
    "(no CR, LF, NUL or other control bytes); text from it is printed escaped.\n"
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
    OPT_VERBOSE,
    OPT_USE_FILE_URL
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
    {"use-file-url", no_argument, NULL, OPT_USE_FILE_URL},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef struct replay_args {
    const char *file, *base_url, *api_key;
    const char *url_from;   /* who named base_url: "--base-url", "PETSTORE_BASE_URL" */
    ps_tls_client_opts tls; /* as petstore-conform's */
    int64_t timeout_ns;
    bool verbose, help, use_file_url;
} replay_args;

/* Where a key may go: http or https, a host, and no userinfo, since
 * "http://127.0.0.1:P@127.0.0.2:P/v1" reads as localhost and is not. */
static int check_url(const char *url, const char *from, ps_error *err)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *user = NULL, *password = NULL, *host = NULL;
    int rc = -1;
    if (!u) abort();
    ps_buf shown = PS_BUF_INIT;
    put_visible(&shown, url);
    if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) {
        ps_error_set(err, "%s '%s' is not a URL", from, shown.data);
        goto out;
    }
    if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) {
        ps_error_set(err, "%s '%s': only http:// and https:// are sent to", from, shown.data);
        goto out;
    }
    if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host[0]) {
        ps_error_set(err, "%s '%s' names no host", from, shown.data);
        goto out;
    }
    if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
        curl_url_get(u, CURLUPART_PASSWORD, &password, 0) == CURLUE_OK) {
        ps_error_set(err,
                     "%s '%s' has a user:password@ part, which hides the host it names; "
                     "refused",
                     from, shown.data);
        goto out;
    }
    rc = 0;
out:
    curl_free(scheme);
    curl_free(user);
    curl_free(password);
    curl_free(host);
    curl_url_cleanup(u);
    ps_buf_free(&shown);
    return rc;
}

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
        case OPT_USE_FILE_URL:
            a->use_file_url = true;
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
    if (a->base_url && a->use_file_url)
        return ps_error_set(err, "--base-url and --use-file-url: give one");
    a->url_from = "--base-url";
    if (!a->base_url && !a->use_file_url) {
        a->base_url = ps_cli_env("PETSTORE_BASE_URL");
        a->url_from = "PETSTORE_BASE_URL";
    }
    if (a->base_url && check_url(a->base_url, a->url_from, err) < 0) return -1;
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
        ps_buf shown = PS_BUF_INIT;
        put_visible(&shown, err.message);
        code = ps_cli_usage_error(stderr, "petstore-conform replay", shown.data);
        ps_buf_free(&shown);
        goto out;
    }
    if (a.help) {
        fputs(usage, stdout);
        code = 0;
        goto out;
    }
    if (ps_gen_replay_read(a.file, &gc, &file_url, &unknown, &err) < 0) {
        print_visible(stderr, "petstore-conform replay: %s\n", err.message);
        goto out;
    }
    const char *url = a.base_url;
    if (!url && a.use_file_url) {
        if (check_url(file_url, "the file's base_url", &err) < 0) {
            print_visible(stderr, "petstore-conform replay: %s\n", err.message);
            goto out;
        }
        url = file_url;
        a.url_from = "the file, by --use-file-url";
    }
    if (!url) {
        print_visible(stderr,
                      "petstore-conform replay: the file names base_url '%s', but the key is "
                      "sent only where you say: give --base-url URL (or PETSTORE_BASE_URL), or "
                      "--use-file-url to send it there\n",
                      file_url);
        goto out;
    }
    client = ps_client_create(url, a.timeout_ns, a.verbose ? stderr : NULL, &err);
    if (!client) {
        print_visible(stderr, "petstore-conform replay: %s\n", err.message);
        goto out;
    }
    ps_client_set_tls(client, &a.tls);
    ps_client_add_secret(client, a.api_key, "PETSTORE_API_KEY");
    ps_gen_key_cases(a.api_key, add_secret, client);
    ps_gen_wire_build(&gc, a.api_key, unknown, &w);
    /* Said before anything is sent, so a surprise can still be stopped. */
    print_visible(stdout, "replay: sending to %s (from %s)\n", url, a.url_from);
    if (strcmp(url, file_url) != 0) print_visible(stdout, "  the file named %s\n", file_url);
    print_visible(stdout, "replay: %s, %s\n  clause: %s\n", ps_check_def_get(gc.ck)->id, gc.probe,
                  gc.clause);
    fflush(stdout);
    if (ps_client_perform_ex(client, &w.req, w.auth2, &ex) < 0) {
        print_visible(stdout, "  request: %s\n  no answer: %s\n", ex.curl, ex.error);
        code = 3;
        goto out;
    }
    ps_gen_verdict v;
    ps_gen_judge(&gc, w.body.data ? w.body.data : "", w.body.len, &ex, &v);
    print_visible(stdout, "  request: %s\n", ex.curl);
    printf("  answer: %ld\n", ex.status);
    if (v.outcome == PS_GEN_UNJUDGED) {
        printf("  NOT JUDGED: the service answered 429; try again after its Retry-After\n");
        code = 3;
    } else if (v.outcome == PS_GEN_FAIL) {
        size_t n;
        char *msg = ps_client_redact(client, v.message, strlen(v.message), &n);
        print_visible(stdout, "  FAIL: %s\n  expected: %s\n", msg, v.expected);
        free(msg);
        code = 1;
    } else {
        print_visible(stdout, "  PASS: the answer is as the clause says (%s)\n", v.expected);
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
