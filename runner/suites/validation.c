/* validation.c - the 400 family on createCategory, driven by
 * runner/suites/validation_payloads.def. */
#include <stdio.h>
#include <string.h>

#include "runner/suites/suites.h"

typedef struct payload {
    ps_check_id ck;
    const char *label;
    const char *body;
} payload;

static const payload payloads[] = {
#define PS_PAYLOAD(ck, label, body) {PS_CK_##ck, label, body},
#include "runner/suites/validation_payloads.def"
#undef PS_PAYLOAD
};

void ps_suite_validation(ps_conform *c)
{
    char auth[1024];
    ps_conform_bearer(c, PS_KEY_MAIN, auth, sizeof auth);
    /* The 400s also feed the Error-shape checks. */
    bool feeds_errors = ps_conform_any_selected(c, "errors.");
    for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++) {
        const payload *p = &payloads[i];
        if (!ps_conform_selected(c, p->ck) && !feeds_errors) continue;
        ps_client_request req = {"POST",  "/categories",   auth,
                                 p->body, strlen(p->body), "application/json"};
        ps_exchange ex;
        int rc = ps_conform_send(c, p->ck, &req, PS_KEY_MAIN, PS_SEND_RETRY_429, &ex);
        if (rc != PS_SENT) {
            ps_conform_no_response(c, p->ck, rc, &ex);
        } else if (ex.status == 400) {
            ps_conform_pass(c, p->ck);
        } else if (ex.status >= 200 && ex.status < 300) {
            ps_conform_fail(c, p->ck, &ex, "400 with an Error body",
                            "a create with %s was accepted (%ld)", p->label, ex.status);
        } else {
            ps_conform_fail(c, p->ck, &ex, "400 with an Error body",
                            "a create with %s answered %ld, not 400", p->label, ex.status);
        }
        ps_exchange_free(&ex);
    }
}
