/* The shared FFT technique's two switches against double-precision CPU references (test_fft.c
 * covers the engine without them): padded exchanges (bank_pad) and subgroup transposes
 * (shuffles, or emulated through shared memory where the driver has none), float32 and float16
 * storage, and that both switches are in the plan and program keys. Fresh random data. */
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
/* float16 storage: input and output rounded to half (11 significant bits, so about 3e-4 rms
 * relative on the output); the stated bound is a relative L2 error of 2e-3, as the bloom's */
#define TOL_FP16 2e-3

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
	return t == FFT_TECH_SHARED ? "shared" : t == FFT_TECH_GLOBAL ? "global" : "auto";
}

/* IEEE half <-> float, round to nearest even (the GPU's packHalf2x16 may round either way; the
 * reference is computed from what was uploaded, so that does not matter). */
static unsigned short to_half(float f)
{
	unsigned u;
	memcpy(&u, &f, 4);
	unsigned sign = (u >> 16) & 0x8000u, e = (u >> 23) & 0xffu, man = u & 0x7fffffu;
	int ex = (int)e - 127 + 15;
	if (e == 0xff)
		return (unsigned short)(sign | 0x7c00u | (man ? 0x200u : 0));
	if (ex >= 31)
		return (unsigned short)(sign | 0x7c00u);
	if (ex <= 0) { /* subnormal half or zero */
		if (ex < -10)
			return (unsigned short)sign;
		man |= 0x800000u;
		int shift = 14 - ex;
		unsigned h = man >> shift, rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
		if (rem > halfway || (rem == halfway && (h & 1)))
			h++;
		return (unsigned short)(sign | h);
	}
	unsigned h = ((unsigned)ex << 10) | (man >> 13), rem = man & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
		h++; /* may carry into the exponent: still right */
	return (unsigned short)(sign | h);
}

static float from_half(unsigned short h)
{
	unsigned sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, man = h & 0x3ffu, u;
	if (e == 0) {
		float f = ldexpf((float)man, -24);
		return sign ? -f : f;
	}
	if (e == 31)
		u = sign | 0x7f800000u | (man << 13);
	else
		u = sign | ((e - 15 + 127) << 23) | (man << 13);
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* What a checked transform's plan did with its exchanges (the switches' tests assert that their
 * cases use them). */
struct used {
	int shared, padded, shuffled, split, checks;
};

/* Transforms `count` signals of length n laid out as rows (adjacent=0: signal s at s*n) or as
 * columns (adjacent=1: element i of signal s at i*count + s) of a matrix, with o->components
 * floats per element (float16 with o->half), and checks against the direct DFT of each
 * component pair. Adds what the plan used to *u (may be NULL). Returns the rel L2 error. */
static double check_axis_opts(int n, int count, int adjacent, const struct fft_opts *o,
                              int inverse, struct used *u)
{
	int comps = o->components;
	size_t elems = (size_t)n * count, floats = elems * comps;
	float *x = malloc(floats * sizeof *x), *y = malloc(floats * sizeof *y);
	double *xd = malloc(floats * sizeof *xd), *ref = malloc(floats * sizeof *ref);
	double *sig = calloc((size_t)n * 2, sizeof *sig), *sout = calloc((size_t)n * 2, sizeof *sout);
	unsigned short *h = o->half ? malloc(floats * sizeof *h) : NULL;
	tu_fill_f32(x, floats, -1, 1);
	for (size_t i = 0; i < floats; i++) {
		if (h) {
			h[i] = to_half(x[i]);
			x[i] = from_half(h[i]);
		}
		xd[i] = x[i];
	}
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
	struct fft_axis *a;
	char err[FFT_ERR_LEN];
	int rc = fft_axis_create(g_pc, g_info, n, adjacent, elems, count, o, NULL, &a, err);
	if (rc)
		printf("fft_axis_create(%d): %s\n", n, err);
	assert_int_equal(rc, 0);
	GLuint b;
	if (h) {
		glGenBuffers(1, &b);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
		glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(floats * 2), h, GL_DYNAMIC_COPY);
	} else {
		b = upload(x, floats);
	}
	assert_int_equal(fft_axis_execute(a, b, 0, sig_stride, elem_stride, count, inverse), 0);
	if (h) {
		download(b, x, floats / 2); /* the halves, as bytes */
		memcpy(h, x, floats * 2);
		for (size_t i = 0; i < floats; i++)
			y[i] = from_half(h[i]);
	} else {
		download(b, y, floats);
	}
	double rel = tu_rel_l2_f32(y, ref, floats), mx = tu_max_abs_f32(y, ref, floats);
	/* what the plan (the inner one for Bluestein) did with its exchanges */
	const struct fft_plan *p = fft_axis_plan(a), *pn = p;
	int pads = 0, shuffles = 0;
	char name[160], xch[64] = "";
	if (p->bluestein && fft_axis_inner(a))
		pn = fft_axis_plan(fft_axis_inner(a));
	for (int i = 0; pn->shared && i < pn->npasses; i++) {
		pads += pn->pass[i].pad;
		shuffles += pn->pass[i].shuffle;
	}
	if (pads || shuffles)
		snprintf(xch, sizeof xch, " (%d padded, %d shuffled%s)", pads, shuffles,
		         o->subgroup == FFT_SG_EMULATE ? ", emulated" : "");
	snprintf(name, sizeof name, "n=%d %s%s %s/%s vec%d%s%s %s%s%s", n, inverse ? "inv " : "",
	         adjacent ? "cols" : "rows", pn->shared ? "shared" : "global",
	         o->twiddles ? "table" : "computed", comps, pn->split ? " split" : "",
	         o->half ? " f16" : "", p->bluestein ? "bluestein " : "", tech_name(o->technique), xch);
	int ok = tu_report(name, rel, mx, o->half ? TOL_FP16 : TOL);
	if (u) {
		u->shared += pn->shared;
		u->padded += pads > 0;
		u->shuffled += shuffles > 0;
		u->split += pn->shared && pn->split && (pads || shuffles);
		u->checks++;
	}
	glDeleteBuffers(1, &b);
	fft_axis_destroy(a);
	free(x), free(y), free(xd), free(ref), free(sig), free(sout), free(h);
	assert_true(ok);
	return rel;
}

/* The shared technique with the switches: lengths 2..64, 97 and 127 (Bluestein; 127's inner
 * length 256 has padded and transposed exchanges), 243, 1000, 1080, 1920, 2048 as rows and
 * columns in vec2 and vec4, forward and inverse; vec4 exchanged in two vec2 rounds (3072 with a
 * padded exchange, 4096 with two transposes; 4096's padded array does not fit 32 KiB, so its
 * padding is dropped there); float16 storage. Adds to *u what the plans used. */
static void check_switches(int bank_pad, int subgroup, struct used *u)
{
	/* max_radix 8 as the other tests: where a switch changes nothing, their programs are reused */
	struct fft_opts o = {.technique = FFT_TECH_SHARED, .max_radix = 8, .components = 2,
	                     .bank_pad = bank_pad, .subgroup = subgroup};
	for (int n = 2; n <= 64; n++) {
		o.components = n % 6 ? 2 : 4;
		check_axis_opts(n, 3, 0, &o, n % 2, u);
	}
	/* short signals in radix-4 passes on 8 invocations: radix-4 transposes, padded first passes */
	int short4[] = {8, 16, 32, 48, 64};
	o.max_radix = 4;
	o.threads = 8;
	for (size_t i = 0; i < sizeof short4 / sizeof short4[0]; i++) {
		o.components = i % 2 ? 4 : 2;
		check_axis_opts(short4[i], 5, 0, &o, i % 2 == 0, u);
	}
	/* radix-16 passes: 256 = 16 * 16, one 16 x 16 transpose over 16 lanes */
	o.max_radix = 16;
	o.threads = 0;
	o.components = 2;
	check_axis_opts(256, 3, 0, &o, 0, u);
	o.max_radix = 8;
	int ns[] = {97, 127, 243, 1000, 1080, 1920, 2048};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
		for (int comps = 2; comps <= 4; comps += 2)
			for (int adjacent = 0; adjacent < 2; adjacent++) {
				o.components = comps;
				o.twiddles = adjacent ? FFT_TW_TABLE : FFT_TW_COMPUTED;
				check_axis_opts(ns[i], adjacent ? 5 : 2, adjacent, &o, (comps == 4) != adjacent, u);
			}
	o.twiddles = FFT_TW_COMPUTED;
	o.components = 4;
	check_axis_opts(3072, 2, 0, &o, 0, u);
	check_axis_opts(3072, 3, 0, &o, 1, u);
	check_axis_opts(4096, 2, 0, &o, 1, u);
	o.half = 1;
	check_axis_opts(2048, 3, 0, &o, 0, u);
	o.components = 2;
	check_axis_opts(1080, 7, 1, &o, 1, u);
	check_axis_opts(256, 4, 0, &o, 1, u);
}

static void test_switch_bank_pad(void **state)
{
	(void)state;
	struct used u = {0};
	check_switches(1, FFT_SG_OFF, &u);
	printf("bank padding: %d of %d transforms padded (%d split into vec2 rounds)\n", u.padded,
	       u.checks, u.split);
	assert_true(u.padded >= 10 && u.split >= 1);
	/* the longest power-of-two vec4 row whose split (vec2 rounds) layout fits this device: padded
	 * where the padded array fits too (the H200's 48 KiB), else the plain layout, not another
	 * shape (a power-of-two limit such as llvmpipe's 32 KiB; test_fft_plan checks both) */
	struct fft_opts o = {.technique = FFT_TECH_SHARED, .components = 4, .bank_pad = 1};
	struct fft_axis *a;
	char err[FFT_ERR_LEN];
	int n = 4096;
	while (n * 2 * 8 <= g_info->max_shared_memory)
		n *= 2;
	assert_int_equal(fft_axis_create(g_pc, g_info, n, 0, (size_t)n, 1, &o, NULL, &a, err), 0);
	const struct fft_plan *p = fft_axis_plan(a);
	long long padded = (n + (n - 1) / 16) * 8LL; /* vec2 rounds: 16 elements a 128-byte period */
	printf("n=%d vec4: %s, %d B shared of %d, bank_pad %d\n", n, p->split ? "split" : "whole",
	       p->shared_bytes, g_info->max_shared_memory, p->bank_pad);
	assert_true(p->shared && p->split);
	if (padded <= g_info->max_shared_memory)
		assert_true(p->bank_pad != 0 && p->shared_bytes == padded);
	else
		assert_true(p->bank_pad == 0 && p->shared_bytes == n * 8);
	fft_axis_destroy(a);
}

static void test_switch_subgroup_emulated(void **state)
{
	(void)state;
	/* the transposes' mappings, each shuffle done through shared memory: runs everywhere */
	struct used u = {0};
	check_switches(0, FFT_SG_EMULATE, &u);
	printf("subgroup transposes (emulated): %d of %d transforms (%d split)\n", u.shuffled,
	       u.checks, u.split);
	assert_true(u.shuffled >= 10 && u.split >= 1);
	memset(&u, 0, sizeof u);
	check_switches(1, FFT_SG_EMULATE, &u);
	printf("both (emulated): %d padded, %d transposed of %d\n", u.padded, u.shuffled, u.checks);
	assert_true(u.shuffled >= 10 && u.padded >= 5);
}

static void test_switch_subgroup(void **state)
{
	(void)state;
	if (!g_info->subgroup_shuffle || g_info->subgroup_size < 2) {
		printf("skipped: no subgroup shuffle (%s: GL_KHR_shader_subgroup %s, subgroup size %d)\n",
		       g_info->renderer, g_info->subgroup ? "without compute shuffles" : "missing",
		       g_info->subgroup_size);
		skip();
	}
	struct used u = {0};
	check_switches(0, FFT_SG_ON, &u);
	printf("subgroup transposes: %d of %d transforms, subgroup size %d\n", u.shuffled, u.checks,
	       g_info->subgroup_size);
	assert_true(u.shuffled >= 1);
	memset(&u, 0, sizeof u);
	check_switches(1, FFT_SG_ON, &u);
	assert_true(u.shuffled >= 1);
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
	o.twiddles = FFT_TW_TABLE;
	assert_int_equal(fft_cache_get(c, 48, 30, FFT_BOTH, &o, &d, err), 0);
	assert_ptr_not_equal(a, d); /* other options: another plan */
	o.twiddles = FFT_TW_COMPUTED;
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
	int ok = tu_report("cached plan 30x48", tu_rel_l2_f32(y, ref, n), tu_max_abs_f32(y, ref, n), TOL);
	glDeleteBuffers(1, &buf);
	free(x), free(y), free(ref);
	fft_cache_destroy(c);
	assert_true(ok);
	/* the switches are part of the plan key, and of the program key where they change the
	 * program (512: padded first exchanges, or a transpose of its first two radix-8 passes) */
	assert_int_equal(fft_cache_create(g_pc, g_info, NULL, 4, &c), 0);
	struct fft *plain, *padded, *sg, *again;
	struct program_stats p0, p1, p2;
	o.technique = FFT_TECH_SHARED;
	assert_int_equal(fft_cache_get(c, 512, 8, FFT_ROWS, &o, &plain, err), 0);
	program_cache_stats(g_pc, &p0);
	o.bank_pad = 1;
	assert_int_equal(fft_cache_get(c, 512, 8, FFT_ROWS, &o, &padded, err), 0);
	program_cache_stats(g_pc, &p1);
	o.bank_pad = 0;
	o.subgroup = FFT_SG_EMULATE;
	assert_int_equal(fft_cache_get(c, 512, 8, FFT_ROWS, &o, &sg, err), 0);
	program_cache_stats(g_pc, &p2);
	o.subgroup = FFT_SG_OFF;
	assert_int_equal(fft_cache_get(c, 512, 8, FFT_ROWS, &o, &again, err), 0);
	printf("switched plans: programs %u -> %u (padded) -> %u (transposed)\n", p0.count, p1.count,
	       p2.count);
	assert_true(plain != padded && plain != sg && padded != sg && again == plain);
	assert_true(fft_axis_plan(fft_rows(padded))->bank_pad && fft_axis_plan(fft_rows(sg))->subgroup);
	assert_true(p1.count > p0.count && p2.count > p1.count);
	fft_cache_destroy(c);
}

int main(void)
{
	tu_seed_from_clock();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_switch_bank_pad),
		cmocka_unit_test(test_switch_subgroup_emulated),
		cmocka_unit_test(test_switch_subgroup),
		cmocka_unit_test(test_plan_cache),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
