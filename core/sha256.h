/* sha256.h - SHA-256 (FIPS 180-4), HMAC-SHA256 (RFC 2104) and
 * PBKDF2-HMAC-SHA256 (RFC 8018): what petstore-load needs to name keys in
 * its reports without making them recoverable (issue 22: a key id that was
 * a fast hash of run id and key gave a 10-character key back in 22 s). Not
 * a general crypto library: no streaming API beyond what those need. */
#ifndef PS_SHA256_H
#define PS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define PS_SHA256_LEN 32

void ps_sha256(const void *data, size_t len, uint8_t out[PS_SHA256_LEN]);
void ps_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
                    uint8_t out[PS_SHA256_LEN]);
/* HMAC-SHA256 under one key for many messages: the key's padded blocks are
 * hashed once (ps_hmac_sha256 hashes them on every call). */
typedef struct ps_hmac_sha256_key {
    uint32_t inner[8], outer[8];
} ps_hmac_sha256_key;
void ps_hmac_sha256_init(ps_hmac_sha256_key *k, const void *key, size_t key_len);
void ps_hmac_sha256_with(const ps_hmac_sha256_key *k, const void *msg, size_t msg_len,
                         uint8_t out[PS_SHA256_LEN]);

/* PBKDF2-HMAC-SHA256 with iterations (>= 1) rounds; writes out_len bytes. */
void ps_pbkdf2_sha256(const void *password, size_t password_len, const void *salt, size_t salt_len,
                      uint32_t iterations, uint8_t *out, size_t out_len);

#endif
