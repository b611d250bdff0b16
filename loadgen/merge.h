/* merge.h - `petstore-load merge SHARD.json...`: the shards of one run
 * (shard.h) read back and merged as if one process had run: counts summed,
 * histograms added (lossless, from each report's base64 V2 histograms),
 * intervals summed per wall-clock second, admissions summed per key and
 * window before the limits are verified (so over-admission that no single
 * shard saw is caught), thresholds judged on the merged figures. The merged
 * report is written by the run's own writers (summary.c, the HTML report,
 * the --hdr spectrum, the --hdr-log interval log).
 *
 * Exit codes as a run: 0; 1 a limit violated; 99 a threshold failed; 2
 * usage, unreadable or mismatched reports (another run, a shard given
 * twice); 3 a shard missing, or one whose own run said nothing about the
 * target (exit 3). */
#ifndef PS_LG_MERGE_H
#define PS_LG_MERGE_H

/* argv[0] is "merge". Returns the exit code. */
int ps_lg_merge_main(int argc, char **argv);

#endif
