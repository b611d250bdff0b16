/* key_label.h - how petstore-load names keys in what it writes: never the
 * key, nor anything a short key could be found from (issue 22: a key id
 * that was FNV-1a of run id and key, beside a label showing 4 of its
 * characters, gave a 10-character key back in 22 s on one core).
 *
 * The run's key secret is PBKDF2-HMAC-SHA256 over every key of the run (in
 * file order, before the shards divide them) and a secret that is not the
 * keys (issue 30: from one short key alone, "pk-4821" came back from its
 * label in 16 s): PETSTORE_LOAD_KEY_SECRET when set (every shard of a run is
 * given the same, so they agree), else 32 random bytes per process (one
 * unsharded run: its labels differ from run to run). A sharded run without
 * it falls back to the keys alone, with a warning on stderr. Everything
 * written is an HMAC under it.
 * - label: "ab***yz~1f2e3d" (keys of 16 characters or more: first and last
 *   two), "***~1f2e3d" (shorter keys: no character); the 6 hex digits tell
 *   keys with the same mask apart (issue 18: pr***00 was pro-00000,
 *   pro-00100, ...), the same in every shard of a run (and in every run
 *   given the same PETSTORE_LOAD_KEY_SECRET);
 * - key id (shard reports): 16 hex digits of HMAC(secret, run id, key);
 * - derived run id: "r" + 16 hex digits of HMAC(secret, the run's
 *   parameters) (it was a fast hash of the parameters and the keys). */
#ifndef PS_LG_KEY_LABEL_H
#define PS_LG_KEY_LABEL_H

#include "loadgen/config.h"

/* ~30 ms on the machines this was measured on; it runs before a shard's
 * --start-at, so every shard must finish it in time, sanitizer builds
 * included (core/sha256.c is optimised and unsanitised in every build). */
#define PS_LG_KEY_SECRET_ROUNDS 8192
/* The environment variable holding the secret the shards of a run share. */
#define PS_LG_KEY_SECRET_ENV "PETSTORE_LOAD_KEY_SECRET"

/* Derives cfg's key secret from all its keys (only when something will
 * show a key: --verify-limits or a shard) and sets every key's label. */
void ps_lg_key_labels(ps_lg_config *cfg);
/* The key id a shard report gives key (run id and secret from cfg). */
void ps_lg_key_id(const ps_lg_config *cfg, const char *key, char out[17]);
/* 16 hex digits of HMAC(secret, text): a derived run id's digits. */
void ps_lg_key_digest(const ps_lg_config *cfg, const char *text, char out[17]);

#endif
