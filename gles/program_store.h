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

/* A build submitted and not finished: the program is compiled and linked by the driver, in the
 * background where the context has GL_KHR_parallel_shader_compile. */
struct program_pending {
	unsigned shader;   /* 0 once finished, or when loaded from a binary */
	unsigned prog;     /* the program object (0: none) */
	int binary_hit;    /* loaded from the stored binary: complete at once */
	char bpath[1100];  /* where its binary is stored ("" none) */
};
#define PROGRAM_COMPLETION_STATUS 0x91B1 /* GL_COMPLETION_STATUS_KHR */

/* program_store_build in two halves. submit: the binary, else glCompileShader and glLinkProgram
 * (which return at once under the extension); 0 or PROGRAM_E_NOSHADER. ready: 1 once the
 * driver says the program is complete (GL_COMPLETION_STATUS_KHR; only on a context with the
 * extension), so that finish will not wait. finish: the compile and link status (their info
 * log in err, logged, the objects deleted on failure), the binary stored; blocks while the
 * driver works. cancel: deletes what was submitted. */
int program_store_submit(const struct program_store *s, const char *name, const char *defines,
                         struct program_pending *pd, char err[PROGRAM_ERR_LEN]);
int program_store_ready(const struct program_pending *pd);
int program_store_finish(const struct program_store *s, const char *name, const char *defines,
                         struct program_pending *pd, unsigned *prog, char err[PROGRAM_ERR_LEN]);
void program_store_cancel(struct program_pending *pd);

#endif
