/* FFT convolution bloom on the GPU; see bloom.h for the operation and its GL contract. */
#include "gles/bloom.h"

#include <EGL/egl.h>
#include <GLES3/gl31.h>
#include <GLES2/gl2ext.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gles/fft.h"
#include "gles/gpu_timer.h"
#include "gles/kernel_presets.h"

/* binding points shared with the bloom shaders */
#define B_PADDED 0
#define B_IMAGE 6
#define B_OUT 7
#define B_SPECTRUM 8
#define B_PLANES 9
#define B_FLAGS 11

#define BLOOM_LEASE_BYTES (256u << 20)  /* their mapped memory at most, together */
#define BLOOM_DESTROY_WAIT_MS 60000     /* how long destroy waits for lent buffers to return */

/* A result's planes left in a buffer mapped persistently from the GPU and lent to the caller
 * (bloom_result.lend): only the context's thread takes one (out 0 -> 1), any thread returns it
 * (1 -> 0, after its last read). */
struct bloom_lease {
	GLuint buf;
	size_t bytes;
	unsigned char *map;
	atomic_int out;
};

_Static_assert(IMAGE_LOST_RANGE == 2 && IMAGE_LOST_NEGATIVE == 8,
               "yuv_pack.comp's LOST_* constants");

/* Everything that depends on the padded size: FFT axes (vec4 for the image and colour kernels,
 * vec2 for grayscale kernels) and the buffers. */
struct plan {
	int pw, ph, technique, half;
	struct fft_axis *rows4, *cols4;  /* the image: vec4, float16 storage when half */
	struct fft_axis *rows4k, *cols4k;/* colour kernels: vec4 float32 (the image's axes unless half) */
	struct fft_axis *rows2, *cols2;  /* grayscale kernels: vec2 float32 */
	struct fft_conv *conv4, *conv2;  /* fused columns for colour / gray kernels, or NULL */
	GLuint q;                        /* fused: the spectrum transposed, pw rows of ph */
	GLuint padded;   /* pw*ph vec4: the packed image, then its spectrum, then the result */
	GLuint image;    /* pw*ph vec4 (>= w*h): the uploaded image */
	GLuint out;      /* pw*ph vec4 (>= w*h): the composited result, in GPU memory */
	GLuint staging;  /* the same size, mapped for reading: the copy of out the CPU reads, so
	                    that the driver never moves `out` itself to host memory */
	unsigned long long last_use;
};

struct kentry {
	uint64_t digest[2];
	int pw, ph, cx, cy, kw, kh, gray, normalize, technique;
	int fused; /* stored transposed, for the fused columns */
	double scale; /* kernel_scale asked for */
	GLuint spectrum;
	size_t bytes;
	unsigned long long last_use;
};

static GLuint make_buffer_usage(size_t bytes, GLenum usage);

struct bloom_ctx {
	struct program_cache *pc;
	const struct egl_info *info;
	struct gles_log log;
	struct bloom_ctx_opts opts;
	struct plan **plans;
	int nplans;
	struct kentry *kc;
	size_t nk, capk, kbytes;
	unsigned long long tick;
	struct bloom_cache_stats st;
	struct gpu_timer *timer;
	GLuint kupload; /* scratch for kernel uploads, grown as needed */
	size_t kupload_bytes;
	float *host;    /* reused RGBA staging for uploads (a fresh 33 MB malloc a 1080p frame
	                   costs page faults every request) */
	size_t host_bytes;
	GLuint yin, yout, ystage; /* JPEG planes in, out, and out's mapped copy; grown as needed */
	GLuint flags;             /* the composite's count of non-finite samples, and its copy */
	GLuint flags_stage;
	/* GL_EXT_buffer_storage: yin and ystage made immutable and mapped once, persistently
	 * (coherent), so a frame's planes go in by memcpy and come out after a fence, with no map,
	 * unmap or buffer update call per frame; NULL without the extension */
	PFNGLBUFFERSTORAGEEXTPROC buffer_storage;
	unsigned char *yin_map, *ystage_map;
	struct bloom_lease leases[BLOOM_LEASES]; /* result buffers to lend (with buffer_storage) */
	struct {                  /* the last bloom_run_frame's GPU stages (bloom_rerun_stages) */
		int valid, op, w, h;
		struct plan *q;
		struct kentry *ke;
		GLuint pack, mult, comp;
		struct bloom_params p;
	} last;
	size_t yin_bytes, yout_bytes, ystage_bytes;
	struct preset {
		struct kernel_preset spec;
		struct image img;
		uint64_t digest[2];
		unsigned long long last_use;
	} presets[8]; /* generated built-in kernels (aperture runs an FFT to make) */
};

const char *bloom_strerror(int code)
{
	switch (code) {
	case BLOOM_OK: return "ok";
	case BLOOM_E_ARG: return "bad bloom parameter";
	case BLOOM_E_TOO_LARGE: return "image too large for the GPU";
	case BLOOM_E_GPU: return "GPU failure";
	case BLOOM_E_NOMEM: return "out of memory";
	}
	return "unknown error";
}

int bloom_ctx_create(struct program_cache *pc, const struct egl_info *info,
                     const struct bloom_ctx_opts *o, const struct gles_log *log,
                     struct bloom_ctx **out, char err[BLOOM_ERR_LEN])
{
	struct bloom_ctx *b = calloc(1, sizeof *b);
	if (!b) {
		snprintf(err, BLOOM_ERR_LEN, "out of memory");
		return BLOOM_E_NOMEM;
	}
	b->pc = pc;
	b->info = info;
	if (log)
		b->log = *log;
	if (o)
		b->opts = *o;
	if (!b->opts.kernel_cache_bytes)
		b->opts.kernel_cache_bytes = 512u << 20;
	if (!b->opts.max_plans)
		b->opts.max_plans = 8;
	b->plans = calloc((size_t)b->opts.max_plans, sizeof *b->plans);
	if (!b->plans || gpu_timer_create(info, &b->timer)) {
		free(b->plans);
		free(b);
		snprintf(err, BLOOM_ERR_LEN, "out of memory");
		return BLOOM_E_NOMEM;
	}
	if (info->buffer_storage && !b->opts.no_persistent_map)
		b->buffer_storage = (PFNGLBUFFERSTORAGEEXTPROC)eglGetProcAddress("glBufferStorageEXT");
	b->flags = make_buffer_usage(16, GL_DYNAMIC_COPY);
	b->flags_stage = b->flags ? make_buffer_usage(16, GL_STREAM_READ) : 0;
	if (!b->flags_stage) {
		if (b->flags)
			glDeleteBuffers(1, &b->flags);
		gpu_timer_destroy(b->timer);
		free(b->plans);
		free(b);
		snprintf(err, BLOOM_ERR_LEN, "out of GPU memory");
		return BLOOM_E_NOMEM;
	}
	for (int i = 0; i < BLOOM_LEASES; i++)
		atomic_init(&b->leases[i].out, 0);
	*out = b;
	return 0;
}

static void plan_destroy(struct plan *p)
{
	if (!p)
		return;
	if (p->rows4k != p->rows4) {
		fft_axis_destroy(p->rows4k);
		fft_axis_destroy(p->cols4k);
	}
	fft_axis_destroy(p->rows4);
	fft_axis_destroy(p->cols4);
	fft_axis_destroy(p->rows2);
	fft_axis_destroy(p->cols2);
	fft_conv_destroy(p->conv4);
	fft_conv_destroy(p->conv2);
	GLuint bufs[] = {p->padded, p->image, p->out, p->staging, p->q};
	for (int i = 0; i < 5; i++)
		if (bufs[i])
			glDeleteBuffers(1, &bufs[i]);
	free(p);
}

void bloom_ctx_destroy(struct bloom_ctx *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->nplans; i++)
		plan_destroy(b->plans[i]);
	for (size_t i = 0; i < b->nk; i++)
		glDeleteBuffers(1, &b->kc[i].spectrum);
	if (b->kupload)
		glDeleteBuffers(1, &b->kupload);
	GLuint ybufs[] = {b->yin, b->yout, b->ystage, b->flags, b->flags_stage};
	for (int i = 0; i < 5; i++)
		if (ybufs[i])
			glDeleteBuffers(1, &ybufs[i]);
	/* lent result buffers: a codec thread may still be reading one; wait for them to come back
	 * (BLOOM_DESTROY_WAIT_MS for all of them), and leave one that does not mapped rather than
	 * pull the memory from under its reader */
	for (int i = 0, waited = 0; i < BLOOM_LEASES; i++) {
		struct bloom_lease *l = &b->leases[i];
		for (; waited < BLOOM_DESTROY_WAIT_MS && atomic_load(&l->out); waited++)
			nanosleep(&(struct timespec){0, 1000000}, NULL);
		if (atomic_load(&l->out))
			gles_logf(&b->log, GLES_LOG_WARN, "bloom: a lent result buffer was not returned "
			          "within %d s; left mapped", BLOOM_DESTROY_WAIT_MS / 1000);
		else if (l->buf)
			glDeleteBuffers(1, &l->buf);
	}
	for (int i = 0; i < 8; i++)
		image_free(&b->presets[i].img);
	free(b->host);
	gpu_timer_destroy(b->timer);
	free(b->kc);
	free(b->plans);
	free(b);
}

int bloom_release_plan(struct bloom_ctx *b)
{
	if (!b->nplans)
		return -1;
	int lru = 0;
	for (int i = 1; i < b->nplans; i++)
		if (b->plans[i]->last_use < b->plans[lru]->last_use)
			lru = i;
	b->last.valid = 0;
	plan_destroy(b->plans[lru]);
	b->plans[lru] = b->plans[--b->nplans];
	return 0;
}

void bloom_ctx_stats(const struct bloom_ctx *b, struct bloom_cache_stats *st)
{
	*st = b->st;
	st->kernel_bytes = b->kbytes;
	st->kernel_entries = b->nk;
	st->plan_entries = (size_t)b->nplans;
}

void bloom_kernel_digest(const struct image *k, uint64_t digest[2])
{
	/* two independent 64-bit multiply-xorshift streams over the header and the float bits */
	uint64_t h1 = 0x243F6A8885A308D3ull, h2 = 0x13198A2E03707344ull;
	uint32_t head[3] = {(uint32_t)k->width, (uint32_t)k->height, (uint32_t)k->channels};
	size_t n = (size_t)k->width * k->height * k->channels;
	for (size_t i = 0; i < 3 + n; i++) {
		uint32_t w;
		if (i < 3)
			w = head[i];
		else
			memcpy(&w, &k->pixels[i - 3], 4);
		h1 = (h1 ^ w) * 0x9E3779B97F4A7C15ull;
		h1 ^= h1 >> 29;
		h2 = (h2 + w) * 0xC2B2AE3D27D4EB4Full;
		h2 ^= h2 >> 31;
	}
	digest[0] = h1 ^ (h1 >> 32);
	digest[1] = h2 ^ (h2 >> 33);
}

static GLuint make_buffer_usage(size_t bytes, GLenum usage)
{
	GLuint id = 0;
	glGenBuffers(1, &id);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, id);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)bytes, NULL, usage);
	if (glGetError() != GL_NO_ERROR) {
		glDeleteBuffers(1, &id);
		return 0;
	}
	return id;
}

static GLuint make_buffer(size_t bytes)
{
	return make_buffer_usage(bytes, GL_DYNAMIC_COPY);
}

static int padded_size(int n)
{
	return fft_good_size(n);
}

/* The plan for a padded size, from the cache or built (compiling and allocating). */
static int get_plan(struct bloom_ctx *b, int pw, int ph, const struct bloom_params *p,
                    struct plan **out, char err[BLOOM_ERR_LEN])
{
	b->tick++;
	for (int i = 0; i < b->nplans; i++) {
		struct plan *q = b->plans[i];
		if (q->pw == pw && q->ph == ph && q->technique == p->technique &&
		    q->half == (p->precision == BLOOM_FP16)) {
			q->last_use = b->tick;
			b->st.plan_hits++;
			*out = q;
			return 0;
		}
	}
	b->st.plan_misses++;
	size_t elems = (size_t)pw * ph;
	if (elems * 16 > (size_t)b->info->max_ssbo_size) {
		snprintf(err, BLOOM_ERR_LEN, "padded size %dx%d needs a %zu MiB buffer; this GPU's "
		         "storage-buffer limit is %lld MiB", pw, ph, (elems * 16) >> 20,
		         b->info->max_ssbo_size >> 20);
		return BLOOM_E_TOO_LARGE;
	}
	struct plan *q = calloc(1, sizeof *q);
	if (!q)
		return BLOOM_E_NOMEM;
	q->pw = pw;
	q->ph = ph;
	q->technique = p->technique;
	q->half = p->precision == BLOOM_FP16;
	char ferr[FFT_ERR_LEN];
	/* float16 spectra are scaled on the forward transform so that they stay in range */
	struct fft_opts o4 = {.technique = p->technique, .components = 4, .half = q->half,
	                      .norm_forward = q->half, .pad_from = b->opts.fft_pad_from,
	                      .wisdom = b->opts.wisdom};
	struct fft_opts o4k = o4, o2 = o4;
	o4k.half = o4k.norm_forward = 0;
	o2.half = o2.norm_forward = 0;
	o2.components = 2;
	int rc = fft_axis_create(b->pc, b->info, pw, 0, elems, ph, &o4, &b->log, &q->rows4, ferr);
	if (!rc)
		rc = fft_axis_create(b->pc, b->info, ph, 1, elems, pw, &o4, &b->log, &q->cols4, ferr);
	q->rows4k = q->rows4;
	q->cols4k = q->cols4;
	if (!rc && q->half) {
		q->rows4k = q->cols4k = NULL;
		rc = fft_axis_create(b->pc, b->info, pw, 0, elems, ph, &o4k, &b->log, &q->rows4k, ferr);
		if (!rc)
			rc = fft_axis_create(b->pc, b->info, ph, 1, elems, pw, &o4k, &b->log, &q->cols4k, ferr);
	}
	if (!rc)
		rc = fft_axis_create(b->pc, b->info, pw, 0, elems, ph, &o2, &b->log, &q->rows2, ferr);
	if (!rc)
		rc = fft_axis_create(b->pc, b->info, ph, 1, elems, pw, &o2, &b->log, &q->cols2, ferr);
	if (rc) {
		snprintf(err, BLOOM_ERR_LEN, "FFT plan for %dx%d: %.3900s", pw, ph, ferr);
		plan_destroy(q);
		return rc == FFT_E_LIMIT ? BLOOM_E_TOO_LARGE : BLOOM_E_GPU;
	}
	{ /* fused columns where two fit shared memory; else separate */
		struct fft_opts oc = o4;
		oc.wisdom = NULL;
		char cerr[FFT_ERR_LEN];
		if (!fft_conv_create(b->pc, b->info, ph, pw, 0, &oc, &q->conv4, cerr) &&
		    !fft_conv_create(b->pc, b->info, ph, pw, 1, &oc, &q->conv2, cerr))
			q->q = make_buffer(elems * (q->half ? 8 : 16));
		if (!q->q) {
			fft_conv_destroy(q->conv4);
			fft_conv_destroy(q->conv2);
			q->conv4 = q->conv2 = NULL;
		}
	}
	q->padded = make_buffer(elems * (q->half ? 8 : 16));
	q->image = q->padded ? make_buffer(elems * 16) : 0;
	q->out = q->image ? make_buffer(elems * 16) : 0;
	q->staging = q->out ? make_buffer_usage(elems * 16, GL_STREAM_READ) : 0;
	if (!q->staging) {
		snprintf(err, BLOOM_ERR_LEN, "padded size %dx%d: out of GPU memory", pw, ph);
		plan_destroy(q);
		return BLOOM_E_GPU;
	}
	if (b->nplans == b->opts.max_plans) { /* evict the least recently used */
		int lru = 0;
		for (int i = 1; i < b->nplans; i++)
			if (b->plans[i]->last_use < b->plans[lru]->last_use)
				lru = i;
		plan_destroy(b->plans[lru]);
		b->plans[lru] = b->plans[--b->nplans];
	}
	q->last_use = b->tick;
	b->plans[b->nplans++] = q;
	*out = q;
	return 0;
}

/* variant: the shader's one switch (PREFILTER, GRAY or BLOOM); half: P holds float16. */
static int get_program(struct bloom_ctx *b, const char *name, int variant, int half, GLuint *prog,
                       char err[BLOOM_ERR_LEN])
{
	char defs[160], perr[PROGRAM_ERR_LEN];
	snprintf(defs, sizeof defs,
	         "#define PREFILTER %d\n#define GRAY %d\n#define BLOOM %d\n#define P_F16 %d\n", variant,
	         variant, variant, half);
	int key[2] = {variant, half};
	unsigned id;
	if (program_get(b->pc, name, key, sizeof key, defs, &id, perr)) {
		snprintf(err, BLOOM_ERR_LEN, "%s", perr);
		return BLOOM_E_GPU;
	}
	*prog = id;
	return 0;
}

/* The transpose program for an element of comps floats (float16 pairs when half). */
static int transpose_program(struct bloom_ctx *b, int comps, int half, unsigned *prog,
                             char err[BLOOM_ERR_LEN])
{
	static const char *types[2][2] = {{"vec2", "vec4"}, {"uint", "uvec2"}};
	const char *e = types[half ? 1 : 0][comps == 4];
	char defs[128], perr[PROGRAM_ERR_LEN];
	snprintf(defs, sizeof defs, "#define E %s\n#define EZERO %s(0)\n", e, e);
	int key[2] = {comps, half};
	if (program_get(b->pc, "transpose", key, sizeof key, defs, prog, perr)) {
		snprintf(err, BLOOM_ERR_LEN, "%s", perr);
		return BLOOM_E_GPU;
	}
	return 0;
}

/* Transposes rows [0, src_valid) of src (row stride src_stride) into dst (dst_rows rows of
 * dst_cols, zero past src_valid). comps/half: the stored element (vec4 / vec2, float16). */
static int transpose(struct bloom_ctx *b, GLuint src, int src_stride, int src_valid, GLuint dst,
                     int dst_rows, int dst_cols, int comps, int half, char err[BLOOM_ERR_LEN])
{
	unsigned prog;
	int rc = transpose_program(b, comps, half, &prog, err);
	if (rc)
		return rc;
	glUseProgram(prog);
	glUniform1ui(glGetUniformLocation(prog, "u_src_stride"), (GLuint)src_stride);
	glUniform1ui(glGetUniformLocation(prog, "u_dst_stride"), (GLuint)dst_cols);
	glUniform1ui(glGetUniformLocation(prog, "u_src_valid"), (GLuint)src_valid);
	glUniform1ui(glGetUniformLocation(prog, "u_dst_rows"), (GLuint)dst_rows);
	glUniform1ui(glGetUniformLocation(prog, "u_dst_cols"), (GLuint)dst_cols);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, src);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, dst);
	glDispatchCompute((GLuint)(dst_rows + 31) / 32, (GLuint)(dst_cols + 31) / 32, 1);
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
	return 0;
}

static void set_sizes(GLuint prog, int w, int h, int pw, int ph)
{
	glUseProgram(prog);
	glUniform2ui(glGetUniformLocation(prog, "u_img"), (GLuint)w, (GLuint)h);
	glUniform2ui(glGetUniformLocation(prog, "u_pad"), (GLuint)pw, (GLuint)ph);
}

static void dispatch2d(int w, int h)
{
	glDispatchCompute((GLuint)(w + 15) / 16, (GLuint)(h + 15) / 16, 1);
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
}

/* Kernel facts the cache key and the spectrum need, computed on the CPU from its pixels. */
struct kinfo {
	int kw, kh, cx, cy, gray; /* size as used (after kernel-scale) and centre */
	int src_w, src_h;         /* size of rgbl: the kernel's own (the GPU resamples it) */
	double lum_sum;
	float *rgbl; /* kw*kh vec4 (R, G, B, L) */
};

/* Reads the kernel's pixels (on a cache miss only): RGBL floats at its own size, gray or not,
 * the luminance sum (the GPU's resampling to the size kernel_geometry chose keeps sums). */
static int kernel_pixels(const struct image *k, struct kinfo *ki, char err[BLOOM_ERR_LEN])
{
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
	return 0;
}

/* The kernel's centre in pixels (default floor(w/2), floor(h/2)). */
static int kernel_center(const struct bloom_params *p, int kw, int kh, int *cx, int *cy,
                         char err[BLOOM_ERR_LEN])
{
	const struct kernel_center *c = &p->center;
	if (c->mode == KERNEL_CENTER_PIXEL) {
		*cx = (int)lround(c->x);
		*cy = (int)lround(c->y);
		if (*cx >= kw || *cy >= kh) {
			snprintf(err, BLOOM_ERR_LEN, "kernel_center: %d,%d lies outside the %dx%d kernel",
			         *cx, *cy, kw, kh);
			return BLOOM_E_ARG;
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

/* The kernel's size and centre as used: kernel_scale makes its larger side S times the image's
 * shorter side, and the centre moves with it. Cheap: no pixel is read. */
static int kernel_geometry(const struct image *k, const struct bloom_params *p, int w, int h,
                           struct kinfo *ki, char err[BLOOM_ERR_LEN])
{
	int rc = kernel_center(p, k->width, k->height, &ki->cx, &ki->cy, err);
	ki->kw = k->width;
	ki->kh = k->height;
	if (rc || p->kernel_scale <= 0)
		return rc;
	int shorter = w < h ? w : h, larger = k->width > k->height ? k->width : k->height;
	double f = p->kernel_scale * shorter / larger;
	int nw = (int)lround(k->width * f), nh = (int)lround(k->height * f);
	nw = nw < 1 ? 1 : nw;
	nh = nh < 1 ? 1 : nh;
	if (nw > 16384 || nh > 16384) {
		snprintf(err, BLOOM_ERR_LEN, "kernel-scale: the kernel would be %dx%d", nw, nh);
		return BLOOM_E_ARG;
	}
	ki->cx = (int)fmin(floor((ki->cx + 0.5) * nw / k->width), nw - 1);
	ki->cy = (int)fmin(floor((ki->cy + 0.5) * nh / k->height), nh - 1);
	ki->kw = nw;
	ki->kh = nh;
	return 0;
}

static struct kentry *kcache_find(struct bloom_ctx *b, const uint64_t d[2], int pw, int ph,
                                  const struct kinfo *ki, const struct bloom_params *p, int fused)
{
	for (size_t i = 0; i < b->nk; i++) {
		struct kentry *e = &b->kc[i];
		if (e->digest[0] == d[0] && e->digest[1] == d[1] && e->pw == pw && e->ph == ph &&
		    e->cx == ki->cx && e->cy == ki->cy && e->scale == p->kernel_scale &&
		    e->normalize == p->normalize && e->technique == p->technique && e->fused == fused)
			return e;
	}
	return NULL;
}

static void kcache_evict_to(struct bloom_ctx *b, size_t room)
{
	while (b->nk && b->kbytes + room > b->opts.kernel_cache_bytes) {
		size_t lru = 0;
		for (size_t i = 1; i < b->nk; i++)
			if (b->kc[i].last_use < b->kc[lru].last_use)
				lru = i;
		glDeleteBuffers(1, &b->kc[lru].spectrum);
		b->kbytes -= b->kc[lru].bytes;
		b->kc[lru] = b->kc[--b->nk];
		b->st.kernel_evictions++;
	}
}

/* Computes the kernel spectrum at the plan's padded size into a new cache entry. */
static int kernel_spectrum(struct bloom_ctx *b, struct plan *q, const uint64_t d[2],
                           struct kinfo *ki, const struct bloom_params *p, struct kentry **out,
                           char err[BLOOM_ERR_LEN])
{
	size_t elems = (size_t)q->pw * q->ph, bytes = elems * (ki->gray ? 8 : 16);
	size_t kbytes = (size_t)ki->src_w * ki->src_h * 16;
	if (kbytes > b->kupload_bytes) {
		if (b->kupload)
			glDeleteBuffers(1, &b->kupload);
		b->kupload = make_buffer(kbytes);
		b->kupload_bytes = b->kupload ? kbytes : 0;
		if (!b->kupload) {
			snprintf(err, BLOOM_ERR_LEN, "kernel upload: out of GPU memory");
			return BLOOM_E_GPU;
		}
	}
	kcache_evict_to(b, bytes);
	GLuint spec = make_buffer(bytes);
	if (!spec) {
		snprintf(err, BLOOM_ERR_LEN, "kernel spectrum: out of GPU memory");
		return BLOOM_E_GPU;
	}
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b->kupload);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)kbytes, ki->rgbl);
	GLuint prog;
	int rc = get_program(b, "bloom_common+bloom_kernel", ki->gray, 0, &prog, err);
	if (rc) {
		glDeleteBuffers(1, &spec);
		return rc;
	}
	set_sizes(prog, 0, 0, q->pw, q->ph);
	glUniform2ui(glGetUniformLocation(prog, "u_ksize"), (GLuint)ki->kw, (GLuint)ki->kh);
	glUniform2ui(glGetUniformLocation(prog, "u_src"), (GLuint)ki->src_w, (GLuint)ki->src_h);
	glUniform2ui(glGetUniformLocation(prog, "u_center"), (GLuint)ki->cx, (GLuint)ki->cy);
	double scale = 1.0;
	if (p->normalize == BLOOM_NORMALIZE_LUMINANCE)
		scale = 1.0 / ki->lum_sum;
	glUniform1f(glGetUniformLocation(prog, "u_scale"), (float)scale);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PADDED, spec);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_IMAGE, b->kupload);
	dispatch2d(q->pw, q->ph);
	struct fft_axis *rows = ki->gray ? q->rows2 : q->rows4k, *cols = ki->gray ? q->cols2 : q->cols4k;
	rc = fft_axis_execute(rows, spec, 0, (size_t)q->pw, 1, q->ph, 0);
	if (!rc)
		rc = fft_axis_execute(cols, spec, 0, 1, (size_t)q->pw, q->pw, 0);
	if (rc) {
		glDeleteBuffers(1, &spec);
		snprintf(err, BLOOM_ERR_LEN, "kernel spectrum: FFT failed");
		return BLOOM_E_GPU;
	}
	int fused = q->conv4 != NULL;
	if (fused) { /* the fused columns read the spectrum transposed, like the image's */
		GLuint t = make_buffer(bytes);
		rc = t ? transpose(b, spec, q->pw, q->ph, t, q->pw, q->ph, ki->gray ? 2 : 4, 0, err)
		       : BLOOM_E_GPU;
		glDeleteBuffers(1, &spec);
		if (rc) {
			if (t)
				glDeleteBuffers(1, &t);
			return rc;
		}
		spec = t;
	}
	if (b->nk == b->capk) {
		size_t cap = b->capk ? b->capk * 2 : 8;
		struct kentry *nk = realloc(b->kc, cap * sizeof *nk);
		if (!nk) {
			glDeleteBuffers(1, &spec);
			return BLOOM_E_NOMEM;
		}
		b->kc = nk;
		b->capk = cap;
	}
	struct kentry *e = &b->kc[b->nk++];
	memset(e, 0, sizeof *e);
	e->digest[0] = d[0];
	e->digest[1] = d[1];
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
	e->fused = fused;
	e->spectrum = spec;
	e->bytes = bytes;
	b->kbytes += bytes;
	*out = e;
	return 0;
}

/* Kernel image for this request: the given one, or the preset (default aperture). */
static int resolve_kernel(struct bloom_ctx *b, const struct bloom_kernel *k,
                          const struct bloom_params *p, struct image *gen,
                          const struct image **kimg, uint64_t d[2], char err[BLOOM_ERR_LEN])
{
	if (k && k->img) {
		*kimg = k->img;
		if (k->digest[0] || k->digest[1])
			d[0] = k->digest[0], d[1] = k->digest[1];
		else
			bloom_kernel_digest(k->img, d);
		return 0;
	}
	struct kernel_preset spec = p->preset;
	if (spec.kind == KERNEL_NONE) {
		snprintf(err, BLOOM_ERR_LEN, "no kernel: neither an image nor a built-in kernel");
		return BLOOM_E_ARG;
	}
	struct preset *slot = &b->presets[0];
	for (int i = 0; i < 8; i++) {
		struct preset *e = &b->presets[i];
		if (e->img.pixels && !memcmp(&e->spec, &spec, sizeof spec)) {
			e->last_use = ++b->tick;
			*kimg = &e->img;
			d[0] = e->digest[0], d[1] = e->digest[1];
			return 0;
		}
		if (!e->img.pixels || e->last_use < slot->last_use)
			slot = e;
	}
	int rc = bloom_kernel_preset(b, &spec, gen, err);
	if (rc)
		return rc;
	bloom_kernel_digest(gen, d);
	image_free(&slot->img); /* kept: the image moves into the slot */
	slot->spec = spec;
	slot->img = *gen;
	memset(gen, 0, sizeof *gen);
	slot->digest[0] = d[0], slot->digest[1] = d[1];
	slot->last_use = ++b->tick;
	*kimg = &slot->img;
	return 0;
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

/* Image (1-4 channels) -> RGBA floats (missing alpha is 1, gray fills R, G and B) in the
 * context's reused host buffer; a 4-channel image is uploaded as it is. */
static const float *to_rgba(struct bloom_ctx *b, const struct image *in)
{
	size_t n = (size_t)in->width * in->height;
	if (in->channels == 4)
		return in->pixels;
	if (n * 16 > b->host_bytes) {
		float *nb = realloc(b->host, n * 16);
		if (!nb)
			return NULL;
		b->host = nb;
		b->host_bytes = n * 16;
	}
	float *v = b->host;
	for (size_t i = 0; i < n; i++) {
		const float *s = in->pixels + i * in->channels;
		float *d = v + i * 4;
		switch (in->channels) {
		case 1: d[0] = d[1] = d[2] = s[0], d[3] = 1; break;
		case 2: d[0] = d[1] = d[2] = s[0], d[3] = s[1]; break;
		case 3: d[0] = s[0], d[1] = s[1], d[2] = s[2], d[3] = 1; break;
		default: memcpy(d, s, 16);
		}
	}
	return v;
}

int bloom_plan_known(struct bloom_ctx *b, const struct bloom_frame *in,
                     const struct bloom_kernel *k, const struct bloom_params *p, int *known,
                     unsigned long long *key, char err[BLOOM_ERR_LEN])
{
	*known = 0;
	*key = 0;
	int w = 0, h = 0;
	if (in && in->img) {
		w = in->img->width, h = in->img->height;
	} else if (in && in->yuv) {
		int turned = in->yuv->orientation >= 5;
		w = turned ? in->yuv->height : in->yuv->width;
		h = turned ? in->yuv->width : in->yuv->height;
	}
	if (w < 1 || h < 1) {
		snprintf(err, BLOOM_ERR_LEN, "empty or malformed image");
		return BLOOM_E_ARG;
	}
	struct image gen = {0};
	const struct image *kimg;
	uint64_t d[2];
	struct kinfo ki = {0};
	int rc = resolve_kernel(b, k, p, &gen, &kimg, d, err);
	if (!rc)
		rc = kernel_geometry(kimg, p, w, h, &ki, err);
	image_free(&gen);
	if (rc)
		return rc;
	int pw = padded_size(w + ki.kw - 1), ph = padded_size(h + ki.kh - 1);
	*key = (unsigned long long)pw | (unsigned long long)ph << 20 |
	       (unsigned long long)(p->precision == BLOOM_FP16) << 40 |
	       (unsigned long long)p->technique << 41;
	for (int i = 0; i < b->nplans; i++) {
		const struct plan *q = b->plans[i];
		if (q->pw == pw && q->ph == ph && q->technique == p->technique &&
		    q->half == (p->precision == BLOOM_FP16))
			*known = 1;
	}
	return 0;
}

int bloom_warm(struct bloom_ctx *b, int width, int height, int kernel_w, int kernel_h,
               const struct bloom_params *p, char err[BLOOM_ERR_LEN])
{
	struct plan *q;
	int pw = padded_size(width + kernel_w - 1), ph = padded_size(height + kernel_h - 1);
	int rc = get_plan(b, pw, ph, p, &q, err);
	int half = p->precision == BLOOM_FP16;
	GLuint prog;
	for (int v = 0; !rc && v < 2; v++) {
		rc = get_program(b, "bloom_common+bloom_math+bloom_pack", v, half, &prog, err);
		if (!rc)
			rc = get_program(b, "bloom_common+bloom_multiply", v, half, &prog, err);
		if (!rc)
			rc = get_program(b, "bloom_common+bloom_math+bloom_composite", v, half, &prog, err);
		if (!rc)
			rc = get_program(b, "bloom_common+bloom_kernel", v, 0, &prog, err);
	}
	if (!rc)
		rc = get_program(b, "bloom_common+yuv_unpack", 0, 0, &prog, err);
	if (!rc)
		rc = get_program(b, "bloom_common+yuv_pack", 0, 0, &prog, err);
	unsigned tprog; /* the fused columns' transposes: the image's, and the kernels' */
	if (!rc && q->conv4)
		rc = transpose_program(b, 4, half, &tprog, err);
	for (int comps = 2; !rc && q->conv4 && comps <= 4; comps += 2)
		rc = transpose_program(b, comps, 0, &tprog, err);
	return rc;
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Grows *buf (usage) to at least bytes; 0 or BLOOM_E_NOMEM. */
static int grow_buffer(GLuint *buf, size_t *have, size_t bytes, GLenum usage)
{
	if (bytes <= *have && *buf)
		return 0;
	if (*buf)
		glDeleteBuffers(1, buf);
	*buf = make_buffer_usage(bytes, usage);
	*have = *buf ? bytes : 0;
	return *buf ? 0 : BLOOM_E_NOMEM;
}

/* As grow_buffer, for a buffer kept mapped (GL_EXT_buffer_storage, coherent): read 1 for the
 * CPU reading it, 0 for writing. *map is the mapping. 0 or BLOOM_E_NOMEM. */
static int grow_mapped(struct bloom_ctx *b, GLuint *buf, size_t *have, unsigned char **map,
                       size_t bytes, int read)
{
	if (bytes <= *have && *buf)
		return 0;
	if (*buf)
		glDeleteBuffers(1, buf); /* unmaps it */
	*buf = 0, *have = 0, *map = NULL;
	GLbitfield f = (read ? GL_MAP_READ_BIT : GL_MAP_WRITE_BIT) | GL_MAP_PERSISTENT_BIT_EXT |
	               GL_MAP_COHERENT_BIT_EXT;
	glGenBuffers(1, buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, *buf);
	b->buffer_storage(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)bytes, NULL, f);
	if (glGetError() == GL_NO_ERROR)
		*map = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)bytes, f);
	if (!*map) {
		glDeleteBuffers(1, buf);
		*buf = 0;
		while (glGetError() != GL_NO_ERROR) {
		}
		return BLOOM_E_NOMEM;
	}
	*have = bytes;
	return 0;
}

/* A result buffer of at least `need` bytes to lend: a free one that is large enough, or a free
 * one grown while all of them stay within BLOOM_LEASE_BYTES; NULL when none (without
 * GL_EXT_buffer_storage, all lent, or out of memory): the caller copies the result instead. */
static struct bloom_lease *lease_take(struct bloom_ctx *b, size_t need)
{
	if (!b->buffer_storage)
		return NULL;
	struct bloom_lease *fit = NULL, *grow = NULL;
	size_t total = 0;
	for (int i = 0; i < BLOOM_LEASES; i++) {
		struct bloom_lease *l = &b->leases[i];
		total += l->bytes;
		if (atomic_load_explicit(&l->out, memory_order_acquire))
			continue;
		if (l->buf && l->bytes >= need) {
			if (!fit || l->bytes < fit->bytes)
				fit = l;
		} else if (!grow || l->bytes < grow->bytes) {
			grow = l;
		}
	}
	if (!fit && grow && total - grow->bytes + need <= BLOOM_LEASE_BYTES &&
	    !grow_mapped(b, &grow->buf, &grow->bytes, &grow->map, need, 1))
		fit = grow;
	if (fit)
		atomic_store_explicit(&fit->out, 1, memory_order_relaxed);
	return fit;
}

void bloom_lease_return(struct bloom_lease *l)
{
	if (l)
		atomic_store_explicit(&l->out, 0, memory_order_release);
}

/* Waits for every command issued so far to complete: 1 when they have, 0 after 60 s. Blocks
 * inside the driver: asking every 20 us instead cost 17-19% of the daemon's rate with one GPU
 * thread (bench/RESULTS.md, "Planes lent to the codec threads", run 32). */
static int fence_wait(void)
{
	GLsync f = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
	if (!f)
		return 0;
	GLenum w = GL_TIMEOUT_EXPIRED;
	for (int i = 0; i < 600 && w == GL_TIMEOUT_EXPIRED; i++) /* 60 s at most */
		w = glClientWaitSync(f, GL_SYNC_FLUSH_COMMANDS_BIT, 100000000ull);
	glDeleteSync(f);
	return w == GL_ALREADY_SIGNALED || w == GL_CONDITION_SATISFIED;
}

static void set_planes(GLuint prog, const struct yuv_image *y)
{
	glUniform2i(glGetUniformLocation(prog, "u_sub"), y->sub_x, y->sub_y);
	glUniform3ui(glGetUniformLocation(prog, "u_off"), (GLuint)y->offset[0], (GLuint)y->offset[1],
	             (GLuint)y->offset[2]);
	glUniform3ui(glGetUniformLocation(prog, "u_stride"), (GLuint)y->stride[0],
	             (GLuint)y->stride[1], (GLuint)y->stride[2]);
	glUniform1i(glGetUniformLocation(prog, "u_gray"), y->gray);
}

/* Planes -> q->image (w x h linear RGBA, oriented). */
static int upload_planes(struct bloom_ctx *b, struct plan *q, const struct yuv_image *y, int w,
                         int h, double *copy_ms, char err[BLOOM_ERR_LEN])
{
	GLuint prog;
	int rc = get_program(b, "bloom_common+yuv_unpack", 0, 0, &prog, err);
	if (rc)
		return rc;
	if (b->buffer_storage ? grow_mapped(b, &b->yin, &b->yin_bytes, &b->yin_map, y->bytes, 0)
	                      : grow_buffer(&b->yin, &b->yin_bytes, y->bytes, GL_STREAM_DRAW)) {
		snprintf(err, BLOOM_ERR_LEN, "planes upload: out of GPU memory");
		return BLOOM_E_NOMEM;
	}
	double t0 = wall_now();
	if (b->yin_map) { /* coherent: seen by the commands issued after it; the last frame's
	                     commands have all completed (its read-back waited for them) */
		memcpy(b->yin_map, y->data, y->bytes);
	} else {
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, b->yin);
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)y->bytes, y->data);
	}
	*copy_ms += wall_now() - t0;
	set_sizes(prog, w, h, q->pw, q->ph);
	set_planes(prog, y);
	glUniform2ui(glGetUniformLocation(prog, "u_src"), (GLuint)y->width, (GLuint)y->height);
	glUniform1i(glGetUniformLocation(prog, "u_orient"), y->orientation);
	/* libjpeg replicates rather than filters a horizontally halved plane <= 2 samples wide */
	glUniform1i(glGetUniformLocation(prog, "u_fancy"), !(y->sub_x == 2 && y->pw[1] <= 2));
	glUniform2i(glGetUniformLocation(prog, "u_cdim"), y->pw[1], y->ph[1]);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_IMAGE, q->image);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PLANES, b->yin);
	dispatch2d(w, h);
	return 0;
}

/* q->out (w x h) -> planes laid out as y in b->yout (the flags word after them), copied to
 * dst for mapping (a lent buffer, or b->ystage, which it grows). */
static int make_planes(struct bloom_ctx *b, struct plan *q, const struct yuv_image *y, int w,
                       int h, int dither, GLuint dst, char err[BLOOM_ERR_LEN])
{
	GLuint prog;
	int rc = get_program(b, "bloom_common+yuv_pack", 0, 0, &prog, err);
	if (rc)
		return rc;
	size_t bytes = y->bytes + 4;
	if (grow_buffer(&b->yout, &b->yout_bytes, bytes, GL_DYNAMIC_COPY) ||
	    (!dst && (b->buffer_storage
	              ? grow_mapped(b, &b->ystage, &b->ystage_bytes, &b->ystage_map, bytes, 1)
	              : grow_buffer(&b->ystage, &b->ystage_bytes, bytes, GL_STREAM_READ)))) {
		snprintf(err, BLOOM_ERR_LEN, "planes: out of GPU memory");
		return BLOOM_E_NOMEM;
	}
	if (!dst)
		dst = b->ystage;
	GLuint zero = 0;
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b->yout);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, (GLintptr)y->bytes, 4, &zero);
	set_sizes(prog, w, h, q->pw, q->ph);
	set_planes(prog, y);
	glUniform1i(glGetUniformLocation(prog, "u_dither"), dither);
	glUniform1ui(glGetUniformLocation(prog, "u_flags"), (GLuint)(y->bytes / 4));
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_OUT, q->out);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PLANES, b->yout);
	for (int plane = 0; plane < (y->gray ? 1 : 2); plane++) {
		glUniform1i(glGetUniformLocation(prog, "u_plane"), plane);
		glUniform2ui(glGetUniformLocation(prog, "u_pdim"), (GLuint)y->stride[plane] / 4,
		             (GLuint)y->ph[plane]);
		glDispatchCompute((GLuint)(y->stride[plane] / 4 + 15) / 16,
		                  (GLuint)(y->ph[plane] + 15) / 16, 1);
	}
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	glBindBuffer(GL_COPY_READ_BUFFER, b->yout);
	glBindBuffer(GL_COPY_WRITE_BUFFER, dst);
	glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)bytes);
	return 0;
}

/* Closes a stage on the timer, when the call is timed (tm not NULL). */
static void mark(struct gpu_timer *tm, int stage)
{
	if (tm)
		gpu_timer_mark(tm, stage);
}

/* The GPU stages of a bloom on the image already in q->image, from the prefilter to the
 * composite into q->out, each closed by its mark on tm (NULL: untimed). Sets st->fused. */
static int run_stages(struct bloom_ctx *b, struct plan *q, struct kentry *ke, GLuint pack,
                      GLuint mult, GLuint comp, const struct bloom_params *p, int w, int h,
                      struct gpu_timer *tm, struct bloom_stats *st, char err[BLOOM_ERR_LEN])
{
	int pw = q->pw, ph = q->ph, half = q->half;
	st->fused = q->conv4 != NULL;
	int rc = 0;
	/* prefilter / pack */
	set_sizes(pack, w, h, pw, ph);
	glUniform1f(glGetUniformLocation(pack, "u_threshold"), (float)p->threshold);
	glUniform1f(glGetUniformLocation(pack, "u_knee"), (float)p->knee);
	glUniform1f(glGetUniformLocation(pack, "u_clamp"), (float)p->clamp_max);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PADDED, q->padded);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_IMAGE, q->image);
	dispatch2d(pw, ph);
	mark(tm, GPU_STAGE_PREFILTER);
	/* forward: rows of the image only (the rows below it are all padding), then every column */
	rc = fft_axis_execute(q->rows4, q->padded, 0, (size_t)pw, 1, h, 0);
	mark(tm, GPU_STAGE_ROWS);
	if (st->fused) {
		/* columns become rows of q (zero past the image's rows, never read); each group runs
		 * two of them forward, multiplies, and back; then the image's rows come back to P */
		char terr[BLOOM_ERR_LEN];
		if (!rc)
			rc = transpose(b, q->padded, pw, h, q->q, pw, ph, 4, half, terr) ? FFT_E_GL : 0;
		mark(tm, GPU_STAGE_TRANSPOSE);
		if (!rc)
			rc = fft_conv_execute(ke->gray ? q->conv2 : q->conv4, q->q, ke->spectrum);
		mark(tm, GPU_STAGE_FUSED_COLS);
		if (!rc)
			rc = transpose(b, q->q, ph, pw, q->padded, h, pw, 4, half, terr) ? FFT_E_GL : 0;
		mark(tm, GPU_STAGE_TRANSPOSE_BACK);
	} else {
		if (!rc)
			rc = fft_axis_execute(q->cols4, q->padded, 0, 1, (size_t)pw, pw, 0);
		mark(tm, GPU_STAGE_COLS);
		/* multiply */
		if (!rc) {
			set_sizes(mult, w, h, pw, ph);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PADDED, q->padded);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_SPECTRUM, ke->spectrum);
			dispatch2d(pw, ph);
		}
		mark(tm, GPU_STAGE_MULTIPLY);
		/* inverse: every column, then the rows the output needs */
		if (!rc)
			rc = fft_axis_execute(q->cols4, q->padded, 0, 1, (size_t)pw, pw, 1);
		mark(tm, GPU_STAGE_ICOLS);
	}
	/* inverse rows: the rows the output needs */
	if (!rc)
		rc = fft_axis_execute(q->rows4, q->padded, 0, (size_t)pw, 1, h, 1);
	mark(tm, GPU_STAGE_IROWS);
	if (rc) {
		snprintf(err, BLOOM_ERR_LEN, "FFT failed: %s", fft_strerror(rc));
		return BLOOM_E_GPU;
	}
	/* composite */
	{
		GLuint zero[4] = {0, 0, 0, 0};
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, b->flags);
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof zero, zero);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_FLAGS, b->flags);
		set_sizes(comp, w, h, pw, ph);
		glUniform1f(glGetUniformLocation(comp, "u_intensity"), (float)p->intensity);
		glUniform1f(glGetUniformLocation(comp, "u_mix"), (float)p->mix);
		glUniform1i(glGetUniformLocation(comp, "u_composite"), p->composite);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PADDED, q->padded);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_IMAGE, q->image);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_OUT, q->out);
		dispatch2d(w, h);
	}
	mark(tm, GPU_STAGE_COMPOSITE);
	return 0;
}

int bloom_run(struct bloom_ctx *b, int op, const struct image *in, const struct bloom_kernel *k,
              const struct bloom_params *p, unsigned flags, struct image *out,
              struct bloom_stats *st, char err[BLOOM_ERR_LEN])
{
	struct bloom_frame f = {in, NULL};
	struct bloom_result r;
	memset(&r, 0, sizeof r);
	int rc = bloom_run_frame(b, op, &f, k, p, flags, &r, st, err);
	if (!rc && r.nonfinite) {
		snprintf(err, BLOOM_ERR_LEN, "%llu samples of the result are not finite: float32 "
		         "overflowed in the convolution (an image or kernel value near 3.4e38, or "
		         "infinite)", r.nonfinite);
		image_free(&r.img);
		rc = BLOOM_E_ARG;
	}
	*out = r.img;
	return rc;
}

/* The bloom's GPU stages, prefilter to composite: their sum is bloom_stats.gpu_ms. */
static double stages_ms(const double ms[GPU_STAGE_COUNT])
{
	double sum = 0;
	for (int s = GPU_STAGE_PREFILTER; s <= GPU_STAGE_COMPOSITE; s++)
		sum += ms[s];
	return sum;
}

int bloom_run_frame(struct bloom_ctx *b, int op, const struct bloom_frame *fin,
                    const struct bloom_kernel *k, const struct bloom_params *p, unsigned flags,
                    struct bloom_result *res, struct bloom_stats *st, char err[BLOOM_ERR_LEN])
{
	struct bloom_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	double t_start = wall_now(), t_read = 0;
	struct image *out = &res->img;
	memset(out, 0, sizeof *out);
	b->last.valid = 0; /* plans or kernel spectra may be evicted below */
	memset(&res->yuv, 0, sizeof res->yuv);
	res->lease = NULL;
	struct bloom_lease *lease = NULL; /* taken for this result; moves to res->lease at the end */
	res->channels = 0;
	res->lost = 0;
	res->nonfinite = 0;
	err[0] = 0;
	const struct image *in = fin ? fin->img : NULL;
	const struct yuv_image *yin = in || !fin ? NULL : fin->yuv;
	int w, h, in_ch;
	if (in) {
		w = in->width, h = in->height, in_ch = in->channels;
	} else if (yin && yin->data) {
		int turned = yin->orientation >= 5;
		w = turned ? yin->height : yin->width;
		h = turned ? yin->width : yin->height;
		in_ch = yin->gray ? 1 : 3;
	} else {
		w = h = in_ch = 0;
	}
	if (w < 1 || h < 1 || in_ch < 1 || in_ch > 4 || (in && !in->pixels)) {
		snprintf(err, BLOOM_ERR_LEN, "empty or malformed image");
		return BLOOM_E_ARG;
	}
	if (res->want_yuv && (res->sub_x < 1 || res->sub_x > 2 || res->sub_y < 1 || res->sub_y > 2)) {
		snprintf(err, BLOOM_ERR_LEN, "planes: subsampling %dx%d is not 1 or 2 per axis",
		         res->sub_x, res->sub_y);
		return BLOOM_E_ARG;
	}
	struct image gen = {0};
	const struct image *kimg;
	uint64_t d[2];
	struct kinfo ki = {0};
	int rc = resolve_kernel(b, k, p, &gen, &kimg, d, err);
	if (rc)
		goto done;
	if ((rc = kernel_geometry(kimg, p, w, h, &ki, err)))
		goto done;
	int pw = padded_size(w + ki.kw - 1);
	int ph = padded_size(h + ki.kh - 1);
	st->padded_w = pw;
	st->padded_h = ph;
	struct plan *q;
	if ((rc = get_plan(b, pw, ph, p, &q, err)))
		goto done;
	/* kernel spectrum: cached, or computed now from the kernel's pixels */
	b->tick++;
	int spectrum_timed = 0;
	struct kentry *ke = kcache_find(b, d, pw, ph, &ki, p, q->conv4 != NULL);
	if (ke) {
		b->st.kernel_hits++;
		st->kernel_cached = 1;
	} else {
		b->st.kernel_misses++;
		if ((rc = kernel_pixels(kimg, &ki, err)))
			goto done;
		if (p->normalize == BLOOM_NORMALIZE_LUMINANCE && !(fabs(ki.lum_sum) > 1e-30)) {
			snprintf(err, BLOOM_ERR_LEN, "kernel: its luminance sums to zero, so it cannot be "
			         "normalised (use normalize=none)");
			rc = BLOOM_E_ARG;
			goto done;
		}
		spectrum_timed = 1;
	}
	st->gray_kernel = ke ? ke->gray : ki.gray;
	GLuint pack, mult, comp;
	int half = q->half;
	if ((rc = get_program(b, "bloom_common+bloom_math+bloom_pack", op == BLOOM_OP_BLOOM, half, &pack, err)) ||
	    (rc = get_program(b, "bloom_common+bloom_multiply", st->gray_kernel, half, &mult, err)) ||
	    (rc = get_program(b, "bloom_common+bloom_math+bloom_composite", op == BLOOM_OP_BLOOM, half, &comp, err)))
		goto done;
	const float *rgba = in ? to_rgba(b, in) : NULL;
	if (in && !rgba) {
		rc = BLOOM_E_NOMEM;
		goto done;
	}
	/* a colour kernel gives a gray image colour */
	int ch = in_ch;
	if (!(ke ? ke->gray : ki.gray) && ch <= 2)
		ch += 2;
	res->channels = ch;
	if (res->want_yuv) { /* planes in a lent buffer, or in memory of the caller's */
		rc = yuv_image_layout(&res->yuv, w, h, ch <= 2, res->sub_x, res->sub_y);
		if (!rc && !(lease = res->lend ? lease_take(b, res->yuv.bytes + 4) : NULL) &&
		    !(res->yuv.data = malloc(res->yuv.bytes)))
			rc = IMAGE_E_NOMEM;
		if (rc) {
			snprintf(err, BLOOM_ERR_LEN, "planes: %s", image_strerror(rc));
			rc = rc == IMAGE_E_NOMEM ? BLOOM_E_NOMEM : BLOOM_E_TOO_LARGE;
			goto done;
		}
	}
	st->prepare_ms = wall_now() - t_start;
	struct gpu_timer *tm = flags & BLOOM_TIME_STAGES ? b->timer : NULL;
	if (tm)
		gpu_timer_start(tm);
	/* upload */
	if (in) {
		double t0 = wall_now();
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, q->image);
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)w * h * 16, rgba);
		st->copy_ms += wall_now() - t0;
	} else if ((rc = upload_planes(b, q, yin, w, h, &st->copy_ms, err))) {
		goto done;
	}
	mark(tm, GPU_STAGE_UPLOAD);
	if (spectrum_timed) {
		if ((rc = kernel_spectrum(b, q, d, &ki, p, &ke, err)))
			goto done;
		mark(tm, GPU_STAGE_KERNEL);
	}
	ke->last_use = b->tick;
	if ((rc = run_stages(b, q, ke, pack, mult, comp, p, w, h, tm, st, err)))
		goto done;
	/* what bloom_rerun_stages repeats */
	b->last.q = q, b->last.ke = ke, b->last.pack = pack, b->last.mult = mult, b->last.comp = comp;
	b->last.p = *p, b->last.w = w, b->last.h = h, b->last.valid = 1;
	/* download */
	int unmap = 1;
	if (res->want_yuv) {
		if ((rc = make_planes(b, q, &res->yuv, w, h, res->dither, lease ? lease->buf : 0, err)))
			goto done;
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, lease ? lease->buf : b->ystage);
		t_read = wall_now();
		const unsigned char *m, *map = lease ? lease->map : b->ystage_map;
		if (map) { /* kept mapped: wait for the copy, then read */
			glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT_EXT);
			m = fence_wait() ? map : NULL;
			unmap = 0;
		} else {
			m = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)res->yuv.bytes + 4,
			                     GL_MAP_READ_BIT);
		}
		st->wait_ms = wall_now() - t_read;
		if (!m) {
			snprintf(err, BLOOM_ERR_LEN, "reading the planes: %s", map
			         ? "the GPU did not finish within 60 s" : gl_error_name(glGetError()));
			rc = BLOOM_E_GPU;
			goto done;
		}
		if (lease) { /* the planes stay where the GPU put them, lent to the caller */
			res->yuv.data = (unsigned char *)lease->map;
			res->lease = lease;
			lease = NULL;
		} else {
			double t0 = wall_now();
			memcpy(res->yuv.data, m, res->yuv.bytes);
			st->copy_ms += wall_now() - t0;
		}
		uint32_t flags;
		memcpy(&flags, m + res->yuv.bytes, 4);
		res->lost = flags | IMAGE_LOST_PRECISION | (ch == 2 || ch == 4 ? IMAGE_LOST_ALPHA : 0);
	} else {
		glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
		glBindBuffer(GL_COPY_READ_BUFFER, q->out);
		glBindBuffer(GL_COPY_WRITE_BUFFER, q->staging);
		glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)w * h * 16);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, q->staging);
		t_read = wall_now();
		const float *m = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)w * h * 16,
		                                  GL_MAP_READ_BIT);
		double t0 = wall_now();
		st->wait_ms = t0 - t_read;
		if (!m) {
			snprintf(err, BLOOM_ERR_LEN, "reading the result: %s", gl_error_name(glGetError()));
			rc = BLOOM_E_GPU;
			goto done;
		}
		/* every sample is written below: no zeroing (calloc of a 1080p float frame is 25-33 MB) */
		out->pixels = malloc((size_t)w * h * ch * sizeof(float));
		out->width = w, out->height = h, out->channels = ch;
		if (!out->pixels) {
			memset(out, 0, sizeof *out);
			glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
			rc = BLOOM_E_NOMEM;
			goto done;
		}
		size_t n = (size_t)w * h;
		for (size_t i = 0; i < n; i++) {
			const float *s = m + i * 4;
			float *o = out->pixels + i * ch;
			switch (ch) {
			case 1: o[0] = s[0]; break;
			case 2: o[0] = s[0], o[1] = s[3]; break;
			case 3: o[0] = s[0], o[1] = s[1], o[2] = s[2]; break;
			default: memcpy(o, s, 16);
			}
		}
		st->copy_ms += wall_now() - t0;
	}
	if (unmap)
		glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
	{ /* the composite's count; its commands are complete by now */
		glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
		glBindBuffer(GL_COPY_READ_BUFFER, b->flags);
		glBindBuffer(GL_COPY_WRITE_BUFFER, b->flags_stage);
		glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, 4);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, b->flags_stage);
		const GLuint *nf = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, 4, GL_MAP_READ_BIT);
		if (nf) {
			res->nonfinite = *nf;
			glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
		}
	}
	st->readback_ms = wall_now() - t_read;
	mark(tm, GPU_STAGE_DOWNLOAD);
	if (tm && !gpu_timer_read(tm, st->stage_ms)) {
		st->timed = gpu_timer_kind(tm);
		st->gpu_ms = stages_ms(st->stage_ms);
	}
	if (gl_check(&b->log, "bloom")) {
		snprintf(err, BLOOM_ERR_LEN, "GL error during the bloom");
		rc = BLOOM_E_GPU;
	}
done:
	if (rc) {
		image_free(out);
		if (res->lease) { /* lent planes are not the caller's to free */
			res->yuv.data = NULL;
			bloom_lease_return(res->lease);
			res->lease = NULL;
		}
		yuv_image_free(&res->yuv);
	}
	bloom_lease_return(lease); /* taken but not lent: a failure before the read-back */
	st->wall_ms = wall_now() - t_start;
	free(ki.rgbl);
	image_free(&gen);
	return rc;
}

int bloom_rerun_stages(struct bloom_ctx *b, struct bloom_stats *st, char err[BLOOM_ERR_LEN])
{
	memset(st, 0, sizeof *st);
	if (!b->last.valid) {
		snprintf(err, BLOOM_ERR_LEN, "no bloom_run to repeat");
		return BLOOM_E_ARG;
	}
	gpu_timer_start(b->timer);
	int rc = run_stages(b, b->last.q, b->last.ke, b->last.pack, b->last.mult, b->last.comp,
	                    &b->last.p, b->last.w, b->last.h, b->timer, st, err);
	int timed = !gpu_timer_read(b->timer, st->stage_ms);
	if (rc)
		return rc;
	st->padded_w = b->last.q->pw, st->padded_h = b->last.q->ph;
	st->gray_kernel = b->last.ke->gray;
	st->kernel_cached = 1;
	if (timed) {
		st->timed = gpu_timer_kind(b->timer);
		st->gpu_ms = stages_ms(st->stage_ms);
	}
	if (gl_check(&b->log, "bloom stages")) {
		snprintf(err, BLOOM_ERR_LEN, "GL error during the bloom");
		return BLOOM_E_GPU;
	}
	return 0;
}
