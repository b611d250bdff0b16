/* politeness.c - per-key "do not send before" times after a 429. */
#include "runner/politeness.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct key_state {
    char *key; /* NULL: requests without a credential */
    int64_t until_ns;
    int consecutive_429;
} key_state;

struct ps_politeness {
    key_state *items;
    size_t count, cap;
};

ps_politeness *ps_politeness_create(void)
{
    ps_politeness *p = calloc(1, sizeof *p);
    if (!p) abort();
    return p;
}

void ps_politeness_destroy(ps_politeness *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->count; i++)
        free(p->items[i].key);
    free(p->items);
    free(p);
}

static bool same_key(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

static key_state *find(const ps_politeness *p, const char *key)
{
    for (size_t i = 0; i < p->count; i++)
        if (same_key(p->items[i].key, key)) return &p->items[i];
    return NULL;
}

static key_state *find_or_add(ps_politeness *p, const char *key)
{
    key_state *k = find(p, key);
    if (k) return k;
    if (p->count == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 4;
        p->items = realloc(p->items, p->cap * sizeof *p->items);
        if (!p->items) abort();
    }
    k = &p->items[p->count++];
    memset(k, 0, sizeof *k);
    if (key) {
        k->key = strdup(key);
        if (!k->key) abort();
    }
    return k;
}

int64_t ps_politeness_note_429(ps_politeness *p, const char *key, int64_t now_ns, int64_t until_ns)
{
    key_state *k = find_or_add(p, key);
    k->consecutive_429++;
    if (until_ns <= now_ns) {
        /* No usable indication: back off exponentially (spec 8 rule 2). */
        int shift = k->consecutive_429 - 1;
        if (shift > 6) shift = 6;
        until_ns = now_ns + ((int64_t)1000000000 << shift);
    }
    if (until_ns > k->until_ns) k->until_ns = until_ns;
    return k->until_ns;
}

void ps_politeness_note_ok(ps_politeness *p, const char *key)
{
    key_state *k = find(p, key);
    if (k) k->consecutive_429 = 0;
}

int64_t ps_politeness_blocked_until(const ps_politeness *p, const char *key)
{
    const key_state *k = find(p, key);
    return k ? k->until_ns : 0;
}
