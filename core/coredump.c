/* coredump.c - core dumps turned off for the process (coredump.h). */
#include "core/coredump.h"

#include <sys/prctl.h>
#include <sys/resource.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PS_SANITIZED 1
#endif
#endif

int ps_coredump_disable(void)
{
    int rc = 0;
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) rc = -1;
#ifndef PS_SANITIZED
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) rc = -1;
#endif
    return rc;
}
