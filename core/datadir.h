/* datadir.h - where the programs find their data (keys.txt,
 * seed-categories.json, create-bodies.json, openapi.yaml, schemas/): one
 * lookup for all three, relative to the running executable, so an installed,
 * extracted or moved program finds its own data and no build-tree path is
 * compiled in. A build tree mirrors the installed layout (CMake links
 * <build>/share/petstore-conform/ to the source files), so programs run from
 * <build>/bin find the same names there. */
#ifndef PS_DATADIR_H
#define PS_DATADIR_H

/* The data directory relative to the directory of the executable, from
 * GNUInstallDirs (bin -> share/petstore-conform); set by CMake. */
#ifndef PS_DATA_RELDIR
#define PS_DATA_RELDIR "../share/petstore-conform"
#endif

/* The environment variable that overrides the lookup. */
#define PS_DATA_DIR_ENV "PETSTORE_DATA_DIR"

/* Returns the data directory, malloc'd (the caller frees): $PETSTORE_DATA_DIR
 * when it is set and not empty (taken as given, never second-guessed), else
 * <directory of /proc/self/exe>/PS_DATA_RELDIR. NULL when out of memory or
 * the executable's own path cannot be read. */
char *ps_data_dir(void);

/* Returns the path of data file NAME in ps_data_dir(), malloc'd (the caller
 * frees), whether or not the file exists, so a caller's message names where
 * it looked. NULL as ps_data_dir. */
char *ps_data_path(const char *name);

#endif
