/* responses.h - the bytes the server answers with: Error bodies, Category
 * objects, the rate-limit header values (with the faults that bend them),
 * and the reason phrases. Pure functions, so the unit tests pin them down
 * without a socket. */
#ifndef PS_RESPONSES_H
#define PS_RESPONSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "reference-server/faults.h"
#include "reference-server/limiter.h"

/* Reason phrase of an HTTP status ("Too Many Requests"). */
const char *ps_reason_phrase(int status);

/* Appends an Error body {"code":...,"message":...,"status":N}. The faults
 * error-status-mismatch and error-missing-code bend it. */
void ps_render_error(ps_buf *b, int status, const char *code, const char *message,
                     ps_fault_set faults);

/* Appends one Category object; description only when has_description. */
void ps_render_category(ps_buf *b, int64_t id, const char *name, size_t name_len,
                        const char *description, size_t description_len, bool has_description);

/* Re-renders a list JSON array (as the store renders it) with every id as a
 * JSON string (fault list-id-string). Returns 0, -1 if json is not an array
 * of objects. */
int ps_render_list_string_ids(ps_buf *b, const char *json, size_t len);

/* The first n items of a list JSON array, as an array (fault list-page-cut).
 * Returns 0, -1 if json is not an array. */
int ps_render_list_first(ps_buf *b, const char *json, size_t len, size_t n);

/* Trims ASCII white space (space, tab, CR, LF, FF, VT) from both ends of
 * the string *s of *len bytes, in place (fault trim-whitespace). */
void ps_trim_ascii_space(const char **s, size_t *len);

/* Replaces every non-ASCII UTF-8 sequence of s by '?' (fault unicode-mangled). */
void ps_mangle_unicode(ps_buf *b, const char *s, size_t len);

/* The rate-limit header values of one response. */
typedef struct ps_rate_headers {
    bool present; /* false: no X-RateLimit-* at all */
    int64_t limit, remaining, reset;
    bool retry_after_present;
    int64_t retry_after;
    int64_t retry_after_rfc850_at; /* fault retry-after-rfc850: the date sent, else 0 */
} ps_rate_headers;

/* Computes the header values for decision d of a response with the given
 * status, at real time now_s; window_s is the real length of the window d
 * describes (for reset-unstable); seq is a per-response counter. */
void ps_rate_headers_compute(const ps_limit_decision *d, int status, int64_t now_s,
                             int64_t window_s, uint64_t seq, ps_fault_set faults,
                             ps_rate_headers *out);

/* Appends the header lines ("X-RateLimit-Limit: 60\r\n" ...). */
void ps_rate_headers_render(ps_buf *b, const ps_rate_headers *h);

#endif
