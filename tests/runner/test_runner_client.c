/* test_runner_client.c - evidence never shows a key: redaction of the
 * recorded request, and a curl line that a shell turns back into exactly the
 * request sent (key from $PETSTORE_API_KEY, hostile bytes inert). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "runner/client.h"

#define KEY "s3cret-Key'$x"

static void redaction_replaces_every_secret(void)
{
    ps_error err;
    ps_client *c = ps_client_create("http://127.0.0.1:1/v1/", 1000000000LL, NULL, &err);
    CHECK(c != NULL);
    ps_client_add_secret(c, KEY, "PETSTORE_API_KEY");
    ps_client_add_secret(c, "other", "PETSTORE_LIMIT_KEY");
    ps_client_add_secret(c, "", "IGNORED");
    const char *text = "Bearer " KEY " and other and " KEY;
    size_t n;
    char *r = ps_client_redact(c, text, strlen(text), &n);
    CHECK_STR(r, "Bearer *** and *** and ***");
    CHECK_INT(n, strlen(r));
    free(r);
    CHECK_STR(ps_client_base_url(c), "http://127.0.0.1:1/v1");
    ps_client_destroy(c);
    CHECK(ps_client_create("ftp://x/v1", 1000000000LL, NULL, &err) == NULL);
    CHECK(strstr(err.message, "http://") != NULL);
}

/* A service may echo a key, or one of the near misses the auth suite
 * sends: the key less its last character, the key with a character added.
 * Both are redacted, as is a long piece of a key's beginning that ends the
 * text (a reply cut short by --max-body); a short secret only whole. */
static void redaction_catches_near_misses(void)
{
    ps_error err;
    ps_client *c = ps_client_create("http://127.0.0.1:1/v1", 1000000000LL, NULL, &err);
    ps_client_add_secret(c, KEY, "PETSTORE_API_KEY");
    ps_client_add_secret(c, "short", "PETSTORE_LIMIT_KEY");
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"[" KEY "]", "[***]"},
        {"key=s3cret-Key'$ (less one)", "key=*** (less one)"},
        {"key=" KEY "Z!", "key=***Z!"},
        {"Xs3cret-Key'$x", "X***"},
        {"cut: s3cret-Ke", "cut: ***"},
        {"cut: s3cret-", "cut: s3cret-"}, /* 7 characters: too little to hide */
        {"s3cret-K more", "s3cret-K more"},
        {"short shor shorter", "*** shor ***er"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *r = ps_client_redact(c, cases[i].in, strlen(cases[i].in), NULL);
        CHECK_STR(r, cases[i].out);
        free(r);
    }
    /* the curl line of a near miss names the variable, less its last character */
    ps_client_request req = {"GET", "/categories", "Bearer s3cret-Key'$", NULL, 0, NULL};
    ps_exchange ex;
    CHECK_INT(ps_client_perform(c, &req, &ex), -1);
    CHECK_STR(ps_headers_get(&ex.req_headers, "Authorization"), "Bearer ***");
    CHECK(strstr(ex.curl, "${PETSTORE_API_KEY%?}") != NULL);
    CHECK(strstr(ex.curl, "s3cret") == NULL);
    ps_exchange_free(&ex);
    ps_client_destroy(c);
}

/* Runs the curl line with printf in place of curl; returns its output. */
static char *replay(const char *curl_line)
{
    CHECK(strncmp(curl_line, "curl -i ", 8) == 0);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "printf '[%%s]\\n' %s", curl_line + 8);
    setenv("PETSTORE_API_KEY", KEY, 1);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    static char out[4096];
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\0';
    if (p) pclose(p);
    return out;
}

static void failed_exchange_still_records_redacted_evidence(void)
{
    ps_error err;
    ps_client *c = ps_client_create("http://127.0.0.1:1/v1", 2000000000LL, NULL, &err);
    ps_client_add_secret(c, KEY, "PETSTORE_API_KEY");
    const char *body = "{\"name\":\"it's $(touch /nonexistent/x) `id` \\\"q\\\" \\\\ !\"}";
    ps_client_request req = {"POST", "/categories", "Bearer " KEY,
                             body,   strlen(body),  "application/json"};
    ps_exchange ex;
    int rc = ps_client_perform(c, &req, &ex);
    CHECK_INT(rc, -1); /* nothing listens on port 1 */
    CHECK(!ex.responded);
    CHECK(ex.unreachable);
    CHECK(strstr(ex.error, "could not connect") != NULL);
    CHECK_STR(ex.url, "http://127.0.0.1:1/v1/categories");
    CHECK_STR(ps_headers_get(&ex.req_headers, "Authorization"), "Bearer ***");
    CHECK(strstr(ex.curl, KEY) == NULL);
    CHECK(strstr(ex.curl, "${PETSTORE_API_KEY}") != NULL);
    /* the shell gives back exactly the request: key from the environment,
     * body and URL untouched */
    char expect[2048];
    snprintf(
        expect, sizeof expect,
        "[-X]\n[POST]\n[-H]\n[Authorization: Bearer %s]\n[-H]\n[Content-Type: application/json]\n"
        "[--data-binary]\n[%s]\n[http://127.0.0.1:1/v1/categories]\n",
        KEY, body);
    CHECK_STR(replay(ex.curl), expect);
    ps_exchange_free(&ex);

    /* GET without credential: no -X, no -H */
    ps_client_request get = {"GET", "/categories", NULL, NULL, 0, NULL};
    CHECK_INT(ps_client_perform(c, &get, &ex), -1);
    CHECK_STR(replay(ex.curl), "[http://127.0.0.1:1/v1/categories]\n");
    CHECK(ps_headers_get(&ex.req_headers, "Authorization") == NULL);
    ps_exchange_free(&ex);

    /* POST with no Content-Type is replayed with curl's default removed */
    ps_client_request bare = {"POST", "/categories", NULL, "", 0, NULL};
    CHECK_INT(ps_client_perform(c, &bare, &ex), -1);
    CHECK_STR(replay(ex.curl), "[-X]\n[POST]\n[-H]\n[Content-Type:]\n[--data-binary]\n[]\n[http://"
                               "127.0.0.1:1/v1/categories]\n");
    ps_exchange_free(&ex);
    ps_client_destroy(c);
}

int main(void)
{
    RUN(redaction_replaces_every_secret);
    RUN(redaction_catches_near_misses);
    RUN(failed_exchange_still_records_redacted_evidence);
    return TEST_EXIT();
}
