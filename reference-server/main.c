/* main.c - petstore-server: flags, the store and limiter, the HTTP loops,
 * and the graceful stop on SIGINT/SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "core/coredump.h"
#include "core/cli.h"
#include "core/error.h"
#include "core/fd_limit.h"
#include "reference-server/http_server.h"
#include "reference-server/limiter.h"
#include "reference-server/server_config.h"
#include "reference-server/store.h"

/* 10,000 connections need more descriptors than the usual soft limit of 1024. */
static void raise_fd_limit(ps_server_config *cfg)
{
    int64_t limit = ps_fd_limit_raise(INT64_MAX);
    if (limit < 0) return;
    int64_t room = limit == INT64_MAX ? INT64_MAX : limit - 64;
    if (room < 16) room = 16;
    if (cfg->max_connections == 0) {
        cfg->max_connections = room < 20000 ? room : 20000;
    } else if (cfg->max_connections > room) {
        fprintf(
            stderr,
            "petstore-server: --max-connections lowered from %lld to %lld to fit RLIMIT_NOFILE\n",
            (long long)cfg->max_connections, (long long)room);
        cfg->max_connections = room;
    }
}

int main(int argc, char **argv)
{
    ps_server_config cfg;
    ps_error err = {{0}};
    ps_limiter *limiter = NULL;
    ps_store *store = NULL;
    ps_http_server *srv = NULL;
    int status = 1;

    ps_coredump_disable(); /* the process holds API keys (core/coredump.h) */
    int prc = ps_server_config_parse(argc, argv, &cfg, stdout, &err);
    if (prc == 1) {
        status = 0;
        goto out;
    }
    if (prc != 0) {
        status = ps_cli_usage_error(stderr, "petstore-server", err.message);
        goto out;
    }
    for (int f = 0; f < PS_FAULT_COUNT; f++)
        if (ps_fault_on(cfg.faults, (ps_fault)f))
            fprintf(stderr, "WARNING: fault %s enabled: %s\n", ps_fault_name((ps_fault)f),
                    ps_fault_description((ps_fault)f));
    raise_fd_limit(&cfg);

    /* Signals are taken by sigwait below; block them before any thread starts. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    ps_limiter_options lo = {
        .time_scale = cfg.time_scale,
        .ban_threshold = cfg.ban_after,
        .ban_seconds = cfg.ban_seconds,
        .max_identities = 0,
        .faults = cfg.faults,
        .mode = cfg.limiter,
    };
    if (ps_limiter_create(&lo, &limiter, &err) != 0) {
        fprintf(stderr, "petstore-server: %s\n", err.message);
        goto out;
    }
    ps_store_options so = {
        .journal_path = cfg.data_path,
        .seed_path = cfg.seed_path,
        .max_batch_delay_us = 0,
        .faults = cfg.faults,
    };
    if (ps_store_open(&so, &store, &err) != 0) {
        fprintf(stderr, "petstore-server: %s\n", err.message);
        goto out;
    }
    if (ps_http_server_create(&cfg, store, limiter, &srv, &err) != 0) {
        fprintf(stderr, "petstore-server: %s\n", err.message);
        goto out;
    }
    bool v6 = strchr(cfg.bind_addr, ':') != NULL;
    printf("http://%s%s%s:%d%s\n", v6 ? "[" : "", cfg.bind_addr, v6 ? "]" : "",
           ps_http_server_port(srv), cfg.base_path);
    fflush(stdout);
    fprintf(
        stderr,
        "petstore-server: listening on %s port %d, %d thread(s), %zu key(s), %zu categories%s%s\n",
        cfg.bind_addr, ps_http_server_port(srv), cfg.threads, ps_keyring_count(cfg.keys),
        ps_store_count(store), cfg.data_path ? ", journal " : "",
        cfg.data_path ? cfg.data_path : "");
    if (ps_http_server_start(srv, &err) != 0) {
        fprintf(stderr, "petstore-server: %s\n", err.message);
        ps_http_server_wait(srv); /* the loops that did start were told to stop */
        goto out;
    }
    int sig = 0;
    sigwait(&stop_signals, &sig);
    fprintf(stderr, "petstore-server: %s received, finishing in-flight requests\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM");
    ps_http_server_stop(srv);
    ps_http_server_wait(srv);
    status = 0;
out:
    /* the store first: it flushes and calls the last callbacks while the loops' queues still exist
     */
    if (store) ps_store_close(store);
    ps_http_server_destroy(srv);
    ps_limiter_destroy(limiter);
    ps_server_config_free(&cfg);
    if (status == 0 && prc == 0) fprintf(stderr, "petstore-server: stopped\n");
    return status;
}
