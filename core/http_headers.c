/* http_headers.c - header field list. */
#include "core/http_headers.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p) abort();
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void ps_headers_init(ps_headers *h)
{
    h->items = NULL;
    h->count = 0;
    h->cap = 0;
}

void ps_headers_clear(ps_headers *h)
{
    for (size_t i = 0; i < h->count; i++) {
        free(h->items[i].name);
        free(h->items[i].value);
    }
    h->count = 0;
}

void ps_headers_free(ps_headers *h)
{
    ps_headers_clear(h);
    free(h->items);
    ps_headers_init(h);
}

void ps_headers_add(ps_headers *h, const char *name, size_t name_len, const char *value,
                    size_t value_len)
{
    while (value_len && (*value == ' ' || *value == '\t'))
        value++, value_len--;
    while (value_len && (value[value_len - 1] == ' ' || value[value_len - 1] == '\t' ||
                         value[value_len - 1] == '\r' || value[value_len - 1] == '\n'))
        value_len--;
    if (h->count == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 16;
        h->items = realloc(h->items, h->cap * sizeof *h->items);
        if (!h->items) abort();
    }
    h->items[h->count].name = dup_n(name, name_len);
    h->items[h->count].value = dup_n(value, value_len);
    h->count++;
}

int ps_headers_add_raw_line(ps_headers *h, const char *line, size_t len)
{
    const char *colon = memchr(line, ':', len);
    if (!colon || colon == line) return 0;
    if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) return 0;
    size_t name_len = (size_t)(colon - line);
    ps_headers_add(h, line, name_len, colon + 1, len - name_len - 1);
    return 1;
}

const char *ps_headers_get(const ps_headers *h, const char *name)
{
    for (size_t i = 0; i < h->count; i++)
        if (strcasecmp(h->items[i].name, name) == 0) return h->items[i].value;
    return NULL;
}

size_t ps_headers_count(const ps_headers *h, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < h->count; i++)
        if (strcasecmp(h->items[i].name, name) == 0) n++;
    return n;
}
