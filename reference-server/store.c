/* store.c - the category store: ids, the cached list rendering, seeds, and group commit to the
 * journal. */
#include "reference-server/store.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/json.h"
#include "reference-server/journal.h"

typedef struct item {
    int64_t id;
    char *name; /* owned, NUL-terminated for convenience (may also contain NUL) */
    size_t name_len;
    char *description; /* owned, NULL when absent */
    size_t description_len;
} item;

typedef struct pending {
    struct pending *next;
    item it;
    ps_store_done_fn done;
    void *arg;
} pending;

struct ps_store_snapshot {
    atomic_long refs;
    size_t len;
    char json[];
};

struct ps_store {
    pthread_mutex_t mu;
    pthread_cond_t wake; /* the writer waits on it for records (or stop) */
    item *items;
    size_t count, cap;
    /* The list rendering so far: "[" then the items separated by commas, no
     * closing bracket. Categories are only appended, so each is rendered
     * once; a snapshot is a copy of this plus "]". */
    ps_buf body;
    ps_store_snapshot *snap; /* cached rendering (the store holds one reference), NULL when stale */
    int64_t next_id, last_id;
    uint64_t creations;
    ps_fault_set faults;
    int64_t batch_delay_us;
    ps_journal *journal;
    pending *head, *tail;
    bool stopping;
    bool writer_started;
    pthread_t writer;
    uint64_t syncs;
};

static char *dup_bytes(const char *s, size_t len)
{
    char *p = malloc(len + 1);
    if (!p) abort();
    if (len) memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

static void item_free(item *it)
{
    free(it->name);
    free(it->description);
}

static void render_item(ps_buf *b, const item *it, bool id_string)
{
    ps_buf_printf(
        b, id_string ? "{\"id\":\"%lld\",\"name\":" : "{\"id\":%lld,\"name\":", (long long)it->id);
    ps_buf_json_string(b, it->name, it->name_len);
    if (it->description) {
        ps_buf_puts(b, ",\"description\":");
        ps_buf_json_string(b, it->description, it->description_len);
    }
    ps_buf_putc(b, '}');
}

static void snapshot_drop(ps_store_snapshot *snap)
{
    if (snap && atomic_fetch_sub_explicit(&snap->refs, 1, memory_order_acq_rel) == 1) free(snap);
}

/* Makes it visible: takes ownership of its strings. Called with mu held (or
 * before any other thread exists). */
static void append_item(ps_store *s, const item *it, const char *rendered, size_t rendered_len)
{
    if (s->count == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->items = realloc(s->items, s->cap * sizeof *s->items);
        if (!s->items) abort();
    }
    s->items[s->count++] = *it;
    if (s->body.len > 1) ps_buf_putc(&s->body, ',');
    bool id_string = ps_fault_on(s->faults, PS_FAULT_LIST_ID_STRING);
    item shown = *it; /* faults list-cuts-long-names, list-trims-names: the list shows less */
    const char *name = it->name;
    bool bent = ps_fault_listed_name(s->faults, &name, &shown.name_len);
    shown.name = (char *)name;
    if (rendered && !id_string && !bent)
        ps_buf_append(&s->body, rendered, rendered_len);
    else
        render_item(&s->body, &shown, id_string);
    if (it->id >= s->next_id) s->next_id = it->id + 1;
    snapshot_drop(s->snap);
    s->snap = NULL;
}

static const char *const record_members[] = {"id", "name", "description"};

/* Replays one journal record: {"id":N,"name":"...","description":"..."}. */
static int replay_record(void *arg, const ps_json *rec, size_t line, ps_error *err)
{
    ps_store *s = arg;
    (void)line;
    if (rec->type != PS_JSON_OBJECT) return ps_error_set(err, "record is not a JSON object");
    for (size_t i = 0; i < rec->count; i++) {
        bool known = false;
        for (size_t k = 0; k < 3; k++)
            known |= strcmp(rec->keys[i], record_members[k]) == 0;
        if (!known) return ps_error_set(err, "unknown member \"%s\"", rec->keys[i]);
    }
    if (rec->duplicate_keys) return ps_error_set(err, "duplicate members");
    const ps_json *id = ps_json_get(rec, "id");
    const ps_json *name = ps_json_get(rec, "name");
    const ps_json *desc = ps_json_get(rec, "description");
    if (!id || id->type != PS_JSON_NUMBER || !id->is_int || id->i < 1)
        return ps_error_set(err, "\"id\" is not a positive integer");
    /* Ids are taken in journal order, so each record's is above every earlier one. */
    if (id->i < s->next_id)
        return ps_error_set(err, "id %lld is not above the previous record's id %lld (%s)",
                            (long long)id->i, (long long)(s->next_id - 1),
                            id->i == s->next_id - 1 ? "a duplicate" : "out of order");
    if (id->i == INT64_MAX) return ps_error_set(err, "\"id\" leaves no room for more ids");
    if (!name || name->type != PS_JSON_STRING) return ps_error_set(err, "\"name\" is not a string");
    if (desc && desc->type != PS_JSON_STRING)
        return ps_error_set(err, "\"description\" is not a string");
    item it = {id->i, dup_bytes(name->str, name->len), name->len,
               desc ? dup_bytes(desc->str, desc->len) : NULL, desc ? desc->len : 0};
    append_item(s, &it, NULL, 0);
    return 0;
}

/* Loads the seed file into s (empty, no other thread yet) and journals it in one batch. */
static int load_seeds(ps_store *s, const char *path, ps_error *err)
{
    ps_buf text = PS_BUF_INIT, records = PS_BUF_INIT, one = PS_BUF_INIT;
    ps_json *doc = NULL;
    item *seeds = NULL;
    size_t n = 0;
    int rc = -1;
    if (ps_buf_read_file(&text, path) != 0) {
        ps_error_set(err, "seed file %s: cannot read: %s", path, strerror(errno));
        goto out;
    }
    ps_error jerr;
    doc = ps_json_parse(text.data, text.len, NULL, &jerr);
    if (!doc) {
        ps_error_set(err, "seed file %s: %s", path, jerr.message);
        goto out;
    }
    if (doc->type != PS_JSON_ARRAY) {
        ps_error_set(
            err,
            "seed file %s: expected a JSON array of {\"name\", \"description\"} objects, found %s",
            path, ps_json_type_name(doc->type));
        goto out;
    }
    seeds = calloc(doc->count ? doc->count : 1, sizeof *seeds);
    if (!seeds) abort();
    for (; n < doc->count; n++) {
        const ps_json *o = doc->items[n];
        if (o->type != PS_JSON_OBJECT) {
            ps_error_set(err, "seed file %s: item %zu is %s, not an object", path, n,
                         ps_json_type_name(o->type));
            goto out;
        }
        for (size_t i = 0; i < o->count; i++) {
            if (strcmp(o->keys[i], "name") != 0 && strcmp(o->keys[i], "description") != 0) {
                ps_error_set(
                    err,
                    "seed file %s: item %zu: unknown member \"%s\" (only name and description)",
                    path, n, o->keys[i]);
                goto out;
            }
        }
        const ps_json *name = ps_json_get(o, "name");
        const ps_json *desc = ps_json_get(o, "description");
        if (!name || name->type != PS_JSON_STRING) {
            ps_error_set(err, "seed file %s: item %zu: \"name\" is %s", path, n,
                         name ? "not a string" : "missing");
            goto out;
        }
        if (desc && desc->type != PS_JSON_STRING) {
            ps_error_set(err, "seed file %s: item %zu: \"description\" is not a string", path, n);
            goto out;
        }
        seeds[n] = (item){s->next_id + (int64_t)n, dup_bytes(name->str, name->len), name->len,
                          desc ? dup_bytes(desc->str, desc->len) : NULL, desc ? desc->len : 0};
        ps_buf_reset(&one);
        render_item(&one, &seeds[n], false);
        ps_journal_format(&records, one.data, one.len);
    }
    if (s->journal && n > 0 &&
        ps_journal_append_sync(s->journal, records.data, records.len, err) != 0) {
        ps_error_prefix(err, "seed file %s: cannot journal the seeds: ", path);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        append_item(s, &seeds[i], NULL, 0);
    n = 0; /* ownership moved to s */
    rc = 0;
out:
    for (size_t i = 0; i < n; i++)
        item_free(&seeds[i]);
    free(seeds);
    ps_json_free(doc);
    ps_buf_free(&text);
    ps_buf_free(&records);
    ps_buf_free(&one);
    return rc;
}

static void finish(pending *p, int status)
{
    if (status == 0) {
        ps_category c = {p->it.id, p->it.name, p->it.name_len, p->it.description,
                         p->it.description_len};
        p->done(p->arg, &c, 0);
    } else {
        p->done(p->arg, NULL, -1);
    }
}

/* The writer: takes everything queued, writes it with one write and one
 * fdatasync (group commit), makes it visible, then acknowledges it. */
/* Failed batches as stderr lines: the first at once, then at most one a
 * second with a count of those not shown (a full disk failed 32,147 batches
 * in 8 s, one line each). Used by the writer thread only. */
typedef struct failure_log {
    int64_t last_ns; /* when the last line was written; 0 before the first */
    uint64_t quiet_batches, quiet_creations; /* failed since then, not shown */
} failure_log;

static void failure_log_quiet_summary(failure_log *l, const char *why)
{
    if (l->quiet_batches == 0) return;
    fprintf(stderr,
            "petstore-server: %llu creation(s) in %llu failed batch(es) not acknowledged since the "
            "last message (%s)\n",
            (unsigned long long)l->quiet_creations, (unsigned long long)l->quiet_batches, why);
    l->quiet_batches = l->quiet_creations = 0;
}

static void failure_log_note(failure_log *l, size_t n, const char *message)
{
    int64_t now = ps_clock_mono_ns();
    if (l->last_ns != 0 && now - l->last_ns < 1000000000) {
        l->quiet_batches++;
        l->quiet_creations += n;
        return;
    }
    if (l->quiet_batches)
        fprintf(stderr,
                "petstore-server: %zu creation(s) not acknowledged: %s (also %llu creation(s) in "
                "%llu failed batch(es) since the last message, not shown)\n",
                n, message, (unsigned long long)l->quiet_creations,
                (unsigned long long)l->quiet_batches);
    else
        fprintf(stderr, "petstore-server: %zu creation(s) not acknowledged: %s\n", n, message);
    l->quiet_batches = l->quiet_creations = 0;
    l->last_ns = now;
}

static void *writer_main(void *arg)
{
    ps_store *s = arg;
    ps_buf batch = PS_BUF_INIT;
    ps_buf *rendered = NULL; /* rendering of each record, reused for the list */
    size_t rendered_cap = 0;
    failure_log flog = {0, 0, 0};
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->head && !s->stopping)
            pthread_cond_wait(&s->wake, &s->mu);
        if (!s->head) break; /* stopping and drained */
        if (s->batch_delay_us > 0 && !s->stopping) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            int64_t ns = until.tv_nsec + s->batch_delay_us * 1000;
            until.tv_sec += (time_t)(ns / 1000000000);
            until.tv_nsec = (long)(ns % 1000000000);
            pthread_cond_timedwait(&s->wake, &s->mu, &until);
        }
        pending *list = s->head;
        s->head = s->tail = NULL;
        pthread_mutex_unlock(&s->mu);

        size_t n = 0;
        for (pending *p = list; p; p = p->next)
            n++;
        if (n > rendered_cap) {
            rendered = realloc(rendered, n * sizeof *rendered);
            if (!rendered) abort();
            for (size_t i = rendered_cap; i < n; i++)
                ps_buf_init(&rendered[i]);
            rendered_cap = n;
        }
        ps_buf_reset(&batch);
        size_t i = 0;
        for (pending *p = list; p; p = p->next, i++) {
            ps_buf_reset(&rendered[i]);
            render_item(&rendered[i], &p->it, false);
            ps_journal_format(&batch, rendered[i].data, rendered[i].len);
        }
        ps_error err;
        int status = ps_journal_append_sync(s->journal, batch.data, batch.len, &err);
        if (status != 0)
            failure_log_note(&flog, n, err.message);
        else
            failure_log_quiet_summary(&flog, "the journal works again");

        pthread_mutex_lock(&s->mu);
        if (status == 0) {
            s->syncs++;
            i = 0;
            for (pending *p = list; p; p = p->next, i++)
                append_item(s, &p->it, rendered[i].data, rendered[i].len);
        }
        pthread_mutex_unlock(&s->mu);

        for (pending *p = list, *next; p; p = next) {
            next = p->next;
            finish(p, status);
            if (status != 0) item_free(&p->it);
            free(p);
        }
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    failure_log_quiet_summary(&flog, "stopping");
    for (size_t k = 0; k < rendered_cap; k++)
        ps_buf_free(&rendered[k]);
    free(rendered);
    ps_buf_free(&batch);
    return NULL;
}

int ps_store_open(const ps_store_options *opts, ps_store **out, ps_error *err)
{
    *out = NULL;
    if (opts->max_batch_delay_us < 0 || opts->max_batch_delay_us > 1000000)
        return ps_error_set(err, "store: batch delay %lld us is out of range (0 to 1000000)",
                            (long long)opts->max_batch_delay_us);
    ps_store *s = calloc(1, sizeof *s);
    if (!s) return ps_error_set(err, "store: out of memory");
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->wake, NULL);
    ps_buf_init(&s->body);
    ps_buf_putc(&s->body, '[');
    s->next_id = 1;
    s->faults = opts->faults;
    s->batch_delay_us = opts->max_batch_delay_us;
    if (opts->journal_path &&
        ps_journal_open(opts->journal_path, replay_record, s, &s->journal, err) != 0)
        goto fail;
    if (s->count == 0 && opts->seed_path && load_seeds(s, opts->seed_path, err) != 0) goto fail;
    if (s->journal) {
        int e = pthread_create(&s->writer, NULL, writer_main, s);
        if (e != 0) {
            ps_error_set(err, "store: cannot start the journal writer: %s", strerror(e));
            goto fail;
        }
        s->writer_started = true;
    }
    *out = s;
    return 0;
fail:
    ps_store_close(s);
    return -1;
}

void ps_store_close(ps_store *s)
{
    if (!s) return;
    if (s->writer_started) {
        pthread_mutex_lock(&s->mu);
        s->stopping = true;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->writer, NULL);
    }
    ps_journal_close(s->journal);
    for (size_t i = 0; i < s->count; i++)
        item_free(&s->items[i]);
    free(s->items);
    ps_buf_free(&s->body);
    snapshot_drop(s->snap);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* Hands out the next id (or, fault client-id-honoured, the one the client
 * sent: requested > 0); called with mu held. */
static int64_t take_id(ps_store *s, int64_t requested)
{
    s->creations++;
    if (requested > 0) return requested;
    if (ps_fault_on(s->faults, PS_FAULT_DUPLICATE_IDS) && s->creations % 2 == 0 && s->last_id > 0)
        return s->last_id;
    s->last_id = s->next_id++;
    return s->last_id;
}

void ps_store_create_async(ps_store *s, const char *name, size_t name_len, const char *description,
                           size_t description_len, bool has_description, ps_store_done_fn done,
                           void *arg)
{
    ps_store_create_async_id(s, 0, name, name_len, description, description_len, has_description,
                             done, arg);
}

void ps_store_create_async_id(ps_store *s, int64_t requested_id, const char *name, size_t name_len,
                              const char *description, size_t description_len, bool has_description,
                              ps_store_done_fn done, void *arg)
{
    if (!ps_utf8_valid(name, name_len) ||
        (has_description && !ps_utf8_valid(description, description_len))) {
        done(arg, NULL, -1);
        return;
    }
    item it = {0, dup_bytes(name, name_len), name_len,
               has_description ? dup_bytes(description, description_len) : NULL,
               has_description ? description_len : 0};
    if (!s->journal) {
        pthread_mutex_lock(&s->mu);
        it.id = take_id(s, requested_id);
        if (ps_fault_on(s->faults, PS_FAULT_ID_RACE) && requested_id <= 0) {
            /* read, then insert after a pause without the lock: a create on
             * another loop in between reads the same next id */
            s->next_id = it.id;
            pthread_mutex_unlock(&s->mu);
            usleep(5000);
            pthread_mutex_lock(&s->mu);
            if (s->next_id <= it.id) s->next_id = it.id + 1;
        }
        append_item(s, &it, NULL, 0);
        pthread_mutex_unlock(&s->mu);
        ps_category c = {it.id, it.name, it.name_len, it.description, it.description_len};
        done(arg, &c, 0);
        return;
    }
    pending *p = calloc(1, sizeof *p);
    if (!p) abort();
    p->it = it;
    p->done = done;
    p->arg = arg;
    pthread_mutex_lock(&s->mu);
    /* The id is taken in queue order, so the list stays ordered by id. */
    p->it.id = take_id(s, requested_id);
    if (s->tail)
        s->tail->next = p;
    else
        s->head = p;
    s->tail = p;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->mu);
}

ps_store_snapshot *ps_store_list(ps_store *s)
{
    pthread_mutex_lock(&s->mu);
    if (!s->snap) {
        ps_store_snapshot *snap = malloc(sizeof *snap + s->body.len + 2);
        if (!snap) abort();
        atomic_init(&snap->refs, 1); /* the store's own reference */
        memcpy(snap->json, s->body.data, s->body.len);
        snap->json[s->body.len] = ']';
        snap->json[s->body.len + 1] = '\0';
        snap->len = s->body.len + 1;
        s->snap = snap;
    }
    ps_store_snapshot *snap = s->snap;
    atomic_fetch_add_explicit(&snap->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&s->mu);
    return snap;
}

const char *ps_store_snapshot_json(const ps_store_snapshot *snap, size_t *len)
{
    if (len) *len = snap->len;
    return snap->json;
}

void ps_store_snapshot_release(ps_store_snapshot *snap)
{
    snapshot_drop(snap);
}

size_t ps_store_count(ps_store *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->count;
    pthread_mutex_unlock(&s->mu);
    return n;
}

uint64_t ps_store_journal_syncs(ps_store *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t n = s->syncs;
    pthread_mutex_unlock(&s->mu);
    return n;
}
