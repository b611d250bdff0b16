/* faults.c - the fault catalogue (faults.def) as a table: names, what
 * catches each fault, descriptions; --fault parsing and --list-faults. */
#include "reference-server/faults.h"

#include <string.h>

static const struct {
    const char *name, *caught_by, *description;
} catalogue[PS_FAULT_COUNT] = {
#define PS_FAULT(ENUM, name, caught_by, description)                                               \
    [PS_FAULT_##ENUM] = {name, caught_by, description},
#include "reference-server/faults.def"
#undef PS_FAULT
};

const char *ps_fault_name(ps_fault f)
{
    return (unsigned)f < PS_FAULT_COUNT ? catalogue[f].name : NULL;
}

const char *ps_fault_description(ps_fault f)
{
    return (unsigned)f < PS_FAULT_COUNT ? catalogue[f].description : NULL;
}

const char *ps_fault_caught_by(ps_fault f)
{
    return (unsigned)f < PS_FAULT_COUNT ? catalogue[f].caught_by : NULL;
}

int ps_fault_enable(ps_fault_set *set, const char *name, ps_error *err)
{
    for (int i = 0; i < PS_FAULT_COUNT; i++) {
        if (strcmp(catalogue[i].name, name) == 0) {
            *set |= (ps_fault_set)1 << i;
            return 0;
        }
    }
    return ps_error_set(err, "unknown fault '%s' (--list-faults prints the %d known ones)", name,
                        PS_FAULT_COUNT);
}

void ps_fault_print_list(FILE *out)
{
    for (int i = 0; i < PS_FAULT_COUNT; i++)
        fprintf(out, "%-31s %s  [caught by %s]\n", catalogue[i].name, catalogue[i].description,
                catalogue[i].caught_by);
}
