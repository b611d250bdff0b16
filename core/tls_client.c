/* tls_client.c - OpenSSL client contexts and connections for the
 * programs' own sockets; see tls_client.h. */
#include "core/tls_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/tcp_connect.h"
#include "core/tls_mismatch.h"

struct ps_tls_client {
    SSL_CTX *ctx;
    bool insecure;
};

/* The SSL ex_data slot holding a connection's ps_tls_resume. */
static int resume_index = -1;
static pthread_once_t resume_once = PTHREAD_ONCE_INIT;

static void make_resume_index(void)
{
    resume_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

/* A ticket arrived (TLS 1.3: after the handshake, read with the first
 * response): the connection's thread keeps the newest. */
static int on_new_session(SSL *ssl, SSL_SESSION *session)
{
    ps_tls_resume *r = SSL_get_ex_data(ssl, resume_index);
    if (!r) return 0;
    if (r->n == PS_TLS_RESUME_MAX) {
        SSL_SESSION_free(r->tickets[0]);
        memmove(r->tickets, r->tickets + 1, (PS_TLS_RESUME_MAX - 1) * sizeof r->tickets[0]);
        r->n--;
    }
    r->tickets[r->n++] = session;
    return 1; /* the reference is ours now */
}

/* Offers resume's newest usable ticket on ssl; a TLS 1.3 one leaves the
 * pool (single use), a TLS 1.2 one stays. */
static void offer_ticket(SSL *ssl, ps_tls_resume *r)
{
    while (r->n > 0) {
        SSL_SESSION *t = r->tickets[r->n - 1];
        bool once = SSL_SESSION_get_protocol_version(t) >= TLS1_3_VERSION;
        bool usable = SSL_SESSION_is_resumable(t);
        if (usable) SSL_set_session(ssl, t); /* takes its own reference */
        if (!usable || once) {
            SSL_SESSION_free(t);
            r->n--;
        }
        if (usable) return;
    }
}

/* OpenSSL's oldest queued error, as text, emptying the queue. */
static void take_error_text(char *out, size_t len)
{
    unsigned long e = ERR_get_error();
    if (e)
        ERR_error_string_n(e, out, len);
    else
        snprintf(out, len, "unknown error");
    ERR_clear_error();
}

/* A passphrase is never asked for: OpenSSL would otherwise prompt on the
 * terminal, hanging a CI job; an encrypted key fails to load instead. */
static int no_passphrase(char *buf, int size, int rwflag, void *userdata)
{
    (void)buf, (void)size, (void)rwflag, (void)userdata;
    return 0;
}

/* Whether path can be opened for reading: 0, or -1 with err naming the
 * flag, the path and why (never the file's content). */
static int readable(const char *flag, const char *path, ps_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return ps_error_set(err, "%s '%s': cannot read: %s", flag, path, strerror(errno));
    fclose(f);
    return 0;
}

/* The client certificate chain and its key (opts->key_file, else the key
 * in cert_file) on ctx, checked to belong together. Messages name the file
 * and OpenSSL's reason, never what the file holds. Returns 0, or -1 with err. */
static int load_client_cert(SSL_CTX *ctx, const ps_tls_client_opts *opts, ps_error *err)
{
    char why[256];
    if (!opts->cert_file) return 0;
    const char *key = opts->key_file ? opts->key_file : opts->cert_file;
    const char *key_flag = opts->key_file ? "--key" : "--cert (its key)";
    if (readable("--cert", opts->cert_file, err) != 0 || readable(key_flag, key, err) != 0)
        return -1;
    SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
    if (SSL_CTX_use_certificate_chain_file(ctx, opts->cert_file) != 1) {
        take_error_text(why, sizeof why);
        return ps_error_set(err, "--cert '%s': not a PEM certificate: %s", opts->cert_file, why);
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
        /* OpenSSL checks a key against the certificate as it loads it */
        unsigned long e = ERR_peek_error();
        bool mismatch =
            ERR_GET_LIB(e) == ERR_LIB_X509 && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH;
        take_error_text(why, sizeof why);
        if (mismatch)
            return ps_error_set(err, "%s '%s' is not the private key of --cert '%s': %s", key_flag,
                                key, opts->cert_file, why);
        return ps_error_set(err,
                            "%s '%s': not an unencrypted PEM private key (a key with a "
                            "passphrase is not supported): %s",
                            key_flag, key, why);
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        take_error_text(why, sizeof why);
        return ps_error_set(err, "%s '%s' is not the private key of --cert '%s': %s", key_flag, key,
                            opts->cert_file, why);
    }
    return 0;
}

int ps_tls_client_opts_check(const ps_tls_client_opts *opts, ps_error *err)
{
    ps_tls_client *c = NULL;
    int rc = ps_tls_client_create(opts, &c, err);
    ps_tls_client_destroy(c);
    return rc;
}

int ps_tls_client_create(const ps_tls_client_opts *opts, ps_tls_client **out, ps_error *err)
{
    char why[256];
    *out = NULL;
    pthread_once(&resume_once, make_resume_index);
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx || resume_index < 0) {
        take_error_text(why, sizeof why);
        SSL_CTX_free(ctx);
        return ps_error_set(err, "TLS: cannot create a context: %s", why);
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
    /* A server closing a keep-alive connection without close_notify is an
     * ordinary end of stream, as it is over plain TCP. */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
    /* One recv takes every record waiting, instead of a header read and a
     * body read per record. */
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, on_new_session);
    static const unsigned char alpn[] = "\x08http/1.1";
    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn - 1);
    if (opts->insecure) {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    } else {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        int ok = opts->cacert ? SSL_CTX_load_verify_locations(ctx, opts->cacert, NULL)
                              : SSL_CTX_set_default_verify_paths(ctx);
        if (ok != 1) {
            take_error_text(why, sizeof why);
            SSL_CTX_free(ctx);
            if (opts->cacert)
                return ps_error_set(err, "--cacert '%s': not a PEM CA certificate: %s",
                                    opts->cacert, why);
            return ps_error_set(err, "TLS: cannot load the system's CA certificates: %s", why);
        }
    }
    if (load_client_cert(ctx, opts, err) != 0) {
        SSL_CTX_free(ctx);
        return -1;
    }
    ps_tls_client *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->ctx = ctx;
    c->insecure = opts->insecure;
    *out = c;
    return 0;
}

void ps_tls_client_destroy(ps_tls_client *c)
{
    if (!c) return;
    SSL_CTX_free(c->ctx);
    free(c);
}

static bool is_address(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

SSL *ps_tls_client_ssl(ps_tls_client *c, int fd, const char *host, ps_tls_resume *resume,
                       ps_error *err)
{
    char why[256];
    SSL *ssl = SSL_new(c->ctx);
    if (!ssl || SSL_set_fd(ssl, fd) != 1) goto fail;
    SSL_set_connect_state(ssl);
    if (is_address(host)) {
        /* RFC 6066 3: no SNI for an address; the certificate must name it. */
        if (!c->insecure && X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) != 1)
            goto fail;
    } else {
        if (SSL_set_tlsext_host_name(ssl, host) != 1) goto fail;
        if (!c->insecure && SSL_set1_host(ssl, host) != 1) goto fail;
    }
    if (resume) {
        SSL_set_ex_data(ssl, resume_index, resume);
        offer_ticket(ssl, resume);
    }
    return ssl;
fail:
    take_error_text(why, sizeof why);
    SSL_free(ssl);
    ps_error_set(err, "TLS: cannot set up a connection to %s: %s", host, why);
    return NULL;
}

int ps_tls_client_offer_alpn(SSL *ssl, const char *protos)
{
    unsigned char wire[256];
    size_t len = 0;
    for (const char *p = protos; *p;) {
        size_t name = strcspn(p, ",");
        if (name == 0 || name > 255 || len + 1 + name > sizeof wire) return -1;
        wire[len++] = (unsigned char)name;
        memcpy(wire + len, p, name);
        len += name;
        p += name;
        if (*p == ',') p++;
    }
    /* SSL_set_alpn_protos returns 0 on success, unlike most of OpenSSL */
    return len && SSL_set_alpn_protos(ssl, wire, (unsigned)len) == 0 ? 0 : -1;
}

bool ps_tls_client_alpn_is(SSL *ssl, const char *proto)
{
    const unsigned char *got = NULL;
    unsigned len = 0;
    SSL_get0_alpn_selected(ssl, &got, &len);
    return got && len == strlen(proto) && memcmp(got, proto, len) == 0;
}

void ps_tls_resume_clear(ps_tls_resume *r)
{
    for (int i = 0; i < r->n; i++)
        SSL_SESSION_free(r->tickets[i]);
    r->n = 0;
}

void ps_tls_client_end_clean(SSL *ssl)
{
    if (ssl && SSL_is_init_finished(ssl))
        SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
}

/* The one-line reason of a failed handshake or record. */
static void describe(SSL *ssl, int code, int saved_errno, char *why, size_t len)
{
    long v = SSL_get_verify_result(ssl);
    if (code == SSL_ERROR_SSL && v != X509_V_OK) {
        bool name = v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH;
        snprintf(why, len, "TLS: the server's certificate did not verify: %s (%s)",
                 X509_verify_cert_error_string(v),
                 name ? "it is for another name; --insecure skips the check"
                      : "give its CA with --cacert FILE, or --insecure to skip the check");
        ERR_clear_error();
        return;
    }
    if (code == SSL_ERROR_SSL) {
        char text[256];
        take_error_text(text, sizeof text);
        if (ps_tls_answered_in_plain_http(true, text))
            snprintf(why, len, PS_TLS_MSG_PLAIN_ANSWER);
        else
            snprintf(why, len, "TLS: %s", text);
        return;
    }
    snprintf(why, len, "TLS: connection broken: %s",
             saved_errno ? strerror(saved_errno) : "closed by the peer");
    ERR_clear_error();
}

ps_tls_io ps_tls_client_io(SSL *ssl, int ret, char *why, size_t len)
{
    int saved_errno = errno;
    int code = SSL_get_error(ssl, ret);
    switch (code) {
    case SSL_ERROR_NONE:
        return PS_TLS_IO_OK;
    case SSL_ERROR_WANT_READ:
        return PS_TLS_IO_WANT_READ;
    case SSL_ERROR_WANT_WRITE:
        return PS_TLS_IO_WANT_WRITE;
    case SSL_ERROR_ZERO_RETURN:
        return PS_TLS_IO_EOF;
    case SSL_ERROR_SYSCALL:
        if (ERR_peek_error() == 0 && saved_errno == 0) return PS_TLS_IO_EOF;
        break;
    default:
        break;
    }
    if (why)
        describe(ssl, code, saved_errno, why, len);
    else
        ERR_clear_error();
    return PS_TLS_IO_ERROR;
}

/* What handshake_until came to. */
typedef enum handshake_end { HANDSHAKE_DONE, HANDSHAKE_FAILED, HANDSHAKE_TIMED_OUT } handshake_end;

/* Drives ssl's handshake on its socket (blocking or not) until it is done,
 * fails (why says how) or deadline_ns (ps_clock_mono_ns) passes. */
static handshake_end handshake_until(SSL *ssl, int fd, int64_t deadline_ns, char *why,
                                     size_t why_size)
{
    handshake_end end = HANDSHAKE_FAILED;
    for (;;) {
        errno = 0;
        int r = SSL_do_handshake(ssl);
        ps_tls_io io = ps_tls_client_io(ssl, r, why, why_size);
        if (io == PS_TLS_IO_OK) {
            end = HANDSHAKE_DONE;
            break;
        }
        if (io == PS_TLS_IO_ERROR || io == PS_TLS_IO_EOF) {
            if (io == PS_TLS_IO_EOF)
                snprintf(why, why_size,
                         "TLS: the server closed the connection during the handshake");
            break;
        }
        if (!ps_fd_wait(fd, io == PS_TLS_IO_WANT_READ ? POLLIN : POLLOUT, deadline_ns)) {
            end = HANDSHAKE_TIMED_OUT;
            break;
        }
    }
    return end;
}

int ps_tls_client_handshake_blocking(ps_tls_client *c, int fd, const char *host, int timeout_ms,
                                     ps_error *err)
{
    SSL *ssl = ps_tls_client_ssl(c, fd, host, NULL, err);
    if (!ssl) return -1;
    char why[sizeof err->message];
    handshake_end end = handshake_until(ssl, fd, ps_clock_mono_ns() + (int64_t)timeout_ms * 1000000,
                                        why, sizeof why);
    if (end == HANDSHAKE_TIMED_OUT)
        ps_error_set(err, "TLS: no handshake within %d ms", timeout_ms);
    else if (end == HANDSHAKE_FAILED)
        ps_error_set(err, "%s", why);
    SSL_free(ssl);
    return end == HANDSHAKE_DONE ? 0 : -1;
}

/* The client-certificate callback of ps_tls_server_asks_cert: notes the
 * request and offers nothing. */
static int note_cert_request(SSL *ssl, X509 **x509, EVP_PKEY **pkey)
{
    (void)x509, (void)pkey;
    bool *asked = SSL_get_app_data(ssl);
    *asked = true;
    return 0;
}

bool ps_tls_server_asks_cert(const char *host, const char *port, int timeout_ms)
{
    bool asked = false;
    if (timeout_ms > PS_TLS_PROBE_MAX_MS || timeout_ms <= 0) timeout_ms = PS_TLS_PROBE_MAX_MS;
    int64_t deadline = ps_clock_mono_ns() + (int64_t)timeout_ms * 1000000;
    int fd = ps_tcp_connect(host, port, deadline);
    SSL_CTX *ctx = fd >= 0 ? SSL_CTX_new(TLS_client_method()) : NULL;
    SSL *ssl = ctx ? SSL_new(ctx) : NULL;
    if (ssl) {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
        SSL_CTX_set_client_cert_cb(ctx, note_cert_request);
        SSL_set_app_data(ssl, &asked);
        if (!is_address(host)) SSL_set_tlsext_host_name(ssl, host);
        SSL_set_fd(ssl, fd);
        SSL_set_connect_state(ssl);
        /* a server that insists ends the handshake with an alert (TLS 1.2)
         * or after it (TLS 1.3): either way the request came first; the
         * whole exchange within the deadline, however slowly it trickles */
        char why[256];
        (void)handshake_until(ssl, fd, deadline, why, sizeof why);
        ERR_clear_error();
    }
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    if (fd >= 0) close(fd);
    return asked;
}
