/* sha256.c - SHA-256, HMAC-SHA256, PBKDF2-HMAC-SHA256 (sha256.h). */
#include "core/sha256.h"

#include <string.h>

typedef struct sha256 {
    uint32_t h[8];
    uint8_t block[64];
    size_t fill;
    uint64_t bytes;
} sha256;

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void compress(sha256 *s, const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5],
             g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 =
            h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += b;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}

static void init(sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->fill = 0;
    s->bytes = 0;
}

static void update(sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->bytes += len;
    while (len > 0) {
        if (s->fill == 0 && len >= 64) {
            compress(s, p);
            p += 64;
            len -= 64;
            continue;
        }
        size_t n = 64 - s->fill < len ? 64 - s->fill : len;
        memcpy(s->block + s->fill, p, n);
        s->fill += n;
        p += n;
        len -= n;
        if (s->fill == 64) {
            compress(s, s->block);
            s->fill = 0;
        }
    }
}

static void final(sha256 *s, uint8_t out[PS_SHA256_LEN])
{
    uint64_t bits = s->bytes * 8;
    uint8_t pad = 0x80;
    update(s, &pad, 1);
    pad = 0;
    while (s->fill != 56)
        update(s, &pad, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    update(s, len, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

void ps_sha256(const void *data, size_t len, uint8_t out[PS_SHA256_LEN])
{
    sha256 s;
    init(&s);
    update(&s, data, len);
    final(&s, out);
}

/* HMAC's inner and outer states after their padded key block, so PBKDF2's
 * rounds start from them instead of hashing the key again each time. */
typedef struct hmac {
    sha256 inner, outer;
} hmac;

static void hmac_init(hmac *m, const void *key, size_t key_len)
{
    uint8_t k[64] = {0}, ipad[64], opad[64];
    if (key_len > 64)
        ps_sha256(key, key_len, k);
    else
        memcpy(k, key, key_len);
    for (int i = 0; i < 64; i++) {
        ipad[i] = k[i] ^ 0x36;
        opad[i] = k[i] ^ 0x5c;
    }
    init(&m->inner);
    update(&m->inner, ipad, 64);
    init(&m->outer);
    update(&m->outer, opad, 64);
}

static void hmac_run(const hmac *m, const void *msg, size_t len, uint8_t out[PS_SHA256_LEN])
{
    sha256 s = m->inner;
    uint8_t inner[PS_SHA256_LEN];
    update(&s, msg, len);
    final(&s, inner);
    s = m->outer;
    update(&s, inner, sizeof inner);
    final(&s, out);
}

void ps_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
                    uint8_t out[PS_SHA256_LEN])
{
    hmac m;
    hmac_init(&m, key, key_len);
    hmac_run(&m, msg, msg_len, out);
}

void ps_hmac_sha256_init(ps_hmac_sha256_key *k, const void *key, size_t key_len)
{
    hmac m;
    hmac_init(&m, key, key_len);
    memcpy(k->inner, m.inner.h, sizeof k->inner);
    memcpy(k->outer, m.outer.h, sizeof k->outer);
}

void ps_hmac_sha256_with(const ps_hmac_sha256_key *k, const void *msg, size_t msg_len,
                         uint8_t out[PS_SHA256_LEN])
{
    hmac m;
    memcpy(m.inner.h, k->inner, sizeof k->inner);
    memcpy(m.outer.h, k->outer, sizeof k->outer);
    m.inner.fill = m.outer.fill = 0;
    m.inner.bytes = m.outer.bytes = 64; /* the key block */
    hmac_run(&m, msg, msg_len, out);
}

void ps_pbkdf2_sha256(const void *password, size_t password_len, const void *salt, size_t salt_len,
                      uint32_t iterations, uint8_t *out, size_t out_len)
{
    hmac m;
    hmac_init(&m, password, password_len);
    for (uint32_t block = 1; out_len > 0; block++) {
        uint8_t u[PS_SHA256_LEN], t[PS_SHA256_LEN];
        sha256 s = m.inner; /* U1 = HMAC(P, S || INT(block)) */
        uint8_t be[4] = {(uint8_t)(block >> 24), (uint8_t)(block >> 16), (uint8_t)(block >> 8),
                         (uint8_t)block};
        update(&s, salt, salt_len);
        update(&s, be, 4);
        uint8_t inner[PS_SHA256_LEN];
        final(&s, inner);
        s = m.outer;
        update(&s, inner, sizeof inner);
        final(&s, u);
        memcpy(t, u, sizeof t);
        for (uint32_t i = 1; i < iterations; i++) {
            hmac_run(&m, u, sizeof u, u);
            for (int j = 0; j < PS_SHA256_LEN; j++)
                t[j] ^= u[j];
        }
        size_t n = out_len < sizeof t ? out_len : sizeof t;
        memcpy(out, t, n);
        out += n;
        out_len -= n;
    }
}
