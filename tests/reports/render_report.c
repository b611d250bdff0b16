/* render_report.c - test driver: renders a JSON summary file as an HTML report.
 * Usage: render_report conform|load IN.json OUT.html */
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "reports/html_report.h"

int main(int argc, char **argv)
{
    ps_buf text = PS_BUF_INIT;
    ps_json *doc = NULL;
    ps_error err = {{0}};
    FILE *out = NULL;
    int rc = 1;

    if (argc != 4 || (strcmp(argv[1], "conform") && strcmp(argv[1], "load"))) {
        fprintf(stderr, "usage: render_report conform|load IN.json OUT.html\n");
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
    if ((strcmp(argv[1], "conform") == 0 ? ps_report_html_conform(doc, out, &err)
                                         : ps_report_html_load(doc, out, &err)) != 0) {
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
