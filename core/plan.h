/* plan.h - the account plans of the interface and their rate limits
 * (spec section 8: Free 60/min 1,000/day, Pro 300/10,000, Business
 * 1,000/100,000, Enterprise custom). */
#ifndef PS_PLAN_H
#define PS_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"

typedef enum ps_plan_id {
    PS_PLAN_FREE,
    PS_PLAN_PRO,
    PS_PLAN_BUSINESS,
    PS_PLAN_ENTERPRISE,
    PS_PLAN_UNKNOWN, /* plan not told: limits unknown */
} ps_plan_id;

typedef struct ps_plan {
    ps_plan_id id;
    int64_t per_minute; /* 0 = unknown (enterprise without figures, or unknown plan) */
    int64_t per_day;
} ps_plan;

/* Lower-case plan name: "free", "pro", "business", "enterprise", "unknown". */
const char *ps_plan_name(ps_plan_id id);

/* Parses "free", "pro", "business" (case-insensitive) to their fixed limits,
 * and "enterprise" or "enterprise:PER_MINUTE:PER_DAY" to custom ones. Returns
 * 0, or -1 with a message naming the bad part. */
int ps_plan_parse(const char *text, ps_plan *out, ps_error *err);

/* The spec's published limits for a fixed plan (false for enterprise/unknown). */
bool ps_plan_published(ps_plan_id id, int64_t *per_minute, int64_t *per_day);

#endif
