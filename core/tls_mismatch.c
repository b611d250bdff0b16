/* tls_mismatch.c - telling a TLS/plain-HTTP mix-up from other failures. */
#include "core/tls_mismatch.h"

#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/tcp_connect.h"

bool ps_tls_answered_in_plain_http(bool handshake_failed, const char *tls_error_text)
{
    if (!handshake_failed || !tls_error_text) return false;
    static const char *const signs[] = {"wrong version number", "packet length too long",
                                        "unknown protocol", "unexpected TLS packet",
                                        "record layer failure"};
    for (size_t i = 0; i < sizeof signs / sizeof signs[0]; i++)
        if (strstr(tls_error_text, signs[i])) return true;
    return false;
}

bool ps_tls_record_start(const unsigned char *reply, size_t len)
{
    return len >= 2 && (reply[0] == 0x15 || reply[0] == 0x16) && reply[1] == 0x03;
}

/* A TLS 1.2 ClientHello (fixed random: only the reply's first bytes
 * matter), offering the usual ECDHE suites with the extensions they need.
 * A TLS server answers it with a ServerHello, or at worst an alert. */
static const unsigned char client_hello[] = {
    0x16, 0x03, 0x01, 0x00, 0x55, /* record: handshake, 85 bytes */
    0x01, 0x00, 0x00, 0x51,       /* ClientHello, 81 bytes */
    0x03, 0x03,                   /* TLS 1.2 */
    0x50, 0x53, 0x54, 0x4f, 0x52, 0x45, 0x20, 0x54, 0x4c, 0x53, 0x20, 0x50, 0x52, 0x4f, 0x42,
    0x45, 0x50, 0x53, 0x54, 0x4f, 0x52, 0x45, 0x20, 0x54, 0x4c, 0x53, 0x20, 0x50, 0x52, 0x4f,
    0x42, 0x45, 0x00,                                           /* no session id */
    0x00, 0x08, 0xc0, 0x2f, 0xc0, 0x2b, 0xc0, 0x30, 0x00, 0x9c, /* 4 cipher suites */
    0x01, 0x00,                                                 /* null compression */
    0x00, 0x20,                                                 /* extensions, 32 bytes */
    0x00, 0x0a, 0x00, 0x08, 0x00, 0x06, 0x00, 0x1d, 0x00, 0x17, 0x00, 0x18, /* groups x25519, P-256,
                                                                               P-384 */
    0x00, 0x0b, 0x00, 0x02, 0x01, 0x00, /* point formats: uncompressed */
    0x00, 0x0d, 0x00, 0x0a, 0x00, 0x08, 0x04, 0x01, 0x08, 0x04, 0x04, 0x03, 0x05, 0x01, /* sig algs
                                                                                         */
};

_Static_assert(sizeof client_hello == 5 + 0x55, "record length");

bool ps_tls_port_speaks_tls(const char *host, const char *port, int timeout_ms)
{
    if (timeout_ms > PS_TLS_PROBE_MAX_MS) timeout_ms = PS_TLS_PROBE_MAX_MS;
    int64_t deadline = ps_clock_mono_ns() + (int64_t)timeout_ms * 1000000;
    bool yes = false;
    int fd = ps_tcp_connect(host, port, deadline);
    if (fd >= 0) {
        /* the ClientHello fits an empty socket buffer: one non-blocking
         * send; the reply's first two bytes tell, however they trickle */
        unsigned char reply[8];
        size_t got = 0;
        bool sent = send(fd, client_hello, sizeof client_hello, MSG_NOSIGNAL) ==
                    (ssize_t)sizeof client_hello;
        while (sent && got < 2 && ps_fd_wait(fd, POLLIN, deadline)) {
            ssize_t n = recv(fd, reply + got, sizeof reply - got, 0);
            if (n <= 0) break;
            got += (size_t)n;
        }
        yes = ps_tls_record_start(reply, got);
        close(fd);
    }
    return yes;
}

bool ps_tls_url_port_speaks_tls(const char *url, int timeout_ms)
{
    if (strncasecmp(url, "http://", 7) != 0) return false;
    const char *h = url + 7, *end;
    char host[256], port[8] = "80";
    if (*h == '[') {
        end = strchr(h, ']');
        if (!end) return false;
        h++;
    } else {
        end = h + strcspn(h, ":/?#");
    }
    if (end == h || (size_t)(end - h) >= sizeof host) return false;
    memcpy(host, h, (size_t)(end - h));
    host[end - h] = '\0';
    const char *p = *end == ']' ? end + 1 : end;
    if (*p == ':') {
        size_t n = strcspn(p + 1, "/?#");
        if (n == 0 || n >= sizeof port) return false;
        memcpy(port, p + 1, n);
        port[n] = '\0';
    }
    return ps_tls_port_speaks_tls(host, port, timeout_ms);
}
