/* schedule.c - open-model due times and the operation mix. */
#include "loadgen/schedule.h"

#include <math.h>

int64_t ps_lg_rate_due_ns(const ps_lg_rate *r, int64_t k)
{
    return ps_lg_rate_time_ns(r, (double)k + r->phase);
}

int64_t ps_lg_rate_time_ns(const ps_lg_rate *r, double n)
{
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

uint64_t ps_lg_rng_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

double ps_lg_rng_unit(uint64_t *state)
{
    return (double)(ps_lg_rng_next(state) >> 11) * 0x1.0p-53;
}

uint64_t ps_lg_rng_seed(uint64_t seed, int64_t stream, int thread)
{
    uint64_t s = seed ^ (UINT64_C(0x6A09E667F3BCC909) * (uint64_t)(stream + 2));
    s ^= UINT64_C(0xBB67AE8584CAA73B) * (uint64_t)(thread + 1);
    ps_lg_rng_next(&s);
    return s;
}

double ps_lg_stream_phase(uint64_t seed, int64_t stream)
{
    uint64_t s = ps_lg_rng_seed(seed, stream, -1);
    return ps_lg_rng_unit(&s);
}

double ps_lg_rng_exp(uint64_t *state)
{
    /* 1 - u is in (0, 1]: the log is finite. */
    return -log(1.0 - ps_lg_rng_unit(state));
}
