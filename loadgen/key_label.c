/* key_label.c - key labels, key ids and derived run ids under the run's
 * key secret (key_label.h). */
#include "loadgen/key_label.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/sha256.h"

static const char salt[] = "petstore-load key secret v1";

static void hmac_hex(const ps_hmac_sha256_key *mk, const char *a, const char *b, size_t digits,
                     char *out)
{
    char small[256];
    uint8_t mac[PS_SHA256_LEN];
    int n = snprintf(small, sizeof small, "%s\n%s", a, b);
    if (n >= 0 && (size_t)n < sizeof small) {
        ps_hmac_sha256_with(mk, small, (size_t)n, mac);
    } else {
        ps_buf msg = PS_BUF_INIT;
        ps_buf_printf(&msg, "%s\n%s", a, b);
        ps_hmac_sha256_with(mk, msg.data, msg.len, mac);
        ps_buf_free(&msg);
    }
    for (size_t i = 0; i < digits / 2; i++)
        snprintf(out + 2 * i, 3, "%02x", mac[i]);
    out[digits] = '\0';
}

static void mac_key(const ps_lg_config *cfg, ps_hmac_sha256_key *mk)
{
    ps_hmac_sha256_init(mk, cfg->key_secret, sizeof cfg->key_secret);
}

/* What the secret mixes in besides the keys: the shared secret every shard
 * is given, else (one process) 32 random bytes; a sharded run without it
 * has only the keys, as before, and says so. */
static void run_material(const ps_lg_config *cfg, ps_buf *all)
{
    const char *shared = ps_cli_env(PS_LG_KEY_SECRET_ENV);
    if (shared) {
        ps_buf_printf(all, "secret\n%s\n", shared);
        return;
    }
    if (cfg->shards > 0) {
        fprintf(stderr,
                "petstore-load: warning: %s is not set, so this shard's key ids and labels "
                "come from the keys alone and a short key can be found from them; give every "
                "shard of the run the same secret (docs/distributed.md)\n",
                PS_LG_KEY_SECRET_ENV);
        return;
    }
    unsigned char r[32];
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = getrandom(r + got, sizeof r - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) abort(); /* no kernel randomness: nothing safe to fall back on */
        got += (size_t)n;
    }
    ps_buf_puts(all, "random\n");
    ps_buf_append(all, (const char *)r, sizeof r);
    memset(r, 0, sizeof r);
}

void ps_lg_key_labels(ps_lg_config *cfg)
{
    if ((cfg->verify_limits || cfg->shards > 0) && !cfg->key_secret_set && cfg->nkeys > 0) {
        ps_buf all = PS_BUF_INIT;
        for (size_t k = 0; k < cfg->nkeys; k++)
            ps_buf_printf(&all, "%s\n", cfg->keys[k].key);
        run_material(cfg, &all);
        ps_pbkdf2_sha256(all.data, all.len, salt, sizeof salt - 1, PS_LG_KEY_SECRET_ROUNDS,
                         cfg->key_secret, sizeof cfg->key_secret);
        memset(all.data, 0, all.len); /* the keys, once more, in memory */
        ps_buf_free(&all);
        cfg->key_secret_set = true;
    }
    ps_hmac_sha256_key mk;
    mac_key(cfg, &mk);
    for (size_t k = 0; k < cfg->nkeys; k++) {
        ps_lg_key *key = &cfg->keys[k];
        char mask[8], tag[7] = "";
        ps_lg_redact(key->key, mask);
        if (cfg->key_secret_set) hmac_hex(&mk, "label", key->key, 6, tag);
        snprintf(key->label, sizeof key->label, "%s%s%s", mask, tag[0] ? "~" : "", tag);
    }
}

void ps_lg_key_id(const ps_lg_config *cfg, const char *key, char out[17])
{
    ps_hmac_sha256_key mk;
    mac_key(cfg, &mk);
    hmac_hex(&mk, cfg->run_id ? cfg->run_id : "", key, 16, out);
}

void ps_lg_key_digest(const ps_lg_config *cfg, const char *text, char out[17])
{
    ps_hmac_sha256_key mk;
    mac_key(cfg, &mk);
    hmac_hex(&mk, "run", text, 16, out);
}
