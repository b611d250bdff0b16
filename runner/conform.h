/* conform.h - one conformance run: the configuration, the HTTP client, the
 * politeness rules, the check outcomes, and the observations every response
 * goes through (content type, Error shape, rate-limit headers), shared by the
 * suites in suites/.
 *
 * Ownership: ps_conform_create borrows cfg (it must outlive the run) and
 * owns everything else; ps_conform_destroy frees it. Exchanges passed to
 * ps_conform_send belong to the caller (ps_exchange_free). */
#ifndef PS_RUNNER_CONFORM_H
#define PS_RUNNER_CONFORM_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/json.h"
#include "runner/checks.h"
#include "runner/config.h"
#include "runner/client.h"
#include "runner/politeness.h"

/* Which credential a request carries, for rate-limit tracking. */
typedef enum ps_key_role {
    PS_KEY_NONE,  /* no configured key (none, unknown, malformed header) */
    PS_KEY_MAIN,  /* the main key, in a form the server should accept */
    PS_KEY_LIMIT, /* the limit key, idem */
    PS_KEY_MANGLED_MAIN, /* the main key in a form the server should refuse */
} ps_key_role;

/* Flags of ps_conform_send. */
enum {
    PS_SEND_RETRY_429 = 1, /* a 429 is waited out (Retry-After, within --max-wait) and retried */
};

/* Results of ps_conform_send. */
enum {
    PS_SENT = 0,           /* a response arrived: see ex */
    PS_SEND_FAILED = -1,   /* transport failure: ex->error */
    PS_SEND_SKIPPED = -2,  /* not sent: waiting would exceed --max-wait, 429s kept coming
                            * (PS_SEND_RETRY_429), or the run is aborting */
};

typedef struct ps_conform ps_conform;

typedef struct key_track {
    bool have;
    int64_t limit, remaining, reset;
    long status;
    bool reset_sane;
} key_track;

struct ps_conform {
    const ps_conform_config *cfg;
    ps_client *http;
    ps_politeness *polite;
    ps_checks *checks;
    char run_token[9];          /* random hex naming this run's categories (short: length
                                 * limits are not specified, so any may apply) */
    char unknown_key[48];       /* a key the service cannot know */
    key_track track[3];         /* by ps_key_role (NONE unused) */
    int consecutive_transport_failures, consecutive_connect_failures;
    bool aborted;               /* exit 3 */
    char abort_reason[400];
    char skip_reason[512];      /* why the last send was skipped */
    /* Sends skipped because a 429 asked for a wait beyond --max-wait (or
     * 429s kept coming): the checks they fed are not run, the run incomplete. */
    unsigned skipped_waits;
    int64_t longest_skipped_wait_ns;
    unsigned exchanges;
    int64_t started_wall_ns, started_mono_ns;
};

/* Set by the SIGINT/SIGTERM handler: the run stops at the next request. */
extern volatile sig_atomic_t ps_conform_interrupted;

ps_conform *ps_conform_create(const ps_conform_config *cfg, ps_checks *checks, ps_error *err);
void ps_conform_destroy(ps_conform *c);

/* Sends a request on behalf of check ck (its time is accounted there),
 * honouring politeness for the key the request carries, and runs every
 * response through the shared observations. */
int ps_conform_send(ps_conform *c, ps_check_id ck, const ps_client_request *req, ps_key_role role,
                    unsigned flags, ps_exchange *ex);

/* Runs one response through the shared observations (content type, Error
 * shape, rate-limit headers and the key's sequence). ps_conform_send does
 * this for every response; exposed for the fuzz target. */
void ps_conform_observe(ps_conform *c, const ps_exchange *ex, ps_key_role role);

/* The configured key of a role: the limit key for PS_KEY_LIMIT, else the
 * main key (not owned by the caller). */
const char *ps_conform_key(const ps_conform *c, ps_key_role role);
/* Writes the Authorization value "Bearer KEY" for a role's key into the
 * caller's out, cut to size (the suites use 1024 bytes, as before). */
void ps_conform_bearer(const ps_conform *c, ps_key_role role, char *out, size_t size);

/* Appends s as a JSON string literal, replacing bytes that are not UTF-8
 * by U+FFFD: messages and evidence quote untrusted server bytes, and the
 * report must stay a valid document. */
void ps_conform_json_string(ps_buf *b, const char *s, size_t len);

/* Evidence JSON object text for an exchange (caller frees). */
char *ps_conform_evidence(const ps_conform *c, const ps_exchange *ex, const char *expected);

/* Records a failure of ck with this exchange as evidence. */
void ps_conform_fail(ps_conform *c, ps_check_id ck, const ps_exchange *ex, const char *expected,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Records the consequence of a send that did not yield a response. */
void ps_conform_no_response(ps_conform *c, ps_check_id ck, int send_rc, const ps_exchange *ex);

/* Parses the response body as JSON; NULL with why filled when it is not. */
ps_json *ps_conform_parse_body(const ps_exchange *ex, char *why, size_t why_size);

/* Shape checks (spec 2): return true, or false with why filled. */
bool ps_conform_is_category(const ps_json *v, char *why, size_t why_size);
bool ps_conform_is_error(const ps_json *v, char *why, size_t why_size);

#endif
