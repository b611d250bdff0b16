/* test_sha256.c - SHA-256, HMAC-SHA256 and PBKDF2-HMAC-SHA256 against
 * published vectors (FIPS 180-2 "abc", RFC 4231-style HMAC of a long key,
 * RFC 7914's PBKDF2-HMAC-SHA256 vector) and Python's hashlib. */
#include <stdio.h>
#include <string.h>

#include "core/sha256.h"
#include "harness.h"

static void hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

static void sha256_vectors(void)
{
    uint8_t d[32];
    char h[65];
    ps_sha256("abc", 3, d);
    hex(d, 32, h);
    CHECK_STR(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    char a[1000];
    memset(a, 'a', sizeof a);
    ps_sha256(a, sizeof a, d);
    hex(d, 32, h);
    CHECK_STR(h, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

static void hmac_vectors(void)
{
    uint8_t d[32];
    char h[65];
    const char *fox = "The quick brown fox jumps over the lazy dog";
    ps_hmac_sha256("key", 3, fox, strlen(fox), d);
    hex(d, 32, h);
    CHECK_STR(h, "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");
    ps_hmac_sha256_key mk; /* the same through a key made once */
    ps_hmac_sha256_init(&mk, "key", 3);
    ps_hmac_sha256_with(&mk, fox, strlen(fox), d);
    hex(d, 32, h);
    CHECK_STR(h, "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");
    char k[100];
    memset(k, 'k', sizeof k); /* longer than a block: hashed first */
    ps_hmac_sha256(k, sizeof k, "msg", 3, d);
    hex(d, 32, h);
    CHECK_STR(h, "bd56a1782c2830e8abc6ed866a57a1230661e650b84c62f7ee3accc5fa5af491");
}

static void pbkdf2_vectors(void)
{
    uint8_t d[64];
    char h[129];
    ps_pbkdf2_sha256("passwd", 6, "salt", 4, 1, d, 64); /* RFC 7914 section 11 */
    hex(d, 64, h);
    CHECK_STR(h, "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645"
                 "991664b39d77ef317c71b845b1e30bd509112041d3a19783");
    ps_pbkdf2_sha256("password", 8, "salt", 4, 4096, d, 20);
    hex(d, 20, h);
    CHECK_STR(h, "c5e478d59288c841aa530db6845c4c8d962893a0");
}

int main(void)
{
    RUN(sha256_vectors);
    RUN(hmac_vectors);
    RUN(pbkdf2_vectors);
    return TEST_EXIT();
}
