/* faults.h - the deliberate deviations of the reference server (--fault NAME),
 * catalogued once in faults.def (docs/faults.md is the same table for humans,
 * checked against it). The names are a contract with the runner's tests,
 * which assert which check catches each one.
 *
 * Every fault is applied one way: the module that deviates is handed the
 * server's ps_fault_set and asks ps_fault_on(faults, PS_FAULT_...) at the
 * point where it bends; no module keeps a boolean of its own per fault. */
#ifndef PS_FAULTS_H
#define PS_FAULTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"

/* PS_FAULT_LIST_ID_STRING, ...: one per line of faults.def, in its order. */
typedef enum ps_fault {
#define PS_FAULT(ENUM, name, caught_by, description) PS_FAULT_##ENUM,
#include "reference-server/faults.def"
#undef PS_FAULT
    PS_FAULT_COUNT
} ps_fault;

/* A set of enabled faults (bit i = fault i). */
typedef uint64_t ps_fault_set;
_Static_assert(PS_FAULT_COUNT <= 64, "ps_fault_set has one bit per fault");

static inline bool ps_fault_on(ps_fault_set set, ps_fault f)
{
    return (set >> f) & 1u;
}

/* Name ("list-id-string"), one-line description, and what catches it (as
 * docs/faults.md's "caught by" column: "runner: schema.list-category") of a
 * fault; NULL for values out of range. Static strings. */
const char *ps_fault_name(ps_fault f);
const char *ps_fault_description(ps_fault f);
const char *ps_fault_caught_by(ps_fault f);

/* Adds the fault called name to *set. Returns 0, or -1 with a message that
 * lists the known names. */
int ps_fault_enable(ps_fault_set *set, const char *name, ps_error *err);

/* Prints "name  description  [caught by ...]" lines, one per fault (--list-faults). */
void ps_fault_print_list(FILE *out);
/* Faults list-cuts-long-names and list-trims-names: what the list shows of
 * a stored name (*name, *len narrowed in place); true when one is on.
 * Inline, as ps_fault_on: the store library links no more of the server. */
static inline bool ps_fault_is_space_(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static inline bool ps_fault_listed_name(ps_fault_set set, const char **name, size_t *len)
{
    bool cut = ps_fault_on(set, PS_FAULT_LIST_CUTS_LONG_NAMES);
    bool trim = ps_fault_on(set, PS_FAULT_LIST_TRIMS_NAMES);
    if (cut && *len > 200) {
        size_t n = 200; /* back over continuation bytes: still UTF-8 */
        while (n > 0 && ((unsigned char)(*name)[n] & 0xC0) == 0x80)
            n--;
        *len = n;
    }
    while (trim && *len && ps_fault_is_space_((*name)[0])) {
        ++*name;
        --*len;
    }
    while (trim && *len && ps_fault_is_space_((*name)[*len - 1]))
        --*len;
    return cut || trim;
}

#endif
