/* The CPU engine's kernels for the bloom and convolve (fftconv.c): the built-in kernels,
 * generated on the host and kept; a kernel's pixels as used; and its spectrum at a padded size
 * (the kernel padded around tap (0, 0), one batched FFTW r2c), kept in an LRU cache bounded by
 * opts.kernel_cache_bytes. */
#include "cpu/engine_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel_shape.h"
#include "core/parallel.h"

int cpu_preset_image(struct cpu_engine *e, const struct kernel_preset *spec,
                     const struct image **img, const uint64_t **digest, char err[CPU_ERR_LEN])
{
	if (spec->kind == KERNEL_NONE) {
		snprintf(err, CPU_ERR_LEN, "no kernel: neither an image nor a built-in kernel");
		return CPU_E_ARG;
	}
	struct cpu_preset *slot = &e->presets[0];
	e->tick++;
	for (int i = 0; i < CPU_PRESETS; i++) {
		struct cpu_preset *c = &e->presets[i];
		if (c->img.pixels && !memcmp(&c->spec, spec, sizeof *spec)) {
			c->last_use = e->tick;
			*img = &c->img;
			*digest = c->digest;
			return 0;
		}
		if (!c->img.pixels || c->last_use < slot->last_use)
			slot = c;
	}
	struct image gen;
	int rc = cpu_kernel_preset(e, spec, &gen, err);
	if (rc)
		return rc;
	image_free(&slot->img);
	slot->spec = *spec;
	slot->img = gen;
	image_digest(&gen, slot->digest);
	slot->last_use = e->tick;
	*img = &slot->img;
	*digest = slot->digest;
	return 0;
}

int cpu_kernel_preset(struct cpu_engine *e, const struct kernel_preset *ks, struct image *out,
                      char err[CPU_ERR_LEN])
{
	memset(out, 0, sizeof *out);
	if (ks->size < 1 || ks->size > 16384) {
		snprintf(err, CPU_ERR_LEN, "kernel: size %d", ks->size);
		return CPU_E_ARG;
	}
	if (ks->kind == KERNEL_GAUSSIAN || ks->kind == KERNEL_GLARE) {
		if (image_alloc(out, ks->size, ks->size, 3))
			goto nomem;
		(ks->kind == KERNEL_GAUSSIAN ? kshape_gaussian : kshape_glare)(ks, out->pixels);
		return 0;
	}
	if (ks->kind != KERNEL_APERTURE) {
		snprintf(err, CPU_ERR_LEN, "kernel: no built-in kernel of kind %d", ks->kind);
		return CPU_E_ARG;
	}
	int f = kshape_aperture_grid(ks->size);
	size_t n = (size_t)f * f;
	fftwf_complex *mask = fftwf_malloc(n * sizeof *mask);
	float *res = malloc((size_t)ks->size * ks->size * 4 * sizeof *res);
	if (!mask || !res || image_alloc(out, ks->size, ks->size, 3)) {
		fftwf_free(mask);
		free(res);
		goto nomem;
	}
	memset(mask, 0, n * sizeof *mask);
	kshape_aperture_mask(ks, f, (float *)mask);
	cpu_plan_begin(e, e->threads);
	fftwf_plan p = fftwf_plan_dft_2d(f, f, mask, mask, FFTW_FORWARD, FFTW_ESTIMATE);
	pthread_mutex_unlock(&cpu_plan_lock); /* no measuring: nothing for the wisdom */
	if (p) {
		fftwf_execute(p);
		pthread_mutex_lock(&cpu_plan_lock);
		fftwf_destroy_plan(p);
		pthread_mutex_unlock(&cpu_plan_lock);
		kshape_aperture_sample((const float *)mask, f, ks->size, res);
		kshape_aperture_finish(res, ks->size, out->pixels);
	}
	fftwf_free(mask);
	free(res);
	if (p)
		return 0;
	image_free(out);
nomem:
	snprintf(err, CPU_ERR_LEN, "kernel: out of memory");
	return CPU_E_NOMEM;
}

/* The kernel's pixels as RGBL: 0, or CPU_E_ARG for a non-finite pixel or a kernel whose
 * luminance sums to zero where it is to be normalised (the GPU engine's messages). */
static int kernel_pixels(struct cpu_kinfo *ki, const struct bloom_params *p, char err[CPU_ERR_LEN])
{
	const struct image *k = ki->img;
	size_t n = (size_t)k->width * k->height;
	ki->rgbl = malloc(n * 4 * sizeof(float));
	if (!ki->rgbl)
		return CPU_E_NOMEM;
	int gray = 1;
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		const float *s = k->pixels + i * k->channels;
		float c[3] = {s[0], k->channels > 2 ? s[1] : s[0], k->channels > 2 ? s[2] : s[0]};
		gray &= c[0] == c[1] && c[1] == c[2];
		if (!isfinite(c[0]) || !isfinite(c[1]) || !isfinite(c[2])) {
			snprintf(err, CPU_ERR_LEN, "kernel: pixel %zu,%zu is not finite",
			         i % (size_t)k->width, i / (size_t)k->width);
			return CPU_E_ARG;
		}
		float *o = ki->rgbl + i * 4;
		memcpy(o, c, sizeof c);
		o[3] = 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2];
		sum += (double)0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
	}
	ki->gray = gray;
	ki->lum_sum = sum;
	if (p->normalize == BLOOM_NORMALIZE_LUMINANCE && !(fabs(sum) > 1e-30)) {
		snprintf(err, CPU_ERR_LEN, "kernel: its luminance sums to zero, so it cannot be "
		         "normalised (use normalize=none)");
		return CPU_E_ARG;
	}
	return 0;
}

static struct cpu_kentry *kcache_find(struct cpu_engine *e, const struct cpu_kinfo *ki, int pw,
                                      int ph, const struct bloom_params *p)
{
	e->tick++;
	for (size_t i = 0; i < e->nspectra; i++) {
		struct cpu_kentry *c = &e->spectra[i];
		if (c->digest[0] == ki->digest[0] && c->digest[1] == ki->digest[1] && c->pw == pw &&
		    c->ph == ph && c->cx == ki->cx && c->cy == ki->cy && c->kw == ki->kw &&
		    c->kh == ki->kh && c->scale == p->kernel_scale && c->normalize == p->normalize) {
			c->last_use = e->tick;
			e->st.kernel_hits++;
			return c;
		}
	}
	e->st.kernel_misses++;
	return NULL;
}

static void kcache_evict_to(struct cpu_engine *e, size_t room)
{
	while (e->nspectra && e->spectra_bytes + room > e->opts.kernel_cache_bytes) {
		size_t lru = 0;
		for (size_t i = 1; i < e->nspectra; i++)
			if (e->spectra[i].last_use < e->spectra[lru].last_use)
				lru = i;
		fftwf_free(e->spectra[lru].spec);
		e->spectra_bytes -= e->spectra[lru].bytes;
		e->spectra[lru] = e->spectra[--e->nspectra];
		e->st.kernel_evictions++;
	}
}

struct kpad {
	const struct cpu_kinfo *ki;
	float *real;
	int pw, ph, planes;
	float scale;
};

/* Rows [8 item, 8 item + 8) of the kernel: resampled to its size as used and placed with its
 * centre at (0, 0), wrapping: Kp[(j - cy) mod ph][(i - cx) mod pw] = K[j][i] scale. */
static int kpad_item(void *ctx, int worker, size_t item)
{
	(void)worker;
	const struct kpad *c = ctx;
	const struct cpu_kinfo *ki = c->ki;
	size_t plane = (size_t)c->pw * c->ph;
	for (int j = (int)item * CPU_ROWS; j < ki->kh && j < (int)(item + 1) * CPU_ROWS; j++) {
		int y = ((j - ki->cy) % c->ph + c->ph) % c->ph;
		for (int i = 0; i < ki->kw; i++) {
			int x = ((i - ki->cx) % c->pw + c->pw) % c->pw;
			float v[4];
			kshape_resample(ki->rgbl, ki->img->width, ki->img->height, 4, ki->kw, ki->kh, i, j, v);
			for (int s = 0; s < c->planes; s++)
				c->real[s * plane + (size_t)y * c->pw + x] = v[s] * c->scale;
		}
	}
	return 0;
}

int cpu_kernel_spectrum(struct cpu_engine *e, struct cpu_kinfo *ki, int pw, int ph, int threads,
                        const struct bloom_params *p, struct cpu_kentry **out, int *cached,
                        char err[CPU_ERR_LEN])
{
	*out = kcache_find(e, ki, pw, ph, p);
	*cached = *out != NULL;
	if (*out)
		return 0;
	int rc = kernel_pixels(ki, p, err);
	if (rc)
		return rc;
	int planes = ki->gray ? 1 : 4;
	size_t rb, sb;
	if (cpu_plan_bytes(pw, ph, planes, &rb, &sb)) {
		snprintf(err, CPU_ERR_LEN, "kernel spectrum %dx%d is too large", pw, ph);
		return CPU_E_TOO_LARGE;
	}
	float *real = fftwf_malloc(rb);
	fftwf_complex *spec = fftwf_malloc(sb);
	fftwf_plan plan = NULL;
	if (!real || !spec)
		goto nomem;
	memset(real, 0, rb);
	double norm = p->normalize == BLOOM_NORMALIZE_LUMINANCE ? 1.0 / ki->lum_sum : 1.0;
	struct kpad c = {ki, real, pw, ph, planes, (float)(norm / ((double)pw * ph))};
	par_each(((size_t)ki->kh + CPU_ROWS - 1) / CPU_ROWS, threads, kpad_item, &c, NULL);
	int n[2] = {ph, pw}, rdist = pw * ph, cdist = (pw / 2 + 1) * ph;
	cpu_plan_begin(e, threads);
	plan = fftwf_plan_many_dft_r2c(2, n, planes, real, NULL, 1, rdist, spec, NULL, 1, cdist,
	                               FFTW_ESTIMATE);
	pthread_mutex_unlock(&cpu_plan_lock); /* estimated: nothing for the wisdom */
	if (!plan)
		goto nomem;
	fftwf_execute(plan);
	pthread_mutex_lock(&cpu_plan_lock);
	fftwf_destroy_plan(plan);
	pthread_mutex_unlock(&cpu_plan_lock);
	fftwf_free(real);
	real = NULL;
	kcache_evict_to(e, sb);
	if (e->nspectra == e->cap_spectra) {
		size_t cap = e->cap_spectra ? e->cap_spectra * 2 : 8;
		struct cpu_kentry *nk = realloc(e->spectra, cap * sizeof *nk);
		if (!nk)
			goto nomem;
		e->spectra = nk;
		e->cap_spectra = cap;
	}
	struct cpu_kentry *k = &e->spectra[e->nspectra++];
	*k = (struct cpu_kentry){{ki->digest[0], ki->digest[1]}, pw, ph, ki->cx, ki->cy, ki->kw,
	                         ki->kh, p->normalize, ki->gray, p->kernel_scale, spec, sb, e->tick};
	e->spectra_bytes += sb;
	*out = k;
	return 0;
nomem:
	fftwf_free(real);
	fftwf_free(spec);
	snprintf(err, CPU_ERR_LEN, "kernel spectrum %dx%d: out of host memory", pw, ph);
	return CPU_E_NOMEM;
}
