/* Built-in kernels' pixels; see kernel_shape.h. */
#include "core/kernel_shape.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "core/fft_size.h"

void kshape_gaussian(const struct kernel_preset *ks, float *rgb)
{
	int n = ks->size, c = n / 2;
	for (int y = 0; y < n; y++)
		for (int x = 0; x < n; x++) {
			double r2 = (double)(x - c) * (x - c) + (double)(y - c) * (y - c);
			float v = (float)exp(-r2 / (2 * ks->sigma * ks->sigma));
			for (int ch = 0; ch < 3; ch++)
				rgb[((size_t)y * n + x) * 3 + ch] = v;
		}
}

void kshape_glare(const struct kernel_preset *ks, float *rgb)
{
	int n = ks->size, c = n / 2;
	double len = ks->length * c, rot = ks->rotation * M_PI / 180;
	for (int y = 0; y < n; y++)
		for (int x = 0; x < n; x++) {
			double dx = x - c, dy = y - c, r2 = dx * dx + dy * dy, r = sqrt(r2);
			double core = exp(-r2 / (2 * ks->core * ks->core));
			double halo = ks->halo_gain * exp(-r2 / (2 * ks->halo * ks->halo));
			double streak = 0;
			for (int s = 0; s < ks->streaks; s++) {
				double a = rot + M_PI * s / ks->streaks;
				double along = dx * cos(a) + dy * sin(a), across = -dx * sin(a) + dy * cos(a);
				double fall = len > 0 ? fmax(0, 1 - fabs(along) / len) : 0;
				streak += 0.05 * fall * fall * exp(-across * across / 0.8);
			}
			double t = len > 0 ? fmin(1, r / len) : 0;
			double v[3] = {core + halo + streak * (1 - 0.3 * t), core + halo + streak,
			               core + halo + streak * (1 + 0.3 * t)};
			for (int ch = 0; ch < 3; ch++)
				rgb[((size_t)y * n + x) * 3 + ch] = (float)v[ch];
		}
}

/* Coverage of pixel (x, y) by the polygon (or circle) aperture, 4x4 supersampled. */
static float aperture_cover(double x, double y, double r, int blades, double rot)
{
	int hits = 0;
	for (int sy = 0; sy < 4; sy++)
		for (int sx = 0; sx < 4; sx++) {
			double px = x + (sx + 0.5) / 4 - 0.5, py = y + (sy + 0.5) / 4 - 0.5;
			double d = sqrt(px * px + py * py);
			if (blades < 3) {
				hits += d <= r;
				continue;
			}
			/* inside a regular polygon: the distance to the centre along the direction is within
			 * the apothem / cos(angle to the nearest edge normal) */
			double a = atan2(py, px) - rot, sector = 2 * M_PI / blades;
			double rel = fmod(fmod(a, sector) + sector, sector) - sector / 2;
			double apothem = r * cos(M_PI / blades);
			hits += d * cos(rel) <= apothem;
		}
	return hits / 16.0f;
}

/* Length times passes: the padding rule the aperture's grid was drawn with, kept so that its
 * images stay as they were when the padding's cost changed. */
static double passes_cost(int m, const void *ctx)
{
	(void)ctx;
	int r[FFT_MAX_PASSES];
	int passes = fft_factor(m, r);
	return passes < 0 ? 1e300 : (double)m * (passes ? passes : 1);
}

int kshape_aperture_grid(int size)
{
	return fft_smooth_size(2 * size, passes_cost, NULL);
}

void kshape_aperture_mask(const struct kernel_preset *ks, int f, float *mask)
{
	double r = ks->radius * f, rot = ks->rotation * M_PI / 180;
	int c = f / 2;
	for (int y = 0; y < f; y++)
		for (int x = 0; x < f; x++)
			if (fabs((double)(x - c)) <= r + 1 && fabs((double)(y - c)) <= r + 1)
				mask[((size_t)y * f + x) * 2] = aperture_cover(x - c, y - c, r, ks->blades, rot);
}

static float power(const float *s, int f, int x, int y)
{
	x = ((x % f) + f) % f;
	y = ((y % f) + f) % f;
	const float *v = s + ((size_t)y * f + x) * 2;
	return v[0] * v[0] + v[1] * v[1];
}

static float sample_power(const float *s, int f, float px, float py)
{
	float fx = floorf(px), fy = floorf(py), tx = px - fx, ty = py - fy;
	int x = (int)fx, y = (int)fy;
	float a = power(s, f, x, y) + (power(s, f, x + 1, y) - power(s, f, x, y)) * tx;
	float b = power(s, f, x, y + 1) + (power(s, f, x + 1, y + 1) - power(s, f, x, y + 1)) * tx;
	return a + (b - a) * ty;
}

void kshape_aperture_sample(const float *spectrum, int f, int size, float *rgba)
{
	const float ratio[3] = {(float)(LAMBDA_G / LAMBDA_R), 1.0f, (float)(LAMBDA_G / LAMBDA_B)};
	for (int y = 0; y < size; y++)
		for (int x = 0; x < size; x++) {
			float dx = (float)(x - size / 2), dy = (float)(y - size / 2);
			float *o = rgba + ((size_t)y * size + x) * 4;
			for (int ch = 0; ch < 3; ch++)
				o[ch] = sample_power(spectrum, f, dx * ratio[ch], dy * ratio[ch]);
			o[3] = 0;
		}
}

void kshape_aperture_finish(const float *res, int size, float *rgb)
{
	double sum[3] = {0, 0, 0};
	for (size_t i = 0; i < (size_t)size * size; i++)
		for (int ch = 0; ch < 3; ch++)
			sum[ch] += res[i * 4 + ch];
	size_t centre = ((size_t)(size / 2) * size + size / 2) * 4 + 1;
	double peak = sum[1] > 0 ? res[centre] / sum[1] : 1;
	for (size_t i = 0; i < (size_t)size * size; i++)
		for (int ch = 0; ch < 3; ch++)
			rgb[i * 3 + ch] = sum[ch] > 0 ? (float)(res[i * 4 + ch] / sum[ch] / peak) : 0;
}

int kshape_center(const struct bloom_params *p, int kw, int kh, int *cx, int *cy, char *err,
                  size_t err_len)
{
	const struct kernel_center *c = &p->center;
	if (c->mode != KERNEL_CENTER_DEFAULT &&
	    !(c->x >= 0 && c->y >= 0 && c->x < 1e9 && c->y < 1e9)) { /* NaN fails too */
		snprintf(err, err_len, "kernel_center: %g,%g is not a point of the kernel (pixels or "
		         "uv from 0)", c->x, c->y);
		return -1;
	}
	if (c->mode == KERNEL_CENTER_PIXEL) {
		*cx = (int)lround(c->x);
		*cy = (int)lround(c->y);
		if (*cx >= kw || *cy >= kh) {
			snprintf(err, err_len, "kernel_center: %d,%d lies outside the %dx%d kernel",
			         *cx, *cy, kw, kh);
			return -1;
		}
	} else if (c->mode == KERNEL_CENTER_UV) {
		*cx = (int)fmin(floor(c->x * kw), kw - 1);
		*cy = (int)fmin(floor(c->y * kh), kh - 1);
	} else {
		*cx = kw / 2;
		*cy = kh / 2;
	}
	return 0;
}

void kshape_center_or_default(const struct bloom_params *p, int kw, int kh, int *cx, int *cy)
{
	char err[8];
	if (kshape_center(p, kw, kh, cx, cy, err, sizeof err))
		*cx = kw / 2, *cy = kh / 2;
}

int kshape_geometry(const struct bloom_params *p, int src_w, int src_h, int w, int h, int *kw,
                    int *kh, int *cx, int *cy, char *err, size_t err_len)
{
	int rc = kshape_center(p, src_w, src_h, cx, cy, err, err_len);
	*kw = src_w;
	*kh = src_h;
	if (rc || p->kernel_scale <= 0)
		return rc;
	int shorter = w < h ? w : h, larger = src_w > src_h ? src_w : src_h;
	double f = p->kernel_scale * shorter / larger;
	int nw = (int)lround(src_w * f), nh = (int)lround(src_h * f);
	nw = nw < 1 ? 1 : nw;
	nh = nh < 1 ? 1 : nh;
	if (nw > 16384 || nh > 16384) {
		snprintf(err, err_len, "kernel-scale: the kernel would be %dx%d", nw, nh);
		return -1;
	}
	*cx = (int)fmin(floor((*cx + 0.5) * nw / src_w), nw - 1);
	*cy = (int)fmin(floor((*cy + 0.5) * nh / src_h), nh - 1);
	*kw = nw;
	*kh = nh;
	return 0;
}

void kshape_resample(const float *src, int src_w, int src_h, int ch, int kw, int kh, int i, int j,
                     float *out)
{
	for (int c = 0; c < ch; c++)
		out[c] = 0;
	if (src_w == kw && src_h == kh) {
		for (int c = 0; c < ch; c++)
			out[c] = src[((size_t)j * src_w + i) * ch + c];
		return;
	}
	float scx = (float)src_w / (float)kw, scy = (float)src_h / (float)kh;
	float a0x = (float)i * scx, a0y = (float)j * scy, a1x = a0x + scx, a1y = a0y + scy;
	int y1 = (int)ceilf(a1y) < src_h ? (int)ceilf(a1y) : src_h;
	int x1 = (int)ceilf(a1x) < src_w ? (int)ceilf(a1x) : src_w;
	for (int y = (int)floorf(a0y); y < y1; y++) {
		float wy = fminf(a1y, (float)(y + 1)) - fmaxf(a0y, (float)y);
		for (int x = (int)floorf(a0x); x < x1; x++) {
			float wx = fminf(a1x, (float)(x + 1)) - fmaxf(a0x, (float)x);
			const float *s = src + ((size_t)y * src_w + x) * ch;
			for (int c = 0; c < ch; c++)
				out[c] += wx * wy * s[c];
		}
	}
}
