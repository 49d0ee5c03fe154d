/* The GPU convolution and bloom against independent double-precision CPU references: direct
 * convolution on small images (odd and even kernels, off-centre centres, colour and grayscale),
 * an FFT-based CPU convolution on larger ones, the bloom formula (prefilter, luminance
 * normalisation, add and mix), the packed colour path against per-channel runs, energy kept by
 * a normalised kernel, cache hits, kernel scale, presets and errors; the separate column passes
 * (where two columns do not fit shared memory) and padded exchanges in the fused column pass;
 * planes in and out, lent read-back buffers; overlap-save tiles; plans borrowed by new sizes
 * and built in idle time. Fresh random data. The tests against the references (and the presets
 * and errors) run a second time on the CPU engine (cpu/engine.h), with the same tolerances,
 * beside its own: tiles, plans, and the padded size at its longest transform. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/engine.h"
#include "gles/bloom.h"
#include "gles/fft.h"
#include "gles/fft_cpu.h"
#include "gles/fft_plan.h"
#include "gles/shader_src.h"
#include "tests/testutil.h"
#include "tests/yuv_ref.h"

#define TOL 1e-5

static struct program_cache *g_pc;
static struct bloom_ctx *g_b;

static int setup(void **state)
{
	(void)state;
	struct egl_ctx *ctx = tu_gl_context();
	if (!ctx)
		return -1;
	char err[BLOOM_ERR_LEN];
	if (program_cache_create("", NULL, &g_pc))
		return -1;
	return bloom_ctx_create(g_pc, egl_ctx_info(ctx), NULL, NULL, &g_b, err);
}

static int teardown(void **state)
{
	(void)state;
	bloom_ctx_destroy(g_b);
	program_cache_destroy(g_pc);
	return 0;
}

/* A whole w x h frame's padded width or height with a kw x kh kernel centred on cx, cy (both
 * engines': fft_conv_frame_size). */
static int frame_pw(int w, int h, int kw, int kh, int cx, int cy)
{
	int pw, ph;
	fft_conv_frame_size(w, h, kw, kh, cx, cy, &pw, &ph);
	return pw;
}

static int frame_ph(int w, int h, int kw, int kh, int cx, int cy)
{
	int pw, ph;
	fft_conv_frame_size(w, h, kw, kh, cx, cy, &pw, &ph);
	return ph;
}

static struct image rand_image(int w, int h, int c, float lo, float hi)
{
	struct image im;
	assert_int_equal(image_alloc(&im, w, h, c), 0);
	tu_fill_f32(im.pixels, (size_t)w * h * c, lo, hi);
	return im;
}

/* Kernel channel k for image channel ch (the engine's rule: gray kernels apply to every channel;
 * colour kernels R, G, B to R, G, B and their Rec. 709 luminance to alpha). */
static double kval(const struct image *k, int x, int y, int ch)
{
	const float *p = k->pixels + ((size_t)y * k->width + x) * k->channels;
	if (k->channels <= 2)
		return p[0];
	if (ch < 3)
		return p[ch];
	return 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
}

static double lum_sum(const struct image *k)
{
	double s = 0;
	for (int y = 0; y < k->height; y++)
		for (int x = 0; x < k->width; x++)
			s += 0.2126 * kval(k, x, y, 0) + 0.7152 * kval(k, x, y, 1) + 0.0722 * kval(k, x, y, 2);
	return s;
}

/* Direct linear convolution of RGBA data (w x h x 4 doubles) with the kernel, centre (cx, cy):
 * O[y,x] = sum_{j,i} I[y-(j-cy), x-(i-cx)] K[j,i], zero outside. */
static void conv_direct(const double *in, int w, int h, const struct image *k, int cx, int cy,
                        double scale, double *out)
{
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			for (int ch = 0; ch < 4; ch++) {
				double s = 0;
				for (int j = 0; j < k->height; j++) {
					int yy = y - (j - cy);
					if (yy < 0 || yy >= h)
						continue;
					for (int i = 0; i < k->width; i++) {
						int xx = x - (i - cx);
						if (xx < 0 || xx >= w)
							continue;
						s += in[((size_t)yy * w + xx) * 4 + ch] * kval(k, i, j, ch);
					}
				}
				out[((size_t)y * w + x) * 4 + ch] = s * scale;
			}
}

/* The same convolution through a CPU FFT in double (for sizes where the direct sum is slow). */
static void conv_fft(const double *in, int w, int h, const struct image *k, int cx, int cy,
                     double scale, double *out)
{
	int pw = w + k->width - 1, ph = h + k->height - 1;
	size_t n = (size_t)pw * ph;
	double *a = malloc(n * 2 * sizeof *a), *b = malloc(n * 2 * sizeof *b),
	       *t = malloc(n * 2 * sizeof *t), *line = malloc((size_t)(pw > ph ? pw : ph) * 2 * sizeof *line);
	for (int ch = 0; ch < 4; ch++) {
		memset(a, 0, n * 2 * sizeof *a);
		memset(b, 0, n * 2 * sizeof *b);
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++)
				a[((size_t)y * pw + x) * 2] = in[((size_t)y * w + x) * 4 + ch];
		for (int j = 0; j < k->height; j++)
			for (int i = 0; i < k->width; i++) {
				int yy = ((j - cy) % ph + ph) % ph, xx = ((i - cx) % pw + pw) % pw;
				b[((size_t)yy * pw + xx) * 2] = kval(k, i, j, ch);
			}
		double *bufs[2] = {a, b};
		for (int q = 0; q < 2; q++) { /* 2D forward FFT in place via t */
			double *d = bufs[q];
			for (int y = 0; y < ph; y++)
				fft_cpu(d + (size_t)y * pw * 2, 1, t + (size_t)y * pw * 2, pw, -1);
			for (int x = 0; x < pw; x++) {
				fft_cpu(t + (size_t)x * 2, (size_t)pw, line, ph, -1);
				for (int y = 0; y < ph; y++) {
					d[((size_t)y * pw + x) * 2] = line[2 * y];
					d[((size_t)y * pw + x) * 2 + 1] = line[2 * y + 1];
				}
			}
		}
		for (size_t i = 0; i < n; i++) {
			double re = a[2 * i] * b[2 * i] - a[2 * i + 1] * b[2 * i + 1];
			double im = a[2 * i] * b[2 * i + 1] + a[2 * i + 1] * b[2 * i];
			a[2 * i] = re;
			a[2 * i + 1] = im;
		}
		for (int y = 0; y < ph; y++)
			fft_cpu(a + (size_t)y * pw * 2, 1, t + (size_t)y * pw * 2, pw, 1);
		for (int x = 0; x < w; x++) {
			fft_cpu(t + (size_t)x * 2, (size_t)pw, line, ph, 1);
			for (int y = 0; y < h; y++)
				out[((size_t)y * w + x) * 4 + ch] = line[2 * y] / (double)n * scale;
		}
	}
	free(a), free(b), free(t), free(line);
}

static double *rgba_of(const struct image *im)
{
	size_t n = (size_t)im->width * im->height;
	double *d = malloc(n * 4 * sizeof *d);
	for (size_t i = 0; i < n; i++) {
		const float *p = im->pixels + i * im->channels;
		switch (im->channels) {
		case 1: d[4 * i] = d[4 * i + 1] = d[4 * i + 2] = p[0], d[4 * i + 3] = 1; break;
		case 2: d[4 * i] = d[4 * i + 1] = d[4 * i + 2] = p[0], d[4 * i + 3] = p[1]; break;
		case 3: d[4 * i] = p[0], d[4 * i + 1] = p[1], d[4 * i + 2] = p[2], d[4 * i + 3] = 1; break;
		default: for (int c = 0; c < 4; c++) d[4 * i + c] = p[c];
		}
	}
	return d;
}

/* Compares out (its channels) with ref (RGBA doubles). */
static int compare(const char *name, const struct image *out, const double *ref, double tol)
{
	size_t n = (size_t)out->width * out->height;
	double *r = malloc(n * out->channels * sizeof *r);
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < out->channels; c++)
			r[i * out->channels + c] = ref[i * 4 + (out->channels == 1 ? 0 : c)];
	size_t m = n * out->channels;
	int ok = tu_check(name, out->pixels, r, m, tol);
	free(r);
	return ok;
}

/* The context run_ok uses: g_b, or the tiling one, which must then run in several tiles; or,
 * with g_cpu, the CPU engine. */
static struct bloom_ctx *g_use;
static struct cpu_engine *g_cpu;
static int g_cpu_tiled; /* g_cpu runs in tiles: run_ok expects several */

/* bloom_run on the GPU engine, or cpu_bloom_run with g_cpu (its stats in st's fields of the same
 * names; their codes are the same numbers). */
static int run_any(int op, const struct image *in, const struct bloom_kernel *kr,
                   const struct bloom_params *p, struct image *out, struct bloom_stats *st,
                   char err[BLOOM_ERR_LEN])
{
	if (!g_cpu)
		return bloom_run(g_use ? g_use : g_b, op, in, kr, p, 0, out, st, err);
	struct cpu_stats cs;
	int rc = cpu_bloom_run(g_cpu, op, in, kr ? kr->img : NULL, kr ? kr->digest : NULL, p, out,
	                       &cs, err);
	if (st) {
		memset(st, 0, sizeof *st);
		st->padded_w = cs.padded_w, st->padded_h = cs.padded_h;
		st->tiles_x = cs.tiles_x, st->tiles_y = cs.tiles_y;
		st->gray_kernel = cs.gray_kernel, st->kernel_cached = cs.kernel_cached;
	}
	return rc;
}

static int preset_any(const struct kernel_preset *ks, struct image *out, char err[BLOOM_ERR_LEN])
{
	return g_cpu ? cpu_kernel_preset(g_cpu, ks, out, err) : bloom_kernel_preset(g_b, ks, out, err);
}

static void run_ok(int op, const struct image *in, const struct image *k,
                   const struct bloom_params *p, struct image *out, struct bloom_stats *st)
{
	char err[BLOOM_ERR_LEN];
	struct bloom_kernel kr = {k, {0, 0}};
	int rc = run_any(op, in, &kr, p, out, st, err);
	if (rc)
		printf("bloom_run: %s\n", err);
	assert_int_equal(rc, 0);
	if (g_use || g_cpu_tiled) {
		print_message("  %dx%d in %dx%d tiles, padded %dx%d\n", in->width, in->height,
		              st->tiles_x, st->tiles_y, st->padded_w, st->padded_h);
		assert_true(st->tiles_x * st->tiles_y > 1);
	} else {
		assert_int_equal(st->tiles_x * st->tiles_y, 1);
	}
}

/* A convolution of in by k under p (its stats in *st) against the CPU reference (direct, or
 * with fft_ref by FFT) with the kernel's centre at cx, cy, within tol: compare's verdict, printed
 * as NAME pad WxH. */
static int convolve_matches(const char *name, const struct image *in, const struct image *k,
                            const struct bloom_params *p, int cx, int cy, int fft_ref, double tol,
                            struct bloom_stats *st)
{
	int w = in->width, h = in->height;
	struct image out;
	run_ok(BLOOM_OP_CONVOLVE, in, k, p, &out, st);
	double *src = rgba_of(in), *ref = malloc((size_t)w * h * 4 * sizeof *ref);
	(fft_ref ? conv_fft : conv_direct)(src, w, h, k, cx, cy, 1.0, ref);
	char full[160];
	snprintf(full, sizeof full, "%s pad %dx%d", name, st->padded_w, st->padded_h);
	int ok = compare(full, &out, ref, tol);
	image_free(&out);
	free(src), free(ref);
	return ok;
}

static void check_convolve(int w, int h, int ic, int kw, int kh, int kc, int gray, const char *center,
                           int cx, int cy, int fft_ref)
{
	struct image in = rand_image(w, h, ic, -1, 1), k = rand_image(kw, kh, kc, 0, 1);
	if (gray && kc >= 3)
		for (size_t i = 0; i < (size_t)kw * kh; i++)
			k.pixels[i * kc + 1] = k.pixels[i * kc + 2] = k.pixels[i * kc];
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	tu_param(&p, BLOOM_OP_CONVOLVE, "kernel_center", center);
	struct bloom_stats st;
	char name[128];
	snprintf(name, sizeof name, "convolve %dx%dx%d k %dx%dx%d%s c%d,%d", w, h, ic, kw, kh, kc,
	         gray || kc <= 2 ? " gray" : "", cx, cy);
	int ok = convolve_matches(name, &in, &k, &p, cx, cy, fft_ref, TOL, &st);
	assert_int_equal(st.gray_kernel, gray || kc <= 2);
	if (!g_use && !g_cpu_tiled && !st.borrowed) { /* a whole frame: its span's good size */
		assert_int_equal(st.padded_w, frame_pw(w, h, kw, kh, cx, cy));
		assert_int_equal(st.padded_h, frame_ph(w, h, kw, kh, cx, cy));
	}
	image_free(&in), image_free(&k);
	assert_true(ok);
}

static void test_convolve_small(void **state)
{
	(void)state;
	/* odd and even kernels, 1x1, off-centre and default centres, colour and gray, 1-4 channels */
	check_convolve(37, 23, 4, 9, 13, 3, 0, "", 4, 6, 0);
	check_convolve(37, 23, 3, 9, 13, 3, 1, "2,11", 2, 11, 0);
	check_convolve(37, 23, 4, 4, 6, 3, 0, "0,0", 0, 0, 0);
	check_convolve(37, 23, 4, 4, 6, 1, 1, "", 2, 3, 0);
	check_convolve(64, 1, 4, 9, 13, 3, 0, "8,12", 8, 12, 0);
	check_convolve(1, 50, 3, 4, 6, 3, 0, "", 2, 3, 0);
	check_convolve(1, 50, 1, 9, 13, 1, 1, "uv:1,0", 8, 0, 0);
	/* kernels past twice the frame a side, centred on a corner tap: the span is the kernel */
	check_convolve(5, 4, 4, 31, 27, 3, 0, "30,0", 30, 0, 0);
	check_convolve(6, 9, 3, 17, 25, 1, 1, "0,24", 0, 24, 0);
	check_convolve(37, 23, 4, 1, 1, 3, 0, "", 0, 0, 0);
	check_convolve(5, 3, 4, 17, 11, 3, 0, "", 8, 5, 0); /* kernel larger than the image */
}

static void test_convolve_large_fft_reference(void **state)
{
	(void)state;
	check_convolve(300, 170, 4, 61, 45, 3, 0, "", 30, 22, 1);
	check_convolve(257, 131, 3, 64, 64, 3, 1, "10,50", 10, 50, 1);
}

/* bloom reference: B = prefilter(I) conv K/lum_sum; add or mix */
static void check_bloom(int composite, double threshold, double knee, int gray)
{
	int w = 41, h = 29;
	struct image in = rand_image(w, h, 4, 0, 3), k = rand_image(7, 9, 3, 0, 1);
	if (gray)
		for (size_t i = 0; i < 63; i++)
			k.pixels[i * 3 + 1] = k.pixels[i * 3 + 2] = k.pixels[i * 3];
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_BLOOM);
	p.threshold = threshold;
	p.knee = knee;
	p.intensity = 0.7;
	p.mix = 0.3;
	p.clamp_max = 2.5;
	p.composite = composite;
	struct image out;
	struct bloom_stats st;
	run_ok(BLOOM_OP_BLOOM, &in, &k, &p, &out, &st);
	double *src = rgba_of(&in), *pre = malloc((size_t)w * h * 4 * sizeof *pre);
	double *b = malloc((size_t)w * h * 4 * sizeof *b), *ref = malloc((size_t)w * h * 4 * sizeof *ref);
	for (int i = 0; i < w * h; i++) {
		double *v = src + 4 * i, br = fmax(v[0], fmax(v[1], v[2]));
		double kn = fmin(knee, threshold);
		double soft = fmin(fmax(br - threshold + kn, 0), 2 * kn);
		soft = kn > 0 ? soft * soft / (4 * kn) : 0;
		double wgt = threshold <= 0 ? 1 : br > 0 ? fmax(soft, br - threshold) / br : 0;
		for (int c = 0; c < 3; c++)
			pre[4 * i + c] = fmin(fmax(v[c] * wgt, -2.5), 2.5);
		pre[4 * i + 3] = v[3];
	}
	conv_direct(pre, w, h, &k, 3, 4, 1.0 / lum_sum(&k), b);
	for (int i = 0; i < w * h; i++) {
		for (int c = 0; c < 3; c++)
			ref[4 * i + c] = composite == BLOOM_COMPOSITE_ADD
			                 ? src[4 * i + c] + 0.7 * b[4 * i + c]
			                 : 0.7 * src[4 * i + c] + 0.3 * b[4 * i + c];
		ref[4 * i + 3] = src[4 * i + 3];
	}
	char name[96];
	snprintf(name, sizeof name, "bloom %s threshold %.1f knee %.1f %s", composite ? "mix" : "add",
	         threshold, knee, gray ? "gray" : "colour");
	int ok = compare(name, &out, ref, TOL);
	image_free(&in), image_free(&k), image_free(&out);
	free(src), free(pre), free(b), free(ref);
	assert_true(ok);
}

static void test_bloom_formula(void **state)
{
	(void)state;
	check_bloom(BLOOM_COMPOSITE_ADD, 0, 0, 0);
	check_bloom(BLOOM_COMPOSITE_ADD, 1.0, 0.5, 0);
	check_bloom(BLOOM_COMPOSITE_MIX, 1.5, 0.2, 1);
	check_bloom(BLOOM_COMPOSITE_MIX, 0.5, 0.0, 0);
}

static void test_packed_vs_per_channel(void **state)
{
	(void)state;
	/* RGBA with a colour kernel in one packed run, against four single-channel runs each with
	 * that channel's kernel as a grayscale kernel: two GPU paths; the single-channel gray path is
	 * checked against the CPU's direct convolution in test_convolve_small (1-channel images,
	 * gray kernels) */
	int w = 50, h = 31;
	struct image in = rand_image(w, h, 4, -1, 1), k = rand_image(11, 8, 3, 0, 1);
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	struct image packed;
	struct bloom_stats st;
	run_ok(BLOOM_OP_CONVOLVE, &in, &k, &p, &packed, &st);
	assert_int_equal(st.gray_kernel, 0);
	double *ref = malloc((size_t)w * h * 4 * sizeof *ref);
	for (int ch = 0; ch < 4; ch++) {
		struct image one, kone, res;
		image_alloc(&one, w, h, 1);
		image_alloc(&kone, k.width, k.height, 1);
		for (int i = 0; i < w * h; i++)
			one.pixels[i] = in.pixels[4 * i + ch];
		for (int j = 0; j < k.height; j++)
			for (int i = 0; i < k.width; i++)
				kone.pixels[j * k.width + i] = (float)kval(&k, i, j, ch);
		run_ok(BLOOM_OP_CONVOLVE, &one, &kone, &p, &res, &st);
		assert_int_equal(st.gray_kernel, 1);
		assert_int_equal(res.channels, 1);
		for (int i = 0; i < w * h; i++)
			ref[4 * i + ch] = res.pixels[i];
		image_free(&one), image_free(&kone), image_free(&res);
	}
	int ok = compare("packed colour vs per-channel gray runs", &packed, ref, TOL);
	image_free(&in), image_free(&k), image_free(&packed);
	free(ref);
	assert_true(ok);
}

static void test_energy_and_cache(void **state)
{
	(void)state;
	/* content inside a border wider than the kernel: a normalised gray kernel keeps the sum */
	int w = 96, h = 64, r = 12;
	struct image in, k = rand_image(2 * r + 1, 2 * r + 1, 1, 0, 1);
	image_alloc(&in, w, h, 3);
	for (int y = r; y < h - r; y++)
		for (int x = r; x < w - r; x++)
			for (int c = 0; c < 3; c++)
				in.pixels[((size_t)y * w + x) * 3 + c] = (float)(4 * tu_uniform());
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	p.normalize = BLOOM_NORMALIZE_LUMINANCE;
	struct image a, b;
	struct bloom_stats s1, s2;
	run_ok(BLOOM_OP_CONVOLVE, &in, &k, &p, &a, &s1);
	run_ok(BLOOM_OP_CONVOLVE, &in, &k, &p, &b, &s2);
	double sin = 0, sout = 0;
	for (size_t i = 0; i < (size_t)w * h * 3; i++)
		sin += in.pixels[i], sout += a.pixels[i];
	double rel = fabs(sout - sin) / sin;
	printf("energy: in %.6f out %.6f rel diff %.2e\n", sin, sout, rel);
	assert_true(rel < 1e-5);
	/* the second run used the cached spectrum and gave the same result, bit for bit */
	printf("first run cached %d, second %d\n", s1.kernel_cached, s2.kernel_cached);
	assert_int_equal(s2.kernel_cached, 1);
	assert_memory_equal(a.pixels, b.pixels, (size_t)w * h * 3 * sizeof(float));
	unsigned long long hits, misses;
	size_t bytes;
	if (g_cpu) {
		struct cpu_cache_stats cs;
		cpu_engine_stats(g_cpu, &cs);
		hits = cs.kernel_hits, misses = cs.kernel_misses, bytes = cs.kernel_bytes;
	} else {
		struct bloom_cache_stats cs;
		bloom_ctx_stats(g_b, &cs);
		hits = cs.kernel_hits, misses = cs.kernel_misses, bytes = cs.kernel_bytes;
	}
	printf("kernel cache: %llu hits, %llu misses, %zu bytes\n", hits, misses, bytes);
	assert_true(hits >= 1);
	image_free(&in), image_free(&k), image_free(&a), image_free(&b);
}

static void test_kernel_scale_and_presets(void **state)
{
	(void)state;
	/* kernel-scale 0.5 on a 60x40 image: a 10x10 box kernel becomes 20x20 (larger side =
	 * 0.5 * 40); with normalisation a constant image stays constant away from the edges */
	struct image in, k;
	image_alloc(&in, 60, 40, 3);
	for (size_t i = 0; i < 60 * 40 * 3; i++)
		in.pixels[i] = 1;
	image_alloc(&k, 10, 10, 1);
	for (int i = 0; i < 100; i++)
		k.pixels[i] = 1;
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	p.normalize = BLOOM_NORMALIZE_LUMINANCE;
	p.kernel_scale = 0.5;
	struct image out;
	struct bloom_stats st;
	run_ok(BLOOM_OP_CONVOLVE, &in, &k, &p, &out, &st);
	printf("kernel-scale 0.5: padded %dx%d\n", st.padded_w, st.padded_h);
	/* the frame's span: 60 and the reach past the centre at 11 */
	assert_int_equal(st.padded_w, frame_pw(60, 40, 20, 20, 11, 11));
	assert_true(fabs(out.pixels[(20 * 60 + 30) * 3] - 1) < 1e-5);
	/* the corner sees the kernel's part up to its centre, which moved from 5 to 11 with it:
	 * 12 x 12 of 20 x 20 */
	printf("corner %.6f (expected 0.36)\n", out.pixels[0]);
	assert_true(fabs(out.pixels[0] - 0.36) < 1e-5);
	image_free(&out);
	/* shrinking (on the GPU, area-weighted) keeps the kernel's sum: a 40x40 random kernel at
	 * scale 0.25 of a 48x40 image becomes 10x10; an impulse in the middle of the image, with
	 * normalize none, comes out summing to the original kernel's sum */
	struct image imp, kr2 = rand_image(40, 40, 1, 0, 1);
	image_alloc(&imp, 48, 40, 1);
	imp.pixels[20 * 48 + 24] = 1;
	double ksum = 0;
	for (int i = 0; i < 1600; i++)
		ksum += kr2.pixels[i];
	tu_params(&p, BLOOM_OP_CONVOLVE);
	p.kernel_scale = 0.25;
	run_ok(BLOOM_OP_CONVOLVE, &imp, &kr2, &p, &out, &st);
	double osum = 0;
	for (int i = 0; i < 48 * 40; i++)
		osum += out.pixels[i];
	printf("kernel-scale 0.25: padded %dx%d, sum %.4f (kernel's %.4f)\n", st.padded_w,
	       st.padded_h, osum, ksum);
	assert_int_equal(st.padded_w, frame_pw(48, 40, 10, 10, 5, 5)); /* centre 20 -> 5 */
	assert_true(fabs(osum - ksum) / ksum < 1e-5);
	image_free(&out), image_free(&imp), image_free(&kr2);
	/* presets: finite, the peak in the centre pixel */
	const char *specs[] = {"gaussian:sigma=3", "glare:streaks=6,rotation=15,size=63",
	                       "aperture:blades=6,size=63", "aperture:blades=5,rotation=12,size=31"};
	for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
		char err[BLOOM_ERR_LEN];
		struct image kimg;
		struct bloom_params pp;
		tu_params(&pp, BLOOM_OP_BLOOM);
		tu_param(&pp, BLOOM_OP_BLOOM, "kernel_preset", specs[s]);
		assert_int_equal(preset_any(&pp.preset, &kimg, err), 0);
		int c = kimg.width / 2, peak = 1;
		float centre = kimg.pixels[((size_t)c * kimg.width + c) * 3 + 1];
		for (size_t i = 0; i < (size_t)kimg.width * kimg.height * 3; i++) {
			assert_true(isfinite(kimg.pixels[i]) && kimg.pixels[i] >= -1e-6f);
			if (i % 3 == 1 && kimg.pixels[i] > centre)
				peak = 0;
		}
		printf("preset %s: %dx%d, centre %.3g\n", specs[s], kimg.width, kimg.height, centre);
		assert_true(peak);
		image_free(&kimg);
	}
	/* the aperture pattern: red spreads wider than blue (per-wavelength scaling) */
	struct image ap;
	char err[BLOOM_ERR_LEN];
	struct bloom_params pa;
	tu_params(&pa, BLOOM_OP_BLOOM);
	tu_param(&pa, BLOOM_OP_BLOOM, "kernel_preset", "aperture:blades=6,size=63");
	assert_int_equal(preset_any(&pa.preset, &ap, err), 0);
	double spread[3] = {0, 0, 0}, sum[3] = {0, 0, 0};
	for (int y = 0; y < 63; y++)
		for (int x = 0; x < 63; x++)
			for (int c = 0; c < 3; c++) {
				double v = ap.pixels[((size_t)y * 63 + x) * 3 + c], r2 = (x - 31.0) * (x - 31) + (y - 31.0) * (y - 31);
				spread[c] += v * r2;
				sum[c] += v;
			}
	printf("aperture second moments R %.2f G %.2f B %.2f\n", spread[0] / sum[0], spread[1] / sum[1],
	       spread[2] / sum[2]);
	assert_true(spread[0] / sum[0] > spread[1] / sum[1] && spread[1] / sum[1] > spread[2] / sum[2]);
	image_free(&ap);
	image_free(&in);
	image_free(&k);
}

/* float16 storage of the image spectrum (float32 arithmetic, float32 kernel spectrum): the
 * stated bound is a relative L2 error of 2e-3 (measured about 4e-4 on llvmpipe). The convolve
 * is checked against the CPU in both storages; the bloom's float16 result against its float32
 * one, whose formula test_bloom_formula checks against the CPU. */
#define TOL_FP16 2e-3

static void test_fp16_storage(void **state)
{
	(void)state;
	int w = 160, h = 90;
	struct image in = rand_image(w, h, 4, 0, 4), k = rand_image(33, 21, 3, 0, 1);
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	p.normalize = BLOOM_NORMALIZE_LUMINANCE;
	struct image o32, o16;
	struct bloom_stats st;
	run_ok(BLOOM_OP_CONVOLVE, &in, &k, &p, &o32, &st);
	p.precision = BLOOM_FP16;
	run_ok(BLOOM_OP_CONVOLVE, &in, &k, &p, &o16, &st);
	double *src = rgba_of(&in), *ref = malloc((size_t)w * h * 4 * sizeof *ref);
	conv_direct(src, w, h, &k, 16, 10, 1.0 / lum_sum(&k), ref);
	int ok = compare("convolve fp32 storage", &o32, ref, TOL);
	ok &= compare("convolve fp16 storage", &o16, ref, TOL_FP16);
	/* and a bloom through fp16 */
	tu_params(&p, BLOOM_OP_BLOOM);
	p.precision = BLOOM_FP16;
	p.threshold = 0;
	struct image b16, b32;
	run_ok(BLOOM_OP_BLOOM, &in, &k, &p, &b16, &st);
	p.precision = BLOOM_FP32;
	run_ok(BLOOM_OP_BLOOM, &in, &k, &p, &b32, &st);
	double *r32 = malloc((size_t)w * h * 4 * sizeof *r32);
	for (size_t i = 0; i < (size_t)w * h * 4; i++)
		r32[i] = b32.pixels[i];
	ok &= tu_check("bloom fp16 vs fp32", b16.pixels, r32, (size_t)w * h * 4, TOL_FP16);
	image_free(&in), image_free(&k), image_free(&o32), image_free(&o16), image_free(&b16),
		image_free(&b32);
	free(src), free(ref), free(r32);
	assert_true(ok);
}

/* The separate column passes: where two columns of the padded height do not fit the device's
 * shared memory (fft_conv_create refuses them: over 3072 on the H200's 48 KiB, 2048 on
 * llvmpipe's 32 KiB), the columns run forward, the multiply, and inverse as passes of their own.
 * Tall images padded to 4116-4200 rows, colour and gray kernels, float32 and float16, against
 * the CPU reference. */
static void test_separate_columns(void **state)
{
	(void)state;
	static const int sizes[][4] = {{12, 4050, 5, 101}, {20, 4100, 9, 17}};
	for (int i = 0; i < 2; i++)
		for (int gray = 0; gray < 2; gray++) {
			int w = sizes[i][0], h = sizes[i][1], kw = sizes[i][2], kh = sizes[i][3];
			struct image in = rand_image(w, h, 4, -1, 1), k = rand_image(kw, kh, gray ? 1 : 3, 0, 1);
			double *src = rgba_of(&in), *ref = malloc((size_t)w * h * 4 * sizeof *ref);
			conv_fft(src, w, h, &k, kw / 2, kh / 2, 1.0, ref);
			for (int half = 0; half < 2; half++) {
				struct bloom_params p;
				tu_params(&p, BLOOM_OP_CONVOLVE);
				p.precision = half ? BLOOM_FP16 : BLOOM_FP32;
				struct image out;
				struct bloom_stats st;
				run_ok(BLOOM_OP_CONVOLVE, &in, &k, &p, &out, &st);
				assert_int_equal(st.fused, 0);
				char name[128];
				snprintf(name, sizeof name, "separate columns %dx%d %s %s (pad %dx%d)", w, h,
				         gray ? "gray" : "colour", half ? "fp16" : "fp32", st.padded_w,
				         st.padded_h);
				int ok = compare(name, &out, ref, half ? TOL_FP16 : TOL);
				image_free(&out);
				assert_true(ok);
			}
			image_free(&in), image_free(&k);
			free(src), free(ref);
		}
}

/* The fused convolution's plan for a padded size under FFT options: counts its padded
 * exchanges, and whether it splits vec4 into vec2 rounds. */
static void conv_plan_use(int pw, int ph, const struct fft_opts *o, int *pads, int *split)
{
	struct fft_conv *c;
	char err[FFT_ERR_LEN];
	*pads = *split = 0;
	if (fft_conv_create(g_pc, egl_ctx_info(tu_gl_context()), ph, pw, 0, 0, o, &c, err))
		return;
	const struct fft_plan *p = fft_conv_plan(c);
	for (int i = 0; i < p->npasses; i++)
		*pads += p->pass[i].pad;
	*split = p->split;
	fft_conv_destroy(c);
}

/* Convolutions through a context that pads every power-of-two transform (fft_pad_from 2; the
 * product pads from 4096, whose padded pair of columns does not fit llvmpipe): the fused columns
 * of 256 ([8, 8, 4]; colour and gray kernels) and 2048 ([8, 8, 8, 4]; its padded pair of rows
 * does not fit 32 KiB, so it runs plain there), against the CPU references; float16 too. */
static void test_padded_columns(void **state)
{
	(void)state;
	char err[BLOOM_ERR_LEN];
	struct bloom_ctx *pad, *saved = g_b;
	struct bloom_ctx_opts so = {.fft_pad_from = 2};
	assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &so, NULL, &pad, err), 0);
	g_b = pad; /* check_convolve runs on g_b */
	/* + 25, + 50; the gray kernels' multiply in registers after padded forward passes */
	static const int cases[][5] = {{120, 231, 31, 51, 0}, {120, 231, 31, 51, 1},
	                               {40, 1998, 9, 101, 1}};
	int padded = 0;
	for (int i = 0; i < 3; i++) {
		int w = cases[i][0], h = cases[i][1], kw = cases[i][2], kh = cases[i][3];
		check_convolve(w, h, 4, kw, kh, 3, cases[i][4], "", kw / 2, kh / 2, 1);
		struct fft_opts o = {.components = 4, .pad_from = 2};
		int pads, split;
		int pw = frame_pw(w, h, kw, kh, kw / 2, kh / 2), ph = frame_ph(w, h, kw, kh, kw / 2, kh / 2);
		conv_plan_use(pw, ph, &o, &pads, &split);
		printf("  fused columns of %d: %d padded exchanges%s\n", ph, pads,
		       split ? ", vec2 rounds" : "");
		padded += pads > 0;
	}
	assert_true(padded >= 1);
	/* float16 storage through the same plans */
	int w = 120, h = 200;
	struct image in = rand_image(w, h, 4, 0, 4), k = rand_image(31, 51, 3, 0, 1);
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	p.precision = BLOOM_FP16;
	struct bloom_stats st;
	int ok = convolve_matches("convolve fp16, padded FFT", &in, &k, &p, 15, 25, 1, TOL_FP16, &st);
	/* float16: the rule (in place only where the row spectra are in tiles) */
	assert_int_equal(st.fused, st.tile_columns ? BLOOM_FUSED_IN_PLACE : BLOOM_FUSED_TRANSPOSED);
	image_free(&in), image_free(&k);
	g_b = saved;
	bloom_ctx_destroy(pad);
	assert_true(ok);
}

/* What fftbloomd's idle time does between frames, until it is done (at most 1000 steps). */
static void idle_work(struct bloom_ctx *b)
{
	for (int steps = 0; steps < 1000 && bloom_build_wanted(b, 0); steps++) {
	}
}

/* Colour kernels' fused columns with each element's Hermitian partner through shared memory, as
 * on a GPU whose subgroup shuffles do not pair invocations 2t and 2t + 1 (egl_info's
 * subgroup_pairs 0; llvmpipe's only form, so that a GPU with shuffles runs it too): whole vec4
 * and vec2 rounds, the natural and (after idle time) the pair order, float16, odd and even
 * sizes, against the CPU references. */
static void test_partners_shared(void **state)
{
	(void)state;
	struct bloom_ctx *saved = g_b;
	char err[BLOOM_ERR_LEN];
	struct egl_info plain = *egl_ctx_info(tu_gl_context());
	plain.subgroup_pairs = 0;
	for (int split = 0; split <= 1; split++) {
		struct bloom_ctx_opts o = {.fused_layout = BLOOM_FUSED_IN_PLACE, .ends_in_rows = 1,
		                           .conv_split = split};
		struct bloom_ctx *b;
		assert_int_equal(bloom_ctx_create(g_pc, &plain, &o, NULL, &b, err), 0);
		g_b = b;
		printf("-- partners through shared memory%s\n", split ? ", vec2 rounds" : "");
		for (int pass = 0; pass < 2; pass++) { /* the pair order's programs after idle time */
			check_convolve(61, 47, 4, 9, 13, 3, 0, "", 4, 6, 0);
			check_convolve(38, 50, 3, 8, 5, 3, 0, "1,4", 1, 4, 0);
			check_bloom(BLOOM_COMPOSITE_ADD, 1.0, 0.5, 0);
			idle_work(b);
		}
		struct image in = rand_image(61, 47, 4, -1, 1), k = rand_image(9, 13, 3, 0, 1);
		struct bloom_params p;
		struct bloom_stats st;
		tu_params(&p, BLOOM_OP_CONVOLVE);
		int ok = convolve_matches("convolve, pair order", &in, &k, &p, 4, 6, 0, TOL, &st);
		assert_int_equal(st.column_pairs, 1);
		image_free(&in), image_free(&k);
		in = rand_image(45, 33, 4, 0, 4), k = rand_image(9, 7, 3, 0, 1);
		p.precision = BLOOM_FP16;
		ok = convolve_matches("convolve fp16", &in, &k, &p, 4, 3, 1, TOL_FP16, &st) && ok;
		image_free(&in), image_free(&k);
		g_b = saved;
		bloom_ctx_destroy(b);
		assert_true(ok);
	}
}

/* Where the rows' io programs cannot be had (a shader folder without bloom_io.comp), the
 * prefilter and composite stay passes of their own and the fused columns are made again for rows
 * a pitch apart: float32 in place without tiles, float16 through the transposed copy (the rule
 * for rows a pitch apart); the answers still match the CPU references. */
static void test_io_fallback(void **state)
{
	(void)state;
	char dir[] = "/tmp/fftbloom-shaders-XXXXXX", path[256], err[BLOOM_ERR_LEN];
	assert_non_null(mkdtemp(dir));
	const char *name;
	for (size_t i = 0; (name = shader_src_name(i)) != NULL; i++) {
		if (!strcmp(name, "bloom_io"))
			continue;
		char *owned;
		const char *text = shader_src_get(name, "", &owned);
		snprintf(path, sizeof path, "%s/%s.comp", dir, name);
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
		fclose(f);
	}
	struct program_cache *pc;
	assert_int_equal(program_cache_create(dir, NULL, &pc), 0);
	struct bloom_ctx_opts o = {.ends_in_rows = 1};
	struct bloom_ctx *b, *saved = g_b;
	assert_int_equal(bloom_ctx_create(pc, egl_ctx_info(tu_gl_context()), &o, NULL, &b, err), 0);
	g_b = b;
	struct image in = rand_image(45, 33, 4, 0, 4), kc = rand_image(9, 7, 3, 0, 1),
	             kg = rand_image(9, 7, 1, 0, 1);
	struct bloom_params p;
	struct bloom_stats st;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	int ok = 1;
	for (int i = 0; i < 3; i++) { /* colour, gray, float16 */
		p.precision = i == 2 ? BLOOM_FP16 : BLOOM_FP32;
		ok &= convolve_matches(i == 0 ? "convolve, no io programs" : i == 1 ? "convolve gray, no io "
		                       "programs" : "convolve fp16, no io programs", &in, i == 1 ? &kg : &kc,
		                       &p, 4, 3, 1, i == 2 ? TOL_FP16 : TOL, &st);
		printf("  fused %d, ends in rows %d, tiles of %d columns, row pitch %d\n", st.fused,
		       st.ends_in_rows, st.tile_columns, st.row_pitch);
		assert_int_equal(st.ends_in_rows, 0);
		assert_int_equal(st.tile_columns, 0);
		assert_int_equal(st.fused, i == 2 ? BLOOM_FUSED_TRANSPOSED : BLOOM_FUSED_IN_PLACE);
		assert_int_equal(st.row_pitch, st.padded_w);
	}
	image_free(&in), image_free(&kc), image_free(&kg);
	g_b = saved;
	bloom_ctx_destroy(b);
	program_cache_destroy(pc);
	for (size_t i = 0; (name = shader_src_name(i)) != NULL; i++) {
		snprintf(path, sizeof path, "%s/%s.comp", dir, name);
		remove(path);
	}
	rmdir(dir);
	assert_true(ok);
}

/* A log sink that keeps the shapes count of "measuring the rows of ... in N shapes" ([0]) and
 * counts the candidates timed in vec2 ([1]) and float rounds ([2]). */
static void shapes_sink(void *ctx, int level, const char *msg)
{
	(void)level;
	int *n = ctx;
	if (getenv("TEST_LOG"))
		printf("log: %s\n", msg);
	const char *at = strstr(msg, "measuring the rows of");
	if (at && (at = strstr(at, " in ")))
		n[0] = atoi(at + 4);
	if (strstr(msg, "bloom: rows of") && strstr(msg, " ms"))
		n[1] += strstr(msg, "vec2 rounds:") != NULL, n[2] += strstr(msg, "float rounds:") != NULL;
}

/* Rows long enough to exchange vec4 in rounds (1120 > FFT_ROUNDS_ABOVE) are measured in both
 * kinds (two vec2 rounds, four float rounds) at each invocation count, in idle steps (the plain
 * transform's queued shapes left unmeasured: measured at once, llvmpipe's plain rows of 1120 take
 * the global technique, which has no ends); the line kept says one of them, and the frames
 * before and after match the CPU references. */
static void rows_tune_rounds(void)
{
	struct bloom_ctx *saved = g_b;
	char err[BLOOM_ERR_LEN];
	struct fft_wisdom *w;
	assert_int_equal(fft_wisdom_create("", "test", NULL, NULL, &w), 0);
	fft_wisdom_set_measure(w, FFT_WISDOM_MEASURE_IDLE);
	struct bloom_ctx_opts o = {.ends_in_rows = 1, .wisdom = w};
	int shapes[3] = {0, 0, 0};
	struct log_sink sink = {shapes_sink, shapes};
	struct bloom_ctx *b;
	assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &o, &sink, &b, err),
	                 0);
	g_b = b;
	struct image in = rand_image(1101, 5, 4, 0, 4), k = rand_image(9, 7, 3, 0, 1);
	struct bloom_params p;
	struct bloom_stats st;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	int ok = convolve_matches("convolve 1101x5", &in, &k, &p, 4, 3, 1, TOL, &st);
	for (int steps = 0; steps < 1000 && bloom_rows_tune_step(b, NULL); steps++) {
	}
	while (bloom_ctx_refresh(b)) {
	}
	struct fft_opts ko = {.components = 4, .io = 1};
	struct fft_wisdom_key key;
	fft_wisdom_key_of(st.padded_w, 0, st.padded_h, &ko, &key);
	struct fft_wisdom_choice c;
	assert_int_equal(fft_wisdom_get(w, &key, &c), 0);
	printf("rows of %d: %d shapes measured (%d in vec2 rounds, %d in float rounds); kept %d "
	       "invocations in %s rounds\n", st.padded_w, shapes[0], shapes[1], shapes[2], c.threads,
	       c.split == 2 ? "float" : "vec2");
	assert_true(st.padded_w > FFT_ROUNDS_ABOVE && st.ends_in_rows);
	/* each count in both kinds of rounds */
	assert_true(shapes[1] >= 2 && shapes[1] == shapes[2] && shapes[0] == shapes[1] + shapes[2]);
	assert_true(c.split == 1 || c.split == 2);
	ok &= convolve_matches("convolve 1101x5, rows measured", &in, &k, &p, 4, 3, 1, TOL, &st);
	assert_int_equal(st.row_threads, c.threads);
	assert_true(ok);
	image_free(&in), image_free(&k);
	g_b = saved;
	bloom_ctx_destroy(b);
	fft_wisdom_destroy(w);
}

/* The bloom's io rows measured (bloom_rows_tune_step): a plan whose rows take the ends, on a
 * wisdom without a line of the ends for them, runs the plain transform's shape; idle steps time
 * its rows' invocation counts over the last frame's rows and put the fastest under the ends' key
 * (fft_wisdom_key.io, not the plain transform's), and the plan rebuilt runs it. The answers match
 * the CPU references before and after, and nothing is measured again. With
 * FFT_WISDOM_MEASURE_NOW the plan's first frame measures them at once; with
 * FFT_WISDOM_MEASURE_NEVER nothing is measured. Then rows_tune_rounds. */
static void test_rows_tune(void **state)
{
	(void)state;
	struct bloom_ctx *saved = g_b;
	char err[BLOOM_ERR_LEN];
	static const int modes[3] = {FFT_WISDOM_MEASURE_IDLE, FFT_WISDOM_MEASURE_NOW,
	                             FFT_WISDOM_MEASURE_NEVER};
	for (int mi = 0; mi < 3; mi++) {
		struct fft_wisdom *w;
		assert_int_equal(fft_wisdom_create("", "test", NULL, NULL, &w), 0);
		fft_wisdom_set_measure(w, modes[mi]);
		struct bloom_ctx_opts o = {.ends_in_rows = 1, .wisdom = w};
		struct bloom_ctx *b;
		assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &o, NULL, &b,
		                                  err), 0);
		g_b = b;
		printf("-- wisdom measuring %s\n", mi == 0 ? "in idle time" : mi == 1 ? "at once"
		                                                                   : "never");
		struct image in = rand_image(45, 33, 4, 0, 4), k = rand_image(9, 7, 3, 0, 1);
		struct bloom_params p;
		struct bloom_stats st;
		struct bloom_cache_stats cs;
		tu_params(&p, BLOOM_OP_CONVOLVE);
		int ok = convolve_matches("convolve, first frame", &in, &k, &p, 4, 3, 1, TOL, &st);
		assert_true(ok);
		assert_int_equal(st.ends_in_rows, 1);
		struct fft_opts ko = {.components = 4, .io = 1};
		struct fft_wisdom_key key, plain;
		fft_wisdom_key_of(st.padded_w, 0, st.padded_h, &ko, &key);
		ko.io = 0;
		fft_wisdom_key_of(st.padded_w, 0, st.padded_h, &ko, &plain);
		assert_int_equal(key.io, 1);
		struct fft_wisdom_choice c;
		int first_threads = st.row_threads, steps = 0;
		if (modes[mi] == FFT_WISDOM_MEASURE_IDLE) {
			/* another shape measured first (as the FFT tuner's plain shapes are): the plan,
			 * provisional, is rebuilt, and keeps the frame its rows are measured on */
			struct fft_wisdom_key other = {.n = 96, .components = 2, .count_log2 = 2};
			struct fft_wisdom_choice oc = {FFT_TECH_SHARED, 32, 0, 0};
			fft_wisdom_put(w, &other, &oc, 1.0);
			while (bloom_ctx_refresh(b)) {
			}
			bloom_ctx_stats(b, &cs);
			assert_int_equal(cs.plan_refreshes, 1);
		}
		const char *last = NULL;
		struct program_stats ps0, ps1;
		unsigned long long most = 0; /* programs compiled in one step */
		program_cache_stats(g_pc, &ps0);
		while (steps < 1000 && bloom_rows_tune_step(b, &last)) {
			steps++;
			program_cache_stats(g_pc, &ps1);
			most = ps1.misses - ps0.misses > most ? ps1.misses - ps0.misses : most;
			ps0 = ps1;
		}
		assert_true(most <= 1); /* a frame arriving meanwhile waits for one compile at most */
		while (bloom_ctx_refresh(b)) {
		}
		bloom_ctx_stats(b, &cs);
		printf("rows of %d on %d invocations; %d idle steps (the last: %s), %llu measured, "
		       "%llu plans rebuilt\n", st.padded_w, first_threads, steps, last ? last : "-",
		       cs.rows_tuned, cs.plan_refreshes);
		ok = convolve_matches("convolve, after", &in, &k, &p, 4, 3, 1, TOL, &st);
		assert_true(ok);
		if (modes[mi] == FFT_WISDOM_MEASURE_NEVER) {
			assert_int_equal(steps, 0);
			assert_int_equal(fft_wisdom_get(w, &key, &c), -1);
		} else {
			assert_int_equal(steps > 0, modes[mi] == FFT_WISDOM_MEASURE_IDLE);
			assert_int_equal(fft_wisdom_get(w, &key, &c), 0);
			printf("measured: %d invocations; the frame after ran %d\n", c.threads,
			       st.row_threads);
			assert_int_equal(c.technique, FFT_TECH_SHARED);
			assert_int_equal(st.row_threads, c.threads);
			assert_int_equal(cs.rows_tuned, 1);
			/* the ends' line is not the plain transform's: measuring the rows wrote no plain
			 * line (idle: the plain shapes queued, unmeasured) or left the one measured
			 * before them (at once: the plain rows first, then the ends) */
			struct fft_wisdom_choice pc;
			if (modes[mi] == FFT_WISDOM_MEASURE_IDLE) {
				assert_int_equal(fft_wisdom_get(w, &plain, &pc), -1);
				assert_int_equal(fft_wisdom_count(w), 2); /* the other shape's, the ends' */
			} else {
				assert_int_equal(fft_wisdom_get(w, &plain, &pc), 0);
			}
			assert_int_equal(bloom_rows_tune_step(b, &last), 0); /* nothing left */
		}
		image_free(&in), image_free(&k);
		g_b = saved;
		bloom_ctx_destroy(b);
		fft_wisdom_destroy(w);
	}
	rows_tune_rounds();
}

/* The fused columns in place and through the transposed copy, each with the prefilter and the
 * composite as passes of their own and in the row transforms' loads and stores (forced on where
 * the rule would not use them; in place with the ends in the rows, the row spectra in tiles of
 * the rule's columns, of 2 or 4, or in rows a pitch apart): blooms (add and mix, thresholds,
 * colour and gray kernels) and convolutions (odd sizes, float16 too) against the CPU references;
 * non-finite input stays local, and float32 overflow is found, on every path. Then the rule: rows that exchange in
 * vec2 rounds (wider than the device's shared memory holds whole vec4 rows) take the ends, others
 * do not. Last, columns past 2048 (fused with 512 invocations a column where two fit shared
 * memory in vec2 rounds, as on a 48 KiB GPU; separate passes on llvmpipe's 32 KiB). */
static void test_ends_and_layouts(void **state)
{
	(void)state;
	struct bloom_ctx *saved = g_b;
	char err[BLOOM_ERR_LEN];
	static const int layouts[2] = {BLOOM_FUSED_TRANSPOSED, BLOOM_FUSED_IN_PLACE};
	/* in place with the ends in the rows: colour kernels' row spectra in the pair order or
	 * not, in tiles (the rule's, 2, 4 or 64 columns) or not (1); the fused
	 * pass's exchanges padded at every length (conv_pad); the kernels' spectra multiplied in
	 * shared memory (conv_mult_shared) rather than in registers */
	static const struct {
		int li, ends, pairs, tiles, pad, mshared;
	} cases[] = {{0, -1, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0}, {1, -1, 0, 0, 0, 0},
	             {1, 1, 0, 0, 0, 0}, {1, 1, -1, 1, 0, 0}, {1, 1, 0, 4, 0, 0},
	             {1, 1, -1, 2, 0, 0}, {1, 1, 0, 0, 1, 0}, {1, 1, 0, 64, 0, 0},
	             {1, 1, 0, 0, 0, 1}};
	for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
		int li = cases[ci].li, ends = cases[ci].ends, pairs = cases[ci].pairs;
		struct bloom_ctx_opts o = {.fused_layout = layouts[li], .ends_in_rows = ends,
		                           .column_pairs = pairs, .spectrum_tiles = cases[ci].tiles,
		                           .conv_pad = cases[ci].pad,
		                           .conv_mult_shared = cases[ci].mshared};
		int want_pairs = li && ends > 0 && pairs == 0;
		int want_tiles = !li || ends < 0 || cases[ci].tiles == 1 ? 0 : cases[ci].tiles
		               ? cases[ci].tiles : BLOOM_TILE_COLUMNS;
		struct bloom_ctx *b;
		assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &o, NULL, &b,
		                                  err), 0);
		g_b = b;
		printf("-- fused %s, ends %s%s, tiles of %d columns%s%s\n",
		       li ? "in place" : "transposed", ends > 0 ? "in the rows" : "separate",
		       want_pairs ? ", pair order" : "", want_tiles,
		       cases[ci].pad ? ", exchanges padded at every length" : "",
		       cases[ci].mshared ? ", kernels multiplied in shared memory" : "");
		/* the pair order's programs come in idle time after a colour kernel ran: the
		 * checks again after it */
		for (int pass = 0; pass <= want_pairs; pass++) {
			check_bloom(BLOOM_COMPOSITE_ADD, 1.0, 0.5, 0);
			check_bloom(BLOOM_COMPOSITE_MIX, 0.5, 0.0, 1);
			check_convolve(61, 47, 4, 9, 13, 3, 0, "", 4, 6, 0);
			check_convolve(37, 50, 3, 8, 5, 3, 1, "1,4", 1, 4, 0);
			idle_work(b);
		}
		struct image in = rand_image(45, 33, 4, 0, 4), k = rand_image(9, 7, 3, 0, 1), out;
		struct bloom_params p;
		struct bloom_stats st;
		tu_params(&p, BLOOM_OP_CONVOLVE);
		p.precision = BLOOM_FP16;
		int ok = convolve_matches("convolve fp16", &in, &k, &p, 4, 3, 1, TOL_FP16, &st);
		assert_int_equal(st.fused, layouts[li]);
		assert_int_equal(st.ends_in_rows, ends > 0);
		assert_int_equal(st.tile_columns, want_tiles);
		assert_int_equal(st.column_pairs, 0); /* a new size: its first colour frame */
		assert_true(ok);
		idle_work(b);
		ok = convolve_matches("convolve fp16, after idle time", &in, &k, &p, 4, 3, 1,
		                      TOL_FP16, &st);
		assert_int_equal(st.column_pairs, want_pairs);
		assert_true(ok);
		/* a gray kernel's columns are neighbours in the natural order whatever the plan */
		struct image kg = rand_image(9, 7, 1, 0, 1);
		ok = convolve_matches("convolve gray fp16", &in, &kg, &p, 4, 3, 1, TOL_FP16, &st);
		assert_true(st.gray_kernel && !st.column_pairs);
		assert_int_equal(st.fused, layouts[li]);
		assert_true(ok);
		p.precision = BLOOM_FP32;
		ok = convolve_matches("convolve gray", &in, &kg, &p, 4, 3, 1, TOL, &st);
		assert_true(st.gray_kernel && !st.column_pairs);
		assert_int_equal(st.tile_columns, want_tiles);
		assert_true(ok);
		image_free(&kg);
		/* non-finite input pixels stay local */
		tu_params(&p, BLOOM_OP_BLOOM);
		in.pixels[10] = NAN;
		in.pixels[21] = INFINITY;
		struct bloom_kernel kr = {&k, {0, 0}};
		assert_int_equal(bloom_run(b, BLOOM_OP_BLOOM, &in, &kr, &p, 0, &out, &st, err), 0);
		assert_int_equal(st.ends_in_rows, ends > 0);
		int finite = 0;
		for (int i = 0; i < 45 * 33 * 4; i++)
			finite += isfinite(out.pixels[i]) != 0;
		printf("non-finite input: %d of %d outputs finite\n", finite, 45 * 33 * 4);
		assert_true(finite >= 45 * 33 * 4 - 2);
		image_free(&out), image_free(&in), image_free(&k);
		/* float32 overflow found */
		tu_params(&p, BLOOM_OP_CONVOLVE);
		p.normalize = BLOOM_NORMALIZE_NONE;
		in = rand_image(40, 30, 1, 1e38f, 3e38f);
		k = rand_image(9, 9, 1, 1, 2);
		struct bloom_kernel kb = {&k, {0, 0}};
		assert_int_equal(bloom_run(b, BLOOM_OP_CONVOLVE, &in, &kb, &p, 0, &out, &st, err),
		                 BLOOM_E_ARG);
		assert_non_null(strstr(err, "not finite"));
		image_free(&in), image_free(&k);
		bloom_ctx_destroy(b);
	}
	g_b = saved;
	/* the rule: rows past what whole vec4 rows of shared memory hold exchange in vec2 rounds
	 * and take the ends; a narrow frame's rows do not */
	long long shared = egl_ctx_info(tu_gl_context())->max_shared_memory;
	int wide = (int)(shared / 16) + 40;
	static const int sizes[2][2] = {{30, 20}, {0, 6}};
	for (int i = 0; i < 2; i++) {
		int w = i ? wide : sizes[i][0], h = sizes[i][1];
		struct image in = rand_image(w, h, 4, 0, 2), k = rand_image(5, 3, 3, 0, 1);
		struct bloom_params p;
		struct bloom_stats st;
		tu_params(&p, BLOOM_OP_CONVOLVE);
		int ok = convolve_matches(i ? "convolve, wide rows" : "convolve, narrow rows", &in, &k, &p,
		                          2, 1, 0, TOL, &st);
		idle_work(g_b);
		ok &= convolve_matches(i ? "convolve, wide rows, after idle time" : "convolve, narrow rows, "
		                       "after idle time", &in, &k, &p, 2, 1, 0, TOL, &st);
		printf("%dx%d: padded %dx%d, fused %d, ends in rows %d, pair order %d\n", w, h,
		       st.padded_w, st.padded_h, st.fused, st.ends_in_rows, st.column_pairs);
		assert_int_equal(st.fused, BLOOM_FUSED_IN_PLACE);
		assert_int_equal(st.ends_in_rows, i);
		assert_int_equal(st.column_pairs, i);
		image_free(&in), image_free(&k);
		assert_true(ok);
	}
	/* an odd padded width: with the ends in the rows and the columns fused in place the row
	 * spectra are in tiles of the rule's columns, the padded width rounded up to whole tiles
	 * (ep 1); without tiles one element wider apart (every row then starts on a 32-byte sector;
	 * ep 0); the padded width itself when asked (even_pitch -1): colour kernels in both orders
	 * and gray ones */
	int ow = 60;
	while (frame_pw(ow, 29, 9, 7, 4, 3) % 2 == 0)
		ow++;
	for (int ep = 1; ep >= -1; ep--) {
		struct bloom_ctx_opts o = {.fused_layout = BLOOM_FUSED_IN_PLACE, .ends_in_rows = 1,
		                           .even_pitch = ep < 0 ? -1 : 0, .spectrum_tiles = ep > 0 ? 0 : 1};
		struct bloom_ctx *b;
		assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &o, NULL, &b, err),
		                 0);
		g_b = b;
		struct image in = rand_image(ow, 29, 4, -1, 1), kc = rand_image(9, 7, 3, 0, 1),
		             kg = rand_image(9, 7, 1, 0, 1);
		struct bloom_params p;
		struct bloom_stats st;
		tu_params(&p, BLOOM_OP_CONVOLVE);
		int ok = 1;
		for (int pass = 0; pass < 3; pass++) { /* natural order, the pair order, gray */
			ok &= convolve_matches(pass == 2 ? "convolve gray, odd padded width"
			                                 : "convolve, odd padded width",
			                       &in, pass == 2 ? &kg : &kc, &p, 4, 3, 1, TOL, &st);
			printf("  %dx29 (%s): padded %dx%d, row pitch %d, tiles of %d columns, pair order "
			       "%d\n", ow, ep > 0 ? "tiles" : ep ? "even_pitch -1" : "even_pitch 0", st.padded_w,
			       st.padded_h, st.row_pitch, st.tile_columns, st.column_pairs);
			assert_true(st.padded_w % 2 == 1 && st.ends_in_rows);
			assert_int_equal(st.fused, BLOOM_FUSED_IN_PLACE);
			int tw = BLOOM_TILE_COLUMNS;
			assert_int_equal(st.tile_columns, ep > 0 ? tw : 0);
			assert_int_equal(st.row_pitch, ep > 0 ? (st.padded_w + tw - 1) / tw * tw
			                                      : st.padded_w + (ep == 0));
			assert_int_equal(st.column_pairs, pass == 1);
			idle_work(b);
		}
		image_free(&in), image_free(&kc), image_free(&kg);
		g_b = saved;
		bloom_ctx_destroy(b);
		assert_true(ok);
	}
	/* a storage-buffer limit the padded width fits and one element more does not: the padded
	 * width; one that fits one element more but not whole tiles: the even pitch */
	for (int room = 0; room < 2; room++) {
		int pw = frame_pw(ow, 29, 9, 7, 4, 3), ph = frame_ph(ow, 29, 9, 7, 4, 3);
		struct egl_info small = *egl_ctx_info(tu_gl_context());
		small.max_ssbo_size = (long long)(pw + room) * ph * 16;
		struct bloom_ctx_opts o = {.fused_layout = BLOOM_FUSED_IN_PLACE, .ends_in_rows = 1};
		struct bloom_ctx *b;
		assert_int_equal(bloom_ctx_create(g_pc, &small, &o, NULL, &b, err), 0);
		g_b = b;
		struct image in = rand_image(ow, 29, 4, -1, 1), kc = rand_image(9, 7, 3, 0, 1);
		struct bloom_params p;
		struct bloom_stats st;
		tu_params(&p, BLOOM_OP_CONVOLVE);
		int ok = convolve_matches(room ? "convolve, odd padded width, a row of room"
		                               : "convolve, odd padded width, no room for a wider pitch",
		                          &in, &kc, &p, 4, 3, 1, TOL, &st);
		assert_int_equal(st.padded_w, pw);
		assert_int_equal(st.padded_h, ph);
		assert_int_equal(st.row_pitch, pw + room);
		int tw = BLOOM_TILE_COLUMNS; /* whole tiles fit only where they are pw + 1 wide */
		assert_int_equal(st.tile_columns, room && (pw + tw - 1) / tw * tw == pw + 1 ? tw : 0);
		image_free(&in), image_free(&kc);
		g_b = saved;
		bloom_ctx_destroy(b);
		assert_true(ok);
	}
	/* where a pass of its own reads the spectrum (separate ends), the padded width */
	{
		struct bloom_ctx_opts o = {.fused_layout = BLOOM_FUSED_IN_PLACE, .ends_in_rows = -1};
		struct bloom_ctx *b;
		assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &o, NULL, &b, err),
		                 0);
		g_b = b;
		struct image in = rand_image(ow, 29, 4, -1, 1), kc = rand_image(9, 7, 3, 0, 1);
		struct bloom_params p;
		struct bloom_stats st;
		tu_params(&p, BLOOM_OP_CONVOLVE);
		int ok = convolve_matches("convolve, odd padded width, ends separate", &in, &kc, &p, 4, 3,
		                          1, TOL, &st);
		assert_int_equal(st.row_pitch, st.padded_w);
		image_free(&in), image_free(&kc);
		g_b = saved;
		bloom_ctx_destroy(b);
		assert_true(ok);
	}
	/* a plan only gray kernels ran on never builds the pair order; a colour kernel's frame
	 * brings it in the idle time after */
	{
		struct image in = rand_image(2300, 5, 4, 0, 2), kg = rand_image(5, 3, 1, 0, 1),
		             kc = rand_image(5, 3, 3, 0, 1);
		struct bloom_params p;
		struct bloom_stats st;
		tu_params(&p, BLOOM_OP_CONVOLVE);
		int ok = convolve_matches("convolve 2300x5 gray", &in, &kg, &p, 2, 1, 0, TOL, &st);
		assert_true(st.ends_in_rows && !st.column_pairs);
		idle_work(g_b);
		ok &= convolve_matches("convolve 2300x5 colour", &in, &kc, &p, 2, 1, 0, TOL, &st);
		assert_true(st.ends_in_rows && !st.column_pairs);
		idle_work(g_b);
		ok &= convolve_matches("convolve 2300x5 colour, after idle time", &in, &kc, &p, 2, 1, 0,
		                       TOL, &st);
		assert_true(st.column_pairs);
		ok &= convolve_matches("convolve 2300x5 gray, after", &in, &kg, &p, 2, 1, 0, TOL, &st);
		assert_true(!st.column_pairs);
		image_free(&in), image_free(&kg), image_free(&kc);
		assert_true(ok);
	}
	long long need = 2LL * 2240 * 8; /* two 2240-long columns in vec2 rounds */
	for (int gray = 0; gray < 2; gray++) {
		struct image in = rand_image(20, 2100, 4, -1, 1), k = rand_image(9, 101, gray ? 1 : 3, 0, 1);
		struct bloom_params p;
		struct bloom_stats st;
		tu_params(&p, BLOOM_OP_CONVOLVE);
		int ok = convolve_matches("convolve 20x2100, 2240-long columns", &in, &k, &p, 4, 50, 1,
		                          TOL, &st);
		printf("20x2100 %s: padded %dx%d, fused %d (shared memory %lld, two columns need %lld)\n",
		       gray ? "gray" : "colour", st.padded_w, st.padded_h, st.fused, shared, need);
		assert_int_equal(st.padded_h, 2240);
		assert_int_equal(st.fused, shared >= need ? BLOOM_FUSED_IN_PLACE : 0);
		image_free(&in), image_free(&k);
		assert_true(ok);
	}
	/* the fused pass's shape options (measuring instruments) give the same results */
	struct bloom_ctx_opts so = {.conv_split = 1, .conv_threads = 64, .rows_split = 1};
	struct bloom_ctx *b;
	assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &so, NULL, &b, err), 0);
	g_b = b;
	check_convolve(61, 47, 4, 9, 13, 3, 0, "", 4, 6, 0);
	check_convolve(37, 50, 3, 8, 5, 3, 1, "1,4", 1, 4, 0);
	g_b = saved;
	bloom_ctx_destroy(b);
	/* the rows in four float rounds, their ends inside them or not */
	for (int ends = -1; ends <= 1; ends += 2) {
		struct bloom_ctx_opts fo = {.rows_split = 2, .ends_in_rows = ends};
		assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &fo, NULL, &b, err),
		                 0);
		g_b = b;
		check_convolve(61, 47, 4, 9, 13, 3, 0, "", 4, 6, 0);
		check_convolve(37, 50, 3, 8, 5, 3, 1, "1,4", 1, 4, 0);
		check_bloom(BLOOM_COMPOSITE_ADD, 1.0, 0.5, 0);
		g_b = saved;
		bloom_ctx_destroy(b);
	}
}

/* Which named stages a call timed: a bit per stage with a time above 0. */
static unsigned stages_timed(const struct bloom_stats *st)
{
	unsigned bits = 0;
	for (int s = 0; s < GPU_STAGE_COUNT; s++)
		bits |= st->stage_ms[s] > 0 ? 1u << s : 0;
	return bits;
}

#define STAGE(s) (1u << GPU_STAGE_##s)

/* Per-stage times only when asked (BLOOM_TIME_STAGES), by name: the fused path's stages, the
 * separate path's (a height whose two columns do not fit shared memory), the upload, the
 * kernel's spectrum when it is computed, the download; none at all without the flag. And
 * bloom_rerun_stages (benchmarks): refused before any run; after one, it repeats the GPU stages
 * and times each of them; the next run's answer is unchanged by it. */
static void test_stage_times(void **state)
{
	(void)state;
	char err[BLOOM_ERR_LEN];
	struct bloom_ctx *b;
	assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), NULL, NULL, &b, err), 0);
	struct bloom_stats st;
	assert_int_equal(bloom_rerun_stages(b, &st, err), BLOOM_E_ARG);
	struct image in = rand_image(40, 30, 4, 0, 1), k = rand_image(7, 5, 3, 0, 1), a, c;
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_BLOOM);
	struct bloom_kernel kr = {&k, {0, 0}};
	const unsigned work = STAGE(PREFILTER) | STAGE(ROWS) | STAGE(IROWS) | STAGE(COMPOSITE);
	const unsigned fused = STAGE(FUSED_COLS); /* in place, the default layout */
	const unsigned transposed = STAGE(TRANSPOSE) | STAGE(TRANSPOSE_BACK);
	const unsigned separate = STAGE(COLS) | STAGE(MULTIPLY) | STAGE(ICOLS);
	assert_int_equal(bloom_run(b, BLOOM_OP_BLOOM, &in, &kr, &p, BLOOM_TIME_STAGES, &a, &st, err), 0);
	printf("first call: timed %d, stages 0x%x, gpu %.3f ms\n", st.timed, stages_timed(&st), st.gpu_ms);
	assert_true(st.timed != GPU_TIMING_NONE && st.fused == BLOOM_FUSED_IN_PLACE && st.gpu_ms > 0);
	assert_int_equal(st.ends_in_rows, 0); /* rows of 48: whole vec4 exchanges */
	assert_int_equal(stages_timed(&st) & ~(STAGE(UPLOAD) | STAGE(KERNEL) | STAGE(DOWNLOAD)),
	                 work | fused);
	assert_true(stages_timed(&st) & STAGE(KERNEL)); /* computed on this first call */
	image_free(&a);
	assert_int_equal(bloom_run(b, BLOOM_OP_BLOOM, &in, &kr, &p, 0, &a, &st, err), 0);
	assert_int_equal(st.timed, GPU_TIMING_NONE);
	assert_int_equal(stages_timed(&st), 0);
	assert_true(st.gpu_ms == 0 && st.wall_ms > 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(bloom_rerun_stages(b, &st, err), 0);
		assert_true(st.gpu_ms > 0);
		assert_int_equal(stages_timed(&st), work | fused);
		assert_int_equal(st.padded_w, frame_pw(40, 30, 7, 5, 3, 2));
	}
	assert_int_equal(bloom_run(b, BLOOM_OP_BLOOM, &in, &kr, &p, 0, &c, &st, err), 0);
	assert_memory_equal(a.pixels, c.pixels, (size_t)40 * 30 * 4 * sizeof(float));
	image_free(&in), image_free(&a), image_free(&c);
	/* a tall image: separate columns; the kernel's spectrum from the cache at this size after
	 * the first call */
	in = rand_image(8, 4100, 4, 0, 1);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(bloom_run(b, BLOOM_OP_BLOOM, &in, &kr, &p, BLOOM_TIME_STAGES, &a, &st, err), 0);
		printf("tall image, call %d: stages 0x%x\n", i, stages_timed(&st));
		assert_true(!st.fused && !st.ends_in_rows);
		assert_int_equal(stages_timed(&st) & (work | separate), work | separate);
		assert_int_equal(stages_timed(&st) & (fused | transposed), 0);
		assert_int_equal((stages_timed(&st) & STAGE(KERNEL)) != 0, i == 0);
		image_free(&a);
	}
	for (int s = 0; s < GPU_STAGE_COUNT; s++)
		assert_true(gpu_stage_names[s] && gpu_stage_names[s][0]);
	assert_string_equal(gpu_stage_names[GPU_STAGE_FUSED_COLS], "fused_cols");
	image_free(&in), image_free(&k);
	bloom_ctx_destroy(b);
}

/* Largest difference in sRGB 8-bit codes between a's channels and b's (b has ch channels). */
static double code_diff(const struct image *a, const struct image *b)
{
	double m = 0;
	size_t n = (size_t)a->width * a->height;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < b->channels; c++) {
			double x = a->pixels[i * a->channels + c], y = b->pixels[i * b->channels + c];
			double sx = x <= 0.0031308 ? 12.92 * x : 1.055 * pow(x, 1 / 2.4) - 0.055;
			double sy = y <= 0.0031308 ? 12.92 * y : 1.055 * pow(y, 1 / 2.4) - 0.055;
			double d = fabs(sx - sy) * 255;
			if (!(d <= m))
				m = d;
		}
	return m;
}

/* Planes in: the GPU's conversion of a JPEG's planes (every subsampling, odd sizes, every EXIF
 * orientation) against libjpeg's own decode of the same file, through an identity convolution:
 * within 1.5 codes (libjpeg rounds the upsampled chroma and its RGB to integers; the GPU does not)
 * plus the FFT's 1e-5. */
static void test_yuv_in(void **state)
{
	(void)state;
	static const int subs[][3] = { { 1, 1, 1 }, { 0, 1, 1 }, { 0, 2, 1 }, { 0, 2, 2 }, { 0, 1, 2 } };
	static const int sz[][2] = { { 37, 23 }, { 3, 40 }, { 64, 33 }, { 1, 1 }, { 130, 7 } };
	struct image one;
	assert_int_equal(image_alloc(&one, 1, 1, 1), 0);
	one.pixels[0] = 1;
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	p.normalize = BLOOM_NORMALIZE_NONE;
	struct bloom_ctx *plain;
	struct bloom_ctx_opts po = {.no_persistent_map = 1};
	char perr[BLOOM_ERR_LEN];
	assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &po, NULL, &plain, perr), 0);
	int k = 0;
	for (size_t u = 0; u < sizeof subs / sizeof subs[0]; u++)
		for (size_t s = 0; s < sizeof sz / sizeof sz[0]; s++, k++) {
			int gray = subs[u][0], o = k % 8 + 1;
			struct image img = rand_image(sz[s][0], sz[s][1], gray ? 1 : 3, 0, 1), ref;
			struct yuv_image planes, y;
			struct image_info info;
			unsigned lost = 0;
			unsigned char *jpeg, *ex;
			size_t len, exlen;
			char err[BLOOM_ERR_LEN];
			assert_int_equal(yuv_ref_from_image(&img, gray, subs[u][1], subs[u][2], 0, &planes, &lost), 0);
			assert_int_equal(image_encode_jpeg_yuv(&planes, 85, &jpeg, &len, err), 0);
			assert_int_equal(yuv_ref_add_exif(jpeg, len, o, &ex, &exlen), 0);
			assert_int_equal(image_decode(ex, exlen, NULL, &ref, &info, err), 0);
			assert_int_equal(image_decode_jpeg_yuv(ex, exlen, NULL, &y, &info, err), 0);
			struct bloom_frame f = { NULL, &y, NULL, 0 };
			struct bloom_result r;
			memset(&r, 0, sizeof r);
			struct bloom_kernel kr = { &one, { 0, 0 } };
			struct bloom_stats st;
			/* every other case through buffers updated and mapped per frame */
			int rc = bloom_run_frame(k & 1 ? plain : g_b, BLOOM_OP_CONVOLVE, &f, &kr, &p, 0, &r, &st, err);
			if (rc)
				fail_msg("bloom_run_frame: %s", err);
			assert_int_equal(r.img.width, ref.width);
			assert_int_equal(r.img.height, ref.height);
			assert_int_equal(r.img.channels, ref.channels);
			assert_int_equal(r.channels, ref.channels);
			double d = code_diff(&r.img, &ref);
			if (!(d <= 1.5 + 0.01))
				fail_msg("%dx%d sub %dx%d gray %d orientation %d: GPU planes vs libjpeg: %.3f "
					 "codes (tolerance 1.51)", sz[s][0], sz[s][1], subs[u][1], subs[u][2], gray,
					 o, d);
			if (s == 0)
				print_message("planes in: sub %dx%d gray %d: max %.3f codes from libjpeg\n",
					      subs[u][1], subs[u][2], gray, d);
			image_free(&img);
			image_free(&ref);
			image_free(&r.img);
			yuv_image_free(&planes);
			yuv_image_free(&y);
			free(jpeg);
			free(ex);
		}
	image_free(&one);
	bloom_ctx_destroy(plain);
}

/* Planes out: the GPU's planes of a result against the independent reference computed from the
 * float result of the same run: every sample within 1 code (float vs double rounding of values
 * near a half), at most 1% of them off at all; the same clipping flags. Colour and gray results,
 * 4:4:4, 4:2:2, 4:2:0, dither, alpha dropped, values above 1 and below 0. */
static void yuv_out_cases(struct bloom_ctx *b);

/* One planes result of the same frame: lent (lend) or copied. */
static struct bloom_result lend_run(struct bloom_ctx *b, const struct image *in,
                                    const struct image *k, int lend)
{
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_BLOOM);
	struct bloom_frame f = {in, NULL, NULL, 0};
	struct bloom_kernel kr = {k, {0, 0}};
	struct bloom_result r;
	memset(&r, 0, sizeof r);
	r.want_yuv = 1, r.sub_x = r.sub_y = 2, r.lend = lend;
	char err[BLOOM_ERR_LEN];
	if (bloom_run_frame(b, BLOOM_OP_BLOOM, &f, &kr, &p, 0, &r, NULL, err))
		fail_msg("bloom_run_frame: %s", err);
	return r;
}

static void *return_lease(void *l)
{
	bloom_lease_return(l);
	return NULL;
}

/* Planes lent from the GPU's mapped read-back buffers (bloom_result.lend): byte for byte what
 * the copy gives (whose planes test_yuv_out checks against the CPU reference), untouched by the frames run while they are out, BLOOM_LEASES at most (then
 * copied), given back from another thread and lent again; and a context without persistent
 * mapping, which copies. */
static void test_yuv_lend(void **state)
{
	(void)state;
	const struct egl_info *info = egl_ctx_info(tu_gl_context());
	struct image a = rand_image(61, 37, 3, 0, 1.2f), c = rand_image(61, 37, 3, 0, 1.2f);
	struct image k = rand_image(7, 5, 3, 0, 1);
	struct bloom_result want = lend_run(g_b, &a, &k, 0), other = lend_run(g_b, &c, &k, 0);
	assert_null(want.lease);
	assert_memory_not_equal(want.yuv.data, other.yuv.data, want.yuv.bytes);
	struct bloom_result out[BLOOM_LEASES + 1];
	for (int i = 0; i <= BLOOM_LEASES; i++) {
		out[i] = lend_run(g_b, i % 2 ? &c : &a, &k, 1);
		const struct bloom_result *ref = i % 2 ? &other : &want;
		assert_int_equal(out[i].yuv.bytes, ref->yuv.bytes);
		assert_memory_equal(out[i].yuv.data, ref->yuv.data, ref->yuv.bytes);
		assert_true(out[i].lost == ref->lost);
		if (!info->buffer_storage)
			assert_null(out[i].lease);
		else if (i < BLOOM_LEASES) /* every buffer out: the last is copied */
			assert_non_null(out[i].lease);
		else
			assert_null(out[i].lease);
		for (int j = 0; j < i && out[i].lease; j++)
			assert_true(out[i].lease != out[j].lease && out[i].yuv.data != out[j].yuv.data);
	}
	/* the frames run while a buffer was out left its planes alone */
	assert_memory_equal(out[0].yuv.data, want.yuv.data, want.yuv.bytes);
	assert_memory_equal(out[1].yuv.data, other.yuv.data, want.yuv.bytes);
	print_message("lent %d planes buffers (%s), then copied\n", out[0].lease ? BLOOM_LEASES : 0,
	              info->buffer_storage ? "GL_EXT_buffer_storage" : "no GL_EXT_buffer_storage");
	/* given back from another thread: lent again */
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, return_lease, out[3].lease), 0);
	pthread_join(th, NULL);
	out[3].yuv.data = NULL;
	struct bloom_result again = lend_run(g_b, &a, &k, 1);
	assert_true(!info->buffer_storage || again.lease != NULL);
	assert_memory_equal(again.yuv.data, want.yuv.data, want.yuv.bytes);
	for (int i = 0; i <= BLOOM_LEASES; i++) {
		if (out[i].lease)
			out[i].yuv.data = NULL;
		bloom_lease_return(out[i].lease);
		yuv_image_free(&out[i].yuv);
	}
	if (again.lease)
		again.yuv.data = NULL;
	bloom_lease_return(again.lease);
	yuv_image_free(&again.yuv);
	/* no persistent mapping: lending copies */
	char err[BLOOM_ERR_LEN];
	struct bloom_ctx *b;
	struct bloom_ctx_opts o = {.no_persistent_map = 1};
	assert_int_equal(bloom_ctx_create(g_pc, info, &o, NULL, &b, err), 0);
	struct bloom_result r = lend_run(b, &a, &k, 1);
	assert_memory_equal(r.yuv.data, want.yuv.data, want.yuv.bytes);
	assert_null(r.lease);
	yuv_image_free(&r.yuv);
	bloom_ctx_destroy(b);
	yuv_image_free(&want.yuv), yuv_image_free(&other.yuv);
	image_free(&a), image_free(&c), image_free(&k);
}

static void test_yuv_out(void **state)
{
	(void)state;
	/* with the planes' buffers mapped once (where GL_EXT_buffer_storage is), and per frame */
	yuv_out_cases(g_b);
	char err[BLOOM_ERR_LEN];
	struct bloom_ctx *b;
	struct bloom_ctx_opts o = {.no_persistent_map = 1};
	assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &o, NULL, &b, err), 0);
	yuv_out_cases(b);
	bloom_ctx_destroy(b);
}

static void yuv_out_cases(struct bloom_ctx *b)
{
	static const struct {
		int w, h, ic, kc, sx, sy, dither, op;
	} cases[] = {
		{ 37, 23, 3, 3, 1, 1, 0, BLOOM_OP_BLOOM },   { 37, 23, 3, 3, 2, 2, 0, BLOOM_OP_CONVOLVE },
		{ 65, 30, 4, 1, 2, 1, 1, BLOOM_OP_BLOOM },   { 1, 1, 3, 3, 2, 2, 0, BLOOM_OP_CONVOLVE },
		{ 20, 9, 1, 1, 2, 2, 0, BLOOM_OP_CONVOLVE }, { 20, 9, 2, 1, 1, 1, 1, BLOOM_OP_BLOOM },
		{ 33, 17, 1, 3, 2, 2, 0, BLOOM_OP_CONVOLVE },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct image in = rand_image(cases[c].w, cases[c].h, cases[c].ic, -0.1f, 1.2f);
		struct image k = rand_image(5, 3, cases[c].kc, -0.2f, 1);
		struct bloom_params p;
		tu_params(&p, cases[c].op);
		p.normalize = BLOOM_NORMALIZE_NONE;
		p.intensity = 0.5;
		struct bloom_frame f = { &in, NULL, NULL, 0 };
		struct bloom_kernel kr = { &k, { 0, 0 } };
		struct bloom_result fl, pl;
		memset(&fl, 0, sizeof fl);
		memset(&pl, 0, sizeof pl);
		pl.want_yuv = 1;
		pl.sub_x = cases[c].sx, pl.sub_y = cases[c].sy, pl.dither = cases[c].dither;
		char err[BLOOM_ERR_LEN];
		assert_int_equal(bloom_run_frame(b, cases[c].op, &f, &kr, &p, 0, &fl, NULL, err), 0);
		assert_int_equal(bloom_run_frame(b, cases[c].op, &f, &kr, &p, 0, &pl, NULL, err), 0);
		assert_int_equal(pl.channels, fl.img.channels);
		int gray = fl.img.channels <= 2;
		struct yuv_image ref;
		unsigned lost = 0;
		assert_int_equal(yuv_ref_from_image(&fl.img, gray, cases[c].sx, cases[c].sy, cases[c].dither,
						    &ref, &lost), 0);
		lost |= IMAGE_LOST_PRECISION | (fl.img.channels % 2 == 0 ? IMAGE_LOST_ALPHA : 0);
		assert_int_equal(pl.lost, lost);
		assert_int_equal(pl.yuv.gray, gray);
		assert_int_equal(pl.yuv.bytes, ref.bytes);
		size_t off = 0, total = 0;
		int worst = 0;
		for (int q = 0; q < (gray ? 1 : 3); q++)
			for (int j = 0; j < ref.ph[q]; j++)
				for (int i = 0; i < ref.pw[q]; i++) {
					size_t at = ref.offset[q] + (size_t)j * ref.stride[q] + i;
					int d = abs((int)pl.yuv.data[at] - (int)ref.data[at]);
					worst = d > worst ? d : worst;
					off += d != 0;
					total++;
				}
		print_message("planes out %dx%d ch %d sub %dx%d dither %d: %zu of %zu samples off by "
			      "<= %d\n", cases[c].w, cases[c].h, fl.img.channels, cases[c].sx, cases[c].sy,
			      cases[c].dither, off, total, worst);
		if (worst > 1 || off * 100 > total + 99)
			fail_msg("planes differ from the reference: %zu of %zu, worst %d", off, total, worst);
		image_free(&in);
		image_free(&k);
		image_free(&fl.img);
		yuv_image_free(&pl.yuv);
		yuv_image_free(&ref);
	}
}

/* PSNR (dB) of planes b's samples against a's (the same layout). */
static double planes_psnr(const struct yuv_image *a, const struct yuv_image *b)
{
	double se = 0;
	size_t n = 0;
	for (int q = 0; q < (a->gray ? 1 : 3); q++)
		for (int j = 0; j < a->ph[q]; j++)
			for (int i = 0; i < a->pw[q]; i++) {
				size_t at = a->offset[q] + (size_t)j * a->stride[q] + i;
				double d = (double)a->data[at] - b->data[at];
				se += d * d;
				n++;
			}
	return se ? 10 * log10(255.0 * 255.0 * (double)n / se) : 99;
}

/* The planes' JPEG at quality decoded back to planes, and its size. */
static double jpeg_round_trip(const struct yuv_image *enc, const struct yuv_image *ref, int quality,
                              size_t *len)
{
	unsigned char *jpeg = NULL;
	char err[IMAGE_ERR_LEN];
	if (image_encode_jpeg_yuv(enc, quality, &jpeg, len, err))
		fail_msg("image_encode_jpeg_yuv: %s", err);
	struct yuv_image back;
	struct image_info info;
	if (image_decode_jpeg_yuv(jpeg, *len, NULL, &back, &info, err))
		fail_msg("image_decode_jpeg_yuv: %s", err);
	assert_int_equal(back.bytes, ref->bytes);
	double p = planes_psnr(ref, &back);
	yuv_image_free(&back);
	free(jpeg);
	return p;
}

/* A planes result's memory: its lent buffer given back, or its planes freed. */
static void result_free(struct bloom_result *r)
{
	if (r->lease) {
		r->yuv.data = NULL;
		bloom_lease_return(r->lease);
	}
	yuv_image_free(&r->yuv);
}

/* Coefficients out (bloom_result.dct_quality): the GPU's quantised DCT coefficients of a
 * result against the CPU reference (tests/yuv_ref.c, double precision) computed from the planes
 * of the same result: every coefficient within 1 (float vs double rounding of quotients near a
 * half), at most 1% off at all; the clipping flags as the planes'. Colour and gray, 4:4:4, 4:2:2,
 * 4:4:0, 4:2:0, sizes that are not whole blocks or MCUs, qualities 1-100, dither; lent and
 * deferred as the daemon runs it. And the quality ISO 10918's users judge: a 320x200 frame's
 * JPEG from the GPU's coefficients decodes to planes no more than 0.1 dB PSNR below
 * libjpeg-turbo's own encode of the same planes (accurate DCT), at qualities 50, 90 and 100 (at
 * 100, where every divisor is 1, the exact DCT is about 0.4 dB above libjpeg's integer one). */
static void test_jpeg_dct_out(void **state)
{
	(void)state;
	static const struct {
		int w, h, ic, sx, sy, dither, quality, lend;
	} cases[] = {
		{ 37, 23, 3, 1, 1, 0, 90, 0 },  { 37, 23, 3, 2, 2, 0, 75, 1 },  { 65, 30, 4, 2, 1, 1, 90, 0 },
		{ 1, 1, 3, 2, 2, 0, 90, 0 },    { 20, 9, 1, 2, 2, 0, 100, 1 },  { 33, 17, 3, 1, 2, 0, 1, 0 },
		{ 17, 40, 2, 1, 1, 1, 50, 0 },  { 320, 200, 3, 1, 1, 0, 90, 1 }, { 320, 200, 3, 2, 2, 0, 50, 0 },
		{ 320, 200, 3, 1, 1, 0, 100, 0 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct image in = rand_image(cases[c].w, cases[c].h, cases[c].ic, -0.1f, 1.2f);
		struct image k = rand_image(5, 3, 3, 0, 1);
		struct bloom_params p;
		tu_params(&p, BLOOM_OP_BLOOM);
		struct bloom_frame f = { &in, NULL, NULL, 0 };
		struct bloom_kernel kr = { &k, { 0, 0 } };
		struct bloom_result pl, dc;
		memset(&pl, 0, sizeof pl);
		pl.want_yuv = 1;
		pl.sub_x = cases[c].sx, pl.sub_y = cases[c].sy, pl.dither = cases[c].dither;
		dc = pl;
		dc.dct_quality = cases[c].quality, dc.lend = cases[c].lend;
		char err[BLOOM_ERR_LEN];
		assert_int_equal(bloom_run_frame(g_b, BLOOM_OP_BLOOM, &f, &kr, &p, 0, &pl, NULL, err), 0);
		if (bloom_run_frame(g_b, BLOOM_OP_BLOOM, &f, &kr, &p, cases[c].lend ? BLOOM_DEFER : 0,
		                    &dc, NULL, err) ||
		    bloom_result_finish(&dc, NULL, err))
			fail_msg("coefficients: %s", err);
		assert_int_equal(dc.lost, pl.lost);
		assert_int_equal(dc.yuv.dct_quality, cases[c].quality);
		struct yuv_image ref;
		assert_int_equal(yuv_ref_dct(&pl.yuv, cases[c].quality, &ref), 0);
		assert_int_equal(dc.yuv.bytes, ref.bytes);
		const short *g = (const short *)(const void *)dc.yuv.data, *r = (const short *)(void *)ref.data;
		size_t n = ref.bytes / 2, off = 0;
		int worst = 0;
		for (size_t i = 0; i < n; i++) {
			int d = abs(g[i] - r[i]);
			worst = d > worst ? d : worst;
			off += d != 0;
		}
		print_message("coefficients %dx%d ch %d sub %dx%d q %d: %zu of %zu off by <= %d\n",
		              cases[c].w, cases[c].h, pl.channels, cases[c].sx, cases[c].sy,
		              cases[c].quality, off, n, worst);
		if (worst > 1 || off * 100 > n + 99)
			fail_msg("coefficients differ from the reference: %zu of %zu, worst %d", off, n, worst);
		if (cases[c].w >= 320) {
			size_t lg, ll;
			double pg = jpeg_round_trip(&dc.yuv, &pl.yuv, cases[c].quality, &lg);
			double plib = jpeg_round_trip(&pl.yuv, &pl.yuv, cases[c].quality, &ll);
			print_message("  JPEG from the GPU's coefficients %.3f dB (%zu bytes), libjpeg-turbo's "
			              "own %.3f dB (%zu bytes)\n", pg, lg, plib, ll);
			if (pg < plib - 0.1)
				fail_msg("PSNR %.3f dB against libjpeg-turbo's %.3f (tolerance 0.1 dB)", pg, plib);
		}
		result_free(&dc);
		yuv_image_free(&pl.yuv);
		yuv_image_free(&ref);
		image_free(&in);
		image_free(&k);
	}
	/* a quality past 1-100 is the caller's error */
	struct image in = rand_image(8, 8, 3, 0, 1), k = rand_image(3, 3, 3, 0, 1);
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_BLOOM);
	struct bloom_frame f = { &in, NULL, NULL, 0 };
	struct bloom_kernel kr = { &k, { 0, 0 } };
	struct bloom_result bad;
	memset(&bad, 0, sizeof bad);
	bad.want_yuv = 1, bad.sub_x = bad.sub_y = 1, bad.dct_quality = 101;
	char err[BLOOM_ERR_LEN];
	assert_int_equal(bloom_run_frame(g_b, BLOOM_OP_BLOOM, &f, &kr, &p, 0, &bad, NULL, err),
	                 BLOOM_E_ARG);
	image_free(&in);
	image_free(&k);
}

/* The coefficients entropy-coded on the GPU (bloom_result.entropy): the JPEG made from the scan
 * is byte for byte the one libjpeg writes from the same frame's coefficients (run without it)
 * with a restart interval of one MCU row: subsamplings 4:4:4, 4:2:0, 4:2:2, 4:4:0 and gray,
 * sizes off the MCU grid (libjpeg's dummy blocks), one pixel, qualities 1-100, lent and
 * deferred results and copied ones. A frame whose rows do not fit the GPU's room (noise at
 * quality 100) comes back as its coefficients, the same as without. */
static void test_jpeg_scan(void **state)
{
	(void)state;
	static const struct {
		int w, h, ic, sx, sy, quality, lend, op;
	} cases[] = {
		{ 37, 23, 3, 1, 1, 90, 0, BLOOM_OP_BLOOM },   { 37, 23, 3, 2, 2, 75, 1, BLOOM_OP_BLOOM },
		{ 65, 30, 4, 2, 1, 90, 0, BLOOM_OP_BLOOM },   { 33, 17, 3, 1, 2, 1, 1, BLOOM_OP_BLOOM },
		{ 1, 1, 3, 2, 2, 90, 0, BLOOM_OP_BLOOM },     { 20, 9, 1, 2, 2, 100, 1, BLOOM_OP_BLOOM },
		{ 17, 40, 2, 1, 1, 50, 0, BLOOM_OP_BLOOM },   { 320, 200, 3, 2, 2, 90, 1, BLOOM_OP_BLOOM },
		{ 301, 203, 3, 2, 2, 90, 0, BLOOM_OP_BLOOM }, { 301, 203, 3, 1, 1, 50, 1, BLOOM_OP_CONVOLVE },
		{ 96, 64, 3, 1, 1, 100, 1, BLOOM_OP_CONVOLVE },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		int op = cases[c].op;
		struct image in = rand_image(cases[c].w, cases[c].h, cases[c].ic, 0.0f, 1.0f);
		/* convolve: a 1x1 kernel of 1 keeps the noise */
		struct image k = op == BLOOM_OP_CONVOLVE ? rand_image(1, 1, 3, 1, 1) : rand_image(5, 3, 3, 0, 1);
		struct bloom_params p;
		tu_params(&p, op);
		struct bloom_frame f = { &in, NULL, NULL, 0 };
		struct bloom_kernel kr = { &k, { 0, 0 } };
		struct bloom_result dc, sc;
		memset(&dc, 0, sizeof dc);
		dc.want_yuv = 1;
		dc.sub_x = cases[c].sx, dc.sub_y = cases[c].sy;
		dc.dct_quality = cases[c].quality;
		sc = dc;
		sc.entropy = 1, sc.lend = cases[c].lend;
		char err[BLOOM_ERR_LEN];
		assert_int_equal(bloom_run_frame(g_b, op, &f, &kr, &p, 0, &dc, NULL, err), 0);
		assert_int_equal(dc.yuv.coded, 0);
		if (bloom_run_frame(g_b, op, &f, &kr, &p, cases[c].lend ? BLOOM_DEFER : 0, &sc, NULL, err) ||
		    bloom_result_finish(&sc, NULL, err))
			fail_msg("scan: %s", err);
		assert_int_equal(sc.lost, dc.lost);
		unsigned char *ref, *mine;
		size_t rlen, mlen;
		assert_int_equal(yuv_ref_jpeg_rows(&dc.yuv, &ref, &rlen), 0);
		print_message("scan %dx%d ch %d sub %dx%d q %d: %zu bytes on the GPU (%.2f bits a "
		              "sample), libjpeg %zu\n", cases[c].w, cases[c].h, sc.channels, cases[c].sx,
		              cases[c].sy, cases[c].quality, sc.yuv.coded,
		              8.0 * (double)rlen / ((double)cases[c].w * cases[c].h * (sc.channels > 2 ? 3 : 1)),
		              rlen);
		if (cases[c].quality == 100 && op == BLOOM_OP_CONVOLVE) {
			/* noise at quality 100: past 64 bytes a block, the coefficients as they are */
			assert_int_equal(sc.yuv.coded, 0);
			assert_int_equal(sc.yuv.bytes, dc.yuv.bytes);
			assert_memory_equal(sc.yuv.data, dc.yuv.data, dc.yuv.bytes);
		} else {
			assert_true(sc.yuv.coded > 0);
			if (image_encode_jpeg_yuv(&sc.yuv, cases[c].quality, &mine, &mlen, err))
				fail_msg("wrapping the scan: %s", err);
			if (mlen != rlen || memcmp(mine, ref, rlen)) {
				size_t d = 0;
				while (d < mlen && d < rlen && mine[d] == ref[d])
					d++;
				fail_msg("the GPU's JPEG is %zu bytes, libjpeg's %zu; first difference at %zu",
				         mlen, rlen, d);
			}
			free(mine);
		}
		free(ref);
		result_free(&sc);
		yuv_image_free(&dc.yuv);
		image_free(&in);
		image_free(&k);
	}
}

/* A context whose scan coding may take 64 KiB of GPU memory: frames that need more come back
 * as their coefficients (the same as without coding, copied or lent and deferred), smaller ones
 * as their scan. */
static void test_jpeg_scan_room(void **state)
{
	(void)state;
	struct bloom_ctx *t;
	struct bloom_ctx_opts o = {.scan_scratch_max = 64 << 10};
	char err[BLOOM_ERR_LEN];
	if (bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &o, NULL, &t, err))
		fail_msg("context: %s", err);
	static const struct { int w, h, lend, fits; } cases[] = {
		{ 200, 150, 0, 0 }, { 200, 150, 1, 0 }, { 40, 30, 1, 1 }, { 40, 30, 0, 1 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct image in = rand_image(cases[c].w, cases[c].h, 3, 0.0f, 1.0f);
		struct image k = rand_image(3, 3, 3, 0, 1);
		struct bloom_params p;
		tu_params(&p, BLOOM_OP_BLOOM);
		struct bloom_frame f = { &in, NULL, NULL, 0 };
		struct bloom_kernel kr = { &k, { 0, 0 } };
		struct bloom_result dc, sc;
		memset(&dc, 0, sizeof dc);
		dc.want_yuv = 1, dc.sub_x = dc.sub_y = 1, dc.dct_quality = 90;
		sc = dc;
		sc.entropy = 1, sc.lend = cases[c].lend;
		assert_int_equal(bloom_run_frame(t, BLOOM_OP_BLOOM, &f, &kr, &p, 0, &dc, NULL, err), 0);
		if (bloom_run_frame(t, BLOOM_OP_BLOOM, &f, &kr, &p, cases[c].lend ? BLOOM_DEFER : 0, &sc,
		                    NULL, err) || bloom_result_finish(&sc, NULL, err))
			fail_msg("scan: %s", err);
		assert_int_equal(sc.lost, dc.lost);
		if (cases[c].fits) {
			assert_true(sc.yuv.coded > 0);
		} else {
			assert_int_equal(sc.yuv.coded, 0);
			assert_memory_equal(sc.yuv.data, dc.yuv.data, dc.yuv.bytes);
		}
		result_free(&sc);
		yuv_image_free(&dc.yuv);
		image_free(&in);
		image_free(&k);
	}
	bloom_ctx_destroy(t);
}

/* Tiles: a context whose frames may take 1.5 MiB of GPU memory (padded plans of at most about
 * 140 x 140) runs every case in overlap-save tiles, against the same CPU references and
 * tolerance as the untiled runs: off-centre and default centres (uneven halos), kernels larger
 * than a tile's output, colour and gray, 1-4 channels, the bloom's prefilter and composites. */
/* A frame memory that runs a 1500x720 frame in tiles of at least 8 MB of floats each */
#define PAR_TILED_BYTES (60u << 20)

static struct bloom_ctx *tiling_ctx(size_t frame_bytes)
{
	struct bloom_ctx *t;
	struct bloom_ctx_opts o = {.frame_bytes = frame_bytes};
	char err[BLOOM_ERR_LEN];
	assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &o, NULL, &t, err), 0);
	return t;
}

static void test_tiles_reference(void **state)
{
	(void)state;
	g_use = tiling_ctx(3u << 19);
	check_convolve(300, 170, 4, 61, 45, 3, 0, "", 30, 22, 1);
	check_convolve(257, 131, 3, 64, 64, 3, 1, "10,50", 10, 50, 1);
	check_convolve(203, 97, 1, 9, 13, 1, 1, "0,0", 0, 0, 1);
	check_convolve(190, 150, 2, 33, 5, 3, 0, "32,4", 32, 4, 1);
	check_convolve(900, 30, 4, 15, 3, 3, 0, "", 7, 1, 1);
	bloom_ctx_destroy(g_use);
	/* frames past BLOOM_PAR_PIXELS (widened to RGBA and narrowed back on several threads where
	 * the host has more than one core), whole and in tiles past TILE_PAR_BYTES (cropped and
	 * pasted so) */
	g_use = NULL;
	check_convolve(1100, 520, 3, 3, 2, 3, 0, "", 1, 1, 0);
	struct bloom_cache_stats cs;
	bloom_ctx_stats(g_b, &cs); /* staged through the mapped buffer, which stays that large */
	assert_true(cs.staging_bytes >= (size_t)1100 * 520 * 16);
	g_use = tiling_ctx(PAR_TILED_BYTES);
	check_convolve(1500, 720, 4, 3, 2, 3, 0, "", 1, 1, 0);
	bloom_ctx_destroy(g_use);
	/* the bloom's 41x29 frame in 2 tiles: whole it pads to 45x35 (126560 bytes), its 32-pixel
	 * tiles, whole in height (their side's span, fft_tile_span), to 40x35 (112000) */
	g_use = tiling_ctx(120000);
	check_bloom(BLOOM_COMPOSITE_ADD, 1.0, 0.5, 0);
	check_bloom(BLOOM_COMPOSITE_MIX, 1.5, 0.2, 1);
	bloom_ctx_destroy(g_use);
	g_use = NULL;
}

/* What the tiles take from the whole frame: the kernel resized for the whole image
 * (kernel_scale), a preset, planes in (converted on the CPU for tiles: within the GPU
 * conversion's 1.5 codes of the untiled run) and planes asked for out (a float result), a
 * result that overflows float32 (counted), and a kernel no tile can hold (refused). */
static void test_tiles_frame(void **state)
{
	(void)state;
	struct bloom_ctx *t = tiling_ctx(3u << 19);
	char err[BLOOM_ERR_LEN];
	struct image in = rand_image(310, 190, 3, 0, 4), a, b;
	struct bloom_stats sa, sb;
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_BLOOM);
	p.kernel_scale = 0.25;
	struct bloom_kernel preset = {NULL, {0, 0}};
	assert_int_equal(bloom_run(g_b, BLOOM_OP_BLOOM, &in, &preset, &p, 0, &a, &sa, err), 0);
	assert_int_equal(bloom_run(t, BLOOM_OP_BLOOM, &in, &preset, &p, 0, &b, &sb, err), 0);
	print_message("kernel_scale 0.25: %dx%d tiles of padded %dx%d, untiled %dx%d\n", sb.tiles_x,
	              sb.tiles_y, sb.padded_w, sb.padded_h, sa.padded_w, sa.padded_h);
	assert_true(sb.tiles_x * sb.tiles_y > 1);
	double *ra = malloc((size_t)310 * 190 * 3 * sizeof *ra);
	for (size_t i = 0; i < (size_t)310 * 190 * 3; i++)
		ra[i] = a.pixels[i];
	assert_true(tu_check("tiled vs untiled, kernel_scale 0.25", b.pixels, ra, (size_t)310 * 190 * 3,
	                     TOL));
	free(ra);
	image_free(&a), image_free(&b);

	/* planes in, planes asked for out */
	struct yuv_image planes, y;
	struct image_info info;
	unsigned lost = 0;
	unsigned char *jpeg, *ex;
	size_t len, exlen;
	struct image small = rand_image(300, 170, 3, 0, 1);
	assert_int_equal(yuv_ref_from_image(&small, 0, 2, 2, 0, &planes, &lost), 0);
	assert_int_equal(image_encode_jpeg_yuv(&planes, 90, &jpeg, &len, err), 0);
	assert_int_equal(yuv_ref_add_exif(jpeg, len, 6, &ex, &exlen), 0);
	assert_int_equal(image_decode_jpeg_yuv(ex, exlen, NULL, &y, &info, err), 0);
	tu_params(&p, BLOOM_OP_BLOOM);
	struct image k = rand_image(21, 17, 3, 0, 1);
	struct bloom_kernel kr = {&k, {0, 0}};
	struct bloom_frame f = {NULL, &y, NULL, 0};
	struct bloom_result r1, r2;
	memset(&r1, 0, sizeof r1);
	memset(&r2, 0, sizeof r2);
	assert_int_equal(bloom_run_frame(g_b, BLOOM_OP_BLOOM, &f, &kr, &p, 0, &r1, &sa, err), 0);
	r2.want_yuv = 1, r2.sub_x = r2.sub_y = 2;
	assert_int_equal(bloom_run_frame(t, BLOOM_OP_BLOOM, &f, &kr, &p, 0, &r2, &sb, err), 0);
	assert_true(sb.tiles_x * sb.tiles_y > 1);
	assert_null(r2.yuv.data);
	assert_non_null(r2.img.pixels);
	assert_int_equal(r2.img.width, 170);
	assert_int_equal(r2.img.height, 300);
	double d = code_diff(&r2.img, &r1.img);
	print_message("planes in, tiled: %.3f codes from the untiled run (tolerance 1.51)\n", d);
	assert_true(d <= 1.51);
	image_free(&r1.img), image_free(&r2.img), image_free(&small), image_free(&k);
	yuv_image_free(&planes), yuv_image_free(&y);
	free(jpeg), free(ex);

	/* float32 overflow found in tiles too */
	tu_params(&p, BLOOM_OP_CONVOLVE);
	p.normalize = BLOOM_NORMALIZE_NONE;
	struct image big = rand_image(300, 170, 1, 1e38f, 3e38f), k3 = rand_image(9, 9, 1, 1, 2);
	struct bloom_kernel kb = {&k3, {0, 0}};
	assert_int_equal(bloom_run(t, BLOOM_OP_CONVOLVE, &big, &kb, &p, 0, &a, &sb, err), BLOOM_E_ARG);
	print_message("overflow in tiles: %s\n", err);
	assert_non_null(strstr(err, "not finite"));
	image_free(&big), image_free(&k3);

	/* a kernel whose own padded plan exceeds the budget */
	struct image huge = rand_image(200, 200, 1, 0, 1);
	struct bloom_kernel kh = {&huge, {0, 0}};
	assert_int_equal(bloom_run(t, BLOOM_OP_CONVOLVE, &in, &kh, &p, 0, &a, &sb, err),
	                 BLOOM_E_TOO_LARGE);
	print_message("kernel beyond every tile: %s\n", err);
	struct bloom_limits lim;
	bloom_ctx_limits(t, &lim);
	print_message("limits at 1.5 MiB: %llu untiled pixels, kernels to %d a side\n",
	              lim.untiled_pixels, lim.max_kernel_side);
	assert_true(lim.max_kernel_side < 200 && lim.max_kernel_side > 60);
	image_free(&huge), image_free(&in);
	bloom_ctx_destroy(t);
}

/* One frame on b: the stats, and the result in *out. */
static void run_on(struct bloom_ctx *b, int op, const struct image *in, const struct image *k,
                   const struct bloom_params *p, struct image *out, struct bloom_stats *st)
{
	char err[BLOOM_ERR_LEN];
	struct bloom_kernel kr = {k, {0, 0}};
	int rc = bloom_run(b, op, in, &kr, p, 0, out, st, err);
	if (rc)
		printf("bloom_run: %s\n", err);
	assert_int_equal(rc, 0);
}

/* out against a run of the same frame on g_b, whose plans are the frame's own (no borrowing). */
static int same_as_own(const char *name, int op, const struct image *in, const struct image *k,
                       const struct bloom_params *p, const struct image *out)
{
	struct image own;
	struct bloom_stats st;
	run_on(g_b, op, in, k, p, &own, &st);
	assert_int_equal(st.borrowed, 0);
	size_t n = (size_t)own.width * own.height * own.channels;
	double *r = malloc(n * sizeof *r);
	for (size_t i = 0; i < n; i++)
		r[i] = own.pixels[i];
	char full[160];
	snprintf(full, sizeof full, "%s vs its own plan %dx%d", name, st.padded_w, st.padded_h);
	int ok = out->width == own.width && out->height == own.height &&
	         out->channels == own.channels && tu_check(full, out->pixels, r, n, TOL);
	free(r);
	image_free(&own);
	return ok;
}

/* bloom_want (spare plans): between frames under load nothing is built for it, under a long
 * load its plan (BLOOM_WANT_LOAD), in idle time then the built-in kernel's spectrum at it and a
 * run of its stages, compiling a program a step at most; a frame of that size and kernel then
 * runs on that plan with the spectrum cached, compiling nothing, and agrees with a context
 * that made both on the frame's path. */
static void test_want(void **state)
{
	(void)state;
	struct program_cache *pc;
	assert_int_equal(program_cache_create("", NULL, &pc), 0);
	/* rehearse as on a GPU */
	struct bloom_ctx_opts o = {.borrow_plans = 1, .rehearse = 1};
	struct bloom_ctx *b;
	char err[BLOOM_ERR_LEN];
	assert_int_equal(bloom_ctx_create(pc, egl_ctx_info(tu_gl_context()), &o, NULL, &b, err), 0);
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_BLOOM);
	tu_param(&p, BLOOM_OP_BLOOM, "kernel_preset", "gaussian:sigma=2,size=13");
	assert_int_equal(bloom_want(b, 70, 50, p.preset.size, p.preset.size, &p), 0);
	struct bloom_cache_stats cs;
	bloom_ctx_stats(b, &cs);
	assert_int_equal(cs.plans_wanted, 1);
	assert_int_equal(cs.kernel_entries, 0); /* nothing generated before idle time */
	assert_int_equal(cs.plans_urgent, 0);
	assert_int_equal(bloom_build_wanted(b, BLOOM_WANT_URGENT), 0); /* under load: waits */
	int steps = 0;
	struct program_stats s0, s1;
	program_cache_stats(pc, &s0);
	unsigned long long most = 0, first = s0.misses;
	for (int plans_only = 1; plans_only >= 0; plans_only--) {
		/* between frames under a long load the plan only, then in idle time its spectrum and
		 * its rehearsal */
		while (steps < 1000 &&
		       bloom_build_wanted(b, plans_only ? BLOOM_WANT_LOAD : BLOOM_WANT_IDLE)) {
			steps++;
			program_cache_stats(pc, &s1);
			most = s1.misses - s0.misses > most ? s1.misses - s0.misses : most;
			s0 = s1;
		}
		bloom_ctx_stats(b, &cs);
		assert_int_equal(cs.plans_built_idle, 1);
		assert_int_equal(cs.plans_wanted, 0);
		assert_int_equal(cs.kernel_entries, plans_only ? 0 : 1);
	}
	print_message("  want 70x50: %d idle steps, %llu programs (at most %llu a step), %zu kernel "
	              "spectra\n", steps, s0.misses - first, most, cs.kernel_entries);
	assert_true(most <= 1);
	assert_int_equal(cs.plans_built_idle, 1);
	assert_int_equal(cs.kernel_entries, 1);
	struct image in = rand_image(70, 50, 3, 0, 2), out;
	struct bloom_stats st;
	program_cache_stats(pc, &s0);
	struct bloom_kernel none = {NULL, {0, 0}};
	assert_int_equal(bloom_run(b, BLOOM_OP_BLOOM, &in, &none, &p, 0, &out, &st, err), 0);
	program_cache_stats(pc, &s1);
	bloom_ctx_stats(b, &cs);
	print_message("  then a 70x50 frame: padded %dx%d, kernel cached %d, %llu programs compiled\n",
	              st.padded_w, st.padded_h, st.kernel_cached, s1.misses - s0.misses);
	assert_int_equal(st.borrowed, 0);
	assert_int_equal(st.kernel_cached, 1);
	assert_true(s1.misses == s0.misses);
	struct image own;
	struct bloom_stats ost;
	assert_int_equal(bloom_run(g_b, BLOOM_OP_BLOOM, &in, &none, &p, 0, &own, &ost, err), 0);
	size_t n = (size_t)own.width * own.height * own.channels;
	double *r = malloc(n * sizeof *r);
	for (size_t i = 0; i < n; i++)
		r[i] = own.pixels[i];
	int ok = out.channels == own.channels &&
	         tu_check("spare plan with its spectrum made in idle time", out.pixels, r, n, TOL);
	free(r);
	image_free(&own), image_free(&out), image_free(&in);
	assert_true(ok);
	bloom_ctx_destroy(b);
	program_cache_destroy(pc);
}

/* Which wishes are built under load (bloom_build_wanted's modes): one that borrowed a plan far
 * larger, or in tiles, between any frames (BLOOM_WANT_URGENT), a program a step; one that
 * borrowed a plan whole at little cost (at most BLOOM_BORROW_WHOLE_COST its own area) only
 * under a long load (BLOOM_WANT_LOAD), and then only where its plan evicts none (opts.max_plans),
 * else in idle time. */
static void test_borrow_urgent(void **state)
{
	(void)state;
	struct program_cache *pc;
	assert_int_equal(program_cache_create("", NULL, &pc), 0);
	struct bloom_ctx_opts o = {.borrow_plans = 1, .max_plans = 3};
	struct bloom_ctx *b;
	char err[BLOOM_ERR_LEN];
	assert_int_equal(bloom_ctx_create(pc, egl_ctx_info(tu_gl_context()), &o, NULL, &b, err), 0);
	struct image k = rand_image(9, 7, 3, 0, 1), warm = rand_image(96, 80, 4, 0, 3), out;
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	struct bloom_stats st;
	run_on(b, BLOOM_OP_CONVOLVE, &warm, &k, &p, &out, &st);
	image_free(&out);
	int wpw = st.padded_w, wph = st.padded_h;
	/* near: 90x74 pads to a little less than the warm plan; far: 60x50 to under half of it;
	 * large: 200x121 in tiles of it */
	static const int sizes[3][2] = {{90, 74}, {60, 50}, {200, 121}};
	struct bloom_cache_stats cs;
	for (int s = 0; s < 3; s++) {
		struct image in = rand_image(sizes[s][0], sizes[s][1], 4, 0, 3);
		run_on(b, BLOOM_OP_CONVOLVE, &in, &k, &p, &out, &st);
		image_free(&out), image_free(&in);
		double cost = st.tiles_x * st.tiles_y * (double)wpw * wph / ((double)st.own_w * st.own_h);
		bloom_ctx_stats(b, &cs);
		print_message("  %dx%d: borrowed %d, %dx%d tiles, own %dx%d, cost %.2f: %zu wanted, %zu "
		              "urgent\n", sizes[s][0], sizes[s][1], st.borrowed, st.tiles_x, st.tiles_y,
		              st.own_w, st.own_h, cost, cs.plans_wanted, cs.plans_urgent);
		assert_int_equal(st.borrowed, 1);
		assert_int_equal(st.tiles_x * st.tiles_y > 1, s == 2);
		assert_int_equal(st.tiles_x * st.tiles_y > 1 || cost > BLOOM_BORROW_WHOLE_COST, s > 0);
		assert_int_equal(cs.plans_wanted, (size_t)s + 1);
		assert_int_equal(cs.plans_urgent, (size_t)s);
	}
	/* under load: the two urgent ones (tiled first, the newest), a program a step */
	struct program_stats s0, s1;
	program_cache_stats(pc, &s0);
	int steps = 0;
	unsigned long long most = 0;
	while (steps < 1000 && bloom_build_wanted(b, BLOOM_WANT_URGENT)) {
		steps++;
		program_cache_stats(pc, &s1);
		most = s1.misses - s0.misses > most ? s1.misses - s0.misses : most;
		s0 = s1;
	}
	bloom_ctx_stats(b, &cs);
	print_message("  under load: %d steps, at most %llu programs a step; %zu built, %zu wanted, "
	              "%zu urgent\n", steps, most, (size_t)cs.plans_built_idle, cs.plans_wanted,
	              cs.plans_urgent);
	assert_true(most <= 1);
	assert_int_equal(cs.plans_built_idle, 2);
	assert_int_equal(cs.plans_wanted, 1);
	assert_int_equal(cs.plans_urgent, 0);
	struct image near = rand_image(90, 74, 4, 0, 3);
	run_on(b, BLOOM_OP_CONVOLVE, &near, &k, &p, &out, &st);
	image_free(&out);
	assert_int_equal(st.borrowed, 1); /* still: its plan waits */
	/* a long load: its plan would evict one of the three (max_plans 3), so it still waits
	 * (idle time builds it, evicting the least recently used: test_borrow) */
	assert_int_equal(cs.plan_entries, 3);
	assert_int_equal(bloom_build_wanted(b, BLOOM_WANT_LOAD), 0);
	bloom_ctx_stats(b, &cs);
	assert_int_equal(cs.plans_built_idle, 2);
	assert_int_equal(cs.plans_wanted, 1);
	image_free(&near);
	bloom_ctx_destroy(b);
	/* with room left, a long load builds a cheap wish's plan between frames */
	o.max_plans = 0;
	assert_int_equal(bloom_ctx_create(pc, egl_ctx_info(tu_gl_context()), &o, NULL, &b, err), 0);
	run_on(b, BLOOM_OP_CONVOLVE, &warm, &k, &p, &out, &st);
	image_free(&out);
	near = rand_image(90, 74, 4, 0, 3);
	run_on(b, BLOOM_OP_CONVOLVE, &near, &k, &p, &out, &st);
	image_free(&out);
	assert_int_equal(st.borrowed, 1);
	assert_int_equal(bloom_build_wanted(b, BLOOM_WANT_URGENT), 0);
	steps = 0;
	while (steps < 1000 && bloom_build_wanted(b, BLOOM_WANT_LOAD))
		steps++;
	bloom_ctx_stats(b, &cs);
	print_message("  a long load: the near size's plan in %d steps between frames\n", steps);
	assert_int_equal(cs.plans_built_idle, 1);
	assert_int_equal(cs.plans_wanted, 0);
	run_on(b, BLOOM_OP_CONVOLVE, &near, &k, &p, &out, &st);
	assert_int_equal(st.borrowed, 0);
	image_free(&out), image_free(&near), image_free(&k), image_free(&warm);
	bloom_ctx_destroy(b);
	program_cache_destroy(pc);
}

/* The clock of bloom_ctx_opts.clock_ms in the tests below: the milliseconds *arg holds. */
static double test_clock_ms(void *arg)
{
	return *(const double *)arg;
}

/* One frame of in on b (its stats in *st), then steps of bloom_build_wanted in `mode` until it
 * takes none (a load's steps between frames); returns the steps. */
static int frame_then_steps(struct bloom_ctx *b, const struct image *in, const struct image *k,
                            const struct bloom_params *p, int mode, struct bloom_stats *st)
{
	struct image out;
	run_on(b, BLOOM_OP_CONVOLVE, in, k, p, &out, st);
	image_free(&out);
	int steps = 0;
	while (steps < 1000 && bloom_build_wanted(b, mode))
		steps++;
	return steps;
}

/* The borrowing-under-load tests' context: max_plans plans on a clock the test steps (now), a
 * 9x7 kernel, and frames padded about 64x48, 96x64 and 128x96 (in[0..2]), each twice the area of
 * the one before: the smallest borrows the middle one's plan whole (2x its area), the middle one
 * the largest's, the largest the middle one's in tiles. The plans of sizes warm_from..1 are
 * built. */
static const int thrash_sizes[3][2] = {{56, 42}, {88, 58}, {120, 90}};

struct thrash {
	struct program_cache *pc;
	struct bloom_ctx *b;
	struct image k, in[3];
	struct bloom_params p;
	double now;
};

static void thrash_setup(struct thrash *t, int max_plans, int warm_from)
{
	char err[BLOOM_ERR_LEN];
	assert_int_equal(program_cache_create("", NULL, &t->pc), 0);
	t->now = 1e6;
	struct bloom_ctx_opts o = {.borrow_plans = 1, .max_plans = max_plans,
	                           .clock_ms = test_clock_ms, .clock_arg = &t->now};
	assert_int_equal(bloom_ctx_create(t->pc, egl_ctx_info(tu_gl_context()), &o, NULL, &t->b, err),
	                 0);
	t->k = rand_image(9, 7, 3, 0, 1);
	tu_params(&t->p, BLOOM_OP_CONVOLVE);
	for (int s = 0; s < 3; s++)
		t->in[s] = rand_image(thrash_sizes[s][0], thrash_sizes[s][1], 4, 0, 3);
	for (int s = warm_from; s < 2; s++)
		assert_int_equal(bloom_warm(t->b, thrash_sizes[s][0], thrash_sizes[s][1], t->k.width,
		                            t->k.height, &t->p, err), 0);
}

static void thrash_teardown(struct thrash *t)
{
	for (int s = 0; s < 3; s++)
		image_free(&t->in[s]);
	image_free(&t->k);
	bloom_ctx_destroy(t->b);
	program_cache_destroy(t->pc);
}

/* More sizes in rotation under load than opts.max_plans holds, each borrowing urgently (in
 * tiles, or a plan twice its area) while its own plan is missing: building a wish would evict a
 * plan a frame ran on within BLOOM_PLAN_IN_USE_MS, whose next frame would borrow and wish it
 * back, so under load (BLOOM_WANT_URGENT and BLOOM_WANT_LOAD) the wish is held back (counted
 * once, its frames borrowing, no plan rebuilt) and idle time builds it; a plan unused for longer
 * than the window is evicted under load. The held-back size's borrowed frame agrees with its own
 * plan's. */
static void test_borrow_thrash(void **state)
{
	(void)state;
	struct thrash t;
	thrash_setup(&t, 2, 0);
	struct bloom_ctx *b = t.b;
	struct image k = t.k, *in = t.in;
	struct bloom_params p = t.p;
	const int (*sizes)[2] = thrash_sizes;
	struct bloom_cache_stats cs, c0;
	bloom_ctx_stats(b, &c0);
	assert_int_equal(c0.plan_entries, 2);
	struct bloom_stats st;
	/* under load, a frame of each size in turn, every 100 ms: the largest size's wish is held
	 * back, as its plan would evict the smallest's, used 200 ms before */
	static const int modes[2] = {BLOOM_WANT_URGENT, BLOOM_WANT_LOAD};
	int borrowed[6][3], tiled[6][3], steps_after[6][3];
	for (int round = 0; round < 6; round++) {
		int mode = modes[round / 3];
		for (int s = 0; s < 3; s++) {
			t.now += 100;
			steps_after[round][s] = frame_then_steps(b, &in[s], &k, &p, mode, &st);
			borrowed[round][s] = st.borrowed;
			tiled[round][s] = st.tiles_x * st.tiles_y > 1;
			bloom_ctx_stats(b, &cs);
			print_message("  %s round %d, %dx%d: borrowed %d (padded %dx%d in %dx%d tiles, own "
			              "%dx%d), %d steps after; built %llu, misses %llu, urgent %zu, held "
			              "back %llu\n", mode == BLOOM_WANT_URGENT ? "urgent" : "load", round,
			              sizes[s][0], sizes[s][1], st.borrowed, st.padded_w, st.padded_h,
			              st.tiles_x, st.tiles_y, st.own_w, st.own_h, steps_after[round][s],
			              cs.plans_built_idle, cs.plan_misses - c0.plan_misses,
			              cs.plans_urgent, cs.plans_held_back);
		}
	}
	/* no plan built or rebuilt: the two plans stay, the largest size borrows in tiles */
	assert_int_equal(cs.plans_built_idle, 0);
	assert_true(cs.plan_misses == c0.plan_misses);
	assert_int_equal(cs.plan_entries, 2);
	assert_int_equal(cs.plans_urgent, 1);
	assert_int_equal(cs.plans_held_back, 1); /* once a wish, not once a step */
	for (int round = 0; round < 6; round++)
		for (int s = 0; s < 3; s++) {
			assert_int_equal(borrowed[round][s], s == 2);
			assert_int_equal(tiled[round][s], s == 2);
			assert_int_equal(steps_after[round][s], 0);
		}
	struct image out;
	run_on(b, BLOOM_OP_CONVOLVE, &in[2], &k, &p, &out, &st);
	assert_int_equal(st.borrowed, 1);
	int ok = same_as_own("held-back size, borrowed in tiles", BLOOM_OP_CONVOLVE, &in[2], &k,
	                     &p, &out);
	image_free(&out);
	assert_true(ok);

	/* idle time builds it, evicting the least recently used plan (the smallest size's) */
	int steps = 0;
	while (steps < 1000 && bloom_build_wanted(b, BLOOM_WANT_IDLE))
		steps++;
	bloom_ctx_stats(b, &cs);
	print_message("  idle: %d steps; built %llu, wanted %zu, plans %zu\n", steps,
	              cs.plans_built_idle, cs.plans_wanted, cs.plan_entries);
	assert_int_equal(cs.plans_built_idle, 1);
	assert_int_equal(cs.plans_wanted, 0);
	assert_int_equal(cs.plan_entries, 2);
	t.now += 100;
	frame_then_steps(b, &in[2], &k, &p, BLOOM_WANT_URGENT, &st);
	assert_int_equal(st.borrowed, 0);

	/* the smallest size t.now borrows the middle one's plan (whole, twice its area): its wish
	 * would evict the largest's plan, used 100 ms before, so it waits; once that plan has gone
	 * unused for BLOOM_PLAN_IN_USE_MS, a step under load builds it */
	double largest_used = t.now;
	int built_at = -1;
	for (int i = 0; i < 12 && built_at < 0; i++) {
		t.now += 1000;
		steps = frame_then_steps(b, &in[0], &k, &p, BLOOM_WANT_URGENT, &st);
		bloom_ctx_stats(b, &cs);
		print_message("  +%.0f s: %dx%d borrowed %d (padded %dx%d, own %dx%d), %d steps after; "
		              "built %llu, held back %llu\n", (t.now - largest_used) / 1e3, sizes[0][0],
		              sizes[0][1], st.borrowed, st.padded_w, st.padded_h, st.own_w, st.own_h,
		              steps, cs.plans_built_idle, cs.plans_held_back);
		assert_int_equal(st.borrowed, 1);
		assert_int_equal(st.tiles_x * st.tiles_y, 1);
		assert_true((double)st.padded_w * st.padded_h > BLOOM_BORROW_WHOLE_COST * st.own_w *
		                                                  st.own_h);
		int aged = t.now - largest_used >= BLOOM_PLAN_IN_USE_MS;
		assert_int_equal(cs.plans_built_idle, aged ? 2 : 1);
		assert_int_equal(cs.plans_held_back, 2);
		if (aged)
			built_at = i;
	}
	assert_true(built_at >= 0);
	t.now += 100;
	frame_then_steps(b, &in[0], &k, &p, BLOOM_WANT_URGENT, &st);
	assert_int_equal(st.borrowed, 0);
	bloom_ctx_stats(b, &cs);
	assert_int_equal(cs.plans_held_back, 2);
	assert_int_equal(cs.plans_wanted, 0);

	thrash_teardown(&t);
}

/* A wish built under load stays queued for its kernel's spectrum (idle time): when its plan is
 * evicted later, it is no longer urgent, so a load does not rebuild the plan of a size that
 * stopped coming each time a cached plan ages out (BLOOM_PLAN_IN_USE_MS); a frame of that size
 * borrowing again makes it urgent again. */
static void test_borrow_stale_wish(void **state)
{
	(void)state;
	struct thrash t;
	thrash_setup(&t, 2, 0);
	struct bloom_ctx *b = t.b;
	struct image k = t.k, *in = t.in;
	struct bloom_params p = t.p;
	struct bloom_stats st;
	struct bloom_cache_stats cs;
	/* the largest size borrows in tiles; 11 s on, a step under load builds its plan, evicting
	 * the smallest's; its wish stays for its kernel's spectrum */
	t.now += 100;
	frame_then_steps(b, &in[2], &k, &p, BLOOM_WANT_URGENT, &st);
	assert_int_equal(st.borrowed, 1);
	t.now += BLOOM_PLAN_IN_USE_MS + 1000;
	frame_then_steps(b, &in[1], &k, &p, BLOOM_WANT_URGENT, &st);
	bloom_ctx_stats(b, &cs);
	assert_int_equal(cs.plans_built_idle, 1);
	/* the smallest size borrows (the middle plan, whole, twice its area) for 11 s of load on
	 * the middle size: its plan is built, evicting the largest's, unused since it was built */
	t.now += 100;
	frame_then_steps(b, &in[0], &k, &p, BLOOM_WANT_URGENT, &st);
	assert_int_equal(st.borrowed, 1);
	for (int i = 0; i < 11; i++) {
		t.now += 1000;
		frame_then_steps(b, &in[1], &k, &p, BLOOM_WANT_URGENT, &st);
	}
	bloom_ctx_stats(b, &cs);
	print_message("  the largest size's plan evicted, its wish queued: built %llu, wanted %zu, "
	              "urgent %zu, held back %llu\n", cs.plans_built_idle, cs.plans_wanted,
	              cs.plans_urgent, cs.plans_held_back);
	assert_int_equal(cs.plans_built_idle, 2);
	assert_int_equal(cs.plan_entries, 2);
	assert_int_equal(cs.plans_wanted, 1);
	assert_int_equal(cs.plans_held_back, 2); /* both wishes, while the plan to go was in use */
	size_t urgent = cs.plans_urgent;
	/* under load, with every cached plan aged out: nothing built for a size gone */
	t.now += BLOOM_PLAN_IN_USE_MS + 1000;
	int steps = frame_then_steps(b, &in[1], &k, &p, BLOOM_WANT_URGENT, &st);
	steps += frame_then_steps(b, &in[1], &k, &p, BLOOM_WANT_LOAD, &st);
	bloom_ctx_stats(b, &cs);
	print_message("  %d steps under load after every plan aged: built %llu, wanted %zu, "
	              "urgent %zu\n", steps, cs.plans_built_idle, cs.plans_wanted, cs.plans_urgent);
	assert_int_equal(steps, 0);
	assert_int_equal(cs.plans_built_idle, 2);
	assert_int_equal(cs.plans_held_back, 2);
	assert_int_equal(urgent, 0);
	/* a frame of it again: urgent again, and built (the smallest size's plan has aged out) */
	t.now += 100;
	steps = frame_then_steps(b, &in[2], &k, &p, BLOOM_WANT_URGENT, &st);
	assert_int_equal(st.borrowed, 1);
	bloom_ctx_stats(b, &cs);
	print_message("  the largest size again: %d steps under load; built %llu, urgent %zu\n",
	              steps, cs.plans_built_idle, cs.plans_urgent);
	assert_true(steps > 0);
	assert_int_equal(cs.plans_built_idle, 3);
	t.now += 100;
	frame_then_steps(b, &in[2], &k, &p, BLOOM_WANT_URGENT, &st);
	assert_int_equal(st.borrowed, 0);

	thrash_teardown(&t);
}

/* A plan only borrowed is not in use: with room for one plan (the middle size's) and a load of
 * the largest size alone, whose frames borrow that plan in tiles, the wish is held back while
 * the plan counts as newly built (BLOOM_PLAN_IN_USE_MS) and is then built under load, evicting
 * it; the size's next frame runs on its own plan. */
static void test_borrow_orphan(void **state)
{
	(void)state;
	struct thrash t;
	thrash_setup(&t, 1, 1);
	struct bloom_stats st;
	struct bloom_cache_stats cs;
	double start = t.now;
	int built_at = -1;
	for (int i = 0; i < 130 && built_at < 0; i++) { /* a frame every 100 ms for 13 s */
		t.now += 100;
		frame_then_steps(t.b, &t.in[2], &t.k, &t.p, BLOOM_WANT_URGENT, &st);
		bloom_ctx_stats(t.b, &cs);
		if (cs.plans_built_idle)
			built_at = i;
		else
			assert_true(st.borrowed && st.tiles_x * st.tiles_y > 1);
	}
	print_message("  the largest size's plan built under load %.1f s after the middle one's\n",
	              (t.now - start) / 1e3);
	assert_true(built_at >= 0);
	assert_true(t.now - start >= BLOOM_PLAN_IN_USE_MS);
	assert_int_equal(cs.plans_held_back, 1);
	assert_int_equal(cs.plan_entries, 1);
	t.now += 100;
	frame_then_steps(t.b, &t.in[2], &t.k, &t.p, BLOOM_WANT_URGENT, &st);
	assert_int_equal(st.borrowed, 0);
	thrash_teardown(&t);
}

/* Borrowed plans: after frames of one size, a smaller frame runs whole on that size's plan and a
 * larger one in tiles of it, compiling no program (the program cache's counts do not move); the
 * results match the direct convolution and the frames' own plans (prefilter, normalisation,
 * off-centre kernel, composite); the stats say borrowed; idle time then builds each wanted
 * plan and the borrowing frames' kernel's spectrum at it, and the next frame runs on its own
 * plan with that spectrum cached, as a fresh context would. A plan too large for a frame (past
 * BLOOM_BORROW_COST) or of another storage is not borrowed. */
static void test_borrow(void **state)
{
	(void)state;
	struct program_cache *pc; /* its own: its counts are this test's */
	assert_int_equal(program_cache_create("", NULL, &pc), 0);
	struct bloom_ctx_opts o = {.borrow_plans = 1};
	struct bloom_ctx *b;
	char err[BLOOM_ERR_LEN];
	assert_int_equal(bloom_ctx_create(pc, egl_ctx_info(tu_gl_context()), &o, NULL, &b, err), 0);
	struct image k = rand_image(9, 7, 3, 0, 1), warm = rand_image(96, 80, 4, 0, 3), out;
	struct bloom_params pc_, pb;
	tu_params(&pc_, BLOOM_OP_CONVOLVE);
	tu_param(&pc_, BLOOM_OP_CONVOLVE, "kernel_center", "2,5");
	tu_params(&pb, BLOOM_OP_BLOOM);
	/* the same centre: the padded size follows the kernel's reach past it (fft_conv_span) */
	tu_param(&pb, BLOOM_OP_BLOOM, "kernel_center", "2,5");
	pb.threshold = 1.0, pb.knee = 0.5, pb.intensity = 0.7, pb.clamp_max = 2.5;
	struct bloom_stats st, small_st;
	run_on(b, BLOOM_OP_CONVOLVE, &warm, &k, &pc_, &out, &st);
	image_free(&out);
	run_on(b, BLOOM_OP_BLOOM, &warm, &k, &pb, &out, &st);
	image_free(&out);
	assert_int_equal(st.borrowed, 0);
	int wpw = st.padded_w, wph = st.padded_h;
	struct program_stats before, after;
	program_cache_stats(pc, &before);

	/* smaller: whole, on the warm plan; larger: in tiles of it */
	static const int sizes[2][2] = {{61, 47}, {200, 121}};
	for (int s = 0; s < 2; s++) {
		int w = sizes[s][0], h = sizes[s][1];
		struct image in = rand_image(w, h, 4, 0, 3);
		run_on(b, BLOOM_OP_CONVOLVE, &in, &k, &pc_, &out, &st);
		print_message("  %dx%d: borrowed %d, padded %dx%d in %dx%d tiles (own %dx%d)\n", w, h,
		              st.borrowed, st.padded_w, st.padded_h, st.tiles_x, st.tiles_y, st.own_w,
		              st.own_h);
		assert_int_equal(st.borrowed, 1);
		assert_int_equal(st.padded_w, wpw);
		assert_int_equal(st.padded_h, wph);
		assert_int_equal(st.tiles_x * st.tiles_y > 1, s == 1);
		assert_int_equal(st.own_w, frame_pw(w, h, 9, 7, 2, 5)); /* spans w + 6, h + 5 */
		assert_int_equal(st.own_h, frame_ph(w, h, 9, 7, 2, 5));
		assert_true(st.own_w != wpw || st.own_h != wph);
		if (!s)
			small_st = st;
		double *src = rgba_of(&in), *ref = malloc((size_t)w * h * 4 * sizeof *ref);
		conv_direct(src, w, h, &k, 2, 5, 1.0, ref);
		char name[96];
		snprintf(name, sizeof name, "borrowed convolve %dx%d, direct reference", w, h);
		int ok = compare(name, &out, ref, TOL);
		free(src), free(ref);
		ok = ok && same_as_own("borrowed convolve", BLOOM_OP_CONVOLVE, &in, &k, &pc_, &out);
		image_free(&out);
		run_on(b, BLOOM_OP_BLOOM, &in, &k, &pb, &out, &st);
		assert_int_equal(st.borrowed, 1);
		ok = ok && same_as_own("borrowed bloom", BLOOM_OP_BLOOM, &in, &k, &pb, &out);
		image_free(&out), image_free(&in);
		assert_true(ok);
	}
	program_cache_stats(pc, &after);
	print_message("  programs: %llu misses, %u held before; %llu, %u after\n", before.misses,
	              before.count, after.misses, after.count);
	assert_true(after.misses == before.misses && after.count == before.count);
	struct bloom_cache_stats cs;
	bloom_ctx_stats(b, &cs);
	assert_int_equal(cs.plans_borrowed, 4);
	assert_int_equal(cs.plans_wanted, 2);
	assert_int_equal(cs.plan_entries, 1);

	/* idle time: each wanted plan built a program a step, then the borrowing frames' kernel's
	 * spectrum at it, then none; the next frame runs on its own plan and finds that spectrum */
	int steps = 0;
	unsigned long long most = 0;
	struct program_stats s0 = after, s1;
	while (steps < 1000 && bloom_build_wanted(b, 0)) {
		steps++;
		program_cache_stats(pc, &s1);
		most = s1.misses - s0.misses > most ? s1.misses - s0.misses : most;
		s0 = s1;
	}
	print_message("  idle steps to build both: %d, programs compiled %llu, at most %llu a step\n",
	              steps, s0.misses - after.misses, most);
	assert_true(steps > 2); /* more steps than plans: their programs came one at a time */
	assert_true(most <= 1);
	assert_int_equal(bloom_build_wanted(b, 0), 0);
	bloom_ctx_stats(b, &cs);
	assert_int_equal(cs.plans_built_idle, 2);
	assert_int_equal(cs.plans_wanted, 0);
	assert_int_equal(cs.plan_entries, 3);
	program_cache_stats(pc, &before);
	unsigned long long kmiss = cs.kernel_misses;
	struct image in = rand_image(61, 47, 4, 0, 3);
	run_on(b, BLOOM_OP_BLOOM, &in, &k, &pb, &out, &st); /* as the size's last borrowing frame */
	program_cache_stats(pc, &after);
	bloom_ctx_stats(b, &cs);
	print_message("  after the idle build: borrowed %d, padded %dx%d; %llu program misses, "
	              "kernel spectrum cached %d (%llu misses), setup %.3f ms\n", st.borrowed,
	              st.padded_w, st.padded_h, after.misses - before.misses, st.kernel_cached,
	              cs.kernel_misses - kmiss, st.setup_ms);
	assert_int_equal(st.borrowed, 0);
	assert_int_equal(st.padded_w, small_st.own_w);
	assert_int_equal(st.padded_h, small_st.own_h);
	assert_true(after.misses == before.misses);
	assert_int_equal(st.kernel_cached, 1);
	assert_true(cs.kernel_misses == kmiss);
	int ok = same_as_own("own plan, spectrum made in idle time", BLOOM_OP_BLOOM, &in, &k, &pb,
	                     &out);
	image_free(&out), image_free(&in);
	assert_true(ok);

	/* too small a frame for any plan built (each over BLOOM_BORROW_COST times its own): its own
	 * plan on a software renderer, the cheapest built one still on a GPU (bloom_plan_borrow) */
	int gpu = !egl_ctx_info(tu_gl_context())->software;
	in = rand_image(20, 16, 4, 0, 3);
	run_on(b, BLOOM_OP_CONVOLVE, &in, &k, &pc_, &out, &st);
	print_message("  20x16: borrowed %d, padded %dx%d\n", st.borrowed, st.padded_w, st.padded_h);
	if (!gpu) {
		assert_int_equal(st.borrowed, 0);
		assert_int_equal(st.padded_w, frame_pw(20, 16, 9, 7, 2, 5));
	} else {
		assert_int_equal(st.borrowed, 1);
		assert_int_equal(st.padded_w, small_st.own_w);
	}
	image_free(&out), image_free(&in);
	/* float16 storage: no plan of it to borrow */
	struct bloom_params ph = pc_;
	ph.precision = BLOOM_FP16;
	in = rand_image(61, 47, 4, 0, 3);
	run_on(b, BLOOM_OP_CONVOLVE, &in, &k, &ph, &out, &st);
	assert_int_equal(st.borrowed, 0);
	image_free(&out), image_free(&in);
	bloom_ctx_stats(b, &cs);
	/* on a GPU the 20x16 frame borrowed too, and its own plan is wished for */
	assert_int_equal(cs.plans_wanted, gpu);
	assert_int_equal(cs.plans_borrowed, 4 + gpu);

	image_free(&k), image_free(&warm);
	bloom_ctx_destroy(b);
	program_cache_destroy(pc);
}

static void test_errors(void **state)
{
	(void)state;
	struct image in = rand_image(8, 8, 3, 0, 1), k;
	image_alloc(&k, 3, 3, 3); /* all zero: luminance sum 0 */
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_BLOOM);
	struct bloom_kernel kr = {&k, {0, 0}};
	struct image out;
	char err[BLOOM_ERR_LEN];
	assert_int_equal(run_any(BLOOM_OP_BLOOM, &in, &kr, &p, &out, NULL, err), BLOOM_E_ARG);
	printf("zero kernel: %s\n", err);
	assert_non_null(strstr(err, "normalize"));
	k.pixels[4] = 1;
	tu_param(&p, BLOOM_OP_BLOOM, "kernel_center", "5,1");
	assert_int_equal(run_any(BLOOM_OP_BLOOM, &in, &kr, &p, &out, NULL, err), BLOOM_E_ARG);
	printf("bad centre: %s\n", err);
	p.center.mode = KERNEL_CENTER_DEFAULT;
	/* presets are parsed before the engine (api/kernel_preset.h, tests/api); the
	 * engine refuses none at all */
	struct kernel_preset keep = p.preset;
	p.preset.kind = KERNEL_NONE;
	assert_int_equal(run_any(BLOOM_OP_BLOOM, &in, NULL, &p, &out, NULL, err), BLOOM_E_ARG);
	printf("no kernel: %s\n", err);
	p.preset = keep;
	/* non-finite input pixels stay local: the rest of the image is unaffected */
	struct image k2 = rand_image(5, 5, 1, 0, 1);
	struct bloom_kernel kr2 = {&k2, {0, 0}};
	in.pixels[10] = NAN;
	in.pixels[20] = INFINITY;
	assert_int_equal(run_any(BLOOM_OP_BLOOM, &in, &kr2, &p, &out, NULL, err), 0);
	int finite = 0;
	for (int i = 0; i < 64 * 3; i++)
		finite += isfinite(out.pixels[i]) != 0;
	printf("non-finite input: %d of 192 outputs finite\n", finite);
	assert_true(finite >= 190);
	image_free(&out);
	image_free(&in), image_free(&k), image_free(&k2);
}

/* The CPU engine's built-in kernels are the GPU engine's (the aperture through FFTW instead of the
 * GPU's FFT): each preset made by both, compared within float rounding of the transforms. */
static void test_cpu_presets_match_gpu(void **state)
{
	(void)state;
	const char *specs[] = {"gaussian:sigma=3", "glare:streaks=6,rotation=15,size=63",
	                       "aperture:blades=6,size=63", "aperture:blades=0,radius=0.3,size=31"};
	for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
		char err[BLOOM_ERR_LEN];
		struct image kg, kc;
		struct bloom_params pp;
		tu_params(&pp, BLOOM_OP_BLOOM);
		tu_param(&pp, BLOOM_OP_BLOOM, "kernel_preset", specs[s]);
		assert_int_equal(bloom_kernel_preset(g_b, &pp.preset, &kg, err), 0);
		assert_int_equal(cpu_kernel_preset(g_cpu, &pp.preset, &kc, err), 0);
		assert_int_equal(kg.width, kc.width);
		size_t n = (size_t)kg.width * kg.height * 3;
		double *ref = malloc(n * sizeof *ref);
		for (size_t i = 0; i < n; i++)
			ref[i] = kg.pixels[i];
		char name[128];
		snprintf(name, sizeof name, "CPU preset %s vs GPU", specs[s]);
		int ok = tu_check(name, kc.pixels, ref, n, 1e-4);
		free(ref);
		image_free(&kg), image_free(&kc);
		assert_true(ok);
	}
}

/* The CPU engine in overlap-save tiles (cpu_engine_opts.frame_bytes small enough that each
 * case runs in several): the untiled cases' float64 references and tolerance (uneven halos,
 * kernels wider than a tile, colour and gray, 1-4 channels, the bloom's composites); tiled
 * against untiled; and a kernel no tile can hold, refused. */
static struct cpu_engine *cpu_tiling(size_t frame_bytes)
{
	struct cpu_engine *t;
	struct cpu_engine_opts o = {.frame_bytes = frame_bytes};
	char err[CPU_ERR_LEN];
	assert_int_equal(cpu_engine_create(&o, NULL, &t, err), 0);
	return t;
}

/* A frame whose cheapest padded size does not fit the frame memory and whose fewest samples do
 * runs whole at those (bloom_tile_padded; the CPU engine pads alike): 92x136 with an 11x11
 * kernel costs least at 100x160, its spans 97x141 hold at 98x144. On the engine of the test's
 * group, under gpu_bytes or cpu_bytes of frame memory. */
static void budget_smallest(size_t gpu_bytes, size_t cpu_bytes)
{
	assert_int_equal(frame_pw(92, 136, 11, 11, 5, 5), 100);
	assert_int_equal(frame_ph(92, 136, 11, 11, 5, 5), 160);
	struct image in = rand_image(92, 136, 4, -1, 1), k = rand_image(11, 11, 3, 0, 1), out;
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	struct bloom_kernel kr = {&k, {0, 0}};
	struct bloom_stats st;
	char err[BLOOM_ERR_LEN];
	struct cpu_engine *saved = g_cpu;
	if (g_cpu)
		g_cpu = cpu_tiling(cpu_bytes);
	else
		g_use = tiling_ctx(gpu_bytes);
	int rc = run_any(BLOOM_OP_CONVOLVE, &in, &kr, &p, &out, &st, err);
	if (saved)
		cpu_engine_destroy(g_cpu), g_cpu = saved;
	else
		bloom_ctx_destroy(g_use), g_use = NULL;
	assert_int_equal(rc, 0);
	print_message("  92x136 k 11x11 in %zu bytes: %dx%d tiles, padded %dx%d\n",
	              saved ? cpu_bytes : gpu_bytes, st.tiles_x, st.tiles_y, st.padded_w, st.padded_h);
	assert_int_equal(st.tiles_x * st.tiles_y, 1);
	assert_int_equal(st.padded_w, 98);
	assert_int_equal(st.padded_h, 144);
	double *src = rgba_of(&in), *ref = malloc((size_t)92 * 136 * 4 * sizeof *ref);
	conv_direct(src, 92, 136, &k, 5, 5, 1.0, ref);
	int ok = compare("convolve 92x136 at its fewest samples", &out, ref, TOL);
	free(src), free(ref);
	image_free(&out), image_free(&in), image_free(&k);
	assert_true(ok);
}

/* GPU plan bytes (bloom_plan_bytes): 98x144 1128960, 100x160 1280000 */
static void test_budget_smallest(void **state)
{
	(void)state;
	budget_smallest(1200000, 0);
}

/* CPU pass bytes: about 49 a sample, 98x144 about 0.69 MB, 100x160 0.78 */
static void test_cpu_budget_smallest(void **state)
{
	(void)state;
	budget_smallest(0, 740000);
}

static void test_cpu_tiles(void **state)
{
	(void)state;
	struct cpu_engine *whole = g_cpu;
	g_cpu_tiled = 1;
	g_cpu = cpu_tiling(600000);
	check_convolve(300, 170, 4, 61, 45, 3, 0, "", 30, 22, 1);
	check_convolve(257, 131, 3, 64, 64, 3, 1, "10,50", 10, 50, 1);
	check_convolve(203, 97, 1, 9, 13, 1, 1, "0,0", 0, 0, 0);
	check_convolve(190, 150, 2, 33, 5, 3, 0, "32,4", 32, 4, 0);
	check_convolve(900, 30, 4, 15, 3, 3, 0, "", 7, 1, 0);
	/* tiled against untiled, and a kernel that no 32 x 32 tile holds */
	struct image in = rand_image(211, 123, 4, -1, 1), k = rand_image(40, 31, 3, 0, 1), a, b;
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	struct cpu_stats sa, sb;
	char err[CPU_ERR_LEN];
	assert_int_equal(cpu_bloom_run(whole, BLOOM_OP_CONVOLVE, &in, &k, NULL, &p, &a, &sa, err), 0);
	assert_int_equal(cpu_bloom_run(g_cpu, BLOOM_OP_CONVOLVE, &in, &k, NULL, &p, &b, &sb, err), 0);
	print_message("211x123 k 40x31: %dx%d tiles of padded %dx%d, untiled %dx%d\n", sb.tiles_x,
	              sb.tiles_y, sb.padded_w, sb.padded_h, sa.padded_w, sa.padded_h);
	assert_true(sb.tiles_x * sb.tiles_y > 1 && sa.tiles_x * sa.tiles_y == 1);
	size_t n = (size_t)211 * 123 * 4;
	double *ra = malloc(n * sizeof *ra);
	for (size_t i = 0; i < n; i++)
		ra[i] = a.pixels[i];
	int ok = tu_check("CPU tiled vs untiled", b.pixels, ra, n, TOL);
	image_free(&b);
	/* one FFT batched over the planes (cpu_engine_opts.batched_plans) against one plane's on each */
	struct cpu_engine *pp;
	struct cpu_engine_opts po = {.batched_plans = 1};
	assert_int_equal(cpu_engine_create(&po, NULL, &pp, err), 0);
	assert_int_equal(cpu_bloom_run(pp, BLOOM_OP_CONVOLVE, &in, &k, NULL, &p, &b, NULL, err), 0);
	ok &= tu_check("CPU batched plans vs plane plans", b.pixels, ra, n, TOL);
	cpu_engine_destroy(pp);
	free(ra);
	image_free(&a), image_free(&b), image_free(&k);
	k = rand_image(200, 200, 3, 0, 1);
	int rc = cpu_bloom_run(g_cpu, BLOOM_OP_CONVOLVE, &in, &k, NULL, &p, &a, NULL, err);
	print_message("kernel beyond every tile: %s\n", err);
	assert_int_equal(rc, CPU_E_TOO_LARGE);
	image_free(&in), image_free(&k);
	cpu_engine_destroy(g_cpu);
	/* the bloom's 41x29 frame in 2 tiles: whole it pads to 45x35 (about 78 KB), its tiles of 21
	 * columns, whole in height, to 28x35 (about 49 KB) */
	g_cpu = cpu_tiling(75000);
	check_bloom(BLOOM_COMPOSITE_ADD, 1.0, 0.5, 0);
	check_bloom(BLOOM_COMPOSITE_MIX, 1.5, 0.2, 1);
	cpu_engine_destroy(g_cpu);
	g_cpu = whole;
	g_cpu_tiled = 0;
	assert_true(ok);
}

/* The CPU engine's longest transform (CPU_MAX_N, FFT_MAX_N: 2^24) bounds the size a frame is
 * padded to, its span (fft_conv_span), not w + k - 1: a row of 2^24 - 1 pixels with a 3-tap
 * kernel centred on tap 1 reaches one pixel past each end, pads to 2^24 exactly and is
 * convolved (against the direct sum); centred on tap 0 it reaches two past one end, 2^24 + 1,
 * and is refused. About 0.5 GB of host memory and a few seconds. */
static void test_cpu_padded_limit(void **state)
{
	(void)state;
	int w = FFT_MAX_N - 1;
	struct cpu_engine *e = cpu_tiling(0);
	struct image in = rand_image(w, 1, 1, -1, 1), k = rand_image(3, 1, 1, 0, 1), out;
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	tu_param(&p, BLOOM_OP_CONVOLVE, "kernel_center", "1,0");
	struct cpu_stats st;
	char err[CPU_ERR_LEN];
	int rc = cpu_bloom_run(e, BLOOM_OP_CONVOLVE, &in, &k, NULL, &p, &out, &st, err);
	if (rc)
		printf("cpu_bloom_run: %s\n", err);
	assert_int_equal(rc, 0);
	print_message("%dx1 k 3x1 centred on tap 1: padded %dx%d, %dx%d tiles\n", w, st.padded_w,
	              st.padded_h, st.tiles_x, st.tiles_y);
	assert_int_equal(st.padded_w, FFT_MAX_N);
	assert_int_equal(st.padded_h, 1);
	double *ref = malloc((size_t)w * sizeof *ref);
	assert_non_null(ref);
	for (int x = 0; x < w; x++) { /* O[x] = sum_i I[x - (i - 1)] K[i], zero outside */
		double s = 0;
		for (int i = 0; i < 3; i++)
			if (x - (i - 1) >= 0 && x - (i - 1) < w)
				s += (double)in.pixels[x - (i - 1)] * k.pixels[i];
		ref[x] = s;
	}
	int ok = tu_check("CPU convolve padded to the longest transform", out.pixels, ref, (size_t)w,
	                  TOL);
	free(ref);
	image_free(&out);
	tu_param(&p, BLOOM_OP_CONVOLVE, "kernel_center", "0,0");
	rc = cpu_bloom_run(e, BLOOM_OP_CONVOLVE, &in, &k, NULL, &p, &out, NULL, err);
	print_message("centred on tap 0: %s\n", err);
	assert_int_equal(rc, CPU_E_TOO_LARGE);
	cpu_engine_destroy(e);
	image_free(&in), image_free(&k);
	assert_true(ok);
}

/* Two frame sizes whose kernel_scale gives kernels of 12 and 13 taps (a 20x20 kernel at 0.5 of
 * 24x24 and 25x25), both centred on tap 6 and both padded to 32x32: the second frame's kernel
 * spectrum is its own (the spectrum cache's key holds the kernel's size as used), its answer
 * the CPU engine's. */
static void test_kernel_scale_spectra(void **state)
{
	(void)state;
	struct cpu_engine *ce = cpu_tiling(0);
	struct image k = rand_image(20, 20, 3, 0, 1);
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	p.kernel_scale = 0.5;
	int ok = 1;
	for (int side = 24; side <= 25; side++) {
		struct image in = rand_image(side, side, 4, 0, 1), g, c;
		struct bloom_stats st;
		struct cpu_stats cs;
		char err[BLOOM_ERR_LEN];
		struct bloom_kernel kr = {&k, {0, 0}};
		assert_int_equal(bloom_run(g_b, BLOOM_OP_CONVOLVE, &in, &kr, &p, 0, &g, &st, err), 0);
		assert_int_equal(cpu_bloom_run(ce, BLOOM_OP_CONVOLVE, &in, &k, NULL, &p, &c, &cs, err),
		                 0);
		assert_int_equal(st.padded_w, 32);
		assert_int_equal(st.padded_h, 32);
		assert_int_equal(g.channels, c.channels);
		size_t n = (size_t)side * side * (size_t)c.channels;
		double *ref = malloc(n * sizeof *ref);
		for (size_t i = 0; i < n; i++)
			ref[i] = c.pixels[i];
		char name[64];
		snprintf(name, sizeof name, "kernel_scale 0.5 on %dx%d, GPU vs CPU", side, side);
		ok &= tu_check(name, g.pixels, ref, n, TOL);
		free(ref);
		image_free(&in), image_free(&g), image_free(&c);
	}
	cpu_engine_destroy(ce);
	image_free(&k);
	assert_true(ok);
}

/* cpu_engine_trim frees the plans and kernel spectra; the next frame plans again and gives the
 * same bits. */
static void test_cpu_trim(void **state)
{
	(void)state;
	struct cpu_engine *e;
	struct cpu_engine_opts o = {0};
	char err[CPU_ERR_LEN];
	assert_int_equal(cpu_engine_create(&o, NULL, &e, err), 0);
	struct image in = rand_image(67, 45, 3, -1, 1), k = rand_image(9, 7, 3, 0, 1), a, b;
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_CONVOLVE);
	assert_int_equal(cpu_bloom_run(e, BLOOM_OP_CONVOLVE, &in, &k, NULL, &p, &a, NULL, err), 0);
	struct cpu_cache_stats cs;
	cpu_engine_trim(e);
	cpu_engine_stats(e, &cs);
	print_message("trimmed: %zu plans, %zu spectra, %zu bytes\n", cs.plan_entries,
	              cs.kernel_entries, cs.kernel_bytes);
	assert_true(cs.plan_entries == 0 && cs.kernel_entries == 0 && cs.kernel_bytes == 0);
	assert_int_equal(cpu_bloom_run(e, BLOOM_OP_CONVOLVE, &in, &k, NULL, &p, &b, NULL, err), 0);
	assert_memory_equal(a.pixels, b.pixels, (size_t)67 * 45 * 3 * sizeof(float));
	image_free(&a), image_free(&b), image_free(&in), image_free(&k);
	cpu_engine_destroy(e);
}

static int setup_cpu(void **state)
{
	(void)state;
	g_use = NULL;
	char err[CPU_ERR_LEN];
	struct cpu_engine_opts o = {0};
	if (cpu_engine_create(&o, NULL, &g_cpu, err)) {
		printf("cpu_engine_create: %s\n", err);
		return -1;
	}
	return 0;
}

static int teardown_cpu(void **state)
{
	(void)state;
	cpu_engine_destroy(g_cpu);
	g_cpu = NULL;
	return 0;
}

int main(void)
{
	tu_seed_from_clock();
	tu_test_filter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_convolve_small),
		cmocka_unit_test(test_convolve_large_fft_reference),
		cmocka_unit_test(test_bloom_formula),
		cmocka_unit_test(test_packed_vs_per_channel),
		cmocka_unit_test(test_energy_and_cache),
		cmocka_unit_test(test_kernel_scale_and_presets),
		cmocka_unit_test(test_fp16_storage),
		cmocka_unit_test(test_separate_columns),
		cmocka_unit_test(test_padded_columns),
		cmocka_unit_test(test_ends_and_layouts),
		cmocka_unit_test(test_partners_shared),
		cmocka_unit_test(test_io_fallback),
		cmocka_unit_test(test_rows_tune),
		cmocka_unit_test(test_yuv_lend),
		cmocka_unit_test(test_stage_times),
		cmocka_unit_test(test_yuv_in),
		cmocka_unit_test(test_yuv_out),
		cmocka_unit_test(test_jpeg_dct_out),
		cmocka_unit_test(test_jpeg_scan),
		cmocka_unit_test(test_jpeg_scan_room),
		cmocka_unit_test(test_tiles_reference),
		cmocka_unit_test(test_budget_smallest),
		cmocka_unit_test(test_kernel_scale_spectra),
		cmocka_unit_test(test_tiles_frame),
		cmocka_unit_test(test_borrow),
		cmocka_unit_test(test_want),
		cmocka_unit_test(test_borrow_urgent),
		cmocka_unit_test(test_borrow_thrash),
		cmocka_unit_test(test_borrow_stale_wish),
		cmocka_unit_test(test_borrow_orphan),
		cmocka_unit_test(test_errors),
	};
	/* the same references on the CPU engine (the GPU context stays for the presets' comparison) */
	const struct CMUnitTest cpu_tests[] = {
		cmocka_unit_test(test_convolve_small),
		cmocka_unit_test(test_convolve_large_fft_reference),
		cmocka_unit_test(test_bloom_formula),
		cmocka_unit_test(test_packed_vs_per_channel),
		cmocka_unit_test(test_energy_and_cache),
		cmocka_unit_test(test_kernel_scale_and_presets),
		cmocka_unit_test(test_fp16_storage),
		cmocka_unit_test(test_cpu_presets_match_gpu),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_cpu_tiles),
		cmocka_unit_test(test_cpu_budget_smallest),
		cmocka_unit_test(test_cpu_padded_limit),
		cmocka_unit_test(test_cpu_trim),
	};
	/* TEST_ENGINE=gpu or cpu: one group alone (both by default) */
	const char *only = getenv("TEST_ENGINE");
	int failed = 0;
	if (!only || strcmp(only, "cpu"))
		failed += cmocka_run_group_tests(tests, setup, teardown);
	if (only && !strcmp(only, "gpu"))
		return failed;
	if (setup(NULL))
		return 1;
	failed += cmocka_run_group_tests_name("cpu engine", cpu_tests, setup_cpu, teardown_cpu);
	teardown(NULL);
	return failed;
}
