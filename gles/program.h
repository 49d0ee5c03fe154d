/* The program cache: compute programs compiled from the embedded GLSL with a #define preamble,
 * cached by (shader name, parameter struct), each variant compiled once and kept until trimmed
 * (least recently used first). Builds go through the program store (program_store.h: sources,
 * binaries on disk), early ones through the compile thread (program_thread.h).
 *
 * GL contract: every function runs on the thread that owns the context (egl.h); program_get
 * compiles and links on a miss, changing no bound state; destroy deletes the programs. */
#ifndef FFTBLOOM_PROGRAM_H
#define FFTBLOOM_PROGRAM_H

#include <stddef.h>

#include "gles/gl_util.h"
#include "core/log.h"

#define PROGRAM_ERR_LEN 4096
#define PROGRAM_KEY_MAX 256 /* bytes of parameter struct in a key */

enum program_error {
	PROGRAM_OK = 0,
	PROGRAM_E_NOSHADER = -1, /* no shader of that name (or the debug file is missing) */
	PROGRAM_E_COMPILE = -2,  /* compile failed: err holds the name and the info log */
	PROGRAM_E_LINK = -3,
	PROGRAM_E_NOMEM = -4,
	PROGRAM_E_KEY = -5,      /* key larger than PROGRAM_KEY_MAX */
	PROGRAM_E_GL = -6,       /* a GL error was raised */
	PROGRAM_E_BUDGET = -7,   /* a miss past program_cache_budget: nothing built */
};

struct program_stats {
	unsigned long long hits, misses; /* program_get lookups */
	unsigned count;                  /* programs held */
	double compile_ms;               /* total compile + link (or binary load) time */
	unsigned long long binary_hits;  /* misses served from persisted binaries */
	unsigned long long evictions;    /* programs deleted by program_cache_trim */
	size_t bytes;                    /* programs held: their binaries' length where the driver
	                                    reports one, else 64 KiB each */
};

struct program_cache;

/* shader_dir: "" to use the embedded sources, else a folder holding NAME.comp (debug). */
int program_cache_create(const char *shader_dir, const struct log_sink *log,
                         struct program_cache **out);
void program_cache_destroy(struct program_cache *pc); /* NULL-safe */

/* Persists program binaries in dir (created if missing, one level): a miss first tries the binary saved for
 * the same driver (renderer + version string), defines and sources, and saves what it compiles.
 * A binary the driver refuses is compiled again. dir "" turns it off. */
void program_cache_set_binary_dir(struct program_cache *pc, const char *dir, const char *driver);

/* Returns in *prog the program for shader `name` ("a+b": a's text, then b's) built with
 * `defines` (lines of "#define X v"), cached under (name, key bytes): callers memset their key
 * struct to 0 before filling it, and derive defines from it alone. On failure logs and writes the shader's name and info log. */
int program_get(struct program_cache *pc, const char *name, const void *key, size_t key_len,
                const char *defines, unsigned *prog, char err[PROGRAM_ERR_LEN]);

void program_cache_stats(const struct program_cache *pc, struct program_stats *st);

/* Bounds the programs program_get may build (or load from binaries) from now on to n; -1 lifts
 * the bound. A miss past it fails with PROGRAM_E_BUDGET, building nothing: idle work takes one
 * program a step, so a request never waits for more than one compile. Clears the refusal
 * program_cache_refused reports. */
void program_cache_budget(struct program_cache *pc, int n);
/* 1 when a program_get was refused for the budget since program_cache_budget was last called
 * (callers whose failures are soft check it: what failed is only deferred). */
int program_cache_refused(const struct program_cache *pc);

struct egl_ctx;
/* Starts a compile thread on ctx, a context of the cache's context's share group
 * (egl_ctx_create_shared; the cache's destroy stops the thread, then the caller destroys ctx).
 * From then on a miss under a budget is handed to it and refused at once (PROGRAM_E_BUDGET,
 * the budget used); a later program_get of it takes the program once built: under a budget it
 * is refused again while the compile runs, without one it waits for it. So idle work holds the
 * cache's thread for no compile at all. 0, PROGRAM_E_NOMEM (no thread) or PROGRAM_E_GL (ctx
 * could not be made current on it): without a thread, compiles stay on the caller's. */
int program_cache_worker(struct program_cache *pc, struct egl_ctx *ctx);
/* 1 while a compile handed to the worker has not finished: idle work that would only be
 * refused waits a moment instead. */
int program_cache_compiling(struct program_cache *pc);

/* Parallel mode (on 1: where the current context has GL_KHR_parallel_shader_compile, whose
 * compiler threads it sets to the driver's most; 0 off, -1 only asks): a miss under a budget (idle work) is submitted on this context
 * (glCompileShader and glLinkProgram return at once) and refused (PROGRAM_E_BUDGET) until the
 * driver reports it complete; program_cache_poll (and program_cache_compiling) then takes it
 * into the cache, so that the thread never waits for a compile it did not need for the job in
 * hand. A frame (no budget) asking for one in flight waits for it. A failed build is kept and
 * returned, with its log, to the next program_get of it, once. Returns the mode now (1 on). */
int program_cache_parallel(struct program_cache *pc, int on);
/* Takes the submitted builds that are complete into the cache; 1 while some are in flight. */
int program_cache_poll(struct program_cache *pc);
/* A program idle work loaded from its binary is readied by the driver at its first dispatch
 * (about 200 ms on NVIDIA): one such program dispatched with no work groups, indirect; 1 when
 * one was, 0 when none is left. Changes no bound state. */
int program_cache_ready_step(struct program_cache *pc);

/* A holder that keeps a program across calls (an FFT plan) holds it, so that trimming never
 * deletes it, and drops it when done. Unknown ids (and a NULL cache) are ignored. */
void program_hold(struct program_cache *pc, unsigned prog);
void program_drop(struct program_cache *pc, unsigned prog);

/* Deletes the least recently used programs nobody holds until at most max_count programs of
 * at most max_bytes remain (or only held ones do). Programs got but not held may be deleted:
 * call it between frames, where no caller keeps an id it did not hold. Returns how many went. */
int program_cache_trim(struct program_cache *pc, size_t max_count, size_t max_bytes);

/* Looks up the locations of n uniforms of prog: names[i] into loc[i], -1 for a name the program
 * does not use (setting a uniform at -1 is a no-op). Callers look them up once, when they get a
 * program they keep, not per dispatch. */
void program_uniforms(unsigned prog, const char *const names[], int n, int loc[]);

const char *program_strerror(int code);

#endif
