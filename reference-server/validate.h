/* validate.h - validation of a createCategory request body (spec section 2,
 * NewCategory): a JSON object with a string `name` and an optional string
 * `description`. Each way a body can be wrong has its own error code,
 * listed in docs/error-codes.md. */
#ifndef PS_VALIDATE_H
#define PS_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/json.h"
#include "reference-server/faults.h"

typedef struct ps_new_category {
    const char *code;             /* NULL when valid, else the Error code (static string) */
    char message[256];            /* human-readable reason when invalid */
    ps_json_failure json_failure; /* the parse failure class, PS_JSON_OK if the text parsed */
    const char *name;             /* valid: borrowed from the tree (or a static "" / literal) */
    size_t name_len;
    const char *description;
    size_t description_len;
    bool has_description;
    ps_json *tree; /* owned: free with ps_new_category_free */
} ps_new_category;

/* Validates len bytes of body. Always fills *out (free it even when invalid).
 * Returns 0 when valid, -1 when not (out->code says why). Of faults, two
 * bend it: missing-name-accepted (no name: name "") and wrong-type-accepted
 * (a number or boolean name: its literal text). */
int ps_validate_new_category(const char *body, size_t len, ps_fault_set faults,
                             ps_new_category *out);
void ps_new_category_free(ps_new_category *c);

#endif
