/* hash.h - the one hash of byte strings for the project's hash tables (the
 * server's keyring and rate-limit counters). Not for security: a table that
 * faces untrusted keys still compares the bytes (auth.c in constant time). */
#ifndef PS_HASH_H
#define PS_HASH_H

#include <stddef.h>
#include <stdint.h>

/* 64-bit FNV-1a of the len bytes at s, then the murmur3 64-bit finaliser,
 * so the low bits (a power-of-two table's index) depend on every byte. */
uint64_t ps_hash_bytes(const void *s, size_t len);

#endif
