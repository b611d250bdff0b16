/* search_customers.c - `petstore-load search --customers`: each step a
 * mix of whole customers drawn from the keys file, each at --quota of its
 * plan's limit (search_step.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loadgen/customers.h"
#include "loadgen/search_step.h"

/* The customers of each plan in a step at about `rate`: the mix as given
 * scaled by rate over its rate, each plan rounded to whole customers (at
 * least one of a plan the mix has), never more than the keys file holds.
 * Returns the step's rate: its customers' rates summed. */
double ps_lg_search_customers_at(const search *S, double rate, int64_t counts[PS_PLAN_UNKNOWN + 1])
{
    double f = rate / S->base_rate;
    if (f > S->max_factor) f = S->max_factor;
    double real = 0;
    for (int p = 0; p <= PS_PLAN_UNKNOWN; p++) {
        counts[p] = S->base[p] > 0 ? llround((double)S->base[p] * f) : 0;
        if (S->base[p] > 0 && counts[p] < 1) counts[p] = 1;
        int64_t have = ps_lg_customers_available(&S->cfg, (ps_plan_id)p);
        if (counts[p] > have) counts[p] = have;
        real += (double)counts[p] * S->cust_rate[p];
    }
    return real;
}

/* The rate a step asked for `rate` really runs at: itself, or with
 * --customers the rate of whole customers (customers_at). */
double ps_lg_search_step_rate(const search *S, double rate)
{
    int64_t counts[PS_PLAN_UNKNOWN + 1];
    return S->cfg.have_customers ? ps_lg_search_customers_at(S, rate, counts) : rate;
}

/* "free=10,pro=2 ": a --customers step's customers, for its line. */
void ps_lg_search_customers_text(const step *st, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int p = 0; p <= PS_PLAN_UNKNOWN && used < size; p++)
        if (st->customers[p] > 0)
            used += (size_t)snprintf(out + used, size - used, "%s%s=%lld", used ? "," : "",
                                     ps_plan_name((ps_plan_id)p), (long long)st->customers[p]);
    if (used > 0 && used + 1 < size) memcpy(out + used, " ", 2);
}

/* Why the mix cannot grow past `rate`: the plan whose keys ran out. */
void ps_lg_search_keys_ran_out(search *S, double rate)
{
    int64_t counts[PS_PLAN_UNKNOWN + 1];
    ps_lg_search_customers_at(S, rate, counts);
    for (int p = 0; p <= PS_PLAN_UNKNOWN; p++)
        if (S->base[p] > 0 && counts[p] >= ps_lg_customers_available(&S->cfg, (ps_plan_id)p)) {
            snprintf(S->keys_why, sizeof S->keys_why,
                     "the keys ran out: the keys file has %lld %s keys, every one a customer at "
                     "%.1f req/s; no larger mix can be offered without a key above its quota "
                     "(more keys: --write-customer-keys)",
                     (long long)counts[p], ps_plan_name((ps_plan_id)p), rate);
            return;
        }
    snprintf(S->keys_why, sizeof S->keys_why, "the keys ran out at %.1f req/s", rate);
}

/* The first keys of each plan are customers in every step: a search that
 * would spend their day quota is told before it starts, as later steps'
 * refusals would otherwise read as the service's (a free key at 95% of
 * its minute quota spends its 1,000 a day in 17.5 s at --time-scale 60). */
#define PS_LG_SEARCH_STEPS_EXPECTED 12
static void day_quota_warning(const search *S)
{
    double step_s = (double)(S->step_ns + S->cfg.warmup_ns) / 1e9;
    for (int p = 0; p <= PS_PLAN_UNKNOWN && !S->quiet; p++) {
        int64_t pm, pd;
        if (S->base[p] <= 0 || !ps_plan_published((ps_plan_id)p, &pm, &pd) || pd <= 0) continue;
        double per_step = S->cust_rate[p] * step_s;
        double steps = (double)pd / per_step;
        if (steps >= PS_LG_SEARCH_STEPS_EXPECTED) continue;
        fprintf(stderr,
                "petstore-load search: warning: each %s customer spends %.0f of its %lld requests "
                "a day in a step (%.1f/s for %.1f s): its day quota runs out after %.1f steps "
                "(a search takes about %d), and later steps are refused; give the server larger "
                "day limits, or restart it between searches\n",
                ps_plan_name((ps_plan_id)p), per_step, (long long)pd, S->cust_rate[p], step_s,
                steps, PS_LG_SEARCH_STEPS_EXPECTED);
    }
}

/* --customers: each step a mix of whole customers drawn from the keys
 * file, each at --quota of its plan's limit. Returns 0, or -1 with
 * S->err. */
int ps_lg_search_setup_customers(search *S)
{
    if (S->cfg.npool == 0)
        return ps_error_set(&S->err,
                            "--customers: a search draws each step's customers from --keys FILE "
                            "(keys the target knows, each a customer; write one with "
                            "--write-customer-keys): made-up keys past the mix as given would "
                            "be unknown to the target");
    if (S->cfg.quota > 1)
        return ps_error_set(&S->err,
                            "--quota %g: a search offers each customer at most its quota (1), "
                            "so that a step's customers can all be served",
                            S->cfg.quota);
    S->ask.quota = S->cfg.quota;
    S->base_rate = 0;
    S->max_factor = INFINITY;
    for (int p = 0; p <= PS_PLAN_UNKNOWN; p++) {
        S->base[p] = S->cfg.customers[p];
        S->cust_rate[p] = ps_lg_customer_rate(&S->cfg, (ps_plan_id)p);
        S->base_rate += (double)S->base[p] * S->cust_rate[p];
        if (S->base[p] <= 0) continue;
        double f = (double)ps_lg_customers_available(&S->cfg, (ps_plan_id)p) / (double)S->base[p];
        if (f < S->max_factor) S->max_factor = f;
    }
    if (!S->from_given) {
        S->from = S->base_rate; /* the mix as given */
        if (S->to < S->from) S->to = S->from * 1000;
    }
    day_quota_warning(S);
    return 0;
}
