/* ratelimit_judge_model.c - what the rate-limit judge infers of a key's
 * limiter (see ratelimit_judge.h): the clues each admitted response leaves
 * (judge_note_model), the model and the counting the shared model
 * (core/ratelimit_model.h) decides from them, and the report's "ratelimit"
 * array. The header rules are ratelimit_judge.c's. */
#include "runner/suites/ratelimit_judge.h"

#include <stdlib.h>
#include <string.h>

#include "core/ratelimit_model.h"
#include "runner/suites/ratelimit_judge_state.h"

/* ---- what tells the models apart --------------------------------------- */

/* The bounds below hold for each model as docs/rate-limits.md describes
 * them, whatever its window length W (under a time scale it is not the
 * plan's): Reset is rounded up, so the true time lies in (Reset - 1, Reset];
 * a request is admitted between its sent and done times. A counted request
 * b showing Reset R in the period it opened at first_done gives W >
 * R - 1 - first_done for a fixed window (it began no later), a log (its
 * oldest entry is no younger) and a counter (its window began no later). */
static double s_of(int64_t ns)
{
    return (double)ns / 1e9;
}

/* The farthest Reset - arrival under the current Reset, when Remaining
 * stayed at 3/4 of the limit or more under it, into *least. */
static void full_period(const model_clues *m, int64_t *least)
{
    if (!m->cur_reset || m->cur_ahead_ns <= 0 || 4 * m->cur_max_remaining < 3 * m->limit) return;
    if (!*least || m->cur_ahead_ns < *least) *least = m->cur_ahead_ns;
}

static void note_response(model_clues *m, const resp_rec *b)
{
    int64_t ahead = b->reset * 1000000000LL - b->done_ns;
    if (ahead > m->max_ahead_ns) m->max_ahead_ns = ahead;
    if (b->reset != m->cur_reset) {
        full_period(m, &m->full_ahead_ns);
        m->cur_reset = b->reset;
        m->cur_ahead_ns = 0;
        m->cur_max_remaining = -1;
    }
    if (ahead > m->cur_ahead_ns) m->cur_ahead_ns = ahead;
    if (b->remaining > m->cur_max_remaining) m->cur_max_remaining = b->remaining;
    /* A token bucket's Reset is when it is full again: no further ahead
     * than Limit - Remaining requests' worth of refill. */
    double lead = (double)b->reset - 1.0 - s_of(b->done_ns);
    int64_t used = b->limit - b->remaining;
    if (lead <= 0) return;
    if (used <= 0)
        m->lead_unbounded = true;
    else if (lead / (double)used > m->max_lead_per_used)
        m->max_lead_per_used = lead / (double)used;
}

static void note_pair(model_clues *m, const resp_rec *a, const resp_rec *b)
{
    int64_t d = a->remaining - b->remaining;
    if (b->reset == a->reset && d >= 1 && b->sent_ns < (a->reset - 1) * 1000000000LL) {
        /* a counted request in the window (or log) Reset names */
        if (m->period_reset != a->reset || !m->period_falls) {
            m->period_reset = a->reset;
            m->period_falls = 0;
            m->first_fall_done_ns = b->done_ns;
        }
        m->period_falls++;
        if (m->period_falls > m->max_period_falls) m->max_period_falls = m->period_falls;
        m->last_fall_sent_ns = b->sent_ns;
        return;
    }
    if (b->reset == a->reset && d < 0 && b->done_ns < (a->reset - 1) * 1000000000LL) {
        /* Remaining rose with b admitted before the log's oldest entry could
         * leave (it leaves at its Reset) and before a fixed window ends:
         * only a sliding window counter (or a bucket refilling) does that */
        m->counter_rises++;
        return;
    }
    /* b after the Reset of a period that showed counted requests: what came
     * back (any admitted answer tells the state, a 4xx one too; a sliding
     * log frees one slot at a time, so Remaining need not rise) */
    if (m->period_reset != a->reset || !m->period_falls || b->reset <= a->reset ||
        b->sent_ns < (a->reset - PS_RLM_RESET_ROUNDING_S) * 1000000000LL)
        return;
    double w_lo = (double)a->reset - 1.0 - s_of(m->first_fall_done_ns);
    if (w_lo <= 0) return; /* the period too short to bound W */
    if (b->remaining >= b->limit - 1) {
        /* A log gives all back only when its last entry is W old; a counter
         * only when the last window's count, weighed by its overlap, is
         * below one request. */
        bool not_log = s_of(b->done_ns) - s_of(m->last_fall_sent_ns) < w_lo;
        double overlap = 1.0 - (s_of(b->done_ns) - ((double)a->reset - 1.0)) / w_lo;
        bool not_counter = (double)m->period_falls * overlap >= 1.0;
        if (not_log && not_counter) m->fixed_returns++;
    } else {
        /* Part came back after Reset: no fixed window (it gives all back),
         * no bucket (full at its Reset); a counter's next window ends W
         * after the last, a log's Reset is its next oldest entry's. */
        m->part_returns++;
        if ((double)(b->reset - a->reset) <= w_lo - 1.0) m->log_returns++;
    }
}

void judge_note_model(key_seq *tr, const resp_rec *b)
{
    model_clues *m = &tr->clues;
    if (b->status == 429 || !b->reset_sane) return;
    if (!m->limit) m->limit = b->limit;
    if (b->limit != m->limit) return;
    note_response(m, b);
    const resp_rec *a = &m->last_ok;
    if (a->have && a->limit == m->limit) note_pair(m, a, b);
    m->last_ok = *b;
}

/* ---- what the judge learned ---------------------------------------------- */

/* The key's signs for the shared model's classification
 * (ps_rlm_classify), as plain values. */
static void shape_of(const key_seq *k, ps_rlm_shape *s)
{
    const model_clues *m = &k->clues;
    memset(s, 0, sizeof *s);
    s->held = k->held;
    s->moved_ahead = k->moved_later;
    s->window_ns =
        m->max_ahead_ns > PS_RLM_RESET_ROUNDING_NS ? m->max_ahead_ns - PS_RLM_RESET_ROUNDING_NS : 0;
    s->full_ahead_ns = m->full_ahead_ns;
    full_period(m, &s->full_ahead_ns);
    s->max_lead_per_used = m->max_lead_per_used;
    s->lead_unbounded = m->lead_unbounded;
    s->max_period_falls = m->max_period_falls;
    s->whole_returns = m->fixed_returns;
    s->part_returns = m->part_returns;
    s->log_returns = m->log_returns;
    s->rises = m->counter_rises;
    s->counter_rises = m->counter_rises;
}

static ps_rlm_label model_of(const key_seq *k)
{
    ps_rlm_shape s;
    shape_of(k, &s);
    return ps_rlm_classify(&s);
}

/* The key's evidence for the shared model: answers one at a time (a
 * burst's are read apart), so a fall is the request's own, a hold in one
 * window an uncounted one unless a bucket refilled; no 429s (a ban refuses
 * every operation). */
static void counting_of(const key_seq *k, ps_rlm_counting *out)
{
    ps_rlm_evidence e;
    memset(&e, 0, sizeof e); /* the rules: inferred (PS_RLM_OPS_AUTO, PS_RLM_ERRORS_AUTO) */
    e.ordered = true;
    e.refill = k->moved_later > 0;
    for (int o = 0; o < PS_RLM_OPS; o++) {
        for (int cls = 0; cls < PS_RLM_CLASSES; cls++) {
            ps_rlm_tally *t = &e.by[o][cls];
            t->fell = k->counted[o][cls];
            t->held = k->uncounted[o][cls];
            t->admitted = t->fell + t->held;
        }
        e.bursts_counted[o] = k->burst_counted[o];
    }
    ps_rlm_decide(&e, out);
}

bool ps_ratelimit_judge_view(const ps_conform *c, ps_key_role role, ps_rl_key_view *out)
{
    judge *j = judge_of(c);
    memset(out, 0, sizeof *out);
    if (!j) return false;
    const key_seq *k = judge_seq_for(c, j, role);
    if (!k) return false;
    ps_rlm_counting cnt;
    counting_of(k, &cnt);
    out->model = model_of(k);
    out->list_counted = cnt.ops[PS_RLM_OP_LIST];
    out->create_counted = cnt.ops[PS_RLM_OP_CREATE];
    out->errors_counted = cnt.errors;
    return true;
}

void ps_ratelimit_judge_report(const ps_conform *c, ps_jw *w)
{
    judge *j = judge_of(c);
    ps_jw_array_open(w);
    for (int i = 0; j && i < 2; i++) {
        const key_seq *k = i == 0 ? &j->main : &j->limit;
        if (!k->seen || (i == 1 && !ps_conform_cfg(c)->limit_key_given)) continue;
        ps_jw_object_open(w);
        ps_jw_kstring(w, "key", i == 0 ? "main" : "limit");
        ps_rlm_shape shape;
        shape_of(k, &shape);
        ps_jw_kstring(w, "model", ps_rlm_label_name(ps_rlm_classify(&shape)));
        ps_jw_kstring(w, "evidence", ps_rlm_label_evidence(&shape));
        /* exactly what ps_ratelimit_judge_view gives the suites */
        ps_rlm_counting cnt;
        counting_of(k, &cnt);
        ps_jw_key(w, "counted");
        ps_jw_object_open(w);
        ps_jw_kstring(w, "listCategories", ps_rlm_counted_words(cnt.ops[PS_RLM_OP_LIST]));
        ps_jw_kstring(w, "createCategory", ps_rlm_counted_words(cnt.ops[PS_RLM_OP_CREATE]));
        ps_jw_kstring(w, "errors", ps_rlm_counted_words(cnt.errors));
        ps_jw_object_close(w);
        ps_jw_object_close(w);
    }
    ps_jw_array_close(w);
    if (j) {
        free(j->main.static_evidence);
        free(j->limit.static_evidence);
        j->main.static_evidence = j->limit.static_evidence = NULL;
    }
}
