/* print_rlm_labels.c - prints every limiter label a report can carry, one a
 * line, as ps_rlm_label_name (core/ratelimit_model.h) names them: that
 * function is the one table of labels both programs write, so
 * schema_labels.py checks the schemas against what it prints, not against a
 * copy. The enum has no count member, so the values are taken in order until
 * the name falls back to "unknown" (or NULL), which is what an out-of-range
 * value gets; only the first value is really called "unknown". */
#include <stdio.h>
#include <string.h>

#include "core/ratelimit_model.h"

int main(void)
{
    puts(ps_rlm_label_name(PS_RLM_LABEL_UNKNOWN));
    for (int i = (int)PS_RLM_LABEL_UNKNOWN + 1; i < 256; i++) {
        const char *name = ps_rlm_label_name((ps_rlm_label)i);
        if (name == NULL || strcmp(name, "unknown") == 0) break;
        puts(name);
    }
    return 0;
}
