/* main.c - petstore-load: the load generator's command line entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/coredump.h"
#include "core/cli.h"
#include "core/datadir.h"
#include "core/version.h"
#include "loadgen/compare.h"
#include "loadgen/config.h"
#include "loadgen/customers.h"
#include "loadgen/merge.h"
#include "loadgen/run.h"
#include "loadgen/search.h"

int main(int argc, char **argv)
{
    ps_coredump_disable(); /* the process holds API keys (core/coredump.h) */
    /* `petstore-load merge SHARD.json...`: the shards of a run merged. */
    if (argc > 1 && strcmp(argv[1], "merge") == 0) return ps_lg_merge_main(argc - 1, argv + 1);
    /* `petstore-load search RUN-FLAGS --slo ...`: the highest rate within objectives. */
    if (argc > 1 && strcmp(argv[1], "search") == 0) return ps_lg_search_main(argc - 1, argv + 1);
    /* `petstore-load compare BASE.json NEW.json`: did the new one regress. */
    if (argc > 1 && strcmp(argv[1], "compare") == 0) return ps_lg_compare_main(argc - 1, argv + 1);
    ps_lg_config cfg;
    ps_error err = {{0}};
    /* The default --bodies: DATADIR/create-bodies.json (core/datadir.h). */
    char *bodies = ps_data_path("create-bodies.json");
    ps_lg_parse_status st =
        ps_lg_config_parse(argc, argv, bodies ? bodies : "create-bodies.json", &cfg, &err);
    free(bodies);
    if (st == PS_LG_CONFIG_HELP) {
        ps_lg_config_usage(stdout);
        ps_lg_config_free(&cfg);
        return 0;
    }
    if (st == PS_LG_CONFIG_VERSION) {
        puts("petstore-load " PS_VERSION);
        ps_lg_config_free(&cfg);
        return 0;
    }
    if (st != PS_LG_CONFIG_OK) {
        ps_cli_usage_error(stderr, "petstore-load", err.message);
        ps_lg_config_free(&cfg);
        return PS_LG_EXIT_USAGE;
    }
    if (cfg.write_keys_path) {
        /* --customers --write-customer-keys: the keys for the server, no run */
        int wrc = ps_lg_customers_write_keys(&cfg, cfg.write_keys_path, &err);
        if (wrc != 0) fprintf(stderr, "petstore-load: %s\n", err.message);
        ps_lg_config_free(&cfg);
        return wrc == 0 ? 0 : PS_LG_EXIT_USAGE;
    }
    int code = ps_lg_run(&cfg);
    ps_lg_config_free(&cfg);
    return code;
}
