/* test_runner_politeness.c - per-key "nothing before" times after a 429. */
#include "harness.h"
#include "runner/politeness.h"

#define S 1000000000LL

static void indicated_time_blocks_only_that_key(void)
{
    ps_politeness *p = ps_politeness_create();
    CHECK_INT(ps_politeness_blocked_until(p, "a"), 0);
    CHECK_INT(ps_politeness_note_429(p, "a", 100 * S, 130 * S), 130 * S);
    CHECK_INT(ps_politeness_blocked_until(p, "a"), 130 * S);
    CHECK_INT(ps_politeness_blocked_until(p, "b"), 0);
    CHECK_INT(ps_politeness_blocked_until(p, NULL), 0);
    /* an earlier indication never shortens the wait already owed */
    CHECK_INT(ps_politeness_note_429(p, "a", 101 * S, 110 * S), 130 * S);
    /* requests without a key have their own slot */
    CHECK_INT(ps_politeness_note_429(p, NULL, 100 * S, 105 * S), 105 * S);
    CHECK_INT(ps_politeness_blocked_until(p, NULL), 105 * S);
    CHECK_INT(ps_politeness_blocked_until(p, "a"), 130 * S);
    ps_politeness_destroy(p);
}

static void no_indication_backs_off_exponentially(void)
{
    ps_politeness *p = ps_politeness_create();
    int64_t now = 1000 * S;
    CHECK_INT(ps_politeness_note_429(p, "k", now, 0), now + 1 * S);
    now += 1 * S;
    CHECK_INT(ps_politeness_note_429(p, "k", now, 0), now + 2 * S);
    now += 2 * S;
    CHECK_INT(ps_politeness_note_429(p, "k", now, 0), now + 4 * S);
    for (int i = 0; i < 10; i++)
        ps_politeness_note_429(p, "k", now, 0);
    CHECK_INT(ps_politeness_blocked_until(p, "k"), now + 64 * S); /* capped */
    /* an answer that is not a 429 starts the backoff again */
    ps_politeness_note_ok(p, "k");
    now += 100 * S;
    CHECK_INT(ps_politeness_note_429(p, "k", now, 0), now + 1 * S);
    /* an indication in the past counts as none */
    CHECK_INT(ps_politeness_note_429(p, "j", now, now - S), now + 1 * S);
    ps_politeness_destroy(p);
}

int main(void)
{
    RUN(indicated_time_blocks_only_that_key);
    RUN(no_indication_backs_off_exponentially);
    return TEST_EXIT();
}
