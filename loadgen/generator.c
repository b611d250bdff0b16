/* generator.c - the generator's health verdict and its JSON. */
#define _GNU_SOURCE
#include "loadgen/generator.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/histogram.h"

const char *ps_lg_gen_verdict_name(ps_lg_gen_verdict v)
{
    switch (v) {
    case PS_LG_GEN_OK:
        return "ok";
    case PS_LG_GEN_SATURATED:
        return "saturated";
    case PS_LG_GEN_CONN_LIMITED:
        return "connection-limited";
    case PS_LG_GEN_NOT_APPLICABLE:
        break;
    }
    return "not-applicable";
}

void ps_lg_thread_cpu_now(int64_t *cpu_ns, int64_t *runq_wait_ns)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    long long run = 0, wait = 0;
    if (f) {
        int n = fscanf(f, "%lld %lld", &run, &wait);
        fclose(f);
        if (n == 2) {
            *cpu_ns = run;
            *runq_wait_ns = wait;
            return;
        }
    }
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    *cpu_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    *runq_wait_ns = -1;
}

static void cpu_figures(const ps_lg_thread_cpu *cpu, int nthreads, ps_lg_generator *g)
{
    int64_t run = 0, wait = 0, ran = 0;
    bool wait_known = true;
    for (int i = 0; i < nthreads; i++) {
        run += cpu[i].cpu_ns;
        ran += cpu[i].ran_ns;
        if (cpu[i].runq_wait_ns < 0)
            wait_known = false;
        else
            wait += cpu[i].runq_wait_ns;
    }
    g->cpu_s = (double)run / 1e9;
    g->runq_wait_s = wait_known ? (double)wait / 1e9 : -1;
    g->busy_share = ran > 0 ? (double)(run + (wait_known ? wait : 0)) / (double)ran : -1;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        g->user_cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
        g->sys_cpu_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    }
}

void ps_lg_generator_judge(const ps_lg_config *cfg, const ps_lg_stats *t,
                           const ps_lg_thread_cpu *cpu, int nthreads, double measured_s,
                           double send_span_s, ps_lg_generator *g)
{
    memset(g, 0, sizeof *g);
    g->sent = t->sent;
    g->unsent = t->unsent;
    g->conn_waits = t->conn_waits;
    g->warmup_requests = t->warmup_requests;
    if (t->lateness && ps_hist_total_count(t->lateness) > 0) {
        g->late_p50_us = ps_hist_value_at_percentile(t->lateness, 50);
        g->late_p90_us = ps_hist_value_at_percentile(t->lateness, 90);
        g->late_p99_us = ps_hist_value_at_percentile(t->lateness, 99);
        g->late_max_us = ps_hist_max(t->lateness);
    }
    cpu_figures(cpu, nthreads, g);
    double span = send_span_s > measured_s ? send_span_s : measured_s;
    if (span > 0) g->send_rate_rps = (double)t->sent / span;
    if (!ps_lg_config_open_model(cfg) || !cfg->duration_ns || measured_s <= 0) {
        g->verdict = PS_LG_GEN_NOT_APPLICABLE;
        return;
    }
    /* What the schedule asked for in the measured time: every request due in
     * it, less the ones Retry-After told us not to send. */
    int64_t due = t->sent + t->unsent + t->skipped_retry_after;
    double measured = (double)cfg->duration_ns / 1e9;
    g->target_rps = (double)due / measured;
    double sendable = (double)(due - t->skipped_retry_after) / measured;
    bool short_sent = sendable > 0 && g->send_rate_rps < PS_LG_MIN_SEND_SHARE * sendable;
    bool late = g->late_p90_us * 1000 > cfg->max_lateness_ns;
    if (!short_sent && !late) {
        g->verdict = PS_LG_GEN_OK;
        return;
    }
    char what[160];
    if (short_sent)
        snprintf(what, sizeof what, "sent %.0f req/s of the %.0f asked (%.0f%%)", g->send_rate_rps,
                 sendable, 100.0 * g->send_rate_rps / sendable);
    else
        snprintf(what, sizeof what, "90%% of requests left up to %.1f ms late (bound %.1f ms)",
                 (double)g->late_p90_us / 1e3, (double)cfg->max_lateness_ns / 1e6);
    /* Behind while a thread ran or waited to run nearly all the time: the
     * generator's CPU was the bottleneck. Behind while idle, with requests
     * waiting for a connection: the target held every connection. */
    bool idle = g->busy_share >= 0 && g->busy_share < PS_LG_BUSY_SHARE;
    if (idle && g->conn_waits > 0) {
        g->verdict = PS_LG_GEN_CONN_LIMITED;
        snprintf(g->why, sizeof g->why,
                 "%s: %lld requests waited for a connection while the generator was busy only "
                 "%.0f%% of the time (the target held every connection: raise --connections)",
                 what, (long long)g->conn_waits, 100.0 * g->busy_share);
        return;
    }
    /* Behind while idle, with connection attempts failing: the generator
     * could not open the connections it needed (a descriptor limit, ports,
     * or a target refusing them). */
    if (idle && t->connect_failures > 0) {
        g->verdict = PS_LG_GEN_CONN_LIMITED;
        snprintf(g->why, sizeof g->why,
                 "%.100s: %lld connection attempts failed, the generator busy only %.0f%% of "
                 "the time (it could not open the connections it needed: see the first "
                 "failure; ulimit -n, or fewer --connections)",
                 what, (long long)t->connect_failures, 100.0 * g->busy_share);
        return;
    }
    g->verdict = PS_LG_GEN_SATURATED;
    if (g->busy_share >= 0)
        snprintf(g->why, sizeof g->why,
                 "%s: the generator's threads ran or waited for a CPU %.0f%% of the time (add "
                 "--threads, cores or machines: --shard)",
                 what, 100.0 * g->busy_share);
    else
        snprintf(g->why, sizeof g->why, "%s", what);
}

void ps_lg_generator_json(ps_jw *w, const ps_lg_generator *g)
{
    ps_jw_key(w, "generator");
    ps_jw_object_open(w);
    ps_jw_kstring(w, "verdict", ps_lg_gen_verdict_name(g->verdict));
    if (g->why[0])
        ps_jw_kstring(w, "why", g->why);
    else
        ps_jw_knull(w, "why");
    if (g->verdict == PS_LG_GEN_NOT_APPLICABLE)
        ps_jw_knull(w, "target_rps");
    else
        ps_jw_kdouble(w, "target_rps", g->target_rps, 1);
    ps_jw_kdouble(w, "send_rate_rps", g->send_rate_rps, 1);
    ps_jw_kint(w, "sent", g->sent);
    ps_jw_kint(w, "unsent", g->unsent);
    ps_jw_kint(w, "connection_waits", g->conn_waits);
    ps_jw_kint(w, "warmup_requests", g->warmup_requests);
    ps_jw_key(w, "lateness_us");
    ps_jw_object_open(w);
    ps_jw_kint(w, "p50", g->late_p50_us);
    ps_jw_kint(w, "p90", g->late_p90_us);
    ps_jw_kint(w, "p99", g->late_p99_us);
    ps_jw_kint(w, "max", g->late_max_us);
    ps_jw_object_close(w);
    ps_jw_kdouble(w, "thread_cpu_s", g->cpu_s, 3);
    if (g->runq_wait_s >= 0)
        ps_jw_kdouble(w, "runqueue_wait_s", g->runq_wait_s, 3);
    else
        ps_jw_knull(w, "runqueue_wait_s");
    if (g->busy_share >= 0)
        ps_jw_kdouble(w, "busy_share", g->busy_share, 3);
    else
        ps_jw_knull(w, "busy_share");
    ps_jw_kdouble(w, "process_user_cpu_s", g->user_cpu_s, 3);
    ps_jw_kdouble(w, "process_sys_cpu_s", g->sys_cpu_s, 3);
    ps_jw_kdouble(w, "drain_s", g->drain_s, 3);
    ps_jw_object_close(w);
}

static bool window_filled(const ps_lg_window *w)
{
    return w->limited > 0 || (w->limit > 0 && w->admitted >= w->limit);
}

void ps_lg_limits_tally(const ps_lg_limits *l, const ps_lg_config *cfg,
                        ps_lg_window_tally by_plan[PS_LG_PLANS], ps_lg_window_tally *by_group)
{
    memset(by_plan, 0, sizeof(ps_lg_window_tally) * PS_LG_PLANS);
    memset(by_group, 0, sizeof(ps_lg_window_tally) * ps_lg_config_group_count(cfg));
    for (size_t i = 0; i < l->cap; i++) {
        const ps_lg_window *w = &l->slots[i];
        if (!w->used || w->key >= cfg->nkeys) continue;
        ps_lg_window_tally *t[2] = {&by_plan[cfg->keys[w->key].plan.id],
                                    &by_group[cfg->keys[w->key].group]};
        /* Early: refused while the window had admitted fewer than its
         * limit and its own Remaining never said it was full (a window
         * whose start this run did not see may have admitted more). */
        bool early = !(w->limit > 0 && w->admitted >= w->limit) && w->min_remaining > 0;
        int64_t measured = w->limited - w->limited_warm; /* as the run's 429 count */
        for (int k = 0; k < 2; k++) {
            t[k]->filled += window_filled(w);
            if (early)
                t[k]->refused_early += measured;
            else
                t[k]->refused_correct += measured;
        }
    }
}

size_t ps_lg_limits_windows_filled(const ps_lg_limits *l)
{
    size_t n = 0;
    for (size_t i = 0; i < l->cap; i++) {
        const ps_lg_window *w = &l->slots[i];
        if (w->used && window_filled(w)) n++;
    }
    return n;
}
