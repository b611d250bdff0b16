/* test_store.c - the category store: ids, exact JSON round trip, cached snapshots, seeds, faults,
 * concurrency. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "core/buf.h"
#include "harness.h"
#include "test_journal_util.h"

#define SEED_FILE PS_SOURCE_DIR "/fixtures/seed-categories.json"

static ps_store *open_store(const char *journal, const char *seeds, bool dup_ids)
{
    ps_store_options o = {0};
    o.journal_path = journal;
    o.seed_path = seeds;
    o.faults = dup_ids ? (ps_fault_set)1 << PS_FAULT_DUPLICATE_IDS : 0;
    ps_store *s = NULL;
    ps_error err;
    if (ps_store_open(&o, &s, &err) != 0) {
        fprintf(stderr, "ps_store_open: %s\n", err.message);
        exit(2);
    }
    return s;
}

static bool bytes_eq(const ps_json *v, const char *s, size_t len)
{
    return v && v->type == PS_JSON_STRING && v->len == len && memcmp(v->str, s, len) == 0;
}

static void test_ids_increase_from_one(void)
{
    ps_store *s = open_store(NULL, NULL, false);
    CHECK_INT(ps_store_count(s), 0);
    CHECK_INT(create_sync(s, "dog", 3, NULL, 0), 1);
    CHECK_INT(create_sync(s, "cat", 3, "meow", 4), 2);
    CHECK_INT(create_sync(s, "dog", 3, NULL, 0), 3); /* names need not be unique */
    CHECK_INT(ps_store_count(s), 3);
    CHECK_INT(ps_store_journal_syncs(s), 0);
    ps_store_snapshot *snap = ps_store_list(s);
    size_t len;
    const char *json = ps_store_snapshot_json(snap, &len);
    const char *want =
        "[{\"id\":1,\"name\":\"dog\"},{\"id\":2,\"name\":\"cat\",\"description\":\"meow\"},"
        "{\"id\":3,\"name\":\"dog\"}]";
    CHECK_STR(json, want);
    CHECK_INT(len, strlen(want));
    ps_store_snapshot_release(snap);
    ps_store_close(s);
}

static void test_empty_list(void)
{
    ps_store *s = open_store(NULL, NULL, false);
    ps_store_snapshot *snap = ps_store_list(s);
    size_t len;
    CHECK_STR(ps_store_snapshot_json(snap, &len), "[]");
    CHECK_INT(len, 2);
    ps_store_snapshot_release(snap);
    ps_store_close(s);
}

/* Names and descriptions that JSON must carry exactly. */
static const struct {
    const char *name;
    size_t name_len;
    const char *desc; /* NULL: absent */
    size_t desc_len;
} tricky[] = {
#define LIT(x) x, sizeof(x) - 1
    {LIT("nul\0inside"), LIT("and \0 here")},
    {LIT("\xe2\x98\x83 snowman \xf0\x9f\x90\x88 cat"), LIT("\xc3\xa9l\xc3\xa9gant")},
    {LIT("quote \" backslash \\ slash /"), NULL, 0},
    {LIT("ctl \x01\x1f\t\n\r\b\f del \x7f"), LIT("")}, /* empty description is kept, not dropped */
    {LIT("<script>&amp;</script>"), LIT("</script><!--")},
    {LIT(""), NULL, 0},
#undef LIT
};
#define NTRICKY (sizeof tricky / sizeof tricky[0])

static void check_tricky_list(ps_store *s, int64_t first_id)
{
    ps_json *list = list_tree(s);
    CHECK(list != NULL);
    if (!list) return;
    for (size_t i = 0; i < NTRICKY; i++) {
        const ps_json *c = find_id(list, first_id + (int64_t)i);
        CHECK(c != NULL);
        if (!c) continue;
        CHECK(bytes_eq(ps_json_get(c, "name"), tricky[i].name, tricky[i].name_len));
        const ps_json *d = ps_json_get(c, "description");
        if (tricky[i].desc)
            CHECK(bytes_eq(d, tricky[i].desc, tricky[i].desc_len));
        else
            CHECK(d == NULL);
        CHECK_INT(c->count, tricky[i].desc ? 3 : 2);
    }
    ps_json_free(list);
}

static void test_json_round_trip_is_exact(void)
{
    ps_store *s = open_store(NULL, NULL, false);
    for (size_t i = 0; i < NTRICKY; i++) {
        CHECK_INT(
            create_sync(s, tricky[i].name, tricky[i].name_len, tricky[i].desc, tricky[i].desc_len),
            (int64_t)i + 1);
    }
    check_tricky_list(s, 1);
    /* nothing in the rendering could close an HTML script block */
    ps_store_snapshot *snap = ps_store_list(s);
    const char *json = ps_store_snapshot_json(snap, NULL);
    CHECK(strstr(json, "</") == NULL);
    CHECK(strchr(json, '\n') == NULL);
    ps_store_snapshot_release(snap);
    ps_store_close(s);
}

static void test_invalid_utf8_refused(void)
{
    ps_store *s = open_store(NULL, NULL, false);
    CHECK_INT(create_sync(s, "bad \xff byte", 10, NULL, 0), -1);
    CHECK_INT(create_sync(s, "ok", 2, "\xc3", 1), -1);
    CHECK_INT(ps_store_count(s), 0);
    CHECK_INT(create_sync(s, "ok", 2, NULL, 0), 1);
    ps_store_close(s);
}

static void test_snapshot_cached_until_change(void)
{
    ps_store *s = open_store(NULL, NULL, false);
    create_sync(s, "dog", 3, NULL, 0);
    ps_store_snapshot *a = ps_store_list(s);
    ps_store_snapshot *b = ps_store_list(s);
    CHECK(a == b); /* no rebuild, no copy of the list per request */
    create_sync(s, "cat", 3, NULL, 0);
    ps_store_snapshot *c = ps_store_list(s);
    CHECK(c != a);
    /* the old snapshot is immutable and still readable */
    CHECK_STR(ps_store_snapshot_json(a, NULL), "[{\"id\":1,\"name\":\"dog\"}]");
    CHECK_STR(ps_store_snapshot_json(c, NULL),
              "[{\"id\":1,\"name\":\"dog\"},{\"id\":2,\"name\":\"cat\"}]");
    ps_store_snapshot_release(a);
    ps_store_snapshot_release(b);
    ps_store_close(s); /* snapshots outlive the store */
    CHECK_STR(ps_store_snapshot_json(c, NULL),
              "[{\"id\":1,\"name\":\"dog\"},{\"id\":2,\"name\":\"cat\"}]");
    ps_store_snapshot_release(c);
}

static void test_seed_file(void)
{
    ps_store *s = open_store(NULL, SEED_FILE, false);
    CHECK_INT(ps_store_count(s), 7);
    ps_json *list = list_tree(s);
    const ps_json *dog = find_id(list, 1);
    CHECK(dog && bytes_eq(ps_json_get(dog, "name"), "dog", 3));
    const ps_json *hamster = find_id(list, 5);
    CHECK(hamster && ps_json_get(hamster, "description") == NULL);
    const char *gold =
        "Poissons rouges \xc3\xa9l\xc3\xa9gants \xe2\x80\x94 \xe9\x87\x91\xe9\xad\x9a "
        "(goldfish) \xf0\x9f\x90\x9f";
    const ps_json *fish = find_id(list, 6);
    CHECK(fish && bytes_eq(ps_json_get(fish, "description"), gold, strlen(gold)));
    ps_json_free(list);
    CHECK_INT(create_sync(s, "ferret", 6, NULL, 0), 8);
    ps_store_close(s);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void expect_seed_error(const char *dir, const char *text, const char *fragment)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/seed.json", dir);
    write_file(path, text);
    ps_store_options o = {0};
    o.seed_path = path;
    ps_store *s = NULL;
    ps_error err;
    CHECK_INT(ps_store_open(&o, &s, &err), -1);
    CHECK(s == NULL);
    if (!strstr(err.message, fragment) || !strstr(err.message, "seed.json")) {
        fprintf(stderr, "seed error \"%s\" lacks \"%s\"\n", err.message, fragment);
        CHECK(0);
    }
}

static void test_bad_seed_files_named(void)
{
    char *dir = make_temp_dir();
    expect_seed_error(dir, "{\"name\":\"dog\"}", "expected a JSON array");
    expect_seed_error(dir, "[{\"name\":\"dog\"},{\"description\":\"x\"}]",
                      "item 1: \"name\" is missing");
    expect_seed_error(dir, "[{\"name\":\"dog\",\"description\":7}]",
                      "item 0: \"description\" is not a string");
    expect_seed_error(dir, "[{\"name\":\"dog\"}, 3]", "item 1 is number");
    expect_seed_error(dir, "[{\"name\":\"dog\",\"id\":4}]", "unknown member \"id\"");
    expect_seed_error(dir, "[{\"name\":\"dog\"", "seed.json");
    ps_store_options o = {0};
    o.seed_path = "/nonexistent/seed.json";
    ps_store *s = NULL;
    ps_error err;
    CHECK_INT(ps_store_open(&o, &s, &err), -1);
    CHECK(strstr(err.message, "cannot read") != NULL);
    remove_temp_dir(dir);
}

static void test_seeds_only_when_empty(void)
{
    char *dir = make_temp_dir();
    char path[4200];
    snprintf(path, sizeof path, "%s/journal", dir);
    ps_store *s = open_store(path, SEED_FILE, false);
    CHECK_INT(ps_store_count(s), 7);
    CHECK_INT(create_sync(s, "ferret", 6, NULL, 0), 8);
    ps_store_close(s);
    /* reopened: the seeds come from the journal, not loaded a second time */
    s = open_store(path, SEED_FILE, false);
    CHECK_INT(ps_store_count(s), 8);
    CHECK_INT(create_sync(s, "gecko", 5, NULL, 0), 9);
    ps_json *list = list_tree(s);
    const ps_json *f = find_id(list, 8);
    CHECK(f && bytes_eq(ps_json_get(f, "name"), "ferret", 6));
    ps_json_free(list);
    ps_store_close(s);
    remove_temp_dir(dir);
}

static void test_fault_duplicate_ids(void)
{
    ps_store *s = open_store(NULL, NULL, true);
    int64_t ids[6];
    for (int i = 0; i < 6; i++)
        ids[i] = create_sync(s, "x", 1, NULL, 0);
    CHECK_INT(ids[0], 1);
    CHECK_INT(ids[1], 1);
    CHECK_INT(ids[2], 2);
    CHECK_INT(ids[3], 2);
    CHECK_INT(ids[4], 3);
    CHECK_INT(ids[5], 3);
    CHECK_INT(ps_store_count(s), 6);
    ps_store_close(s);
}

static void test_fault_list_id_string(void)
{
    ps_store_options o = {0};
    o.faults = (ps_fault_set)1 << PS_FAULT_LIST_ID_STRING;
    ps_store *s = NULL;
    ps_error err;
    CHECK_INT(ps_store_open(&o, &s, &err), 0);
    CHECK_INT(create_sync(s, "dog", 3, NULL, 0), 1);
    ps_store_snapshot *snap = ps_store_list(s);
    CHECK_STR(ps_store_snapshot_json(snap, NULL), "[{\"id\":\"1\",\"name\":\"dog\"}]");
    ps_store_snapshot_release(snap);
    ps_store_close(s);
}

/* Writers create while readers list; every list a reader sees is valid JSON,
 * ordered by id, never shorter than the one before. */
typedef struct race {
    ps_store *s;
    waiter w;
    atomic_int stop;
    atomic_int bad;
} race;

static void *race_writer(void *arg)
{
    race *r = arg;
    char name[64];
    for (int i = 0; i < 300; i++) {
        int n = snprintf(name, sizeof name, "w-%d \xe2\x98\x83", i);
        ps_store_create_async(r->s, name, (size_t)n, i % 2 ? "d" : NULL, i % 2, i % 2, waiter_done,
                              &r->w);
    }
    return NULL;
}

static void *race_reader(void *arg)
{
    race *r = arg;
    size_t last = 0;
    for (int i = 0; i < 2000 && !atomic_load(&r->stop); i++) {
        ps_json *list = list_tree(r->s);
        if (!list || list->type != PS_JSON_ARRAY || list->count < last) {
            atomic_fetch_add(&r->bad, 1);
        } else {
            for (size_t k = 0; k < list->count; k++)
                if (ps_json_get_int(list->items[k], "id", -1) != (int64_t)k + 1)
                    atomic_fetch_add(&r->bad, 1);
            last = list->count;
        }
        ps_json_free(list);
    }
    return NULL;
}

static void run_race(const char *journal)
{
    race r;
    memset(&r, 0, sizeof r);
    waiter_init(&r.w);
    r.s = open_store(journal, NULL, false);
    pthread_t t[6];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, race_writer, &r);
    for (int i = 4; i < 6; i++)
        pthread_create(&t[i], NULL, race_reader, &r);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    waiter_wait(&r.w, 1200);
    atomic_store(&r.stop, 1);
    for (int i = 4; i < 6; i++)
        pthread_join(t[i], NULL);
    CHECK_INT(r.w.ok, 1200);
    CHECK_INT(atomic_load(&r.bad), 0);
    CHECK_INT(ps_store_count(r.s), 1200);
    ps_json *list = list_tree(r.s);
    CHECK(list && list->count == 1200);
    for (size_t k = 0; list && k < list->count; k++)
        CHECK_INT(ps_json_get_int(list->items[k], "id", -1), (int64_t)k + 1);
    ps_json_free(list);
    if (journal) {
        uint64_t syncs = ps_store_journal_syncs(r.s);
        fprintf(stderr, "1200 concurrent creations made durable in %llu fdatasync batches\n",
                (unsigned long long)syncs);
        CHECK(syncs >= 1 && syncs < 1200); /* group commit */
    }
    ps_store_close(r.s);
    waiter_destroy(&r.w);
}

static void test_concurrent_create_and_list(void)
{
    run_race(NULL);
    char *dir = make_temp_dir();
    char path[4200];
    snprintf(path, sizeof path, "%s/journal", dir);
    run_race(path);
    remove_temp_dir(dir);
}

int main(void)
{
    RUN(test_ids_increase_from_one);
    RUN(test_empty_list);
    RUN(test_json_round_trip_is_exact);
    RUN(test_invalid_utf8_refused);
    RUN(test_snapshot_cached_until_change);
    RUN(test_seed_file);
    RUN(test_bad_seed_files_named);
    RUN(test_seeds_only_when_empty);
    RUN(test_fault_duplicate_ids);
    RUN(test_fault_list_id_string);
    RUN(test_concurrent_create_and_list);
    return TEST_EXIT();
}
