/* The image path: the FFT path's convolve (gles/bloom.h) computed directly, and the cost
 * estimate for choosing between the two; see spatial.h. */
#include "gles/spatial_internal.h"

#include "gles/tile.h"
#include "core/clock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Image (1-4 channels) -> RGBA floats (missing alpha 1, gray into R, G and B), in s->host. */
static const float *to_rgba(struct spatial_ctx *s, const struct image *in)
{
	size_t n = (size_t)in->width * in->height;
	if (in->channels == 4)
		return in->pixels;
	if (n * 16 > s->host_bytes) {
		float *nb = realloc(s->host, n * 16);
		if (!nb)
			return NULL;
		s->host = nb;
		s->host_bytes = n * 16;
	}
	for (size_t i = 0; i < n; i++) {
		const float *p = in->pixels + i * in->channels;
		float *d = s->host + i * 4;
		switch (in->channels) {
		case 1: d[0] = d[1] = d[2] = p[0], d[3] = 1; break;
		case 2: d[0] = d[1] = d[2] = p[0], d[3] = p[1]; break;
		default: d[0] = p[0], d[1] = p[1], d[2] = p[2], d[3] = 1; break;
		}
	}
	return s->host;
}

/* The kernel as lane weights, rotated 180 degrees (the convolution as a cross-correlation):
 * taps (j, i) -> K[kh-1-j][kw-1-i] as (R, G, B, L), or the first channel four times. */
static int kernel_taps(const struct image *k, int normalize, float *taps, int *gray,
                       char err[SPATIAL_ERR_LEN])
{
	int kw = k->width, kh = k->height;
	size_t n = (size_t)kw * kh;
	*gray = 1;
	double lum = 0;
	for (size_t i = 0; i < n; i++) {
		const float *p = k->pixels + i * k->channels;
		float r = p[0], g = k->channels <= 2 ? p[0] : p[1], b = k->channels <= 2 ? p[0] : p[2];
		if (!isfinite(r) || !isfinite(g) || !isfinite(b)) {
			snprintf(err, SPATIAL_ERR_LEN, "kernel: pixel %zu,%zu is not finite", i % (size_t)kw,
			         i / (size_t)kw);
			return SPATIAL_E_ARG;
		}
		if (r != g || g != b)
			*gray = 0;
		lum += (double)0.2126 * r + 0.7152 * g + 0.0722 * b;
	}
	double scale = 1;
	if (normalize) {
		if (!(fabs(lum) > 1e-30)) {
			snprintf(err, SPATIAL_ERR_LEN, "kernel: its luminance sums to zero, so it cannot be "
			         "normalised (use normalize=none)");
			return SPATIAL_E_ARG;
		}
		scale = 1 / lum;
	}
	for (int j = 0; j < kh; j++)
		for (int i = 0; i < kw; i++) {
			const float *p = k->pixels + ((size_t)(kh - 1 - j) * kw + (kw - 1 - i)) * k->channels;
			float r = p[0], g = k->channels <= 2 ? p[0] : p[1], b = k->channels <= 2 ? p[0] : p[2];
			float l = *gray ? r : 0.2126f * r + 0.7152f * g + 0.0722f * b;
			float *t = taps + ((size_t)j * kw + i) * 4;
			t[0] = (float)(r * scale), t[1] = (float)(g * scale), t[2] = (float)(b * scale);
			t[3] = (float)(l * scale);
		}
	return 0;
}

/* The image path's geometry: one RGBA plane, the rotated kernel as a cross-correlation whose
 * window starts kh - 1 - cy above and kw - 1 - cx left of each output pixel. */
static struct spatial_geom image_geom(int w, int h, int kw, int kh, int cx, int cy)
{
	struct spatial_geom g = {
		.batch = 1, .in_c = 1, .in_h = h, .in_w = w, .out_c = 1, .groups = 1, .k_h = kh,
		.k_w = kw, .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .up_h = 1, .up_w = 1,
		.org_y = -(kh - 1 - cy), .org_x = -(kw - 1 - cx), .out_h = h, .out_w = w, .dst_h = h,
		.dst_w = w, .dst_sy = 1, .dst_sx = 1,
	};
	return g;
}

/* One pass over the whole of `in` (checked by the caller; centre cx, cy). */
static int image_once(struct spatial_ctx *s, const struct image *in, const struct image *kernel,
                      const struct spatial_image_opts *o, int cx, int cy, struct image *out,
                      struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	int kw = kernel->width, kh = kernel->height, rc;
	struct spatial_geom g = image_geom(in->width, in->height, kw, kh, cx, cy);
	float *taps = malloc((size_t)kw * kh * 16);
	if (!taps)
		return SPATIAL_E_NOMEM;
	int gray;
	if ((rc = kernel_taps(kernel, o->normalize, taps, &gray, err)))
		goto done;
	const float *rgba = to_rgba(s, in);
	int ch = in->channels;
	if (!gray && ch <= 2)
		ch += 2;
	size_t n = (size_t)in->width * in->height;
	float *res = malloc(n * 16);
	if (!rgba || !res || image_alloc(out, in->width, in->height, ch)) {
		free(res);
		rc = SPATIAL_E_NOMEM;
		goto done;
	}
	rc = spatial_run_host(s, &g, o->algorithm, o->precision, 1, rgba, n * 16, taps, NULL, res, n * 16,
	              o->time_stages, st, err);
	if (!rc)
		for (size_t i = 0; i < n; i++) {
			const float *p = res + i * 4;
			float *d = out->pixels + i * ch;
			switch (ch) {
			case 1: d[0] = p[0]; break;
			case 2: d[0] = p[0], d[1] = p[3]; break;
			case 3: d[0] = p[0], d[1] = p[1], d[2] = p[2]; break;
			default: memcpy(d, p, 16);
			}
		}
	free(res);
	if (rc)
		image_free(out);
done:
	free(taps);
	return rc;
}


/* Whether an image pass over w x h runs: the shape's textures and buffers within the device's
 * limits (checked as the algorithm that must run, batch4 for auto), the pass within
 * spatial_opts.frame_bytes (its input and result, 32 bytes a pixel). */
struct fit {
	const struct spatial_ctx *s;
	int kw, kh, cx, cy, precision, algorithm;
};

static int image_fits(const struct fit *f, int w, int h)
{
	if (f->s->o.frame_bytes && (unsigned long long)w * h * 32 > f->s->o.frame_bytes)
		return 0;
	struct shape_key k;
	memset(&k, 0, sizeof k);
	k.g = image_geom(w, h, f->kw, f->kh, f->cx, f->cy);
	k.alg = f->algorithm == SPATIAL_ALG_AUTO ? SPATIAL_ALG_BATCH4 : f->algorithm;
	k.level = f->precision;
	k.image = 1;
	struct shape tmp;
	char err[SPATIAL_ERR_LEN];
	return spatial_shape_layout(f->s, &k, &tmp, err) == 0;
}

/* A tile's cost: the pixels its pass computes, halo included, and a fixed part for its
 * dispatches and copies. */
static double tile_cost(void *ctx, int tw, int th)
{
	const struct fit *f = ctx;
	int w = tw + f->kw - 1, h = th + f->kh - 1;
	return image_fits(f, w, h) ? (double)w * h + 65536.0 : -1;
}

/* The image in overlap-save tiles (gles/tile.h) whose pass fits. */
static int image_tiled(struct spatial_ctx *s, const struct image *in, const struct image *kernel,
                       const struct spatial_image_opts *o, int cx, int cy, struct image *out,
                       struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	struct fit f = {s, kernel->width, kernel->height, cx, cy, o->precision, o->algorithm};
	struct tile_grid g;
	if (tile_grid_choose(in->width, in->height, f.kw, f.kh, cx, cy, 0, tile_cost, &f, &g)) {
		snprintf(err, SPATIAL_ERR_LEN, "the %dx%d kernel does not fit this GPU's limits even "
		         "with the smallest tiles", f.kw, f.kh);
		return SPATIAL_E_TOO_LARGE;
	}
	log_sinkf(&s->log, LOG_DEBUG, "spatial: %dx%d in %dx%d tiles of %dx%d", in->width,
	          in->height, g.nx, g.ny, g.tw, g.th);
	int n = tile_count(&g), rc = 0;
	struct image sub = {0}; /* every tile's input, in one buffer */
	size_t sub_cap = 0;
	for (int i = 0; !rc && i < n; i++) {
		struct tile_rect ro, ri;
		tile_rects(&g, i, &ro, &ri);
		struct image r = {0};
		struct spatial_stats ts;
		memset(&ts, 0, sizeof ts);
		rc = tile_crop(in, &ri, &sub, &sub_cap) ? SPATIAL_E_NOMEM : 0;
		if (!rc)
			rc = image_once(s, &sub, kernel, o, cx, cy, &r, &ts, err);
		if (!rc && !out->pixels && image_alloc(out, in->width, in->height, r.channels))
			rc = SPATIAL_E_NOMEM;
		if (!rc) {
			tile_paste(out, ro.x, ro.y, &r, ro.x - ri.x, ro.y - ri.y, ro.w, ro.h);
			for (int k = 0; k < GPU_STAGE_COUNT; k++)
				st->stage_ms[k] += ts.stage_ms[k];
			st->gpu_ms += ts.gpu_ms, st->upload_ms += ts.upload_ms;
			st->algorithm = ts.algorithm, st->timed = ts.timed;
			st->measured |= ts.measured;
			st->singles += ts.singles, st->fused += ts.fused;
		}
		image_free(&r);
	}
	image_free(&sub);
	if (rc) {
		image_free(out);
		if (rc == SPATIAL_E_NOMEM && !err[0])
			snprintf(err, SPATIAL_ERR_LEN, "tiles: out of memory");
	} else {
		st->tiles_x = g.nx, st->tiles_y = g.ny;
	}
	return rc;
}

int spatial_convolve_image(struct spatial_ctx *s, const struct image *in,
                           const struct image *kernel, const struct spatial_image_opts *o,
                           struct image *out, struct spatial_stats *st,
                           char err[SPATIAL_ERR_LEN])
{
	struct spatial_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	memset(out, 0, sizeof *out);
	err[0] = 0;
	if (!in || !in->pixels || in->width < 1 || in->height < 1 || in->channels < 1 ||
	    in->channels > 4) {
		snprintf(err, SPATIAL_ERR_LEN, "empty or malformed image");
		return SPATIAL_E_ARG;
	}
	if (!kernel || !kernel->pixels || kernel->width < 1 || kernel->height < 1 ||
	    kernel->channels < 1 || kernel->channels > 4) {
		snprintf(err, SPATIAL_ERR_LEN, "empty or malformed kernel");
		return SPATIAL_E_ARG;
	}
	int kw = kernel->width, kh = kernel->height;
	int cx = o->center_x < 0 ? kw / 2 : o->center_x, cy = o->center_y < 0 ? kh / 2 : o->center_y;
	if (cx >= kw || cy >= kh) {
		snprintf(err, SPATIAL_ERR_LEN, "kernel-center: %d,%d lies outside the %dx%d kernel", cx, cy,
		         kw, kh);
		return SPATIAL_E_ARG;
	}
	if (o->algorithm != SPATIAL_ALG_AUTO && o->algorithm != SPATIAL_ALG_BATCH4 &&
	    o->algorithm != SPATIAL_ALG_INTERP) {
		snprintf(err, SPATIAL_ERR_LEN, "images run as auto, batch4 or interp, not %s",
		         spatial_algorithm_name(o->algorithm));
		return o->algorithm >= 0 && o->algorithm < SPATIAL_ALG_COUNT ? SPATIAL_E_UNSUPPORTED
		                                                              : SPATIAL_E_ARG;
	}
	struct spatial_geom g = image_geom(in->width, in->height, kw, kh, cx, cy);
	int rc = spatial_check_args(&g, o->algorithm, o->precision, 1, err);
	if (rc)
		return rc;
	double t0 = clock_ms();
	struct fit f = {s, kw, kh, cx, cy, o->precision, o->algorithm};
	rc = SPATIAL_E_TOO_LARGE;
	if (image_fits(&f, in->width, in->height)) {
		rc = image_once(s, in, kernel, o, cx, cy, out, st, err);
		st->tiles_x = st->tiles_y = 1;
	}
	if (rc == SPATIAL_E_TOO_LARGE) { /* beyond a limit or the budget: in tiles */
		memset(st, 0, sizeof *st);
		err[0] = 0;
		rc = image_tiled(s, in, kernel, o, cx, cy, out, st, err);
	}
	st->wall_ms = clock_ms() - t0;
	return rc;
}
int spatial_image_estimate(struct spatial_ctx *s, int w, int h, int kw, int kh, int precision,
                           double *ms, char err[SPATIAL_ERR_LEN])
{
	if (precision < 0 || precision > 3 || w < 1 || h < 1 || kw < 1 || kh < 1) {
		snprintf(err, SPATIAL_ERR_LEN, "estimate: bad size or precision");
		return SPATIAL_E_ARG;
	}
	if (!s->est_done[precision]) {
		/* two runs of the direct algorithm on a 256x256 image: 3x3 and 11x11 kernels */
		const int side = 256, ks[2] = {3, 11};
		double t[2];
		struct image img = {0}, k = {0}, o = {0};
		int rc = image_alloc(&img, side, side, 4);
		for (size_t i = 0; !rc && i < (size_t)side * side * 4; i++)
			img.pixels[i] = (float)((i * 37 % 101) / 101.0);
		for (int r = 0; !rc && r < 2; r++) {
			rc = image_alloc(&k, ks[r], ks[r], 1);
			for (int i = 0; !rc && i < ks[r] * ks[r]; i++)
				k.pixels[i] = 1.0f / (ks[r] * ks[r]);
			struct spatial_image_opts io = {-1, -1, 0, precision, SPATIAL_ALG_BATCH4, 1};
			struct spatial_stats st = {0};
			for (int rep = 0; !rc && rep < 2; rep++) { /* the first builds the plan */
				rc = spatial_convolve_image(s, &img, &k, &io, &o, &st, err);
				image_free(&o);
			}
			t[r] = st.gpu_ms;
			image_free(&k);
		}
		image_free(&img);
		if (rc)
			return rc;
		double n0 = (double)side * side * ks[0] * ks[0], n1 = (double)side * side * ks[1] * ks[1];
		double b = (t[1] - t[0]) / (n1 - n0);
		if (!(b > 0))
			b = t[1] / n1;
		double a = t[0] - b * n0;
		s->est_a[precision] = a > 0 ? a : 0;
		s->est_b[precision] = b;
		s->est_done[precision] = 1;
	}
	*ms = s->est_a[precision] + s->est_b[precision] * (double)w * h * kw * kh;
	return 0;
}
