/* The CPU engine's resampler (cpu/resample.h). */
#include "cpu/resample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"

struct pass {
	const float *src;        /* the pass's source rows */
	float *dst;              /* the pass's output canvas */
	const struct resample_axis *a;
	int src_w;               /* the source's row length in pixels */
	int canvas_w;            /* the output's row length in pixels */
	int region_w, region_h;  /* the filtered rectangle's size */
	int off_x, off_y;        /* where it lies in the canvas */
	int channels, alpha;     /* alpha: its channel, -1 without one */
	int vertical;            /* 0: along x, premultiplying as read; 1: along y, dividing out */
};

/* One source pixel's channels into v, premultiplied when the horizontal pass reads it. */
static void load(const struct pass *p, int x, int y, float v[4])
{
	const float *s = p->src + ((size_t)y * (size_t)p->src_w + (size_t)x) * (size_t)p->channels;
	for (int c = 0; c < p->channels; c++)
		v[c] = s[c];
	if (!p->vertical && p->alpha >= 0)
		for (int c = 0; c < p->alpha; c++)
			v[c] *= v[p->alpha];
}

/* One row q (of the region) of a pass. */
static int pass_row(void *ctx, int worker, size_t row)
{
	(void)worker;
	const struct pass *p = ctx;
	int q = (int)row;
	float *d = p->dst + ((size_t)(q + p->off_y) * (size_t)p->canvas_w + (size_t)p->off_x) *
	                        (size_t)p->channels;
	for (int x = 0; x < p->region_w; x++, d += p->channels) {
		int i = p->vertical ? q : x;
		int first = p->a->span[2 * i], count = p->a->span[2 * i + 1];
		const float *w = p->a->w + (size_t)i * (size_t)p->a->max_taps;
		float acc[4] = {0, 0, 0, 0}, v[4];
		for (int k = 0; k < count; k++) {
			if (p->vertical)
				load(p, x, first + k, v);
			else
				load(p, first + k, q, v);
			for (int c = 0; c < p->channels; c++)
				acc[c] += w[k] * v[c];
		}
		if (p->vertical && p->alpha >= 0) {
			float al = acc[p->alpha];
			for (int c = 0; c < p->alpha; c++)
				acc[c] = al > 0.0f ? acc[c] / al : 0.0f;
			acc[p->alpha] = al < 0.0f ? 0.0f : al > 1.0f ? 1.0f : al;
		}
		memcpy(d, acc, (size_t)p->channels * sizeof *d);
	}
	return 0;
}

int cpu_resample(const struct image *in, const struct resample_geom *g, int threads,
                 struct image *out, char err[RESAMPLE_ERR_LEN])
{
	memset(out, 0, sizeof *out);
	int c = in->channels;
	size_t mid_bytes, out_bytes;
	struct resample_axis ax, ay;
	int rc = resample_prepare(in->width, in->height, c, g, &mid_bytes, &out_bytes, &ax, &ay, err);
	if (rc)
		return rc;
	float *mid = malloc(mid_bytes), *res = calloc(1, out_bytes);
	if (!mid || !res) {
		free(mid);
		free(res);
		resample_axis_free(&ax);
		resample_axis_free(&ay);
		snprintf(err, RESAMPLE_ERR_LEN, "resize: out of memory");
		return RESAMPLE_E_NOMEM;
	}
	int alpha = c == 2 ? 1 : c == 4 ? 3 : -1;
	int t = threads > 0 ? threads : par_cores();
	struct pass h = {in->pixels, mid, &ax, in->width, g->dst_w, g->dst_w, in->height, 0, 0, c,
	                 alpha, 0};
	par_each((size_t)in->height, t, pass_row, &h, NULL);
	struct pass v = {mid, res, &ay, g->dst_w, g->out_w, g->dst_w, g->dst_h, g->dst_x, g->dst_y, c,
	                 alpha, 1};
	par_each((size_t)g->dst_h, t, pass_row, &v, NULL);
	free(mid);
	resample_axis_free(&ax);
	resample_axis_free(&ay);
	out->width = g->out_w, out->height = g->out_h, out->channels = c;
	out->pixels = res;
	return 0;
}
