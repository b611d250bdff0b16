/* faults.h - the deliberate deviations of the reference server (--fault NAME),
 * catalogued in docs/faults.md. The names are a contract with the runner's
 * tests, which assert which check catches each one. */
#ifndef PS_FAULTS_H
#define PS_FAULTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"

typedef enum ps_fault {
    PS_FAULT_LIST_ID_STRING,
    PS_FAULT_CREATE_STATUS_200,
    PS_FAULT_INVENT_DESCRIPTION,
    PS_FAULT_UNICODE_MANGLED,
    PS_FAULT_DUPLICATE_IDS,
    PS_FAULT_CONTENT_TYPE_TEXT,
    PS_FAULT_ERROR_STATUS_MISMATCH,
    PS_FAULT_ERROR_MISSING_CODE,
    PS_FAULT_NO_AUTH,
    PS_FAULT_ACCEPT_ANY_KEY,
    PS_FAULT_BEARER_CASE_SENSITIVE,
    PS_FAULT_NO_WWW_AUTHENTICATE,
    PS_FAULT_MISSING_NAME_ACCEPTED,
    PS_FAULT_WRONG_TYPE_ACCEPTED,
    PS_FAULT_MALFORMED_JSON_500,
    PS_FAULT_NO_RATELIMIT_HEADERS_ON_ERRORS,
    PS_FAULT_RESET_MILLISECONDS,
    PS_FAULT_RESET_RELATIVE,
    PS_FAULT_RESET_UNSTABLE,
    PS_FAULT_REMAINING_STATIC,
    PS_FAULT_REMAINING_NEGATIVE,
    PS_FAULT_LIMIT_WRONG_PLAN,
    PS_FAULT_NEVER_LIMIT,
    PS_FAULT_NO_RETRY_AFTER,
    PS_FAULT_RETRY_AFTER_MISMATCH,
    PS_FAULT_NO_RECOVERY,
    PS_FAULT_OVER_ADMISSION_RACE,
    PS_FAULT_COUNT
} ps_fault;

/* A set of enabled faults (bit i = fault i). */
typedef uint64_t ps_fault_set;

static inline bool ps_fault_on(ps_fault_set set, ps_fault f)
{
    return (set >> f) & 1u;
}

/* Name ("list-id-string") and one-line description of a fault; NULL for
 * values out of range. Static strings. */
const char *ps_fault_name(ps_fault f);
const char *ps_fault_description(ps_fault f);

/* Adds the fault called name to *set. Returns 0, or -1 with a message that
 * lists the known names. */
int ps_fault_enable(ps_fault_set *set, const char *name, ps_error *err);

/* Prints "name  description" lines, one per fault (--list-faults). */
void ps_fault_print_list(FILE *out);

#endif
