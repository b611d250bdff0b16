/* test_datadir.c - core/datadir: $PETSTORE_DATA_DIR wins when set; else the
 * data directory is found from the executable's own path, which in a build
 * tree is the mirror <build>/share/petstore-conform holding the fixtures. */
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/datadir.h"
#include "harness.h"

static void env_override_is_taken_as_given(void)
{
    setenv(PS_DATA_DIR_ENV, "/nowhere/data", 1);
    char *dir = ps_data_dir();
    char *path = ps_data_path("keys.txt");
    CHECK_STR(dir, "/nowhere/data");
    CHECK_STR(path, "/nowhere/data/keys.txt");
    free(dir);
    free(path);
    unsetenv(PS_DATA_DIR_ENV);
}

static void empty_env_is_ignored(void)
{
    setenv(PS_DATA_DIR_ENV, "", 1);
    char *dir = ps_data_dir();
    CHECK(dir && strcmp(dir, "") != 0 && dir[0] == '/');
    free(dir);
    unsetenv(PS_DATA_DIR_ENV);
}

/* <build>/tests/test_datadir -> <build>/share/petstore-conform, normalised
 * (no "/../" in it), and the build tree's mirror makes keys.txt readable. */
static void found_beside_the_executable(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0);
    if (n <= 0) return;
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    *strrchr(exe, '/') = '\0'; /* the build tree */
    char want[PATH_MAX + 32];
    snprintf(want, sizeof want, "%s/share/petstore-conform", exe);

    char *dir = ps_data_dir();
    CHECK_STR(dir, want);
    CHECK(dir && strstr(dir, "/../") == NULL);
    char *path = ps_data_path("keys.txt");
    CHECK(path && access(path, R_OK) == 0);
    char *seed = ps_data_path("seed-categories.json");
    CHECK(seed && access(seed, R_OK) == 0);
    free(dir);
    free(path);
    free(seed);
}

int main(void)
{
    unsetenv(PS_DATA_DIR_ENV);
    RUN(env_override_is_taken_as_given);
    RUN(empty_env_is_ignored);
    RUN(found_beside_the_executable);
    return TEST_EXIT();
}
