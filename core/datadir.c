/* datadir.c - the data directory: $PETSTORE_DATA_DIR, else beside the
 * executable as installed (see datadir.h). */
#include "core/datadir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *ps_data_dir(void)
{
    const char *env = getenv(PS_DATA_DIR_ENV);
    if (env && *env) return strdup(env);

    /* The kernel's link names the binary itself, symlinks resolved, so a
     * program reached through a symlink (/usr/local/bin -> /opt/...) still
     * finds the data of the tree it was installed in. */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = '\0';

    /* Each leading "../" drops a component, so messages name /usr/share/...
     * rather than /usr/bin/../share/... */
    const char *rel = PS_DATA_RELDIR;
    while (strncmp(rel, "../", 3) == 0 && *exe && (slash = strrchr(exe, '/')) != NULL) {
        *slash = '\0'; /* "/bin" becomes "", which the "/" below makes the root */
        rel += 3;
    }
    size_t len = strlen(exe) + 1 + strlen(rel) + 1;
    char *dir = malloc(len);
    if (dir) snprintf(dir, len, "%s/%s", exe, rel);
    return dir;
}

char *ps_data_path(const char *name)
{
    char *dir = ps_data_dir();
    if (!dir) return NULL;
    size_t len = strlen(dir) + 1 + strlen(name) + 1;
    char *path = malloc(len);
    if (path) snprintf(path, len, "%s/%s", dir, name);
    free(dir);
    return path;
}
