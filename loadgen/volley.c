/* volley.c - the window-opening volley of --verify-limits (see volley.h). */
#include "loadgen/volley.h"

#include <stdlib.h>
#include <string.h>

#include "core/ratelimit_model.h"

/* Past the Reset second, so the window has surely ended on the server
 * (the same margin as --burst's release). */
#define OPENING_NS 30000000LL

void ps_lg_volley_init(ps_lg_volley *v, size_t nkeys, int size)
{
    memset(v, 0, sizeof *v);
    if (size < 2) return;
    v->size = size > PS_LG_VOLLEY_MAX ? PS_LG_VOLLEY_MAX : size;
    v->window_end_s = calloc(nkeys ? nkeys : 1, sizeof *v->window_end_s);
    if (!v->window_end_s) abort();
}

void ps_lg_volley_free(ps_lg_volley *v)
{
    free(v->window_end_s);
    memset(v, 0, sizeof *v);
}

void ps_lg_volley_note(ps_lg_volley *v, size_t key, const ps_lg_resp *r, int64_t wall_ns)
{
    if (!v->size || !(r->seen & PS_LG_H_RESET) || (r->bad & PS_LG_H_RESET)) return;
    int64_t end_s = ps_rlm_reset_unix(r->reset, wall_ns / 1000000000LL);
    /* a Reset that moves with every request (a bucket, a sliding log) opens
     * no window a second or less later: only a jump of more than the
     * rounding is a new window */
    if (end_s <= v->window_end_s[key] + PS_RLM_RESET_ROUNDING_S) {
        if (end_s > v->window_end_s[key]) v->window_end_s[key] = end_s;
        return;
    }
    v->window_end_s[key] = end_s;
    for (int i = 0; i < v->waiting; i++)
        if (v->queue[i].key == key) return; /* its volley waits already */
    if (v->waiting == PS_LG_VOLLEY_QUEUE) return;
    v->queue[v->waiting].at_wall_ns = end_s * 1000000000LL + OPENING_NS;
    v->queue[v->waiting].key = key;
    v->waiting++;
}

bool ps_lg_volley_take(ps_lg_volley *v, int64_t wall_ns, int64_t mono_ns, size_t *key,
                       int64_t *wake_mono_ns)
{
    if (!v->size) return false;
    int first = -1;
    for (int i = 0; i < v->waiting; i++)
        if (first < 0 || v->queue[i].at_wall_ns < v->queue[first].at_wall_ns) first = i;
    if (v->left == 0 && first >= 0 && wall_ns >= v->queue[first].at_wall_ns) {
        v->left = v->size;
        v->key = v->queue[first].key;
        v->queue[first] = v->queue[--v->waiting];
        first = -1;
    }
    if (v->left > 0) {
        v->left--;
        v->sent++;
        *key = v->key;
        return true;
    }
    if (first >= 0 && mono_ns + (v->queue[first].at_wall_ns - wall_ns) < *wake_mono_ns)
        *wake_mono_ns = mono_ns + (v->queue[first].at_wall_ns - wall_ns);
    return false;
}

void ps_lg_volley_sent(ps_lg_volley *v, int64_t in_flight)
{
    if (in_flight >= 2) v->concurrent++;
    if (in_flight > v->most_together) v->most_together = in_flight;
}

void ps_lg_volley_note_limit(ps_lg_volley *v, const ps_lg_resp *r)
{
    if ((r->seen & PS_LG_H_LIMIT) && !(r->bad & PS_LG_H_LIMIT) && r->limit > v->limit_seen)
        v->limit_seen = r->limit;
}

int ps_lg_volley_first_wave(int64_t limit, int connections, int nconns, size_t nkeys)
{
    if (limit <= 0 || nkeys != 1 || connections <= limit || connections >= 2 * limit) return 0;
    int64_t first = limit - (connections + 1) / 2; /* the release: half within, half beyond */
    /* this thread's share, rounded down: the crossing then falls a little
     * past the middle, never before it */
    int64_t mine = first * nconns / connections;
    return (int)(mine < nconns ? mine : nconns);
}

void ps_lg_volley_add(ps_lg_volley_counts *c, const ps_lg_volley *v)
{
    c->sent += v->sent;
    c->concurrent += v->concurrent;
    if (v->most_together > c->most_together) c->most_together = v->most_together;
}
