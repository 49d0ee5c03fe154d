/* The bloom's kernels: built-in ones generated and kept, a kernel's geometry (kernel-scale and
 * centre), its pixels and digest, and the spectrum cache per (digest, padded size); see
 * bloom_internal.h. */
#include "gles/bloom_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel_shape.h"
#include "gles/kernel_presets.h"

void bloom_kernel_digest(const struct image *k, uint64_t digest[2])
{
	image_digest(k, digest);
}

int bloom_kernel_preset(struct bloom_ctx *b, const struct kernel_preset *ks, struct image *out,
                        char err[BLOOM_ERR_LEN])
{
	char kerr[KERNEL_ERR_LEN];
	if (kernel_generate(ks, b->pc, b->info, out, kerr)) {
		snprintf(err, BLOOM_ERR_LEN, "%s", kerr);
		return BLOOM_E_GPU;
	}
	return 0;
}

/* The built-in kernel p->preset names: a kept one, or generated now into the least recently
 * used slot. */
static int preset_image(struct bloom_ctx *b, const struct bloom_params *p, struct kinfo *ki,
                        char err[BLOOM_ERR_LEN])
{
	const struct kernel_preset *spec = &p->preset;
	if (spec->kind == KERNEL_NONE) {
		snprintf(err, BLOOM_ERR_LEN, "no kernel: neither an image nor a built-in kernel");
		return BLOOM_E_ARG;
	}
	struct preset *slot = &b->presets[0];
	for (int i = 0; i < BLOOM_PRESETS; i++) {
		struct preset *e = &b->presets[i];
		if (e->img.pixels && !memcmp(&e->spec, spec, sizeof *spec)) {
			e->last_use = ++b->tick;
			ki->img = &e->img;
			ki->digest[0] = e->digest[0], ki->digest[1] = e->digest[1];
			return 0;
		}
		if (!e->img.pixels || e->last_use < slot->last_use)
			slot = e;
	}
	struct image gen;
	int rc = bloom_kernel_preset(b, spec, &gen, err);
	if (rc)
		return rc;
	image_free(&slot->img);
	slot->spec = *spec;
	slot->img = gen;
	bloom_kernel_digest(&gen, slot->digest);
	slot->last_use = ++b->tick;
	ki->img = &slot->img;
	ki->digest[0] = slot->digest[0], ki->digest[1] = slot->digest[1];
	return 0;
}

int bloom_kernel_center(const struct bloom_params *p, int kw, int kh, int *cx, int *cy, char *err,
                        size_t err_len)
{
	return kshape_center(p, kw, kh, cx, cy, err, err_len) ? BLOOM_E_ARG : 0;
}

/* The kernel's size and centre as used (kshape_geometry). Cheap: no pixel is read. */
static int kernel_geometry(const struct image *k, const struct bloom_params *p, int w, int h,
                           struct kinfo *ki, char err[BLOOM_ERR_LEN])
{
	return kshape_geometry(p, k->width, k->height, w, h, &ki->kw, &ki->kh, &ki->cx, &ki->cy, err,
	                       BLOOM_ERR_LEN) ? BLOOM_E_ARG : 0;
}

int bloom_kernel_resolve(struct bloom_ctx *b, const struct bloom_kernel *k,
                         const struct bloom_params *p, int w, int h, struct kinfo *ki,
                         char err[BLOOM_ERR_LEN])
{
	memset(ki, 0, sizeof *ki);
	int rc = 0;
	if (k && k->img) {
		ki->img = k->img;
		if (k->digest[0] || k->digest[1])
			ki->digest[0] = k->digest[0], ki->digest[1] = k->digest[1];
		else
			bloom_kernel_digest(k->img, ki->digest);
	} else {
		rc = preset_image(b, p, ki, err);
	}
	return rc ? rc : kernel_geometry(ki->img, p, w, h, ki, err);
}

/* The index of ki's spectrum at plan q in the cache, or -1. */
static ptrdiff_t kcache_index(const struct bloom_ctx *b, const struct plan *q,
                              const struct kinfo *ki, const struct bloom_params *p)
{
	int fused = q->conv4 != NULL;
	for (size_t i = 0; i < b->spectra.n; i++) {
		const struct kentry *e = &b->spectra.e[i];
		if (e->digest[0] == ki->digest[0] && e->digest[1] == ki->digest[1] && e->pw == q->pw &&
		    e->ph == q->ph && e->cx == ki->cx && e->cy == ki->cy && e->kw == ki->kw &&
		    e->kh == ki->kh &&
		    e->scale == p->kernel_scale && e->normalize == p->normalize &&
		    e->technique == p->technique && e->fused == fused)
			return (ptrdiff_t)i;
	}
	return -1;
}

struct kentry *bloom_kcache_find(struct bloom_ctx *b, const struct plan *q,
                                 const struct kinfo *ki, const struct bloom_params *p)
{
	b->tick++;
	ptrdiff_t i = kcache_index(b, q, ki, p);
	if (i < 0) {
		b->st.kernel_misses++;
		return NULL;
	}
	b->spectra.e[i].last_use = b->tick;
	b->st.kernel_hits++;
	return &b->spectra.e[i];
}

int bloom_kcache_has(const struct bloom_ctx *b, const struct plan *q, const struct kinfo *ki,
                     const struct bloom_params *p)
{
	return kcache_index(b, q, ki, p) >= 0;
}

int bloom_kernel_pixels(struct kinfo *ki, const struct bloom_params *p, char err[BLOOM_ERR_LEN])
{
	const struct image *k = ki->img;
	ki->src_w = k->width;
	ki->src_h = k->height;
	size_t n = (size_t)k->width * k->height;
	ki->rgbl = malloc(n * 4 * sizeof(float));
	if (!ki->rgbl)
		return BLOOM_E_NOMEM;
	int gray = 1;
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		const float *s = k->pixels + i * k->channels;
		float r, g, bl;
		if (k->channels <= 2) {
			r = g = bl = s[0];
		} else {
			r = s[0], g = s[1], bl = s[2];
			if (r != g || g != bl)
				gray = 0;
		}
		if (!isfinite(r) || !isfinite(g) || !isfinite(bl)) {
			snprintf(err, BLOOM_ERR_LEN, "kernel: pixel %zu,%zu is not finite",
			         i % (size_t)k->width, i / (size_t)k->width);
			return BLOOM_E_ARG;
		}
		float l = 0.2126f * r + 0.7152f * g + 0.0722f * bl;
		ki->rgbl[i * 4] = r, ki->rgbl[i * 4 + 1] = g, ki->rgbl[i * 4 + 2] = bl;
		ki->rgbl[i * 4 + 3] = l;
		sum += (double)0.2126 * r + 0.7152 * g + 0.0722 * bl;
	}
	ki->gray = gray;
	ki->lum_sum = sum;
	if (p->normalize == BLOOM_NORMALIZE_LUMINANCE && !(fabs(sum) > 1e-30)) {
		snprintf(err, BLOOM_ERR_LEN, "kernel: its luminance sums to zero, so it cannot be "
		         "normalised (use normalize=none)");
		return BLOOM_E_ARG;
	}
	return 0;
}

void bloom_kinfo_free(struct kinfo *ki)
{
	free(ki->rgbl);
	ki->rgbl = NULL;
}

/* Evicts the least recently used spectra until `room` more bytes fit kernel_cache_bytes. */
static void kcache_evict_to(struct bloom_ctx *b, size_t room)
{
	while (b->spectra.n && b->spectra.bytes + room > b->opts.kernel_cache_bytes) {
		size_t lru = 0;
		for (size_t i = 1; i < b->spectra.n; i++)
			if (b->spectra.e[i].last_use < b->spectra.e[lru].last_use)
				lru = i;
		glDeleteBuffers(1, &b->spectra.e[lru].spectrum);
		b->spectra.bytes -= b->spectra.e[lru].bytes;
		b->spectra.e[lru] = b->spectra.e[--b->spectra.n];
		b->st.kernel_evictions++;
	}
}

/* The kernel's pixels into the upload buffer (grown as needed). */
static int upload_pixels(struct bloom_ctx *b, const struct kinfo *ki, char err[BLOOM_ERR_LEN])
{
	size_t kbytes = (size_t)ki->src_w * ki->src_h * 16;
	if (kbytes > b->xfer.kupload_bytes) {
		if (b->xfer.kupload)
			glDeleteBuffers(1, &b->xfer.kupload);
		b->xfer.kupload = bloom_buffer(kbytes, GL_DYNAMIC_COPY);
		b->xfer.kupload_bytes = b->xfer.kupload ? kbytes : 0;
		if (!b->xfer.kupload) {
			snprintf(err, BLOOM_ERR_LEN, "kernel upload: out of GPU memory");
			return BLOOM_E_GPU_MEMORY;
		}
	}
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b->xfer.kupload);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)kbytes, ki->rgbl);
	return 0;
}

/* The uploaded kernel into spec, padded to the plan's size with its centre at (0, 0),
 * resampled to its size as used and normalised; then transformed (rows, columns). */
static int pad_and_transform(struct bloom_ctx *b, struct plan *q, const struct kinfo *ki,
                             const struct bloom_params *p, GLuint spec, char err[BLOOM_ERR_LEN])
{
	const struct bloom_prog *kp;
	int rc = bloom_prog(b, SH_KERNEL, ki->gray, 0, &kp, err);
	if (rc)
		return rc;
	bloom_set_sizes(kp, 0, 0, q->pw, q->ph);
	glUniform2ui(kp->u[U_KSIZE], (GLuint)ki->kw, (GLuint)ki->kh);
	glUniform2ui(kp->u[U_SRC], (GLuint)ki->src_w, (GLuint)ki->src_h);
	glUniform2ui(kp->u[U_CENTER], (GLuint)ki->cx, (GLuint)ki->cy);
	double scale = p->normalize == BLOOM_NORMALIZE_LUMINANCE ? 1.0 / ki->lum_sum : 1.0;
	glUniform1f(kp->u[U_SCALE], (float)scale);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PADDED, spec);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_IMAGE, b->xfer.kupload);
	bloom_dispatch2d(q->pw, q->ph);
	struct fft_axis *rows = ki->gray ? q->rows2 : q->rows4k, *cols = ki->gray ? q->cols2 : q->cols4k;
	rc = fft_axis_execute(rows, spec, 0, (size_t)q->pw, 1, q->ph, 0);
	if (!rc)
		rc = fft_axis_execute(cols, spec, 0, 1, (size_t)q->pw, q->pw, 0);
	if (rc) {
		snprintf(err, BLOOM_ERR_LEN, "kernel spectrum: FFT failed");
		return BLOOM_E_GPU;
	}
	return 0;
}

/* A new cache entry for spectrum spec (bytes long) of ki at plan q. */
static int kcache_add(struct bloom_ctx *b, const struct plan *q, const struct kinfo *ki,
                      const struct bloom_params *p, GLuint spec, size_t bytes,
                      struct kentry **out)
{
	if (b->spectra.n == b->spectra.cap) {
		size_t cap = b->spectra.cap ? b->spectra.cap * 2 : 8;
		struct kentry *nk = realloc(b->spectra.e, cap * sizeof *nk);
		if (!nk)
			return BLOOM_E_NOMEM;
		b->spectra.e = nk;
		b->spectra.cap = cap;
	}
	struct kentry *e = &b->spectra.e[b->spectra.n++];
	memset(e, 0, sizeof *e);
	e->digest[0] = ki->digest[0];
	e->digest[1] = ki->digest[1];
	e->pw = q->pw;
	e->ph = q->ph;
	e->cx = ki->cx;
	e->cy = ki->cy;
	e->kw = ki->kw;
	e->kh = ki->kh;
	e->gray = ki->gray;
	e->scale = p->kernel_scale;
	e->normalize = p->normalize;
	e->technique = p->technique;
	e->fused = q->conv4 != NULL;
	e->spectrum = spec;
	e->bytes = bytes;
	e->last_use = b->tick;
	b->spectra.bytes += bytes;
	*out = e;
	return 0;
}

int bloom_kernel_spectrum(struct bloom_ctx *b, struct plan *q, const struct kinfo *ki,
                          const struct bloom_params *p, struct kentry **out,
                          char err[BLOOM_ERR_LEN])
{
	size_t bytes = (size_t)q->pw * q->ph * (ki->gray ? 8 : 16);
	int rc = upload_pixels(b, ki, err);
	if (rc)
		return rc;
	kcache_evict_to(b, bytes);
	GLuint spec = bloom_buffer(bytes, GL_DYNAMIC_COPY), t = 0;
	if (!spec) {
		snprintf(err, BLOOM_ERR_LEN, "kernel spectrum: out of GPU memory");
		return BLOOM_E_GPU_MEMORY;
	}
	rc = pad_and_transform(b, q, ki, p, spec, err);
	if (!rc && q->conv4) { /* the fused columns read the spectrum transposed, like the image's */
		t = bloom_buffer(bytes, GL_DYNAMIC_COPY);
		if (t) {
			rc = bloom_transpose(b, spec, q->pw, q->ph, t, q->pw, q->ph, ki->gray ? 2 : 4, 0, err);
		} else {
			snprintf(err, BLOOM_ERR_LEN, "kernel spectrum: out of GPU memory");
			rc = BLOOM_E_GPU_MEMORY;
		}
		glDeleteBuffers(1, &spec);
		spec = t;
	}
	if (!rc)
		rc = kcache_add(b, q, ki, p, spec, bytes, out);
	if (rc && spec)
		glDeleteBuffers(1, &spec);
	return rc;
}

void bloom_kcache_free(struct bloom_ctx *b)
{
	for (size_t i = 0; i < b->spectra.n; i++)
		glDeleteBuffers(1, &b->spectra.e[i].spectrum);
	free(b->spectra.e);
	b->spectra.e = NULL;
	b->spectra.n = b->spectra.cap = b->spectra.bytes = 0;
	if (b->xfer.kupload)
		glDeleteBuffers(1, &b->xfer.kupload);
	b->xfer.kupload = 0;
	b->xfer.kupload_bytes = 0;
}

void bloom_presets_free(struct bloom_ctx *b)
{
	for (int i = 0; i < BLOOM_PRESETS; i++)
		image_free(&b->presets[i].img);
}
