/* search.h - `petstore-load search`: the highest rate a target serves
 * within its objectives, found by measurement (docs/capacity-testing.md).
 *
 * Each step is a whole open-model run (run.h) at one target rate, judged
 * from its own JSON document: it passes only if every --slo holds, the
 * error budget holds, --verify-limits (when given) finds no violation and
 * the generator kept its schedule. The rate doubles from --from until a
 * step fails (or --to passes), then bisects until the highest passing and
 * the lowest failing rate are within --resolution of each other. The
 * result is the highest rate measured passing, never an interpolation.
 *
 * Exit: 0 found (or every rate up to --to passed), 99 even the first step
 * failed, 3 the generator saturated before the target failed (or a step
 * was unreachable or interrupted), 2 usage. */
#ifndef PS_LG_SEARCH_H
#define PS_LG_SEARCH_H

/* argv[0] is "search"; the rest are run flags and the search's own. */
int ps_lg_search_main(int argc, char **argv);

#endif
