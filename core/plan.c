/* plan.c - plan names and their published limits. */
#include "core/plan.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/cli.h"

static const struct {
    ps_plan_id id;
    const char *name;
    int64_t per_minute, per_day;
} plans[] = {
    {PS_PLAN_FREE, "free", 60, 1000},
    {PS_PLAN_PRO, "pro", 300, 10000},
    {PS_PLAN_BUSINESS, "business", 1000, 100000},
    {PS_PLAN_ENTERPRISE, "enterprise", 0, 0},
};

const char *ps_plan_name(ps_plan_id id)
{
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++)
        if (plans[i].id == id) return plans[i].name;
    return "unknown";
}

bool ps_plan_published(ps_plan_id id, int64_t *per_minute, int64_t *per_day)
{
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
        if (plans[i].id == id && plans[i].per_minute > 0) {
            if (per_minute) *per_minute = plans[i].per_minute;
            if (per_day) *per_day = plans[i].per_day;
            return true;
        }
    }
    return false;
}

int ps_plan_parse(const char *text, ps_plan *out, ps_error *err)
{
    const char *colon = strchr(text, ':');
    size_t name_len = colon ? (size_t)(colon - text) : strlen(text);
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
        if (strlen(plans[i].name) != name_len || strncasecmp(text, plans[i].name, name_len) != 0)
            continue;
        out->id = plans[i].id;
        out->per_minute = plans[i].per_minute;
        out->per_day = plans[i].per_day;
        if (plans[i].id != PS_PLAN_ENTERPRISE) {
            if (colon)
                return ps_error_set(err, "plan '%s' takes no custom limits (only enterprise does)",
                                    plans[i].name);
            return 0;
        }
        if (!colon) return 0; /* enterprise, figures not known */
        const char *second = strchr(colon + 1, ':');
        if (!second)
            return ps_error_set(
                err, "enterprise limits must be 'enterprise:PER_MINUTE:PER_DAY', got '%s'", text);
        char minute_text[32];
        size_t n = (size_t)(second - colon - 1);
        if (n == 0 || n >= sizeof minute_text)
            return ps_error_set(err, "bad per-minute limit in '%s'", text);
        memcpy(minute_text, colon + 1, n);
        minute_text[n] = '\0';
        if (ps_cli_parse_int(minute_text, 1, INT64_MAX / 4, &out->per_minute, err) != 0)
            return ps_error_prefix(err, "per-minute limit in '%s': ", text);
        if (ps_cli_parse_int(second + 1, 1, INT64_MAX / 4, &out->per_day, err) != 0)
            return ps_error_prefix(err, "per-day limit in '%s': ", text);
        return 0;
    }
    return ps_error_set(err, "unknown plan '%.*s' (expected free, pro, business or enterprise)",
                        (int)name_len, text);
}
