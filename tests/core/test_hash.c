/* test_hash.c - ps_hash_bytes is FNV-1a plus the murmur3 finaliser (values
 * computed independently), and its low bits spread similar keys. */
#include "core/hash.h"
#include "harness.h"

static void known_values(void)
{
    CHECK(ps_hash_bytes("", 0) == 0xd725c98e9509182eULL);
    CHECK(ps_hash_bytes("a", 1) == 0x43a941547f0150e5ULL);
    CHECK(ps_hash_bytes("demo-free-key", 13) == 0x93e681c0c3f52a6cULL);
    CHECK(ps_hash_bytes("ab", 2) != ps_hash_bytes("ba", 2));
}

/* 1024 keys differing only in their last characters fill most of 64 buckets
 * indexed by the low 6 bits: plain FNV-1a is what this would catch. */
static void low_bits_spread_similar_keys(void)
{
    int used[64] = {0};
    char key[32];
    for (int i = 0; i < 1024; i++) {
        int n = snprintf(key, sizeof key, "key-%04d", i);
        used[ps_hash_bytes(key, (size_t)n) & 63]++;
    }
    int empty = 0, fullest = 0;
    for (int b = 0; b < 64; b++) {
        if (used[b] == 0) empty++;
        if (used[b] > fullest) fullest = used[b];
    }
    CHECK_INT(empty, 0);
    CHECK(fullest < 40); /* 16 expected per bucket */
}

int main(void)
{
    RUN(known_values);
    RUN(low_bits_spread_similar_keys);
    return TEST_EXIT();
}
