/* keys_file.c - the keys file grammar shared by the server and petstore-load
 * (see keys_file.h and docs/keys-file.md). */
#include "core/keys_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/hash.h"

/* Fields beyond KEY and PLAN: two limits and a bare rate at most, plus
 * attributes; more is "too many fields". */
#define MAX_FIELDS 8

void ps_keys_list_free(ps_keys_list *list)
{
    for (size_t i = 0; i < list->count; i++) {
        free(list->items[i].key);
        free(list->items[i].group);
    }
    free(list->items);
    list->items = NULL;
    list->count = 0;
}

bool ps_keys_key_text_ok(const char *s, size_t len)
{
    if (len == 0 || len > PS_KEYS_MAX_KEY_LEN) return false;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f) return false;
    return true;
}

static int parse_rate(const char *text, double *rate, ps_error *err)
{
    if (*rate > 0) return ps_error_set(err, "the rate is given twice");
    if (ps_cli_parse_double(text, 0.001, 10e6, rate, err) != 0)
        return ps_error_prefix(err, "rate '%s': ", text);
    return 0;
}

bool ps_keys_group_name_ok(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n <= PS_KEYS_MAX_GROUP_LEN &&
           strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

static int parse_group(const char *text, char **group, ps_error *err)
{
    if (*group) return ps_error_set(err, "the group is given twice");
    if (!ps_keys_group_name_ok(text))
        return ps_error_set(err, "group '%s': 1-%d letters, digits, '_', '.' or '-'", text,
                            PS_KEYS_MAX_GROUP_LEN);
    *group = strdup(text);
    if (!*group) abort();
    return 0;
}

/* Parses one line's fields (n >= 1) into e; the message says what is wrong,
 * the caller adds the file and line. */
static int parse_fields(char **f, int n, ps_keys_entry *e, ps_error *err)
{
    if (!ps_keys_key_text_ok(f[0], strlen(f[0])))
        return ps_error_set(err, "the key must be 1-%d printable ASCII bytes", PS_KEYS_MAX_KEY_LEN);
    if (n < 2) return ps_error_set(err, "the key has no plan (expected KEY PLAN)");
    if (ps_plan_parse(f[1], &e->plan, err) != 0) return ps_error_prefix(err, "plan: ");
    bool bare_enterprise = strcasecmp(f[1], "enterprise") == 0;
    const char *positional[MAX_FIELDS];
    int npos = 0;
    e->rate = 0;
    for (int i = 2; i < n; i++) {
        const char *eq = strchr(f[i], '=');
        if (!eq) {
            positional[npos++] = f[i];
            continue;
        }
        if ((size_t)(eq - f[i]) == 4 && strncasecmp(f[i], "rate", 4) == 0) {
            if (parse_rate(eq + 1, &e->rate, err) != 0) return -1;
        } else if ((size_t)(eq - f[i]) == 5 && strncasecmp(f[i], "group", 5) == 0) {
            if (parse_group(eq + 1, &e->group, err) != 0) return -1;
        } else {
            return ps_error_set(err, "unknown attribute '%s' (known: rate=R, group=NAME)", f[i]);
        }
    }
    int next = 0;
    if (bare_enterprise && npos >= 1) {
        if (npos < 2)
            return ps_error_set(err,
                                "enterprise takes two limits, PER_MINUTE PER_DAY; got one ('%s')",
                                positional[0]);
        char plan_text[160];
        snprintf(plan_text, sizeof plan_text, "enterprise:%s:%s", positional[0], positional[1]);
        if (ps_plan_parse(plan_text, &e->plan, err) != 0) return ps_error_prefix(err, "plan: ");
        next = 2;
    }
    /* The loadgen's older form: one bare RATE after the plan (and limits). */
    if (npos - next == 1) {
        if (parse_rate(positional[next], &e->rate, err) != 0) return -1;
    } else if (npos - next > 1) {
        return ps_error_set(err, "too many fields (expected KEY PLAN [PER_MINUTE PER_DAY] [rate=R] "
                                 "[group=NAME])");
    }
    return 0;
}

/* The keys seen so far, by hash: open addressing over indices into the
 * list (slot 0 = empty, else index + 1), kept at most half full, so a file
 * of n keys is read in O(n) (a scan per key made 100,000 keys take 9 s). */
typedef struct key_set {
    size_t *slots;
    size_t cap; /* a power of two */
} key_set;

static void key_set_grow(key_set *set, const ps_keys_list *list)
{
    size_t cap = set->cap ? set->cap * 2 : 64;
    size_t *slots = calloc(cap, sizeof *slots);
    if (!slots) abort();
    for (size_t i = 0; i < list->count; i++) {
        const char *k = list->items[i].key;
        size_t at = ps_hash_bytes(k, strlen(k)) & (cap - 1);
        while (slots[at])
            at = (at + 1) & (cap - 1);
        slots[at] = i + 1;
    }
    free(set->slots);
    set->slots = slots;
    set->cap = cap;
}

/* The entry holding key, or (when none) NULL with *slot where it goes. */
static const ps_keys_entry *key_set_find(const key_set *set, const ps_keys_list *list,
                                         const char *key, size_t *slot)
{
    size_t at = ps_hash_bytes(key, strlen(key)) & (set->cap - 1);
    for (; set->slots[at]; at = (at + 1) & (set->cap - 1))
        if (strcmp(list->items[set->slots[at] - 1].key, key) == 0)
            return &list->items[set->slots[at] - 1];
    *slot = at;
    return NULL;
}

int ps_keys_file_parse(const char *text, size_t len, const char *name, ps_keys_list *out,
                       ps_error *err)
{
    out->items = NULL;
    out->count = 0;
    if (memchr(text, '\0', len))
        return ps_error_set(err, "keys file '%s' contains a NUL byte", name);
    ps_buf copy = PS_BUF_INIT; /* split in place, so the input stays intact */
    ps_buf_append(&copy, text, len);
    key_set seen = {0};
    size_t cap = 0;
    int rc = -1;
    int line = 0;
    for (char *p = copy.data, *next; p && *p; p = next) {
        line++;
        char *nl = strchr(p, '\n');
        next = nl ? nl + 1 : NULL;
        if (nl) *nl = '\0';
        char *hash = strchr(p, '#');
        if (hash) *hash = '\0';
        char *fields[MAX_FIELDS + 1];
        int n = 0;
        char *save = NULL;
        for (char *tok = strtok_r(p, " \t\r\v\f", &save); tok;
             tok = strtok_r(NULL, " \t\r\v\f", &save)) {
            if (n == MAX_FIELDS + 1) break;
            fields[n++] = tok;
        }
        if (n == 0) continue;
        ps_keys_entry e = {0};
        if (n > MAX_FIELDS) {
            ps_error_set(err, "too many fields (expected KEY PLAN [PER_MINUTE PER_DAY] [rate=R] "
                              "[group=NAME])");
        } else if (parse_fields(fields, n, &e, err) == 0) {
            e.line = line;
            if (2 * (out->count + 1) > seen.cap) key_set_grow(&seen, out);
            size_t slot = 0;
            const ps_keys_entry *first = key_set_find(&seen, out, fields[0], &slot);
            if (first) {
                /* the key itself stays out of the message: stderr is often a log */
                ps_error_set(err, "the key is listed twice (first on line %d)", first->line);
                goto fail_line;
            }
            if (out->count == cap) {
                cap = cap ? cap * 2 : 16;
                ps_keys_entry *grown = realloc(out->items, cap * sizeof *grown);
                if (!grown) abort();
                out->items = grown;
            }
            e.key = strdup(fields[0]);
            if (!e.key) abort();
            seen.slots[slot] = out->count + 1;
            out->items[out->count++] = e;
            continue;
        }
    fail_line:
        free(e.group);
        ps_error_prefix(err, "keys file '%s' line %d: ", name, line);
        ps_keys_list_free(out);
        goto out;
    }
    rc = 0;
out:
    free(seen.slots);
    ps_buf_free(&copy);
    return rc;
}

int ps_keys_file_load(const char *path, ps_keys_list *out, ps_error *err)
{
    out->items = NULL;
    out->count = 0;
    ps_buf text = PS_BUF_INIT;
    if (ps_buf_read_file(&text, path) != 0) {
        int saved = errno;
        ps_buf_free(&text);
        return ps_error_set(err, "cannot read keys file '%s': %s", path, strerror(saved));
    }
    int rc = ps_keys_file_parse(text.data, text.len, path, out, err);
    ps_buf_free(&text);
    return rc;
}
