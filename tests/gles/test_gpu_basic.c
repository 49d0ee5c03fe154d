/* The GPU foundation: a context from `auto`, a compute dispatch checked element by element
 * against the CPU, the program cache (hits, variants) and compile errors naming the shader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <GLES3/gl31.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gles/egl.h"
#include "gles/gl_util.h"
#include "gles/program.h"
#include "tests/testutil.h"

struct saxpy_key {
	int a, b;
};

/* program_get of saxpy(a, b), its key and defines as run_saxpy makes them (under the cache's
 * budget as it is): its code, the program in *prog when 0. */
static int get_saxpy(struct program_cache *pc, int a, int b, unsigned *prog)
{
	struct saxpy_key key;
	memset(&key, 0, sizeof key);
	key.a = a;
	key.b = b;
	char defs[128], err[PROGRAM_ERR_LEN];
	snprintf(defs, sizeof defs, "#define A %d\n#define B %d\n", a, b);
	return program_get(pc, "test_saxpy", &key, sizeof key, defs, prog, err);
}

/* A build whose shader fails to compile: PROGRAM_E_COMPILE, its error naming the shader. */
static void expect_compile_error(struct program_cache *pc, const void *key, size_t key_len,
                                 const char *defs, const char *what)
{
	char err[PROGRAM_ERR_LEN];
	unsigned prog;
	int rc = program_get(pc, "test_saxpy", key, key_len, defs, &prog, err);
	printf("%s: %d: %.200s\n", what, rc, err);
	assert_int_equal(rc, PROGRAM_E_COMPILE);
	assert_non_null(strstr(err, "test_saxpy"));
}

static void run_saxpy(struct program_cache *pc, int a, int b, unsigned n)
{
	unsigned prog;
	assert_int_equal(get_saxpy(pc, a, b, &prog), 0);
	float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *out = malloc(n * sizeof *out);
	tu_fill_f32(x, n, -1, 1);
	tu_fill_f32(y, n, -1, 1);
	GLuint buf[2];
	glGenBuffers(2, buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf[0]);
	glBufferData(GL_SHADER_STORAGE_BUFFER, n * sizeof(float), x, GL_STATIC_DRAW);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf[1]);
	glBufferData(GL_SHADER_STORAGE_BUFFER, n * sizeof(float), y, GL_STATIC_DRAW);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buf[0]);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, buf[1]);
	glUseProgram(prog);
	glUniform1ui(glGetUniformLocation(prog, "u_n"), n);
	glDispatchCompute((n + 63) / 64, 1, 1);
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf[1]);
	void *p = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, n * sizeof(float), GL_MAP_READ_BIT);
	assert_non_null(p);
	memcpy(out, p, n * sizeof(float));
	glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
	assert_int_equal(gl_check(NULL, "saxpy"), 0);
	unsigned bad = 0;
	double maxerr = 0;
	for (unsigned i = 0; i < n; i++) {
		double ref = (double)a * x[i] + (double)y[i] * b + i;
		double e = fabs(out[i] - ref) / (1 + fabs(ref));
		if (!(e <= 1e-6))
			bad++;
		if (!(e <= maxerr))
			maxerr = e;
	}
	printf("saxpy a=%d b=%d n=%u: %u of %u elements wrong, max rel err %.2e\n", a, b, n, bad, n,
	       maxerr);
	assert_int_equal(bad, 0);
	glDeleteBuffers(2, buf);
	free(x), free(y), free(out);
}

static void test_dispatch_matches_cpu(void **state)
{
	(void)state;
	struct egl_ctx *ctx = tu_gl_context();
	assert_non_null(ctx);
	const struct egl_info *i = egl_ctx_info(ctx);
	printf("renderer %s, shared memory %d, invocations %d, ssbo %lld\n", i->renderer,
	       i->max_shared_memory, i->max_invocations, i->max_ssbo_size);
	assert_true(i->max_shared_memory >= 16384); /* ES 3.1 minimum */
	assert_true(i->max_invocations >= 128);
	struct program_cache *pc;
	assert_int_equal(program_cache_create("", NULL, &pc), 0);
	unsigned sizes[] = {1, 63, 64, 65, 1000, 100003};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
		run_saxpy(pc, 3, -2, sizes[k]);
	run_saxpy(pc, 5, 7, 777);
	run_saxpy(pc, 3, -2, 999);
	struct program_stats st;
	program_cache_stats(pc, &st);
	printf("program cache: %u programs, %llu hits, %llu misses\n", st.count, st.hits, st.misses);
	assert_int_equal(st.count, 2);
	assert_int_equal(st.misses, 2);
	assert_int_equal(st.hits, 6);
	program_cache_destroy(pc);
}

static void test_compile_error_names_shader(void **state)
{
	(void)state;
	assert_non_null(tu_gl_context());
	struct program_cache *pc;
	assert_int_equal(program_cache_create("", NULL, &pc), 0);
	char err[PROGRAM_ERR_LEN];
	unsigned prog;
	int key = 1;
	/* B undefined: the shader must fail to compile, and the error must say which shader. */
	expect_compile_error(pc, &key, sizeof key, "#define A 1\n", "expected failure");
	int rc = program_get(pc, "no_such_shader", &key, sizeof key, "", &prog, err);
	assert_int_equal(rc, PROGRAM_E_NOSHADER);
	program_cache_destroy(pc);
}

/* Idle work's budget: a miss past it builds nothing and says so; hits are free; -1 lifts it. */
static void test_compile_budget(void **state)
{
	(void)state;
	assert_non_null(tu_gl_context());
	struct program_cache *pc;
	assert_int_equal(program_cache_create("", NULL, &pc), 0);
	char err[PROGRAM_ERR_LEN];
	const char *defs[] = {"#define A 1\n#define B 2\n", "#define A 3\n#define B 4\n"};
	unsigned prog[2], again;
	int key[2] = {1, 2};
	program_cache_budget(pc, 1);
	assert_int_equal(program_get(pc, "test_saxpy", &key[0], sizeof key[0], defs[0], &prog[0], err), 0);
	assert_int_equal(program_cache_refused(pc), 0);
	int rc = program_get(pc, "test_saxpy", &key[1], sizeof key[1], defs[1], &prog[1], err);
	printf("past the budget: %d: %s\n", rc, err);
	assert_int_equal(rc, PROGRAM_E_BUDGET);
	assert_non_null(strstr(err, "test_saxpy"));
	assert_int_equal(program_cache_refused(pc), 1);
	assert_int_equal(program_get(pc, "test_saxpy", &key[0], sizeof key[0], defs[0], &again, err), 0);
	assert_int_equal(again, prog[0]); /* a hit costs nothing */
	struct program_stats st;
	program_cache_stats(pc, &st);
	assert_int_equal(st.misses, 1); /* the refused miss built nothing */
	program_cache_budget(pc, -1);
	assert_int_equal(program_cache_refused(pc), 0); /* cleared by a new budget */
	assert_int_equal(program_get(pc, "test_saxpy", &key[1], sizeof key[1], defs[1], &prog[1], err), 0);
	assert_int_not_equal(prog[1], prog[0]);
	program_cache_destroy(pc);
}

/* The compile thread: under a budget a miss goes to the thread (a context of the share group)
 * and is refused at once; program_cache_compiling says so until it is built; the program is
 * then taken by a later get (refused while it compiles under a budget, waited for without
 * one), counted once, and runs on this context like one built here; a compile error comes to
 * whoever takes it; a destroy with compiles queued returns. */
static void test_compile_thread(void **state)
{
	(void)state;
	struct egl_ctx *shared;
	char eerr[EGL_ERR_LEN];
	assert_int_equal(egl_ctx_create_shared(tu_gl_context(), &shared, eerr), 0);
	struct program_cache *pc;
	assert_int_equal(program_cache_create("", NULL, &pc), 0);
	assert_int_equal(program_cache_worker(pc, shared), 0);
	char err[PROGRAM_ERR_LEN];
	struct saxpy_key k[3];
	memset(k, 0, sizeof k);
	k[0].a = 3, k[0].b = -2; /* run_saxpy's keys and defines */
	k[1].a = 5, k[1].b = 7;
	k[2].a = 9; /* B undefined below: fails to compile */
	const char *defs[3] = {"#define A 3\n#define B -2\n", "#define A 5\n#define B 7\n",
	                       "#define A 9\n"};
	unsigned prog;
	program_cache_budget(pc, 1);
	assert_int_equal(program_get(pc, "test_saxpy", &k[0], sizeof k[0], defs[0], &prog, err),
	                 PROGRAM_E_BUDGET);
	assert_int_equal(program_cache_refused(pc), 1);
	/* the budget went to that compile */
	assert_int_equal(program_get(pc, "test_saxpy", &k[1], sizeof k[1], defs[1], &prog, err),
	                 PROGRAM_E_BUDGET);
	int polls = 0;
	while (program_cache_compiling(pc) && polls < 20000) {
		nanosleep(&(struct timespec){0, 1000000}, NULL);
		polls++;
	}
	printf("compiled on the thread after %d polls of 1 ms\n", polls);
	assert_int_equal(program_cache_compiling(pc), 0);
	program_cache_budget(pc, 1);
	run_saxpy(pc, 3, -2, 1000); /* taken (a hit for the budget), and it computes */
	assert_int_equal(program_cache_refused(pc), 0);
	/* the next under a budget, then taken without one: waited for */
	assert_int_equal(program_get(pc, "test_saxpy", &k[1], sizeof k[1], defs[1], &prog, err),
	                 PROGRAM_E_BUDGET);
	program_cache_budget(pc, -1);
	run_saxpy(pc, 5, 7, 777);
	struct program_stats st;
	program_cache_stats(pc, &st);
	assert_int_equal(st.misses, 2);
	assert_int_equal(st.count, 2);
	/* an error made on the thread is the taker's */
	program_cache_budget(pc, 1);
	assert_int_equal(program_get(pc, "test_saxpy", &k[2], sizeof k[2], defs[2], &prog, err),
	                 PROGRAM_E_BUDGET);
	program_cache_budget(pc, -1);
	expect_compile_error(pc, &k[2], sizeof k[2], defs[2], "compile error from the thread");
	/* destroyed with a compile handed over and never taken */
	program_cache_budget(pc, 1);
	assert_int_equal(get_saxpy(pc, 11, 12, &prog), PROGRAM_E_BUDGET);
	program_cache_destroy(pc);
	egl_ctx_destroy(shared);
}

/* Saxpy A, B (n values) compiled in a program cache whose binaries go to a new folder dir
 * (template: its XXXXXX replaced) under the context's driver string (driver, 600 bytes), so a
 * later cache of that folder and driver loads its binary. Returns the number of binary formats
 * the driver offers (0: nothing was saved). */
static int saxpy_binary(char *dir, char *driver, int a, int b, unsigned n)
{
	const struct egl_info *info = egl_ctx_info(tu_gl_context());
	snprintf(driver, 600, "%s / %s", info->renderer, info->version);
	assert_non_null(mkdtemp(dir));
	struct program_cache *pc;
	assert_int_equal(program_cache_create("", NULL, &pc), 0);
	program_cache_set_binary_dir(pc, dir, driver);
	run_saxpy(pc, a, b, n); /* compiled here, its binary saved */
	program_cache_destroy(pc);
	GLint formats = 0;
	glGetIntegerv(GL_NUM_PROGRAM_BINARY_FORMATS, &formats);
	return formats;
}

/* A program the compile thread loads from a persisted binary (and readies there with a dispatch
 * of no work groups) computes on this context like one compiled here, and leaves no GL error.
 * What the readying saves is the driver's time at the first dispatch, measured on the H200
 * (bench/RESULTS.md, "Compiles under load"); no result here shows it. */
static void test_compile_thread_binary(void **state)
{
	(void)state;
	char driver[600], dir[] = "/tmp/fftbloom-test-binXXXXXX";
	struct program_cache *pc;
	if (saxpy_binary(dir, driver, 6, -3, 500) < 1) { /* Mesa offers binaries only with its disk cache on */
		printf("the driver offers no program binary format: nothing to load\n");
		rmdir(dir);
		skip();
	}
	struct egl_ctx *shared;
	char eerr[EGL_ERR_LEN];
	assert_int_equal(egl_ctx_create_shared(tu_gl_context(), &shared, eerr), 0);
	assert_int_equal(program_cache_create("", NULL, &pc), 0);
	program_cache_set_binary_dir(pc, dir, driver);
	assert_int_equal(program_cache_worker(pc, shared), 0);
	unsigned prog;
	program_cache_budget(pc, 1);
	assert_int_equal(get_saxpy(pc, 6, -3, &prog), PROGRAM_E_BUDGET);
	int polls = 0;
	while (program_cache_compiling(pc) && polls++ < 20000)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	program_cache_budget(pc, -1);
	run_saxpy(pc, 6, -3, 1000);
	struct program_stats st;
	program_cache_stats(pc, &st);
	printf("loaded from the binary on the compile thread: %llu binary hits\n", st.binary_hits);
	assert_int_equal(st.binary_hits, 1);
	assert_int_equal(gl_check(NULL, "after the readied program"), 0);
	program_cache_destroy(pc);
	egl_ctx_destroy(shared);
	tu_remove_dir(dir);
}

/* Parallel mode (GL_KHR_parallel_shader_compile on this context): under a budget a miss is
 * submitted and refused; several may be in flight at once; program_cache_compiling polls and
 * installs each once the driver says it is complete; a frame (no budget) asking for one in
 * flight waits for it; a failed compile comes, with the shader's name, to its next asker and
 * leaves the others sound; a destroy with builds in flight returns. */
static void test_compile_parallel(void **state)
{
	(void)state;
	assert_non_null(tu_gl_context());
	struct program_cache *pc;
	assert_int_equal(program_cache_create("", NULL, &pc), 0);
	if (!program_cache_parallel(pc, 1)) {
		printf("no GL_KHR_parallel_shader_compile here\n");
		program_cache_destroy(pc);
		skip();
	}
	char err[PROGRAM_ERR_LEN];
	enum { N = 5 };
	struct saxpy_key k[N];
	char defs[N][64];
	memset(k, 0, sizeof k);
	for (int i = 0; i < N; i++) {
		k[i].a = 20 + i, k[i].b = i - 2;
		snprintf(defs[i], sizeof defs[i], "#define A %d\n#define B %d\n", k[i].a, k[i].b);
	}
	snprintf(defs[N - 1], sizeof defs[N - 1], "#define A %d\n", k[N - 1].a); /* no B: fails */
	unsigned prog;
	program_cache_budget(pc, N); /* all submitted at once, each refused */
	for (int i = 0; i < N; i++)
		assert_int_equal(program_get(pc, "test_saxpy", &k[i], sizeof k[i], defs[i], &prog, err),
		                 PROGRAM_E_BUDGET);
	assert_int_equal(program_cache_refused(pc), 1);
	/* asked again: refused while in flight, taken once complete; never submitted twice */
	struct program_stats st;
	program_cache_stats(pc, &st);
	assert_int_equal(st.count, 0); /* nothing installed before the driver is asked */
	int rc = program_get(pc, "test_saxpy", &k[0], sizeof k[0], defs[0], &prog, err);
	printf("the first asked again at once: %d\n", rc);
	assert_true(rc == PROGRAM_E_BUDGET || rc == 0);
	program_cache_stats(pc, &st);
	assert_int_equal(st.misses, N);
	assert_int_equal(st.count, rc == 0);
	int polls = 0;
	while (program_cache_compiling(pc) && polls < 20000) {
		nanosleep(&(struct timespec){0, 1000000}, NULL);
		polls++;
	}
	program_cache_stats(pc, &st);
	printf("parallel: %d builds complete after %d polls of 1 ms, %u installed\n", N, polls,
	       st.count);
	assert_int_equal(program_cache_compiling(pc), 0);
	assert_int_equal(st.count, N - 1); /* the failed one is not installed */
	program_cache_budget(pc, 0); /* installed: hits, no budget needed */
	for (int i = 0; i < N - 1; i++)
		run_saxpy(pc, k[i].a, k[i].b, 333 + 100 * (unsigned)i);
	assert_int_equal(program_cache_refused(pc), 0);
	expect_compile_error(pc, &k[N - 1], sizeof k[N - 1], defs[N - 1], "the failed build");
	/* a frame asking for one in flight waits for it */
	program_cache_budget(pc, 1);
	assert_int_equal(get_saxpy(pc, 7, 8, &prog), PROGRAM_E_BUDGET);
	program_cache_budget(pc, -1);
	run_saxpy(pc, 7, 8, 1000);
	program_cache_stats(pc, &st);
	assert_int_equal(st.misses, N + 1);
	assert_int_equal(st.count, N);
	/* destroyed with a build in flight */
	program_cache_budget(pc, 1);
	assert_int_equal(get_saxpy(pc, 9, 10, &prog), PROGRAM_E_BUDGET);
	program_cache_destroy(pc);
	assert_int_equal(gl_check(NULL, "after the parallel builds"), 0);
}

/* Parallel mode with persisted binaries: idle work's miss is loaded from the binary at once
 * (counted as a binary hit, no build in flight), readied by program_cache_ready_step once (a
 * dispatch of no work groups, the bound program left as it was), and computes. */
static void test_compile_parallel_binary(void **state)
{
	(void)state;
	char driver[600], dir[] = "/tmp/fftbloom-test-pbinXXXXXX";
	struct program_cache *pc;
	int formats = saxpy_binary(dir, driver, 4, 5, 300);
	assert_int_equal(program_cache_create("", NULL, &pc), 0);
	if (formats < 1 || !program_cache_parallel(pc, 1)) {
		printf("no program binary format or no GL_KHR_parallel_shader_compile here\n");
		program_cache_destroy(pc);
		tu_remove_dir(dir);
		skip();
	}
	program_cache_set_binary_dir(pc, dir, driver);
	unsigned prog;
	program_cache_budget(pc, 1);
	assert_int_equal(get_saxpy(pc, 4, 5, &prog), 0);
	assert_int_equal(program_cache_compiling(pc), 0);
	glUseProgram(0);
	assert_int_equal(program_cache_ready_step(pc), 1);
	GLint bound = -1;
	glGetIntegerv(GL_CURRENT_PROGRAM, &bound);
	assert_int_equal(bound, 0);
	assert_int_equal(program_cache_ready_step(pc), 0); /* one dispatch a program */
	program_cache_budget(pc, -1);
	run_saxpy(pc, 4, 5, 1000);
	struct program_stats st;
	program_cache_stats(pc, &st);
	printf("parallel mode, loaded from the binary: %llu binary hits, %llu misses\n",
	       st.binary_hits, st.misses);
	assert_int_equal(st.binary_hits, 1);
	assert_int_equal(gl_check(NULL, "after the readied program"), 0);
	program_cache_destroy(pc);
	tu_remove_dir(dir);
}

static void test_forced_platform_errors_are_named(void **state)
{
	(void)state;
	/* A device index far past the end must fail with a message naming the platform. */
	struct egl_opts o = {EGLP_DEVICE, 63, 0, 0};
	struct egl_ctx *c = NULL;
	char err[EGL_ERR_LEN];
	int rc = egl_ctx_create(&o, NULL, &c, err);
	printf("device 63: rc %d: %s\n", rc, err);
	assert_true(rc < 0);
	assert_null(c);
	assert_non_null(strstr(err, "device"));
	assert_int_equal(egl_ctx_make_current(tu_gl_context()), 0);
}

/* gl_stage's host transfers, with the staging buffers mapped persistently (GL_EXT_buffer_storage)
 * and without: bytes up into device buffers and back, bit for bit, over sizes that grow the
 * staging buffers, repeat and shrink. Two uploads in a row go to two buffers (a mapped upload
 * must wait for the copy out of its staging buffer before writing it again, or the first buffer
 * gets the second's bytes: on the H200 a build without that wait failed here, llvmpipe copies
 * at once and cannot show it), a zero-byte upload between them changes nothing. */
static void test_stage_transfers(void **state)
{
	(void)state;
	assert_int_equal(egl_ctx_make_current(tu_gl_context()), 0);
	static const size_t sizes[] = {4, 4096, 1u << 20, 1u << 20, 12, (3u << 20) + 8, 256};
	for (int mapped = 0; mapped < 2; mapped++) {
		if (mapped && !gl_buf_storage_available()) {
			printf("no GL_EXT_buffer_storage: the mapped transfers not run\n");
			continue;
		}
		struct gl_stage st;
		memset(&st, 0, sizeof st);
		st.mapped = mapped;
		unsigned dev = 0, dev2 = 0;
		size_t have = 0, have2 = 0;
		char err[GL_BUF_ERR_LEN];
		for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
			size_t n = sizes[i];
			unsigned char *a = malloc(n), *a2 = malloc(n), *b = malloc(n);
			assert_non_null(a);
			assert_non_null(a2);
			assert_non_null(b);
			for (size_t k = 0; k < n; k++)
				a[k] = (unsigned char)rand(), a2[k] = (unsigned char)rand();
			assert_int_equal(gl_buf_grow(&dev, &have, n, GL_DYNAMIC_COPY, err), 0);
			assert_int_equal(gl_buf_grow(&dev2, &have2, n, GL_DYNAMIC_COPY, err), 0);
			assert_int_equal(gl_stage_upload(&st, dev, a, n, err), 0);
			assert_int_equal(gl_stage_upload(&st, dev, a, 0, err), 0);
			assert_int_equal(gl_stage_upload(&st, dev2, a2, n, err), 0);
			memset(b, 0xAA, n);
			assert_int_equal(gl_stage_download(&st, dev, b, n, err), 0);
			assert_memory_equal(b, a, n);
			memset(b, 0xAA, n);
			assert_int_equal(gl_stage_download(&st, dev2, b, n, err), 0);
			assert_memory_equal(b, a2, n);
			/* the way it went: the mapped buffers, or the driver's */
			assert_true(mapped ? st.mup && st.mdown && !st.up && !st.down
			                   : !st.mup && !st.mdown && st.up && st.down);
			free(a), free(a2), free(b);
		}
		printf("gl_stage %s: %zu transfers bit for bit\n", mapped ? "mapped" : "unmapped",
		       sizeof sizes / sizeof sizes[0]);
		gl_stage_free(&st);
		assert_int_equal(st.mapped, mapped);
		glDeleteBuffers(1, &dev);
		glDeleteBuffers(1, &dev2);
	}
}

int main(void)
{
	tu_seed_from_clock();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dispatch_matches_cpu),
		cmocka_unit_test(test_compile_error_names_shader),
		cmocka_unit_test(test_compile_budget),
		cmocka_unit_test(test_compile_thread),
		cmocka_unit_test(test_compile_thread_binary),
		cmocka_unit_test(test_compile_parallel),
		cmocka_unit_test(test_compile_parallel_binary),
		cmocka_unit_test(test_forced_platform_errors_are_named),
		cmocka_unit_test(test_stage_transfers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
