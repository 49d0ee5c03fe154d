/* The resampler's planning, pure CPU: a box's geometry by fit mode, the kernel scale that keeps
 * a bloom's look at the output size, and each axis's Lanczos-3 taps; see core/resample_geom.h. */
#include "core/resample_geom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"

const char *resample_strerror(int code)
{
	switch (code) {
	case RESAMPLE_OK: return "ok";
	case RESAMPLE_E_ARG: return "bad resize parameters";
	case RESAMPLE_E_TOO_LARGE: return "resized image too large";
	case RESAMPLE_E_NOMEM: return "out of memory";
	case RESAMPLE_E_GPU: return "GPU failure";
	case RESAMPLE_E_GPU_MEMORY: return "out of GPU memory";
	case RESAMPLE_E_GPU_LIMIT: return "past the GPU's storage-buffer limit";
	}
	return "unknown error";
}

/* A side: v rounded, at least 1; 0 when past RESAMPLE_MAX_SIDE (or not a number). */
static int side(double v)
{
	if (!(v < RESAMPLE_MAX_SIDE + 0.5))
		return 0;
	long r = lround(v);
	return r < 1 ? 1 : (int)r;
}

/* The whole input scaled by (sx, sy) into a canvas of its own size. */
static int whole(struct resample_geom *g, int in_w, int in_h, double sx, double sy)
{
	g->out_w = g->dst_w = side(in_w * sx);
	g->out_h = g->dst_h = side(in_h * sy);
	g->src_w = in_w, g->src_h = in_h;
	return g->out_w && g->out_h ? 0 : RESAMPLE_E_TOO_LARGE;
}

int resample_fit(int in_w, int in_h, int width, int height, double dpr, int fit,
                 struct resample_geom *g)
{
	memset(g, 0, sizeof *g);
	if (in_w < 1 || in_h < 1 || width < 0 || height < 0 || (!width && !height) ||
	    !(dpr >= 1 && dpr <= RESAMPLE_DPR_MAX) || fit < 0 || fit >= RESAMPLE_FIT_COUNT)
		return RESAMPLE_E_ARG;
	/* the box in device pixels; 0 stays "not given" */
	double bw = width ? (double)side(width * dpr) : 0, bh = height ? (double)side(height * dpr) : 0;
	if ((width && !bw) || (height && !bh))
		return RESAMPLE_E_TOO_LARGE;
	double sx = bw / in_w, sy = bh / in_h;
	int rc = 0;
	if (!width || !height) { /* one side: the aspect kept, whatever the fit */
		double s = width ? sx : sy;
		if (fit == RESAMPLE_FIT_INSIDE && s > 1)
			s = 1;
		rc = whole(g, in_w, in_h, s, s);
	} else if (fit == RESAMPLE_FIT_FILL) {
		rc = whole(g, in_w, in_h, sx, sy);
	} else if (fit == RESAMPLE_FIT_INSIDE) {
		double s = fmin(fmin(sx, sy), 1.0);
		rc = whole(g, in_w, in_h, s, s);
	} else if (fit == RESAMPLE_FIT_OUTSIDE) {
		double s = fmax(sx, sy);
		rc = whole(g, in_w, in_h, s, s);
	} else if (fit == RESAMPLE_FIT_COVER) {
		double s = fmax(sx, sy);
		g->out_w = g->dst_w = (int)bw;
		g->out_h = g->dst_h = (int)bh;
		g->src_w = fmin(bw / s, in_w), g->src_h = fmin(bh / s, in_h);
		g->src_x = (in_w - g->src_w) / 2, g->src_y = (in_h - g->src_h) / 2;
	} else { /* contain */
		double s = fmin(sx, sy);
		g->out_w = (int)bw, g->out_h = (int)bh;
		g->dst_w = side(in_w * s), g->dst_h = side(in_h * s);
		g->dst_w = g->dst_w > g->out_w ? g->out_w : g->dst_w;
		g->dst_h = g->dst_h > g->out_h ? g->out_h : g->dst_h;
		g->dst_x = (g->out_w - g->dst_w) / 2, g->dst_y = (g->out_h - g->dst_h) / 2;
		g->src_w = in_w, g->src_h = in_h;
	}
	if (rc)
		memset(g, 0, sizeof *g);
	return rc;
}

int resample_is_identity(const struct resample_geom *g, int in_w, int in_h)
{
	return g->out_w == in_w && g->out_h == in_h && g->dst_w == in_w && g->dst_h == in_h &&
	       g->dst_x == 0 && g->dst_y == 0 && g->src_x == 0 && g->src_y == 0 &&
	       g->src_w == in_w && g->src_h == in_h;
}

double resample_scale(const struct resample_geom *g)
{
	return sqrt(g->dst_w / g->src_w * (g->dst_h / g->src_h));
}

double resample_kernel_scale(double kernel_scale, int kw, int kh, int in_w, int in_h,
                             const struct resample_geom *g)
{
	/* the kernel's larger side at the input, as gles/bloom_kernel.c sizes it */
	double larger = kernel_scale > 0 ? kernel_scale * (in_w < in_h ? in_w : in_h)
	                                 : (double)(kw > kh ? kw : kh);
	int shorter = g->out_w < g->out_h ? g->out_w : g->out_h;
	double n = larger * resample_scale(g);
	if ((kw > kh ? kw : kh) % 2 && n >= 1) /* an odd kernel stays odd: its centre pixel maps
	                                         onto a pixel, not between two (a half-pixel shift
	                                         of the whole bloom) */
		n = 2 * floor(n / 2) + 1;
	return n / shorter;
}

/* Lanczos-3: sinc(x) sinc(x / 3) on |x| < 3. */
static double lanczos3(double x)
{
	x = fabs(x);
	if (x < 1e-12)
		return 1;
	if (x >= RESAMPLE_LOBES)
		return 0;
	double px = M_PI * x;
	double v = RESAMPLE_LOBES * sin(px) * sin(px / RESAMPLE_LOBES) / (px * px);
	return fabs(v) < 1e-9 ? 0 : v; /* the sinc's zeros (1:1 takes one tap), not rounding's */
}

void resample_axis_free(struct resample_axis *a)
{
	free(a->span);
	free(a->w);
	memset(a, 0, sizeof *a);
}

int resample_axis_plan(int in_n, double src0, double src_len, int dst, struct resample_axis *a)
{
	memset(a, 0, sizeof *a);
	if (in_n < 1 || dst < 1 || !(src_len > 0) || !(src0 >= 0) || src0 + src_len > in_n + 1e-6)
		return RESAMPLE_E_ARG;
	double f = src_len / dst;               /* source pixels per output pixel */
	double stretch = f > 1 ? f : 1;         /* the filter widened when shrinking */
	double reach = RESAMPLE_LOBES * stretch; /* source pixels each side of a centre */
	int max_taps = (int)ceil(2 * reach) + 2;
	max_taps = max_taps > in_n ? in_n : max_taps;
	size_t nw;
	if (checked_mul_size((size_t)dst, (size_t)max_taps, &nw))
		return RESAMPLE_E_NOMEM;
	a->span = malloc((size_t)dst * 2 * sizeof *a->span);
	a->w = calloc(nw, sizeof *a->w);
	double *tmp = malloc((size_t)max_taps * sizeof *tmp);
	if (!a->span || !a->w || !tmp) {
		free(tmp);
		resample_axis_free(a);
		return RESAMPLE_E_NOMEM;
	}
	a->n_out = dst;
	a->max_taps = max_taps;
	for (int i = 0; i < dst; i++) {
		double c = src0 + (i + 0.5) * f; /* the centre, in pixel-edge coordinates */
		int lo = (int)floor(c - reach), hi = (int)ceil(c + reach);
		lo = lo < 0 ? 0 : lo;
		hi = hi > in_n - 1 ? in_n - 1 : hi;
		int first = -1, n = 0;
		double sum = 0;
		for (int j = lo; j <= hi; j++) {
			double w = lanczos3((j + 0.5 - c) / stretch);
			if (w == 0 && first < 0)
				continue;
			if (first < 0)
				first = j;
			tmp[n++] = w;
			sum += w;
		}
		while (n > 0 && tmp[n - 1] == 0)
			n--;
		if (n == 0 || !(fabs(sum) > 1e-12)) { /* no tap carries weight: the nearest pixel */
			int near = (int)floor(c);
			first = near < 0 ? 0 : near >= in_n ? in_n - 1 : near;
			n = 1;
			tmp[0] = sum = 1;
		}
		a->span[2 * i] = first;
		a->span[2 * i + 1] = n;
		for (int k = 0; k < n; k++)
			a->w[(size_t)i * max_taps + k] = (float)(tmp[k] / sum);
	}
	free(tmp);
	return 0;
}

int resample_geom_check(int in_w, int in_h, int c, const struct resample_geom *g,
                        size_t *mid_bytes, size_t *out_bytes, char err[RESAMPLE_ERR_LEN])
{
	if (c < 1 || c > 4 || in_w < 1 || in_h < 1 || g->out_w < 1 || g->out_h < 1 ||
	    g->dst_w < 1 || g->dst_h < 1 || g->dst_x < 0 || g->dst_y < 0 ||
	    g->dst_x + g->dst_w > g->out_w || g->dst_y + g->dst_h > g->out_h ||
	    g->out_w > RESAMPLE_MAX_SIDE || g->out_h > RESAMPLE_MAX_SIDE) {
		snprintf(err, RESAMPLE_ERR_LEN, "resize: a %dx%d image of %d channels into %dx%d: "
		         "not a valid geometry", in_w, in_h, c, g->out_w, g->out_h);
		return RESAMPLE_E_ARG;
	}
	size_t fm[3] = {(size_t)g->dst_w, (size_t)in_h, (size_t)c};
	size_t fo[3] = {(size_t)g->out_w, (size_t)g->out_h, (size_t)c};
	if (checked_product_size(fm, 3, sizeof(float), mid_bytes) ||
	    checked_product_size(fo, 3, sizeof(float), out_bytes)) {
		snprintf(err, RESAMPLE_ERR_LEN, "resize: sizes overflow");
		return RESAMPLE_E_TOO_LARGE;
	}
	return 0;
}

int resample_prepare(int in_w, int in_h, int c, const struct resample_geom *g, size_t *mid_bytes,
                     size_t *out_bytes, struct resample_axis *ax, struct resample_axis *ay,
                     char err[RESAMPLE_ERR_LEN])
{
	int rc = resample_geom_check(in_w, in_h, c, g, mid_bytes, out_bytes, err);
	if (rc)
		return rc;
	rc = resample_axis_plan(in_w, g->src_x, g->src_w, g->dst_w, ax);
	if (!rc && (rc = resample_axis_plan(in_h, g->src_y, g->src_h, g->dst_h, ay)))
		resample_axis_free(ax);
	if (rc)
		snprintf(err, RESAMPLE_ERR_LEN, "resize: %s", resample_strerror(rc));
	return rc;
}
