/* compile_probe: what a GL compile costs the thread that serves requests (issue 40, item 4).
 * A "GPU thread" runs a loop of tiny dispatches (one work group, glFinish each) while programs
 * compile in one of several ways; each scenario prints one result line with the loop's
 * iteration times (median, p99, max, the time lost past 2 ms) and the compiles' own times.
 * Scenarios (--scenario, comma-separated; all by default):
 *   baseline          the loop alone
 *   serial-same       blocking compiles on the GPU thread itself (what a request waits for)
 *   par-same-link     GL_KHR_parallel_shader_compile on the GPU thread's context: compile and
 *                     link submitted at once, COMPLETION_STATUS polled between loop iterations
 *   par-same-later    the same, the link submitted once the shader's compile is complete
 *   thread-shared     a compile thread on a context of the share group, blocking compiles
 *   thread-shared-par the same thread with the extension (submit all, poll each 1 ms)
 *   thread-other      a compile thread on a context of its own (not shared), blocking
 *   thread-other-par  the same with the extension
 * Binaries (question c): --save DIR compiles the programs and writes their binaries; --load DIR,
 * in a later process, loads them and times each program's first dispatches: cold, after a
 * warm-up dispatch of no work groups (direct, indirect) or of an empty range (one group whose
 * invocations all return), and with the warm-up on a compile thread while the loop runs.
 * A compile process (--child DIR): a child (this program, --save DIR, with --ready a real dispatch
 * of each program first) compiles while this process's loop runs; then this process loads each
 * binary and times its first dispatch, no warm-up; --child-batches K children one after another,
 * --child-wait MS before the loads, --child-primers N tiny programs compiled first,
 * --child-reverse the last binary first. Run with the driver's disk cache shared to ask whether
 * the child's machine code spares this process the readying.
 * Programs are synthetic compute shaders (radix-8 butterflies through shared memory, --size
 * rounds) carrying a per-run seed, so that no cache serves them; run with the driver's disk
 * cache off (__GL_SHADER_DISK_CACHE=0, MESA_SHADER_CACHE_DISABLE=true). */
#include <EGL/egl.h>
#include <GLES3/gl31.h>
#include <GLES2/gl2ext.h>
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_json.h"
#include "core/clock.h"
#include "gles/egl.h"

#ifndef GL_COMPLETION_STATUS_KHR
#define GL_COMPLETION_STATUS_KHR 0x91B1
#endif
typedef void (*max_threads_fn)(GLuint);

#define MAX_PROGS 64
#define MAX_ITERS 200000

static max_threads_fn max_threads;          /* glMaxShaderCompilerThreadsKHR or NULL */
static int n_progs = 8, size_rounds = 24;    /* programs a scenario compiles; their size */
static unsigned seed;                        /* this run's, in every source */
static int seq;                              /* programs made so far (each source unique) */
static struct bench_meta meta;

/* ---- the programs ---- */

static char *heavy_source(void)
{
	size_t cap = 4096 + (size_t)size_rounds * 2048;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	int len = snprintf(s, cap,
	        "#version 310 es\nlayout(local_size_x = 64) in;\n"
	        "layout(std430, binding = 0) buffer B { vec2 v[]; };\n"
	        "shared vec2 sh[512];\nuniform uint u_n;\n"
	        "const float SEED = %u.0 + %d.0 / 1024.0;\n"
	        "vec2 cm(vec2 a, vec2 b) { return vec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }\n"
	        "void main() {\n uint i = gl_LocalInvocationID.x;\n"
	        " if (gl_GlobalInvocationID.x >= u_n) return;\n vec2 x[8];\n"
	        " for (int r = 0; r < 8; r++) x[r] = v[i * 8u + uint(r)] + vec2(SEED, 0.0);\n",
	        seed % 100000u, seq++);
	for (int r = 0; r < size_rounds && len > 0 && (size_t)len < cap - 2048; r++) {
		double a = 0.1 + 0.37 * r;
		len += snprintf(s + len, cap - (size_t)len,
		        " { vec2 t0 = x[0] + x[4], t1 = x[0] - x[4], t2 = x[2] + x[6], t3 = cm(x[2] - x[6], vec2(0.0, -1.0));\n"
		        "   vec2 t4 = x[1] + x[5], t5 = cm(x[1] - x[5], vec2(%.6f, %.6f)), t6 = x[3] + x[7], t7 = cm(x[3] - x[7], vec2(%.6f, %.6f));\n"
		        "   x[0] = t0 + t2 + t4 + t6; x[1] = t1 + t3 + t5 + t7; x[2] = cm(t0 - t2, vec2(%.6f, 0.5)) + t4 - t6;\n"
		        "   x[3] = t1 - t3 + cm(t5 - t7, vec2(0.0, 1.0)); x[4] = t0 + t2 - t4 - t6; x[5] = t1 + t3 - t5 - t7;\n"
		        "   x[6] = t0 - t2 - cm(t4 - t6, vec2(0.0, 1.0)); x[7] = t1 - t3 - t5 + t7;\n"
		        "   for (int r = 0; r < 8; r++) sh[(i * 8u + uint(r) * %du) & 511u] = x[r];\n"
		        "   barrier();\n"
		        "   for (int r = 0; r < 8; r++) x[r] = cm(sh[(i + uint(r) * 64u + %du) & 511u], vec2(cos(%.6f * float(r)), sin(%.6f * float(r))));\n"
		        "   barrier(); }\n",
		        0.7071 + r * 1e-4, -0.7071, -0.7071, -0.7071 + r * 1e-4, 0.5 + r * 1e-3,
		        1 + 2 * (r % 5), 7 * r, a, a);
	}
	snprintf(s + len, cap - (size_t)len,
	         " for (int r = 0; r < 8; r++) v[i * 8u + uint(r)] = x[r];\n}\n");
	return s;
}

static const char tiny_source[] =
	"#version 310 es\nlayout(local_size_x = 1) in;\n"
	"layout(std430, binding = 0) buffer B { vec2 v[]; };\n"
	"void main() { v[0] += vec2(1.0); }\n";

/* A program from src, compile and link submitted; link_now 0 leaves the link for later
 * (*shader_out keeps the shader). No wait: the caller asks for the status. */
static GLuint submit(const char *src, int link_now, GLuint *shader_out)
{
	GLuint sh = glCreateShader(GL_COMPUTE_SHADER), p = glCreateProgram();
	glShaderSource(sh, 1, &src, NULL);
	glCompileShader(sh);
	glAttachShader(p, sh);
	if (link_now)
		glLinkProgram(p);
	*shader_out = sh;
	return p;
}

/* Blocks until p is linked; 0 or -1 (logged). */
static int finish_link(GLuint p, GLuint sh)
{
	GLint ok = 0;
	glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
	if (!ok) {
		char log[2048];
		glGetShaderInfoLog(sh, sizeof log, NULL, log);
		fprintf(stderr, "compile_probe: compile failed: %s\n", log);
		return -1;
	}
	glGetProgramiv(p, GL_LINK_STATUS, &ok);
	if (!ok) {
		char log[2048];
		glGetProgramInfoLog(p, sizeof log, NULL, log);
		fprintf(stderr, "compile_probe: link failed: %s\n", log);
		return -1;
	}
	return 0;
}

static GLuint build_blocking(const char *src)
{
	GLuint sh, p = submit(src, 1, &sh);
	int rc = finish_link(p, sh);
	glDeleteShader(sh);
	if (rc) {
		glDeleteProgram(p);
		return 0;
	}
	return p;
}

/* ---- the GPU thread's loop ---- */

struct loop {
	GLuint tiny, buf, zero_groups;
	double *it;    /* iteration times, ms */
	int n;
};

static void loop_init(struct loop *L)
{
	memset(L, 0, sizeof *L);
	L->it = malloc(MAX_ITERS * sizeof *L->it);
	L->tiny = build_blocking(tiny_source);
	glGenBuffers(1, &L->buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, L->buf);
	glBufferData(GL_SHADER_STORAGE_BUFFER, 64 * 8 * 8 * 8, NULL, GL_DYNAMIC_DRAW);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, L->buf);
	static const GLuint zero[3] = {0, 0, 0};
	glGenBuffers(1, &L->zero_groups);
	glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, L->zero_groups);
	glBufferData(GL_DISPATCH_INDIRECT_BUFFER, sizeof zero, zero, GL_STATIC_DRAW);
	glFinish();
}

/* One iteration: a tiny dispatch and glFinish; its time recorded. */
static double loop_step(struct loop *L)
{
	double t0 = clock_ms();
	glUseProgram(L->tiny);
	glDispatchCompute(1, 1, 1);
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
	glFinish();
	double dt = clock_ms() - t0;
	if (L->n < MAX_ITERS)
		L->it[L->n++] = dt;
	return dt;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Adds the loop's statistics to line l and empties it. */
static void loop_report(struct loop *L, struct bench_line *l, int metrics)
{
	double lost = 0, sum = 0;
	int slow = 0;
	for (int i = 0; i < L->n; i++) {
		sum += L->it[i];
		if (L->it[i] > 2.0)
			lost += L->it[i] - 2.0, slow++;
	}
	qsort(L->it, (size_t)L->n, sizeof *L->it, cmp_d);
	double med = L->n ? L->it[L->n / 2] : 0, p99 = L->n ? L->it[(L->n * 99) / 100] : 0;
	double mx = L->n ? L->it[L->n - 1] : 0;
	if (metrics) {
		bench_metric(l, "loop_median_ms", med);
		bench_metric(l, "loop_p99_ms", p99);
		bench_metric(l, "loop_max_ms", mx);
	} else {
		bench_detail_num(l, "loop_median_ms", med);
		bench_detail_num(l, "loop_p99_ms", p99);
		bench_detail_num(l, "loop_max_ms", mx);
	}
	bench_detail_num(l, "loop_iterations", L->n);
	bench_detail_num(l, "loop_over_2ms", slow);
	bench_detail_num(l, "loop_lost_ms", lost);
	bench_detail_num(l, "loop_total_ms", sum);
	L->n = 0;
}

/* ---- compile threads ---- */

struct cthread {
	struct egl_ctx *main, *ctx; /* ctx: shared with main, or (own) made by the thread */
	int own, parallel;
	char *src[MAX_PROGS];
	double ms[MAX_PROGS];       /* each program's build, on the thread */
	double total_ms;
	GLuint prog[MAX_PROGS];
	atomic_int state;           /* 0 starting, 1 up, 2 done, -1 failed */
	char err[EGL_ERR_LEN];
};

static void *cthread_main(void *arg)
{
	struct cthread *t = arg;
	if (t->own) {
		struct egl_opts o;
		memset(&o, 0, sizeof o);
		o.keep_display = 1;
		if (egl_ctx_create(&o, NULL, &t->ctx, t->err)) {
			atomic_store(&t->state, -1);
			return NULL;
		}
	} else if (egl_ctx_make_current(t->ctx)) {
		snprintf(t->err, sizeof t->err, "eglMakeCurrent failed on the compile thread");
		atomic_store(&t->state, -1);
		return NULL;
	}
	if (max_threads)
		max_threads(t->parallel ? 0xFFFFFFFFu : 0u);
	atomic_store(&t->state, 1);
	double t0 = clock_ms();
	if (t->parallel) {
		GLuint sh[MAX_PROGS];
		double sub[MAX_PROGS];
		for (int i = 0; i < n_progs; i++) {
			sub[i] = clock_ms();
			t->prog[i] = submit(t->src[i], 1, &sh[i]);
		}
		int left = n_progs;
		while (left) {
			for (int i = 0; i < n_progs; i++) {
				if (!sh[i])
					continue;
				GLint done = 0;
				glGetProgramiv(t->prog[i], GL_COMPLETION_STATUS_KHR, &done);
				if (done) {
					finish_link(t->prog[i], sh[i]);
					glDeleteShader(sh[i]);
					sh[i] = 0;
					t->ms[i] = clock_ms() - sub[i];
					left--;
				}
			}
			if (left)
				usleep(1000);
		}
	} else {
		for (int i = 0; i < n_progs; i++) {
			double a = clock_ms();
			t->prog[i] = build_blocking(t->src[i]);
			t->ms[i] = clock_ms() - a;
		}
	}
	glFinish();
	t->total_ms = clock_ms() - t0;
	for (int i = 0; i < n_progs; i++)
		glDeleteProgram(t->prog[i]);
	glFinish();
	if (t->own)
		egl_ctx_destroy(t->ctx);
	else
		egl_ctx_release(t->ctx);
	atomic_store(&t->state, 2);
	return NULL;
}

static void report_ms(struct bench_line *l, const char *name, const double *ms, int n)
{
	double s[MAX_PROGS], sum = 0;
	for (int i = 0; i < n; i++)
		s[i] = ms[i], sum += ms[i];
	qsort(s, (size_t)n, sizeof *s, cmp_d);
	char key[64];
	snprintf(key, sizeof key, "%s_median_ms", name);
	bench_detail_num(l, key, n ? s[n / 2] : 0);
	snprintf(key, sizeof key, "%s_max_ms", name);
	bench_detail_num(l, key, n ? s[n - 1] : 0);
	snprintf(key, sizeof key, "%s_sum_ms", name);
	bench_detail_num(l, key, sum);
}

static void line_begin(struct bench_line *l, const char *scenario)
{
	char id[96];
	snprintf(id, sizeof id, "compile.%s.n%d.r%d", scenario, n_progs, size_rounds);
	bench_line_begin(l, stdout, &meta, id, "gl", scenario);
}

static void line_end(struct bench_line *l)
{
	bench_detail_num(l, "programs", n_progs);
	bench_detail_num(l, "rounds", size_rounds);
	bench_detail_num(l, "khr_parallel", max_threads != NULL);
	bench_line_end(l, &meta);
	fflush(stdout);
}

/* A compile thread's scenario: the loop runs until the thread is done (and 100 ms after). */
static int run_thread(struct egl_ctx *main, struct loop *L, const char *scenario, int own,
                      int parallel)
{
	struct cthread t;
	memset(&t, 0, sizeof t);
	t.main = main, t.own = own, t.parallel = parallel;
	for (int i = 0; i < n_progs; i++)
		t.src[i] = heavy_source();
	if (!own && egl_ctx_create_shared(main, &t.ctx, t.err)) {
		fprintf(stderr, "compile_probe: %s: %s\n", scenario, t.err);
		return -1;
	}
	pthread_t th;
	pthread_create(&th, NULL, cthread_main, &t);
	while (!atomic_load(&t.state))
		usleep(100);
	double t0 = clock_ms();
	while (atomic_load(&t.state) == 1)
		loop_step(L);
	double busy = clock_ms() - t0;
	pthread_join(th, NULL);
	if (!own)
		egl_ctx_destroy(t.ctx);
	if (t.state < 0) {
		fprintf(stderr, "compile_probe: %s: %s\n", scenario, t.err);
		return -1;
	}
	struct bench_line l;
	line_begin(&l, scenario);
	loop_report(L, &l, 1);
	bench_detail_num(&l, "compile_window_ms", busy);
	bench_detail_num(&l, "thread_total_ms", t.total_ms);
	report_ms(&l, parallel ? "ready_after" : "build", t.ms, n_progs);
	line_end(&l);
	for (int i = 0; i < n_progs; i++)
		free(t.src[i]);
	return 0;
}

/* The extension on the GPU thread's own context: submit all, poll between loop iterations. */
static int run_par_same(struct loop *L, const char *scenario, int link_now)
{
	if (!max_threads) {
		fprintf(stderr, "compile_probe: %s: no GL_KHR_parallel_shader_compile\n", scenario);
		return -1;
	}
	max_threads(0xFFFFFFFFu);
	GLuint prog[MAX_PROGS], sh[MAX_PROGS];
	double submit_ms[MAX_PROGS], ready_ms[MAX_PROGS], first_ms[MAX_PROGS], poll_max = 0;
	int linked[MAX_PROGS], done[MAX_PROGS];
	double t0 = clock_ms();
	for (int i = 0; i < n_progs; i++) {
		char *src = heavy_source();
		double a = clock_ms();
		prog[i] = submit(src, link_now, &sh[i]);
		submit_ms[i] = clock_ms() - a;
		linked[i] = link_now, done[i] = 0;
		free(src);
	}
	int left = n_progs;
	while (left) {
		loop_step(L);
		for (int i = 0; i < n_progs; i++) {
			if (done[i])
				continue;
			GLint c = 0;
			double a = clock_ms();
			if (!linked[i]) {
				glGetShaderiv(sh[i], GL_COMPLETION_STATUS_KHR, &c);
				if (c) {
					glLinkProgram(prog[i]);
					linked[i] = 1;
					c = 0;
				}
			} else {
				glGetProgramiv(prog[i], GL_COMPLETION_STATUS_KHR, &c);
			}
			double q = clock_ms() - a;
			poll_max = q > poll_max ? q : poll_max;
			if (c) {
				ready_ms[i] = clock_ms() - t0;
				finish_link(prog[i], sh[i]);
				glDeleteShader(sh[i]);
				/* its first dispatch on an empty range: does the driver still finish it? */
				double b = clock_ms();
				glUseProgram(prog[i]);
				glUniform1ui(glGetUniformLocation(prog[i], "u_n"), 0);
				glDispatchCompute(1, 1, 1);
				glFinish();
				first_ms[i] = clock_ms() - b;
				done[i] = 1;
				left--;
			}
		}
	}
	double window = clock_ms() - t0;
	struct bench_line l;
	line_begin(&l, scenario);
	loop_report(L, &l, 1);
	bench_detail_num(&l, "compile_window_ms", window);
	bench_detail_num(&l, "poll_max_ms", poll_max);
	report_ms(&l, "submit", submit_ms, n_progs);
	report_ms(&l, "ready_after", ready_ms, n_progs);
	report_ms(&l, "first_dispatch", first_ms, n_progs);
	line_end(&l);
	for (int i = 0; i < n_progs; i++)
		glDeleteProgram(prog[i]);
	max_threads(0);
	return 0;
}

static int run_serial_same(struct loop *L)
{
	double ms[MAX_PROGS];
	if (max_threads)
		max_threads(0);
	for (int i = 0; i < n_progs; i++) {
		char *src = heavy_source();
		double a = clock_ms();
		GLuint p = build_blocking(src);
		ms[i] = clock_ms() - a;
		free(src);
		glDeleteProgram(p);
		loop_step(L); /* what a request arriving during the compile would see: the compile */
	}
	struct bench_line l;
	line_begin(&l, "serial-same");
	report_ms(&l, "build", ms, n_progs);
	double s[MAX_PROGS];
	memcpy(s, ms, sizeof s);
	qsort(s, (size_t)n_progs, sizeof *s, cmp_d);
	bench_metric(&l, "build_median_ms", s[n_progs / 2]);
	loop_report(L, &l, 0);
	line_end(&l);
	return 0;
}

/* ---- binaries (question c) ---- */

static int ready_saved;   /* --ready: each saved program runs one real dispatch first */
static int child_wait_ms; /* --child-wait: a pause between the child's exit and the loads */
static int child_batches = 1; /* --child-batches: children one after another, each then loaded */
static int child_primers;     /* --child-primers: tiny programs compiled before the loads */
static int child_reverse;     /* --child-reverse: the binaries loaded last first */

static void dispatch_real(GLuint p, GLuint n);

static int save_binaries(const char *dir)
{
	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "compile_probe: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n_progs; i++) {
		char *src = heavy_source();
		GLuint p = build_blocking(src);
		free(src);
		if (!p)
			return -1;
		if (ready_saved)
			dispatch_real(p, 64);
		GLint len = 0;
		glGetProgramiv(p, GL_PROGRAM_BINARY_LENGTH, &len);
		void *bin = len > 0 ? malloc((size_t)len) : NULL;
		GLenum fmt = 0;
		if (!bin) {
			fprintf(stderr, "compile_probe: no program binary\n");
			return -1;
		}
		glGetProgramBinary(p, len, NULL, &fmt, bin);
		char path[4096];
		snprintf(path, sizeof path, "%s/p%02d.bin", dir, i);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(&fmt, sizeof fmt, 1, f) != 1 || fwrite(bin, (size_t)len, 1, f) != 1) {
			fprintf(stderr, "compile_probe: writing %s failed\n", path);
			return -1;
		}
		fclose(f);
		free(bin);
		glDeleteProgram(p);
	}
	return 0;
}

static GLuint load_binary(const char *dir, int i)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/p%02d.bin", dir, i);
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	fseek(f, 0, SEEK_END);
	long len = ftell(f) - (long)sizeof(GLenum);
	fseek(f, 0, SEEK_SET);
	GLenum fmt;
	void *bin = len > 0 ? malloc((size_t)len) : NULL;
	int ok = bin && fread(&fmt, sizeof fmt, 1, f) == 1 && fread(bin, (size_t)len, 1, f) == 1;
	fclose(f);
	GLuint p = 0;
	if (ok) {
		p = glCreateProgram();
		glProgramBinary(p, fmt, bin, (GLsizei)len);
		GLint linked = 0;
		glGetProgramiv(p, GL_LINK_STATUS, &linked);
		if (!linked) {
			glDeleteProgram(p);
			p = 0;
		}
	}
	free(bin);
	return p;
}

/* How a loaded program is readied before its first real dispatch. */
enum { WARM_NONE, WARM_DIRECT0, WARM_INDIRECT0, WARM_EMPTY, WARM_THREAD, WARM_KINDS };
static const char *const warm_names[WARM_KINDS] = {
	"cold", "direct-0-groups", "indirect-0-groups", "empty-range", "empty-range-on-thread"};

static void dispatch_real(GLuint p, GLuint n)
{
	glUseProgram(p);
	glUniform1ui(glGetUniformLocation(p, "u_n"), n);
	glDispatchCompute(1, 1, 1);
	glFinish();
}

static void warm(struct loop *L, GLuint p, int how)
{
	glUseProgram(p);
	glUniform1ui(glGetUniformLocation(p, "u_n"), 0);
	if (how == WARM_DIRECT0)
		glDispatchCompute(0, 0, 0);
	else if (how == WARM_INDIRECT0) {
		glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, L->zero_groups);
		glDispatchComputeIndirect(0);
	} else
		glDispatchCompute(1, 1, 1);
	glFinish();
}

struct warm_thread {
	struct egl_ctx *ctx;
	GLuint *prog;
	int n;
	double ms;
	atomic_int state;
};

static void *warm_thread_main(void *arg)
{
	struct warm_thread *w = arg;
	egl_ctx_make_current(w->ctx);
	atomic_store(&w->state, 1);
	double t0 = clock_ms();
	for (int i = 0; i < w->n; i++) {
		glUseProgram(w->prog[i]);
		glUniform1ui(glGetUniformLocation(w->prog[i], "u_n"), 0);
		glDispatchCompute(1, 1, 1);
		glFinish();
	}
	glUseProgram(0);
	w->ms = clock_ms() - t0;
	egl_ctx_release(w->ctx);
	atomic_store(&w->state, 2);
	return NULL;
}

/* A line's figures for n loaded programs: the first dispatches' median as its metric, then
 * each step's median, maximum and sum (warm may be NULL). */
static void report_loads(struct bench_line *l, const double *load, const double *warm,
                         const double *first, const double *second, int n)
{
	double s[MAX_PROGS];
	memcpy(s, first, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, cmp_d);
	bench_metric(l, "first_dispatch_median_ms", s[n / 2]);
	report_ms(l, "load", load, n);
	if (warm)
		report_ms(l, "warm", warm, n);
	report_ms(l, "first_dispatch", first, n);
	report_ms(l, "second_dispatch", second, n);
}

static int load_binaries(struct egl_ctx *main, struct loop *L, const char *dir)
{
	int per = n_progs / WARM_KINDS;
	if (per < 1) {
		fprintf(stderr, "compile_probe: --load needs at least %d programs\n", WARM_KINDS);
		return -1;
	}
	for (int how = 0; how < WARM_KINDS; how++) {
		GLuint p[MAX_PROGS];
		double load_ms[MAX_PROGS], warm_ms[MAX_PROGS], first_ms[MAX_PROGS], second_ms[MAX_PROGS];
		for (int i = 0; i < per; i++) {
			double a = clock_ms();
			p[i] = load_binary(dir, how * per + i);
			load_ms[i] = clock_ms() - a;
			if (!p[i]) {
				fprintf(stderr, "compile_probe: binary %d refused\n", how * per + i);
				return -1;
			}
		}
		double window = 0;
		if (how == WARM_THREAD) {
			struct warm_thread w;
			memset(&w, 0, sizeof w);
			w.prog = p, w.n = per;
			char err[EGL_ERR_LEN];
			if (egl_ctx_create_shared(main, &w.ctx, err)) {
				fprintf(stderr, "compile_probe: %s\n", err);
				return -1;
			}
			pthread_t th;
			pthread_create(&th, NULL, warm_thread_main, &w);
			while (!atomic_load(&w.state))
				usleep(100);
			double t0 = clock_ms();
			while (atomic_load(&w.state) == 1)
				loop_step(L);
			window = clock_ms() - t0;
			pthread_join(th, NULL);
			egl_ctx_destroy(w.ctx);
			for (int i = 0; i < per; i++)
				warm_ms[i] = w.ms / per;
		}
		for (int i = 0; i < per; i++) {
			double a = clock_ms();
			if (how != WARM_NONE && how != WARM_THREAD)
				warm(L, p[i], how);
			if (how != WARM_THREAD)
				warm_ms[i] = clock_ms() - a;
			a = clock_ms();
			dispatch_real(p[i], 64);
			first_ms[i] = clock_ms() - a;
			a = clock_ms();
			dispatch_real(p[i], 64);
			second_ms[i] = clock_ms() - a;
		}
		struct bench_line l;
		char sc[64];
		snprintf(sc, sizeof sc, "binary-%s", warm_names[how]);
		line_begin(&l, sc);
		report_loads(&l, load_ms, warm_ms, first_ms, second_ms, per);
		if (how == WARM_THREAD) {
			bench_detail_num(&l, "warm_window_ms", window);
			loop_report(L, &l, 0);
		}
		bench_detail_num(&l, "loaded", per);
		line_end(&l);
		L->n = 0;
		for (int i = 0; i < per; i++)
			glDeleteProgram(p[i]);
	}
	return 0;
}

/* --child DIR: a child process (this program, --save DIR) compiles the programs and writes
 * their binaries while this process's loop runs; then this process loads each binary and times
 * its first dispatches, no warm-up. With the driver's disk cache on and shared, the child's
 * compile leaves the machine code there (question: does the parent's load then skip the
 * readying that a binary otherwise costs at its first dispatch?). */
static int child_binaries(struct loop *L, const char *self, const char *dir, int ready)
{
	char np[16], nr[16];
	snprintf(np, sizeof np, "%d", n_progs);
	snprintf(nr, sizeof nr, "%d", size_rounds);
	char *args[] = {(char *)self, "--save", (char *)dir, "--programs", np, "--size", nr,
	                ready ? "--ready" : NULL, NULL};
	extern char **environ;
	pid_t pid;
	double t0 = clock_ms();
	if (posix_spawn(&pid, self, NULL, NULL, args, environ)) {
		fprintf(stderr, "compile_probe: cannot start %s\n", self);
		return -1;
	}
	int st = 0;
	while (waitpid(pid, &st, WNOHANG) == 0)
		loop_step(L);
	double child_ms = clock_ms() - t0;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "compile_probe: the child failed\n");
		return -1;
	}
	if (child_wait_ms > 0)
		usleep((useconds_t)child_wait_ms * 1000u);
	for (int k = 0; k < child_primers; k++) {
		char src[512];
		snprintf(src, sizeof src,
		         "#version 310 es\nlayout(local_size_x = 1) in;\n"
		         "layout(std430, binding = 0) buffer B { vec2 v[]; };\n"
		         "void main() { v[0] += vec2(%u.0, %d.0); }\n", seed % 100000u, seq++);
		double a = clock_ms();
		GLuint p = build_blocking(src);
		dispatch_real(p, 1);
		fprintf(stderr, "compile_probe: primer %d: %.2f ms\n", k, clock_ms() - a);
		glDeleteProgram(p);
	}
	struct bench_line l;
	line_begin(&l, ready ? "child-compile-ready" : "child-compile");
	bench_detail_num(&l, "child_ms", child_ms);
	loop_report(L, &l, 1);
	line_end(&l);
	double load_ms[MAX_PROGS], first_ms[MAX_PROGS], second_ms[MAX_PROGS];
	for (int i = 0; i < n_progs; i++) {
		double a = clock_ms();
		GLuint p = load_binary(dir, child_reverse ? n_progs - 1 - i : i);
		load_ms[i] = clock_ms() - a;
		if (!p) {
			fprintf(stderr, "compile_probe: binary %d refused\n", i);
			return -1;
		}
		a = clock_ms();
		dispatch_real(p, 64);
		first_ms[i] = clock_ms() - a;
		a = clock_ms();
		dispatch_real(p, 64);
		second_ms[i] = clock_ms() - a;
		glDeleteProgram(p);
		fprintf(stderr, "compile_probe: binary %d: load %.2f ms, first dispatch %.2f ms\n", i,
		        load_ms[i], first_ms[i]);
	}
	line_begin(&l, ready ? "child-load-ready" : "child-load");
	report_loads(&l, load_ms, NULL, first_ms, second_ms, n_progs);
	line_end(&l);
	return 0;
}

static int has_scenario(const char *list, const char *s)
{
	size_t n = strlen(s);
	for (const char *p = list; (p = strstr(p, s)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return 1;
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: compile_probe [--programs N] [--size ROUNDS] [--scenario LIST]\n"
	        "                     [--save DIR [--ready] | --load DIR | --child DIR [--ready]\n"
	        "                     [--child-wait MS] [--child-batches K] [--child-primers N]\n"
	        "                     [--child-reverse]]\n"
	        "scenarios: baseline,serial-same,par-same-link,par-same-later,thread-shared,\n"
	        "           thread-shared-par,thread-other,thread-other-par (default: all)\n");
}

int main(int argc, char **argv)
{
	const char *scen = "baseline,serial-same,par-same-link,par-same-later,thread-shared,"
	                   "thread-shared-par,thread-other,thread-other-par";
	const char *save = NULL, *load = NULL, *child = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--programs") && v)
			n_progs = atoi(v), i++;
		else if (!strcmp(a, "--size") && v)
			size_rounds = atoi(v), i++;
		else if (!strcmp(a, "--scenario") && v)
			scen = v, i++;
		else if (!strcmp(a, "--save") && v)
			save = v, i++;
		else if (!strcmp(a, "--load") && v)
			load = v, i++;
		else if (!strcmp(a, "--child") && v)
			child = v, i++;
		else if (!strcmp(a, "--child-primers") && v)
			child_primers = atoi(v), i++;
		else if (!strcmp(a, "--child-reverse"))
			child_reverse = 1;
		else if (!strcmp(a, "--child-batches") && v)
			child_batches = atoi(v), i++;
		else if (!strcmp(a, "--child-wait") && v)
			child_wait_ms = atoi(v), i++;
		else if (!strcmp(a, "--ready"))
			ready_saved = 1;
		else {
			usage();
			return 2;
		}
	}
	if (n_progs < 1 || n_progs > MAX_PROGS || size_rounds < 1 || size_rounds > 4096) {
		fprintf(stderr, "compile_probe: --programs 1..%d, --size 1..4096\n", MAX_PROGS);
		return 2;
	}
	seed = (unsigned)time(NULL) ^ ((unsigned)getpid() << 10);
	struct egl_opts o;
	memset(&o, 0, sizeof o);
	o.keep_display = 1;
	struct egl_ctx *main_ctx;
	char err[EGL_ERR_LEN];
	if (egl_ctx_create(&o, NULL, &main_ctx, err)) {
		fprintf(stderr, "compile_probe: %s\n", err);
		return 1;
	}
	const struct egl_info *info = egl_ctx_info(main_ctx);
	const char *ext = (const char *)glGetString(GL_EXTENSIONS);
	if (ext && strstr(ext, "GL_KHR_parallel_shader_compile"))
		max_threads = (max_threads_fn)eglGetProcAddress("glMaxShaderCompilerThreadsKHR");
	bench_meta_init(&meta, "compile", info->renderer, info->version, "compile_probe", argc - 1,
	                argv + 1);
	struct loop L;
	loop_init(&L);
	int rc = 0;
	if (save) {
		rc = save_binaries(save);
	} else if (load) {
		rc = load_binaries(main_ctx, &L, load);
	} else if (child) {
		for (int b = 0; !rc && b < child_batches; b++)
			rc = child_binaries(&L, "/proc/self/exe", child, ready_saved);
	} else {
		if (has_scenario(scen, "baseline")) {
			double t0 = clock_ms();
			while (clock_ms() - t0 < 300)
				loop_step(&L);
			struct bench_line l;
			line_begin(&l, "baseline");
			loop_report(&L, &l, 1);
			line_end(&l);
		}
		if (has_scenario(scen, "serial-same"))
			rc |= run_serial_same(&L);
		if (has_scenario(scen, "par-same-link"))
			rc |= run_par_same(&L, "par-same-link", 1);
		if (has_scenario(scen, "par-same-later"))
			rc |= run_par_same(&L, "par-same-later", 0);
		if (has_scenario(scen, "thread-shared"))
			rc |= run_thread(main_ctx, &L, "thread-shared", 0, 0);
		if (has_scenario(scen, "thread-shared-par"))
			rc |= max_threads ? run_thread(main_ctx, &L, "thread-shared-par", 0, 1) : -1;
		if (has_scenario(scen, "thread-other"))
			rc |= run_thread(main_ctx, &L, "thread-other", 1, 0);
		if (has_scenario(scen, "thread-other-par"))
			rc |= max_threads ? run_thread(main_ctx, &L, "thread-other-par", 1, 1) : -1;
	}
	free(L.it);
	egl_ctx_destroy(main_ctx);
	return rc ? 1 : 0;
}
