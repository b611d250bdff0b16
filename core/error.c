/* error.c - formatting of ps_error messages. */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ps_error_set(ps_error *err, const char *fmt, ...)
{
    if (!err) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}

int ps_error_prefix(ps_error *err, const char *fmt, ...)
{
    if (!err) return -1;
    char prefix[256];
    char old[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    /* Truncation is acceptable: the start of a message says the most. */
    size_t plen = strnlen(prefix, sizeof prefix);
    if (plen >= sizeof err->message) plen = sizeof err->message - 1;
    memcpy(err->message, prefix, plen);
    size_t rest = strnlen(old, sizeof old);
    if (rest > sizeof err->message - 1 - plen) rest = sizeof err->message - 1 - plen;
    memcpy(err->message + plen, old, rest);
    err->message[plen + rest] = '\0';
    return -1;
}
