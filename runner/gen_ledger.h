/* gen_ledger.h - every category the run creates, whichever suite sent the
 * create: the request sent, the 201's echo and what the list shows later
 * are compared field by field (roundtrip.stored-as-answered). A service
 * that stores something other than its 201 said (another value of a
 * repeated member, a shortened or changed string) fails it.
 *
 * The ledger is an observer (runner/conform.h): it sees every 2xx to POST
 * /categories with the request as sent. Its memory is the observer's fixed
 * state (no allocation outlives a call): per create the id, a hash and the
 * first bytes of the 201's name and description, so a run compares up to
 * PS_LEDGER_CAPACITY creates; later ones are counted, not compared.
 *
 * Replies are read leniently here (ps_ledger_parse_body): a lone surrogate
 * escape ("\ud800") is valid JSON grammar (RFC 8259 7) whose meaning is
 * unpredictable (8.2), so a service that stores one is not failed for
 * echoing it; the runner reads it as U+FFFD. */
#ifndef PS_RUNNER_GEN_LEDGER_H
#define PS_RUNNER_GEN_LEDGER_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/json.h"
#include "runner/conform.h"

#define PS_LEDGER_CAPACITY 2048
/* The observer's state size (sizeof the ledger, checked in gen_ledger.c). */
#define PS_LEDGER_STATE_SIZE (PS_LEDGER_CAPACITY * 136 + 64)

/* The observer (an entry of ps_suite_observers). */
void ps_ledger_observe(ps_conform *c, void *state, const ps_observation *o);

/* Compares every create recorded and not yet compared with list (a parsed
 * list reply, ex its exchange): a create found is judged on its fields, one
 * not found fails as unlisted. With final, a run that recorded no create
 * marks the check not applicable. */
void ps_ledger_judge_list(ps_conform *c, const ps_json *list, const ps_exchange *ex, bool final);

/* The body of a reply as JSON, as ps_conform_parse_body, but a lone
 * surrogate escape reads as U+FFFD instead of failing the parse. NULL with
 * why (if non-NULL) saying why when it is not JSON. */
ps_json *ps_ledger_parse_body(const ps_exchange *ex, char *why, size_t why_size);
/* The same reading of len bytes of text (NULL when not JSON). */
ps_json *ps_ledger_parse_text(const char *text, size_t len);

/* Appends s (len bytes) for a message: at most max bytes of it, control
 * characters, DEL, U+0080-U+00A0, U+2028/9, '"' and '\' as JSON escapes,
 * bytes that are not UTF-8 as \xHH, "..." when cut; other text as is, so
 * "a\u001f" and "a" never print alike. */
void ps_ledger_escape(ps_buf *out, const char *s, size_t len, size_t max);

#endif
