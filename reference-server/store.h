/* store.h - the category store: int64 ids assigned in increasing order, a
 * cached JSON rendering of the list, and an optional journal that makes
 * every acknowledged creation durable.
 *
 * Thread safety: every function may be called from any thread.
 * Durability: with a journal, ps_store_create_async calls `done` only after
 * the record has been written and fdatasync'ed; concurrent creations are
 * batched into one sync (group commit) by a writer thread. `done` runs on
 * the writer thread (or inline when there is no journal); the server hands
 * the reply back to its event loop itself.
 * Journal format: one record per line, "<crc32 hex8> <json>\n", where json is
 * {"id":N,"name":"...","description":"..."}; at open, a last record that is
 * torn (no newline, bad checksum, bad JSON) is dropped and truncated away;
 * a bad record that is not the last is an error naming the line. */
#ifndef PS_STORE_H
#define PS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "reference-server/faults.h"

typedef struct ps_store ps_store;

typedef struct ps_category {
    int64_t id;
    const char *name; /* UTF-8, may contain NUL; length in name_len */
    size_t name_len;
    const char *description; /* NULL when absent */
    size_t description_len;
} ps_category;

/* An immutable rendering of the whole list as a JSON array, shared by
 * readers; release it when the response has been queued. */
typedef struct ps_store_snapshot ps_store_snapshot;

typedef struct ps_store_options {
    const char *journal_path; /* NULL: memory only */
    const char *seed_path; /* JSON array of NewCategory objects loaded when the store is empty; may
                              be NULL */
    int64_t max_batch_delay_us; /* group-commit wait for more records (default 0: sync as soon as
                                   the writer is free) */
    ps_fault_set
        faults; /* duplicate-ids: the same id twice; list-id-string: ids as JSON strings ("1") */
} ps_store_options;

int ps_store_open(const ps_store_options *opts, ps_store **out, ps_error *err);
/* Flushes and syncs pending records, calls their callbacks, stops the writer, frees. */
void ps_store_close(ps_store *s);

/* Creates a category; `name` and `description` are copied. done(arg, &cat,
 * 0) once durable, or done(arg, NULL, -1) if the journal failed (the
 * creation is then not acknowledged and not visible). `cat` and the strings
 * it points to stay valid until ps_store_close (copy them if you need them
 * longer). Also -1 (at once) when name or description is not valid UTF-8,
 * which the journal could not replay. With fault duplicate-ids, every second
 * creation reuses the id handed out just before. */
typedef void (*ps_store_done_fn)(void *arg, const ps_category *created, int status);
void ps_store_create_async(ps_store *s, const char *name, size_t name_len, const char *description,
                           size_t description_len, bool has_description, ps_store_done_fn done,
                           void *arg);

/* The same with the id the client asked for (requested_id > 0; 0: the next
 * one), for the fault client-id-honoured only: the id may repeat one in
 * use, and a journal holding it refuses to replay (ids must ascend). */
void ps_store_create_async_id(ps_store *s, int64_t requested_id, const char *name, size_t name_len,
                              const char *description, size_t description_len, bool has_description,
                              ps_store_done_fn done, void *arg);

ps_store_snapshot *ps_store_list(ps_store *s);
const char *ps_store_snapshot_json(const ps_store_snapshot *snap, size_t *len);
void ps_store_snapshot_release(ps_store_snapshot *snap);

size_t ps_store_count(ps_store *s);

/* Number of journal batches made durable so far (one write + one fdatasync
 * each); 0 without a journal. Group commit shows as syncs < creations. */
uint64_t ps_store_journal_syncs(ps_store *s);

#endif
