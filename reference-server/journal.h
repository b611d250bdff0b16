/* journal.h - the append-only, checksummed record file behind the category
 * store: replay at open, torn-tail repair, batched append + fdatasync.
 *
 * Format: one record per line, "<crc32 hex8> <json>\n", where the checksum
 * (zlib crc32, lower-case hex) covers exactly the JSON bytes. The JSON itself
 * never contains a raw newline (ps_buf_json_string escapes it).
 *
 * Not thread-safe: the store calls it from one thread at a time (open, then
 * its writer thread). */
#ifndef PS_JOURNAL_H
#define PS_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"

typedef struct ps_journal ps_journal;

/* Called for each record whose checksum and JSON are good, in file order;
 * line is 1-based. Returns 0 when the record was applied, or -1 (with err
 * set) when its content is unacceptable; it must then leave no trace, because
 * the record is treated exactly like a corrupt one. */
typedef int (*ps_journal_record_fn)(void *arg, const ps_json *record, size_t line, ps_error *err);

/* Opens (creating it if needed) and locks the journal at path and replays
 * it through fn. Only a last line without its newline is a torn write: it is
 * dropped with a warning on stderr and the file is truncated to the end of
 * the last good record. Any complete line that is bad (checksum mismatch,
 * bad JSON, refused by fn), last or not, is corruption: an error naming the
 * file, line and byte offset, and nothing is modified. A path that is not a
 * regular file (/dev/null, a FIFO, a directory, a socket, a device) is
 * refused: nothing written there would be kept. Returns 0 and *out, or -1
 * with err. */
int ps_journal_open(const char *path, ps_journal_record_fn fn, void *arg, ps_journal **out,
                    ps_error *err);

/* Appends "<crc> json\n" for one record's JSON to b (formatting only). */
void ps_journal_format(ps_buf *b, const char *json, size_t len);

/* Writes len bytes of formatted records at the end of the journal with one
 * write and makes them durable with one fdatasync. Returns 0 only when both
 * succeeded and the file is still linked under the journal's path (not
 * deleted or replaced since the open). On failure the partial write is cut
 * off again when possible; when it is not, when fdatasync failed (after which
 * the kernel's page cache can no longer be trusted to hold what was written)
 * or when the file lost its name, the journal is marked broken and every
 * later append fails at once: an unacknowledged record may survive, an
 * acknowledged one is never lost. */
int ps_journal_append_sync(ps_journal *j, const char *data, size_t len, ps_error *err);

/* Number of successful append_sync calls (one fdatasync each). */
uint64_t ps_journal_syncs(const ps_journal *j);

void ps_journal_close(ps_journal *j);

#endif
