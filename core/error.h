/* error.h - a human-readable error message carried out of a failing call.
 *
 * Convention for the whole core library: functions return 0 on success and -1
 * on failure; when they take a `ps_error *` they fill it with a message that
 * names what was wrong (the flag, the file and line, the field). The caller
 * owns the ps_error (usually on its stack); nothing in it needs freeing. */
#ifndef PS_ERROR_H
#define PS_ERROR_H

#include <stddef.h>

typedef struct ps_error {
    char message[512];
} ps_error;

/* Sets the message (printf-style). Safe with err == NULL. Always returns -1 so
 * callers can write `return ps_error_set(err, ...);`. */
int ps_error_set(ps_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefixes the existing message with more context ("keys file line 3: ..."). */
int ps_error_prefix(ps_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
