/* schedule.c - open-model due times and the operation mix. */
#include "loadgen/schedule.h"

#include <math.h>

int64_t ps_lg_rate_due_ns(const ps_lg_rate *r, int64_t k)
{
    double n = (double)k + r->phase;
    double t;
    if (n <= 0) return 0;
    if (r->r1 == r->r2 || r->span_s <= 0) {
        if (r->r2 <= 0) return INT64_MAX;
        t = n / r->r2;
    } else {
        /* N(t) = r1 t + a t^2 with a = (r2 - r1) / (2 span) while t <= span. */
        double a = (r->r2 - r->r1) / (2.0 * r->span_s);
        double n_span = r->r1 * r->span_s + a * r->span_s * r->span_s;
        if (n <= n_span) {
            double disc = r->r1 * r->r1 + 4.0 * a * n;
            if (disc < 0) return INT64_MAX; /* a falling ramp that ends before request n */
            /* The stable form of the smaller positive root. */
            t = 2.0 * n / (r->r1 + sqrt(disc));
            if (!(t >= 0)) return INT64_MAX;
        } else {
            if (r->r2 <= 0) return INT64_MAX;
            t = r->span_s + (n - n_span) / r->r2;
        }
    }
    double ns = t * 1e9;
    return ns >= 9.2e18 ? INT64_MAX : (int64_t)ns;
}

ps_lg_op ps_lg_mix_op(const unsigned mix[PS_LG_OPS], uint64_t k)
{
    uint64_t total = (uint64_t)mix[PS_LG_OP_LIST] + mix[PS_LG_OP_CREATE];
    uint64_t c = mix[PS_LG_OP_CREATE];
    if (c == 0) return PS_LG_OP_LIST;
    uint64_t i = k % total;
    /* Request i is a create when the count of creates owed steps up. */
    return (i + 1) * c / total > i * c / total ? PS_LG_OP_CREATE : PS_LG_OP_LIST;
}
