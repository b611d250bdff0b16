/* engine_curl.c - the engine for what only libcurl does: proxies (chosen
 * by --engine auto when a proxy variable applies, config.h) and HTTP/2
 * (negotiated over TLS by ALPN): one libcurl multi handle per thread with
 * one easy handle per connection, reused so libcurl keeps the connections
 * alive. http:// and https:// targets reached directly get the epoll
 * engine, which allocates nothing per request and costs about 0.4x this
 * one's CPU per request over https (bench/loadgen/README.md). */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/tls_mismatch.h"
#include "core/version.h"
#include "loadgen/transport.h"

#define MAX_WAIT_NS INT64_C(100000000)
#define RECONNECT_DELAY_NS INT64_C(100000000) /* a handle's pause after a failed connect */

typedef struct handle {
    CURL *easy;
    bool busy;
    int64_t retry_at; /* monotonic: not used again before (after a failed connect) */
    ps_lg_req req;
    ps_lg_resp resp;
    int64_t now_s;
    char errbuf[CURL_ERROR_SIZE];
} handle;

static size_t on_header(char *data, size_t size, size_t n, void *p)
{
    handle *h = p;
    size_t len = size * n;
    const char *colon = memchr(data, ':', len);
    if (!colon) return len;
    size_t name_len = (size_t)(colon - data);
    const char *v = colon + 1;
    size_t vlen = len - name_len - 1;
    while (vlen > 0 && (v[0] == ' ' || v[0] == '\t'))
        v++, vlen--;
    while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
        vlen--;
    ps_lg_resp_header(&h->resp, data, name_len, v, vlen, h->now_s);
    return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *p)
{
    (void)data;
    (void)p;
    return size * n;
}

static int run(ps_lg_thread *t)
{
    const ps_lg_shared *sh = t->sh;
    const ps_lg_config *cfg = sh->cfg;
    int rc = -1;
    CURLM *multi = curl_multi_init();
    handle *hs = calloc((size_t)t->nconns, sizeof *hs);
    /* Per key: [0] list headers, [1] create headers (with Content-Type). */
    struct curl_slist **hdrs = calloc(cfg->nkeys * 2, sizeof *hdrs);
    if (!multi || !hs || !hdrs) abort();
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long)t->nconns);
    for (size_t k = 0; k < cfg->nkeys; k++) {
        char auth[600];
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", cfg->keys[k].key);
        for (int j = 0; j < 2; j++) {
            hdrs[2 * k + j] = curl_slist_append(hdrs[2 * k + j], auth);
            hdrs[2 * k + j] = curl_slist_append(hdrs[2 * k + j], "Accept: application/json");
            if (j)
                hdrs[2 * k + j] =
                    curl_slist_append(hdrs[2 * k + j], "Content-Type: application/json");
        }
    }
    for (int i = 0; i < t->nconns; i++) {
        CURL *e = hs[i].easy = curl_easy_init();
        if (!e) {
            ps_error_set(&t->err, "curl_easy_init failed");
            goto out;
        }
        curl_easy_setopt(e, CURLOPT_URL, sh->list_url);
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, &hs[i]);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(e, CURLOPT_PRIVATE, &hs[i]);
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(cfg->timeout_ns / 1000000));
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_USERAGENT, "petstore-load/" PS_VERSION);
        curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, hs[i].errbuf);
        if (cfg->cacert) curl_easy_setopt(e, CURLOPT_CAINFO, cfg->cacert);
        if (cfg->insecure) {
            curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
            curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        if (cfg->cert_file) { /* checked to load (config.c) */
            curl_easy_setopt(e, CURLOPT_SSLCERT, cfg->cert_file);
            curl_easy_setopt(e, CURLOPT_SSLKEY, cfg->key_file ? cfg->key_file : cfg->cert_file);
        }
    }
    ps_lg_thread_begin(t, ps_clock_mono_ns());
    int busy = 0;
    bool done_scheduling = false;
    for (;;) {
        int64_t now = ps_clock_mono_ns();
        ps_lg_tick(t, now);
        int64_t wake = now + MAX_WAIT_NS;
        if (!done_scheduling) {
            ps_lg_expire_overdue(t, now);
            for (int i = 0; i < t->nconns; i++) {
                if (hs[i].busy) continue;
                if (hs[i].retry_at > now) {
                    /* A refused target is not hammered: the closed model
                     * would otherwise loop connect-fail-connect at once. */
                    if (hs[i].retry_at < wake) wake = hs[i].retry_at;
                    continue;
                }
                ps_lg_req r;
                int64_t w = INT64_MAX;
                ps_lg_take_result tr = ps_lg_take(t, now, &r, &w);
                if (tr != PS_LG_TAKE_READY) {
                    if (tr == PS_LG_TAKE_NONE && w < wake) wake = w;
                    break;
                }
                handle *h = &hs[i];
                h->req = r;
                memset(&h->resp, 0, sizeof h->resp);
                h->now_s = ps_clock_wall_s();
                h->errbuf[0] = '\0';
                if (r.op == PS_LG_OP_CREATE) {
                    curl_easy_setopt(h->easy, CURLOPT_POSTFIELDS, sh->create_bodies[r.body]);
                    curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, hdrs[2 * r.key + 1]);
                } else {
                    curl_easy_setopt(h->easy, CURLOPT_HTTPGET, 1L);
                    curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, hdrs[2 * r.key]);
                }
                h->busy = true;
                busy++;
                curl_multi_add_handle(multi, h->easy);
            }
            done_scheduling = ps_lg_scheduling_done(t, now);
        }
        if (done_scheduling && busy == 0) break;
        int running;
        curl_multi_perform(multi, &running);
        CURLMsg *m;
        int left, completed = 0;
        while ((m = curl_multi_info_read(multi, &left))) {
            if (m->msg != CURLMSG_DONE) continue;
            handle *h = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&h);
            CURLcode res = m->data.result;
            curl_multi_remove_handle(multi, h->easy);
            int64_t end = ps_clock_mono_ns();
            if (res != CURLE_OK) {
                char what[CURL_ERROR_SIZE + 128];
                snprintf(what, sizeof what, "%s%s%s", curl_easy_strerror(res),
                         h->errbuf[0] ? ": " : "", h->errbuf);
                if (ps_tls_answered_in_plain_http(res == CURLE_SSL_CONNECT_ERROR, h->errbuf))
                    snprintf(what, sizeof what, PS_TLS_MSG_PLAIN_ANSWER);
                ps_lg_note_failure(t, what);
            }
            long status = 0;
            curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &status);
            if (res == CURLE_OK) {
                h->resp.status = (int)status;
                h->resp.keep_alive = true;
                ps_lg_transfer_connected(t);
                ps_lg_answered(t, &h->req, end, &h->resp);
            } else if (res == CURLE_OPERATION_TIMEDOUT) {
                ps_lg_failed(t, &h->req, PS_LG_FAIL_TIMEOUT);
            } else if (res == CURLE_COULDNT_CONNECT || res == CURLE_COULDNT_RESOLVE_HOST ||
                       res == CURLE_SSL_CONNECT_ERROR || res == CURLE_PEER_FAILED_VERIFICATION ||
                       res == CURLE_SSL_CACERT_BADFILE) {
                h->retry_at = end + RECONNECT_DELAY_NS;
                ps_lg_transfer_connect_failed(t);
                ps_lg_failed(t, &h->req, PS_LG_FAIL_CONNECT);
            } else {
                ps_lg_failed(t, &h->req, PS_LG_FAIL_READ);
            }
            h->busy = false;
            busy--;
            completed++;
        }
        /* A finished transfer freed a handle: loop at once so the closed
         * model sends its next request now. Polling here would sleep until
         * `wake` (up to MAX_WAIT_NS) with nothing in flight to wake us. */
        if (completed > 0) continue;
        int64_t d = wake - ps_clock_mono_ns();
        if (d < 0) d = 0;
        if (running > 0 || d > 0)
            curl_multi_poll(multi, NULL, 0, (int)((d + 999999) / 1000000), NULL);
    }
    rc = 0;
out:
    for (int i = 0; i < t->nconns; i++) {
        if (!hs[i].easy) continue;
        if (hs[i].busy) curl_multi_remove_handle(multi, hs[i].easy);
        curl_easy_cleanup(hs[i].easy);
    }
    for (size_t k = 0; k < cfg->nkeys * 2; k++)
        curl_slist_free_all(hdrs[k]);
    free(hdrs);
    free(hs);
    curl_multi_cleanup(multi);
    return rc;
}

const ps_lg_engine_ops ps_lg_engine_curl = {"curl", run};
