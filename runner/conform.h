/* conform.h - the runner framework as the suites see it: one conformance
 * run's context (opaque), polite sending, evidence and outcomes, and the
 * observer hook through which every response reaches the suites' judges
 * (runner/suites/every_response.c).
 *
 * Ownership: ps_conform_create borrows cfg, checks and the observer table
 * (they must outlive the run) and owns everything else, the observers'
 * per-run state included; ps_conform_destroy frees it. Exchanges passed to
 * ps_conform_send belong to the caller (ps_exchange_free). */
#ifndef PS_RUNNER_CONFORM_H
#define PS_RUNNER_CONFORM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/json.h"
#include "runner/checks.h"
#include "runner/client.h"
#include "runner/config.h"

/* Which credential a request carries, for rate-limit tracking. */
typedef enum ps_key_role {
    PS_KEY_NONE,         /* no configured key (none, unknown, malformed header) */
    PS_KEY_MAIN,         /* the main key, in a form the server should accept */
    PS_KEY_LIMIT,        /* the limit key, idem */
    PS_KEY_MANGLED_MAIN, /* the main key in a form the server should refuse */
} ps_key_role;

/* Flags of ps_conform_send. */
enum {
    PS_SEND_RETRY_429 = 1, /* a 429 is waited out (Retry-After, within --max-wait) and retried */
    /* The response is judged by the sender alone, not handed to the
     * observers: a request malformed at the HTTP level (a repeated
     * singleton field), which a proxy in front of the service (nginx)
     * may answer itself with a page of its own. */
    PS_SEND_NOT_OBSERVED = 2,
};

/* Results of ps_conform_send. */
enum {
    PS_SENT = 0,          /* a response arrived: see ex */
    PS_SEND_FAILED = -1,  /* transport failure: ex->error */
    PS_SEND_SKIPPED = -2, /* not sent: waiting would exceed --max-wait, 429s kept coming
                           * (PS_SEND_RETRY_429), or the run is aborting */
};

typedef struct ps_conform ps_conform;

/* What the framework hands the observers for every response of a run: the
 * exchange (responded; ex->sent_wall_ns and ex->done_wall_ns say when it was
 * sent and answered) and the role of the key the request carried. */
typedef struct ps_observation {
    const ps_exchange *ex;
    ps_key_role role;
} ps_observation;

/* A judge of every response: it records outcomes for the checks it owns.
 * state is its own memory for the run (e.g. a key's last Remaining):
 * state_size bytes, zeroed at ps_conform_create, freed with the run. */
typedef struct ps_observer {
    const char *name; /* what it judges, for a reader: "content-type" */
    size_t state_size;
    void (*observe)(ps_conform *c, void *state, const ps_observation *o);
} ps_observer;

/* What a run counted, for its report. */
typedef struct ps_conform_tally {
    unsigned exchanges; /* requests sent, answered or not */
    /* Sends skipped because a 429 asked for a wait beyond --max-wait (or
     * 429s kept coming): the checks they fed are not run, the run incomplete. */
    unsigned skipped_waits;
    int64_t longest_skipped_wait_ns; /* the longest such wait asked for */
    int64_t started_wall_ns, started_mono_ns;
    unsigned creates;        /* creates answered 2xx: categories the run (probably) made */
    unsigned generated;      /* requests the generative phase sent */
    char generate_stop[200]; /* why it stopped early; "" when it did not */
    int64_t generate_ns;     /* how long it took */
} ps_conform_tally;

/* Set by the SIGINT/SIGTERM handler: the run stops at the next request. */
extern volatile sig_atomic_t ps_conform_interrupted;

/* Every response of the run goes through observers[0..nobservers) in order. */
ps_conform *ps_conform_create(const ps_conform_config *cfg, ps_checks *checks,
                              const ps_observer *observers, size_t nobservers, ps_error *err);
void ps_conform_destroy(ps_conform *c);

/* The run's configuration and its check outcomes (borrowed at create). */
const ps_conform_config *ps_conform_cfg(const ps_conform *c);
ps_checks *ps_conform_checks(const ps_conform *c);
/* The base URL requests go to, as the client uses it (no trailing slash). */
const char *ps_conform_base_url(const ps_conform *c);
/* Random hex naming this run's categories (short: length limits are not
 * specified, so any may apply). */
const char *ps_conform_run_token(const ps_conform *c);
/* A key the service cannot know. */
const char *ps_conform_unknown_key(const ps_conform *c);
/* The run's seed (--seed, else drawn at random): the run token and the
 * generative phase's requests follow from it. */
uint64_t ps_conform_seed(const ps_conform *c);
/* Registers one more secret every output redacts (see ps_client_add_secret). */
void ps_conform_add_secret(ps_conform *c, const char *secret, const char *env_var);
/* Counts creates answered 2xx outside ps_conform_send (a concurrent burst's). */
void ps_conform_count_creates(ps_conform *c, unsigned n);
/* What the generative phase did, for the report: requests sent, and why it
 * stopped early ("" when it did not). */
void ps_conform_note_generated(ps_conform *c, unsigned sent, const char *stop_reason,
                               int64_t duration_ns);
/* auth.near-miss-keys sends the main key less its last character, which
 * every output redacts (registered as a secret at create); a shorter key's
 * near miss would be a few common characters, hiding ordinary text, so for
 * keys shorter than this the check is not applicable. */
#define PS_CONFORM_NEAR_MISS_MIN_KEY 5

/* An aborted run sends nothing more and exits 3. ps_conform_abort sets (or
 * replaces) the reason; ps_conform_abort_reason is NULL while not aborted. */
void ps_conform_abort(ps_conform *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool ps_conform_aborted(const ps_conform *c);
const char *ps_conform_abort_reason(const ps_conform *c);
void ps_conform_tally_get(const ps_conform *c, ps_conform_tally *out);

/* Sends a request on behalf of check ck (its time is accounted there),
 * honouring politeness for the key the request carries, and hands every
 * response to the observers. */
int ps_conform_send(ps_conform *c, ps_check_id ck, const ps_client_request *req, ps_key_role role,
                    unsigned flags, ps_exchange *ex);
/* True when the last ps_conform_send (PS_SEND_RETRY_429) was skipped
 * because the service answered 429 again and again although each wait it
 * asked for was honoured; ex then holds the last 429. */
bool ps_conform_refused_throughout(const ps_conform *c);

/* As ps_conform_send, with a second Authorization field line when
 * authorization2 is not NULL (ps_client_perform_ex). */
int ps_conform_send_ex(ps_conform *c, ps_check_id ck, const ps_client_request *req,
                       const char *authorization2, ps_key_role role, unsigned flags,
                       ps_exchange *ex);

/* Records a 429 that came back outside ps_conform_send (a concurrent
 * burst's), received at ex->done_wall_ns: the key's next request through
 * ps_conform_send waits as it indicated, or backs off (1 s, 2 s, ...) when
 * it indicated nothing. A burst's refusals are one attempt: note one. */
void ps_conform_note_refusal(ps_conform *c, const ps_exchange *ex, ps_key_role role);
/* The service's clock: the offset (service minus client, ns) every
 * time-based check is judged in, measured from each response's Date
 * (core/service_clock.h) before the observers see it. */
/* The offset to wait by (core ps_service_clock_earliest_ns): a wait for
 * a moment the service named lasts until its clock has reached it by what
 * punctual Dates show. */
int64_t ps_conform_wait_offset_ns(const ps_conform *c);
int64_t ps_conform_clock_offset_ns(const ps_conform *c);
const struct ps_service_clock *ps_conform_clock(const ps_conform *c);
/* The service's wall clock at the client's wall-clock time wall_ns. */
int64_t ps_conform_service_ns(const ps_conform *c, int64_t wall_ns);
/* The memory of the observer whose function is observe for this run (NULL:
 * none such): how a suite reaches an observer's state, e.g. the judge's. */
void *ps_conform_observer_state(const ps_conform *c,
                                void (*observe)(ps_conform *, void *, const ps_observation *));
/* What the run's client met on its way (TLS, HTTP version, round trip). */
const ps_client_transport *ps_conform_transport(const ps_conform *c);
/* Records what the limit suite's burst met (for the report's transport). */
struct ps_burst_stats;
void ps_conform_note_burst(ps_conform *c, const struct ps_burst_stats *bs);
/* The last burst's stats, NULL when none ran. */
const struct ps_burst_stats *ps_conform_last_burst(const ps_conform *c);
/* The wall time (ns) before which nothing may be sent on a role's key, 0 when free. */
int64_t ps_conform_key_free_at(const ps_conform *c, ps_key_role role);

/* Hands one response to every observer. ps_conform_send does this for
 * every response; exposed for the fuzz target. */
void ps_conform_observe(ps_conform *c, const ps_exchange *ex, ps_key_role role);

/* The configured key of a role: the limit key for PS_KEY_LIMIT, else the
 * main key (not owned by the caller). */
const char *ps_conform_key(const ps_conform *c, ps_key_role role);
/* Writes the Authorization value "Bearer KEY" for a role's key into the
 * caller's out, cut to size (the suites use 1024 bytes, as before). */
void ps_conform_bearer(const ps_conform *c, ps_key_role role, char *out, size_t size);

/* Evidence JSON object text for an exchange (caller frees): the request
 * and the response or transport error, bodies cut to 4 KiB. Untrusted server
 * bytes are quoted safely (core/json_writer.h). */
char *ps_conform_evidence(const ps_conform *c, const ps_exchange *ex, const char *expected);

/* Outcomes of this run's checks (runner/checks.h says what each means):
 * a pass, a failure with an exchange as evidence, not run (it applies but
 * could not be tested) or not applicable. Unselected checks ignore them. */
void ps_conform_pass(ps_conform *c, ps_check_id ck);
void ps_conform_not_run(ps_conform *c, ps_check_id ck, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ps_conform_not_applicable(ps_conform *c, ps_check_id ck, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Is ck selected (--only/--skip)? Is any check whose id starts with prefix? */
bool ps_conform_selected(const ps_conform *c, ps_check_id ck);
bool ps_conform_any_selected(const ps_conform *c, const char *prefix);
/* Records a failure of ck with this exchange as evidence. */
void ps_conform_fail(ps_conform *c, ps_check_id ck, const ps_exchange *ex, const char *expected,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Records the consequence of a send that did not yield a response. */
void ps_conform_no_response(ps_conform *c, ps_check_id ck, int send_rc, const ps_exchange *ex);

/* Parses the response body as JSON; NULL with why filled when it is not. */
ps_json *ps_conform_parse_body(const ps_exchange *ex, char *why, size_t why_size);

#endif
