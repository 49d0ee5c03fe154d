/* The compile thread: program builds handed off by idle work run on a second context of the
 * share group, so that the context's own thread never waits on a compile it asked for early.
 * The program cache (program.c) hands it jobs and takes what it built.
 *
 * GL contract: create starts a thread that makes its context (egl_ctx_create_shared) current
 * and builds there through the store (glFinish after each, so the program is complete before
 * another context of the group uses it); the other functions run on the cache's thread and make
 * no GL call, except destroy, which deletes programs built and not taken. */
#ifndef FFTBLOOM_PROGRAM_THREAD_H
#define FFTBLOOM_PROGRAM_THREAD_H

#include "gles/program.h"

struct egl_ctx;
struct program_store;
struct program_thread;

/* A finished job, as taken from the thread. */
struct program_built {
	char name[64];
	unsigned char key[PROGRAM_KEY_MAX];
	size_t key_len;
	int rc, binary_hit;       /* program_store_build's */
	unsigned prog;            /* when rc is 0: the program, now the taker's */
	double ms;                /* the build's time on the thread */
	char err[PROGRAM_ERR_LEN];
};

/* Starts the thread on ctx (the caller destroys ctx after this thread's destroy) building
 * through store (which outlives it) and waits until ctx is current there. 0, PROGRAM_E_NOMEM
 * (no thread), or PROGRAM_E_GL (ctx could not be made current: the thread is stopped). */
int program_thread_create(const struct program_store *store, struct egl_ctx *ctx,
                          struct program_thread **out);
/* Stops the thread after the build it is on, deletes what it built and nobody took. NULL-safe. */
void program_thread_destroy(struct program_thread *t);

enum program_thread_take {
	PROGRAM_THREAD_NONE = 0, /* no job for (name, key) */
	PROGRAM_THREAD_BUSY,     /* the job is queued or building (without wait) */
	PROGRAM_THREAD_TAKEN,    /* *out filled; the job is gone */
};
/* The job for (name, key): with wait, blocks until it is built. */
int program_thread_take(struct program_thread *t, const char *name, const void *key,
                        size_t key_len, int wait, struct program_built *out);

/* Queues a build of (name, key) under defines. Finished jobs nobody took are first handed to
 * keep (their programs are its own, failures are dropped: the next asker meets them again).
 * 0 queued, or -1 (no free job, or out of memory). */
int program_thread_queue(struct program_thread *t, const char *name, const void *key,
                         size_t key_len, const char *defines,
                         void (*keep)(void *arg, const struct program_built *b), void *arg);

/* 1 while a queued job has not finished building. */
int program_thread_busy(struct program_thread *t);

#endif
