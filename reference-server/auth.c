/* auth.c - keyring, keys file and Authorization header parsing. */
#include "reference-server/auth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/hash.h"
#include "core/keys_file.h"

typedef struct node {
    ps_key_entry entry;
    uint64_t hash;
    struct node *next;
} node;

struct ps_keyring {
    node **buckets;
    size_t nbuckets;
    size_t count;
};

ps_keyring *ps_keyring_create(void)
{
    ps_keyring *r = calloc(1, sizeof *r);
    if (!r) abort();
    r->nbuckets = 64;
    r->buckets = calloc(r->nbuckets, sizeof *r->buckets);
    if (!r->buckets) abort();
    return r;
}

void ps_keyring_destroy(ps_keyring *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nbuckets; i++) {
        node *n = r->buckets[i];
        while (n) {
            node *next = n->next;
            free((char *)n->entry.key);
            free(n);
            n = next;
        }
    }
    free(r->buckets);
    free(r);
}

size_t ps_keyring_count(const ps_keyring *r)
{
    return r->count;
}

bool ps_token_syntax_ok(const char *key, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)key[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/')
            i++;
        else
            break;
    }
    if (i == 0) return false;
    while (i < len && key[i] == '=')
        i++;
    return i == len;
}

static void grow(ps_keyring *r)
{
    size_t nb = r->nbuckets * 2;
    node **b = calloc(nb, sizeof *b);
    if (!b) abort();
    for (size_t i = 0; i < r->nbuckets; i++) {
        node *n = r->buckets[i];
        while (n) {
            node *next = n->next;
            n->next = b[n->hash & (nb - 1)];
            b[n->hash & (nb - 1)] = n;
            n = next;
        }
    }
    free(r->buckets);
    r->buckets = b;
    r->nbuckets = nb;
}

int ps_keyring_add(ps_keyring *r, const char *key, const ps_plan *plan, ps_error *err)
{
    size_t len = strlen(key);
    if (!ps_token_syntax_ok(key, len))
        return ps_error_set(
            err, "the key is not a valid bearer token (use letters, digits and - . _ ~ + /)");
    if (plan->per_minute <= 0 || plan->per_day <= 0)
        return ps_error_set(err,
                            "the key's plan %s needs its limits (enterprise PER_MINUTE PER_DAY)",
                            ps_plan_name(plan->id));
    /* Messages leave the key out: stderr is often a log (the caller names
     * the file and line, or the flag). */
    if (ps_keyring_find(r, key, len)) return ps_error_set(err, "the key is listed twice");
    if (r->count + 1 > r->nbuckets) grow(r);
    node *n = calloc(1, sizeof *n);
    if (!n) abort();
    n->entry.key = strdup(key);
    if (!n->entry.key) abort();
    n->entry.key_len = len;
    n->entry.plan = *plan;
    n->hash = ps_hash_bytes(key, len);
    n->next = r->buckets[n->hash & (r->nbuckets - 1)];
    r->buckets[n->hash & (r->nbuckets - 1)] = n;
    r->count++;
    return 0;
}

int ps_keyring_add_flag(ps_keyring *r, const char *flag_value, ps_error *err)
{
    const char *colon = strchr(flag_value, ':');
    if (!colon || colon == flag_value || !colon[1])
        return ps_error_set(err, "--key: expected KEY:PLAN or KEY:enterprise:PER_MINUTE:PER_DAY");
    char key[512];
    size_t klen = (size_t)(colon - flag_value);
    if (klen >= sizeof key)
        return ps_error_set(err, "--key: the key is longer than %zu bytes", sizeof key - 1);
    memcpy(key, flag_value, klen);
    key[klen] = '\0';
    ps_plan plan;
    if (ps_plan_parse(colon + 1, &plan, err) != 0) return ps_error_prefix(err, "--key: ");
    if (ps_keyring_add(r, key, &plan, err) != 0) return ps_error_prefix(err, "--key: ");
    return 0;
}

int ps_keyring_load_file(ps_keyring *r, const char *path, ps_error *err)
{
    ps_keys_list keys;
    if (ps_keys_file_load(path, &keys, err) != 0) return -1;
    int rc = 0;
    for (size_t i = 0; i < keys.count && rc == 0; i++) {
        rc = ps_keyring_add(r, keys.items[i].key, &keys.items[i].plan, err);
        if (rc != 0) ps_error_prefix(err, "keys file '%s' line %d: ", path, keys.items[i].line);
    }
    ps_keys_list_free(&keys);
    return rc;
}

bool ps_ct_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    /* Walks the longer length; the result never short-circuits. */
    size_t n = alen > blen ? alen : blen;
    volatile unsigned char diff = (unsigned char)(alen != blen);
    for (size_t i = 0; i < n; i++) {
        unsigned char x = i < alen ? (unsigned char)a[i] : 0;
        unsigned char y = i < blen ? (unsigned char)b[i] : 0;
        diff |= (unsigned char)(x ^ y);
    }
    return diff == 0;
}

const ps_key_entry *ps_keyring_find(const ps_keyring *r, const char *token, size_t len)
{
    uint64_t h = ps_hash_bytes(token, len); /* only picks candidates */
    const ps_key_entry *found = NULL;
    for (node *n = r->buckets[h & (r->nbuckets - 1)]; n; n = n->next) {
        bool eq = ps_ct_equal(n->entry.key, n->entry.key_len, token, len);
        if (eq && !found) found = &n->entry;
    }
    return found;
}

const ps_key_entry *ps_keyring_find_near(const ps_keyring *r, const char *token, size_t len)
{
    if (len > 0) { /* one character appended */
        const ps_key_entry *e = ps_keyring_find(r, token, len - 1);
        if (e) return e;
    }
    for (size_t b = 0; b < r->nbuckets; b++) /* one character short: a prefix of a key */
        for (node *n = r->buckets[b]; n; n = n->next)
            if (n->entry.key_len == len + 1 && memcmp(n->entry.key, token, len) == 0)
                return &n->entry;
    return NULL;
}

ps_credential ps_auth_parse(const char *value, size_t value_len, int count, bool case_sensitive,
                            const char **token, size_t *token_len)
{
    if (count == 0 || !value) return PS_CRED_NONE;
    if (count > 1) return PS_CRED_MALFORMED;
    size_t i = 0;
    while (i < value_len && (value[i] == ' ' || value[i] == '\t'))
        i++;
    size_t scheme_end = i;
    while (scheme_end < value_len && value[scheme_end] != ' ' && value[scheme_end] != '\t')
        scheme_end++;
    bool scheme_ok =
        scheme_end - i == 6 && (case_sensitive ? memcmp(value + i, "Bearer", 6) == 0
                                               : strncasecmp(value + i, "Bearer", 6) == 0);
    if (!scheme_ok) return scheme_end > i ? PS_CRED_OTHER_SCHEME : PS_CRED_MALFORMED;
    i = scheme_end;
    while (i < value_len && value[i] == ' ')
        i++;
    size_t end = value_len;
    while (end > i && (value[end - 1] == ' ' || value[end - 1] == '\t'))
        end--;
    if (end == i || !ps_token_syntax_ok(value + i, end - i)) return PS_CRED_MALFORMED;
    *token = value + i;
    *token_len = end - i;
    return PS_CRED_TOKEN;
}

const ps_key_entry *ps_keyring_find_nocase(const ps_keyring *r, const char *token, size_t len)
{
    for (size_t b = 0; b < r->nbuckets; b++)
        for (node *n = r->buckets[b]; n; n = n->next)
            if (n->entry.key_len == len && strncasecmp(n->entry.key, token, len) == 0)
                return &n->entry;
    return NULL;
}

ps_credential ps_auth_parse_faulty(const char *value, size_t value_len, int count,
                                   ps_fault_set faults, ps_buf *bent, const char **token,
                                   size_t *token_len)
{
    if (ps_fault_on(faults, PS_FAULT_REPEATED_AUTH_LAST_WINS) && count > 1) count = 1;
    const char *v = value;
    size_t n = value_len;
    if (v && ps_fault_on(faults, PS_FAULT_OTHER_SCHEME_KEY)) {
        size_t s = 0;
        while (s < n && (v[s] == ' ' || v[s] == '\t'))
            s++;
        size_t e = s;
        while (e < n && v[e] != ' ' && v[e] != '\t')
            e++;
        if (e - s > 6 && strncasecmp(v + e - 6, "bearer", 6) == 0) {
            ps_buf_reset(bent);
            ps_buf_puts(bent, "Bearer");
            ps_buf_append(bent, v + e, n - e);
            v = bent->data;
            n = bent->len;
        }
    }
    if (v && ps_fault_on(faults, PS_FAULT_BEARER_EXTRA_TOKENS)) {
        size_t i = 0;
        while (i < n && (v[i] == ' ' || v[i] == '\t'))
            i++;
        while (i < n && v[i] != ' ' && v[i] != '\t')
            i++;
        while (i < n && v[i] == ' ')
            i++;
        while (i < n && v[i] != ' ' && v[i] != '\t')
            i++;
        n = i; /* whatever follows the token is ignored */
    }
    return ps_auth_parse(v, n, count, ps_fault_on(faults, PS_FAULT_BEARER_CASE_SENSITIVE), token,
                         token_len);
}
