/* shard_read.h - a shard's report read back as untrusted input: a crashed
 * pod, an older version or a tampered volume can leave anything in it, so
 * petstore-load merge checks the whole document before it merges anything
 * from it (issue 21).
 *
 * What is checked: every count is a JSON integer, not negative and at most
 * PS_LG_SHARD_COUNT_MAX; the shard's totals agree with its own histograms
 * and intervals (histogram totals equal the answered count, each interval
 * row's histogram its request count, windows and key checks within the
 * responses they count); histograms have the run's layout (range and
 * precision, checked before their counts are allocated); times are finite
 * and lie within the run (start, each interval inside the shard's
 * duration); text that reaches a terminal (run id, key labels) is printable
 * ASCII; key group names are what a keys file allows, each once, and a
 * key's group indexes shard.groups (optional: older shards have none). Since every count is bounded
 * by the shard's answered or scheduled count, the merge only needs to check those few sums for
 * overflow.
 *
 * Memory: the check allocates one histogram at a time (the run's layout,
 * ps_hist_memory_size) besides the parsed document. */
#ifndef PS_LG_SHARD_READ_H
#define PS_LG_SHARD_READ_H

#include <stdint.h>

#include "core/error.h"
#include "core/json.h"

/* 2^53: beyond it a JSON number is not exact for most readers. */
#define PS_LG_SHARD_COUNT_MAX (INT64_C(1) << 53)
/* Longest run id and key label a shard may carry. */
#define PS_LG_SHARD_TEXT_MAX 128

/* Most key groups a shard may name (shard.groups[]). */
#define PS_LG_SHARD_GROUPS_MAX 65536

/* A shard report larger than this is refused before it is read. */
#define PS_LG_SHARD_FILE_MAX (INT64_C(1) << 30)

/* Reads path into *doc (the caller frees it), parsing only the members the
 * merge reads: the others are skipped without allocating, so a wide array
 * anywhere else costs nothing. Lists the merge reads must hold elements of
 * their kind (objects; strings in shard.interval_histograms), checked
 * before parsing. Memory: the file's bytes, then the tree of the kept
 * members (about 150 bytes per JSON value: ~2.4 KB per key, ~3.3 KB per
 * window, ~2 KB per interval). Returns 0, or -1 with "'PATH': ..." in err. */
int ps_lg_shard_read(const char *path, ps_json **doc, ps_error *err);

/* Checks doc (a shard's --json report, its "shard" member present). Returns
 * 0, or -1 with "'PATH': MEMBER: what is wrong" in err. */
int ps_lg_shard_validate(const ps_json *doc, const char *path, ps_error *err);

/* True when s is 1..max printable ASCII bytes (space allowed). */
int ps_lg_shard_text_ok(const char *s, size_t len, size_t max);

#endif
