/* tls_target.c - the https target's TLS context and its probe handshake. */
#include "loadgen/tls_target.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "loadgen/run.h"

/* A non-blocking socket connected to addr within timeout_ms, or -1 (errno). */
static int connect_within(const struct sockaddr_storage *addr, socklen_t addrlen, int timeout_ms)
{
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (const struct sockaddr *)addr, addrlen) == 0) return fd;
    if (errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int soerr = ETIMEDOUT;
        socklen_t len = sizeof soerr;
        if (poll(&p, 1, timeout_ms) == 1 &&
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr == 0)
            return fd;
        errno = soerr;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

int ps_lg_tls_target_prepare(const ps_lg_config *cfg, const struct sockaddr_storage *addr,
                             socklen_t addrlen, ps_tls_client **out, ps_error *err)
{
    ps_tls_client_opts opts = {.cacert = cfg->cacert,
                               .insecure = cfg->insecure,
                               .cert_file = cfg->cert_file,
                               .key_file = cfg->key_file};
    *out = NULL;
    if (ps_tls_client_create(&opts, out, err) != 0) return PS_LG_EXIT_USAGE;
    int64_t ms = cfg->timeout_ns / 1000000;
    if (ms > 10000) ms = 10000;
    int rc = PS_LG_EXIT_UNREACHABLE;
    int fd = connect_within(addr, addrlen, (int)ms);
    if (fd < 0) {
        ps_error_set(err, "target %s:%s unreachable: %s", cfg->host, cfg->port, strerror(errno));
        goto out;
    }
    if (ps_tls_client_handshake_blocking(*out, fd, cfg->host, (int)ms, err) != 0) {
        ps_error_prefix(err, "target %s:%s: ", cfg->host, cfg->port);
        goto out;
    }
    rc = 0;
out:
    if (fd >= 0) close(fd);
    if (rc != 0) {
        ps_tls_client_destroy(*out);
        *out = NULL;
    }
    return rc;
}
