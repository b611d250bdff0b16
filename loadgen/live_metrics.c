/* live_metrics.c - --metrics-listen: per-thread counters, their exposition
 * and the small HTTP server that serves it (see live_metrics.h). */
#define _GNU_SOURCE /* accept4, pipe2 */
#include "loadgen/live_metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/plan.h"
#include "core/version.h"

/* Latency buckets (seconds, Prometheus's `le`): 0.5 ms to 10 s, the range
 * a capacity objective is written in; slower answers land in +Inf. */
static const double bucket_le_s[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                     0.1,    0.25,  0.5,    1,     2.5,  5,     10};
#define NBUCKETS (sizeof bucket_le_s / sizeof bucket_le_s[0])
#define NCODES 500 /* status 100..599 */

/* One cell's counters (a plan and key group), at these offsets. */
enum {
    C_SENT,
    C_LATE,
    C_FAIL,                /* 3: connect, read, timeout (ps_lg_failure) */
    C_SUM_US = C_FAIL + 3, /* latency sum, microseconds */
    C_BUCKETS,             /* NBUCKETS + 1 (+Inf), not cumulative */
    C_CODES = C_BUCKETS + NBUCKETS + 1,
    C_STRIDE = C_CODES + NCODES,
};
/* A thread's block: [0] unsent, then ncells cells. */
#define T_UNSENT 0
#define T_CELLS 1

struct ps_lg_live_rec {
    _Atomic uint64_t *v;
    const uint32_t *key_cell; /* the run's, by key */
    int64_t late_bound_ns;
};

typedef struct live_client live_client;

struct ps_lg_live {
    const ps_lg_config *cfg;
    uint32_t *key_cell;
    size_t ncells;
    int *cell_plan;     /* ps_plan_id */
    size_t *cell_group; /* index for ps_lg_config_group_name */
    ps_lg_live_rec *recs;
    int nthreads;
    /* the server */
    int listen_fd, wake[2];
    pthread_t tid;
    bool serving;
    live_client *clients; /* LIVE_MAX_CLIENTS, the server thread's */
};

static void bump(_Atomic uint64_t *c, uint64_t by)
{
    /* Only the owning thread writes: a relaxed load and store is enough,
     * and readers see each count whole. */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by,
                          memory_order_relaxed);
}

static _Atomic uint64_t *cell_of(ps_lg_live_rec *r, size_t key)
{
    return r->v + T_CELLS + (size_t)r->key_cell[key] * C_STRIDE;
}

void ps_lg_live_sent(ps_lg_live_rec *r, size_t key, int64_t late_ns)
{
    _Atomic uint64_t *c = cell_of(r, key);
    bump(&c[C_SENT], 1);
    if (late_ns > r->late_bound_ns) bump(&c[C_LATE], 1);
}

void ps_lg_live_answered(ps_lg_live_rec *r, size_t key, int status, int64_t latency_us)
{
    _Atomic uint64_t *c = cell_of(r, key);
    if (latency_us < 0) latency_us = 0;
    size_t b = 0;
    while (b < NBUCKETS && (double)latency_us > bucket_le_s[b] * 1e6)
        b++;
    bump(&c[C_BUCKETS + b], 1);
    bump(&c[C_SUM_US], (uint64_t)latency_us);
    if (status >= 100 && status <= 599) bump(&c[C_CODES + (size_t)(status - 100)], 1);
}

void ps_lg_live_failed(ps_lg_live_rec *r, size_t key, ps_lg_failure why)
{
    bump(&cell_of(r, key)[C_FAIL + (size_t)why], 1);
}

void ps_lg_live_unsent(ps_lg_live_rec *r)
{
    bump(&r->v[T_UNSENT], 1);
}

ps_lg_live *ps_lg_live_create(const ps_lg_config *cfg, int nthreads)
{
    ps_lg_live *l = calloc(1, sizeof *l);
    if (!l) abort();
    l->cfg = cfg;
    l->listen_fd = l->wake[0] = l->wake[1] = -1;
    l->key_cell = calloc(cfg->nkeys ? cfg->nkeys : 1, sizeof *l->key_cell);
    l->cell_plan = calloc(cfg->nkeys ? cfg->nkeys : 1, sizeof *l->cell_plan);
    l->cell_group = calloc(cfg->nkeys ? cfg->nkeys : 1, sizeof *l->cell_group);
    if (!l->key_cell || !l->cell_plan || !l->cell_group) abort();
    /* One cell per (plan, group) present, found through a table indexed by
     * both: a scan per new pair was quadratic (80,000 groups took 25 s). */
    size_t nplans = (size_t)PS_PLAN_UNKNOWN + 1, ngroups = ps_lg_config_group_count(cfg);
    uint32_t *slot = calloc(nplans * ngroups, sizeof *slot); /* cell + 1, 0: none yet */
    if (!slot) abort();
    for (size_t k = 0; k < cfg->nkeys; k++) {
        size_t plan = (size_t)cfg->keys[k].plan.id, group = cfg->keys[k].group;
        uint32_t *at = &slot[(group < ngroups ? group : 0) * nplans + (plan < nplans ? plan : 0)];
        if (*at == 0) {
            l->cell_plan[l->ncells] = (int)plan;
            l->cell_group[l->ncells] = group;
            *at = (uint32_t)++l->ncells;
        }
        l->key_cell[k] = *at - 1;
    }
    free(slot);
    l->nthreads = nthreads;
    l->recs = calloc((size_t)nthreads, sizeof *l->recs);
    if (!l->recs) abort();
    for (int i = 0; i < nthreads; i++) {
        l->recs[i].v = calloc(T_CELLS + l->ncells * C_STRIDE, sizeof *l->recs[i].v);
        if (!l->recs[i].v) abort();
        l->recs[i].key_cell = l->key_cell;
        l->recs[i].late_bound_ns = cfg->max_lateness_ns;
    }
    return l;
}

ps_lg_live_rec *ps_lg_live_thread(ps_lg_live *l, int i)
{
    return &l->recs[i];
}

/* ---- the exposition ---- */

static uint64_t sum_at(const ps_lg_live *l, size_t cell, size_t at)
{
    uint64_t s = 0;
    for (int i = 0; i < l->nthreads; i++)
        s += atomic_load_explicit(&l->recs[i].v[T_CELLS + cell * C_STRIDE + at],
                                  memory_order_relaxed);
    return s;
}

/* Label values: plan names and group names are plain words (keys_file.c
 * checks groups), escaped all the same as the format asks. */
static void put_label_value(ps_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            ps_buf_printf(b, "\\%c", *s);
        else if (*s == '\n')
            ps_buf_puts(b, "\\n");
        else
            ps_buf_putc(b, *s);
    }
}

static void put_labels(ps_buf *b, const ps_lg_live *l, size_t cell, const char *extra_name,
                       const char *extra_value)
{
    ps_buf_puts(b, "{plan=\"");
    put_label_value(b, ps_plan_name((ps_plan_id)l->cell_plan[cell]));
    ps_buf_puts(b, "\",group=\"");
    put_label_value(b, ps_lg_config_group_name(l->cfg, l->cell_group[cell]));
    ps_buf_putc(b, '"');
    if (extra_name) {
        ps_buf_printf(b, ",%s=\"", extra_name);
        put_label_value(b, extra_value);
        ps_buf_putc(b, '"');
    }
    ps_buf_putc(b, '}');
}

/* "# HELP" and "# TYPE" of a family; OpenMetrics names a counter's family
 * without its _total suffix. */
static void put_family(ps_buf *b, bool om, const char *name, const char *type, const char *help)
{
    size_t n = strlen(name);
    if (om && strcmp(type, "counter") == 0 && n > 6 && strcmp(name + n - 6, "_total") == 0) n -= 6;
    ps_buf_printf(b, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)n, name, help, (int)n, name, type);
}

static void put_counter_cells(ps_buf *b, const ps_lg_live *l, bool om, const char *name, size_t at,
                              const char *help)
{
    put_family(b, om, name, "counter", help);
    for (size_t c = 0; c < l->ncells; c++) {
        ps_buf_puts(b, name);
        put_labels(b, l, c, NULL, NULL);
        ps_buf_printf(b, " %llu\n", (unsigned long long)sum_at(l, c, at));
    }
}

static void put_histogram(ps_buf *b, const ps_lg_live *l, bool om)
{
    static const char name[] = "petstore_load_latency_seconds";
    put_family(b, om, name, "histogram",
               "Latency of answered requests from the moment each was due (corrected for "
               "coordinated omission), by plan and key group.");
    for (size_t c = 0; c < l->ncells; c++) {
        uint64_t cum = 0;
        char le[32];
        for (size_t k = 0; k <= NBUCKETS; k++) {
            cum += sum_at(l, c, C_BUCKETS + k);
            if (k < NBUCKETS)
                snprintf(le, sizeof le, "%g", bucket_le_s[k]);
            else
                snprintf(le, sizeof le, "+Inf");
            ps_buf_printf(b, "%s_bucket", name);
            put_labels(b, l, c, "le", le);
            ps_buf_printf(b, " %llu\n", (unsigned long long)cum);
        }
        /* _count is the +Inf bucket as read, so the two always agree. */
        ps_buf_printf(b, "%s_sum", name);
        put_labels(b, l, c, NULL, NULL);
        ps_buf_printf(b, " %.6f\n", (double)sum_at(l, c, C_SUM_US) / 1e6);
        ps_buf_printf(b, "%s_count", name);
        put_labels(b, l, c, NULL, NULL);
        ps_buf_printf(b, " %llu\n", (unsigned long long)cum);
    }
}

void ps_lg_live_render(const ps_lg_live *l, bool om, ps_buf *b)
{
    put_family(b, om, "petstore_load_info", "gauge", "The load generator's version.");
    ps_buf_puts(b, "petstore_load_info{version=\"" PS_VERSION "\"} 1\n");
    put_counter_cells(b, l, om, "petstore_load_requests_sent_total", C_SENT,
                      "Requests written to a connection, by plan and key group.");
    put_counter_cells(b, l, om, "petstore_load_requests_late_total", C_LATE,
                      "Requests written later than --max-lateness after they were due.");
    uint64_t unsent = 0;
    for (int i = 0; i < l->nthreads; i++)
        unsent += atomic_load_explicit(&l->recs[i].v[T_UNSENT], memory_order_relaxed);
    put_family(b, om, "petstore_load_requests_unsent_total", "counter",
               "Requests due that were never written (no connection free in time, or the run "
               "ended).");
    ps_buf_printf(b, "petstore_load_requests_unsent_total %llu\n", (unsigned long long)unsent);
    put_family(b, om, "petstore_load_responses_total", "counter",
               "Responses by HTTP status code, plan and key group.");
    for (size_t c = 0; c < l->ncells; c++)
        for (size_t s = 0; s < NCODES; s++) {
            uint64_t n = sum_at(l, c, C_CODES + s);
            if (!n) continue;
            char code[8];
            snprintf(code, sizeof code, "%zu", s + 100);
            ps_buf_puts(b, "petstore_load_responses_total");
            put_labels(b, l, c, "code", code);
            ps_buf_printf(b, " %llu\n", (unsigned long long)n);
        }
    static const char *const reasons[] = {"connect", "read", "timeout"};
    put_family(b, om, "petstore_load_request_failures_total", "counter",
               "Requests that got no response, by reason, plan and key group.");
    for (size_t c = 0; c < l->ncells; c++)
        for (size_t r = 0; r < 3; r++) {
            ps_buf_puts(b, "petstore_load_request_failures_total");
            put_labels(b, l, c, "reason", reasons[r]);
            ps_buf_printf(b, " %llu\n", (unsigned long long)sum_at(l, c, C_FAIL + r));
        }
    put_histogram(b, l, om);
    if (om) ps_buf_puts(b, "# EOF\n");
}

/* ---- the server ---- */

int ps_lg_live_parse_listen(const char *text, struct sockaddr_storage *addr, socklen_t *addrlen,
                            ps_error *err)
{
    char host[256];
    const char *colon = strrchr(text, ':');
    const char *h = text;
    size_t hlen = colon ? (size_t)(colon - text) : 0;
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    if (!colon || hlen == 0 || hlen >= sizeof host || !colon[1] ||
        strspn(colon + 1, "0123456789") != strlen(colon + 1) || strlen(colon + 1) > 5 ||
        atoi(colon + 1) > 65535)
        return ps_error_set(err,
                            "--metrics-listen: expected HOST:PORT (e.g. 127.0.0.1:9464, "
                            "[::1]:0; port 0 picks a free one), got '%s'",
                            text);
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    /* A numeric address (or localhost): nothing to look up in DNS. */
    if (strcmp(host, "localhost") == 0) snprintf(host, sizeof host, "127.0.0.1");
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE};
    struct addrinfo *res = NULL;
    int g = getaddrinfo(host, colon + 1, &hints, &res);
    if (g != 0)
        return ps_error_set(err,
                            "--metrics-listen: '%s' is not a numeric address (127.0.0.1, ::1, "
                            "0.0.0.0) or localhost",
                            host);
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

/* The server is one thread polling every client at once, so no client, idle,
 * dripping or not reading, holds up another's scrape or the run's end: each
 * connection has a deadline for its whole request (not per read) and its
 * whole answer; past LIVE_MAX_CLIENTS the oldest still sending its request
 * is dropped for the newcomer. At most LIVE_MAX_ANSWERING answers are held
 * at once (with 80,000 groups one is 143 MB); further requests wait. */
#define LIVE_MAX_CLIENTS 32
#define LIVE_MAX_ANSWERING 4
#define LIVE_HEAD_MAX 8192
#define LIVE_REQUEST_NS (INT64_C(2) * 1000000000) /* a request head, whole */
#define LIVE_ANSWER_NS (INT64_C(10) * 1000000000) /* an answer, whole */

enum live_state { LIVE_READING, LIVE_WAITING, LIVE_ANSWERING };

struct live_client {
    int fd; /* -1: a free slot */
    enum live_state state;
    int64_t deadline_ns;
    size_t got, off;
    char req[LIVE_HEAD_MAX];
    ps_buf out;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void client_close(live_client *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    ps_buf_free(&c->out);
}

/* The answer to a complete request head in c->req, into c->out; one
 * request per connection (Connection: close), which every scraper handles. */
static void answer(const ps_lg_live *l, live_client *c)
{
    char *req = c->req;
    ps_buf body = PS_BUF_INIT;
    const char *status = "200 OK", *type = "text/plain; version=0.0.4; charset=utf-8";
    bool get = strncmp(req, "GET ", 4) == 0, head_only = strncmp(req, "HEAD ", 5) == 0;
    const char *path = req + (get ? 4 : 5);
    if (!get && !head_only) {
        status = "405 Method Not Allowed";
        type = "text/plain; charset=utf-8";
        ps_buf_puts(&body, "GET /metrics\n");
    } else if (strncmp(path, "/metrics", 8) != 0 || (path[8] != ' ' && path[8] != '?')) {
        status = "404 Not Found";
        type = "text/plain; charset=utf-8";
        ps_buf_puts(&body, "petstore-load serves its metrics at /metrics\n");
    } else {
        /* Prometheus asks for OpenMetrics first; anything else gets the
         * classic text format. */
        bool om = false;
        for (char *line = strchr(req, '\n'); line && !om; line = strchr(line + 1, '\n'))
            if (strncasecmp(line + 1, "accept:", 7) == 0) {
                char *end = strchr(line + 1, '\n');
                char *hit = strstr(line + 1, "application/openmetrics-text");
                om = hit && (!end || hit < end);
            }
        if (om) type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
        ps_lg_live_render(l, om, &body);
    }
    ps_buf_printf(&c->out,
                  "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: "
                  "close\r\n\r\n",
                  status, type, body.len);
    if (!head_only) ps_buf_append(&c->out, body.data, body.len);
    ps_buf_free(&body);
    c->state = LIVE_ANSWERING;
    c->off = 0;
    c->deadline_ns = now_ns() + LIVE_ANSWER_NS;
}

/* Reads what c has sent (non-blocking); waits for an answer once the head is
 * whole, or once it fills the buffer (what arrived is judged as it is). */
static void client_read(live_client *c)
{
    for (;;) {
        ssize_t n = recv(c->fd, c->req + c->got, sizeof c->req - 1 - c->got, 0);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            client_close(c);
            return;
        }
        c->got += (size_t)n;
        c->req[c->got] = '\0';
        if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n") || c->got == sizeof c->req - 1) {
            c->state = LIVE_WAITING;
            c->deadline_ns = now_ns() + LIVE_ANSWER_NS;
            return;
        }
    }
}

static void client_write(live_client *c)
{
    while (c->off < c->out.len) {
        ssize_t n = send(c->fd, c->out.data + c->off, c->out.len - c->off, MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        c->off += (size_t)n;
    }
    client_close(c);
}

/* Takes every pending connection; a full table drops its oldest client that
 * is still sending a request (an answer under way is kept), or else the
 * newcomer. */
static void accept_all(ps_lg_live *l)
{
    for (;;) {
        int fd = accept4(l->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) return;
        live_client *slot = NULL, *oldest = NULL;
        for (int i = 0; i < LIVE_MAX_CLIENTS && !slot; i++) {
            live_client *c = &l->clients[i];
            if (c->fd < 0)
                slot = c;
            else if (c->state == LIVE_READING && (!oldest || c->deadline_ns < oldest->deadline_ns))
                oldest = c;
        }
        if (!slot && oldest) {
            client_close(oldest);
            slot = oldest;
        }
        if (!slot) {
            close(fd);
            continue;
        }
        memset(slot, 0, sizeof *slot);
        slot->fd = fd;
        slot->deadline_ns = now_ns() + LIVE_REQUEST_NS;
    }
}

/* Renders answers for waiting clients while fewer than LIVE_MAX_ANSWERING
 * are being sent. */
static void start_answers(ps_lg_live *l)
{
    int answering = 0;
    for (int i = 0; i < LIVE_MAX_CLIENTS; i++)
        if (l->clients[i].fd >= 0 && l->clients[i].state == LIVE_ANSWERING) answering++;
    for (int i = 0; i < LIVE_MAX_CLIENTS && answering < LIVE_MAX_ANSWERING; i++) {
        live_client *c = &l->clients[i];
        if (c->fd >= 0 && c->state == LIVE_WAITING) {
            answer(l, c);
            answering++;
        }
    }
}

static void *serve_main(void *p)
{
    ps_lg_live *l = p;
    struct pollfd pfd[2 + LIVE_MAX_CLIENTS];
    live_client *who[2 + LIVE_MAX_CLIENTS];
    for (;;) {
        int n = 0, timeout_ms = -1;
        int64_t now = now_ns();
        pfd[n++] = (struct pollfd){.fd = l->wake[0], .events = POLLIN};
        pfd[n++] = (struct pollfd){.fd = l->listen_fd, .events = POLLIN};
        for (int i = 0; i < LIVE_MAX_CLIENTS; i++) {
            live_client *c = &l->clients[i];
            if (c->fd < 0) continue;
            if (c->deadline_ns <= now) {
                client_close(c);
                continue;
            }
            int64_t left_ms = (c->deadline_ns - now) / 1000000 + 1;
            if (timeout_ms < 0 || left_ms < timeout_ms) timeout_ms = (int)left_ms;
            if (c->state == LIVE_WAITING) continue; /* nothing to read or write yet */
            who[n] = c;
            pfd[n++] = (struct pollfd){.fd = c->fd,
                                       .events = c->state == LIVE_ANSWERING ? POLLOUT : POLLIN};
        }
        if (poll(pfd, (nfds_t)n, timeout_ms) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (pfd[0].revents) break;
        for (int i = 2; i < n; i++) {
            if (!pfd[i].revents) continue;
            if (who[i]->state == LIVE_ANSWERING)
                client_write(who[i]);
            else
                client_read(who[i]);
        }
        if (pfd[1].revents & POLLIN) accept_all(l);
        start_answers(l);
    }
    for (int i = 0; i < LIVE_MAX_CLIENTS; i++)
        client_close(&l->clients[i]);
    return NULL;
}

int ps_lg_live_serve(ps_lg_live *l, ps_error *err)
{
    struct sockaddr_storage addr;
    socklen_t len = 0;
    if (ps_lg_live_parse_listen(l->cfg->metrics_listen, &addr, &len, err) != 0) return -1;
    l->listen_fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (l->listen_fd < 0 ||
        setsockopt(l->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(l->listen_fd, (struct sockaddr *)&addr, len) != 0 || listen(l->listen_fd, 64) != 0 ||
        getsockname(l->listen_fd, (struct sockaddr *)&addr, &len) != 0)
        return ps_error_set(err, "--metrics-listen %s: %s", l->cfg->metrics_listen,
                            strerror(errno));
    if (pipe2(l->wake, O_CLOEXEC) != 0)
        return ps_error_set(err, "--metrics-listen: pipe: %s", strerror(errno));
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (addr.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&addr;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&addr;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
    }
    l->clients = calloc(LIVE_MAX_CLIENTS, sizeof *l->clients);
    if (!l->clients) abort();
    for (int i = 0; i < LIVE_MAX_CLIENTS; i++)
        l->clients[i].fd = -1;
    if (pthread_create(&l->tid, NULL, serve_main, l) != 0)
        return ps_error_set(err, "--metrics-listen: cannot start its thread");
    l->serving = true;
    bool v6 = addr.ss_family == AF_INET6;
    fprintf(stderr, "petstore-load: metrics at http://%s%s%s:%d/metrics\n", v6 ? "[" : "", host,
            v6 ? "]" : "", port);
    fflush(stderr);
    return 0;
}

void ps_lg_live_destroy(ps_lg_live *l)
{
    if (!l) return;
    if (l->serving) {
        ssize_t w = write(l->wake[1], "x", 1);
        (void)w;
        pthread_join(l->tid, NULL);
    }
    if (l->listen_fd >= 0) close(l->listen_fd);
    if (l->wake[0] >= 0) close(l->wake[0]);
    if (l->wake[1] >= 0) close(l->wake[1]);
    for (int i = 0; i < l->nthreads; i++)
        free(l->recs[i].v);
    free(l->recs);
    free(l->key_cell);
    free(l->cell_plan);
    free(l->cell_group);
    free(l->clients);
    free(l);
}
