/* client.c - libcurl easy exchanges recorded as redacted evidence. */
#include "runner/client.h"

#include <curl/curl.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"
#include "core/tls_mismatch.h"
#include "core/version.h"

#define MAX_SECRETS 8

struct ps_client {
    CURL *curl;
    char *base_url;
    int64_t timeout_ns;
    FILE *verbose;
    ps_tls_client_opts tls; /* its strings are the client's copies */
    bool cert_asked;        /* a server asked for a certificate we did not have */
    size_t body_cap;
    volatile sig_atomic_t *cancel;
    bool answered_once; /* an HTTP reply came: a later failure is no protocol mix-up */
    ps_client_transport transport;
    struct {
        char *value;
        size_t len;
        char *env;
    } secrets[MAX_SECRETS];
    int nsecrets;
};

static int curl_global_done;

/* The SSL_CTX ex_data slot holding the ps_client a context's handshakes
 * are for (libcurl makes the context; on_ssl_ctx marks it). */
static int client_index = -1;
static pthread_once_t client_index_once = PTHREAD_ONCE_INIT;

static void make_client_index(void)
{
    client_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

ps_client *ps_client_create(const char *base_url, int64_t timeout_ns, FILE *verbose, ps_error *err)
{
    if (strncasecmp(base_url, "http://", 7) != 0 && strncasecmp(base_url, "https://", 8) != 0) {
        ps_error_set(err, "base URL '%s' must start with http:// or https://", base_url);
        return NULL;
    }
    if (!curl_global_done) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
            ps_error_set(err, "libcurl could not be initialised");
            return NULL;
        }
        curl_global_done = 1;
    }
    pthread_once(&client_index_once, make_client_index);
    ps_client *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->curl = curl_easy_init();
    if (!c->curl) {
        free(c);
        ps_error_set(err, "libcurl could not create a handle");
        return NULL;
    }
    c->base_url = strdup(base_url);
    if (!c->base_url) abort();
    size_t n = strlen(c->base_url);
    while (n > 0 && c->base_url[n - 1] == '/')
        c->base_url[--n] = '\0';
    c->timeout_ns = timeout_ns;
    c->body_cap = PS_CLIENT_BODY_CAP;
    c->verbose = verbose;
    return c;
}

void ps_client_destroy(ps_client *c)
{
    if (!c) return;
    if (c->curl) curl_easy_cleanup(c->curl);
    for (int i = 0; i < c->nsecrets; i++) {
        free(c->secrets[i].value);
        free(c->secrets[i].env);
    }
    free(c->base_url);
    free((char *)c->tls.cacert);
    free((char *)c->tls.cert_file);
    free((char *)c->tls.key_file);
    free(c);
}

static const char *copy_path(const char *old, const char *path)
{
    free((char *)old);
    char *copy = path ? strdup(path) : NULL;
    if (path && !copy) abort();
    return copy;
}

void ps_client_set_tls(ps_client *c, const ps_tls_client_opts *tls)
{
    c->tls.cacert = copy_path(c->tls.cacert, tls->cacert);
    c->tls.cert_file = copy_path(c->tls.cert_file, tls->cert_file);
    c->tls.key_file = copy_path(c->tls.key_file, tls->key_file);
    c->tls.insecure = tls->insecure;
}

void ps_client_tls_setopt(void *curl, const ps_tls_client_opts *tls)
{
    CURL *h = curl;
    if (tls->cacert) curl_easy_setopt(h, CURLOPT_CAINFO, tls->cacert);
    if (tls->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (tls->cert_file) {
        curl_easy_setopt(h, CURLOPT_SSLCERT, tls->cert_file);
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(h, CURLOPT_SSLKEY, tls->key_file ? tls->key_file : tls->cert_file);
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
}

/* OpenSSL asks for a certificate the server requested and none is set:
 * noted, and none sent (the handshake goes on, as curl's would). */
static int on_cert_request(SSL *ssl, X509 **x509, EVP_PKEY **pkey)
{
    (void)x509, (void)pkey;
    ps_client *c = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), client_index);
    if (c) c->cert_asked = true;
    return 0;
}

static CURLcode on_ssl_ctx(CURL *h, void *ssl_ctx, void *userp)
{
    (void)h;
    SSL_CTX_set_ex_data(ssl_ctx, client_index, userp);
    SSL_CTX_set_client_cert_cb(ssl_ctx, on_cert_request);
    return CURLE_OK;
}

bool ps_client_cert_missing(const ps_client *c)
{
    return c->cert_asked && !c->tls.cert_file;
}

void ps_client_set_body_cap(ps_client *c, size_t cap)
{
    c->body_cap = cap;
}

void ps_client_set_cancel(ps_client *c, volatile sig_atomic_t *flag)
{
    c->cancel = flag;
}

static int on_progress(void *userp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const ps_client *c = userp;
    return c->cancel && *c->cancel ? 1 : 0; /* non-zero aborts the transfer */
}

void ps_client_add_secret(ps_client *c, const char *secret, const char *env_var)
{
    if (!secret || !*secret || c->nsecrets == MAX_SECRETS) return;
    for (int i = 0; i < c->nsecrets; i++)
        if (strcmp(c->secrets[i].value, secret) == 0) return;
    c->secrets[c->nsecrets].value = strdup(secret);
    c->secrets[c->nsecrets].len = strlen(secret);
    c->secrets[c->nsecrets].env = strdup(env_var);
    if (!c->secrets[c->nsecrets].value || !c->secrets[c->nsecrets].env) abort();
    c->nsecrets++;
}

const char *ps_client_base_url(const ps_client *c)
{
    return c->base_url;
}

/* A secret shorter than this is only matched whole: a near miss of a very
 * short secret would match ordinary text. */
#define NEAR_MISS_MIN 9

/* Which secret text starts at s (at most len bytes), longest first; -1 if
 * none. *n is how many bytes it spans and *whole whether they are the whole
 * secret. Besides the secret itself this matches its first n-1 characters,
 * so the near misses the auth suite sends and a service may echo (the key
 * less its last character, the key with characters added after it) are
 * caught too. With at_end, a piece of NEAR_MISS_MIN-1 or more characters of
 * a secret's beginning that ends the text also matches: a reply cut short
 * (--max-body) must not show most of a key. */
static int secret_at(const ps_client *c, const char *s, size_t len, bool at_end, size_t *n,
                     bool *whole)
{
    int best = -1;
    size_t best_len = 0;
    for (int i = 0; i < c->nsecrets; i++) {
        const char *v = c->secrets[i].value;
        size_t vn = c->secrets[i].len, m = 0;
        bool w = false;
        if (!len || *s != *v) continue;
        if (vn <= len && memcmp(s, v, vn) == 0)
            m = vn, w = true;
        else if (vn >= NEAR_MISS_MIN && vn - 1 <= len && memcmp(s, v, vn - 1) == 0)
            m = vn - 1;
        else if (at_end && vn >= NEAR_MISS_MIN && len >= NEAR_MISS_MIN - 1 && len < vn &&
                 memcmp(s, v, len) == 0)
            m = len;
        if (m > best_len) {
            best = i;
            best_len = m;
            *whole = w;
        }
    }
    *n = best_len;
    return best;
}

char *ps_client_redact(const ps_client *c, const char *s, size_t len, size_t *out_len)
{
    ps_buf b = PS_BUF_INIT;
    ps_buf_reserve(&b, len + 1);
    size_t run = 0;
    for (size_t i = 0; i < len;) {
        size_t n;
        bool whole = false;
        if (secret_at(c, s + i, len - i, true, &n, &whole) >= 0) {
            ps_buf_append(&b, s + run, i - run);
            ps_buf_puts(&b, "***");
            i += n;
            run = i;
            continue;
        }
        i++;
    }
    ps_buf_append(&b, s + run, len - run);
    if (out_len) *out_len = b.len;
    return ps_buf_detach(&b);
}

/* Appends s as one shell word. Secrets become ${ENV} inside double quotes
 * (a near miss lacking the last character ${ENV%?}, which POSIX shells
 * expand to the value less its last character); strings without secrets
 * are single-quoted (nothing expands there). */
static void shell_word(const ps_client *c, ps_buf *b, const char *s, size_t len)
{
    bool has_secret = false;
    size_t n;
    bool whole = false;
    for (size_t i = 0; i < len && !has_secret; i++)
        has_secret = secret_at(c, s + i, len - i, false, &n, &whole) >= 0;
    if (!has_secret) {
        ps_buf_put_shell_quoted(b, s, len);
        return;
    }
    ps_buf_putc(b, '"');
    for (size_t i = 0; i < len;) {
        int k = secret_at(c, s + i, len - i, false, &n, &whole);
        if (k >= 0) {
            ps_buf_printf(b, whole ? "${%s}" : "${%s%%?}", c->secrets[k].env);
            i += n;
            continue;
        }
        if (strchr("\"\\$`!", s[i]) && s[i]) ps_buf_putc(b, '\\');
        ps_buf_putc(b, s[i++]);
    }
    ps_buf_putc(b, '"');
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
    ps_exchange *ex = userp;
    size_t n = size * nmemb;
    ex->body_total += n;
    if (ex->body.len < ex->body_cap) {
        size_t keep = ex->body_cap - ex->body.len;
        ps_buf_append(&ex->body, data, n < keep ? n : keep);
    }
    if (ex->body_total > ex->body.len) ex->truncated = true;
    /* A server streaming forever is abandoned (well past what is kept). */
    if (ex->body_total > PS_CLIENT_BODY_ABANDON && ex->body_total > 4 * ex->body_cap) return 0;
    return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userp)
{
    ps_exchange *ex = userp;
    size_t n = size * nmemb;
    /* A new status line (after a 1xx or a redirect) starts a new header block. */
    if (n >= 5 && strncmp(data, "HTTP/", 5) == 0)
        ps_headers_clear(&ex->resp_headers);
    else
        ps_headers_add_raw_line(&ex->resp_headers, data, n);
    return n;
}

static void add_req_header(ps_client *c, ps_exchange *ex, struct curl_slist **list,
                           const char *name, const char *value)
{
    ps_buf line = PS_BUF_INIT;
    ps_buf_printf(&line, "%s: %s", name, value);
    *list = curl_slist_append(*list, line.data);
    if (!*list) abort();
    size_t rlen;
    char *red = ps_client_redact(c, value, strlen(value), &rlen);
    ps_headers_add(&ex->req_headers, name, strlen(name), red, rlen);
    free(red);
    ps_buf_free(&line);
}

static void build_curl_line(ps_client *c, const ps_client_request *req, const char *auth2,
                            const char *url, ps_exchange *ex)
{
    ps_buf b = PS_BUF_INIT;
    ps_buf_puts(&b, "curl -i");
    if (strcmp(req->method, "GET") != 0) ps_buf_printf(&b, " -X %s", req->method);
    const char *auths[2] = {req->authorization, auth2};
    for (int i = 0; i < 2; i++) {
        if (!auths[i]) continue;
        ps_buf line = PS_BUF_INIT;
        ps_buf_printf(&line, "Authorization: %s", auths[i]);
        ps_buf_puts(&b, " -H ");
        shell_word(c, &b, line.data, line.len);
        ps_buf_free(&line);
    }
    if (req->body) {
        ps_buf_puts(&b, req->content_type ? " -H " : " -H 'Content-Type:'");
        if (req->content_type) {
            ps_buf line = PS_BUF_INIT;
            ps_buf_printf(&line, "Content-Type: %s", req->content_type);
            shell_word(c, &b, line.data, line.len);
            ps_buf_free(&line);
        }
        ps_buf_puts(&b, " --data-binary ");
        shell_word(c, &b, req->body, req->body_len);
    }
    ps_buf_putc(&b, ' ');
    shell_word(c, &b, url, strlen(url));
    ex->curl = ps_buf_detach(&b);
}

/* Server bytes on a terminal, escaped as replay prints them (C0 but newline
 * and tab, DEL, C1 as UTF-8 or bare bytes, invalid UTF-8), so a reply cannot
 * drive the terminal (ESC sequences, BEL, 8-bit CSI). */
static void put_clean(ps_buf *b, const char *prefix, const char *s, size_t len)
{
    ps_buf_puts(b, prefix);
    ps_buf_put_visible(b, s, len, true);
    ps_buf_putc(b, '\n');
}

/* The exchange as --verbose shows it, written in one call: a reply's bytes
 * one fputc at a time to unbuffered stderr cost a write(2) each (100 KB of
 * headers took 2 minutes). Secrets a service echoes are redacted here, where
 * its bytes reach the terminal; the request was redacted when recorded. */
static void print_verbose(const ps_client *c, FILE *f, const ps_exchange *ex)
{
    ps_buf dump = PS_BUF_INIT;
    ps_buf_printf(&dump, "> %s %s\n", ex->method, ex->url);
    for (size_t i = 0; i < ex->req_headers.count; i++)
        ps_buf_printf(&dump, "> %s: %s\n", ex->req_headers.items[i].name,
                      ex->req_headers.items[i].value);
    if (ex->req_body.len) put_clean(&dump, "> ", ex->req_body.data, ex->req_body.len);
    if (!ex->responded) {
        put_clean(&dump, "! ", ex->error, strlen(ex->error)); /* may quote the server */
        ps_buf_putc(&dump, '\n');
    } else {
        ps_buf_printf(&dump, "< %ld (%.1f ms)\n", ex->status, ex->elapsed_ms);
        for (size_t i = 0; i < ex->resp_headers.count; i++) {
            const ps_header *h = &ex->resp_headers.items[i];
            ps_buf line = PS_BUF_INIT;
            ps_buf_printf(&line, "%s: %s", h->name, h->value);
            put_clean(&dump, "< ", line.data, line.len);
            ps_buf_free(&line);
        }
        size_t show = ex->body.len < 2048 ? ex->body.len : 2048;
        if (show) put_clean(&dump, "< ", ex->body.data, show);
        if (show < ex->body_total)
            ps_buf_printf(&dump, "< ... (%zu bytes in all)\n", ex->body_total);
        ps_buf_putc(&dump, '\n');
    }
    size_t n;
    char *clean = ps_client_redact(c, dump.data, dump.len, &n);
    fwrite(clean, 1, n, f);
    fflush(f);
    free(clean);
    ps_buf_free(&dump);
}

/* Whether an http:// target that has never answered in HTTP speaks TLS
 * on its port (core/tls_mismatch.h): asked once a failure suggests it, and
 * only before the first reply, so a flaky plain server is not probed. */
static bool tls_port(ps_client *c, const char *url)
{
    if (c->answered_once) return false;
    c->answered_once = true; /* one probe per run is enough */
    return ps_tls_url_port_speaks_tls(url, (int)(c->timeout_ns / 1000000));
}

/* The TLS version and certificate subject of h's connection (still open:
 * the handle keeps it alive), when libcurl speaks OpenSSL. */
static void note_tls(ps_client_transport *t, CURL *h)
{
    struct curl_tlssessioninfo *ti = NULL;
    if (curl_easy_getinfo(h, CURLINFO_TLS_SSL_PTR, &ti) != CURLE_OK || !ti ||
        ti->backend != CURLSSLBACKEND_OPENSSL || !ti->internals)
        return;
    SSL *ssl = ti->internals;
    snprintf(t->tls_version, sizeof t->tls_version, "%s", SSL_get_version(ssl));
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    X509 *cert = SSL_get1_peer_certificate(ssl);
#else
    X509 *cert = SSL_get_peer_certificate(ssl);
#endif
    if (!cert) return;
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio && X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0) {
        int n = BIO_read(bio, t->cert_subject, (int)sizeof t->cert_subject - 1);
        t->cert_subject[n > 0 ? n : 0] = '\0';
    }
    BIO_free(bio);
    X509_free(cert);
}

/* Called once the connection is made, before the request goes out: the
 * TLS session is reachable only while a transfer runs. */
static int on_connected(void *clientp, char *primary_ip, char *local_ip, int primary_port,
                        int local_port)
{
    (void)primary_ip, (void)local_ip, (void)primary_port, (void)local_port;
    ps_client *c = clientp;
    if (!c->transport.tls_version[0]) note_tls(&c->transport, c->curl);
    return CURL_PREREQFUNC_OK;
}

static void note_transport(ps_client *c, CURL *h, double elapsed_ms)
{
    ps_client_transport *t = &c->transport;
    if (!t->known || elapsed_ms < t->shortest_ms) t->shortest_ms = elapsed_ms;
    if (t->known) return;
    t->known = true;
    long v = 0;
    curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &v);
    t->http_version = v == CURL_HTTP_VERSION_1_0   ? 10
                      : v == CURL_HTTP_VERSION_2_0 ? 20
                      : v == CURL_HTTP_VERSION_3   ? 30
                                                   : 11;
}

const ps_client_transport *ps_client_transport_of(const ps_client *c)
{
    return &c->transport;
}

int ps_client_perform(ps_client *c, const ps_client_request *req, ps_exchange *ex)
{
    return ps_client_perform_ex(c, req, NULL, ex);
}

int ps_client_perform_ex(ps_client *c, const ps_client_request *req, const char *authorization2,
                         ps_exchange *ex)
{
    struct curl_slist *headers = NULL;
    char errbuf[CURL_ERROR_SIZE] = "";
    int rc = -1;
    ps_buf url = PS_BUF_INIT;
    ps_buf_printf(&url, "%s%s", c->base_url, req->path);

    memset(ex, 0, sizeof *ex);
    ex->body_cap = c->body_cap;
    ex->method = strdup(req->method);
    ex->url = ps_client_redact(c, url.data, url.len, NULL);
    if (!ex->method) abort();
    if (req->body) {
        size_t rlen;
        char *red = ps_client_redact(c, req->body, req->body_len, &rlen);
        ps_buf_append(&ex->req_body, red, rlen);
        free(red);
    }
    build_curl_line(c, req, authorization2, url.data, ex);

    CURL *h = c->curl;
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url.data);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(c->timeout_ns / 1000000));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->timeout_ns / 1000000));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, ex);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, ex);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "petstore-conform/" PS_VERSION);
    /* Without Accept-Encoding a server may use any content coding (RFC 9110
     * 12.5.3), and gzip would then read as a body that is not JSON: ask for
     * identity (the header below), and let libcurl decode a coding sent
     * anyway, so the checks judge the content. */
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "identity");
    ps_client_tls_setopt(h, &c->tls);
    if (!c->tls.cert_file && client_index >= 0) {
        curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, on_ssl_ctx);
        curl_easy_setopt(h, CURLOPT_SSL_CTX_DATA, c);
    }
    if (!c->transport.known) {
        curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, on_connected);
        curl_easy_setopt(h, CURLOPT_PREREQDATA, c);
    }
    if (c->cancel) {
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    }
    if (req->authorization) add_req_header(c, ex, &headers, "Authorization", req->authorization);
    if (authorization2) add_req_header(c, ex, &headers, "Authorization", authorization2);
    add_req_header(c, ex, &headers, "Accept", "application/json");
    add_req_header(c, ex, &headers, "Accept-Encoding", "identity");
    if (strcmp(req->method, "GET") == 0) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t)(req->body ? req->body_len : 0));
        curl_easy_setopt(h, CURLOPT_COPYPOSTFIELDS, req->body ? req->body : "");
        /* libcurl would otherwise add its own form Content-Type and Expect. */
        if (req->content_type)
            add_req_header(c, ex, &headers, "Content-Type", req->content_type);
        else
            headers = curl_slist_append(headers, "Content-Type:");
        headers = curl_slist_append(headers, "Expect:");
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);

    ex->sent_wall_ns = ps_clock_wall_ns();
    int64_t t0 = ps_clock_mono_ns();
    CURLcode cc = curl_easy_perform(h);
    ex->elapsed_ms = (double)(ps_clock_mono_ns() - t0) / 1e6;
    ex->done_wall_ns = ps_clock_wall_ns();

    if (cc != CURLE_OK) {
        const char *what = errbuf[0] ? errbuf : curl_easy_strerror(cc);
        switch (cc) {
        case CURLE_COULDNT_CONNECT:
        case CURLE_COULDNT_RESOLVE_HOST:
            snprintf(ex->error, sizeof ex->error, "could not connect: %s", what);
            ex->unreachable = true;
            break;
        case CURLE_OPERATION_TIMEDOUT:
            snprintf(ex->error, sizeof ex->error,
                     "no complete reply within the timeout (%.1f s): %s",
                     (double)c->timeout_ns / 1e9, what);
            break;
        case CURLE_WRITE_ERROR:
            snprintf(ex->error, sizeof ex->error, "reply body exceeded %zu MiB; gave up reading it",
                     (ex->body_total - 1) >> 20);
            break;
        case CURLE_GOT_NOTHING:
            if (tls_port(c, url.data))
                snprintf(ex->error, sizeof ex->error,
                         PS_TLS_MSG_TLS_ANSWER " (it closed the connection)");
            else
                snprintf(ex->error, sizeof ex->error,
                         "the server closed the connection without replying");
            break;
        case CURLE_RECV_ERROR:
        case CURLE_PARTIAL_FILE:
            if (cc == CURLE_RECV_ERROR && tls_port(c, url.data))
                snprintf(ex->error, sizeof ex->error, PS_TLS_MSG_TLS_ANSWER " (%.200s)", what);
            else
                snprintf(ex->error, sizeof ex->error, "the connection broke during the reply: %s",
                         what);
            break;
        case CURLE_ABORTED_BY_CALLBACK:
            snprintf(ex->error, sizeof ex->error, "interrupted");
            break;
        case CURLE_OUT_OF_MEMORY:
            /* libcurl 7.x says "Out of memory" for a header line over its
             * 100 KiB limit (CURL_MAX_HTTP_HEADER), whatever memory is free:
             * name the reply, not the reach or the machine. */
            snprintf(ex->error, sizeof ex->error,
                     "the reply's head was not read: a header line longer than the 100 KiB "
                     "the client reads, or no memory left (%.100s)",
                     what);
            break;
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_SSL_CACERT_BADFILE:
            if (ps_tls_answered_in_plain_http(cc == CURLE_SSL_CONNECT_ERROR, what))
                snprintf(ex->error, sizeof ex->error, PS_TLS_MSG_PLAIN_ANSWER " (%.200s)", what);
            else if (ps_client_cert_missing(c))
                snprintf(ex->error, sizeof ex->error,
                         "TLS failed: %.200s (the server asked for a client certificate: give "
                         "--cert FILE --key FILE)",
                         what);
            else
                snprintf(ex->error, sizeof ex->error,
                         "TLS failed: %.200s (for a private CA, give --cacert FILE; --insecure "
                         "skips the check)",
                         what);
            ex->unreachable = true;
            break;
        case CURLE_WEIRD_SERVER_REPLY:
        case CURLE_UNSUPPORTED_PROTOCOL:
            if (tls_port(c, url.data))
                snprintf(ex->error, sizeof ex->error, PS_TLS_MSG_TLS_ANSWER " (%.200s)", what);
            else
                snprintf(ex->error, sizeof ex->error, "the reply is not HTTP: %s", what);
            break;
        default:
            snprintf(ex->error, sizeof ex->error, "%s", what);
        }
        /* a reply that came but not whole: the burst names it alike */
        ex->reply_bad = cc == CURLE_PARTIAL_FILE || cc == CURLE_WEIRD_SERVER_REPLY ||
                        cc == CURLE_WRITE_ERROR || cc == CURLE_OUT_OF_MEMORY ||
                        (cc == CURLE_OPERATION_TIMEDOUT && ex->resp_headers.count > 0);
        /* libcurl's message may quote the reply (a status line, a header). */
        char *red = ps_client_redact(c, ex->error, strlen(ex->error), NULL);
        snprintf(ex->error, sizeof ex->error, "%s", red);
        free(red);
        goto out;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &ex->status);
    note_transport(c, h, ex->elapsed_ms);
    ex->responded = true;
    c->answered_once = true;
    rc = 0;
out:
    if (c->verbose) print_verbose(c, c->verbose, ex);
    curl_slist_free_all(headers);
    ps_buf_free(&url);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    return rc;
}

void ps_exchange_free(ps_exchange *ex)
{
    if (!ex) return;
    free(ex->method);
    free(ex->url);
    free(ex->curl);
    ps_headers_free(&ex->req_headers);
    ps_headers_free(&ex->resp_headers);
    ps_buf_free(&ex->req_body);
    ps_buf_free(&ex->body);
    memset(ex, 0, sizeof *ex);
}
