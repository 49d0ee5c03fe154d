/* The GPU engine's one constructor: the parts asked for and no others, the driver key
 * ("renderer / version") that program binaries and wisdom lines are kept under, binaries found
 * again by a second engine, the wisdom file written, a part's result against a CPU reference
 * (an identity convolution, a 1x1 spatial and transposed convolution), and a context that
 * cannot be made. Fresh random data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gles/engine.h"
#include "tests/testutil.h"

#define TOL 1e-5

static char g_dir[] = "/tmp/fftbloom-engine-XXXXXX";
static char g_wisdom[600];

static int setup(void **state)
{
	(void)state;
	tu_seed_from_clock();
	if (!mkdtemp(g_dir))
		return -1;
	snprintf(g_wisdom, sizeof g_wisdom, "%s/wisdom.txt", g_dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_remove_dir(g_dir);
	return 0;
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static struct engine *make(unsigned parts, const char *wisdom)
{
	struct engine_opts o = {.platform = EGLP_AUTO, .program_cache = g_dir, .wisdom_file = wisdom,
	                        .no_wisdom = !wisdom, .parts = parts,
	                        .wisdom_measure = wisdom ? FFT_WISDOM_MEASURE_NOW : 0};
	struct engine *e;
	char err[ENGINE_ERR_LEN];
	int rc = engine_create(&o, NULL, &e, err);
	if (rc)
		printf("engine_create: %s\n", err);
	assert_int_equal(rc, 0);
	return e;
}

/* The convolution of a random image with the 1x1 kernel 1 through the engine's bloom context:
 * the image itself (the identity, computed on the CPU by no computation at all). */
static void check_identity_bloom(struct engine *e)
{
	struct image in, k;
	assert_int_equal(image_alloc(&in, 37, 23, 4), 0);
	assert_int_equal(image_alloc(&k, 1, 1, 1), 0);
	tu_fill_f32(in.pixels, (size_t)37 * 23 * 4, -1, 1);
	k.pixels[0] = 1;
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	p.normalize = BLOOM_NORMALIZE_NONE;
	struct bloom_kernel kr = {&k, {0, 0}};
	struct image out;
	char err[BLOOM_ERR_LEN];
	assert_int_equal(bloom_run(engine_bloom(e), BLOOM_OP_CONVOLVE, &in, &kr, &p, 0, &out, NULL,
	                           err), 0);
	size_t n = (size_t)37 * 23 * 4;
	double *ref = malloc(n * sizeof *ref);
	for (size_t i = 0; i < n; i++)
		ref[i] = in.pixels[i];
	int ok = tu_check("engine bloom: identity convolution", out.pixels, ref, n, TOL);
	free(ref);
	image_free(&in), image_free(&k), image_free(&out);
	assert_true(ok);
}

/* conv2d and conv2d-transpose with one 1x1 weight through the engine's contexts: y = w x + b. */
static void check_tensor_parts(struct engine *e)
{
	size_t n = (size_t)4 * 6 * 5;
	float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
	double *ref = malloc(n * sizeof *ref);
	tu_fill_f32(x, n, -1, 1);
	const float w = 0.75f, b = -0.25f;
	for (size_t i = 0; i < n; i++)
		ref[i] = (double)w * x[i] + b;
	char err[SPATIAL_ERR_LEN];
	struct spatial_conv sc = {.batch = 4, .in_c = 1, .in_h = 6, .in_w = 5, .out_c = 1, .k_h = 1,
	                          .k_w = 1, .stride_h = 1, .stride_w = 1, .precision = SPATIAL_FP32};
	assert_int_equal(spatial_conv2d(engine_spatial(e), &sc, x, &w, &b, y, NULL, err), 0);
	int ok = tu_check("engine spatial: 1x1 conv2d", y, ref, n, TOL);
	struct deconv_conv dc = {.batch = 4, .in_c = 1, .in_h = 6, .in_w = 5, .out_c = 1, .k_h = 1,
	                         .k_w = 1, .stride_h = 1, .stride_w = 1};
	assert_int_equal(deconv_run(engine_deconv(e), &dc, x, &w, &b, y, NULL, err), 0);
	ok &= tu_check("engine deconv: 1x1 conv2d-transpose", y, ref, n, TOL);
	free(x), free(y), free(ref);
	assert_true(ok);
}

static void test_parts_and_driver(void **state)
{
	(void)state;
	engine_destroy(NULL);
	struct engine *e = make(0, NULL);
	const struct egl_info *i = engine_info(e);
	char want[ENGINE_DRIVER_LEN];
	snprintf(want, sizeof want, "%s / %s", i->renderer, i->version);
	printf("driver key: %s\n", engine_driver(e));
	assert_string_equal(engine_driver(e), want);
	assert_non_null(engine_egl(e));
	assert_non_null(engine_programs(e));
	assert_null(engine_wisdom(e));
	assert_null(engine_bloom(e));
	assert_null(engine_spatial(e));
	assert_null(engine_deconv(e));
	engine_destroy(e);
	e = make(ENGINE_DECONV, NULL); /* deconv implies the spatial context it runs on */
	assert_non_null(engine_spatial(e));
	assert_non_null(engine_deconv(e));
	assert_null(engine_bloom(e));
	engine_destroy(e);
}

/* Every part's result; then the binaries the first engine saved (under its driver key) serve
 * a second engine's misses, and the wisdom file holds the first engine's measured shapes under
 * the same key. */
static void test_results_binaries_wisdom(void **state)
{
	(void)state;
	struct engine *e = make(ENGINE_BLOOM | ENGINE_SPATIAL | ENGINE_DECONV, g_wisdom);
	assert_non_null(engine_wisdom(e));
	check_identity_bloom(e);
	check_tensor_parts(e);
	int saved = count_files(g_dir) - 1, shapes = fft_wisdom_count(engine_wisdom(e));
	char key[ENGINE_DRIVER_LEN];
	snprintf(key, sizeof key, "%s", engine_driver(e));
	engine_destroy(e);
	printf("program binaries saved: %d; wisdom shapes measured: %d\n", saved, shapes);
	assert_true(saved > 0 && shapes > 0);
	FILE *f = fopen(g_wisdom, "r");
	assert_non_null(f);
	char line[1024];
	assert_non_null(fgets(line, sizeof line, f));
	fclose(f);
	assert_int_equal(strncmp(line, key, strlen(key)), 0);
	e = make(ENGINE_BLOOM, g_wisdom);
	assert_int_equal(fft_wisdom_count(engine_wisdom(e)), shapes);
	check_identity_bloom(e);
	struct program_stats ps;
	program_cache_stats(engine_programs(e), &ps);
	printf("second engine: %llu misses, %llu served from saved binaries\n", ps.misses,
	       ps.binary_hits);
	assert_true(ps.binary_hits > 0);
	engine_destroy(e);
}

/* A random convolution (image 41x29 RGBA, kernel 7x5 RGB) through the engine's bloom context. */
static void convolve_random(struct engine *e, const struct image *in, const struct image *k,
                            struct image *out)
{
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	p.normalize = BLOOM_NORMALIZE_NONE;
	struct bloom_kernel kr = {k, {0, 0}};
	char err[BLOOM_ERR_LEN];
	int rc = bloom_run(engine_bloom(e), BLOOM_OP_CONVOLVE, in, &kr, &p, 0, out, NULL, err);
	if (rc)
		printf("bloom_run: %s\n", err);
	assert_int_equal(rc, 0);
}

/* Measuring in idle time: a frame of a new size runs at once on the built-in rule and queues its
 * FFT shapes; engine_idle measures them a step at a time until none is left, writes their lines
 * to the wisdom file, and rebuilds the plan with the winners; the answers before and after the
 * switch agree (and the identity convolution matches its CPU reference on both plans). */
static void test_idle_measuring(void **state)
{
	(void)state;
	char path[700];
	snprintf(path, sizeof path, "%s/idle-wisdom.txt", g_dir);
	remove(path);
	struct engine_opts o = {.platform = EGLP_AUTO, .wisdom_file = path, .parts = ENGINE_BLOOM,
	                        .wisdom_measure = FFT_WISDOM_MEASURE_IDLE, .idle_on_software = 1};
	struct engine *e;
	char err[ENGINE_ERR_LEN];
	assert_int_equal(engine_create(&o, NULL, &e, err), 0);
	printf("wisdom: %s\n", engine_wisdom_source(e));
	assert_non_null(strstr(engine_wisdom_source(e), "built-in rules"));
	struct fft_wisdom *w = engine_wisdom(e);
	struct image in, k, before, after;
	assert_int_equal(image_alloc(&in, 41, 29, 4), 0);
	assert_int_equal(image_alloc(&k, 7, 5, 3), 0);
	tu_fill_f32(in.pixels, (size_t)41 * 29 * 4, -1, 1);
	tu_fill_f32(k.pixels, (size_t)7 * 5 * 3, 0.1f, 1);
	int shapes0 = fft_wisdom_count(w);
	convolve_random(e, &in, &k, &before);
	int queued = fft_wisdom_pending_count(w);
	printf("after the first frame: %d shapes queued, %d known\n", queued, fft_wisdom_count(w));
	assert_true(queued > 0);
	assert_int_equal(fft_wisdom_count(w), shapes0); /* nothing measured on the frame's path */
	check_identity_bloom(e);
	/* each step compiles one program at most: a frame arriving meanwhile waits for one */
	int steps = 0, more = 1;
	unsigned long long most = 0, compiled = 0;
	struct program_stats ps0, ps1;
	program_cache_stats(engine_programs(e), &ps0);
	while (more && steps < 10000) {
		more = engine_idle(e);
		steps += more;
		program_cache_stats(engine_programs(e), &ps1);
		if (ps1.misses - ps0.misses > most)
			most = ps1.misses - ps0.misses;
		compiled += ps1.misses - ps0.misses;
		ps0 = ps1;
	}
	struct bloom_cache_stats bs;
	bloom_ctx_stats(engine_bloom(e), &bs);
	printf("idle steps: %d; programs compiled: %llu, at most %llu in a step; shapes known: %d; "
	       "plans rebuilt: %llu\n", steps, compiled, most, fft_wisdom_count(w), bs.plan_refreshes);
	assert_true(compiled > 1);
	assert_true(most <= 1);
	assert_int_equal(fft_wisdom_pending_count(w), 0);
	assert_true(fft_wisdom_count(w) >= shapes0 + queued);
	assert_true(steps > queued); /* a shape takes several steps: no one step measures it all */
	assert_true(bs.plan_refreshes >= 1);
	assert_int_equal(engine_idle(e), 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	int lines = 0;
	char line[1024];
	while (fgets(line, sizeof line, f))
		lines += !strncmp(line, engine_driver(e), strlen(engine_driver(e)));
	fclose(f);
	printf("wisdom file lines: %d\n", lines);
	assert_true(lines >= queued);
	convolve_random(e, &in, &k, &after);
	size_t n = (size_t)41 * 29 * 4;
	double *ref = malloc(n * sizeof *ref);
	for (size_t i = 0; i < n; i++)
		ref[i] = before.pixels[i];
	int ok = tu_check("convolution after the plan switched vs before", after.pixels, ref, n, TOL);
	free(ref);
	check_identity_bloom(e);
	bloom_ctx_stats(engine_bloom(e), &bs);
	assert_int_equal(fft_wisdom_pending_count(w), 0); /* the rebuilt plan queued nothing */
	image_free(&in), image_free(&k), image_free(&before), image_free(&after);
	engine_destroy(e);
	assert_true(ok);
}

static void test_no_context(void **state)
{
	(void)state;
	struct engine_opts o = {.platform = EGLP_DEVICE, .device = 999, .parts = ENGINE_BLOOM};
	struct engine *e = (struct engine *)&o;
	char err[ENGINE_ERR_LEN];
	assert_int_equal(engine_create(&o, NULL, &e, err), ENGINE_E_CONTEXT);
	printf("device 999: %s\n", err);
	assert_null(e);
	assert_non_null(strstr(err, "no OpenGL ES 3.1 context"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parts_and_driver),
		cmocka_unit_test(test_results_binaries_wisdom),
		cmocka_unit_test(test_idle_measuring),
		cmocka_unit_test(test_no_context),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
