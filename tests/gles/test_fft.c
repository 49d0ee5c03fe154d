/* The GLES FFT engine against double-precision CPU references: every length 1..64 and a list of
 * larger and awkward ones (primes, Bluestein), the shared and global techniques, rows and
 * columns, vec2 and vec4, 2D shapes, round trips and linearity; the blocked column technique;
 * the tuner and its wisdom; the shared technique's padded exchanges and their plan and program
 * keys. Fresh random data each run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <GLES3/gl31.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gles/egl.h"
#include "gles/fft.h"
#include "gles/fft_cpu.h"
#include "tests/testutil.h"

#define TOL 1e-5
#define TOL_FP16 2e-3 /* float16 storage, as test_bloom: inputs, sweeps and outputs rounded */

static struct program_cache *g_pc;
static const struct egl_info *g_info;

static int setup(void **state)
{
	(void)state;
	struct egl_ctx *ctx = tu_gl_context();
	if (!ctx)
		return -1;
	g_info = egl_ctx_info(ctx);
	return program_cache_create("", NULL, &g_pc);
}

static int teardown(void **state)
{
	(void)state;
	program_cache_destroy(g_pc);
	return 0;
}

/* Direct DFT in double of one signal: x[i*stride] complex pairs, angle by exact integer
 * reduction, unscaled, sign -1 forward / +1 inverse. */
static void dft_ref(const double *x, size_t stride, double *out, int n, int sign)
{
	double *w = malloc((size_t)n * 2 * sizeof *w);
	for (int m = 0; m < n; m++) {
		w[2 * m] = cos(2 * M_PI * m / n);
		w[2 * m + 1] = sign * sin(2 * M_PI * m / n);
	}
	for (int k = 0; k < n; k++) {
		double re = 0, im = 0;
		long long idx = 0;
		for (int j = 0; j < n; j++) {
			double xr = x[2 * j * stride], xi = x[2 * j * stride + 1];
			re += xr * w[2 * idx] - xi * w[2 * idx + 1];
			im += xr * w[2 * idx + 1] + xi * w[2 * idx];
			idx += k;
			if (idx >= n)
				idx -= n;
		}
		out[2 * k] = re;
		out[2 * k + 1] = im;
	}
	free(w);
}

static GLuint upload(const float *data, size_t floats)
{
	GLuint b;
	glGenBuffers(1, &b);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(floats * sizeof(float)), data,
	             GL_DYNAMIC_COPY);
	return b;
}

static void download(GLuint b, float *out, size_t floats)
{
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
	void *p = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)(floats * sizeof(float)),
	                           GL_MAP_READ_BIT);
	assert_non_null(p);
	memcpy(out, p, floats * sizeof(float));
	glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
}

static const char *tech_name(int t)
{
	return fft_technique_name(t);
}

/* Transforms `count` signals of length n laid out as rows (adjacent=0: signal s at s*n) or as
 * columns (adjacent=1: element i of signal s at i*count + s) of a matrix, with `comps` floats per
 * element, and checks against the direct DFT of each component pair. */
static void check_axis(int n, int count, int adjacent, int comps, int technique, int inverse)
{
	size_t elems = (size_t)n * count, floats = elems * comps;
	float *x = malloc(floats * sizeof *x), *y = malloc(floats * sizeof *y);
	double *xd = malloc(floats * sizeof *xd), *ref = malloc(floats * sizeof *ref);
	double *sig = calloc((size_t)n * 2, sizeof *sig), *sout = calloc((size_t)n * 2, sizeof *sout);
	tu_fill_f32(x, floats, -1, 1);
	for (size_t i = 0; i < floats; i++)
		xd[i] = x[i];
	size_t sig_stride = adjacent ? 1 : (size_t)n, elem_stride = adjacent ? (size_t)count : 1;
	for (int s = 0; s < count; s++)
		for (int pair = 0; pair < comps / 2; pair++) {
			for (int i = 0; i < n; i++) {
				size_t e = (size_t)s * sig_stride + (size_t)i * elem_stride;
				sig[2 * i] = xd[e * comps + 2 * pair];
				sig[2 * i + 1] = xd[e * comps + 2 * pair + 1];
			}
			dft_ref(sig, 1, sout, n, inverse ? 1 : -1);
			for (int i = 0; i < n; i++) {
				size_t e = (size_t)s * sig_stride + (size_t)i * elem_stride;
				double sc = inverse ? 1.0 / n : 1.0;
				ref[e * comps + 2 * pair] = sout[2 * i] * sc;
				ref[e * comps + 2 * pair + 1] = sout[2 * i + 1] * sc;
			}
		}
	struct fft_opts o = {.technique = technique, .components = comps};
	struct fft_axis *a;
	char err[FFT_ERR_LEN];
	int rc = fft_axis_create(g_pc, g_info, n, adjacent, elems, count, &o, NULL, &a, err);
	if (rc)
		printf("fft_axis_create(%d): %s\n", n, err);
	assert_int_equal(rc, 0);
	GLuint b = upload(x, floats);
	assert_int_equal(fft_axis_execute(a, b, 0, sig_stride, elem_stride, count, inverse), 0);
	download(b, y, floats);
	char name[128];
	const struct fft_plan *p = fft_axis_plan(a);
	snprintf(name, sizeof name, "n=%d %s%s %s vec%d %s%s", n, inverse ? "inv " : "",
	         adjacent ? "cols" : "rows", fft_plan_kind(p), comps, p->bluestein ? "bluestein " : "",
	         tech_name(technique));
	int ok = tu_check(name, y, ref, floats, TOL);
	glDeleteBuffers(1, &b);
	fft_axis_destroy(a);
	free(x), free(y), free(xd), free(ref), free(sig), free(sout);
	assert_true(ok);
}

static void test_every_small_length(void **state)
{
	(void)state;
	for (int n = 1; n <= 64; n++) {
		check_axis(n, 3, 0, 2, FFT_TECH_SHARED, 0);
		check_axis(n, 2, 0, 2, FFT_TECH_GLOBAL, 0);
	}
	/* inverse on a spread of small lengths */
	int some[] = {1, 2, 3, 5, 7, 11, 13, 16, 17, 30, 31, 32, 49, 60, 64};
	for (size_t i = 0; i < sizeof some / sizeof some[0]; i++) {
		check_axis(some[i], 2, 0, 2, FFT_TECH_SHARED, 1);
		check_axis(some[i], 2, 0, 2, FFT_TECH_GLOBAL, 1);
	}
}

static void test_larger_lengths(void **state)
{
	(void)state;
	int ns[] = {97, 127, 128, 243, 360, 625, 1000, 1080, 1920, 2048, 2187, 4096, 4099};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
		int n = ns[i];
		/* auto (shared where it fits), and global */
		check_axis(n, 2, 0, 2, FFT_TECH_AUTO, 0);
		check_axis(n, 2, 0, 2, FFT_TECH_GLOBAL, 0);
	}
	/* inverse on a few */
	check_axis(1080, 2, 0, 2, FFT_TECH_AUTO, 1);
	check_axis(2048, 1, 0, 2, FFT_TECH_GLOBAL, 1);
	check_axis(4099, 1, 0, 2, FFT_TECH_AUTO, 1);
}

static void test_columns_and_vec4(void **state)
{
	(void)state;
	int ns[] = {1, 6, 17, 64, 97, 360, 1080};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
		check_axis(ns[i], 37, 1, 2, FFT_TECH_AUTO, 0);
		check_axis(ns[i], 5, 1, 4, FFT_TECH_AUTO, 1);
		check_axis(ns[i], 3, 0, 4, FFT_TECH_GLOBAL, 0);
		check_axis(ns[i], 9, 1, 2, FFT_TECH_GLOBAL, 1);
	}
	/* long vec4 columns: auto takes global passes */
	check_axis(2744, 2, 1, 4, FFT_TECH_AUTO, 0);
	check_axis(4096, 3, 1, 2, FFT_TECH_GLOBAL, 1);
	/* vec4 at a length whose shared exchange is split into two vec2 rounds */
	check_axis(4096, 2, 0, 4, FFT_TECH_AUTO, 0);
	check_axis(2187, 8, 1, 4, FFT_TECH_AUTO, 1);
}

static void test_cpu_reference(void **state)
{
	(void)state;
	/* the recursive CPU FFT used as the 2D reference, against the direct DFT */
	int ns[] = {1, 2, 12, 17, 97, 360, 1024, 1331, 4099};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
		int n = ns[i];
		double *x = malloc((size_t)n * 2 * sizeof *x), *a = malloc((size_t)n * 2 * sizeof *a),
		       *b = malloc((size_t)n * 2 * sizeof *b);
		for (int k = 0; k < 2 * n; k++)
			x[k] = tu_sym();
		assert_int_equal(fft_cpu(x, 1, a, n, -1), 0);
		dft_ref(x, 1, b, n, -1);
		double num = 0, den = 0;
		for (int k = 0; k < 2 * n; k++) {
			num += (a[k] - b[k]) * (a[k] - b[k]);
			den += b[k] * b[k];
		}
		double rel = sqrt(num / den);
		printf("fft_cpu n=%d: rel_l2 %.2e vs direct DFT\n", n, rel);
		assert_true(rel < 1e-12);
		free(x), free(a), free(b);
	}
}

/* 2D reference: rows then columns with the CPU FFT in double. */
static void ref_2d(const float *x, double *out, int w, int h, int inverse)
{
	size_t e = (size_t)w * h;
	double *tmp = malloc(e * 2 * sizeof *tmp), *line = malloc((size_t)(w > h ? w : h) * 2 * sizeof *line);
	double *xd = malloc(e * 2 * sizeof *xd);
	for (size_t i = 0; i < 2 * e; i++)
		xd[i] = x[i];
	int sign = inverse ? 1 : -1;
	for (int r = 0; r < h; r++)
		fft_cpu(xd + (size_t)r * w * 2, 1, tmp + (size_t)r * w * 2, w, sign);
	for (int c = 0; c < w; c++) {
		fft_cpu(tmp + (size_t)c * 2, (size_t)w, line, h, sign);
		for (int r = 0; r < h; r++) {
			double sc = inverse ? 1.0 / ((double)w * h) : 1.0;
			out[((size_t)r * w + c) * 2] = line[2 * r] * sc;
			out[((size_t)r * w + c) * 2 + 1] = line[2 * r + 1] * sc;
		}
	}
	free(tmp), free(line), free(xd);
}

static void check_2d(int h, int w, int technique)
{
	size_t e = (size_t)w * h;
	float *x = malloc(e * 2 * sizeof *x), *y = malloc(e * 2 * sizeof *y), *z = malloc(e * 2 * sizeof *z);
	double *ref = malloc(e * 2 * sizeof *ref), *xd = malloc(e * 2 * sizeof *xd);
	tu_fill_f32(x, e * 2, -1, 1);
	ref_2d(x, ref, w, h, 0);
	struct fft_opts o = {.technique = technique, .components = 2};
	struct fft *f;
	char err[FFT_ERR_LEN];
	int rc = fft_create(g_pc, g_info, w, h, FFT_BOTH, &o, NULL, &f, err);
	if (rc)
		printf("fft_create %dx%d: %s\n", h, w, err);
	assert_int_equal(rc, 0);
	GLuint b = upload(x, e * 2);
	assert_int_equal(fft_execute(f, b, 0), 0);
	download(b, y, e * 2);
	char name[96];
	snprintf(name, sizeof name, "2D %dx%d forward %s (rows %s, cols %s)", h, w,
	         tech_name(technique), fft_plan_kind(fft_axis_plan(fft_rows(f))),
	         fft_plan_kind(fft_axis_plan(fft_cols(f))));
	int ok = tu_check(name, y, ref, e * 2, TOL);
	if (technique == FFT_TECH_BLOCKED && h > 1) /* columns blocked, rows as auto */
		ok &= !strcmp(fft_plan_kind(fft_axis_plan(fft_cols(f))), "blocked") &&
		      strcmp(fft_plan_kind(fft_axis_plan(fft_rows(f))), "blocked");
	/* round trip back to x */
	assert_int_equal(fft_execute(f, b, 1), 0);
	download(b, z, e * 2);
	for (size_t i = 0; i < e * 2; i++)
		xd[i] = x[i];
	snprintf(name, sizeof name, "2D %dx%d round trip", h, w);
	ok &= tu_check(name, z, xd, e * 2, TOL);
	glDeleteBuffers(1, &b);
	fft_destroy(f);
	free(x), free(y), free(z), free(ref), free(xd);
	assert_true(ok);
}

static void test_2d_shapes(void **state)
{
	(void)state;
	check_2d(1, 1, FFT_TECH_AUTO);
	check_2d(3, 5, FFT_TECH_AUTO);
	check_2d(3, 5, FFT_TECH_GLOBAL);
	check_2d(64, 1, FFT_TECH_AUTO);
	check_2d(37, 23, FFT_TECH_SHARED);
	check_2d(17, 4096, FFT_TECH_AUTO);
	check_2d(1080, 1920, FFT_TECH_AUTO);
	check_2d(256, 243, FFT_TECH_GLOBAL);
}

static void test_linearity(void **state)
{
	(void)state;
	/* FFT(a*x + b*y) = a*FFT(x) + b*FFT(y), checked on the GPU results alone (a property of the
	 * GPU path; the transforms themselves are checked against the CPU in the tests above) */
	int n = 1000, count = 4;
	size_t fl = (size_t)n * count * 2;
	float *x = malloc(fl * sizeof *x), *y = malloc(fl * sizeof *y), *s = malloc(fl * sizeof *s);
	float *fx = malloc(fl * sizeof *fx), *fy = malloc(fl * sizeof *fy), *fs = malloc(fl * sizeof *fs);
	double *comb = malloc(fl * sizeof *comb);
	tu_fill_f32(x, fl, -1, 1);
	tu_fill_f32(y, fl, -1, 1);
	const float a = 0.75f, bb = -1.5f;
	for (size_t i = 0; i < fl; i++)
		s[i] = a * x[i] + bb * y[i];
	struct fft_opts o = {.technique = FFT_TECH_AUTO, .components = 2};
	struct fft_axis *ax;
	char err[FFT_ERR_LEN];
	assert_int_equal(fft_axis_create(g_pc, g_info, n, 0, (size_t)n * count, count, &o, NULL, &ax, err), 0);
	float *in[3] = {x, y, s}, *out[3] = {fx, fy, fs};
	for (int k = 0; k < 3; k++) {
		GLuint b = upload(in[k], fl);
		assert_int_equal(fft_axis_execute(ax, b, 0, (size_t)n, 1, count, 0), 0);
		download(b, out[k], fl);
		glDeleteBuffers(1, &b);
	}
	for (size_t i = 0; i < fl; i++)
		comb[i] = (double)a * fx[i] + (double)bb * fy[i];
	int ok = tu_check("linearity n=1000", fs, comb, fl, TOL);
	fft_axis_destroy(ax);
	free(x), free(y), free(s), free(fx), free(fy), free(fs), free(comb);
	assert_true(ok);
}

/* fft_io takes only rows of a native length run in shared memory: a Bluestein length, columns
 * and no hooks are refused (FFT_E_PLAN, nothing built), as are unknown flags, tiles past
 * FFT_TILE_LOG_MAX and the pair order or tiles with both hooks; rows of 40 with a store hook are
 * built, and a load hook with the data side in the pair order and tiles; a tiled program refuses
 * tiles closer than its rows.
 * (What the hooks compute is tested through the bloom: test_bloom test_ends_and_layouts.) */
static void test_io_refusals(void **state)
{
	(void)state;
	struct fft_opts o = {.technique = FFT_TECH_SHARED, .components = 4};
	static const struct {
		int n, adjacent, io, want;
	} cases[] = {{17, 0, FFT_IO_STORE, FFT_E_PLAN}, {40, 1, FFT_IO_STORE, FFT_E_PLAN},
	             {40, 0, 0, FFT_E_PLAN}, {40, 0, FFT_IO_PAIRS, FFT_E_PLAN},
	             {40, 0, FFT_IO_STORE | 64, FFT_E_PLAN}, {40, 0, FFT_IO_TILES(3), FFT_E_PLAN},
	             {40, 0, FFT_IO_LOAD | FFT_IO_STORE | FFT_IO_PAIRS, FFT_E_PLAN},
	             {40, 0, FFT_IO_LOAD | FFT_IO_STORE | FFT_IO_TILES(1), FFT_E_PLAN},
	             {40, 0, FFT_IO_STORE | FFT_IO_TILES(FFT_TILE_LOG_MAX + 1), FFT_E_PLAN},
	             {40, 0, FFT_IO_STORE, 0}, {40, 0, FFT_IO_STORE | FFT_IO_PAIRS, 0},
	             {40, 0, FFT_IO_LOAD | FFT_IO_PAIRS | FFT_IO_TILES(3), 0}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fft_axis *ax;
		struct fft_io *f = (struct fft_io *)&o; /* must be cleared on refusal */
		char err[FFT_ERR_LEN];
		int n = cases[i].n;
		assert_int_equal(fft_axis_create(g_pc, g_info, n, cases[i].adjacent, (size_t)n * 8, 8, &o,
		                                 NULL, &ax, err), 0);
		int rc = fft_io_create(g_pc, ax, 1, cases[i].io, "bloom_math+bloom_io", 0, &f, err);
		printf("fft_io n %d adjacent %d io %d: %d%s%s\n", n, cases[i].adjacent, cases[i].io, rc,
		       rc ? ", " : "", rc ? err : "");
		assert_int_equal(rc, cases[i].want);
		if (rc) {
			assert_null(f);
		} else {
			assert_true(fft_io_program(f) != 0);
			int tl = FFT_IO_TILE_LOG(cases[i].io);
			if (tl) /* 8 rows in tiles of 2^tl: tiles at least 8 << tl elements apart */
				assert_int_equal(fft_io_execute(f, 0, 0, ((size_t)8 << tl) - 1, 8), FFT_E_ARG);
		}
		fft_io_destroy(f);
		fft_axis_destroy(ax);
	}
	/* a fused convolution in the pair order or in tiles runs on columns only, its tiles at
	 * least a tile's elements apart; a layout of other flags or wider tiles is refused */
	struct fft_conv *c;
	char err[FFT_ERR_LEN];
	assert_int_equal(fft_conv_create(g_pc, g_info, 16, 12, 0, FFT_IO_PAIRS, &o, &c, err), 0);
	GLuint b, k;
	glGenBuffers(1, &b);
	glGenBuffers(1, &k);
	assert_int_equal(fft_conv_execute(c, b, k, 0, 16, 0), FFT_E_ARG);
	assert_int_equal(fft_conv_execute(c, b, k, 1, 16, 11), FFT_E_ARG); /* rows overlap */
	struct fft_conv *cg = (struct fft_conv *)&o;
	assert_int_equal(fft_conv_create(g_pc, g_info, 16, 12, 1, FFT_IO_PAIRS, &o, &cg, err), FFT_E_ARG);
	assert_null(cg);
	static const int bad_layouts[] = {FFT_IO_LOAD, FFT_IO_TILES(FFT_TILE_LOG_MAX + 1)};
	for (int i = 0; i < 2; i++) {
		cg = (struct fft_conv *)&o;
		assert_int_equal(fft_conv_create(g_pc, g_info, 16, 12, 0, bad_layouts[i], &o, &cg, err),
		                 FFT_E_ARG);
		assert_null(cg);
	}
	assert_int_equal(fft_conv_create(g_pc, g_info, 16, 12, 1, FFT_IO_TILES(2), &o, &cg, err), 0);
	assert_int_equal(fft_conv_execute(cg, b, k, 0, 16, 64), FFT_E_ARG);
	assert_int_equal(fft_conv_execute(cg, b, k, 1, 16, 63), FFT_E_ARG); /* tiles overlap */
	fft_conv_destroy(cg);
	glDeleteBuffers(1, &b);
	glDeleteBuffers(1, &k);
	fft_conv_destroy(c);
}

struct used;
static void check_opts(int n, int count, int adjacent, const struct fft_opts *o, int inverse,
                       const char *want, struct used *u);

/* The ends' lines (fft_wisdom_key.io, the 15th field): written and read back under their own
 * key, apart from the plain transform's; a line of the ends for columns, or with io past 1, is
 * ignored. An axis made with fft_opts.io runs the ends' line where there is one; else the plain
 * transform's and says so (fft_axis_io_unmeasured), with nothing of the ends queued. Its
 * candidates to measure (fft_io_tune_candidates): its own count first, distinct, each within
 * the device and FFT_TUNE_MAX_VALUES values an invocation, among them n / r for its radices;
 * fft_axis_shape makes their shapes without a program (fft_axis_execute refuses it), and the
 * io program is built on one. */
static void check_io_wisdom(const char *path)
{
	struct fft_wisdom *w;
	struct fft_wisdom_choice ch;
	char err[FFT_ERR_LEN];
	remove(path);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "test driver|96|4|0|0|0|2|1|24|0.01|0|0|0|0|1\n"
	           "test driver|96|4|1|0|0|2|1|24|0.01|0|0|0|0|1\n"
	           "test driver|96|4|0|0|0|3|1|24|0.01|0|0|0|0|2\n");
	fclose(f);
	assert_int_equal(fft_wisdom_create(path, "test driver", NULL, NULL, &w), 0);
	assert_int_equal(fft_wisdom_count(w), 1);
	fft_wisdom_set_measure(w, FFT_WISDOM_MEASURE_IDLE);
	struct fft_opts o = {.technique = FFT_TECH_AUTO, .components = 4, .io = 1, .wisdom = w};
	struct fft_wisdom_key k;
	fft_wisdom_key_of(96, 0, 4, &o, &k);
	assert_int_equal(k.io, 1);
	assert_int_equal(fft_wisdom_get(w, &k, &ch), 0);
	assert_int_equal(ch.threads, 24);
	k.io = 0;
	assert_int_equal(fft_wisdom_get(w, &k, &ch), -1); /* the plain transform's: none */
	struct fft_axis *a;
	assert_int_equal(fft_axis_create(g_pc, g_info, 96, 0, 96 * 4, 4, &o, NULL, &a, err), 0);
	assert_int_equal(fft_axis_plan(a)->threads, 24);
	assert_int_equal(fft_axis_io_unmeasured(a), 0);
	assert_int_equal(fft_wisdom_pending_count(w), 0);
	fft_axis_destroy(a);
	/* put and read back: its own key, beside a plain line of the same shape */
	struct fft_wisdom_key k2;
	fft_wisdom_key_of(96, 0, 8, &o, &k2);
	struct fft_wisdom_choice c2 = {FFT_TECH_SHARED, 32, 0, 0}, c3 = {FFT_TECH_SHARED, 12, 0, 0};
	fft_wisdom_put(w, &k2, &c2, 0.25);
	k2.io = 0;
	fft_wisdom_put(w, &k2, &c3, 0.5);
	fft_wisdom_destroy(w);
	assert_int_equal(fft_wisdom_create(path, "test driver", NULL, NULL, &w), 0);
	assert_int_equal(fft_wisdom_count(w), 3);
	assert_int_equal(fft_wisdom_get(w, &k2, &ch), 0);
	assert_int_equal(ch.threads, 12);
	k2.io = 1;
	assert_int_equal(fft_wisdom_get(w, &k2, &ch), 0);
	assert_int_equal(ch.threads, 32);
	/* no line of the ends (a batch of 16): the plain transform's (queued), and said so */
	fft_wisdom_set_measure(w, FFT_WISDOM_MEASURE_IDLE);
	o.wisdom = w;
	assert_int_equal(fft_axis_create(g_pc, g_info, 96, 0, 96 * 16, 16, &o, NULL, &a, err), 0);
	assert_int_equal(fft_axis_io_unmeasured(a), 1);
	assert_int_equal(fft_wisdom_pending_count(w), 1);
	struct fft_wisdom_pending pend;
	assert_int_equal(fft_wisdom_next_pending(w, &pend), 0);
	assert_int_equal(pend.k.io, 0); /* only the plain transform is the FFT tuner's to measure */
	int threads[FFT_IO_TUNE_MAX], n = fft_io_tune_candidates(g_info, a, threads);
	const struct fft_plan *p = fft_axis_plan(a);
	printf("rows of 96 on %d invocations: %d candidates:", p->threads, n);
	for (int i = 0; i < n; i++)
		printf(" %d", threads[i]);
	printf("\n");
	assert_true(n >= 2);
	assert_int_equal(threads[0], p->threads);
	for (int i = 0; i < n; i++) {
		assert_true(threads[i] >= 1 && threads[i] <= g_info->max_invocations);
		assert_true(threads[i] * FFT_TUNE_MAX_VALUES >= 96);
		for (int j = 0; j < i; j++)
			assert_true(threads[j] != threads[i]);
	}
	for (int r = 0; r < p->npasses; r++) { /* a butterfly an invocation in each pass */
		int found = 0;
		for (int i = 0; i < n; i++)
			found |= threads[i] == 96 / p->pass[r].radix;
		assert_true(found || 96 / p->pass[r].radix * FFT_TUNE_MAX_VALUES < 96);
	}
	struct fft_opts so = {.technique = FFT_TECH_SHARED, .components = 4, .threads = threads[1]};
	struct fft_axis *sa;
	assert_int_equal(fft_axis_shape(g_pc, g_info, 96, 96 * 16, 16, &so, &sa, err), 0);
	assert_int_equal(fft_axis_plan(sa)->threads, threads[1]);
	assert_int_equal(fft_axis_execute(sa, 0, 0, 96, 1, 16, 0), FFT_E_ARG);
	struct fft_io *io; /* the shape's io program is built: what the shape is for */
	assert_int_equal(fft_io_create(g_pc, sa, 0, FFT_IO_LOAD, "bloom_math+bloom_io", 0, &io,
	                               err), 0);
	assert_true(fft_io_program(io) != 0);
	fft_io_destroy(io);
	fft_axis_destroy(sa);
	fft_axis_destroy(a);
	fft_wisdom_destroy(w);
	/* a column's axis has no ends: fft_opts.io does nothing there (on a wisdom with no line) */
	assert_int_equal(fft_wisdom_create("", "test driver", NULL, NULL, &w), 0);
	fft_wisdom_set_measure(w, FFT_WISDOM_MEASURE_IDLE);
	o.wisdom = w;
	assert_int_equal(fft_axis_create(g_pc, g_info, 96, 1, 96 * 16, 16, &o, NULL, &a, err), 0);
	assert_int_equal(fft_axis_io_unmeasured(a), 0);
	assert_int_equal(fft_io_tune_candidates(g_info, a, threads), 0);
	assert_int_equal(fft_wisdom_next_pending(w, &pend), 0);
	assert_int_equal(pend.k.io, 0);
	assert_int_equal(pend.k.adjacent, 1);
	fft_axis_destroy(a);
	fft_wisdom_destroy(w);
}

static void test_wisdom(void **state)
{
	(void)state;
	/* the measured shape computes the same transform, is remembered in the file, and a second
	 * creation of the shape measures nothing */
	char path[] = "/tmp/fftbloom-wisdom-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct fft_wisdom *w;
	assert_int_equal(fft_wisdom_create(path, "test driver", NULL, NULL, &w), 0);
	int n = 360, count = 5;
	float *x = malloc((size_t)n * count * 2 * sizeof *x), *y = malloc((size_t)n * count * 2 * sizeof *y);
	double *ref = malloc((size_t)n * count * 2 * sizeof *ref), *xd = malloc((size_t)n * 2 * sizeof *xd);
	tu_fill_f32(x, (size_t)n * count * 2, -1, 1);
	for (int sg = 0; sg < count; sg++) {
		for (int i = 0; i < 2 * n; i++)
			xd[i] = x[(size_t)sg * n * 2 + i];
		dft_ref(xd, 1, ref + (size_t)sg * n * 2, n, -1);
	}
	struct fft_opts o = {.technique = FFT_TECH_AUTO, .components = 2, .wisdom = w};
	struct fft_axis *a;
	char err[FFT_ERR_LEN];
	assert_int_equal(fft_axis_create(g_pc, g_info, n, 0, (size_t)n * count, count, &o, NULL, &a, err), 0);
	assert_int_equal(fft_wisdom_count(w), 1);
	GLuint b = upload(x, (size_t)n * count * 2);
	assert_int_equal(fft_axis_execute(a, b, 0, (size_t)n, 1, count, 0), 0);
	download(b, y, (size_t)n * count * 2);
	const struct fft_plan *p = fft_axis_plan(a);
	printf("wisdom chose %s with %d invocations\n", fft_plan_kind(p), p->threads);
	int ok = tu_check("n=360 rows, shape from wisdom", y, ref, (size_t)n * count * 2, TOL);
	fft_axis_destroy(a);
	/* vec4 signals of the same length are another key: measured and kept apart */
	o.components = 4;
	assert_int_equal(fft_axis_create(g_pc, g_info, n, 0, (size_t)n * count, count, &o, NULL, &a, err), 0);
	assert_int_equal(fft_wisdom_count(w), 2);
	fft_axis_destroy(a);
	fft_wisdom_destroy(w);
	/* reloaded from the file: known, so the same choices without measuring */
	assert_int_equal(fft_wisdom_create(path, "test driver", NULL, NULL, &w), 0);
	assert_int_equal(fft_wisdom_count(w), 2);
	struct fft_wisdom_key k = {.n = n, .components = 2, .count_log2 = 2};
	struct fft_wisdom_choice ch;
	assert_int_equal(fft_wisdom_get(w, &k, &ch), 0);
	k.components = 4;
	assert_int_equal(fft_wisdom_get(w, &k, &ch), 0);
	k.half = 1;
	assert_int_equal(fft_wisdom_get(w, &k, &ch), -1);
	fft_wisdom_destroy(w);
	/* a line written before signals (or split) existed reads them as 0 (the plan's choice);
	 * lines measured with table twiddles, radix 16 or composite radices (fields 6, 12, 13) are
	 * ignored, and so is a split other than 0, 1 or 2 (field 14) */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "test driver|1000|2|1|0|0|4|3|16|0.01234\n"
	           "test driver|1000|2|0|0|1|4|1|64|0.01234|0|0|0\n"
	           "test driver|1000|2|0|1|0|4|1|64|0.01234|0|16|0\n"
	           "test driver|1000|2|0|1|0|5|1|64|0.01234|0|0|1\n"
	           "test driver|1080|2|1|0|0|10|1|128|0.02305|8|0|0|1\n"
	           "test driver|1200|2|1|0|0|10|1|128|0.02305|8|0|0|3\n");
	fclose(f);
	assert_int_equal(fft_wisdom_create(path, "test driver", NULL, NULL, &w), 0);
	assert_int_equal(fft_wisdom_count(w), 2);
	struct fft_wisdom_key old = {.n = 1000, .components = 2, .adjacent = 1, .count_log2 = 4};
	assert_int_equal(fft_wisdom_get(w, &old, &ch), 0);
	assert_true(ch.technique == FFT_TECH_BLOCKED && ch.threads == 16 && ch.signals == 0 &&
	            ch.split == 0);
	struct fft_wisdom_key ks = {.n = 1080, .components = 2, .adjacent = 1, .count_log2 = 10};
	assert_int_equal(fft_wisdom_get(w, &ks, &ch), 0);
	assert_true(ch.technique == FFT_TECH_SHARED && ch.threads == 128 && ch.signals == 8 &&
	            ch.split == 1);
	/* put writes the split; read back, the same choice */
	ks.n = 1152;
	fft_wisdom_put(w, &ks, &ch, 0.5);
	fft_wisdom_destroy(w);
	assert_int_equal(fft_wisdom_create(path, "test driver", NULL, NULL, &w), 0);
	assert_int_equal(fft_wisdom_count(w), 3);
	struct fft_wisdom_choice back;
	assert_int_equal(fft_wisdom_get(w, &ks, &back), 0);
	assert_true(back.technique == FFT_TECH_SHARED && back.threads == 128 && back.signals == 8 &&
	            back.split == 1);
	/* and the axis built from it is that shape (one pass, float rounds) where it fits */
	struct fft_opts os = {.technique = FFT_TECH_AUTO, .components = 2, .wisdom = w};
	struct fft_wisdom_key k1 = {.n = 1000, .components = 2, .adjacent = 1, .count_log2 = 3};
	struct fft_wisdom_choice c1 = {FFT_TECH_SHARED, 64, 4, 1};
	fft_wisdom_put(w, &k1, &c1, 0.5);
	assert_int_equal(fft_axis_create(g_pc, g_info, 1000, 1, 1000 * 9, 9, &os, NULL, &a, err), 0);
	p = fft_axis_plan(a);
	assert_true(p->shared && p->split && p->signals == 4 && p->threads == 64);
	fft_axis_destroy(a);
	check_opts(1000, 9, 1, &os, 0, "shared", NULL);
	fft_wisdom_destroy(w);
	assert_int_equal(fft_wisdom_create(path, "another driver", NULL, NULL, &w), 0);
	assert_int_equal(fft_wisdom_count(w), 0); /* other drivers' lines are ignored */
	fft_wisdom_destroy(w);
	/* a split asked for (a measuring option) shapes the axis built, not what is measured and
	 * remembered */
	assert_int_equal(fft_wisdom_create("", "test driver", NULL, NULL, &w), 0);
	struct fft_opts om = {.technique = FFT_TECH_AUTO, .components = 2, .split = 1, .wisdom = w};
	assert_int_equal(fft_axis_create(g_pc, g_info, 96, 0, 96 * 4, 4, &om, NULL, &a, err), 0);
	assert_int_equal(fft_axis_plan(a)->split, 1);
	fft_axis_destroy(a);
	struct fft_wisdom_key km = {.n = 96, .components = 2, .count_log2 = 2};
	assert_int_equal(fft_wisdom_get(w, &km, &ch), 0);
	assert_int_equal(ch.split, 0);
	fft_wisdom_destroy(w);
	check_io_wisdom(path);
	remove(path);
	glDeleteBuffers(1, &b);
	free(x), free(y), free(ref), free(xd);
	assert_true(ok);
}

static void test_plan_cache(void **state)
{
	(void)state;
	struct fft_cache *c;
	assert_int_equal(fft_cache_create(g_pc, g_info, NULL, 2, &c), 0);
	struct fft_opts o = {.technique = FFT_TECH_AUTO, .components = 2};
	struct fft *a, *b, *d, *e;
	char err[FFT_ERR_LEN];
	assert_int_equal(fft_cache_get(c, 48, 30, FFT_BOTH, &o, &a, err), 0);
	assert_int_equal(fft_cache_get(c, 48, 30, FFT_BOTH, &o, &b, err), 0);
	assert_ptr_equal(a, b); /* same size and options: the same plan */
	o.technique = FFT_TECH_GLOBAL;
	assert_int_equal(fft_cache_get(c, 48, 30, FFT_BOTH, &o, &d, err), 0);
	assert_ptr_not_equal(a, d); /* other options: another plan */
	o.technique = FFT_TECH_AUTO;
	assert_int_equal(fft_cache_get(c, 48, 30, FFT_ROWS, &o, &e, err), 0); /* evicts LRU */
	unsigned long long hits, misses;
	int plans;
	fft_cache_stats(c, &hits, &misses, &plans);
	printf("plan cache: %llu hits, %llu misses, %d plans\n", hits, misses, plans);
	assert_true(hits == 1 && misses == 3 && plans == 2);
	/* the plan from the cache computes the transform */
	size_t n = 48 * 30 * 2;
	float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
	double *ref = malloc(n * sizeof *ref);
	tu_fill_f32(x, n, -1, 1);
	ref_2d(x, ref, 48, 30, 0);
	assert_int_equal(fft_cache_get(c, 48, 30, FFT_BOTH, &o, &a, err), 0);
	GLuint buf = upload(x, n);
	assert_int_equal(fft_execute(a, buf, 0), 0);
	download(buf, y, n);
	int ok = tu_check("cached plan 30x48", y, ref, n, TOL);
	glDeleteBuffers(1, &buf);
	free(x), free(y), free(ref);
	fft_cache_destroy(c);
	assert_true(ok);
}

/* ---- the blocked technique ---- */

/* float to IEEE half (round to nearest, ties away; normal and subnormal range) and back. */
static unsigned short to_half(float f)
{
	unsigned u;
	memcpy(&u, &f, 4);
	unsigned sign = (u >> 16) & 0x8000u;
	float a = fabsf(f);
	if (a >= 65504.0f)
		return (unsigned short)(sign | 0x7bffu);
	if (a < 6.103515625e-05f) /* subnormal: units of 2^-24 */
		return (unsigned short)(sign | (unsigned)lrintf(a * 16777216.0f));
	int e;
	float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
	unsigned mant = (unsigned)lrintf((m * 2.0f - 1.0f) * 1024.0f);
	if (mant == 1024) {
		mant = 0;
		e++;
	}
	return (unsigned short)(sign | (unsigned)(e - 1 + 15) << 10 | mant);
}

static float from_half(unsigned short h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	float v = e ? ldexpf(1.0f + m / 1024.0f, e - 15) : ldexpf((float)m, -24);
	return (h & 0x8000) ? -v : v;
}

/* What a checked transform's plan did with its shared-memory exchanges (the padding's tests
 * assert that their cases use it). */
struct used {
	int shared, padded, split, checks;
};

/* One axis of `count` signals of length n, rows (adjacent 0) or columns, with options o (half:
 * the buffer holds float16, the reference starts from the rounded inputs), against the double
 * CPU FFT of every signal and component pair; the signals start `at` elements into the buffer,
 * whose elements before them must come back untouched. want: the plan kind expected
 * ("blocked", ...), or NULL. Fails the test on error above the tolerance. */
static void check_opts_at(int n, int count, int adjacent, const struct fft_opts *o, int inverse,
                          const char *want, struct used *u, size_t at)
{
	int comps = o->components;
	size_t elems = (size_t)n * count, floats = elems * comps;
	float *x = malloc(floats * sizeof *x), *y = malloc(floats * sizeof *y);
	unsigned short *h = malloc(floats * sizeof *h);
	double *ref = malloc(floats * sizeof *ref), *sig = malloc((size_t)n * 2 * sizeof *sig),
	       *sout = malloc((size_t)n * 2 * sizeof *sout);
	tu_fill_f32(x, floats, -1, 1);
	if (o->half)
		for (size_t i = 0; i < floats; i++) {
			h[i] = to_half(x[i]);
			x[i] = from_half(h[i]);
		}
	size_t sig_stride = adjacent ? 1 : (size_t)n, elem_stride = adjacent ? (size_t)count : 1;
	/* the scaled direction: inverse, or forward with norm_forward */
	double sc = (inverse != 0) != (o->norm_forward != 0) ? 1.0 / n : 1.0;
	for (int s = 0; s < count; s++)
		for (int pair = 0; pair < comps / 2; pair++) {
			for (int i = 0; i < n; i++) {
				size_t e = (size_t)s * sig_stride + (size_t)i * elem_stride;
				sig[2 * i] = x[e * comps + 2 * pair];
				sig[2 * i + 1] = x[e * comps + 2 * pair + 1];
			}
			assert_int_equal(fft_cpu(sig, 1, sout, n, inverse ? 1 : -1), 0);
			for (int i = 0; i < n; i++) {
				size_t e = (size_t)s * sig_stride + (size_t)i * elem_stride;
				ref[e * comps + 2 * pair] = sout[2 * i] * sc;
				ref[e * comps + 2 * pair + 1] = sout[2 * i + 1] * sc;
			}
		}
	struct fft_axis *a;
	char err[FFT_ERR_LEN];
	int rc = fft_axis_create(g_pc, g_info, n, adjacent, elems, count, o, NULL, &a, err);
	if (rc)
		printf("fft_axis_create(%d): %s\n", n, err);
	assert_int_equal(rc, 0);
	size_t esz = o->half ? 2 : 4, lead = at * (size_t)comps * esz; /* bytes before the signals */
	unsigned char *before = malloc(lead + 1), *after = malloc(lead + 1);
	for (size_t i = 0; i < lead; i++)
		before[i] = (unsigned char)(i * 37 + 11);
	GLuint b;
	glGenBuffers(1, &b);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(lead + floats * esz), NULL,
	             GL_DYNAMIC_COPY);
	if (lead)
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)lead, before);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, (GLintptr)lead, (GLsizeiptr)(floats * esz),
	                o->half ? (const void *)h : (const void *)x);
	assert_int_equal(fft_axis_execute(a, b, at, sig_stride, elem_stride, count, inverse), 0);
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
	const unsigned char *mp = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0,
	                                           (GLsizeiptr)(lead + floats * esz), GL_MAP_READ_BIT);
	assert_non_null(mp);
	memcpy(after, mp, lead);
	memcpy(o->half ? (void *)h : (void *)y, mp + lead, floats * esz);
	glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
	if (o->half)
		for (size_t i = 0; i < floats; i++)
			y[i] = from_half(h[i]);
	assert_memory_equal(before, after, lead);
	free(before), free(after);
	/* what the plan that ran (for Bluestein its form's or the inner one's) did with its
	 * exchanges */
	const struct fft_plan *p = fft_axis_plan(a), *pn = fft_axis_run_plan(a);
	int pads = 0;
	char xch[64] = "";
	for (int i = 0; pn->shared && i < pn->npasses; i++)
		pads += pn->pass[i].pad;
	if (pads)
		snprintf(xch, sizeof xch, " (%d padded)", pads);
	char name[200];
	snprintf(name, sizeof name, "n=%d x%d %s%s %s vec%d%s%s%s, %d sweeps of %d signals%s, at %zu",
	         n, count, inverse ? "inv " : "", adjacent ? "cols" : "rows", fft_plan_kind(p), comps,
	         o->half ? " half" : "", o->norm_forward ? " norm_forward" : "",
	         pn->split > 1 ? " split2" : pn->split ? " split" : "", pn->nsweeps, pn->signals, xch,
	         at);
	int ok = tu_check(name, y, ref, floats, o->half ? TOL_FP16 : TOL);
	if (u) {
		u->shared += pn->shared;
		u->padded += pads > 0;
		u->split += pn->shared && pn->split && pads;
		u->checks++;
	}
	if (want && strcmp(fft_plan_kind(p), want)) {
		printf("%s: planned %s, expected %s\n", name, fft_plan_kind(p), want);
		ok = 0;
	}
	glDeleteBuffers(1, &b);
	fft_axis_destroy(a);
	free(x), free(y), free(h), free(ref), free(sig), free(sout);
	assert_true(ok);
}

static void check_opts(int n, int count, int adjacent, const struct fft_opts *o, int inverse,
                       const char *want, struct used *u)
{
	check_opts_at(n, count, adjacent, o, inverse, want, u, 0);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

/* Bluestein's forms (fft_axis_bluestein_form), each against the direct DFT, rows and columns,
 * both directions: one dispatch where a vec2 signal of the inner length fits this context's
 * shared memory whole; with float rounds asked for (split 1), two where the inner length fits
 * in them; five past that and for float16 storage. 97 (inner 196), 2053 (inner 4116: past
 * llvmpipe's 32 KiB whole, within it in float rounds) and 4099 (inner 8232: past it in float
 * rounds) take every form on llvmpipe. */
static int bluestein_form(int n, int adjacent, const struct fft_opts *o, int *m)
{
	struct fft_axis *a;
	char err[FFT_ERR_LEN];
	int rc = fft_axis_create(g_pc, g_info, n, adjacent, (size_t)n * 3, 3, o, NULL, &a, err);
	if (rc)
		printf("fft_axis_create(%d): %s\n", n, err);
	assert_int_equal(rc, 0);
	*m = fft_axis_plan(a)->m;
	int form = fft_axis_bluestein_form(a);
	assert_true(form != 1 || fft_axis_inner(a) == NULL);
	fft_axis_destroy(a);
	return form;
}

static void test_bluestein_forms(void **state)
{
	(void)state;
	int ns[] = {97, 2053, 4099}, seen[6] = {0};
	long long limit = g_info->max_shared_memory;
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
		for (int adjacent = 0; adjacent < 2; adjacent++)
			for (int split = 0; split < 2; split++) {
				struct fft_opts o = {.technique = FFT_TECH_AUTO, .components = 2, .split = split};
				int m, form = bluestein_form(ns[i], adjacent, &o, &m);
				printf("n=%d %s split %d: inner %d, form %d\n", ns[i],
				       adjacent ? "cols" : "rows", split, m, form);
				if (split)
					assert_int_equal(form, (long long)m * 4 <= limit ? 2 : 5);
				else if ((long long)m * 8 <= limit)
					assert_int_equal(form, 1);
				else
					assert_true(form == 2 || form == 5);
				seen[form] = 1;
				check_opts(ns[i], 3, adjacent, &o, 0, NULL, NULL);
				check_opts(ns[i], 3, adjacent, &o, 1, NULL, NULL);
			}
	/* vec4 signals (two complex planes), whose inner 196 goes through shared memory whole */
	struct fft_opts o4 = {.technique = FFT_TECH_AUTO, .components = 4};
	int m;
	assert_int_equal(bluestein_form(97, 1, &o4, &m), 1);
	check_opts(97, 3, 0, &o4, 0, NULL, NULL);
	check_opts(97, 3, 1, &o4, 1, NULL, NULL);
	/* the filter multiplied in shared memory (fft_opts.mult_shared, the measuring form) rather
	 * than in registers: vec2, and vec4 in vec2 rounds (613 below) */
	struct fft_opts om = {.technique = FFT_TECH_AUTO, .components = 2, .mult_shared = 1};
	assert_int_equal(bluestein_form(97, 0, &om, &m), 1);
	check_opts(97, 3, 0, &om, 0, NULL, NULL);
	check_opts(97, 3, 1, &om, 1, NULL, NULL);
	/* vec4 past FFT_ROUNDS_ABOVE (613: inner 1225), whose rows the plan exchanges in four float
	 * rounds: the multiply needs vec2 rounds, which the form takes instead */
	assert_int_equal(bluestein_form(613, 0, &o4, &m), 1);
	check_opts(613, 3, 0, &o4, 0, NULL, NULL);
	check_opts(613, 3, 1, &o4, 1, NULL, NULL);
	om.components = 4;
	assert_int_equal(bluestein_form(613, 0, &om, &m), 1);
	check_opts(613, 3, 0, &om, 1, NULL, NULL);
	/* four vec4 rows a group asked for at 613: the vec2 rounds the multiply needs take twice
	 * the float rounds' shared memory, so the form takes fewer a group (llvmpipe: two) */
	struct fft_opts o4s = {.technique = FFT_TECH_AUTO, .components = 4, .signals = 4};
	assert_int_equal(bluestein_form(613, 0, &o4s, &m), 1);
	check_opts(613, 5, 0, &o4s, 0, NULL, NULL);
	/* float16 storage: the five-dispatch form */
	struct fft_opts oh = {.technique = FFT_TECH_AUTO, .components = 2, .half = 1};
	assert_int_equal(bluestein_form(97, 0, &oh, &m), 5);
	check_opts(97, 3, 0, &oh, 0, NULL, NULL);
	/* global passes asked for: the inner transform runs them (five dispatches) */
	struct fft_opts og = {.technique = FFT_TECH_GLOBAL, .components = 2};
	assert_int_equal(bluestein_form(97, 1, &og, &m), 5);
	check_opts(97, 3, 1, &og, 1, NULL, NULL);
	assert_true(seen[1] && seen[2]);
	/* the scale on the forward transform (norm_forward), in each form */
	struct fft_opts on[] = {{.technique = FFT_TECH_AUTO, .components = 2, .norm_forward = 1},
	                        {.technique = FFT_TECH_AUTO, .components = 2, .norm_forward = 1,
	                         .split = 1},
	                        {.technique = FFT_TECH_AUTO, .components = 2, .norm_forward = 1,
	                         .half = 1}};
	for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
		check_opts(97, 3, 0, &on[i], 0, NULL, NULL);
		check_opts(97, 3, 1, &on[i], 1, NULL, NULL);
	}
	/* signals that start past the buffer's first element, in each form, rows and columns */
	struct fft_opts oa[] = {{.technique = FFT_TECH_AUTO, .components = 2},
	                        {.technique = FFT_TECH_AUTO, .components = 2, .split = 1},
	                        {.technique = FFT_TECH_AUTO, .components = 2, .half = 1},
	                        {.technique = FFT_TECH_AUTO, .components = 4}};
	for (size_t i = 0; i < sizeof oa / sizeof oa[0]; i++) {
		check_opts_at(97, 3, 0, &oa[i], 0, NULL, NULL, 1001);
		check_opts_at(97, 4, 1, &oa[i], 1, NULL, NULL, 37);
	}
}

/* The idle tuner's shared candidates hold at most FFT_TUNE_MAX_VALUES elements an invocation;
 * short lengths keep the small invocation counts, long ones lose them; the rule's shape and
 * global passes are always there. */
static void test_tune_candidates(void **state)
{
	(void)state;
	static const int ns[] = {64, 512, 1024, 2048, 4096, 4375};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
		for (int adjacent = 0; adjacent < 2; adjacent++) {
			struct fft_opts o = {.technique = FFT_TECH_AUTO, .components = 2};
			struct fft_opts c[FFT_TUNE_MAX_CAND];
			int nc = fft_tune_candidates(g_info, ns[i], adjacent, 64, &o, c), shared = 0,
			    global = 0, small = 0;
			assert_true(nc >= 2 && nc <= FFT_TUNE_MAX_CAND);
			for (int k = 0; k < nc; k++) {
				if (c[k].technique == FFT_TECH_SHARED && c[k].threads) {
					assert_true((long long)c[k].threads * FFT_TUNE_MAX_VALUES >= ns[i]);
					small += c[k].threads <= 64;
				}
				shared += c[k].technique == FFT_TECH_SHARED;
				global += c[k].technique == FFT_TECH_GLOBAL;
			}
			printf("n=%d %s: %d candidates, %d shared\n", ns[i], adjacent ? "cols" : "rows", nc,
			       shared);
			assert_int_equal(global, 1);
			assert_true(shared >= 1);
			if (ns[i] <= 512) /* 32 and 64 invocations hold at most 16 and 8 */
				assert_true(small >= (g_info->max_invocations >= 64 ? 2 : 1));
		}
}

/* Under a compile budget that refuses the one-dispatch form's program, a Bluestein axis is
 * deferred (FFT_E_PROGRAM, program_cache_refused), not built in a slower form; without the
 * budget the same axis runs in one dispatch. */
static void test_bluestein_deferred(void **state)
{
	(void)state;
	struct fft_opts o = {.technique = FFT_TECH_AUTO, .components = 2, .threads = 8};
	struct fft_axis *a = NULL;
	char err[FFT_ERR_LEN];
	program_cache_budget(g_pc, 0);
	int rc = fft_axis_create(g_pc, g_info, 101, 0, 101 * 3, 3, &o, NULL, &a, err);
	int refused = program_cache_refused(g_pc);
	program_cache_budget(g_pc, -1);
	printf("under a budget of 0: %d (%s), refused %d\n", rc, rc ? err : "", refused);
	assert_int_equal(rc, FFT_E_PROGRAM);
	assert_non_null(strstr(err, "Bluestein's program deferred")); /* the form's, not a fallback's */
	assert_null(a);
	assert_true(refused);
	int m;
	assert_int_equal(bluestein_form(101, 0, &o, &m), 1);
	check_opts(101, 3, 0, &o, 0, NULL, NULL);
}

/* More Bluestein signals than one dispatch's work-group rows hold (65535): every form takes
 * them in several dispatches, rows and columns. Length 17 (inner 36) keeps the buffers small. */
static void test_bluestein_many(void **state)
{
	(void)state;
	struct fft_opts os[] = {{.technique = FFT_TECH_AUTO, .components = 2},
	                        {.technique = FFT_TECH_AUTO, .components = 2, .split = 1},
	                        {.technique = FFT_TECH_AUTO, .components = 2, .half = 1}};
	int count = 65535 + 77;
	for (size_t i = 0; i < sizeof os / sizeof os[0]; i++) {
		int m;
		printf("n=17 x%d: form %d\n", count, bluestein_form(17, 0, &os[i], &m));
		check_opts_at(17, count, 0, &os[i], 0, NULL, NULL, 5);
		check_opts(17, count, 1, &os[i], 1, NULL, NULL);
	}
}

/* The measuring probes (fft_opts.probe, fftbloom bench --fft-probe) do what they say: the copy
 * probe gives the input back bit for bit, the probe without butterflies only moves the values
 * (the output sorted is the input sorted), the twiddle-powers candidate is a transform within
 * the tolerance, and the probes that are wrong by design run. Rows of mixed-radix lengths in
 * shared memory, vec2 and vec4, forward and inverse. */
static void test_probes(void **state)
{
	(void)state;
	static const int lens[] = {60, 64, 243, 1000};
	for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
		for (int comps = 2; comps <= 4; comps += 2) {
			int n = lens[li], count = 5;
			size_t floats = (size_t)n * count * comps;
			float *x = malloc(floats * sizeof *x), *y = malloc(floats * sizeof *y);
			tu_fill_f32(x, floats, -1, 1);
			for (int probe = FFT_PROBE_COPY; probe < FFT_PROBE_COUNT; probe++) {
				if (probe == FFT_PROBE_TWIDDLE_POWERS) {
					struct fft_opts o = {.technique = FFT_TECH_SHARED, .components = comps,
					                     .probe = probe};
					check_opts(n, count, 0, &o, 0, "shared", NULL);
					check_opts(n, count, 0, &o, 1, "shared", NULL);
					continue;
				}
				struct fft_opts o = {.technique = FFT_TECH_SHARED, .components = comps,
				                     .probe = probe};
				struct fft_axis *a;
				char err[FFT_ERR_LEN];
				int rc = fft_axis_create(g_pc, g_info, n, 0, (size_t)n * count, count, &o, NULL,
				                         &a, err);
				if (rc)
					printf("probe %d, n=%d: %s\n", probe, n, err);
				assert_int_equal(rc, 0);
				GLuint b = upload(x, floats);
				assert_int_equal(fft_axis_execute(a, b, 0, (size_t)n, 1, count, 0), 0);
				download(b, y, floats);
				glDeleteBuffers(1, &b);
				fft_axis_destroy(a);
				if (probe == FFT_PROBE_COPY) {
					assert_memory_equal(x, y, floats * sizeof *x);
				} else if (probe == FFT_PROBE_NO_ARITHMETIC) {
					float *xs = malloc(floats * sizeof *xs);
					memcpy(xs, x, floats * sizeof *xs);
					qsort(xs, floats, sizeof *xs, cmp_float);
					qsort(y, floats, sizeof *y, cmp_float);
					int same = !memcmp(xs, y, floats * sizeof *xs);
					if (!same)
						printf("probe %d, n=%d vec%d: not a permutation of the input\n", probe, n,
						       comps);
					free(xs);
					assert_true(same);
				}
			}
			free(x), free(y);
		}
}

static void test_blocked_columns(void **state)
{
	(void)state;
	/* every length in one sweep (in place) and in two, a count of columns that is not a
	 * multiple of the group's; vec2 and vec4 each forward and inverse across the lengths */
	int ns[] = {2, 7, 60, 64, 243, 1000, 1080, 2048, 4096};
	for (int i = 0; i < (int)(sizeof ns / sizeof ns[0]); i++) {
		int inv = (i / 2) % 2;
		struct fft_opts o = {.technique = FFT_TECH_BLOCKED, .components = 2};
		check_opts(ns[i], 11, 1, &o, inv, "blocked", NULL);
		o.components = 4;
		check_opts(ns[i], 6, 1, &o, !inv, "blocked", NULL);
	}
	/* float16 storage (arithmetic float32) with the forward scaled, as bloom uses it */
	struct fft_opts oh = {.technique = FFT_TECH_BLOCKED, .components = 2, .half = 1,
	                      .norm_forward = 1};
	check_opts(7, 19, 1, &oh, 0, "blocked", NULL);
	check_opts(4096, 19, 1, &oh, 1, "blocked", NULL);
	oh.components = 4;
	check_opts(1080, 5, 1, &oh, 0, "blocked", NULL);
	/* three sweeps (an odd count: the data is copied to the scratch buffer first): 128 signals
	 * a group leave room for 32 vec2 values of each in llvmpipe's 32 KiB */
	struct fft_opts o3 = {.technique = FFT_TECH_BLOCKED, .components = 2, .signals = 128};
	check_opts(1000, 130, 1, &o3, 0, "blocked", NULL);
	check_opts(2048, 129, 1, &o3, 1, "blocked", NULL);
	/* fewer invocations than the plan's (more values each), as the tuner asks for */
	struct fft_opts ot = {.technique = FFT_TECH_BLOCKED, .components = 2, .threads = 4};
	check_opts(1024, 9, 1, &ot, 1, "blocked", NULL);
	/* rows asked for blocked are planned as auto */
	struct fft_opts orow = {.technique = FFT_TECH_BLOCKED, .components = 2};
	check_opts(1080, 3, 0, &orow, 0, "shared", NULL);
	/* a Bluestein length: its work rows are auto too */
	check_opts(97, 5, 1, &orow, 1, NULL, NULL);
}

/* The built-in rule's GPU choices (fft_plan_rule with software 0 and 48 KiB, as on the H200)
 * run on this context against the CPU reference: rows with 256 and 512 invocations a signal
 * (vec2 from 2048 in float rounds), vec2 columns to 1536 in one pass (8 or 4 a group, float
 * rounds), longer columns blocked with 128-byte rows (vec2 16 and vec4 8 signals a group, at
 * most 8 invocations each), float16 vec4 columns in global passes. */
static void test_rule_choices(void **state)
{
	(void)state;
	struct {
		int n, count, adjacent, comps, half;
		const char *want;
	} c[] = {
		{1024, 5, 0, 2, 0, "shared"}, {2187, 3, 0, 2, 0, "shared"}, {2240, 2, 0, 4, 0, NULL},
		{4096, 2, 0, 2, 0, "shared"}, {1080, 21, 1, 2, 0, "shared"}, {1344, 13, 1, 2, 0, "shared"},
		{2048, 9, 1, 4, 0, "blocked"}, {2048, 9, 1, 2, 0, "blocked"},
		{1344, 7, 1, 4, 1, "global"}, {1024, 6, 1, 2, 0, "shared"},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct fft_choice ch;
		/* the H200's shared memory (48 KiB), so that the one-pass columns are chosen */
		fft_plan_rule(c[i].n, c[i].adjacent, c[i].comps, c[i].half, 0, g_info->max_invocations,
		              49152, c[i].count, &ch);
		struct fft_opts o = {.technique = ch.technique, .components = c[i].comps,
		                     .half = c[i].half, .norm_forward = c[i].half, .threads = ch.threads,
		                     .signals = ch.signals, .split = ch.split};
		printf("rule n=%d %s vec%d%s: %s, %d invocations, %d signals%s\n", c[i].n,
		       c[i].adjacent ? "cols" : "rows", c[i].comps, c[i].half ? " half" : "",
		       fft_technique_name(ch.technique), ch.threads, ch.signals,
		       ch.split ? ", float rounds" : "");
		/* llvmpipe's shared memory may not hold a shape the H200's does: the plan's own then */
		struct fft_plan_opts po = {.technique = o.technique, .components = o.components,
		                           .shared_limit = g_info->max_shared_memory,
		                           .max_invocations = g_info->max_invocations,
		                           .signals_adjacent = c[i].adjacent, .threads = o.threads,
		                           .signals = o.signals, .half = o.half, .split = o.split};
		struct fft_plan p;
		const char *want = c[i].want;
		if (fft_plan_make(c[i].n, &po, &p)) {
			printf("  does not fit this device: the plan's choice runs\n");
			o.technique = FFT_TECH_AUTO;
			o.threads = o.signals = o.split = 0;
			want = NULL;
		}
		check_opts(c[i].n, c[i].count, c[i].adjacent, &o, (int)(i % 2), want, NULL);
	}
}

static void test_blocked_2d(void **state)
{
	(void)state;
	check_2d(4096, 64, FFT_TECH_BLOCKED);
	check_2d(1080, 96, FFT_TECH_BLOCKED);
}

struct log_capture {
	int blocked_ms_lines; /* "FFT tune ... blocked ...: X ms" lines with X > 0 */
};

static void capture(void *ctx, int level, const char *msg)
{
	struct log_capture *c = ctx;
	(void)level;
	const char *at = strstr(msg, " blocked: ");
	double ms;
	if (!strncmp(msg, "FFT tune", 8) && at && strstr(msg, " cols ") &&
	    sscanf(strrchr(msg, ':') + 1, "%lf", &ms) == 1 && ms > 0)
		c->blocked_ms_lines++;
}

static void test_blocked_wisdom(void **state)
{
	(void)state;
	/* tune measures the blocked shapes for columns beside shared and global; the remembered
	 * choice (whichever won on this driver) is valid and computes the transform */
	struct fft_wisdom *w;
	assert_int_equal(fft_wisdom_create("", "test driver", NULL, NULL, &w), 0);
	struct log_capture cap = {0};
	struct log_sink log = {capture, &cap};
	int n = 360, count = 16; /* small: llvmpipe compiles every candidate */
	struct fft_opts o = {.technique = FFT_TECH_AUTO, .components = 2, .wisdom = w};
	struct fft_axis *a;
	char err[FFT_ERR_LEN];
	assert_int_equal(fft_axis_create(g_pc, g_info, n, 1, (size_t)n * count, count, &o, &log, &a,
	                                 err), 0);
	printf("blocked shapes measured: %d\n", cap.blocked_ms_lines);
	assert_true(cap.blocked_ms_lines >= 3);
	struct fft_wisdom_key k = {.n = n, .components = 2, .adjacent = 1, .count_log2 = 4};
	struct fft_wisdom_choice ch;
	assert_int_equal(fft_wisdom_get(w, &k, &ch), 0);
	const struct fft_plan *p = fft_axis_plan(a);
	printf("wisdom chose %s (%s), %d signals x %d invocations\n",
	       fft_technique_name(ch.technique), fft_plan_kind(p), ch.signals, ch.threads);
	assert_true(ch.technique >= FFT_TECH_SHARED && ch.technique <= FFT_TECH_BLOCKED);
	assert_string_equal(fft_plan_kind(p), fft_technique_name(ch.technique));
	if (ch.technique == FFT_TECH_BLOCKED)
		assert_int_equal(p->signals, ch.signals);
	fft_axis_destroy(a);
	/* the choice, taken from wisdom, computes the transform */
	check_opts(n, count, 1, &o, 0, fft_technique_name(ch.technique), NULL);
	/* and blocked from wisdom: the stored signals and invocations rebuild the same plan */
	struct fft_wisdom_key kb = {.n = 1080, .components = 4, .adjacent = 1, .count_log2 = 2};
	struct fft_wisdom_choice cb = {FFT_TECH_BLOCKED, 16, 8, 0};
	fft_wisdom_put(w, &kb, &cb, 1.0);
	struct fft_opts o4 = {.technique = FFT_TECH_AUTO, .components = 4, .wisdom = w};
	assert_int_equal(fft_axis_create(g_pc, g_info, 1080, 1, 1080 * 5, 5, &o4, NULL, &a, err), 0);
	p = fft_axis_plan(a);
	assert_true(p->blocked && p->signals == 8 && p->threads <= 16);
	fft_axis_destroy(a);
	check_opts(1080, 5, 1, &o4, 1, "blocked", NULL);
	fft_wisdom_destroy(w);
}

/* The shared technique with every power-of-two length padded (pad_from 2; the product pads
 * from FFT_PAD_FROM, 4096, which does not fit llvmpipe's 32 KiB padded): lengths 2..64, 97 and
 * 127 (Bluestein; 127's inner length 256 has padded exchanges), 256, 1000, 1024, 2048 as rows and
 * columns in vec2 and vec4, forward and inverse; short signals on few invocations; float16
 * storage. (A padded vec4 exchange in two vec2 rounds, the bloom's 4096-long rows on the H200,
 * needs more than 32 KiB: test_padded runs it where the device has the room.) Adds to *u what
 * the plans used. */
static void check_padded(struct used *u)
{
	struct fft_opts o = {.technique = FFT_TECH_SHARED, .components = 2, .pad_from = 2};
	for (int n = 2; n <= 64; n++) {
		o.components = n % 6 ? 2 : 4;
		check_opts(n, 3, 0, &o, n % 2, NULL, u);
	}
	/* short signals on 8 invocations: several butterflies each, padded first passes */
	int short8[] = {8, 16, 32, 64};
	o.threads = 8;
	for (size_t i = 0; i < sizeof short8 / sizeof short8[0]; i++) {
		o.components = i % 2 ? 4 : 2;
		check_opts(short8[i], 5, 0, &o, i % 2 == 0, NULL, u);
	}
	o.threads = 0;
	int ns[] = {97, 127, 256, 1000, 1024, 2048};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
		for (int comps = 2; comps <= 4; comps += 2)
			for (int adjacent = 0; adjacent < 2; adjacent++) {
				o.components = comps;
				check_opts(ns[i], adjacent ? 5 : 2, adjacent, &o, (comps == 4) != adjacent, NULL, u);
			}
	o.components = 4;
	o.half = 1;
	check_opts(2048, 3, 0, &o, 0, NULL, u);
	o.components = 2;
	check_opts(1024, 7, 1, &o, 1, NULL, u);
	check_opts(256, 4, 0, &o, 1, NULL, u);
}

static void test_padded(void **state)
{
	(void)state;
	struct used u = {0};
	check_padded(&u);
	printf("padded exchanges: %d of %d transforms padded (%d split into vec2 rounds)\n", u.padded,
	       u.checks, u.split);
	assert_true(u.padded >= 10);
	/* the rule: the longest power-of-two vec4 row whose vec2-rounds layout fits this device,
	 * from FFT_PAD_FROM, exchanges in four float rounds, padded (the padded float array fits
	 * wherever the vec2 one does); vec2 rounds asked for: padded where the padded array fits
	 * too (the H200's 48 KiB), else the plain layout, not another shape (llvmpipe's 32 KiB;
	 * test_fft_plan checks both) */
	int n = FFT_PAD_FROM;
	while (n * 2 * 8 <= g_info->max_shared_memory)
		n *= 2;
	for (int split = 0; split <= 1; split++) {
		struct fft_opts o = {.technique = FFT_TECH_SHARED, .components = 4, .split = split};
		struct fft_axis *a;
		char err[FFT_ERR_LEN];
		assert_int_equal(fft_axis_create(g_pc, g_info, n, 0, (size_t)n, 1, &o, NULL, &a, err), 0);
		const struct fft_plan *p = fft_axis_plan(a);
		int elem = split ? 8 : 4, per = 128 / elem; /* a 128-byte period's elements */
		long long padded = (n + (n - 1) / per) * (long long)elem;
		printf("n=%d vec4: split %d, %d B shared of %d, bank_pad %d\n", n, p->split,
		       p->shared_bytes, g_info->max_shared_memory, p->bank_pad);
		assert_true(p->shared && p->split == (split ? 1 : 2));
		if (padded <= g_info->max_shared_memory)
			assert_true(p->bank_pad != 0 && p->shared_bytes == padded);
		else
			assert_true(split && p->bank_pad == 0 && p->shared_bytes == n * 8);
		fft_axis_destroy(a);
		/* and it computes the transform (padded or not) */
		check_opts(n, 2, 0, &o, 1, "shared", NULL);
	}
}

/* vec2 exchanged in two float rounds (fft_opts.split, half the shared memory a group) and vec4
 * in four (split 2), rows and columns, and the shared technique with the signals a group asked
 * for: forward and inverse against the CPU reference, padded exchanges included (pad_from
 * lowered). */
static void test_split_vec2(void **state)
{
	(void)state;
	struct used u = {0};
	int ns[] = {2, 7, 60, 64, 1080, 2048, 4096};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
		int n = ns[i], inv = (int)i % 2;
		struct fft_opts o = {.technique = FFT_TECH_SHARED, .components = 2, .split = 1};
		check_opts(n, 3, 0, &o, inv, "shared", &u);
		if (n * 4 * 4 <= g_info->max_shared_memory) { /* four columns a group */
			o.signals = 4;
			check_opts(n, 11, 1, &o, !inv, "shared", &u);
		}
		o.signals = 3; /* not a power of two, and fewer than the columns' count's multiple */
		if (n * 3 * 4 <= g_info->max_shared_memory)
			check_opts(n, 7, 1, &o, inv, "shared", &u);
	}
	/* padded float exchanges: 32 floats a 128-byte period */
	struct fft_opts op = {.technique = FFT_TECH_SHARED, .components = 2, .split = 1,
	                      .pad_from = 64};
	check_opts(64, 5, 0, &op, 0, "shared", &u);
	check_opts(1024, 2, 0, &op, 1, "shared", &u);
	op.signals = 2;
	check_opts(256, 9, 1, &op, 0, "shared", &u);
	/* vec4 in four float rounds (split 2), rows and columns, padded too */
	int n4[] = {5, 64, 1080, 2048};
	for (size_t i = 0; i < sizeof n4 / sizeof n4[0]; i++) {
		struct fft_opts o = {.technique = FFT_TECH_SHARED, .components = 4, .split = 2};
		check_opts(n4[i], 3, 0, &o, (int)i % 2, "shared", &u);
		o.signals = 2;
		check_opts(n4[i], 5, 1, &o, (int)(i + 1) % 2, "shared", &u);
	}
	struct fft_opts o4p = {.technique = FFT_TECH_SHARED, .components = 4, .split = 2,
	                       .pad_from = 64};
	check_opts(1024, 2, 0, &o4p, 1, "shared", &u);
	/* asked for through the rules and the wisdom (technique auto, as the bloom's rows ask):
	 * the level reaches the plan */
	struct fft_wisdom *w;
	assert_int_equal(fft_wisdom_create("", "test driver", NULL, NULL, &w), 0);
	fft_wisdom_set_measure(w, FFT_WISDOM_MEASURE_NEVER);
	for (int lvl = 1; lvl <= 2; lvl++) {
		struct fft_opts oa = {.technique = FFT_TECH_AUTO, .components = 4, .split = lvl,
		                      .wisdom = w};
		struct fft_axis *a;
		char err[FFT_ERR_LEN];
		assert_int_equal(fft_axis_create(g_pc, g_info, 240, 0, 240 * 3, 3, &oa, NULL, &a, err), 0);
		assert_int_equal(fft_axis_plan(a)->split, lvl);
		fft_axis_destroy(a);
		check_opts(240, 3, 0, &oa, lvl - 1, "shared", &u);
	}
	fft_wisdom_destroy(w);
	printf("split: %d of %d transforms padded\n", u.split, u.checks);
	assert_true(u.split >= 2);
	/* asked for more signals than fit, or than the invocations allow: refused, not shrunk */
	struct fft_opts big = {.technique = FFT_TECH_SHARED, .components = 2, .split = 1,
	                       .signals = 64};
	struct fft_axis *a;
	char err[FFT_ERR_LEN];
	assert_int_equal(fft_axis_create(g_pc, g_info, 2048, 1, 2048 * 64, 64, &big, NULL, &a, err),
	                 FFT_E_PLAN);
	big.signals = 16;
	big.threads = 128;
	assert_int_equal(fft_axis_create(g_pc, g_info, 64, 1, 64 * 16, 16, &big, NULL, &a, err),
	                 g_info->max_invocations >= 16 * 128 ? 0 : FFT_E_PLAN);
	if (g_info->max_invocations >= 16 * 128)
		fft_axis_destroy(a);
}

static void test_pad_keys(void **state)
{
	(void)state;
	struct fft_cache *c;
	struct fft_opts o = {.technique = FFT_TECH_SHARED, .components = 2};
	char err[FFT_ERR_LEN];
	/* pad_from is part of the plan key, and the padding of the program key (512: padded first
	 * exchanges) */
	assert_int_equal(fft_cache_create(g_pc, g_info, NULL, 4, &c), 0);
	struct fft *plain, *padded, *again;
	struct program_stats p0, p1;
	assert_int_equal(fft_cache_get(c, 512, 8, FFT_ROWS, &o, &plain, err), 0);
	program_cache_stats(g_pc, &p0);
	o.pad_from = 2;
	assert_int_equal(fft_cache_get(c, 512, 8, FFT_ROWS, &o, &padded, err), 0);
	program_cache_stats(g_pc, &p1);
	o.pad_from = 0;
	assert_int_equal(fft_cache_get(c, 512, 8, FFT_ROWS, &o, &again, err), 0);
	printf("padded plans: programs %u -> %u\n", p0.count, p1.count);
	assert_true(plain != padded && again == plain);
	assert_true(fft_axis_plan(fft_rows(padded))->bank_pad && !fft_axis_plan(fft_rows(plain))->bank_pad);
	assert_true(p1.count > p0.count);
	fft_cache_destroy(c);
}

int main(void)
{
	tu_seed_from_clock();
	tu_test_filter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_reference),
		cmocka_unit_test(test_every_small_length),
		cmocka_unit_test(test_larger_lengths),
		cmocka_unit_test(test_bluestein_forms),
		cmocka_unit_test(test_bluestein_many),
		cmocka_unit_test(test_bluestein_deferred),
		cmocka_unit_test(test_tune_candidates),
		cmocka_unit_test(test_columns_and_vec4),
		cmocka_unit_test(test_2d_shapes),
		cmocka_unit_test(test_linearity),
		cmocka_unit_test(test_wisdom),
		cmocka_unit_test(test_plan_cache),
		cmocka_unit_test(test_blocked_columns),
		cmocka_unit_test(test_blocked_2d),
		cmocka_unit_test(test_blocked_wisdom),
		cmocka_unit_test(test_rule_choices),
		cmocka_unit_test(test_padded),
		cmocka_unit_test(test_split_vec2),
		cmocka_unit_test(test_pad_keys),
		cmocka_unit_test(test_probes),
		cmocka_unit_test(test_io_refusals),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
