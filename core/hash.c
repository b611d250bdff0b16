/* hash.c - FNV-1a with a finaliser (see hash.h). */
#include "core/hash.h"

uint64_t ps_hash_bytes(const void *s, size_t len)
{
    const unsigned char *p = s;
    uint64_t h = 1469598103934665603ULL; /* FNV-1a offset basis */
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL; /* FNV prime */
    }
    /* FNV-1a alone mixes the last bytes poorly into the low bits. */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}
