/* checks.c - check catalogue, selection and outcome bookkeeping. */
#include "runner/checks.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

static const ps_check_def catalogue[PS_CK_COUNT] = {
#define PS_CHECK(en, id, level, clause, tags, title)                                               \
    {PS_CK_##en, id, PS_LEVEL_##level, clause, tags, title},
#include "runner/suites/checks.def"
#undef PS_CHECK
};

typedef struct check_state {
    bool selected;
    unsigned passes, failures;
    char *message;
    char *evidence;
    char *not_run;
    bool not_applicable; /* not_run says why the check does not apply */
    double ms;
} check_state;

struct ps_checks {
    check_state s[PS_CK_COUNT];
};

const ps_check_def *ps_check_def_get(ps_check_id ck)
{
    return ck < PS_CK_COUNT ? &catalogue[ck] : NULL;
}

const char *ps_check_level_name(ps_check_level level)
{
    switch (level) {
    case PS_LEVEL_SPEC:
        return "spec";
    case PS_LEVEL_HTTP:
        return "http";
    case PS_LEVEL_ADVICE:
        return "advice";
    }
    return "spec";
}

const char *ps_check_status_name(ps_check_status status)
{
    switch (status) {
    case PS_STATUS_PASSED:
        return "passed";
    case PS_STATUS_FAILED:
        return "failed";
    case PS_STATUS_WARNING:
        return "warning";
    case PS_STATUS_NOT_RUN:
        return "not_run";
    }
    return "not_run";
}

void ps_check_suite(const ps_check_def *def, char *out, size_t out_size)
{
    const char *dot = strchr(def->id, '.');
    size_t n = dot ? (size_t)(dot - def->id) : strlen(def->id);
    if (n >= out_size) n = out_size - 1;
    memcpy(out, def->id, n);
    out[n] = '\0';
}

ps_checks *ps_checks_create(void)
{
    ps_checks *c = calloc(1, sizeof *c);
    if (!c) abort();
    for (int i = 0; i < PS_CK_COUNT; i++)
        c->s[i].selected = true;
    return c;
}

void ps_checks_destroy(ps_checks *c)
{
    if (!c) return;
    for (int i = 0; i < PS_CK_COUNT; i++) {
        free(c->s[i].message);
        free(c->s[i].evidence);
        free(c->s[i].not_run);
    }
    free(c);
}

/* Does one glob pattern match the check (id, suite or a tag)? */
static bool pattern_matches(const char *pat, const ps_check_def *def)
{
    if (fnmatch(pat, def->id, 0) == 0) return true;
    char suite[64];
    ps_check_suite(def, suite, sizeof suite);
    if (fnmatch(pat, suite, 0) == 0) return true;
    const char *t = def->tags;
    while (*t) {
        const char *comma = strchr(t, ',');
        size_t n = comma ? (size_t)(comma - t) : strlen(t);
        char tag[64];
        if (n < sizeof tag) {
            memcpy(tag, t, n);
            tag[n] = '\0';
            if (fnmatch(pat, tag, 0) == 0) return true;
        }
        t += n + (comma ? 1 : 0);
    }
    return false;
}

/* Applies a comma list of patterns: marks[i] = some pattern matched check i. */
static int apply_patterns(const char *list, const char *flag, bool marks[PS_CK_COUNT],
                          ps_error *err)
{
    char *copy = strdup(list);
    if (!copy) abort();
    int rc = 0;
    char *save = NULL;
    bool any_pattern = false;
    for (char *pat = strtok_r(copy, ",", &save); pat; pat = strtok_r(NULL, ",", &save)) {
        while (*pat == ' ')
            pat++;
        size_t n = strlen(pat);
        while (n && pat[n - 1] == ' ')
            pat[--n] = '\0';
        if (!*pat) continue;
        any_pattern = true;
        bool hit = false;
        for (int i = 0; i < PS_CK_COUNT; i++) {
            if (pattern_matches(pat, &catalogue[i])) {
                marks[i] = true;
                hit = true;
            }
        }
        if (!hit) {
            rc = ps_error_set(err, "%s '%s' matches no check id, suite or tag (see --list)", flag,
                              pat);
            goto out;
        }
    }
    if (!any_pattern) rc = ps_error_set(err, "%s needs at least one id, tag or glob", flag);
out:
    free(copy);
    return rc;
}

int ps_checks_select(ps_checks *c, const char *only, const char *skip, ps_error *err)
{
    bool only_marks[PS_CK_COUNT] = {false}, skip_marks[PS_CK_COUNT] = {false};
    if (only && apply_patterns(only, "--only", only_marks, err) < 0) return -1;
    if (skip && apply_patterns(skip, "--skip", skip_marks, err) < 0) return -1;
    int selected = 0;
    for (int i = 0; i < PS_CK_COUNT; i++) {
        c->s[i].selected = (!only || only_marks[i]) && !skip_marks[i];
        selected += c->s[i].selected;
    }
    if (!selected) return ps_error_set(err, "--only/--skip leave no check to run");
    return 0;
}

bool ps_checks_selected(const ps_checks *c, ps_check_id ck)
{
    return ck < PS_CK_COUNT && c->s[ck].selected;
}

bool ps_checks_any_selected(const ps_checks *c, const char *prefix)
{
    size_t n = strlen(prefix);
    for (int i = 0; i < PS_CK_COUNT; i++)
        if (c->s[i].selected && strncmp(catalogue[i].id, prefix, n) == 0) return true;
    return false;
}

void ps_check_pass(ps_checks *c, ps_check_id ck)
{
    if (ck >= PS_CK_COUNT || !c->s[ck].selected) return;
    c->s[ck].passes++;
}

/* The formatted text in a malloc'd string the check state owns. */
__attribute__((format(printf, 1, 0))) static char *vformat(const char *fmt, va_list ap)
{
    ps_buf b = PS_BUF_INIT;
    ps_buf_vprintf(&b, fmt, ap);
    return ps_buf_detach(&b);
}

void ps_check_fail(ps_checks *c, ps_check_id ck, const char *evidence_json, const char *fmt, ...)
{
    if (ck >= PS_CK_COUNT || !c->s[ck].selected) return;
    check_state *s = &c->s[ck];
    s->failures++;
    if (s->failures > 1) return; /* the first failure tells the story; the count says how many */
    va_list ap;
    va_start(ap, fmt);
    s->message = vformat(fmt, ap);
    va_end(ap);
    if (evidence_json) {
        s->evidence = strdup(evidence_json);
        if (!s->evidence) abort();
    }
}

/* Records why a check did not run; the first reason stands. */
static void mark_not_run(ps_checks *c, ps_check_id ck, bool applicable, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
static void mark_not_run(ps_checks *c, ps_check_id ck, bool applicable, const char *fmt, va_list ap)
{
    if (ck >= PS_CK_COUNT || !c->s[ck].selected) return;
    check_state *s = &c->s[ck];
    if (s->not_run) return;
    s->not_run = vformat(fmt, ap);
    s->not_applicable = !applicable;
}

void ps_check_not_run(ps_checks *c, ps_check_id ck, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mark_not_run(c, ck, true, fmt, ap);
    va_end(ap);
}

void ps_check_not_applicable(ps_checks *c, ps_check_id ck, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mark_not_run(c, ck, false, fmt, ap);
    va_end(ap);
}

void ps_check_add_time(ps_checks *c, ps_check_id ck, double ms)
{
    if (ck < PS_CK_COUNT) c->s[ck].ms += ms;
}

void ps_check_outcome_get(const ps_checks *c, ps_check_id ck, bool strict, ps_check_outcome *out)
{
    const check_state *s = &c->s[ck];
    memset(out, 0, sizeof *out);
    out->passes = s->passes;
    out->failures = s->failures;
    out->duration_ms = s->ms;
    out->applicable = true;
    if (s->failures) {
        ps_check_level level = catalogue[ck].level;
        bool fails = level == PS_LEVEL_SPEC || (level == PS_LEVEL_HTTP && strict);
        out->status = fails ? PS_STATUS_FAILED : PS_STATUS_WARNING;
        out->message = s->message;
        out->evidence_json = s->evidence;
    } else if (s->passes) {
        out->status = PS_STATUS_PASSED;
    } else {
        out->status = PS_STATUS_NOT_RUN;
        out->message = s->not_run ? s->not_run : "no exchange of this run exercised the check";
        out->applicable = !s->not_applicable;
    }
}
