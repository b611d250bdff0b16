/* buf.h - growable byte buffer, the one string builder of the project.
 *
 * A ps_buf owns its memory; ps_buf_free releases it. data is always
 * NUL-terminated (an extra byte past len) so it can be used as a C string when
 * the content has no NUL. Allocation failure aborts: every caller would
 * otherwise have to handle it and none can do anything useful. */
#ifndef PS_BUF_H
#define PS_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct ps_buf {
    char *data;
    size_t len;
    size_t cap;
} ps_buf;

#define PS_BUF_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

void ps_buf_init(ps_buf *b);
void ps_buf_free(ps_buf *b);
void ps_buf_reset(ps_buf *b); /* len = 0, keeps capacity */
void ps_buf_reserve(ps_buf *b, size_t extra);
void ps_buf_append(ps_buf *b, const void *data, size_t len);
void ps_buf_puts(ps_buf *b, const char *s);
void ps_buf_putc(ps_buf *b, char c);
/* Appends v in decimal: what ps_buf_printf("%lld") gives, without printf's
 * cost (the server formats several numbers per response). */
void ps_buf_put_int(ps_buf *b, long long v);
/* Appends s[0..len) in single quotes for a POSIX shell, each ' written as
 * '\'' (curl lines in reports and replay files). */
void ps_buf_put_shell_quoted(ps_buf *b, const char *s, size_t len);
void ps_buf_printf(ps_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ps_buf_vprintf(ps_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Appends s as a JSON string literal, quotes included: the one JSON string
 * escaper of the project. Valid UTF-8 is copied as-is except that every C0
 * control, DEL, C1 control and U+2028/U+2029 is escaped (short forms where JSON
 * has them, else \uXXXX), and so are '"', '\\', and '<', '>', '&' (so the
 * output is also safe inside HTML <script> blocks). Each byte that is not part
 * of well-formed UTF-8 becomes \ufffd, so untrusted bytes always give valid
 * JSON. */
void ps_buf_json_string(ps_buf *b, const char *s, size_t len);
/* Appends s[0..len) for a terminal: the one terminal escaper of the project,
 * for text a peer or a file chose (replies, replay files), which must not
 * drive the terminal. C0 controls (but newline and tab when keep_lines), NUL
 * and DEL become \xNN, C1 controls written as UTF-8 become \u00NN, and a byte
 * that starts no valid UTF-8 sequence (a bare C1 byte included) becomes
 * \xNN; valid UTF-8 is copied as-is. */
void ps_buf_put_visible(ps_buf *b, const char *s, size_t len, bool keep_lines);
/* Appends s with &, <, >, " and ' escaped for HTML text and attributes. */
void ps_buf_html_escape(ps_buf *b, const char *s, size_t len);
/* Transfers ownership of the data to the caller (never NULL) and resets b. */
char *ps_buf_detach(ps_buf *b);

/* Reads a whole file into b. Returns 0, or -1 with errno set. */
int ps_buf_read_file(ps_buf *b, const char *path);

#endif
