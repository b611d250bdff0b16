/* main.c - petstore-conform: flags, output files, the run, the reports. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/coredump.h"
#include "core/buf.h"
#include "core/cli.h"
#include "core/json.h"
#include "core/version.h"
#include "reports/html_report.h"
#include "reports/report_console.h"
#include "reports/report_junit.h"
#include "reports/report_markdown.h"
#include "reports/report_tap.h"
#include "runner/checks.h"
#include "runner/conform.h"
#include "runner/config.h"
#include "runner/replay.h"
#include "runner/run.h"

static void on_signal(int sig)
{
    (void)sig;
    ps_conform_interrupted = 1;
}

/* Opens a report file before the run, so a bad path is a usage error (2)
 * found in a second, not after a minute of checks. */
static int open_report(const char *path, const char *flag, FILE **out)
{
    *out = NULL;
    if (!path) return 0;
    *out = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!*out) {
        char message[512];
        snprintf(message, sizeof message, "%s: cannot write '%s': %s", flag, path, strerror(errno));
        ps_cli_usage_error(stderr, "petstore-conform", message);
        return -1;
    }
    return 0;
}

static int close_report(FILE *f, const char *path)
{
    if (!f || f == stdout) return 0;
    if (fclose(f) != 0) {
        fprintf(stderr, "petstore-conform: writing '%s' failed: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    ps_conform_config cfg;
    ps_error err = {{0}};
    ps_checks *checks = NULL;
    ps_buf doc = PS_BUF_INIT;
    ps_json *tree = NULL;
    FILE *json_f = NULL, *tap_f = NULL, *junit_f = NULL, *html_f = NULL, *md_f = NULL;
    int code = 2;

    ps_coredump_disable(); /* the process holds API keys (core/coredump.h) */
    if (argc >= 2 && strcmp(argv[1], "replay") == 0)
        return ps_conform_replay_main(argc - 1, argv + 1);
    if (ps_conform_config_parse(&cfg, argc, argv, &err) < 0) {
        code = ps_cli_usage_error(stderr, "petstore-conform", err.message);
        goto out;
    }
    if (cfg.help) {
        fputs(ps_conform_usage(), stdout);
        code = 0;
        goto out;
    }
    if (cfg.version) {
        puts("petstore-conform " PS_VERSION);
        code = 0;
        goto out;
    }
    checks = ps_checks_create();
    if ((cfg.only || cfg.skip) && ps_checks_select(checks, cfg.only, cfg.skip, &err) < 0) {
        ps_cli_usage_error(stderr, "petstore-conform", err.message);
        goto out;
    }
    if (cfg.list) {
        ps_conform_print_list(stdout, checks);
        code = 0;
        goto out;
    }
    if (open_report(cfg.json_path, "--json", &json_f) < 0 ||
        open_report(cfg.tap_path, "--tap", &tap_f) < 0 ||
        open_report(cfg.junit_path, "--junit", &junit_f) < 0 ||
        open_report(cfg.html_path, "--html", &html_f) < 0 ||
        open_report(cfg.summary_md_path, "--summary-md", &md_f) < 0)
        goto out;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    code = ps_conform_run(&cfg, checks, &doc, &err);
    if (code == 2) {
        fprintf(stderr, "petstore-conform: %s\n", err.message);
        goto out;
    }
    ps_json_failure why;
    tree = ps_json_parse(doc.data, doc.len, &why, &err);
    if (!tree) { /* our own document: a bug, but say so rather than crash */
        fprintf(stderr,
                "petstore-conform: internal error: the report document does not parse: %s\n",
                err.message);
        code = 3;
        goto out;
    }
    ps_console_options copts = {ps_cli_color_enabled(cfg.color, STDOUT_FILENO), true};
    if (ps_report_console_conform(tree, stdout, &copts, &err) < 0)
        fprintf(stderr, "petstore-conform: %s\n", err.message);
    if (json_f && (fwrite(doc.data, 1, doc.len, json_f) != doc.len || fflush(json_f) != 0))
        fprintf(stderr, "petstore-conform: --json: write to '%s' failed\n", cfg.json_path),
            code = code ? code : 3;
    if (tap_f && ps_report_tap_conform(tree, tap_f, &err) < 0)
        fprintf(stderr, "petstore-conform: --tap: %s\n", err.message), code = code ? code : 3;
    if (junit_f && ps_report_junit_conform(tree, junit_f, &err) < 0)
        fprintf(stderr, "petstore-conform: --junit: %s\n", err.message), code = code ? code : 3;
    if (html_f && ps_report_html_conform(tree, html_f, &err) < 0)
        fprintf(stderr, "petstore-conform: --html: %s\n", err.message), code = code ? code : 3;
    if (md_f && ps_report_md_conform(tree, md_f, &err) < 0)
        fprintf(stderr, "petstore-conform: --summary-md: %s\n", err.message),
            code = code ? code : 3;
    if (code == 3) {
        const ps_json *ab = ps_json_get(tree, "aborted");
        const ps_json *inc = ps_json_get(tree, "incomplete");
        if (ab && ab->type == PS_JSON_STRING)
            fprintf(stderr, "petstore-conform: run aborted: %s\n", ab->str);
        else if (inc && inc->type == PS_JSON_STRING)
            fprintf(stderr, "petstore-conform: run incomplete (exit 3): %s\n", inc->str);
    }

out:
    if (close_report(json_f, cfg.json_path) < 0 || close_report(tap_f, cfg.tap_path) < 0 ||
        close_report(junit_f, cfg.junit_path) < 0 || close_report(html_f, cfg.html_path) < 0 ||
        close_report(md_f, cfg.summary_md_path) < 0)
        code = code ? code : 3;
    ps_json_free(tree);
    ps_buf_free(&doc);
    ps_checks_destroy(checks);
    return code;
}
