/* http_headers.h - an ordered list of HTTP header fields with
 * case-insensitive lookup (RFC 9110 field names are case-insensitive).
 *
 * The list owns copies of every name and value; ps_headers_free releases them. */
#ifndef PS_HTTP_HEADERS_H
#define PS_HTTP_HEADERS_H

#include <stddef.h>

typedef struct ps_header {
    char *name;
    char *value; /* leading and trailing white space removed */
} ps_header;

typedef struct ps_headers {
    ps_header *items;
    size_t count;
    size_t cap;
} ps_headers;

#define PS_HEADERS_INIT                                                                            \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

void ps_headers_init(ps_headers *h);
void ps_headers_free(ps_headers *h);
void ps_headers_clear(ps_headers *h);
/* Appends a field (copies both; trims OWS around the value). */
void ps_headers_add(ps_headers *h, const char *name, size_t name_len, const char *value,
                    size_t value_len);
/* Parses one raw "Name: value\r\n" line as delivered by libcurl's header
 * callback; status lines and blank lines are ignored. Returns 1 if added. */
int ps_headers_add_raw_line(ps_headers *h, const char *line, size_t len);
/* First value of the field, or NULL. */
const char *ps_headers_get(const ps_headers *h, const char *name);
/* How many times the field occurs. */
size_t ps_headers_count(const ps_headers *h, const char *name);

#endif
