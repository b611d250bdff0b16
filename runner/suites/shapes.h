/* shapes.h - the response shapes of spec 2, for the suites that judge
 * bodies: a Category (list items, the create reply) and an Error (every
 * error response, the 429). */
#ifndef PS_RUNNER_SUITES_SHAPES_H
#define PS_RUNNER_SUITES_SHAPES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/json.h"

/* Each returns true, or false with why filled (cut to why_size). */
bool ps_shape_is_category(const ps_json *v, char *why, size_t why_size);
bool ps_shape_is_error(const ps_json *v, char *why, size_t why_size);

#endif
