/* Programs made from their sources: the GLSL (embedded, or NAME.comp files for debugging) with a
 * #define preamble, compiled and linked, or loaded from the binary the store persisted on disk
 * for the same driver, defines and sources, so that a restart compiles nothing it built before.
 *
 * GL contract: program_store_build runs on any thread with a context of the share group current
 * and changes no bound state; create, set_dir and destroy make no GL call. */
#ifndef FFTBLOOM_PROGRAM_STORE_H
#define FFTBLOOM_PROGRAM_STORE_H

#include "gles/program.h"

struct program_store;

/* shader_dir: "" to use the embedded sources, else a folder holding NAME.comp. 0 or
 * PROGRAM_E_NOMEM. */
int program_store_create(const char *shader_dir, const struct log_sink *log,
                         struct program_store **out);
void program_store_destroy(struct program_store *s); /* NULL-safe */

/* Persists binaries in dir (created if missing, one level), reused only for the same driver
 * (renderer + version string); dir "" turns it off. Set before any thread builds. */
void program_store_set_dir(struct program_store *s, const char *dir, const char *driver);

/* The program of shader `name` ("a+b": a's text, then b's) under `defines`: the stored binary
 * when the driver takes it (*binary_hit 1), else compiled and linked, and stored. 0, or
 * PROGRAM_E_NOSHADER / _COMPILE / _LINK with the shader's name and info log in err (logged). */
int program_store_build(const struct program_store *s, const char *name, const char *defines,
                        unsigned *prog, int *binary_hit, char err[PROGRAM_ERR_LEN]);

#endif
