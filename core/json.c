/* json.c - strict JSON parsing into ps_json trees on top of yajl's event parser. */
#define _GNU_SOURCE /* memmem */
#include "core/json.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <yajl/yajl_parse.h>

/* Objects up to this many members look for a repeated name by scanning the
 * earlier ones; past it a hash set takes over, so the check stays linear in
 * the member count (a scan made 13,100 members cost 0.24 s of CPU, 52,000
 * cost 45 s). */
#define SET_FROM 8

/* The member names seen so far in the object open at one nesting level. */
typedef struct member_set {
    uint64_t *hashes; /* hashes[i]: hash of member i's name */
    size_t hashes_cap;
    uint32_t *slots; /* open addressing: member index + 1, 0 when free */
    size_t nslots;   /* a power of two; 0 while the object has < SET_FROM members */
    size_t slots_cap;
} member_set;

typedef struct builder {
    ps_json *root;
    ps_json *stack[PS_JSON_MAX_DEPTH + 1];
    member_set sets[PS_JSON_MAX_DEPTH + 1]; /* sets[d] belongs to stack[d] when it is an object */
    int depth;
    char *pending_key; /* key waiting for its value */
    size_t pending_key_len;
    bool too_deep;
    bool too_many_members;
    bool complete; /* the top-level value has been closed */
} builder;

static ps_json *node_new(ps_json_type t)
{
    ps_json *v = calloc(1, sizeof *v);
    if (!v) abort();
    v->type = t;
    return v;
}

/* The hash is seeded once per process, so names that collide cannot be
 * prepared in advance to turn the set back into a scan. */
static uint64_t hash_seed;
static pthread_once_t hash_seed_once = PTHREAD_ONCE_INIT;

static void hash_seed_init(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        s = (uint64_t)t.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)(uintptr_t)&s;
    }
    hash_seed = s;
}

/* FNV-1a over the seed's bytes then the name's, with a final mix so the low
 * bits (the slot) depend on every byte. */
static uint64_t name_hash(const char *key, size_t len)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (int i = 0; i < 8; i++)
        h = (h ^ ((hash_seed >> (8 * i)) & 0xff)) * 0x100000001b3u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)key[i]) * 0x100000001b3u;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdu;
    h ^= h >> 33;
    return h;
}

static void *grow(void *p, size_t n, size_t size)
{
    p = realloc(p, n * size);
    if (!p) abort();
    return p;
}

/* Reports whether an earlier member has member idx's name; puts it into the
 * set (whose table has room) when not. A repeated name is not added again,
 * so a thousand members named "" leave one entry, not a probe chain of a
 * thousand. */
static bool set_insert(member_set *s, const ps_json *obj, size_t idx)
{
    uint64_t h = s->hashes[idx];
    size_t mask = s->nslots - 1;
    size_t at = (size_t)h & mask;
    for (; s->slots[at] != 0; at = (at + 1) & mask) {
        size_t other = s->slots[at] - 1;
        if (s->hashes[other] == h && obj->key_lens[other] == obj->key_lens[idx] &&
            memcmp(obj->keys[other], obj->keys[idx], obj->key_lens[idx]) == 0)
            return true;
    }
    s->slots[at] = (uint32_t)(idx + 1);
    return false;
}

/* (Re)builds the table for members 0..n-1 with at most half of it in use. */
static void set_rebuild(member_set *s, const ps_json *obj, size_t n)
{
    size_t want = 32;
    while (want < 2 * (n + 1))
        want *= 2;
    if (want > s->slots_cap) {
        s->slots = grow(s->slots, want, sizeof *s->slots);
        s->slots_cap = want;
    }
    s->nslots = want;
    memset(s->slots, 0, want * sizeof *s->slots);
    for (size_t i = 0; i < n; i++)
        set_insert(s, obj, i);
}

/* Records the name of obj's newest member (index obj->count - 1) and reports
 * whether it repeats an earlier one. Linear over the whole object. */
static bool name_repeats(member_set *s, const ps_json *obj)
{
    size_t idx = obj->count - 1;
    if (idx >= s->hashes_cap) {
        s->hashes_cap = s->hashes_cap ? s->hashes_cap * 2 : 16;
        s->hashes = grow(s->hashes, s->hashes_cap, sizeof *s->hashes);
    }
    s->hashes[idx] = name_hash(obj->keys[idx], obj->key_lens[idx]);
    if (obj->count < SET_FROM) {
        for (size_t i = 0; i < idx; i++)
            if (s->hashes[i] == s->hashes[idx] && obj->key_lens[i] == obj->key_lens[idx] &&
                memcmp(obj->keys[i], obj->keys[idx], obj->key_lens[idx]) == 0)
                return true;
        return false;
    }
    if (obj->count == SET_FROM || 2 * obj->count > s->nslots) {
        set_rebuild(s, obj, idx);
    }
    return set_insert(s, obj, idx);
}

/* Appends child to the open container c at nesting level level; key is the
 * member name for an object (ownership passes to c). Returns 0 when an
 * object already holds PS_JSON_MAX_MEMBERS members: the caller keeps child. */
static int container_push(builder *b, int level, ps_json *child, char *key, size_t key_len)
{
    ps_json *c = b->stack[level];
    if (c->type == PS_JSON_OBJECT && c->count >= PS_JSON_MAX_MEMBERS) {
        b->too_many_members = true;
        return 0;
    }
    if ((c->count & (c->count - 1)) == 0) { /* grow at powers of two */
        size_t cap = c->count ? c->count * 2 : 4;
        c->items = grow(c->items, cap, sizeof *c->items);
        if (c->type == PS_JSON_OBJECT) {
            c->keys = grow(c->keys, cap, sizeof *c->keys);
            c->key_lens = grow(c->key_lens, cap, sizeof *c->key_lens);
        }
    }
    c->items[c->count] = child;
    if (c->type == PS_JSON_OBJECT) {
        c->keys[c->count] = key;
        c->key_lens[c->count] = key_len;
        c->count++;
        if (name_repeats(&b->sets[level], c)) c->duplicate_keys = true;
        return 1;
    }
    c->count++;
    return 1;
}

/* Attaches a finished scalar or a freshly opened container to its parent. */
static int attach(builder *b, ps_json *v)
{
    if (b->depth == 0) {
        b->root = v;
        if (v->type != PS_JSON_ARRAY && v->type != PS_JSON_OBJECT) b->complete = true;
        return 1;
    }
    char *key = b->stack[b->depth - 1]->type == PS_JSON_OBJECT ? b->pending_key : NULL;
    if (!container_push(b, b->depth - 1, v, key, b->pending_key_len)) {
        ps_json_free(v);
        return 0;
    }
    if (key) b->pending_key = NULL;
    b->pending_key_len = 0;
    return 1;
}

static int open_container(builder *b, ps_json_type t)
{
    if (b->depth >= PS_JSON_MAX_DEPTH) {
        b->too_deep = true;
        return 0;
    }
    ps_json *v = node_new(t);
    if (!attach(b, v)) return 0;
    b->sets[b->depth].nslots = 0; /* a new object: names from a sibling are not its own */
    b->stack[b->depth++] = v;
    return 1;
}

static int close_container(builder *b)
{
    b->depth--;
    if (b->depth == 0) b->complete = true;
    return 1;
}

static int on_null(void *ctx)
{
    return attach(ctx, node_new(PS_JSON_NULL));
}

static int on_bool(void *ctx, int value)
{
    ps_json *v = node_new(PS_JSON_BOOL);
    v->boolean = value != 0;
    return attach(ctx, v);
}

static char *copy_bytes(const unsigned char *s, size_t len)
{
    char *p = malloc(len + 1);
    if (!p) abort();
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

static int on_number(void *ctx, const char *s, size_t len)
{
    ps_json *v = node_new(PS_JSON_NUMBER);
    v->str = copy_bytes((const unsigned char *)s, len);
    v->len = len;
    v->d = strtod(v->str, NULL);
    if (!memchr(s, '.', len) && !memchr(s, 'e', len) && !memchr(s, 'E', len)) {
        errno = 0;
        long long ll = strtoll(v->str, NULL, 10);
        if (errno == 0) {
            v->is_int = true;
            v->i = ll;
        }
    }
    return attach(ctx, v);
}

/* Reads exactly four hex digits at p (the caller has checked they are in
 * bounds: the text need not be NUL-terminated). Returns false on a non-hex digit. */
static bool hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return false;
        v = v * 16 + d;
    }
    *out = v;
    return true;
}

/* yajl turns a lone low surrogate escape into bytes that are not UTF-8 and a
 * lone high one into '?'; either way the string could not come back as sent,
 * so escapes are checked on the raw text first. Returns the offset of the
 * first lone surrogate escape inside a string, or -1. */
static long lone_surrogate_offset(const char *text, size_t len)
{
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (!in_string) {
            if (c == '"') in_string = true;
            continue;
        }
        if (c == '"') {
            in_string = false;
        } else if (c == '\\' && i + 1 < len) {
            if (text[i + 1] != 'u' || i + 6 > len) {
                i++;
                continue;
            }
            unsigned v = 0;
            if (!hex4(text + i + 2, &v)) return -1; /* yajl reports the bad escape */
            if (v >= 0xdc00 && v <= 0xdfff) return (long)i;
            if (v >= 0xd800 && v <= 0xdbff) {
                unsigned low = 0;
                if (i + 12 > len || text[i + 6] != '\\' || text[i + 7] != 'u' ||
                    !hex4(text + i + 8, &low) || low < 0xdc00 || low > 0xdfff)
                    return (long)i;
                i += 6;
            }
            i += 5;
        }
    }
    return -1;
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
    ps_json *v = node_new(PS_JSON_STRING);
    v->str = copy_bytes(s, len);
    v->len = len;
    return attach(ctx, v);
}

static int on_map_key(void *ctx, const unsigned char *s, size_t len)
{
    builder *b = ctx;
    free(b->pending_key);
    b->pending_key = copy_bytes(s, len);
    b->pending_key_len = len;
    return 1;
}

static int on_start_map(void *ctx)
{
    return open_container(ctx, PS_JSON_OBJECT);
}

static int on_start_array(void *ctx)
{
    return open_container(ctx, PS_JSON_ARRAY);
}

static int on_end(void *ctx)
{
    return close_container(ctx);
}

static const yajl_callbacks callbacks = {
    on_null,      on_bool,    NULL,   NULL,           on_number, on_string,
    on_start_map, on_map_key, on_end, on_start_array, on_end,
};

bool ps_utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp;
        if (c >= 0xc2 && c <= 0xdf)
            n = 1, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
            n = 2, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
            n = 3, cp = c & 0x07;
        else
            return false;
        if (len - i - 1 < n) return false;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff))) return false;
        if (cp >= 0xd800 && cp <= 0xdfff) return false;
        i += n + 1;
    }
    return true;
}

size_t ps_utf8_floor(const char *s, size_t n)
{
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
        n--;
    return n;
}

static bool all_space(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return false;
    return true;
}

static void builder_free_sets(builder *b)
{
    for (int i = 0; i <= PS_JSON_MAX_DEPTH; i++) {
        free(b->sets[i].hashes);
        free(b->sets[i].slots);
    }
}

static void builder_discard(builder *b)
{
    free(b->pending_key);
    builder_free_sets(b);
    ps_json_free(b->root);
}

static ps_json *fail(ps_json_failure f, ps_json_failure *why, ps_error *err, const char *msg)
{
    if (why) *why = f;
    ps_error_set(err, "%s", msg);
    return NULL;
}

ps_json *ps_json_parse(const char *text, size_t len, ps_json_failure *why, ps_error *err)
{
    if (why) *why = PS_JSON_OK;
    if (len == 0 || all_space(text, len)) return fail(PS_JSON_EMPTY, why, err, "empty document");
    if (!ps_utf8_valid(text, len))
        return fail(PS_JSON_BAD_UTF8, why, err, "document is not valid UTF-8");
    if (memmem(text, len, "\\u", 2)) {
        long at = lone_surrogate_offset(text, len);
        if (at >= 0) {
            if (why) *why = PS_JSON_BAD_ESCAPE;
            ps_error_set(err, "the \\u escape at offset %ld is a lone surrogate (no UTF-8 form)",
                         at);
            return NULL;
        }
    }

    pthread_once(&hash_seed_once, hash_seed_init);
    builder b;
    memset(&b, 0, sizeof b);
    yajl_handle h = yajl_alloc(&callbacks, NULL, &b);
    if (!h) abort();
    yajl_config(h, yajl_dont_validate_strings, 0);
    yajl_status st = yajl_parse(h, (const unsigned char *)text, len);
    bool at_end = false; /* the document ended early: yajl then counts only the last call's bytes */
    if (st == yajl_status_ok) {
        st = yajl_complete_parse(h);
        at_end = true;
    }
    if (st == yajl_status_ok) {
        yajl_free(h);
        free(b.pending_key);
        builder_free_sets(&b);
        return b.root;
    }
    ps_json_failure f = PS_JSON_MALFORMED;
    if (b.too_deep)
        f = PS_JSON_TOO_DEEP;
    else if (b.too_many_members)
        f = PS_JSON_TOO_MANY_MEMBERS;
    else if (b.complete)
        f = PS_JSON_TRAILING;
    if (err) {
        unsigned char *msg = yajl_get_error(h, 0, (const unsigned char *)text, len);
        size_t off = at_end ? len : yajl_get_bytes_consumed(h);
        size_t mlen = msg ? strlen((const char *)msg) : 0;
        while (mlen > 0 && (msg[mlen - 1] == '\n' || msg[mlen - 1] == ' '))
            msg[--mlen] = '\0'; /* one line */
        if (f == PS_JSON_TOO_DEEP)
            ps_error_set(err, "nesting deeper than %d levels", PS_JSON_MAX_DEPTH);
        else if (f == PS_JSON_TOO_MANY_MEMBERS)
            ps_error_set(err, "an object with more than %d members (offset %zu)",
                         PS_JSON_MAX_MEMBERS, off);
        else if (f == PS_JSON_TRAILING)
            ps_error_set(err, "unexpected bytes after the JSON value (offset %zu)", off);
        else
            ps_error_set(err, "invalid JSON near offset %zu: %s", off, (const char *)msg);
        yajl_free_error(h, msg);
    }
    yajl_free(h);
    builder_discard(&b);
    if (why) *why = f;
    return NULL;
}

void ps_json_free(ps_json *v)
{
    if (!v) return;
    for (size_t i = 0; i < v->count; i++) {
        ps_json_free(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->key_lens);
    free(v->str);
    free(v);
}

const ps_json *ps_json_get(const ps_json *v, const char *key)
{
    if (!v || v->type != PS_JSON_OBJECT) return NULL;
    size_t klen = strlen(key);
    for (size_t i = 0; i < v->count; i++)
        if (v->key_lens[i] == klen && memcmp(v->keys[i], key, klen) == 0) return v->items[i];
    return NULL;
}

const ps_json *ps_json_path(const ps_json *v, const char *dotted)
{
    char part[128];
    const char *p = dotted;
    while (v && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof part) return NULL;
        memcpy(part, p, n);
        part[n] = '\0';
        v = ps_json_get(v, part);
        p += n + (dot ? 1 : 0);
    }
    return v;
}

const char *ps_json_get_string(const ps_json *v, const char *key, const char *dflt)
{
    const ps_json *m = ps_json_get(v, key);
    return m && m->type == PS_JSON_STRING ? m->str : dflt;
}

double ps_json_get_number(const ps_json *v, const char *key, double dflt)
{
    const ps_json *m = ps_json_get(v, key);
    return m && m->type == PS_JSON_NUMBER ? m->d : dflt;
}

int64_t ps_json_get_int(const ps_json *v, const char *key, int64_t dflt)
{
    const ps_json *m = ps_json_get(v, key);
    return m && m->type == PS_JSON_NUMBER && m->is_int ? m->i : dflt;
}

const char *ps_json_type_name(ps_json_type t)
{
    switch (t) {
    case PS_JSON_NULL:
        return "null";
    case PS_JSON_BOOL:
        return "boolean";
    case PS_JSON_NUMBER:
        return "number";
    case PS_JSON_STRING:
        return "string";
    case PS_JSON_ARRAY:
        return "array";
    case PS_JSON_OBJECT:
        return "object";
    }
    return "unknown";
}

const char *ps_json_failure_name(ps_json_failure f)
{
    switch (f) {
    case PS_JSON_OK:
        return "ok";
    case PS_JSON_EMPTY:
        return "empty_body";
    case PS_JSON_MALFORMED:
        return "malformed_json";
    case PS_JSON_TRAILING:
        return "trailing_data";
    case PS_JSON_BAD_UTF8:
        return "invalid_utf8";
    case PS_JSON_TOO_DEEP:
        return "too_deep";
    case PS_JSON_BAD_ESCAPE:
        return "invalid_unicode_escape";
    case PS_JSON_TOO_MANY_MEMBERS:
        return "too_many_members";
    }
    return "unknown";
}
