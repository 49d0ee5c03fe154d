/* Built-in kernels; see kernel_presets.h. */
#include "gles/kernel_presets.h"

#include <GLES3/gl31.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/fft.h"

/* Wavelengths (nm) the aperture kernel is resampled for; green is the reference. */
#define LAMBDA_R 630.0
#define LAMBDA_G 532.0
#define LAMBDA_B 465.0

static int gaussian(const struct kernel_preset *ks, struct image *out)
{
	int n = ks->size, c = n / 2;
	if (image_alloc(out, n, n, 3))
		return -1;
	for (int y = 0; y < n; y++)
		for (int x = 0; x < n; x++) {
			double r2 = (double)(x - c) * (x - c) + (double)(y - c) * (y - c);
			float v = (float)exp(-r2 / (2 * ks->sigma * ks->sigma));
			for (int ch = 0; ch < 3; ch++)
				out->pixels[((size_t)y * n + x) * 3 + ch] = v;
		}
	return 0;
}

/* A bright core, a soft halo, and streaks that fade with distance, slightly bluer at the tips. */
static int glare(const struct kernel_preset *ks, struct image *out)
{
	int n = ks->size, c = n / 2;
	if (image_alloc(out, n, n, 3))
		return -1;
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
				out->pixels[((size_t)y * n + x) * 3 + ch] = (float)v[ch];
		}
	return 0;
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

static int aperture(const struct kernel_preset *ks, struct program_cache *pc,
                    const struct egl_info *info, struct image *out, char err[KERNEL_ERR_LEN])
{
	int size = ks->size;
	int f = fft_good_size(2 * size);
	double r = ks->radius * f, rot = ks->rotation * M_PI / 180;
	float *mask = calloc((size_t)f * f * 2, sizeof *mask);
	float *res = malloc((size_t)size * size * 4 * sizeof *res);
	struct fft *fft = NULL;
	GLuint bufs[2] = {0, 0};
	int rc = -1;
	if (!mask || !res) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: out of memory");
		goto out;
	}
	int c = f / 2;
	for (int y = 0; y < f; y++)
		for (int x = 0; x < f; x++)
			if (fabs((double)(x - c)) <= r + 1 && fabs((double)(y - c)) <= r + 1)
				mask[((size_t)y * f + x) * 2] = aperture_cover(x - c, y - c, r, ks->blades, rot);
	char ferr[FFT_ERR_LEN];
	struct fft_opts o = {.technique = FFT_TECH_AUTO, .components = 2};
	if (fft_create(pc, info, f, f, FFT_BOTH, &o, NULL, &fft, ferr)) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: %.400s", ferr);
		goto out;
	}
	if (!(bufs[0] = gl_buf_new((size_t)f * f * 8, mask, GL_STATIC_DRAW, NULL)) ||
	    !(bufs[1] = gl_buf_new((size_t)size * size * 16, NULL, GL_STATIC_READ, NULL))) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: out of GPU memory");
		goto out;
	}
	if (fft_execute(fft, bufs[0], 0)) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: FFT failed");
		goto out;
	}
	unsigned prog;
	char perr[PROGRAM_ERR_LEN];
	int key = 1;
	if (program_get(pc, "aperture", &key, sizeof key, "", &prog, perr)) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: %.400s", perr);
		goto out;
	}
	glUseProgram(prog);
	glUniform1i(glGetUniformLocation(prog, "u_f"), f);
	glUniform1i(glGetUniformLocation(prog, "u_size"), size);
	glUniform3f(glGetUniformLocation(prog, "u_ratio"), (float)(LAMBDA_G / LAMBDA_R), 1.0f,
	            (float)(LAMBDA_G / LAMBDA_B));
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, bufs[0]);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 7, bufs[1]);
	glDispatchCompute((GLuint)(size + 15) / 16, (GLuint)(size + 15) / 16, 1);
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	if (gl_buf_read(bufs[1], res, (size_t)size * size * 16, NULL) || gl_check(NULL, "aperture")) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: GL error reading the result");
		goto out;
	}
	if (image_alloc(out, size, size, 3)) {
		snprintf(err, KERNEL_ERR_LEN, "aperture kernel: out of memory");
		goto out;
	}
	/* each channel to unit sum, then scaled so the peak of green is 1 (the energy per channel is
	 * the same: the colour comes from the spread alone) */
	double sum[3] = {0, 0, 0};
	for (size_t i = 0; i < (size_t)size * size; i++)
		for (int ch = 0; ch < 3; ch++)
			sum[ch] += res[i * 4 + ch];
	size_t centre = ((size_t)(size / 2) * size + size / 2) * 4 + 1;
	double peak = sum[1] > 0 ? res[centre] / sum[1] : 1;
	for (size_t i = 0; i < (size_t)size * size; i++)
		for (int ch = 0; ch < 3; ch++)
			out->pixels[i * 3 + ch] = sum[ch] > 0 ? (float)(res[i * 4 + ch] / sum[ch] / peak) : 0;
	rc = 0;
out:
	if (bufs[0])
		glDeleteBuffers(2, bufs);
	fft_destroy(fft);
	free(mask);
	free(res);
	return rc;
}

int kernel_generate(const struct kernel_preset *ks, struct program_cache *pc,
                    const struct egl_info *info, struct image *out, char err[KERNEL_ERR_LEN])
{
	switch (ks->kind) {
	case KERNEL_GAUSSIAN:
		if (gaussian(ks, out))
			break;
		return 0;
	case KERNEL_GLARE:
		if (glare(ks, out))
			break;
		return 0;
	case KERNEL_APERTURE:
		return aperture(ks, pc, info, out, err);
	default:
		snprintf(err, KERNEL_ERR_LEN, "kernel: no built-in kernel of kind %d", ks->kind);
		return -1;
	}
	snprintf(err, KERNEL_ERR_LEN, "kernel: out of memory");
	return -1;
}
