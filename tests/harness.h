/* harness.h - the few assertion macros the unit tests use. A failed check
 * prints file, line and the values, and the test exits non-zero at the end. */
#ifndef PS_TEST_HARNESS_H
#define PS_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int ps_test_failures;
static int ps_test_checks;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        ps_test_checks++;                                                                          \
        if (!(cond)) {                                                                             \
            ps_test_failures++;                                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                      \
        ps_test_checks++;                                                                          \
        if (va_ != vb_) {                                                                          \
            ps_test_failures++;                                                                    \
            fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a,    \
                    va_, #b, vb_);                                                                 \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *sa_ = (a), *sb_ = (b);                                                         \
        ps_test_checks++;                                                                          \
        if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                                               \
            ps_test_failures++;                                                                    \
            fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a,      \
                    sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");                                   \
        }                                                                                          \
    } while (0)

/* Runs one named test function; use inside main. */
#define RUN(fn)                                                                                    \
    do {                                                                                           \
        int before_ = ps_test_failures;                                                            \
        fn();                                                                                      \
        fprintf(stderr, "%s %s\n", ps_test_failures == before_ ? "ok  " : "FAIL", #fn);            \
    } while (0)

/* How much slower than the normal build a timed bound may allow: ASan,
 * UBSan and TSan builds run the same code several times slower. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PS_TEST_SLOW 6
#else
#define PS_TEST_SLOW 1
#endif

/* A deterministic number below n (xorshift64, the seed fixed): inputs a
 * failure can be replayed with. */
static uint64_t ps_test_rng = 88172645463325252ULL;
static inline int64_t ps_test_rand_below(int64_t n)
{
    ps_test_rng ^= ps_test_rng << 13;
    ps_test_rng ^= ps_test_rng >> 7;
    ps_test_rng ^= ps_test_rng << 17;
    return (int64_t)(ps_test_rng % (uint64_t)n);
}

#define TEST_EXIT()                                                                                \
    (fprintf(stderr, "%d checks, %d failed\n", ps_test_checks, ps_test_failures),                  \
     ps_test_failures ? 1 : 0)

#endif
