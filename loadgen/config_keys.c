/* config_keys.c - the keys of a run (config.h): a keys file read into the
 * config with its key groups, and how a key is masked in what is shown. */
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/keys_file.h"
#include "loadgen/config.h"

void ps_lg_redact(const char *key, char out[8])
{
    size_t n = strlen(key);
    if (n < 16) {
        memcpy(out, "***", 4);
        return;
    }
    out[0] = key[0];
    out[1] = key[1];
    memcpy(out + 2, "***", 3);
    out[5] = key[n - 2];
    out[6] = key[n - 1];
    out[7] = '\0';
}

/* ---- engine choice: the proxy variables, read as libcurl reads them ---- */

/* True when host is named by a NO_PROXY entry: "*", the host itself, or a
 * domain it is in ("example.com" and ".example.com" both cover
 * "api.example.com"). */
const char *ps_lg_config_group_name(const ps_lg_config *cfg, size_t group)
{
    return group < cfg->ngroups ? cfg->groups[group] : "default";
}

size_t ps_lg_config_group_count(const ps_lg_config *cfg)
{
    return cfg->ngroups ? cfg->ngroups : 1;
}

/* The groups named while one keys file is read: an open-addressing table
 * of indexes into cfg->groups, so that 80,000 groups load in linear time
 * (a scan per key was quadratic: 12-48 s to start). cfg->groups is sized
 * once for every group the file can name. */
typedef struct {
    size_t *slots; /* group index + 1; 0 empty */
    size_t mask;
} group_table;

static size_t *group_slot(const group_table *t, const ps_lg_config *cfg, const char *name)
{
    size_t i = (size_t)ps_hash_bytes(name, strlen(name)) & t->mask;
    while (t->slots[i] && strcmp(cfg->groups[t->slots[i] - 1], name) != 0)
        i = (i + 1) & t->mask;
    return &t->slots[i];
}

/* Room for `more` new groups and a table holding the groups known so far
 * (groups[0] "default" first). */
static void group_table_open(group_table *t, ps_lg_config *cfg, size_t more)
{
    size_t have = cfg->ngroups ? cfg->ngroups : 1;
    char **room = realloc(cfg->groups, (have + more) * sizeof *room);
    if (!room) abort();
    cfg->groups = room;
    if (cfg->ngroups == 0) {
        if (!(cfg->groups[0] = strdup("default"))) abort();
        cfg->ngroups = 1;
    }
    size_t size = 16;
    while (size < 2 * (have + more))
        size *= 2;
    t->slots = calloc(size, sizeof *t->slots);
    if (!t->slots) abort();
    t->mask = size - 1;
    for (size_t g = 0; g < cfg->ngroups; g++)
        *group_slot(t, cfg, cfg->groups[g]) = g + 1;
}

/* The index of group `name`, added when new; the table opens at the first
 * name, so that a file naming no group leaves ngroups 0. */
static size_t group_index(group_table *t, ps_lg_config *cfg, const char *name, size_t more)
{
    if (!name) return 0;
    if (!t->slots) group_table_open(t, cfg, more);
    size_t *slot = group_slot(t, cfg, name);
    if (!*slot) {
        if (!(cfg->groups[cfg->ngroups] = strdup(name))) abort();
        *slot = ++cfg->ngroups;
    }
    return *slot - 1;
}

int ps_lg_keys_load(ps_lg_config *cfg, const char *path, ps_error *err)
{
    ps_keys_list keys;
    if (ps_keys_file_load(path, &keys, err) != 0) return -1;
    /* one allocation for all (add_key grows by one: quadratic where realloc
     * copies, as ASan's always does); the key strings change owner */
    ps_lg_key *room = realloc(cfg->keys, (cfg->nkeys + keys.count + 1) * sizeof *room);
    if (!room) abort();
    cfg->keys = room;
    group_table groups = {0};
    for (size_t i = 0; i < keys.count; i++) {
        const ps_keys_entry *e = &keys.items[i];
        cfg->keys[cfg->nkeys++] =
            (ps_lg_key){.key = e->key,
                        .plan = e->plan,
                        .rate = e->rate,
                        .line = e->line,
                        .group = group_index(&groups, cfg, e->group, keys.count)};
        keys.items[i].key = NULL;
    }
    free(groups.slots);
    size_t n = keys.count;
    ps_keys_list_free(&keys);
    if (n == 0) return ps_error_set(err, "keys file '%s' holds no key", path);
    return 0;
}
