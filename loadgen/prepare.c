/* prepare.c - what a run readies before its threads start (see
 * prepare.h). */
#include "loadgen/prepare.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/version.h"

int ps_lg_load_bodies(const char *path, ps_lg_shared *sh, ps_error *err)
{
    ps_buf text = PS_BUF_INIT;
    ps_json *doc = NULL;
    int rc = -1;
    if (ps_buf_read_file(&text, path) != 0) {
        ps_error_set(err, "cannot read create bodies '%s': %s", path, strerror(errno));
        goto out;
    }
    doc = ps_json_parse(text.data, text.len, NULL, err);
    if (!doc) {
        ps_error_prefix(err, "create bodies '%s': ", path);
        goto out;
    }
    if (doc->type != PS_JSON_ARRAY || doc->count == 0) {
        ps_error_set(err, "create bodies '%s': expected a non-empty JSON array of objects", path);
        goto out;
    }
    sh->create_bodies = calloc(doc->count, sizeof *sh->create_bodies);
    if (!sh->create_bodies) abort();
    for (size_t i = 0; i < doc->count; i++) {
        const ps_json *o = doc->items[i];
        if (o->type != PS_JSON_OBJECT) {
            ps_error_set(err, "create bodies '%s': item %zu is a %s, not an object", path, i,
                         ps_json_type_name(o->type));
            goto out;
        }
        ps_buf b = PS_BUF_INIT;
        ps_buf_putc(&b, '{');
        for (size_t m = 0; m < o->count; m++) {
            const ps_json *v = o->items[m];
            if (v->type != PS_JSON_STRING) {
                ps_buf_free(&b);
                ps_error_set(err, "create bodies '%s': item %zu member '%s' is not a string", path,
                             i, o->keys[m]);
                goto out;
            }
            if (m) ps_buf_putc(&b, ',');
            ps_buf_json_string(&b, o->keys[m], o->key_lens[m]);
            ps_buf_putc(&b, ':');
            ps_buf_json_string(&b, v->str, v->len);
        }
        ps_buf_putc(&b, '}');
        sh->create_bodies[sh->nbodies++] = ps_buf_detach(&b);
    }
    rc = 0;
out:
    ps_json_free(doc);
    ps_buf_free(&text);
    return rc;
}

void ps_lg_render_requests(const ps_lg_config *cfg, ps_lg_shared *sh)
{
    sh->per_key = 1 + sh->nbodies;
    sh->reqs = calloc(cfg->nkeys * sh->per_key, sizeof *sh->reqs);
    if (!sh->reqs) abort();
    bool v6 = strchr(cfg->host, ':') != NULL;
    bool default_port = strcmp(cfg->port, cfg->https ? "443" : "80") == 0;
    for (size_t k = 0; k < cfg->nkeys; k++) {
        for (size_t j = 0; j < sh->per_key; j++) {
            ps_buf b = PS_BUF_INIT;
            ps_buf_printf(&b, "%s %s/categories HTTP/1.1\r\nHost: %s%s%s%s%s\r\n",
                          j ? "POST" : "GET", cfg->path_prefix, v6 ? "[" : "", cfg->host,
                          v6 ? "]" : "", default_port ? "" : ":", default_port ? "" : cfg->port);
            ps_buf_printf(&b,
                          "Authorization: Bearer %s\r\nAccept: application/json\r\n"
                          "User-Agent: petstore-load/" PS_VERSION "\r\n",
                          cfg->keys[k].key);
            if (j)
                ps_buf_printf(&b, "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                              strlen(sh->create_bodies[j - 1]), sh->create_bodies[j - 1]);
            else
                ps_buf_puts(&b, "\r\n");
            sh->reqs[k * sh->per_key + j].len = b.len;
            sh->reqs[k * sh->per_key + j].data = ps_buf_detach(&b);
        }
    }
}

void ps_lg_list_shared_keys(const ps_lg_config *cfg, ps_lg_shared *sh)
{
    sh->shared_keys = calloc(cfg->nkeys, sizeof *sh->shared_keys);
    if (!sh->shared_keys) abort();
    for (size_t k = 0; k < cfg->nkeys; k++)
        if (cfg->keys[k].rate <= 0) sh->shared_keys[sh->nshared++] = k;
}

/* The list URL, for the curl engine. */
char *ps_lg_list_url(const ps_lg_config *cfg)
{
    ps_buf b = PS_BUF_INIT;
    /* base_url may end in '/', path_prefix never does. */
    size_t n = strlen(cfg->base_url);
    while (n > 0 && cfg->base_url[n - 1] == '/')
        n--;
    ps_buf_append(&b, cfg->base_url, n);
    ps_buf_puts(&b, "/categories");
    return ps_buf_detach(&b);
}

int ps_lg_find_target_address(const ps_lg_config *cfg, ps_lg_shared *sh, ps_error *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int g = getaddrinfo(cfg->host, cfg->port, &hints, &res);
    if (g != 0) return ps_error_set(err, "cannot resolve '%s': %s", cfg->host, gai_strerror(g));
    int last_errno = 0;
    int rc = -1;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) continue;
        int c = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (c != 0 && errno == EINPROGRESS) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            int64_t ms = cfg->timeout_ns / 1000000;
            if (ms > 5000) ms = 5000;
            if (poll(&pfd, 1, (int)ms) == 1) {
                int soerr = 0;
                socklen_t len = sizeof soerr;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
                c = soerr ? -1 : 0;
                errno = soerr ? soerr : 0;
            } else {
                c = -1;
                errno = ETIMEDOUT;
            }
        }
        last_errno = errno;
        close(fd);
        if (c == 0) {
            memcpy(&sh->addr, ai->ai_addr, ai->ai_addrlen);
            sh->addrlen = ai->ai_addrlen;
            rc = 0;
            break;
        }
    }
    freeaddrinfo(res);
    if (rc != 0)
        ps_error_set(err, "target %s:%s unreachable: %s", cfg->host, cfg->port,
                     last_errno ? strerror(last_errno) : "no usable address");
    return rc;
}

void ps_lg_prepared_free(const ps_lg_config *cfg, ps_lg_shared *sh)
{
    if (sh->reqs)
        for (size_t i = 0; i < cfg->nkeys * sh->per_key; i++)
            free(sh->reqs[i].data);
    free(sh->reqs);
    for (size_t i = 0; i < sh->nbodies; i++)
        free(sh->create_bodies[i]);
    free(sh->create_bodies);
    free(sh->shared_keys);
    free(sh->list_url);
    sh->reqs = NULL;
    sh->create_bodies = NULL;
    sh->shared_keys = NULL;
    sh->list_url = NULL;
    sh->nbodies = sh->nshared = 0;
}
