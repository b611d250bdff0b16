/* customers.c - keys and rates of --customers. */
#include "loadgen/customers.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"

int ps_lg_customers_parse(const char *text, int64_t counts[PS_PLAN_UNKNOWN + 1], ps_error *err)
{
    memset(counts, 0, sizeof(int64_t) * (PS_PLAN_UNKNOWN + 1));
    char *copy = strdup(text);
    if (!copy) abort();
    int rc = -1;
    int64_t total = 0;
    for (char *save, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            ps_error_set(err, "--customers: expected PLAN=COUNT, got '%s'", tok);
            goto out;
        }
        *eq = '\0';
        ps_plan plan;
        if (ps_plan_parse(tok, &plan, err) != 0 || plan.per_minute <= 0) {
            ps_error_set(err,
                         "--customers: '%s' is not free, pro or business (plans with published "
                         "limits)",
                         tok);
            goto out;
        }
        int64_t n;
        if (ps_cli_parse_int(eq + 1, 0, 1000000, &n, err) != 0) {
            ps_error_prefix(err, "--customers %s: ", tok);
            goto out;
        }
        counts[plan.id] = n;
        total += n;
    }
    if (total == 0) {
        ps_error_set(err, "--customers '%s': no customer at all", text);
        goto out;
    }
    rc = 0;
out:
    free(copy);
    return rc;
}

double ps_lg_customer_rate(const ps_lg_config *cfg, ps_plan_id id)
{
    int64_t pm, pd;
    if (!ps_plan_published(id, &pm, &pd)) return 0;
    return (double)pm / 60.0 * cfg->quota * cfg->time_scale;
}

int64_t ps_lg_customers_available(const ps_lg_config *cfg, ps_plan_id id)
{
    if (cfg->npool == 0) return INT64_MAX; /* made up: as many as asked */
    int64_t n = 0;
    for (size_t i = 0; i < cfg->npool; i++)
        n += cfg->customer_pool[i].plan.id == id;
    return n;
}

int ps_lg_customers_select(ps_lg_config *cfg, const int64_t counts[PS_PLAN_UNKNOWN + 1],
                           ps_error *err)
{
    size_t total = 0;
    for (int p = 0; p <= PS_PLAN_UNKNOWN; p++) {
        int64_t have = ps_lg_customers_available(cfg, (ps_plan_id)p);
        /* never fewer keys reused at a higher rate: a key above its quota
         * is refused, and the search would judge the little it sent */
        if (counts[p] > have)
            return ps_error_set(err,
                                "--customers: %lld %s customers asked, the keys file has %lld "
                                "%s keys",
                                (long long)counts[p], ps_plan_name((ps_plan_id)p), (long long)have,
                                ps_plan_name((ps_plan_id)p));
        total += (size_t)counts[p];
    }
    ps_lg_key *keys = calloc(total + 1, sizeof *keys);
    if (!keys) abort();
    size_t n = 0;
    for (int p = 0; p <= PS_PLAN_UNKNOWN; p++) {
        ps_plan plan = {(ps_plan_id)p, 0, 0};
        ps_plan_published(plan.id, &plan.per_minute, &plan.per_day);
        double rate = ps_lg_customer_rate(cfg, plan.id);
        int64_t got = 0;
        /* from the keys file, in its order */
        for (size_t i = 0; i < cfg->npool && got < counts[p]; i++) {
            if (cfg->customer_pool[i].plan.id != plan.id) continue;
            keys[n] = cfg->customer_pool[i];
            keys[n].key = strdup(cfg->customer_pool[i].key);
            if (!keys[n].key) abort();
            keys[n++].rate = rate;
            got++;
        }
        for (; cfg->npool == 0 && got < counts[p]; got++) {
            char name[64];
            snprintf(name, sizeof name, "customer-%s-%06lld", ps_plan_name(plan.id),
                     (long long)got + 1);
            keys[n].key = strdup(name);
            if (!keys[n].key) abort();
            keys[n].plan = plan;
            keys[n++].rate = rate;
        }
    }
    for (size_t i = 0; i < cfg->nkeys; i++)
        free(cfg->keys[i].key);
    free(cfg->keys);
    cfg->keys = keys;
    cfg->nkeys = n;
    return 0;
}

int ps_lg_customers_apply(ps_lg_config *cfg, ps_error *err)
{
    /* the keys file becomes the pool the customers are drawn from */
    cfg->customer_pool = cfg->keys;
    cfg->npool = cfg->nkeys;
    cfg->keys = NULL;
    cfg->nkeys = 0;
    return ps_lg_customers_select(cfg, cfg->customers, err);
}

int ps_lg_customers_write_keys(const ps_lg_config *cfg, const char *path, ps_error *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) return ps_error_set(err, "cannot write '%s': %s", path, strerror(errno));
    fputs("# petstore-load --customers: KEY PLAN, for petstore-server --keys-file\n", f);
    for (size_t i = 0; i < cfg->nkeys; i++)
        fprintf(f, "%s %s\n", cfg->keys[i].key, ps_plan_name(cfg->keys[i].plan.id));
    bool bad = ferror(f) != 0;
    bad |= f == stdout ? fflush(f) != 0 : fclose(f) != 0;
    if (bad) return ps_error_set(err, "error writing '%s'", path);
    return 0;
}
