/* config_keys.c - the keys of a run (config.h): a keys file read into the
 * config with its key groups, and how a key is masked in what is shown. */
#include <stdlib.h>
#include <string.h>

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

/* The index of group `name`, added when new (groups[0] "default" first). */
static size_t group_index(ps_lg_config *cfg, const char *name)
{
    if (!name) return 0;
    if (cfg->ngroups == 0) {
        cfg->groups = malloc(sizeof *cfg->groups);
        if (!cfg->groups || !(cfg->groups[0] = strdup("default"))) abort();
        cfg->ngroups = 1;
    }
    for (size_t g = 0; g < cfg->ngroups; g++)
        if (strcmp(cfg->groups[g], name) == 0) return g;
    cfg->groups = realloc(cfg->groups, (cfg->ngroups + 1) * sizeof *cfg->groups);
    if (!cfg->groups || !(cfg->groups[cfg->ngroups] = strdup(name))) abort();
    return cfg->ngroups++;
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
    for (size_t i = 0; i < keys.count; i++) {
        const ps_keys_entry *e = &keys.items[i];
        cfg->keys[cfg->nkeys++] = (ps_lg_key){.key = e->key,
                                              .plan = e->plan,
                                              .rate = e->rate,
                                              .line = e->line,
                                              .group = group_index(cfg, e->group)};
        keys.items[i].key = NULL;
    }
    size_t n = keys.count;
    ps_keys_list_free(&keys);
    if (n == 0) return ps_error_set(err, "keys file '%s' holds no key", path);
    return 0;
}
