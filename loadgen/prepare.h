/* prepare.h - what a run readies in ps_lg_shared (worker.h) before its
 * threads start: the create bodies, every request rendered as bytes, the
 * keys that share --rate, the list URL of the curl engine, and the target's
 * address (so an unreachable target is exit 3 before any thread starts).
 *
 * Ownership: what these put in sh belongs to sh; ps_lg_prepared_free
 * releases it (not the TLS context, which is tls_target.h's). */
#ifndef PS_LG_PREPARE_H
#define PS_LG_PREPARE_H

#include "core/error.h"
#include "loadgen/config.h"
#include "loadgen/worker.h"

/* --bodies: a JSON array of NewCategory objects, each re-serialised
 * compactly into sh->create_bodies so a request carries exactly the object
 * given. Returns 0, or -1 with err naming the file. */
int ps_lg_load_bodies(const char *path, ps_lg_shared *sh, ps_error *err);
/* Every request the epoll engine sends, as bytes (sh->reqs): per key the
 * list, then one create per body. */
void ps_lg_render_requests(const ps_lg_config *cfg, ps_lg_shared *sh);
/* sh->shared_keys: the keys without a rate of their own, which share
 * --rate (or the closed model). */
void ps_lg_list_shared_keys(const ps_lg_config *cfg, ps_lg_shared *sh);
/* The list URL (base URL + "/categories"), for the curl engine; the
 * caller owns it. */
char *ps_lg_list_url(const ps_lg_config *cfg);
/* Resolves the target and keeps in sh the first address that accepts a
 * TCP connection. Returns 0, or -1 with err ("target H:P unreachable"). */
int ps_lg_find_target_address(const ps_lg_config *cfg, ps_lg_shared *sh, ps_error *err);
/* Frees what the functions above put in sh. */
void ps_lg_prepared_free(const ps_lg_config *cfg, ps_lg_shared *sh);

#endif
