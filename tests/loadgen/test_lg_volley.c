/* test_lg_volley.c - --verify-limits' window-opening volley: a key's new
 * window queues a volley for when it opens, its requests go out at once,
 * Resets that move by a second open nothing, one volley per key waits. */
#include <string.h>

#include "harness.h"
#include "loadgen/volley.h"

#define NS 1000000000LL
#define T0 1800000000LL

static ps_lg_resp with_reset(int64_t reset)
{
    ps_lg_resp r;
    memset(&r, 0, sizeof r);
    r.status = 200;
    r.seen = PS_LG_H_LIMIT | PS_LG_H_REMAINING | PS_LG_H_RESET;
    r.reset = reset;
    return r;
}

/* How many requests the volley gives at wall (mono: the same), and the key. */
static int take_all(ps_lg_volley *v, int64_t wall, size_t *key, int64_t *wake)
{
    int n = 0;
    *wake = INT64_MAX;
    while (ps_lg_volley_take(v, wall, wall, key, wake))
        n++;
    return n;
}

static void opens_with_the_window(void)
{
    ps_lg_volley v;
    size_t key = 99;
    int64_t wake;
    ps_lg_volley_init(&v, 3, 8);
    ps_lg_resp r = with_reset(T0 + 5);
    ps_lg_volley_note(&v, 1, &r, T0 * NS);
    /* not before the window ends: the wake names 30 ms past its Reset */
    CHECK_INT(take_all(&v, T0 * NS + NS, &key, &wake), 0);
    CHECK_INT(wake, (T0 + 5) * NS + 30000000LL);
    CHECK_INT(take_all(&v, wake, &key, &wake), 8);
    CHECK_INT(key, 1);
    CHECK_INT(v.sent, 8);
    /* the same window again, or a Reset a second on (a bucket's move): nothing */
    ps_lg_volley_note(&v, 1, &r, T0 * NS + NS);
    ps_lg_resp moved = with_reset(T0 + 6);
    ps_lg_volley_note(&v, 1, &moved, T0 * NS + NS);
    CHECK_INT(take_all(&v, (T0 + 9) * NS, &key, &wake), 0);
    CHECK_INT(wake, INT64_MAX);
    /* the next window (and a seconds-left Reset placed by arrival) queue one each */
    ps_lg_resp next = with_reset(T0 + 11);
    ps_lg_volley_note(&v, 1, &next, (T0 + 6) * NS);
    ps_lg_resp left = with_reset(4);
    ps_lg_volley_note(&v, 2, &left, (T0 + 6) * NS);
    CHECK_INT(take_all(&v, (T0 + 10) * NS + 50000000LL, &key, &wake), 8);
    CHECK_INT(key, 2);
    CHECK_INT(take_all(&v, (T0 + 11) * NS + 50000000LL, &key, &wake), 8);
    CHECK_INT(key, 1);
    ps_lg_volley_free(&v);
}

static void off_with_one_connection(void)
{
    ps_lg_volley v;
    size_t key;
    int64_t wake;
    ps_lg_volley_init(&v, 1, 1);
    ps_lg_resp r = with_reset(T0 + 5);
    ps_lg_volley_note(&v, 0, &r, T0 * NS);
    CHECK_INT(take_all(&v, (T0 + 6) * NS, &key, &wake), 0);
    ps_lg_volley_free(&v);
    ps_lg_volley_init(&v, 1, 64); /* at most PS_LG_VOLLEY_MAX at once */
    ps_lg_volley_note(&v, 0, &r, T0 * NS);
    CHECK_INT(take_all(&v, (T0 + 6) * NS, &key, &wake), PS_LG_VOLLEY_MAX);
    ps_lg_volley_free(&v);
}

int main(void)
{
    RUN(opens_with_the_window);
    RUN(off_with_one_connection);
    return TEST_EXIT();
}
