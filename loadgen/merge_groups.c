/* merge_groups.c - the key groups of a merge (merge_internal.h): every shard
 * names the run's groups alike, and the merged report's groups[] sums their
 * counts, as one process would have counted them. */
#include "loadgen/merge_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen/shard_report.h"

/* shard.groups[] as read (shard_read.c checked it), NULL when absent. */
static const ps_json *shard_groups(const ps_json *shard)
{
    const ps_json *gs = ps_json_get(shard, "groups");
    return gs && gs->type == PS_JSON_ARRAY ? gs : NULL;
}

/* The first shard's groups become the run's. */
static void take_groups(merge *m, const ps_json *gs)
{
    ps_lg_config *cfg = &m->cfg;
    cfg->groups = calloc(gs->count, sizeof *cfg->groups);
    if (!cfg->groups) abort();
    for (size_t g = 0; g < gs->count; g++) {
        cfg->groups[g] = strdup(ps_json_get_string(gs->items[g], "group", ""));
        if (!cfg->groups[g]) abort();
    }
    cfg->ngroups = gs->count;
    ps_lg_stats_groups(&m->total, gs->count);
}

/* Another shard's groups: the same names in the same order, since its keys
 * index them. Returns 0, or -1 with m->err. */
static int same_groups(merge *m, const shard_doc *s, const ps_json *gs)
{
    const ps_lg_config *cfg = &m->cfg;
    const char *first = m->shards[0].path;
    size_t n = gs ? gs->count : 0;
    if (n != cfg->ngroups)
        return ps_error_set(&m->err,
                            "'%s': shard.groups: %zu key groups, '%s' has %zu: shards of one run "
                            "name the same groups (the same keys file)",
                            s->path, n, first, cfg->ngroups);
    for (size_t g = 0; g < n; g++) {
        const char *name = ps_json_get_string(gs->items[g], "group", "");
        if (strcmp(name, cfg->groups[g]) != 0)
            return ps_error_set(&m->err,
                                "'%s': shard.groups[%zu]: key group '%s', '%s' names it '%s': "
                                "shards of one run name the same groups (the same keys file)",
                                s->path, g, name, first, cfg->groups[g]);
    }
    return 0;
}

int ps_lg_merge_groups(merge *m, const shard_doc *s, size_t i, const ps_json *shard,
                       const size_t *map)
{
    const ps_json *gs = shard_groups(shard);
    if (i == 0 && gs)
        take_groups(m, gs);
    else if (i > 0 && same_groups(m, s, gs) != 0)
        return -1;
    /* each count is within its shard's scheduled or answered total, whose
     * sums add_stats checked: these sums cannot wrap */
    for (size_t g = 0; gs && g < gs->count; g++) {
        ps_lg_group_counts one = {0};
        for (size_t f = 0; f < PS_LG_GROUP_FIELDS; f++)
            *ps_lg_field_at(&one, &ps_lg_group_fields[f]) =
                ps_json_get_int(gs->items[g], ps_lg_group_fields[f].name, 0);
        m->total.groups[g].sent += one.sent;
        m->total.groups[g].answered += one.answered;
        m->total.groups[g].admitted += one.admitted;
        m->total.groups[g].limited += one.limited;
    }
    const ps_json *keys = ps_json_get(shard, "keys");
    for (size_t k = 0; gs && k < keys->count; k++)
        m->cfg.keys[map[k]].group = (size_t)ps_json_get_int(keys->items[k], "group", 0);
    return 0;
}

void ps_lg_merge_group_tally(merge *m)
{
    if (!m->cfg.ngroups || !m->verify_limits) return;
    ps_lg_window_tally by_plan[PS_LG_PLANS];
    m->tally_by_group = calloc(m->cfg.ngroups, sizeof *m->tally_by_group);
    if (!m->tally_by_group) abort();
    ps_lg_limits_tally(&m->limits, &m->cfg, by_plan, m->tally_by_group);
}
