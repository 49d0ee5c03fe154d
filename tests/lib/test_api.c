/* libfftbloom's C API as a program sees it: linked with libfftbloom.a alone (so the static
 * library stands by itself) and including only <fftbloom.h> and GL. The GL-buffer FFT against a
 * float64 DFT, the GL-buffer bloom, conv2d and conv2d_transpose against the host ones, the caller's current context
 * (FFTBLOOM_PLATFORM_CURRENT), errors and messages, NULL-safety. Skipped where no OpenGL ES 3.1
 * context can be made. */
#include <fftbloom.h>

#include <GLES3/gl31.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

static uint64_t rng_state;

static double uniform(void) /* [-1, 1), xorshift64* */
{
	rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
	return (double)((rng_state * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}

/* ||a - ref|| / ||ref|| over n floats; NaN if any is. */
static double rel_l2(const float *a, const double *ref, size_t n)
{
	double e = 0, r = 0;
	for (size_t i = 0; i < n; i++)
		e += (a[i] - ref[i]) * (a[i] - ref[i]), r += ref[i] * ref[i];
	return sqrt(e / r);
}

static fftbloom_context *ctx;

static int setup(void **state)
{
	(void)state;
	char err[FFTBLOOM_MESSAGE_LEN];
	/* the GPU engine, on llvmpipe without a GPU: these tests are about GL buffers and contexts */
	struct fftbloom_context_opts o;
	fftbloom_context_opts_init(&o);
	o.engine = FFTBLOOM_ENGINE_GPU;
	if (fftbloom_context_create(&o, &ctx, err, sizeof err))
		printf("no context: %s\n", err); /* the tests skip */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fftbloom_context_destroy(ctx);
	return 0;
}

/* A 2D DFT of w x h complex values along the axes asked, in double: numpy's convention. */
static void dft(const float *in, double *out, int w, int h, int axes, int inverse)
{
	double *t = malloc(sizeof(double) * 2 * (size_t)w * h);
	for (int i = 0; i < 2 * w * h; i++)
		t[i] = in[i];
	double s = inverse ? 1 : -1;
	if (axes & FFTBLOOM_FFT_ROWS) {
		for (int y = 0; y < h; y++)
			for (int k = 0; k < w; k++) {
				double re = 0, im = 0;
				for (int x = 0; x < w; x++) {
					double a = s * 2 * M_PI * (double)k * x / w;
					const double *v = t + 2 * ((size_t)y * w + x);
					re += v[0] * cos(a) - v[1] * sin(a), im += v[0] * sin(a) + v[1] * cos(a);
				}
				out[2 * ((size_t)y * w + k)] = inverse ? re / w : re;
				out[2 * ((size_t)y * w + k) + 1] = inverse ? im / w : im;
			}
		memcpy(t, out, sizeof(double) * 2 * (size_t)w * h);
	}
	if (axes & FFTBLOOM_FFT_COLS) {
		for (int x = 0; x < w; x++)
			for (int k = 0; k < h; k++) {
				double re = 0, im = 0;
				for (int y = 0; y < h; y++) {
					double a = s * 2 * M_PI * (double)k * y / h;
					const double *v = t + 2 * ((size_t)y * w + x);
					re += v[0] * cos(a) - v[1] * sin(a), im += v[0] * sin(a) + v[1] * cos(a);
				}
				out[2 * ((size_t)k * w + x)] = inverse ? re / h : re;
				out[2 * ((size_t)k * w + x) + 1] = inverse ? im / h : im;
			}
	}
	free(t);
}

/* fftbloom_fft_gl on a buffer of ours, and fftbloom_fft on host memory, against the DFT. */
static void fft_gl_and_host(void **state)
{
	(void)state;
	if (!ctx)
		skip();
	static const int shapes[][3] = {{1, 1, 3}, {17, 1, 1}, {12, 5, 3}, {7, 31, 2}, {33, 9, 1},
	                                {19, 23, 3}};
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		int w = shapes[s][0], h = shapes[s][1], axes = shapes[s][2];
		size_t n = 2 * (size_t)w * h;
		float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
		double *ref = malloc(n * sizeof *ref);
		for (size_t i = 0; i < n; i++)
			x[i] = (float)uniform();
		for (int inverse = 0; inverse < 2; inverse++) {
			dft(x, ref, w, h, axes, inverse);
			GLuint buf;
			glGenBuffers(1, &buf);
			glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
			glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(n * 4), x, GL_DYNAMIC_COPY);
			int e = fftbloom_fft_gl(ctx, buf, w, h, axes, inverse);
			assert_int_equal(e, 0);
			glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
			glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
			const float *m = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)(n * 4),
			                                  GL_MAP_READ_BIT);
			assert_non_null(m);
			memcpy(y, m, n * 4);
			glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
			glDeleteBuffers(1, &buf);
			double r_gl = rel_l2(y, ref, n);
			memcpy(y, x, n * 4);
			assert_int_equal(fftbloom_fft(ctx, y, w, h, axes, inverse), 0);
			double r_host = rel_l2(y, ref, n);
			printf("fft %dx%d axes %d%s: rel_l2 GL buffer %.2e, host %.2e (tol 1e-5)\n", w, h,
			       axes, inverse ? " inverse" : "", r_gl, r_host);
			assert_true(r_gl < 1e-5);
			assert_true(r_host < 1e-5);
		}
		free(x), free(y), free(ref);
	}
}

/* fftbloom_bloom_gl between buffers gives fftbloom_bloom's pixels. */
static void bloom_gl_matches_host(void **state)
{
	(void)state;
	if (!ctx)
		skip();
	int w = 45, h = 38, ch = 4;
	size_t n = (size_t)w * h * ch;
	float *px = malloc(n * 4), *y = malloc(n * 4);
	for (size_t i = 0; i < n; i++)
		px[i] = (float)(2 + 2 * uniform());
	struct fftbloom_preset g;
	fftbloom_preset_init(&g, FFTBLOOM_PRESET_GAUSSIAN);
	g.sigma = 2;
	struct fftbloom_bloom_params p;
	fftbloom_bloom_params_init(&p, 0);
	p.preset = &g;
	struct fftbloom_image in = {w, h, ch, px}, out;
	assert_int_equal(fftbloom_bloom(ctx, &in, NULL, &p, &out, NULL), 0);
	assert_true(out.width == w && out.height == h && out.channels == ch);
	GLuint b[2];
	glGenBuffers(2, b);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b[0]);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(n * 4), px, GL_STATIC_DRAW);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b[1]);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(n * 4), NULL, GL_DYNAMIC_READ);
	assert_int_equal(fftbloom_bloom_gl(ctx, b[0], b[1], w, h, ch, NULL, &p), 0);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b[1]);
	const float *m = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)(n * 4),
	                                  GL_MAP_READ_BIT);
	assert_non_null(m);
	memcpy(y, m, n * 4);
	glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
	glDeleteBuffers(2, b);
	size_t diff = 0;
	for (size_t i = 0; i < n; i++)
		diff += y[i] != out.data[i];
	printf("bloom_gl %dx%dx%d: %zu of %zu values differ from fftbloom_bloom's\n", w, h, ch, diff, n);
	assert_int_equal(diff, 0);
	/* a buffer too small for the frame is the caller's error, with a message */
	glGenBuffers(1, b);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b[0]);
	glBufferData(GL_SHADER_STORAGE_BUFFER, 64, NULL, GL_STATIC_DRAW);
	assert_int_equal(fftbloom_bloom_gl(ctx, b[0], b[0], w, h, ch, NULL, &p), FFTBLOOM_E_ARG);
	printf("small buffer: %s\n", fftbloom_context_message(ctx));
	assert_non_null(strstr(fftbloom_context_message(ctx), "cannot be read"));
	glDeleteBuffers(1, b);
	fftbloom_image_free(&out);
	/* a centre before the kernel's first tap, or not a number, is the caller's error */
	p.center_mode = FFTBLOOM_CENTER_PIXEL, p.center_x = -3, p.center_y = 2;
	assert_int_equal(fftbloom_bloom(ctx, &in, NULL, &p, &out, NULL), FFTBLOOM_E_ARG);
	printf("negative centre: %s\n", fftbloom_context_message(ctx));
	assert_non_null(strstr(fftbloom_context_message(ctx), "kernel_center"));
	p.center_mode = FFTBLOOM_CENTER_UV, p.center_x = NAN, p.center_y = 0.5;
	assert_int_equal(fftbloom_bloom(ctx, &in, NULL, &p, &out, NULL), FFTBLOOM_E_ARG);
	free(px), free(y);
}

/* GL buffer objects in and out: n floats of data (NULL: uninitialised), and read back. */
static GLuint gl_buffer(const float *data, size_t n)
{
	GLuint b = 0;
	glGenBuffers(1, &b);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(n * 4), data, GL_DYNAMIC_COPY);
	return b;
}

static void gl_read(GLuint b, float *dst, size_t n)
{
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
	const float *m = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)(n * 4),
	                                  GL_MAP_READ_BIT);
	assert_non_null(m);
	memcpy(dst, m, n * 4);
	glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
}

/* conv2d and conv2d_transpose between GL buffers: the host calls' values bit for bit (the same
 * GPU work; only the tensors' way in and out differs); a buffer too small, none or not a buffer
 * is the caller's error, with a message. */
static void conv_gl_matches_host(void **state)
{
	(void)state;
	if (!ctx)
		skip();
	for (int transpose = 0; transpose < 2; transpose++) {
		/* conv2d: in (2, 3, 9, 11), weight (4, 3, 3, 3), stride 2, padding 1; transpose: in
		 * (2, 3, 5, 6), weight (3, 4, 3, 3), stride 2, padding 1, output_padding 1 */
		int in_shape[4] = {2, 3, transpose ? 5 : 9, transpose ? 6 : 11};
		int w_shape[4] = {transpose ? 3 : 4, transpose ? 4 : 3, 3, 3}, out_shape[4];
		struct fftbloom_conv_params p;
		fftbloom_conv_params_init(&p);
		p.stride_h = p.stride_w = 2;
		p.pad_h = p.pad_w = 1;
		if (transpose)
			p.output_pad_h = p.output_pad_w = 1;
		char err[256];
		assert_int_equal(fftbloom_conv_output(transpose, in_shape, w_shape, &p, out_shape, err,
		                                      sizeof err), 0);
		size_t ni = (size_t)in_shape[0] * in_shape[1] * in_shape[2] * in_shape[3];
		size_t nw = (size_t)w_shape[0] * w_shape[1] * w_shape[2] * w_shape[3];
		size_t no = (size_t)out_shape[0] * out_shape[1] * out_shape[2] * out_shape[3];
		float *x = malloc(ni * 4), *wt = malloc(nw * 4), bias[4], *host = malloc(no * 4),
		      *dev = malloc(no * 4);
		for (size_t i = 0; i < ni; i++)
			x[i] = (float)uniform();
		for (size_t i = 0; i < nw; i++)
			wt[i] = (float)uniform();
		for (int i = 0; i < 4; i++)
			bias[i] = (float)uniform();
		int rc = transpose ? fftbloom_conv2d_transpose(ctx, x, in_shape, wt, w_shape, bias, &p,
		                                               host, NULL)
		                   : fftbloom_conv2d(ctx, x, in_shape, wt, w_shape, bias, &p, host, NULL);
		assert_int_equal(rc, 0);
		GLuint bi = gl_buffer(x, ni), bo = gl_buffer(NULL, no);
		rc = transpose ? fftbloom_conv2d_transpose_gl(ctx, bi, in_shape, wt, w_shape, bias, &p,
		                                              bo, NULL)
		               : fftbloom_conv2d_gl(ctx, bi, in_shape, wt, w_shape, bias, &p, bo, NULL);
		assert_int_equal(rc, 0);
		gl_read(bo, dev, no);
		size_t diff = 0;
		for (size_t i = 0; i < no; i++)
			diff += dev[i] != host[i];
		printf("conv2d%s_gl (%d, %d, %d, %d): %zu of %zu values differ from the host call's\n",
		       transpose ? "_transpose" : "", out_shape[0], out_shape[1], out_shape[2],
		       out_shape[3], diff, no);
		assert_int_equal(diff, 0);
		/* an output buffer one float short, buffer 0, a name that is no buffer */
		GLuint small = gl_buffer(NULL, no - 1);
		rc = transpose ? fftbloom_conv2d_transpose_gl(ctx, bi, in_shape, wt, w_shape, bias, &p,
		                                              small, NULL)
		               : fftbloom_conv2d_gl(ctx, bi, in_shape, wt, w_shape, bias, &p, small, NULL);
		printf("small output buffer: %s\n", fftbloom_context_message(ctx));
		assert_int_equal(rc, FFTBLOOM_E_ARG);
		assert_non_null(strstr(fftbloom_context_message(ctx), "too small"));
		rc = transpose ? fftbloom_conv2d_transpose_gl(ctx, 0, in_shape, wt, w_shape, bias, &p, bo,
		                                              NULL)
		               : fftbloom_conv2d_gl(ctx, 0, in_shape, wt, w_shape, bias, &p, bo, NULL);
		assert_int_equal(rc, FFTBLOOM_E_ARG);
		rc = transpose ? fftbloom_conv2d_transpose_gl(ctx, 987654, in_shape, wt, w_shape, bias,
		                                              &p, bo, NULL)
		               : fftbloom_conv2d_gl(ctx, 987654, in_shape, wt, w_shape, bias, &p, bo, NULL);
		printf("not a buffer: %s\n", fftbloom_context_message(ctx));
		assert_int_equal(rc, FFTBLOOM_E_ARG);
		assert_non_null(strstr(fftbloom_context_message(ctx), "not a buffer"));
		GLuint del[3] = {bi, bo, small};
		glDeleteBuffers(3, del);
		free(x), free(wt), free(host), free(dev);
	}
}

/* A second context on the first one's GL context (current on this thread): used, not owned. */
static void current_context(void **state)
{
	(void)state;
	if (!ctx)
		skip();
	struct fftbloom_context_opts o;
	fftbloom_context_opts_init(&o);
	o.platform = FFTBLOOM_PLATFORM_CURRENT;
	fftbloom_context *c2;
	char err[FFTBLOOM_MESSAGE_LEN];
	assert_int_equal(fftbloom_context_create(&o, &c2, err, sizeof err), 0);
	printf("current: %s\n", fftbloom_context_renderer(c2));
	float z[2 * 8 * 3];
	double ref[2 * 8 * 3];
	for (int i = 0; i < 2 * 8 * 3; i++)
		z[i] = (float)uniform();
	dft(z, ref, 8, 3, FFTBLOOM_FFT_BOTH, 0);
	assert_int_equal(fftbloom_fft(c2, z, 8, 3, FFTBLOOM_FFT_BOTH, 0), 0);
	assert_true(rel_l2(z, ref, 2 * 8 * 3) < 1e-5);
	fftbloom_context_destroy(c2); /* leaves the GL context alone: ctx still works */
	assert_int_equal(fftbloom_fft(ctx, z, 8, 3, FFTBLOOM_FFT_BOTH, 1), 0);
}

/* One thread's work: its own context, 2D FFTs checked against the DFT, a bloom; a status. */
struct worker {
	int id, status, checked;
	double worst;
	pthread_barrier_t *gate;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	fftbloom_context *c;
	char err[FFTBLOOM_MESSAGE_LEN];
	w->status = fftbloom_context_create(NULL, &c, err, sizeof err);
	pthread_barrier_wait(w->gate); /* both contexts exist before either works */
	if (w->status)
		return NULL;
	float z[2 * 12 * 7];
	double ref[2 * 12 * 7];
	for (int round = 0; round < 4 && !w->status; round++) {
		for (int i = 0; i < 2 * 12 * 7; i++)
			z[i] = (float)sin(1.7 * i + w->id + 3.1 * round); /* no shared generator */
		dft(z, ref, 12, 7, FFTBLOOM_FFT_BOTH, round & 1);
		w->status = fftbloom_fft(c, z, 12, 7, FFTBLOOM_FFT_BOTH, round & 1);
		double r = rel_l2(z, ref, 2 * 12 * 7);
		w->worst = r > w->worst || r != r ? r : w->worst;
		w->checked++;
		float px[16 * 12 * 3];
		for (int i = 0; i < 16 * 12 * 3; i++)
			px[i] = (float)(1.5 + sin(0.3 * i + w->id));
		struct fftbloom_image in = {16, 12, 3, px}, out;
		if (!w->status && !(w->status = fftbloom_bloom(c, &in, NULL, NULL, &out, NULL)))
			fftbloom_image_free(&out);
	}
	pthread_barrier_wait(w->gate); /* the first destroy happens while the other may still work */
	if (w->id == 1) {
		fftbloom_context_destroy(c);
		return NULL;
	}
	if (!w->status)
		w->status = fftbloom_fft(c, z, 12, 7, FFTBLOOM_FFT_BOTH, 0);
	fftbloom_context_destroy(c);
	return NULL;
}

/* Two contexts on two threads at once (the thread rule: one context per thread). */
static void contexts_on_threads(void **state)
{
	(void)state;
	if (!ctx)
		skip();
	pthread_barrier_t gate;
	pthread_barrier_init(&gate, NULL, 2);
	struct worker w[2] = {{1, 0, 0, 0, &gate}, {2, 0, 0, 0, &gate}};
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&gate);
	for (int i = 0; i < 2; i++) {
		printf("thread %d: status %d, %d FFTs, worst rel_l2 %.2e (tol 1e-5)\n", w[i].id,
		       w[i].status, w[i].checked, w[i].worst);
		assert_int_equal(w[i].status, 0);
		assert_true(w[i].worst < 1e-5);
	}
	/* this thread's context (made first) still works after both were destroyed */
	float z[2 * 5 * 3] = {1, 2, 3};
	assert_int_equal(fftbloom_fft(ctx, z, 5, 3, FFTBLOOM_FFT_BOTH, 0), 0);
	assert_int_equal(fftbloom_context_make_current(ctx), 0);
}

static void errors_and_messages(void **state)
{
	(void)state;
	assert_string_equal(fftbloom_strerror(FFTBLOOM_OK), "success");
	assert_string_equal(fftbloom_strerror(12345), "unknown status");
	for (int s = FFTBLOOM_E_ARG; s >= FFTBLOOM_E_NOT_FINITE; s--)
		assert_string_not_equal(fftbloom_strerror(s), "unknown status");
	fftbloom_context_destroy(NULL);
	fftbloom_image_free(NULL);
	assert_string_equal(fftbloom_context_message(NULL), "");
	assert_string_equal(fftbloom_version(), "0.1.0");
	struct fftbloom_context_opts o;
	fftbloom_context_opts_init(&o);
	o.platform = 9;
	fftbloom_context *c = (fftbloom_context *)&o;
	char err[256];
	assert_int_equal(fftbloom_context_create(&o, &c, err, sizeof err), FFTBLOOM_E_ARG);
	assert_null(c);
	printf("bad platform: %s\n", err);
	/* shapes: no context needed */
	int xs[4] = {1, 3, 5, 5}, ws[4] = {4, 2, 3, 3}, os[4];
	struct fftbloom_conv_params p;
	fftbloom_conv_params_init(&p);
	assert_int_equal(fftbloom_conv_output(0, xs, ws, &p, os, err, sizeof err), FFTBLOOM_E_ARG);
	printf("conv2d 3 planes, weight of 2 a group: %s\n", err);
	assert_true(strlen(err) > 0);
	ws[1] = 3;
	p.pad_h = p.pad_w = 1, p.stride_h = 2;
	assert_int_equal(fftbloom_conv_output(0, xs, ws, &p, os, NULL, 0), 0);
	assert_true(os[0] == 1 && os[1] == 4 && os[2] == 3 && os[3] == 5);
	assert_int_equal(fftbloom_conv_output(1, xs, (int[4]){3, 2, 3, 3}, &p, os, NULL, 0), 0);
	assert_true(os[1] == 2 && os[2] == 9 && os[3] == 5); /* (5-1)*2-2+3 = 9; (5-1)*1-2+3 = 5 */
	if (!ctx)
		return;
	float z[2];
	assert_int_equal(fftbloom_fft(ctx, z, 0, 1, FFTBLOOM_FFT_ROWS, 0), FFTBLOOM_E_ARG);
	printf("fft 0x1: %s\n", fftbloom_context_message(ctx));
	assert_true(strlen(fftbloom_context_message(ctx)) > 0);
	struct fftbloom_image in = {4, 4, 5, z}, out;
	assert_int_equal(fftbloom_bloom(ctx, &in, NULL, NULL, &out, NULL), FFTBLOOM_E_ARG);
	assert_null(out.data);
	printf("5 channels: %s\n", fftbloom_context_message(ctx));
	unsigned char junk[64] = "not an image at all";
	assert_true(fftbloom_image_decode(junk, sizeof junk, &out, err, sizeof err) < 0);
	printf("junk bytes: %s\n", err);
}

/* The CPU engine through the API: no GL context; the FFT against the float64 DFT (the
 * convolutions' answers: tests/lib/python_test.py and tests/cpu); the GL functions refused as
 * FFTBLOOM_E_UNSUPPORTED with a message; engine auto on a software renderer takes it. */
static void cpu_engine(void **state)
{
	(void)state;
	struct fftbloom_context_opts o;
	fftbloom_context_opts_init(&o);
	o.engine = FFTBLOOM_ENGINE_CPU;
	fftbloom_context *c;
	char err[FFTBLOOM_MESSAGE_LEN];
	assert_int_equal(fftbloom_context_create(&o, &c, err, sizeof err), 0);
	printf("cpu: %s\n", fftbloom_context_renderer(c));
	assert_string_equal(fftbloom_context_engine(c), "cpu");
	assert_int_equal(fftbloom_context_software(c), 0);
	const int w = 12, h = 7;
	float z[2 * 12 * 7];
	double ref[2 * 12 * 7];
	for (int axes = FFTBLOOM_FFT_ROWS; axes <= FFTBLOOM_FFT_BOTH; axes++)
		for (int inv = 0; inv < 2; inv++) {
			for (int i = 0; i < 2 * w * h; i++)
				z[i] = (float)uniform();
			dft(z, ref, w, h, axes, inv);
			assert_int_equal(fftbloom_fft(c, z, w, h, axes, inv), 0);
			double num = 0, den = 0;
			for (int i = 0; i < 2 * w * h; i++)
				num += (z[i] - ref[i]) * (z[i] - ref[i]), den += ref[i] * ref[i];
			double rel = sqrt(num / den);
			printf("cpu fft %dx%d axes %d%s: rel_l2 %.2e\n", w, h, axes, inv ? " inverse" : "",
			       rel);
			assert_true(rel < 1e-5);
		}
	assert_int_equal(fftbloom_fft_gl(c, 1, w, h, FFTBLOOM_FFT_BOTH, 0), FFTBLOOM_E_UNSUPPORTED);
	printf("fft_gl: %s\n", fftbloom_context_message(c));
	assert_non_null(strstr(fftbloom_context_message(c), "CPU engine"));
	int xs[4] = {1, 2, 5, 5}, ws[4] = {3, 2, 3, 3};
	float x[50], wt[54], out[75];
	memset(x, 0, sizeof x), memset(wt, 0, sizeof wt);
	struct fftbloom_conv_params p;
	fftbloom_conv_params_init(&p);
	p.pad_h = p.pad_w = 1;
	for (int i = 0; i < 75; i++)
		out[i] = 1;
	assert_int_equal(fftbloom_conv2d(c, x, xs, wt, ws, NULL, &p, out, NULL), 0);
	for (int i = 0; i < 75; i++) /* zeros in, zeros out: every output written */
		assert_true(out[i] == 0);
	assert_int_equal(fftbloom_conv2d_gl(c, 1, xs, wt, ws, NULL, &p, 2, NULL),
	                 FFTBLOOM_E_UNSUPPORTED);
	assert_int_equal(fftbloom_context_make_current(c), 0);
	fftbloom_context_release(c);
	fftbloom_context_destroy(c);
	/* auto on this machine: the CPU engine exactly where the renderer is a software one */
	int software = ctx && fftbloom_context_software(ctx);
	o.engine = FFTBLOOM_ENGINE_AUTO;
	assert_int_equal(fftbloom_context_create(&o, &c, err, sizeof err), 0);
	printf("auto: %s (%s)\n", fftbloom_context_engine(c), fftbloom_context_renderer(c));
	if (ctx)
		assert_string_equal(fftbloom_context_engine(c), software ? "cpu" : "gpu");
	fftbloom_context_destroy(c);
	o.engine = 3;
	assert_int_equal(fftbloom_context_create(&o, &c, err, sizeof err), FFTBLOOM_E_ARG);
}

int main(void)
{
	rng_state = (uint64_t)time(NULL) * 2654435761u | 1;
	printf("seed %llu\n", (unsigned long long)rng_state);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(errors_and_messages),
		cmocka_unit_test(fft_gl_and_host),
		cmocka_unit_test(bloom_gl_matches_host),
		cmocka_unit_test(conv_gl_matches_host),
		cmocka_unit_test(current_context),
		cmocka_unit_test(contexts_on_threads),
		cmocka_unit_test(cpu_engine),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
