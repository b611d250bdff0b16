/* test_journal_util.h - helpers shared by the store and journal tests:
 * waiting for asynchronous creations, temporary directories, reading the
 * list back as a JSON tree. */
#ifndef PS_TEST_JOURNAL_UTIL_H
#define PS_TEST_JOURNAL_UTIL_H

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "reference-server/store.h"

/* Counts completions of asynchronous creations and lets a thread wait for them. */
typedef struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, ok, failed;
    int64_t last_id;
} waiter;

static inline void waiter_init(waiter *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
}

static inline void waiter_destroy(waiter *w)
{
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
}

static inline void waiter_done(void *arg, const ps_category *c, int status)
{
    waiter *w = arg;
    pthread_mutex_lock(&w->mu);
    w->done++;
    if (status == 0 && c) {
        w->ok++;
        w->last_id = c->id;
    } else {
        w->failed++;
    }
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static inline void waiter_wait(waiter *w, int n)
{
    pthread_mutex_lock(&w->mu);
    while (w->done < n)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

/* Creates one category and waits for it: its id, or -1 when refused. */
static inline int64_t create_sync(ps_store *s, const char *name, size_t name_len, const char *desc,
                                  size_t desc_len)
{
    waiter w;
    waiter_init(&w);
    ps_store_create_async(s, name, name_len, desc, desc_len, desc != NULL, waiter_done, &w);
    waiter_wait(&w, 1);
    int64_t id = w.ok ? w.last_id : -1;
    waiter_destroy(&w);
    return id;
}

/* The current list, parsed (caller frees), or NULL when it is not valid JSON. */
static inline ps_json *list_tree(ps_store *s)
{
    ps_store_snapshot *snap = ps_store_list(s);
    size_t len;
    const char *json = ps_store_snapshot_json(snap, &len);
    ps_json *v = ps_json_parse(json, len, NULL, NULL);
    ps_store_snapshot_release(snap);
    return v;
}

/* The category with this id in a parsed list, or NULL. */
static inline const ps_json *find_id(const ps_json *list, int64_t id)
{
    for (size_t i = 0; list && i < list->count; i++) {
        const ps_json *id_v = ps_json_get(list->items[i], "id");
        if (id_v && id_v->is_int && id_v->i == id) return list->items[i];
    }
    return NULL;
}

static inline char *make_temp_dir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/ps-store-test-XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    if (!d) {
        perror("mkdtemp");
        exit(2);
    }
    return strdup(d);
}

static inline void remove_temp_dir(char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4096 + 256];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
}

#endif
