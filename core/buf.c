/* buf.c - growable byte buffer. */
#include "core/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ps_buf_init(ps_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void ps_buf_free(ps_buf *b)
{
    free(b->data);
    ps_buf_init(b);
}

void ps_buf_reset(ps_buf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

void ps_buf_reserve(ps_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        fprintf(stderr, "fatal: out of memory (%zu bytes)\n", cap);
        abort();
    }
    b->data = p;
    b->cap = cap;
}

void ps_buf_append(ps_buf *b, const void *data, size_t len)
{
    ps_buf_reserve(b, len);
    if (len) memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void ps_buf_put_shell_quoted(ps_buf *b, const char *s, size_t len)
{
    ps_buf_putc(b, '\'');
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\'')
            ps_buf_puts(b, "'\\''");
        else
            ps_buf_putc(b, s[i]);
    }
    ps_buf_putc(b, '\'');
}

void ps_buf_put_int(ps_buf *b, long long v)
{
    char tmp[24];
    char *end = tmp + sizeof tmp, *p = end;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) *--p = '-';
    ps_buf_append(b, p, (size_t)(end - p));
}

void ps_buf_puts(ps_buf *b, const char *s)
{
    ps_buf_append(b, s, strlen(s));
}

void ps_buf_putc(ps_buf *b, char c)
{
    ps_buf_append(b, &c, 1);
}

void ps_buf_vprintf(ps_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return;
    ps_buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void ps_buf_printf(ps_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ps_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

/* Length of the well-formed UTF-8 sequence at s (at most n bytes), and its
 * code point in *cp; 0 when the bytes there are not UTF-8 (bad lead byte,
 * missing continuation, overlong form, surrogate, above U+10FFFF). */
static size_t utf8_sequence(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0];
    size_t need;
    unsigned min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        need = 2, min = 0x80, c &= 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        need = 3, min = 0x800, c &= 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 4, min = 0x10000, c &= 0x07;
    } else {
        return 0;
    }
    if (n < need) return 0;
    for (size_t k = 1; k < need; k++) {
        if ((s[k] & 0xc0) != 0x80) return 0;
        c = (c << 6) | (s[k] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    *cp = c;
    return need;
}

void ps_buf_json_string(ps_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    ps_buf_reserve(b, len + 2);
    ps_buf_putc(b, '"');
    size_t run = 0; /* start of the pending run of bytes copied as they are */
    size_t i = 0;
    while (i < len) {
        unsigned cp = 0;
        size_t n = utf8_sequence(u + i, len - i, &cp);
        const char *esc = NULL;
        char tmp[7];
        if (n == 0) {
            esc = "\\ufffd"; /* not UTF-8: the replacement character, one per byte */
            n = 1;
        } else {
            switch (cp) {
            case '"':
                esc = "\\\"";
                break;
            case '\\':
                esc = "\\\\";
                break;
            case '\n':
                esc = "\\n";
                break;
            case '\r':
                esc = "\\r";
                break;
            case '\t':
                esc = "\\t";
                break;
            case '\b':
                esc = "\\b";
                break;
            case '\f':
                esc = "\\f";
                break;
            default:
                /* C0, DEL and C1 controls, the HTML-significant <, > and & (the
                 * output may sit in a <script> block), and U+2028/U+2029, which
                 * end a line in JavaScript and in many log viewers. */
                if (cp < 0x20 || cp == '<' || cp == '>' || cp == '&' ||
                    (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029) {
                    tmp[0] = '\\';
                    tmp[1] = 'u';
                    tmp[2] = hex[(cp >> 12) & 15];
                    tmp[3] = hex[(cp >> 8) & 15];
                    tmp[4] = hex[(cp >> 4) & 15];
                    tmp[5] = hex[cp & 15];
                    tmp[6] = '\0';
                    esc = tmp;
                }
            }
        }
        if (esc) {
            ps_buf_append(b, s + run, i - run);
            ps_buf_puts(b, esc);
            run = i + n;
        }
        i += n;
    }
    ps_buf_append(b, s + run, len - run);
    ps_buf_putc(b, '"');
}

/* The length of the valid UTF-8 sequence at p (at most left bytes), 0 when
 * none starts there. */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
    size_t n = p[0] >= 0xf0 && p[0] <= 0xf4   ? 4
               : p[0] >= 0xe0 && p[0] <= 0xef ? 3
               : p[0] >= 0xc2 && p[0] <= 0xdf ? 2
                                              : 0;
    if (n > left) return 0;
    for (size_t k = 1; k < n; k++)
        if ((p[k] & 0xc0) != 0x80) return 0;
    return n;
}

void ps_buf_put_visible(ps_buf *b, const char *s, size_t len, bool keep_lines)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0; /* s[run, i) is copied as-is */
    while (i < len) {
        unsigned char c = p[i];
        size_t n = 1;
        bool plain = c >= 0x20 && c < 0x7f;
        if (c < 0x80 && !plain) plain = keep_lines && (c == '\n' || c == '\t');
        if (c >= 0x80) {
            n = utf8_seq(p + i, len - i);
            plain = n && !(c == 0xc2 && p[i + 1] < 0xa0);
        }
        if (plain) {
            i += n;
            continue;
        }
        ps_buf_append(b, s + run, i - run);
        if (n == 2) /* a C1 control as UTF-8 */
            ps_buf_printf(b, "\\u%04x", p[i + 1]);
        else
            ps_buf_printf(b, "\\x%02x", c);
        i += n ? n : 1;
        run = i;
    }
    ps_buf_append(b, s + run, i - run);
}

void ps_buf_html_escape(ps_buf *b, const char *s, size_t len)
{
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        const char *esc = NULL;
        switch (s[i]) {
        case '&':
            esc = "&amp;";
            break;
        case '<':
            esc = "&lt;";
            break;
        case '>':
            esc = "&gt;";
            break;
        case '"':
            esc = "&quot;";
            break;
        case '\'':
            esc = "&#39;";
            break;
        default:
            break;
        }
        if (esc) {
            ps_buf_append(b, s + run, i - run);
            ps_buf_puts(b, esc);
            run = i + 1;
        }
    }
    ps_buf_append(b, s + run, len - run);
}

char *ps_buf_detach(ps_buf *b)
{
    if (!b->data) ps_buf_reserve(b, 0), b->data[0] = '\0';
    char *p = b->data;
    ps_buf_init(b);
    return p;
}

int ps_buf_read_file(ps_buf *b, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ps_buf_append(b, chunk, n);
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        errno = EIO;
        return -1;
    }
    if (!b->data) ps_buf_reserve(b, 0), b->data[0] = '\0';
    return 0;
}
