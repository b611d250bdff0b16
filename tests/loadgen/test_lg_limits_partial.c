/* test_lg_limits_partial.c - the limits verdict where the headers are
 * partial (issue 28, from issue 17's stacks): a 429 without X-RateLimit-*
 * headers still refuses its operation; admissions without a Reset are
 * placed in the windows the 429s name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "loadgen/key_label.h"
#include "loadgen/limits.h"

#define NS 1000000000LL
#define T0 (1700000000LL * NS + 200000000LL)

static ps_lg_config cfg_one_key(void)
{
    static ps_lg_key keys[1];
    static char k0[] = "abcdefgh-key-00zz";
    keys[0] = (ps_lg_key){.key = k0, .plan = {PS_PLAN_FREE, 60, 1000}};
    ps_lg_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.keys = keys;
    cfg.nkeys = 1;
    ps_lg_key_labels(&cfg);
    return cfg;
}

static ps_lg_resp resp(int status, int64_t remaining, int64_t reset)
{
    ps_lg_resp r;
    memset(&r, 0, sizeof r);
    r.status = status;
    r.seen = PS_LG_H_LIMIT | PS_LG_H_REMAINING | PS_LG_H_RESET;
    r.limit = 60;
    r.remaining = remaining;
    r.reset = reset;
    return r;
}

/* A 429 with no header but Retry-After: what a limiter in front that
 * names no window answers. */
static ps_lg_resp bare_429(void)
{
    ps_lg_resp r;
    memset(&r, 0, sizeof r);
    r.status = 429;
    r.seen = PS_LG_H_RETRY_AFTER;
    r.retry_after_wait_s = 5;
    return r;
}

/* Issue 17's stack: a service counting each operation alone admits 60
 * lists and 60 creates in one minute window against a limit of 60 for the
 * key, each answer's Remaining falling per operation, and refuses both
 * operations after with bare 429s. Both operations were refused, so both
 * count: 120 admitted against 60 is an over-admission. Before, the bare
 * 429s counted for neither operation and the verdict saw none. */
static void bare_429_refuses_its_operation(void)
{
    ps_lg_config cfg = cfg_one_key();
    ps_lg_limits l;
    ps_lg_limits_init(&l, 1);
    int64_t reset = 1700000061, t = T0;
    for (int i = 0; i < 60; i++) {
        ps_lg_resp r = resp(200, 59 - i, reset);
        ps_lg_limits_observe_op(&l, 0, PS_LG_OP_LIST, &r, t += 1000000, false);
        ps_lg_resp c = resp(201, 59 - i, reset);
        ps_lg_limits_observe_op(&l, 0, PS_LG_OP_CREATE, &c, t += 1000000, false);
    }
    for (int i = 0; i < 20; i++) {
        ps_lg_resp r = bare_429();
        ps_lg_limits_observe_op(&l, 0, PS_LG_OP_LIST, &r, t += 1000000, false);
        ps_lg_limits_observe_op(&l, 0, PS_LG_OP_CREATE, &r, t += 1000000, false);
    }
    ps_lg_violation *v;
    size_t n;
    size_t failing = ps_lg_limits_verify(&l, &cfg, &v, &n);
    bool over = false;
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, "  %s: %s\n", ps_lg_violation_kind_name(v[i].kind), v[i].message);
        over |= v[i].kind == PS_LG_V_OVER_ADMISSION && v[i].admitted == 120;
    }
    CHECK(failing >= 1);
    CHECK(over);
    free(v);
    ps_lg_limits_free(&l);
}

/* Issue 17's other stack: workers each counting alone admit 70 lists in a
 * minute window of 60, their 2xx answers carrying Limit and Remaining but
 * no Reset, while every 429 names the window's end. Placed by the windows
 * the 429s name, the 70 are an over-admission; before, they were placed in
 * no window and the verdict said only missing_headers. Admissions outside
 * every named window stay unplaced. */
static void admissions_placed_by_the_429s_windows(void)
{
    ps_lg_config cfg = cfg_one_key();
    cfg.time_scale = 1;
    ps_lg_limits l;
    ps_lg_limits_init(&l, 1);
    int64_t reset = 1700000061, t = T0 + NS; /* the window: [reset - 60, reset) */
    for (int i = 0; i < 70; i++) {
        ps_lg_resp r = resp(200, 59 - i % 60, reset);
        r.seen &= ~(unsigned)PS_LG_H_RESET;
        ps_lg_limits_observe_op(&l, 0, PS_LG_OP_LIST, &r, t += 100000000, false);
    }
    for (int i = 0; i < 5; i++) {
        ps_lg_resp r = resp(429, 0, reset);
        r.seen |= PS_LG_H_RETRY_AFTER;
        r.retry_after_wait_s = 5;
        ps_lg_limits_observe_op(&l, 0, PS_LG_OP_LIST, &r, t += 100000000, false);
    }
    ps_lg_resp late = resp(200, 59, reset);
    late.seen &= ~(unsigned)PS_LG_H_RESET;
    ps_lg_limits_observe_op(&l, 0, PS_LG_OP_LIST, &late, reset * NS + NS, false);
    ps_lg_limits_place(&l, &cfg);
    CHECK_INT(l.keys[0].placed, 70);
    ps_lg_violation *v;
    size_t n;
    size_t failing = ps_lg_limits_verify(&l, &cfg, &v, &n);
    bool over = false;
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, "  %s: %s\n", ps_lg_violation_kind_name(v[i].kind), v[i].message);
        over |= v[i].kind == PS_LG_V_OVER_ADMISSION && v[i].admitted == 70;
    }
    CHECK(failing >= 1);
    CHECK(over);
    free(v);
    ps_lg_limits_free(&l);
}

int main(void)
{
    RUN(bare_429_refuses_its_operation);
    RUN(admissions_placed_by_the_429s_windows);
    return TEST_EXIT();
}
