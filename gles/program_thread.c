/* The compile thread: a second context of the share group builds what idle work asks for
 * early, one job at a time; see program_thread.h. */
#include "gles/program_thread.h"

#include <GLES3/gl31.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/egl.h"
#include "gles/program_store.h"
#include "core/clock.h"

#define PROGRAM_JOBS 4 /* compiles handed to the thread and not yet taken */

/* A job: queued, building, then done with the program (or the error) until it is taken. */
struct job {
	struct program_built b;
	char *defines;
	int state;
};
enum { JOB_FREE = 0, JOB_QUEUED, JOB_BUILDING, JOB_DONE };

/* jobs under lock, cv signalled both ways */
struct program_thread {
	const struct program_store *store;
	struct egl_ctx *ctx;
	pthread_t thread;
	int stop;
	int up;           /* 1: its context current, -1: it could not make it so, 0: not yet */
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct job jobs[PROGRAM_JOBS];
	GLuint no_groups; /* the thread's indirect dispatch of no work groups (ready_program) */
};

/* A program loaded from a binary is readied by the driver at its first dispatch (NVIDIA: 20-27
 * ms a program on average, about 1 ms for one compiled in this process), which the thread
 * takes on: it dispatches the program once with no work groups (indirect, so that the driver
 * cannot skip it), and the GPU thread's first dispatch is quick. */
static void ready_program(struct program_thread *t, GLuint p)
{
	if (!t->no_groups) {
		static const GLuint zero[3] = {0, 0, 0};
		glGenBuffers(1, &t->no_groups);
		glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, t->no_groups);
		glBufferData(GL_DISPATCH_INDIRECT_BUFFER, sizeof zero, zero, GL_STATIC_DRAW);
	}
	glUseProgram(p);
	glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, t->no_groups);
	glDispatchComputeIndirect(0);
	glUseProgram(0);
	glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, 0);
	while (glGetError() != GL_NO_ERROR) {
	}
}

static void *thread_main(void *arg)
{
	struct program_thread *t = arg;
	int current = !egl_ctx_make_current(t->ctx);
	pthread_mutex_lock(&t->lock);
	t->up = current ? 1 : -1;
	pthread_cond_broadcast(&t->cv);
	for (;;) {
		struct job *j = NULL;
		for (int i = 0; i < PROGRAM_JOBS && !j; i++)
			if (t->jobs[i].state == JOB_QUEUED)
				j = &t->jobs[i];
		if (!j) {
			if (t->stop)
				break;
			pthread_cond_wait(&t->cv, &t->lock);
			continue;
		}
		j->state = JOB_BUILDING;
		pthread_mutex_unlock(&t->lock);
		struct program_built *b = &j->b;
		double t0 = clock_ms();
		if (current) {
			b->rc = program_store_build(t->store, b->name, j->defines, &b->prog,
			                            &b->binary_hit, b->err);
			if (!b->rc && b->binary_hit)
				ready_program(t, b->prog);
			glFinish(); /* done before another context of the group uses it */
		} else {
			b->rc = PROGRAM_E_GL;
			snprintf(b->err, sizeof b->err, "shader '%s': the compile thread has no context",
			         b->name);
		}
		b->ms = clock_ms() - t0;
		pthread_mutex_lock(&t->lock);
		j->state = JOB_DONE;
		pthread_cond_broadcast(&t->cv);
	}
	pthread_mutex_unlock(&t->lock);
	if (t->no_groups)
		glDeleteBuffers(1, &t->no_groups);
	t->no_groups = 0;
	if (current)
		egl_ctx_release(t->ctx);
	return NULL;
}

static void job_clear(struct job *j)
{
	free(j->defines);
	memset(j, 0, sizeof *j);
}

/* Stops the thread (after the build it is on) and frees what it holds. */
static void thread_stop(struct program_thread *t)
{
	pthread_mutex_lock(&t->lock);
	t->stop = 1;
	for (int i = 0; i < PROGRAM_JOBS; i++)
		if (t->jobs[i].state == JOB_QUEUED)
			t->jobs[i].state = JOB_FREE;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	for (int i = 0; i < PROGRAM_JOBS; i++) {
		struct job *j = &t->jobs[i];
		if (j->state == JOB_DONE && !j->b.rc)
			glDeleteProgram(j->b.prog);
		job_clear(j);
	}
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->lock);
}

int program_thread_create(const struct program_store *store, struct egl_ctx *ctx,
                          struct program_thread **out)
{
	struct program_thread *t = calloc(1, sizeof *t);
	if (!t)
		return PROGRAM_E_NOMEM;
	t->store = store;
	t->ctx = ctx;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cv, NULL);
	if (pthread_create(&t->thread, NULL, thread_main, t)) {
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return PROGRAM_E_NOMEM;
	}
	pthread_setname_np(t->thread, "fb-compile");
	pthread_mutex_lock(&t->lock);
	while (!t->up)
		pthread_cond_wait(&t->cv, &t->lock);
	int up = t->up > 0;
	pthread_mutex_unlock(&t->lock);
	if (!up) { /* its context would not be current there */
		thread_stop(t);
		free(t);
		return PROGRAM_E_GL;
	}
	*out = t;
	return 0;
}

void program_thread_destroy(struct program_thread *t)
{
	if (!t)
		return;
	thread_stop(t);
	free(t);
}

int program_thread_busy(struct program_thread *t)
{
	int n = 0;
	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < PROGRAM_JOBS; i++)
		n += t->jobs[i].state == JOB_QUEUED || t->jobs[i].state == JOB_BUILDING;
	pthread_mutex_unlock(&t->lock);
	return n > 0;
}

/* The job for (name, key), or NULL. Under t->lock. */
static struct job *job_of(struct program_thread *t, const char *name, const void *key,
                          size_t key_len)
{
	for (int i = 0; i < PROGRAM_JOBS; i++) {
		struct job *j = &t->jobs[i];
		if (j->state != JOB_FREE && j->b.key_len == key_len && !strcmp(j->b.name, name) &&
		    !memcmp(j->b.key, key, key_len))
			return j;
	}
	return NULL;
}

int program_thread_take(struct program_thread *t, const char *name, const void *key,
                        size_t key_len, int wait, struct program_built *out)
{
	pthread_mutex_lock(&t->lock);
	struct job *j = job_of(t, name, key, key_len);
	if (j && j->state != JOB_DONE && !wait) {
		pthread_mutex_unlock(&t->lock);
		return PROGRAM_THREAD_BUSY;
	}
	while (j && j->state != JOB_DONE)
		pthread_cond_wait(&t->cv, &t->lock);
	if (j) {
		*out = j->b;
		job_clear(j);
	}
	pthread_mutex_unlock(&t->lock);
	return j ? PROGRAM_THREAD_TAKEN : PROGRAM_THREAD_NONE;
}

int program_thread_queue(struct program_thread *t, const char *name, const void *key,
                         size_t key_len, const char *defines,
                         void (*keep)(void *arg, const struct program_built *b), void *arg)
{
	if (key_len > PROGRAM_KEY_MAX || strlen(name) >= sizeof t->jobs[0].b.name)
		return -1;
	pthread_mutex_lock(&t->lock);
	struct job *j = NULL;
	for (int i = 0; i < PROGRAM_JOBS && !j; i++) {
		struct job *o = &t->jobs[i];
		if (o->state == JOB_DONE) { /* built and never asked for again */
			if (!o->b.rc)
				keep(arg, &o->b);
			job_clear(o);
		}
		if (o->state == JOB_FREE)
			j = o;
	}
	char *d = j ? strdup(defines ? defines : "") : NULL;
	if (d) {
		memset(j, 0, sizeof *j);
		snprintf(j->b.name, sizeof j->b.name, "%s", name);
		memcpy(j->b.key, key, key_len);
		j->b.key_len = key_len;
		j->defines = d;
		j->state = JOB_QUEUED;
		pthread_cond_broadcast(&t->cv);
	}
	pthread_mutex_unlock(&t->lock);
	return d ? 0 : -1;
}
