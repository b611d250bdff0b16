/* fd_limit.h - raising the process's open-file limit (RLIMIT_NOFILE) for
 * programs that hold thousands of sockets (the server, petstore-load). */
#ifndef PS_FD_LIMIT_H
#define PS_FD_LIMIT_H

#include <stdint.h>

/* When the soft limit is below want, raises it to the hard limit (as far as
 * the system lets an unprivileged process). Returns the soft limit in force
 * afterwards, INT64_MAX when unlimited, or -1 when it cannot be read. The
 * caller decides what a too-low result means (fewer connections, a warning). */
int64_t ps_fd_limit_raise(int64_t want);

#endif
