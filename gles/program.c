/* Program cache: compile once per (shader, parameter struct), keep for the context's life. */
#include "gles/program.h"

#include "gles/egl.h"

#include <GLES3/gl31.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <pthread.h>
#include <unistd.h>

#include "gles/shader_src.h"
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
#define PROGRAM_JOBS 4               /* compiles handed to the worker and not yet taken */

/* A compile handed to the worker (program_cache_worker): queued, building, then done with the
 * program (or the error) until program_get takes it. */
struct job {
	char name[64];
	unsigned char key[PROGRAM_KEY_MAX];
	size_t key_len;
	char *defines;
	int state; /* JOB_QUEUED, JOB_BUILDING, JOB_DONE */
	int rc, binary_hit;
	GLuint prog;
	double ms;
	char err[PROGRAM_ERR_LEN];
};
enum { JOB_FREE = 0, JOB_QUEUED, JOB_BUILDING, JOB_DONE };

struct program_cache;
static void worker_stop(struct program_cache *pc);

struct program_cache {
	char shader_dir[512];
	char binary_dir[512]; /* persisted program binaries, or "" */
	char driver[512];     /* renderer and version: binaries are only reused on the same driver */
	struct log_sink log;
	struct entry *e;
	size_t n, cap;
	size_t bytes;                  /* of all entries */
	unsigned long long tick;
	struct program_stats st;
	int budget;  /* builds program_get may still do; -1: any */
	int refused; /* a miss refused for the budget since program_cache_refused */
	/* the compile worker (program_cache_worker): jobs under lock, cv signalled both ways */
	struct egl_ctx *wctx;
	pthread_t worker;
	int has_worker, stop;
	int worker_up;      /* 1: its context current, -1: it could not make it so, 0: not yet */
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct job jobs[PROGRAM_JOBS];
	GLuint no_groups; /* the worker's indirect dispatch of no work groups (ready_program) */
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
	if (!pc)
		return PROGRAM_E_NOMEM;
	snprintf(pc->shader_dir, sizeof pc->shader_dir, "%s", shader_dir ? shader_dir : "");
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
	worker_stop(pc);
	for (size_t i = 0; i < pc->n; i++)
		glDeleteProgram(pc->e[i].prog);
	free(pc->e);
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
	snprintf(pc->binary_dir, sizeof pc->binary_dir, "%s", dir ? dir : "");
	if (pc->binary_dir[0] && mkdir(pc->binary_dir, 0755) && errno != EEXIST)
		log_sinkf(&pc->log, LOG_WARN, "program binary cache: cannot create %s",
		          pc->binary_dir);
	snprintf(pc->driver, sizeof pc->driver, "%s", driver ? driver : "");
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0xff) * 1099511628211ull;
}

/* The file of a program's binary: its name, then a digest of driver, defines and sources. */
static void binary_path(const struct program_cache *pc, const char *name, const char **parts,
                        int nparts, char *path, size_t len)
{
	uint64_t h = fnv(14695981039346656037ull, pc->driver);
	for (int i = 0; i < nparts; i++)
		h = fnv(h, parts[i]);
	char clean[64];
	snprintf(clean, sizeof clean, "%s", name);
	for (char *c = clean; *c; c++)
		if (*c == '+' || *c == '/')
			*c = '_';
	snprintf(path, len, "%s/%s-%016llx.bin", pc->binary_dir, clean, (unsigned long long)h);
}

/* Loads a persisted binary into a new program; 0 when it links, else -1 (compile instead). */
static int load_binary(const char *path, GLuint *prog)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	unsigned char *buf = NULL;
	long n = -1;
	int rc = -1;
	GLenum format;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > (long)sizeof format &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		memcpy(&format, buf, sizeof format);
		GLuint p = glCreateProgram();
		glProgramBinary(p, format, buf + sizeof format, (GLsizei)(n - (long)sizeof format));
		GLint ok = 0;
		glGetProgramiv(p, GL_LINK_STATUS, &ok);
		while (glGetError() != GL_NO_ERROR) {
		}
		if (ok) {
			*prog = p;
			rc = 0;
		} else {
			glDeleteProgram(p);
		}
	}
	free(buf);
	fclose(f);
	return rc;
}

/* Writes the program's binary (format first) to path, through a temporary file and rename. */
static void save_binary(const struct program_cache *pc, const char *path, GLuint prog)
{
	GLint len = 0;
	glGetProgramiv(prog, GL_PROGRAM_BINARY_LENGTH, &len);
	if (len <= 0)
		return;
	unsigned char *buf = malloc((size_t)len + sizeof(GLenum));
	if (!buf)
		return;
	GLenum format = 0;
	GLsizei got = 0;
	glGetProgramBinary(prog, len, &got, &format, buf + sizeof format);
	memcpy(buf, &format, sizeof format);
	/* unique per write: several GPU threads of one process may store the same program */
	static _Atomic unsigned seq;
	char tmp[1200];
	if (snprintf(tmp, sizeof tmp, "%.1100s.tmp%d.%u", path, (int)getpid(), seq++) >=
	    (int)sizeof tmp) {
		free(buf);
		return;
	}
	FILE *f = got > 0 ? fopen(tmp, "wb") : NULL;
	if (f) {
		int ok = fwrite(buf, 1, (size_t)got + sizeof format, f) == (size_t)got + sizeof format;
		ok &= fclose(f) == 0;
		if (!ok || rename(tmp, path))
			remove(tmp);
	} else if (got > 0) {
		log_sinkf(&pc->log, LOG_WARN, "program binary cache: cannot write %s", tmp);
	}
	while (glGetError() != GL_NO_ERROR) {
	}
	free(buf);
}

/* Compiles and links (or loads the persisted binary: *binary_hit); on failure fills err with the
 * name and the info log. Any thread with a context of the share group current: it reads only
 * what is set before program_cache_worker. */
static int build(const struct program_cache *pc, const char *name, const char *defines,
                 GLuint *prog, int *binary_hit, char err[PROGRAM_ERR_LEN])
{
	*binary_hit = 0;
	/* "a+b" names the concatenation of shaders a and b (shared building blocks first) */
	const char *parts[8];
	char *owned[8] = {0};
	int nparts = 0;
	parts[nparts++] = "#version 310 es\n";
	parts[nparts++] = defines ? defines : "";
	char part[64];
	for (const char *p = name; *p && nparts < 8;) {
		const char *e = strchr(p, '+');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		snprintf(part, sizeof part, "%.*s", (int)(l < sizeof part ? l : sizeof part - 1), p);
		const char *src = shader_src_get(part, pc->shader_dir, &owned[nparts]);
		if (!src) {
			snprintf(err, PROGRAM_ERR_LEN, "shader '%s': no such shader%s%s", part,
			         pc->shader_dir[0] ? " in " : "", pc->shader_dir);
			log_sinkf(&pc->log, LOG_ERROR, "%s", err);
			for (int i = 0; i < nparts; i++)
				free(owned[i]);
			return PROGRAM_E_NOSHADER;
		}
		parts[nparts++] = src;
		p = e ? e + 1 : p + l;
	}
	char bpath[1100] = "";
	if (pc->binary_dir[0]) {
		binary_path(pc, name, parts, nparts, bpath, sizeof bpath);
		if (load_binary(bpath, prog) == 0) {
			for (int i = 0; i < nparts; i++)
				free(owned[i]);
			*binary_hit = 1;
			return 0;
		}
	}
	GLuint sh = glCreateShader(GL_COMPUTE_SHADER);
	glShaderSource(sh, nparts, parts, NULL);
	glCompileShader(sh);
	for (int i = 0; i < nparts; i++)
		free(owned[i]);
	GLint ok = 0;
	glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
	if (!ok) {
		char logbuf[PROGRAM_ERR_LEN - 128];
		glGetShaderInfoLog(sh, sizeof logbuf, NULL, logbuf);
		snprintf(err, PROGRAM_ERR_LEN, "shader '%s' failed to compile:\n%s", name, logbuf);
		log_sinkf(&pc->log, LOG_ERROR, "%s\n-- defines --\n%s", err, defines ? defines : "");
		glDeleteShader(sh);
		return PROGRAM_E_COMPILE;
	}
	GLuint p = glCreateProgram();
	glAttachShader(p, sh);
	if (bpath[0])
		glProgramParameteri(p, GL_PROGRAM_BINARY_RETRIEVABLE_HINT, GL_TRUE);
	glLinkProgram(p);
	glDeleteShader(sh);
	glGetProgramiv(p, GL_LINK_STATUS, &ok);
	if (!ok) {
		char logbuf[PROGRAM_ERR_LEN - 128];
		glGetProgramInfoLog(p, sizeof logbuf, NULL, logbuf);
		snprintf(err, PROGRAM_ERR_LEN, "shader '%s' failed to link:\n%s", name, logbuf);
		log_sinkf(&pc->log, LOG_ERROR, "%s", err);
		glDeleteProgram(p);
		return PROGRAM_E_LINK;
	}
	if (bpath[0])
		save_binary(pc, bpath, p);
	*prog = p;
	return 0;
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

/* A program loaded from a binary is readied by the driver at its first dispatch (NVIDIA: 20-27
 * ms a program on average, about 1 ms for one compiled in this process), which the worker
 * takes on: it dispatches the program once with no work groups (indirect, so that the driver
 * cannot skip it), and the GPU thread's first dispatch is quick. */
static void ready_program(struct program_cache *pc, GLuint p)
{
	if (!pc->no_groups) {
		static const GLuint zero[3] = {0, 0, 0};
		glGenBuffers(1, &pc->no_groups);
		glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, pc->no_groups);
		glBufferData(GL_DISPATCH_INDIRECT_BUFFER, sizeof zero, zero, GL_STATIC_DRAW);
	}
	glUseProgram(p);
	glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, pc->no_groups);
	glDispatchComputeIndirect(0);
	glUseProgram(0);
	glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, 0);
	while (glGetError() != GL_NO_ERROR) {
	}
}

static void *worker_main(void *arg)
{
	struct program_cache *pc = arg;
	int current = !egl_ctx_make_current(pc->wctx);
	pthread_mutex_lock(&pc->lock);
	pc->worker_up = current ? 1 : -1;
	pthread_cond_broadcast(&pc->cv);
	for (;;) {
		struct job *j = NULL;
		for (int i = 0; i < PROGRAM_JOBS && !j; i++)
			if (pc->jobs[i].state == JOB_QUEUED)
				j = &pc->jobs[i];
		if (!j) {
			if (pc->stop)
				break;
			pthread_cond_wait(&pc->cv, &pc->lock);
			continue;
		}
		j->state = JOB_BUILDING;
		pthread_mutex_unlock(&pc->lock);
		double t0 = clock_ms();
		if (current) {
			j->rc = build(pc, j->name, j->defines, &j->prog, &j->binary_hit, j->err);
			if (!j->rc && j->binary_hit)
				ready_program(pc, j->prog);
			glFinish(); /* done before another context of the group uses it */
		} else {
			j->rc = PROGRAM_E_GL;
			snprintf(j->err, sizeof j->err, "shader '%s': the compile thread has no context",
			         j->name);
		}
		j->ms = clock_ms() - t0;
		pthread_mutex_lock(&pc->lock);
		j->state = JOB_DONE;
		pthread_cond_broadcast(&pc->cv);
	}
	pthread_mutex_unlock(&pc->lock);
	if (pc->no_groups)
		glDeleteBuffers(1, &pc->no_groups);
	pc->no_groups = 0;
	if (current)
		egl_ctx_release(pc->wctx);
	return NULL;
}

int program_cache_worker(struct program_cache *pc, struct egl_ctx *ctx)
{
	if (pc->has_worker)
		return 0;
	pthread_mutex_init(&pc->lock, NULL);
	pthread_cond_init(&pc->cv, NULL);
	pc->wctx = ctx;
	pc->stop = 0;
	pc->worker_up = 0;
	if (pthread_create(&pc->worker, NULL, worker_main, pc)) {
		pthread_cond_destroy(&pc->cv);
		pthread_mutex_destroy(&pc->lock);
		return PROGRAM_E_NOMEM;
	}
	pc->has_worker = 1;
	pthread_setname_np(pc->worker, "fb-compile");
	pthread_mutex_lock(&pc->lock);
	while (!pc->worker_up)
		pthread_cond_wait(&pc->cv, &pc->lock);
	int up = pc->worker_up > 0;
	pthread_mutex_unlock(&pc->lock);
	if (!up) { /* its context would not be current there: compiles stay on this thread */
		worker_stop(pc);
		return PROGRAM_E_GL;
	}
	return 0;
}

/* Stops the worker (after the compile it is on) and drops the jobs not taken. */
static void worker_stop(struct program_cache *pc)
{
	if (!pc->has_worker)
		return;
	pthread_mutex_lock(&pc->lock);
	pc->stop = 1;
	for (int i = 0; i < PROGRAM_JOBS; i++)
		if (pc->jobs[i].state == JOB_QUEUED)
			pc->jobs[i].state = JOB_FREE;
	pthread_cond_broadcast(&pc->cv);
	pthread_mutex_unlock(&pc->lock);
	pthread_join(pc->worker, NULL);
	for (int i = 0; i < PROGRAM_JOBS; i++) {
		struct job *j = &pc->jobs[i];
		if (j->state == JOB_DONE && !j->rc)
			glDeleteProgram(j->prog);
		free(j->defines);
		memset(j, 0, sizeof *j);
	}
	pthread_cond_destroy(&pc->cv);
	pthread_mutex_destroy(&pc->lock);
	pc->has_worker = 0;
}

int program_cache_compiling(struct program_cache *pc)
{
	if (!pc->has_worker)
		return 0;
	int n = 0;
	pthread_mutex_lock(&pc->lock);
	for (int i = 0; i < PROGRAM_JOBS; i++)
		n += pc->jobs[i].state == JOB_QUEUED || pc->jobs[i].state == JOB_BUILDING;
	pthread_mutex_unlock(&pc->lock);
	return n > 0;
}

/* The worker's job for (name, key), or NULL. Under pc->lock. */
static struct job *job_of(struct program_cache *pc, const char *name, const void *key,
                          size_t key_len)
{
	for (int i = 0; i < PROGRAM_JOBS; i++) {
		struct job *j = &pc->jobs[i];
		if (j->state != JOB_FREE && j->key_len == key_len && !strcmp(j->name, name) &&
		    !memcmp(j->key, key, key_len))
			return j;
	}
	return NULL;
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
	if (pc->has_worker) {
		pthread_mutex_lock(&pc->lock);
		struct job *j = job_of(pc, name, key, key_len);
		if (j && j->state != JOB_DONE && pc->budget >= 0) { /* idle work does not wait */
			pthread_mutex_unlock(&pc->lock);
			pc->refused = 1;
			snprintf(err, PROGRAM_ERR_LEN, "shader '%s': compiling", name);
			return PROGRAM_E_BUDGET;
		}
		while (j && j->state != JOB_DONE) /* a frame needs it: wait for the compile */
			pthread_cond_wait(&pc->cv, &pc->lock);
		if (j) {
			struct job t = *j;
			free(j->defines);
			memset(j, 0, sizeof *j);
			pthread_mutex_unlock(&pc->lock);
			if (t.rc) {
				snprintf(err, PROGRAM_ERR_LEN, "%s", t.err);
				return t.rc;
			}
			return take_built(pc, name, key, key_len, t.prog, t.binary_hit, t.ms,
			                  " on the compile thread", prog);
		}
		pthread_mutex_unlock(&pc->lock);
	}
	if (pc->budget == 0) {
		pc->refused = 1;
		snprintf(err, PROGRAM_ERR_LEN, "shader '%s': %s", name,
		         program_strerror(PROGRAM_E_BUDGET));
		return PROGRAM_E_BUDGET;
	}
	if (pc->budget > 0 && pc->has_worker) { /* idle work: the worker compiles it meanwhile */
		pthread_mutex_lock(&pc->lock);
		struct job *j = NULL;
		for (int i = 0; i < PROGRAM_JOBS && !j; i++) {
			struct job *o = &pc->jobs[i];
			if (o->state == JOB_DONE) { /* built and never asked for again: kept (a failure
			                               is met again by the next asker) */
				unsigned kept;
				if (!o->rc)
					take_built(pc, o->name, o->key, o->key_len, o->prog, o->binary_hit, o->ms,
					           " on the compile thread", &kept);
				free(o->defines);
				memset(o, 0, sizeof *o);
			}
			if (o->state == JOB_FREE)
				j = o;
		}
		char *d = j ? strdup(defines ? defines : "") : NULL;
		if (d) {
			memset(j, 0, sizeof *j);
			snprintf(j->name, sizeof j->name, "%s", name);
			memcpy(j->key, key, key_len);
			j->key_len = key_len;
			j->defines = d;
			j->state = JOB_QUEUED;
			pthread_cond_broadcast(&pc->cv);
		}
		pthread_mutex_unlock(&pc->lock);
		if (d) {
			pc->budget--;
			pc->st.misses++;
			pc->refused = 1;
			snprintf(err, PROGRAM_ERR_LEN, "shader '%s': compiling", name);
			return PROGRAM_E_BUDGET;
		}
	}
	if (pc->budget > 0)
		pc->budget--;
	pc->st.misses++;
	double t0 = clock_ms();
	GLuint p;
	int binary_hit;
	int rc = build(pc, name, defines, &p, &binary_hit, err);
	if (rc)
		return rc;
	return take_built(pc, name, key, key_len, p, binary_hit, clock_ms() - t0, "", prog);
}
