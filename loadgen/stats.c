/* stats.c - per-thread measurements and their merge. */
#include "loadgen/stats.h"

#include <stdlib.h>
#include <string.h>

static int pair_init(ps_lg_hpair *p, ps_error *err)
{
    if (ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS, &p->corr, err) != 0)
        return -1;
    return ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS, &p->unc, err);
}

static void pair_free(ps_lg_hpair *p)
{
    if (p->corr) ps_hist_close(p->corr);
    if (p->unc) ps_hist_close(p->unc);
    p->corr = p->unc = NULL;
}

static void pair_record(ps_lg_hpair *p, int64_t corr, int64_t unc)
{
    if (!p->corr) return;
    ps_hist_record(p->corr, corr);
    ps_hist_record(p->unc, unc);
}

static void pair_add(ps_lg_hpair *dst, const ps_lg_hpair *src)
{
    if (!dst->corr || !src->corr) return;
    ps_hist_add(dst->corr, src->corr);
    ps_hist_add(dst->unc, src->unc);
}

int ps_lg_stats_init(ps_lg_stats *s, unsigned plan_mask, bool intervals, ps_error *err)
{
    memset(s, 0, sizeof *s);
    if (pair_init(&s->all, err) != 0) goto fail;
    for (int i = 0; i < PS_LG_OPS; i++)
        if (pair_init(&s->op[i], err) != 0) goto fail;
    for (int i = 0; i < PS_LG_CLASSES; i++)
        if (pair_init(&s->cls[i], err) != 0) goto fail;
    for (int i = 0; i < PS_LG_PLANS; i++)
        if ((plan_mask & (1u << i)) && pair_init(&s->plan[i], err) != 0) goto fail;
    if (ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS, &s->lateness,
                     err) != 0)
        goto fail;
    s->intervals = intervals;
    pthread_mutex_init(&s->lock, NULL);
    for (int i = 0; i < PS_LG_RING; i++) {
        s->ring[i].sec = -1;
        if (intervals && ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS,
                                      &s->ring[i].h, err) != 0)
            goto fail;
    }
    s->ring[0].sec = 0;
    return 0;
fail:
    ps_lg_stats_free(s);
    return -1;
}

void ps_lg_stats_free(ps_lg_stats *s)
{
    pair_free(&s->all);
    for (int i = 0; i < PS_LG_OPS; i++)
        pair_free(&s->op[i]);
    for (int i = 0; i < PS_LG_CLASSES; i++)
        pair_free(&s->cls[i]);
    for (int i = 0; i < PS_LG_PLANS; i++)
        pair_free(&s->plan[i]);
    for (int i = 0; i < PS_LG_RING; i++)
        if (s->ring[i].h) ps_hist_close(s->ring[i].h);
    if (s->lateness) ps_hist_close(s->lateness);
    free(s->groups);
    pthread_mutex_destroy(&s->lock);
    memset(s, 0, sizeof *s);
}

void ps_lg_stats_groups(ps_lg_stats *s, size_t ngroups)
{
    free(s->groups);
    s->groups = calloc(ngroups ? ngroups : 1, sizeof *s->groups);
    if (!s->groups) abort();
    s->ngroups = ngroups;
}

void ps_lg_stats_group_sent(ps_lg_stats *s, size_t group)
{
    if (group < s->ngroups) s->groups[group].sent++;
}

void ps_lg_stats_group_answer(ps_lg_stats *s, size_t group, int status)
{
    if (group >= s->ngroups) return;
    s->groups[group].answered++;
    if (status == 429)
        s->groups[group].limited++;
    else if (status != 503) /* a 503 is no admission (ps_lg_stats_answer) */
        s->groups[group].admitted++;
}

const char *const ps_lg_op_names[PS_LG_OPS] = {"list", "create"};
const char *const ps_lg_class_names[PS_LG_CLASSES] = {"2xx", "3xx", "4xx", "5xx"};

int ps_lg_status_class(int status)
{
    if (status < 200 || status > 599) return -1;
    return status / 100 - 2;
}

void ps_lg_stats_answer(ps_lg_stats *s, ps_lg_op op, ps_plan_id plan, int status,
                        int64_t corrected_us, int64_t uncorrected_us)
{
    if (corrected_us < 0) corrected_us = 0;
    if (uncorrected_us < 0) uncorrected_us = 0;
    s->answered++;
    s->op_requests[op]++;
    if (status >= 0 && status < 600) s->status[status]++;
    pair_record(&s->all, corrected_us, uncorrected_us);
    pair_record(&s->op[op], corrected_us, uncorrected_us);
    int cls = ps_lg_status_class(status);
    if (cls >= 0) pair_record(&s->cls[cls], corrected_us, uncorrected_us);
    pair_record(&s->plan[plan], corrected_us, uncorrected_us);
    /* a 503 is no admission: a limiter in front (a gateway) refusing, or
     * an overloaded service; named apart, never called admitted */
    if (status == 429)
        s->plan_limited[plan]++;
    else if (status == 503)
        s->plan_unavailable[plan]++;
    else
        s->plan_admitted[plan]++;
    if (s->intervals) {
        ps_lg_interval *iv = &s->ring[s->cur_sec % PS_LG_RING];
        ps_hist_record(iv->h, corrected_us);
        iv->requests++;
        switch (cls) {
        case PS_LG_C2XX:
            iv->c2xx++;
            break;
        case PS_LG_C3XX:
            iv->c3xx++;
            break;
        case PS_LG_C4XX:
            iv->c4xx++;
            break;
        case PS_LG_C5XX:
            iv->c5xx++;
            break;
        default:
            break;
        }
        if (status == 429) iv->c429++;
    }
}

void ps_lg_stats_fail(ps_lg_stats *s, ps_lg_failure why)
{
    switch (why) {
    case PS_LG_FAIL_CONNECT:
        s->failed++;
        s->err_connect++;
        break;
    case PS_LG_FAIL_READ:
        s->failed++;
        s->err_read++;
        break;
    case PS_LG_FAIL_TIMEOUT:
        s->timed_out++;
        s->err_timeout++;
        break;
    }
    if (s->intervals) s->ring[s->cur_sec % PS_LG_RING].errors++;
}

void ps_lg_stats_tick(ps_lg_stats *s, int64_t sec)
{
    if (!s->intervals || sec <= s->cur_sec) return;
    pthread_mutex_lock(&s->lock);
    /* The collector drains a second within ~100 ms of its end, so the slot
     * we move into is empty unless it lags PS_LG_RING seconds; then the old
     * counts stay and are reported under their old second. */
    s->cur_sec = sec;
    ps_lg_interval *iv = &s->ring[sec % PS_LG_RING];
    if (iv->sec < 0) iv->sec = sec;
    pthread_mutex_unlock(&s->lock);
}

void ps_lg_stats_finish(ps_lg_stats *s)
{
    if (!s->intervals) return;
    pthread_mutex_lock(&s->lock);
    s->finished = true;
    pthread_mutex_unlock(&s->lock);
}

void ps_lg_interval_add(ps_lg_interval *into, const ps_lg_interval *from)
{
    ps_hist_add(into->h, from->h);
    into->requests += from->requests;
    into->c2xx += from->c2xx;
    into->c3xx += from->c3xx;
    into->c4xx += from->c4xx;
    into->c5xx += from->c5xx;
    into->c429 += from->c429;
    into->errors += from->errors;
}

void ps_lg_interval_clear(ps_lg_interval *iv)
{
    ps_hist_reset(iv->h);
    iv->requests = iv->c2xx = iv->c3xx = iv->c4xx = iv->c5xx = iv->c429 = iv->errors = 0;
}

int ps_lg_stats_collect(ps_lg_stats *s, int64_t sec, ps_lg_interval *into)
{
    if (!s->intervals) return 1;
    pthread_mutex_lock(&s->lock);
    int over = s->finished || s->cur_sec > sec;
    if (over) {
        ps_lg_interval *iv = &s->ring[sec % PS_LG_RING];
        if (iv->sec == sec) {
            ps_lg_interval_add(into, iv);
            ps_lg_interval_clear(iv);
            iv->sec = -1;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return over;
}

void ps_lg_stats_add(ps_lg_stats *dst, const ps_lg_stats *src)
{
    pair_add(&dst->all, &src->all);
    for (int i = 0; i < PS_LG_OPS; i++)
        pair_add(&dst->op[i], &src->op[i]);
    for (int i = 0; i < PS_LG_CLASSES; i++)
        pair_add(&dst->cls[i], &src->cls[i]);
    for (int i = 0; i < PS_LG_PLANS; i++)
        pair_add(&dst->plan[i], &src->plan[i]);
    for (int i = 0; i < 600; i++)
        dst->status[i] += src->status[i];
    dst->scheduled += src->scheduled;
    dst->sent += src->sent;
    dst->unsent += src->unsent;
    dst->unsent_expired += src->unsent_expired;
    dst->conn_waits += src->conn_waits;
    dst->warmup_requests += src->warmup_requests;
    if (dst->lateness && src->lateness) ps_hist_add(dst->lateness, src->lateness);
    dst->answered += src->answered;
    dst->failed += src->failed;
    dst->timed_out += src->timed_out;
    dst->skipped_retry_after += src->skipped_retry_after;
    dst->err_connect += src->err_connect;
    dst->connect_failures += src->connect_failures;
    dst->err_read += src->err_read;
    dst->err_timeout += src->err_timeout;
    for (int i = 0; i < PS_LG_OPS; i++)
        dst->op_requests[i] += src->op_requests[i];
    for (int i = 0; i < PS_LG_PLANS; i++) {
        dst->plan_admitted[i] += src->plan_admitted[i];
        dst->plan_limited[i] += src->plan_limited[i];
        dst->plan_unavailable[i] += src->plan_unavailable[i];
        dst->plan_sent[i] += src->plan_sent[i];
    }
    if (dst->groups && src->groups && dst->ngroups == src->ngroups)
        for (size_t g = 0; g < dst->ngroups; g++) {
            dst->groups[g].sent += src->groups[g].sent;
            dst->groups[g].answered += src->groups[g].answered;
            dst->groups[g].admitted += src->groups[g].admitted;
            dst->groups[g].limited += src->groups[g].limited;
        }
}

void ps_lg_stats_late(ps_lg_stats *s, int64_t late_us)
{
    /* The histogram starts at 1 us: on time is recorded as 1 us. */
    ps_hist_record(s->lateness, late_us < 1 ? 1 : late_us);
}
