/* front.h - replies made by something in front of the service (a gateway,
 * a reverse proxy, its limiter) rather than by the service: named as such,
 * never judged as the service's answers (issue 27).
 *
 * nginx, haproxy and cloud load balancers answer 502, 503 or 504 with a
 * page of their own when the upstream fails, times out or their limiter
 * (nginx limit_req: 503) refuses. Judged as the service's, one such reply
 * failed schema.content-type-json, errors.schema, ratelimit.headers-present
 * and every generate.* check it fell on, and the report never said a
 * gateway made it. What is left untested by them is reported instead
 * (the report's "fronts"). */
#ifndef PS_RUNNER_FRONT_H
#define PS_RUNNER_FRONT_H

#include <stdbool.h>
#include <stddef.h>

#include "runner/checks.h"
#include "core/json_writer.h"
#include "runner/conform.h"

/* Whether ex is a reply a front made: 502, 503 or 504 carrying none of the
 * X-RateLimit-* headers (a reply with them is the service's, whatever its
 * status), whose Server or Via names a gateway, or whose body is a page
 * (text/html, or a body opening with '<'), not JSON. who (when not NULL)
 * gets its name: "nginx", "haproxy", the Server or Via value, or "a
 * gateway" when only the page shows it. */
bool ps_front_made(const ps_exchange *ex, char *who, size_t who_size);

/* The observer that counts front replies (an entry of ps_suite_observers;
 * the framework hands it only replies ps_front_made accepts). */
#define PS_FRONT_STATE_SIZE 256
void ps_front_observe(ps_conform *c, void *state, const ps_observation *o);

/* Whether ck judges the front itself (limit429.enforced: a gateway that
 * enforces the limit with 503 is reported as exactly that), so a failure
 * on a front's reply stands. */
bool ps_front_judges(ps_check_id ck);

/* Records that ck had an observation on a front's reply, left untested. */
void ps_front_note_untested(const ps_conform *c, ps_check_id ck);

/* How many 503s a front made to requests of role so far (a gateway's
 * limiter: nginx limit_req), and the front's name (who: "" when none). */
unsigned ps_front_refusals(const ps_conform *c, ps_key_role role, char *who, size_t who_size);

/* How many replies to requests of role a front made so far, any status. */
unsigned ps_front_replies_to(const ps_conform *c, ps_key_role role);

/* The report's "fronts": null when no front answered, else which, how
 * often, with what statuses, and the checks whose observations on those
 * replies were left untested. */
void ps_front_report(const ps_conform *c, ps_jw *w);

#endif
