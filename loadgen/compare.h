/* compare.h - `petstore-load compare BASE.json NEW.json`: two load
 * reports (runs, merges or searches) side by side, and whether the new
 * one regressed (docs/capacity-testing.md).
 *
 * Compared: the corrected latency percentiles (p50, p90, p99, p99.9,
 * max), throughput, error rate and, when both are searches, the knee
 * (max_rate). A figure regressed when it moved the wrong way by more than
 * --max-regression (default 10%) and, for a latency, by more than
 * --min-delta (default 1ms: sub-millisecond noise is no regression), for
 * the error rate by more than 0.1 point.
 *
 * Exit: 0 no regression, 99 a regression, 2 usage (or a report that is
 * not a load report). */
#ifndef PS_LG_COMPARE_H
#define PS_LG_COMPARE_H

/* argv[0] is "compare". */
int ps_lg_compare_main(int argc, char **argv);

#endif
