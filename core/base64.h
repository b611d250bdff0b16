/* base64.h - standard (RFC 4648, "+/" alphabet, '=' padded) base64, the text
 * form HdrHistogram logs carry compressed histograms in.
 *
 * Both functions append to a caller-owned ps_buf; nothing else is allocated. */
#ifndef PS_BASE64_H
#define PS_BASE64_H

#include <stddef.h>

#include "core/buf.h"
#include "core/error.h"

/* Appends the padded base64 text of data[0..len) to out. */
void ps_base64_encode(const void *data, size_t len, ps_buf *out);

/* Appends the bytes encoded by text[0..len) to out. Padding is optional, but
 * where present it must be correct; any other character outside the alphabet
 * (whitespace included) is an error naming its offset. Returns 0, or -1 with a
 * message (out may then hold a partial result). */
int ps_base64_decode(const char *text, size_t len, ps_buf *out, ps_error *err);

#endif
