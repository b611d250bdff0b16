/* report_url.c - target URLs with their credentials redacted, for reports. */
#include "reports/report_url.h"

#include <string.h>

/* Appends the parameters of a query (or fragment) part, each value as ***. */
static void redact_params(ps_buf *out, const char *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && p[end] != '&' && p[end] != ';')
            end++;
        const char *eq = memchr(p + i, '=', end - i);
        if (eq) {
            ps_buf_append(out, p + i, (size_t)(eq - (p + i)) + 1);
            ps_buf_puts(out, "***");
        } else if (end > i) {
            ps_buf_puts(out, "***"); /* a bare token may be the credential itself */
        }
        if (end < len) ps_buf_putc(out, p[end]);
        i = end + 1;
    }
}

void ps_report_url_redacted(ps_buf *out, const char *url)
{
    if (!url) return;
    const char *authority = strstr(url, "://");
    authority = authority ? authority + 3 : url;
    ps_buf_append(out, url, (size_t)(authority - url));
    size_t auth_len = strcspn(authority, "/?#");
    const char *at = NULL;
    for (size_t i = 0; i < auth_len; i++)
        if (authority[i] == '@') at = authority + i; /* the last '@' ends the userinfo */
    if (at) {
        ps_buf_puts(out, "***");
        ps_buf_append(out, at, auth_len - (size_t)(at - authority));
    } else {
        ps_buf_append(out, authority, auth_len);
    }
    const char *rest = authority + auth_len;
    size_t path_len = strcspn(rest, "?#");
    ps_buf_append(out, rest, path_len);
    rest += path_len;
    if (*rest == '?') {
        size_t query_len = strcspn(rest + 1, "#");
        ps_buf_putc(out, '?');
        redact_params(out, rest + 1, query_len);
        rest += 1 + query_len;
    }
    if (*rest == '#') ps_buf_puts(out, rest[1] ? "#***" : "#");
}
