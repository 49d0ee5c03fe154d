/* The program cache: one program per (shader, parameter struct), least recently used ones
 * trimmed; builds go to the program store, early ones to the compile thread. See program.h. */
#include "gles/program.h"

#include <EGL/egl.h>
#include <GLES3/gl31.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/program_store.h"
#include "gles/program_thread.h"
#include "core/clock.h"

struct entry {
	char name[64];
	unsigned char key[PROGRAM_KEY_MAX];
	size_t key_len;
	GLuint prog;
	size_t bytes;                  /* its binary's length (an estimate where unknown) */
	unsigned refs;                 /* holders (program_hold) */
	unsigned long long last_use;   /* the cache's tick at its last program_get */
};

#define PROGRAM_BYTES_UNKNOWN 65536 /* what a program counts where the driver gives no length */
#define PROGRAM_PENDING 16 /* builds submitted on the cache's own context (parallel mode) */
#define PROGRAM_UNREADY 64 /* programs loaded from binaries in idle time, not yet dispatched */

/* A build submitted in parallel mode: in flight, or finished with a failure kept for its asker. */
struct pending {
	char name[64];
	unsigned char key[PROGRAM_KEY_MAX];
	size_t key_len;
	char *defines;
	struct program_pending pd;
	double t0;                  /* when it was submitted */
	double submit_ms, poll_ms;  /* the GPU thread's time in its submission, its longest status
	                               query (logged with the build: what a frame may wait for) */
	int rc;                     /* its failure once finished (the slot then waits for the asker) */
	char err[PROGRAM_ERR_LEN];
};

struct program_cache {
	struct program_store *store;   /* sources and persisted binaries */
	struct program_thread *thread; /* the compile thread (program_cache_worker), or NULL */
	struct log_sink log;
	struct entry *e;
	size_t n, cap;
	size_t bytes;                  /* of all entries */
	unsigned long long tick;
	struct program_stats st;
	int budget;  /* builds program_get may still do; -1: any */
	int refused; /* a miss refused for the budget since program_cache_refused */
	int parallel;                   /* idle work's builds submitted here, polled (GL_KHR_parallel_shader_compile) */
	struct pending pend[PROGRAM_PENDING];
	GLuint unready[PROGRAM_UNREADY]; /* loaded from binaries by idle work, to dispatch once */
	int nunready;
	GLuint no_groups;               /* an indirect dispatch of no work groups (program_cache_ready_step) */
};

const char *program_strerror(int code)
{
	switch (code) {
	case PROGRAM_OK: return "ok";
	case PROGRAM_E_NOSHADER: return "no such shader";
	case PROGRAM_E_COMPILE: return "shader compile failed";
	case PROGRAM_E_LINK: return "program link failed";
	case PROGRAM_E_NOMEM: return "out of memory";
	case PROGRAM_E_KEY: return "program key too large";
	case PROGRAM_E_GL: return "GL error";
	case PROGRAM_E_BUDGET: return "compile deferred (idle work's budget)";
	}
	return "unknown error";
}

int program_cache_create(const char *shader_dir, const struct log_sink *log,
                         struct program_cache **out)
{
	struct program_cache *pc = calloc(1, sizeof *pc);
	if (!pc || program_store_create(shader_dir, log, &pc->store)) {
		free(pc);
		return PROGRAM_E_NOMEM;
	}
	if (log)
		pc->log = *log;
	pc->budget = -1;
	*out = pc;
	return 0;
}

void program_cache_destroy(struct program_cache *pc)
{
	if (!pc)
		return;
	program_thread_destroy(pc->thread);
	for (int i = 0; i < PROGRAM_PENDING; i++)
		if (pc->pend[i].name[0]) {
			program_store_cancel(&pc->pend[i].pd);
			free(pc->pend[i].defines);
		}
	if (pc->no_groups)
		glDeleteBuffers(1, &pc->no_groups);
	for (size_t i = 0; i < pc->n; i++)
		glDeleteProgram(pc->e[i].prog);
	free(pc->e);
	program_store_destroy(pc->store);
	free(pc);
}

void program_cache_stats(const struct program_cache *pc, struct program_stats *st)
{
	*st = pc->st;
	st->count = (unsigned)pc->n;
	st->bytes = pc->bytes;
}

static struct entry *entry_of(struct program_cache *pc, unsigned prog)
{
	for (size_t i = 0; i < pc->n; i++)
		if (pc->e[i].prog == prog)
			return &pc->e[i];
	return NULL;
}

void program_hold(struct program_cache *pc, unsigned prog)
{
	struct entry *e = pc ? entry_of(pc, prog) : NULL;
	if (e)
		e->refs++;
}

void program_drop(struct program_cache *pc, unsigned prog)
{
	struct entry *e = pc ? entry_of(pc, prog) : NULL;
	if (e && e->refs)
		e->refs--;
}

int program_cache_trim(struct program_cache *pc, size_t max_count, size_t max_bytes)
{
	int evicted = 0;
	while (pc->n > max_count || pc->bytes > max_bytes) {
		struct entry *lru = NULL;
		for (size_t i = 0; i < pc->n; i++)
			if (!pc->e[i].refs && (!lru || pc->e[i].last_use < lru->last_use))
				lru = &pc->e[i];
		if (!lru)
			break; /* everything left is held */
		glDeleteProgram(lru->prog);
		pc->bytes -= lru->bytes;
		*lru = pc->e[--pc->n];
		pc->st.evictions++;
		evicted++;
	}
	return evicted;
}

void program_cache_set_binary_dir(struct program_cache *pc, const char *dir, const char *driver)
{
	program_store_set_dir(pc->store, dir, driver);
}

int program_cache_worker(struct program_cache *pc, struct egl_ctx *ctx)
{
	if (pc->thread)
		return 0;
	return program_thread_create(pc->store, ctx, &pc->thread);
}

int program_cache_compiling(struct program_cache *pc)
{
	if (pc->parallel)
		return program_cache_poll(pc);
	return pc->thread ? program_thread_busy(pc->thread) : 0;
}

void program_cache_budget(struct program_cache *pc, int n)
{
	pc->budget = n;
	pc->refused = 0;
}

int program_cache_refused(const struct program_cache *pc)
{
	return pc->refused;
}

void program_uniforms(unsigned prog, const char *const names[], int n, int loc[])
{
	for (int i = 0; i < n; i++)
		loc[i] = glGetUniformLocation(prog, names[i]);
}

/* A new entry for prog under (name, key); NULL when out of memory. */
static struct entry *add_entry(struct program_cache *pc, const char *name, const void *key,
                               size_t key_len, GLuint p)
{
	if (pc->n == pc->cap) {
		size_t cap = pc->cap ? pc->cap * 2 : 16;
		struct entry *ne = realloc(pc->e, cap * sizeof *ne);
		if (!ne)
			return NULL;
		pc->e = ne;
		pc->cap = cap;
	}
	struct entry *e = &pc->e[pc->n++];
	memset(e, 0, sizeof *e);
	snprintf(e->name, sizeof e->name, "%s", name);
	memcpy(e->key, key, key_len);
	e->key_len = key_len;
	e->prog = p;
	GLint len = 0;
	glGetProgramiv(p, GL_PROGRAM_BINARY_LENGTH, &len);
	while (glGetError() != GL_NO_ERROR) {
	}
	e->bytes = len > 0 ? (size_t)len : PROGRAM_BYTES_UNKNOWN;
	e->last_use = ++pc->tick;
	pc->bytes += e->bytes;
	return e;
}

/* A finished build into the cache: its counts, its entry. */
static int take_built(struct program_cache *pc, const char *name, const void *key,
                      size_t key_len, GLuint p, int binary_hit, double ms, const char *how,
                      unsigned *prog)
{
	pc->st.compile_ms += ms;
	pc->st.binary_hits += binary_hit ? 1 : 0;
	log_sinkf(&pc->log, LOG_DEBUG, "program %s: %s in %.1f ms%s", name,
	          binary_hit ? "loaded from its binary" : "built", ms, how);
	if (!add_entry(pc, name, key, key_len, p)) {
		glDeleteProgram(p);
		return PROGRAM_E_NOMEM;
	}
	*prog = p;
	return 0;
}

/* A build the thread finished and nobody asked for again: kept in the cache. */
static void keep_built(void *arg, const struct program_built *b)
{
	unsigned kept;
	take_built(arg, b->name, b->key, b->key_len, b->prog, b->binary_hit, b->ms,
	           " on the compile thread", &kept);
}

static void pending_clear(struct pending *q)
{
	free(q->defines);
	memset(q, 0, sizeof *q);
}

/* Whether q's build is complete (the driver's status query, timed). */
static int pending_ready(struct pending *q)
{
	double t0 = clock_ms();
	int done = program_store_ready(&q->pd);
	double ms = clock_ms() - t0;
	if (ms > q->poll_ms)
		q->poll_ms = ms;
	return done;
}

/* A finished build into the cache (or its failure kept in the slot for its asker). */
static void pending_finish(struct program_cache *pc, struct pending *q)
{
	GLuint p = 0;
	double t0 = clock_ms();
	q->rc = program_store_finish(pc->store, q->name, q->defines, &q->pd, &p, q->err);
	if (q->rc)
		return;
	char how[192];
	snprintf(how, sizeof how, " (submitted in parallel; the GPU thread's part: submit %.1f ms, "
	         "status query %.1f ms at most, taken in %.1f ms)", q->submit_ms, q->poll_ms,
	         clock_ms() - t0);
	unsigned kept;
	take_built(pc, q->name, q->key, q->key_len, p, 0, clock_ms() - q->t0, how, &kept);
	pending_clear(q);
}

int program_cache_poll(struct program_cache *pc)
{
	int busy = 0;
	for (int i = 0; i < PROGRAM_PENDING; i++) {
		struct pending *q = &pc->pend[i];
		if (!q->name[0] || q->rc)
			continue;
		if (pending_ready(q))
			pending_finish(pc, q);
		else
			busy++;
	}
	return busy > 0;
}

int program_cache_parallel(struct program_cache *pc, int on)
{
	if (on <= 0) {
		if (!on)
			pc->parallel = 0;
		return pc->parallel;
	}
	GLint n = 0;
	glGetIntegerv(GL_NUM_EXTENSIONS, &n);
	int has = 0;
	for (GLint k = 0; k < n && !has; k++) {
		const char *x = (const char *)glGetStringi(GL_EXTENSIONS, (GLuint)k);
		has = x && !strcmp(x, "GL_KHR_parallel_shader_compile");
	}
	void (*max_threads)(GLuint) =
		has ? (void (*)(GLuint))eglGetProcAddress("glMaxShaderCompilerThreadsKHR") : NULL;
	if (max_threads) {
		max_threads(0xFFFFFFFFu); /* as many compiler threads as the driver will */
		while (glGetError() != GL_NO_ERROR) {
		}
	}
	pc->parallel = max_threads != NULL;
	return pc->parallel;
}

int program_cache_ready_step(struct program_cache *pc)
{
	while (pc->nunready) {
		GLuint p = pc->unready[--pc->nunready];
		if (!entry_of(pc, p))
			continue; /* trimmed meanwhile */
		if (!pc->no_groups) {
			static const GLuint zero[3] = {0, 0, 0};
			glGenBuffers(1, &pc->no_groups);
			glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, pc->no_groups);
			glBufferData(GL_DISPATCH_INDIRECT_BUFFER, sizeof zero, zero, GL_STATIC_DRAW);
		}
		/* indirect, so that the driver cannot skip a dispatch of no work groups */
		GLint was_prog = 0, was_ind = 0;
		glGetIntegerv(GL_CURRENT_PROGRAM, &was_prog);
		glGetIntegerv(GL_DISPATCH_INDIRECT_BUFFER_BINDING, &was_ind);
		glUseProgram(p);
		glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, pc->no_groups);
		glDispatchComputeIndirect(0);
		glUseProgram((GLuint)was_prog);
		glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, (GLuint)was_ind);
		glFlush();
		while (glGetError() != GL_NO_ERROR) {
		}
		return 1;
	}
	return 0;
}

#define PARALLEL_MISS 1 /* parallel_get: not its case, program_get goes on */

/* program_get's parallel mode: a build submitted earlier is taken once complete (a frame waits
 * for it, idle work is refused until then); idle work's miss is submitted and refused. */
static int parallel_get(struct program_cache *pc, const char *name, const void *key,
                        size_t key_len, const char *defines, unsigned *prog,
                        char err[PROGRAM_ERR_LEN])
{
	struct pending *q = NULL, *free_slot = NULL;
	for (int i = 0; i < PROGRAM_PENDING && !q; i++) {
		struct pending *o = &pc->pend[i];
		if (o->name[0] && o->key_len == key_len && !strcmp(o->name, name) &&
		    !memcmp(o->key, key, key_len))
			q = o;
		else if (!o->name[0] && !free_slot)
			free_slot = o;
	}
	if (q) {
		if (!q->rc && pc->budget >= 0 && !pending_ready(q)) {
			pc->refused = 1;
			snprintf(err, PROGRAM_ERR_LEN, "shader '%s': compiling", name);
			return PROGRAM_E_BUDGET;
		}
		if (!q->rc)
			pending_finish(pc, q);
		int rc = q->rc;
		if (rc) { /* reported once to its asker, then the slot is free */
			snprintf(err, PROGRAM_ERR_LEN, "%s", q->err);
			pending_clear(q);
			return rc;
		}
		return program_get(pc, name, key, key_len, defines, prog, err); /* now a hit */
	}
	if (pc->budget < 0)
		return PARALLEL_MISS; /* a frame builds what it needs at once */
	if (pc->budget == 0 || !free_slot) {
		pc->refused = 1;
		snprintf(err, PROGRAM_ERR_LEN, "shader '%s': %s", name,
		         program_strerror(PROGRAM_E_BUDGET));
		return PROGRAM_E_BUDGET;
	}
	q = free_slot;
	q->defines = strdup(defines ? defines : "");
	if (!q->defines)
		return PROGRAM_E_NOMEM;
	double t0 = clock_ms();
	int rc = program_store_submit(pc->store, name, defines, &q->pd, err);
	if (rc) {
		pending_clear(q);
		return rc;
	}
	q->submit_ms = clock_ms() - t0;
	pc->st.misses++;
	pc->budget--;
	if (q->pd.binary_hit) { /* loaded: readied by a dispatch in a later idle step */
		GLuint p = q->pd.prog;
		pending_clear(q);
		rc = take_built(pc, name, key, key_len, p, 1, 0, "", prog);
		if (!rc && pc->nunready < PROGRAM_UNREADY)
			pc->unready[pc->nunready++] = p;
		return rc;
	}
	snprintf(q->name, sizeof q->name, "%s", name);
	memcpy(q->key, key, key_len);
	q->key_len = key_len;
	q->t0 = t0;
	pc->refused = 1;
	snprintf(err, PROGRAM_ERR_LEN, "shader '%s': compiling", name);
	return PROGRAM_E_BUDGET;
}

int program_get(struct program_cache *pc, const char *name, const void *key, size_t key_len,
                const char *defines, unsigned *prog, char err[PROGRAM_ERR_LEN])
{
	if (key_len > PROGRAM_KEY_MAX || strlen(name) >= sizeof pc->e[0].name) {
		snprintf(err, PROGRAM_ERR_LEN, "shader '%s': key of %zu bytes too large", name, key_len);
		return PROGRAM_E_KEY;
	}
	for (size_t i = 0; i < pc->n; i++) {
		struct entry *e = &pc->e[i];
		if (e->key_len == key_len && !strcmp(e->name, name) && !memcmp(e->key, key, key_len)) {
			pc->st.hits++;
			e->last_use = ++pc->tick;
			*prog = e->prog;
			return 0;
		}
	}
	if (pc->thread) {
		/* idle work (under a budget) does not wait for a compile; a frame does */
		struct program_built t;
		int took = program_thread_take(pc->thread, name, key, key_len, pc->budget < 0, &t);
		if (took == PROGRAM_THREAD_BUSY) {
			pc->refused = 1;
			snprintf(err, PROGRAM_ERR_LEN, "shader '%s': compiling", name);
			return PROGRAM_E_BUDGET;
		}
		if (took == PROGRAM_THREAD_TAKEN) {
			if (t.rc) {
				snprintf(err, PROGRAM_ERR_LEN, "%s", t.err);
				return t.rc;
			}
			return take_built(pc, name, key, key_len, t.prog, t.binary_hit, t.ms,
			                  " on the compile thread", prog);
		}
	}
	if (pc->parallel) {
		int rc = parallel_get(pc, name, key, key_len, defines, prog, err);
		if (rc != PARALLEL_MISS)
			return rc;
	}
	if (pc->budget == 0) {
		pc->refused = 1;
		snprintf(err, PROGRAM_ERR_LEN, "shader '%s': %s", name,
		         program_strerror(PROGRAM_E_BUDGET));
		return PROGRAM_E_BUDGET;
	}
	if (pc->budget > 0 && pc->thread && /* idle work: the thread compiles it meanwhile */
	    !program_thread_queue(pc->thread, name, key, key_len, defines, keep_built, pc)) {
		pc->budget--;
		pc->st.misses++;
		pc->refused = 1;
		snprintf(err, PROGRAM_ERR_LEN, "shader '%s': compiling", name);
		return PROGRAM_E_BUDGET;
	}
	if (pc->budget > 0)
		pc->budget--;
	pc->st.misses++;
	double t0 = clock_ms();
	GLuint p;
	int binary_hit;
	int rc = program_store_build(pc->store, name, defines, &p, &binary_hit, err);
	if (rc)
		return rc;
	return take_built(pc, name, key, key_len, p, binary_hit, clock_ms() - t0, "", prog);
}
