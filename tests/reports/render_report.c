/* render_report.c - test driver: renders a JSON summary file as a report:
 * HTML (conform, load), the conformance TAP or JUnit file (tap, junit), or
 * a Markdown summary (md-conform, md-load), so the peer tests can feed
 * readers documents no real server produces.
 * Usage: render_report conform|load|tap|junit|md-conform|md-load IN.json OUT */
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "reports/html_report.h"
#include "reports/report_junit.h"
#include "reports/report_markdown.h"
#include "reports/report_tap.h"

int main(int argc, char **argv)
{
    ps_buf text = PS_BUF_INIT;
    ps_json *doc = NULL;
    ps_error err = {{0}};
    FILE *out = NULL;
    int rc = 1;

    const char *kind = argc == 4 ? argv[1] : "";
    int (*writer)(const ps_json *, FILE *, ps_error *) =
        strcmp(kind, "conform") == 0      ? ps_report_html_conform
        : strcmp(kind, "load") == 0       ? ps_report_html_load
        : strcmp(kind, "tap") == 0        ? ps_report_tap_conform
        : strcmp(kind, "junit") == 0      ? ps_report_junit_conform
        : strcmp(kind, "md-conform") == 0 ? ps_report_md_conform
        : strcmp(kind, "md-load") == 0    ? ps_report_md_load
                                          : NULL;
    if (!writer) {
        fprintf(stderr,
                "usage: render_report conform|load|tap|junit|md-conform|md-load IN.json OUT\n");
        return 2;
    }
    if (ps_buf_read_file(&text, argv[2]) != 0) {
        perror(argv[2]);
        goto out;
    }
    doc = ps_json_parse(text.data, text.len, NULL, &err);
    if (!doc) {
        fprintf(stderr, "%s: %s\n", argv[2], err.message);
        goto out;
    }
    out = fopen(argv[3], "w");
    if (!out) {
        perror(argv[3]);
        goto out;
    }
    if (writer(doc, out, &err) != 0) {
        fprintf(stderr, "%s: %s\n", argv[3], err.message);
        goto out;
    }
    rc = 0;
out:
    if (out && fclose(out) != 0 && rc == 0) {
        perror(argv[3]);
        rc = 1;
    }
    ps_json_free(doc);
    ps_buf_free(&text);
    return rc;
}
