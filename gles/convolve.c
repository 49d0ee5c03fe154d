/* The convolution method's choice and the direct path; see convolve.h. */
#include "gles/convolve.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/kernel_shape.h"
#include "gles/fft_plan.h"

static int from_spatial(int rc)
{
	switch (rc) {
	case SPATIAL_E_ARG:
	case SPATIAL_E_UNSUPPORTED: return BLOOM_E_ARG;
	case SPATIAL_E_TOO_LARGE: return BLOOM_E_TOO_LARGE;
	case SPATIAL_E_NOMEM: return BLOOM_E_NOMEM;
	case SPATIAL_E_CANCELLED: return BLOOM_E_CANCELLED;
	default: return BLOOM_E_GPU;
	}
}

/* GPU milliseconds of the FFT convolution's stages on a side x side image with a k x k kernel. */
static int time_fft(struct bloom_ctx *b, int side, int k, double *ms, char err[BLOOM_ERR_LEN])
{
	struct image img = {0}, ker = {0}, out = {0};
	int rc = image_alloc(&img, side, side, 4) || image_alloc(&ker, k, k, 1) ? BLOOM_E_NOMEM : 0;
	for (size_t i = 0; !rc && i < (size_t)side * side * 4; i++)
		img.pixels[i] = (float)((i * 37 % 101) / 101.0);
	for (int i = 0; !rc && i < k * k; i++)
		ker.pixels[i] = 1.0f / (float)(k * k);
	struct bloom_params p;
	memset(&p, 0, sizeof p);
	p.normalize = BLOOM_NORMALIZE_NONE;
	struct bloom_kernel bk = {&ker, {0, 0}};
	struct bloom_stats st;
	if (!rc)
		rc = bloom_run(b, BLOOM_OP_CONVOLVE, &img, &bk, &p, 0, &out, &st, err);
	image_free(&out);
	double best = 0;
	for (int rep = 0; !rc && rep < 3; rep++) { /* the stages back to back: the least of three */
		rc = bloom_rerun_stages(b, &st, err);
		if (!rc && (!best || st.gpu_ms < best))
			best = st.gpu_ms;
	}
	image_free(&img);
	image_free(&ker);
	*ms = best;
	return rc;
}

static double nlogn(double n)
{
	return n * log2(n > 2 ? n : 2);
}

int convolve_choose(struct bloom_ctx *b, struct spatial_ctx *s, struct convolve_model *m,
                    int asked, int w, int h, int kw, int kh, const struct bloom_params *p,
                    int *method, double *fft_ms, double *spatial_ms, char err[CONVOLVE_ERR_LEN])
{
	if (fft_ms)
		*fft_ms = 0;
	if (spatial_ms)
		*spatial_ms = 0;
	if (asked == CONVOLVE_FFT || asked == CONVOLVE_SPATIAL) {
		*method = asked;
		return 0;
	}
	*method = CONVOLVE_FFT;
	if (p->kernel_scale > 0 || !s)
		return 0; /* only the FFT path resizes kernels */
	char berr[BLOOM_ERR_LEN];
	if (!m->ready) {
		double t0, t1;
		const int s0 = 256, s1 = 768, k = 9;
		int rc = time_fft(b, s0, k, &t0, berr);
		if (!rc)
			rc = time_fft(b, s1, k, &t1, berr);
		if (rc) {
			snprintf(err, CONVOLVE_ERR_LEN, "calibrating the FFT convolution: %.400s", berr);
			return rc;
		}
		int p0w, p0h, p1w, p1h;
		fft_conv_frame_size(s0, s0, k, k, k / 2, k / 2, &p0w, &p0h);
		fft_conv_frame_size(s1, s1, k, k, k / 2, k / 2, &p1w, &p1h);
		double n0 = nlogn((double)p0w * p0h), n1 = nlogn((double)p1w * p1h);
		m->b = n1 > n0 && t1 > t0 ? (t1 - t0) / (n1 - n0) : t1 / n1;
		m->a = t0 - m->b * n0 > 0 ? t0 - m->b * n0 : 0;
		m->ready = 1;
	}
	int cx, cy;
	kshape_center_or_default(p, kw, kh, &cx, &cy);
	int pw, ph;
	fft_conv_frame_size(w, h, kw, kh, cx, cy, &pw, &ph);
	double f = m->a + m->b * nlogn((double)pw * ph), sp;
	char serr[SPATIAL_ERR_LEN];
	int rc = spatial_image_estimate(s, w, h, kw, kh, SPATIAL_FP32, &sp, serr);
	if (rc) {
		snprintf(err, CONVOLVE_ERR_LEN, "calibrating the direct convolution: %.400s", serr);
		return from_spatial(rc);
	}
	if (fft_ms)
		*fft_ms = f;
	if (spatial_ms)
		*spatial_ms = sp;
	*method = sp < f ? CONVOLVE_SPATIAL : CONVOLVE_FFT;
	return 0;
}

int convolve_spatial(struct spatial_ctx *s, const struct image *in, const struct image *kernel,
                     const struct bloom_params *p, struct image *out, struct spatial_stats *stats,
                     char err[CONVOLVE_ERR_LEN])
{
	if (p->kernel_scale > 0) {
		snprintf(err, CONVOLVE_ERR_LEN, "kernel_scale resizes the kernel on the FFT path only "
		         "(method=fft or auto)");
		return BLOOM_E_ARG;
	}
	struct spatial_image_opts o = {-1, -1, p->normalize == BLOOM_NORMALIZE_LUMINANCE,
	                               SPATIAL_FP32, SPATIAL_ALG_AUTO, stats != NULL};
	int rc = bloom_kernel_center(p, kernel->width, kernel->height, &o.center_x, &o.center_y, err,
	                             CONVOLVE_ERR_LEN);
	if (rc)
		return rc;
	struct spatial_stats st;
	char serr[SPATIAL_ERR_LEN];
	rc = spatial_convolve_image(s, in, kernel, &o, out, &st, serr);
	if (rc) {
		snprintf(err, CONVOLVE_ERR_LEN, "%s", serr);
		return from_spatial(rc);
	}
	if (stats)
		*stats = st;
	return 0;
}
