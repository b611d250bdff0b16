/* base64.c - RFC 4648 base64 encoding and strict decoding. */
#include "core/base64.h"

#include <stdint.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void ps_base64_encode(const void *data, size_t len, ps_buf *out)
{
    const unsigned char *p = data;
    ps_buf_reserve(out, (len + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        char q[4] = {alphabet[v >> 18], alphabet[(v >> 12) & 63], alphabet[(v >> 6) & 63],
                     alphabet[v & 63]};
        ps_buf_append(out, q, 4);
    }
    if (i < len) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len) v |= (uint32_t)p[i + 1] << 8;
        char q[4] = {alphabet[v >> 18], alphabet[(v >> 12) & 63],
                     i + 1 < len ? alphabet[(v >> 6) & 63] : '=', '='};
        ps_buf_append(out, q, 4);
    }
}

static int sextet(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

int ps_base64_decode(const char *text, size_t len, ps_buf *out, ps_error *err)
{
    size_t data_len = len;
    size_t pad = 0;
    while (data_len > 0 && text[data_len - 1] == '=' && pad < 2) {
        data_len--;
        pad++;
    }
    if (pad && len % 4 != 0)
        return ps_error_set(err,
                            "base64: padding at offset %zu leaves a length of %zu, not a "
                            "multiple of 4",
                            data_len, len);
    if (data_len % 4 == 1)
        return ps_error_set(err, "base64: %zu characters cannot encode whole bytes", data_len);
    ps_buf_reserve(out, data_len / 4 * 3 + 2);
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < data_len; i++) {
        int s = sextet(text[i]);
        if (s < 0) {
            unsigned char c = (unsigned char)text[i];
            if (c == '=')
                return ps_error_set(err, "base64: '=' padding inside the text at offset %zu", i);
            return ps_error_set(err, "base64: byte 0x%02x at offset %zu is not in the alphabet", c,
                                i);
        }
        acc = (acc << 6) | (uint32_t)s;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            ps_buf_putc(out, (char)((acc >> bits) & 0xff));
        }
    }
    /* Leftover bits of the last quantum must be zero, or two texts would decode
     * to the same bytes and a corrupted one would pass unnoticed. */
    if (bits > 0 && (acc & ((1u << bits) - 1)) != 0)
        return ps_error_set(err, "base64: the last character has non-zero unused bits");
    return 0;
}
