/* customers.h - --customers free=200,pro=40,business=5: a run (or search)
 * whose keys are customers of each plan, each sending at a share (--quota,
 * default 0.95) of its plan's per-minute limit, so "how many customers of
 * each plan can one instance carry" is one command
 * (docs/capacity-testing.md).
 *
 * Keys come from --keys (the first N of each plan, in file order) or are
 * generated ("customer-PLAN-000001") for a server that is given them
 * (--write-customer-keys writes them as a keys file petstore-server
 * --keys-file reads). --time-scale N follows a server whose windows run N
 * times faster: each customer then sends N times as fast. */
#ifndef PS_LG_CUSTOMERS_H
#define PS_LG_CUSTOMERS_H

#include <stdio.h>

#include "core/error.h"
#include "loadgen/config.h"

/* Parses "free=200,pro=40,business=5" into counts[plan id]. Returns 0, or
 * -1 with err. */
int ps_lg_customers_parse(const char *text, int64_t counts[PS_PLAN_UNKNOWN + 1], ps_error *err);

/* Replaces cfg's keys with its customers (see above), each with its rate.
 * Returns 0, or -1 with err (too few keys of a plan, a plan without a
 * published limit). */
int ps_lg_customers_apply(ps_lg_config *cfg, ps_error *err);

/* Replaces cfg's keys with counts[plan id] customers of each plan: the
 * first of the pool (cfg->customer_pool, the keys file) or made-up keys
 * when there is no pool. Returns 0, or -1 with err when the pool has too
 * few keys of a plan (never a key reused above its quota). */
int ps_lg_customers_select(ps_lg_config *cfg, const int64_t counts[PS_PLAN_UNKNOWN + 1],
                           ps_error *err);

/* Customers of plan id cfg can draw: the pool's keys of that plan, or
 * INT64_MAX when the keys are made up. */
int64_t ps_lg_customers_available(const ps_lg_config *cfg, ps_plan_id id);

/* Writes cfg's keys as a keys file ("KEY PLAN" lines). Returns 0, or -1
 * with err. */
int ps_lg_customers_write_keys(const ps_lg_config *cfg, const char *path, ps_error *err);

/* The request rate (req/s) of one customer of plan id under cfg's --quota
 * and --time-scale; 0 when the plan has no published limit. */
double ps_lg_customer_rate(const ps_lg_config *cfg, ps_plan_id id);

#endif
