/* tls_target.h - an https:// target on the epoll engine: the run's TLS
 * context (core/tls_client.h) from --cacert / --insecure, and one
 * handshake before any thread starts, so a wrong CA, a certificate for
 * another name or a plain-HTTP port is said once and clearly instead of
 * as every request failing. */
#ifndef PS_LG_TLS_TARGET_H
#define PS_LG_TLS_TARGET_H

#include <sys/socket.h>

#include "core/error.h"
#include "core/tls_client.h"
#include "loadgen/config.h"

/* Builds the context into *out and handshakes once with the target at
 * addr. Returns 0; 2 (usage: an unreadable CA file) or 3 (unreachable:
 * no connection or no handshake) with err, *out then NULL. The caller
 * frees *out with ps_tls_client_destroy after the threads are joined. */
int ps_lg_tls_target_prepare(const ps_lg_config *cfg, const struct sockaddr_storage *addr,
                             socklen_t addrlen, ps_tls_client **out, ps_error *err);

#endif
