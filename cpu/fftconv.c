/* The CPU engine's bloom and convolve (engine.h): the image's planes padded to the GPU's padded
 * size (fft_conv_size of the frame's spans, fft_conv_span; a tile's, fft_tile_span),
 * prefiltered (bloom), transformed by one batched FFTW r2c, multiplied by the cached kernel
 * spectrum (fftconv_kernel.c), transformed back by one batched c2r and composited. Real planes
 * instead of the GPU's packed complex ones: FFTW's r2c already halves the work, and a bloom
 * transforms only R, G and B (its alpha is the input's). The plans per padded size live here
 * too. */
#include "cpu/engine_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/fft_size.h"
#include "core/kernel_shape.h"
#include "core/parallel.h"

/* ---- plans per padded size ---- */

void cpu_plan_free(struct cpu_plan *q)
{
	pthread_mutex_lock(&cpu_plan_lock);
	if (q->fwd)
		fftwf_destroy_plan(q->fwd);
	if (q->inv)
		fftwf_destroy_plan(q->inv);
	pthread_mutex_unlock(&cpu_plan_lock);
	fftwf_free(q->real);
	fftwf_free(q->spec);
	memset(q, 0, sizeof *q);
}

int cpu_plan_bytes(int pw, int ph, int planes, size_t *real, size_t *spec)
{
	size_t a, b;
	if (checked_mul_size((size_t)pw * planes, (size_t)ph, &a) ||
	    checked_mul_size(a, sizeof(float), real) ||
	    checked_mul_size((size_t)(pw / 2 + 1) * planes, (size_t)ph, &b) ||
	    checked_mul_size(b, sizeof(fftwf_complex), spec))
		return -1;
	return 0;
}

int cpu_plan_make(struct cpu_engine *e, struct cpu_plan *q, unsigned flags)
{
	int n[2] = {q->ph, q->pw}, rdist = q->pw * q->ph, cdist = (q->pw / 2 + 1) * q->ph;
	/* one plane's plan run on each plane: every plane starts as aligned as the first (FFTW's
	 * new-array execution requires it) where the planes' sizes keep 16-byte alignment */
	q->per_plane = !e->opts.batched_plans && rdist % 4 == 0 && cdist % 2 == 0;
	cpu_plan_begin(e, q->threads);
	q->fwd = fftwf_plan_many_dft_r2c(2, n, q->per_plane ? 1 : q->nsrc, q->real, NULL, 1, rdist,
	                                 q->spec, NULL, 1, cdist, flags);
	q->inv = fftwf_plan_many_dft_c2r(2, n, q->per_plane ? 1 : q->nout, q->spec, NULL, 1, cdist,
	                                 q->real, NULL, 1, rdist, flags | FFTW_DESTROY_INPUT);
	if (!q->fwd || !q->inv) {
		if (q->fwd)
			fftwf_destroy_plan(q->fwd);
		if (q->inv)
			fftwf_destroy_plan(q->inv);
		q->fwd = q->inv = NULL;
	}
	cpu_plan_end(e);
	if (!q->fwd)
		return -1;
	q->measured = flags == FFTW_MEASURE;
	if (q->measured)
		e->wisdom_dirty = 1;
	return 0;
}

/* The plan of (pw, ph, nsrc, nout): a kept one, or made now (the least recently used goes past
 * opts.max_plans). */
static int plan_get(struct cpu_engine *e, int pw, int ph, int nsrc, int nout, int threads,
                    struct cpu_plan **out, char err[CPU_ERR_LEN])
{
	e->tick++;
	for (int i = 0; i < e->nplans; i++) {
		struct cpu_plan *q = &e->plans[i];
		if (q->pw == pw && q->ph == ph && q->nsrc == nsrc && q->nout == nout) {
			q->last_use = e->tick;
			e->st.plan_hits++;
			*out = q;
			return 0;
		}
	}
	e->st.plan_misses++;
	int max = e->opts.max_plans < CPU_MAX_PLANS ? e->opts.max_plans : CPU_MAX_PLANS;
	struct cpu_plan *q;
	if (e->nplans < max) {
		q = &e->plans[e->nplans++];
	} else {
		q = &e->plans[0];
		for (int i = 1; i < e->nplans; i++)
			if (e->plans[i].last_use < q->last_use)
				q = &e->plans[i];
		cpu_plan_free(q);
	}
	int planes = nsrc > nout ? nsrc : nout;
	size_t rb, sb;
	if (cpu_plan_bytes(pw, ph, planes, &rb, &sb)) {
		snprintf(err, CPU_ERR_LEN, "padded size %dx%d is too large", pw, ph);
		return CPU_E_TOO_LARGE;
	}
	q->real = fftwf_malloc(rb);
	q->spec = fftwf_malloc(sb);
	if (!q->real || !q->spec) {
		cpu_plan_free(q);
		snprintf(err, CPU_ERR_LEN, "padded size %dx%d: out of host memory (%zu MiB)", pw, ph,
		         (rb + sb) >> 20);
		return CPU_E_NOMEM;
	}
	q->pw = pw, q->ph = ph, q->nsrc = nsrc, q->nout = nout, q->threads = threads;
	if (cpu_plan_make(e, q, cpu_plan_flags(e))) {
		cpu_plan_free(q);
		snprintf(err, CPU_ERR_LEN, "FFTW could not plan %dx%d", pw, ph);
		return CPU_E_NOMEM;
	}
	q->last_use = e->tick;
	*out = q;
	return 0;
}

/* ---- the frame ---- */

/* What a frame transforms: nsrc real planes in (the image's R [G B] [A], gray as one), nout out,
 * each with the input plane it multiplies (src) and the kernel spectrum plane (kc). */
struct frame {
	struct cpu_engine *e;
	const struct image *in;
	const struct bloom_params *p;
	int op, w, h, out_ch, nsrc, nout;
	int threads; /* cpu_engine_frame_threads */
	int ix, iy, iw, ih; /* the tile's input rectangle (the image's pixels its outputs reach) */
	int ox, oy, ow, oh; /* the output rectangle it owns (untiled: both the whole image) */
	int src[4], kc[4];
	struct cpu_plan *q;
	const struct cpu_kentry *k;
	struct image *out;
	unsigned long long bad[PAR_EACH_MAX]; /* per worker: non-finite result samples */
};

#define SPAN 512 /* pixels a row is converted in at a time (on the stack: 8 KiB of planes) */

/* The loops below work on a span's channels as separate planes of SPAN floats, with selects
 * instead of branches, so that the compiler vectorizes them (cpu/module.mk). */
struct span {
	float c[4][SPAN]; /* R, G, B, A */
};

/* Pixels [x0, x0 + n) of row y into v's planes (gray fills R, G and B; a missing alpha is 1). */
static void span_load(const struct image *in, int y, int x0, int n, struct span *v)
{
	const float *s = in->pixels + ((size_t)y * in->width + x0) * in->channels;
	float *r = v->c[0], *g = v->c[1], *b = v->c[2], *a = v->c[3];
	switch (in->channels) {
	case 1:
		for (int i = 0; i < n; i++)
			r[i] = g[i] = b[i] = s[i], a[i] = 1;
		break;
	case 2:
		for (int i = 0; i < n; i++)
			r[i] = g[i] = b[i] = s[2 * i], a[i] = s[2 * i + 1];
		break;
	case 3:
		for (int i = 0; i < n; i++)
			r[i] = s[3 * i], g[i] = s[3 * i + 1], b[i] = s[3 * i + 2], a[i] = 1;
		break;
	default:
		for (int i = 0; i < n; i++)
			r[i] = s[4 * i], g[i] = s[4 * i + 1], b[i] = s[4 * i + 2], a[i] = s[4 * i + 3];
	}
}

static inline float fmin_(float a, float b) { return a < b ? a : b; }
static inline float fmax_(float a, float b) { return a > b ? a : b; }
/* isfinite as a compare (NaN fails it), which vectorizes */
static inline int finite_(float x) { return fabsf(x) <= FLT_MAX; }

/* v's RGB times w, clamped to [-clamp_max, clamp_max]. */
static void clamp_rgb(struct span *v, int n, float w, float clamp_max)
{
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < n; i++)
			v->c[c][i] = fmin_(fmax_(v->c[c][i] * w, -clamp_max), clamp_max);
}

/* bloom_prefilter's weight of each pixel (threshold > 0; with_knee: knee > 0, else the soft
 * part is 0) on its RGB, clamped. Inlined with a constant with_knee: a loop without branches. */
static inline void weigh_rgb(struct span *v, int n, float threshold, float knee,
                             float clamp_max, int with_knee)
{
	float *r = v->c[0], *g = v->c[1], *b = v->c[2];
	for (int i = 0; i < n; i++) {
		float m = fmax_(r[i], fmax_(g[i], b[i]));
		float soft = 0.0f;
		if (with_knee) {
			soft = fmin_(fmax_(m - threshold + knee, 0.0f), 2.0f * knee);
			soft = soft * soft / (4.0f * knee);
		}
		float w = fmax_(soft, m - threshold) / (m > 0.0f ? m : 1.0f);
		w = m > 0.0f ? w : 0.0f;
		r[i] = fmin_(fmax_(r[i] * w, -clamp_max), clamp_max);
		g[i] = fmin_(fmax_(g[i] * w, -clamp_max), clamp_max);
		b[i] = fmin_(fmax_(b[i] * w, -clamp_max), clamp_max);
	}
}

/* The GPU's bloom_prefilter (gles/shaders/bloom_math.comp) on v's n pixels, in float as there;
 * non-finite samples 0 first. Divisions by a safe denominator, the other case selected after. */
static void prefilter_span(struct span *v, int n, int bloom, float threshold, float knee_,
                           float clamp_max)
{
	for (int c = 0; c < 4; c++)
		for (int i = 0; i < n; i++)
			v->c[c][i] = finite_(v->c[c][i]) ? v->c[c][i] : 0.0f;
	if (!bloom)
		return;
	float knee = fmin_(knee_, threshold);
	if (threshold <= 0.0f)
		clamp_rgb(v, n, 1.0f, clamp_max);
	else if (knee > 0.0f)
		weigh_rgb(v, n, threshold, knee, clamp_max, 1);
	else
		weigh_rgb(v, n, threshold, knee, clamp_max, 0);
}

/* Rows of the padded planes: the image's (non-finite samples 0; prefiltered for the bloom),
 * zero past it. */
static int pack_item(void *ctx, int worker, size_t item)
{
	(void)worker;
	const struct frame *f = ctx;
	const struct cpu_plan *q = f->q;
	size_t plane = (size_t)q->pw * q->ph;
	/* the planes' channels of the RGBA pixel: gray (R) [alpha], or R, G, B [alpha] */
	const int chan[4] = {0, f->nsrc == 2 ? 3 : 1, 2, 3};
	float th = (float)f->p->threshold, kn = (float)f->p->knee, cl = (float)f->p->clamp_max;
	struct span v;
	for (int y = (int)item * CPU_ROWS; y < q->ph && y < (int)(item + 1) * CPU_ROWS; y++) {
		if (y >= f->ih) {
			for (int s = 0; s < f->nsrc; s++)
				memset(q->real + s * plane + (size_t)y * q->pw, 0, (size_t)q->pw * sizeof(float));
			continue;
		}
		for (int x0 = 0; x0 < f->iw; x0 += SPAN) {
			int n = f->iw - x0 < SPAN ? f->iw - x0 : SPAN;
			span_load(f->in, f->iy + y, f->ix + x0, n, &v);
			prefilter_span(&v, n, f->op == BLOOM_OP_BLOOM, th, kn, cl);
			for (int s = 0; s < f->nsrc; s++)
				memcpy(q->real + s * plane + (size_t)y * q->pw + x0, v.c[chan[s]],
				       (size_t)n * sizeof(float));
		}
		for (int s = 0; s < f->nsrc; s++)
			memset(q->real + s * plane + (size_t)y * q->pw + f->iw, 0,
			       (size_t)(q->pw - f->iw) * sizeof(float));
	}
	return 0;
}

/* Rows of the spectra: output plane o = input plane src[o] times kernel plane kc[o], the
 * planes taken last to first so that an input plane is read before an output overwrites it
 * (src[o] <= o). */
static int multiply_item(void *ctx, int worker, size_t item)
{
	(void)worker;
	const struct frame *f = ctx;
	const struct cpu_plan *q = f->q;
	size_t cw = (size_t)q->pw / 2 + 1, plane = cw * q->ph;
	for (int y = (int)item * CPU_ROWS; y < q->ph && y < (int)(item + 1) * CPU_ROWS; y++)
		for (int o = f->nout - 1; o >= 0; o--) {
			const float *a = (const float *)(q->spec + f->src[o] * plane + y * cw);
			const float *b = (const float *)(f->k->spec + f->kc[o] * plane + y * cw);
			float *d = (float *)(q->spec + o * plane + y * cw);
			for (size_t x = 0; x < cw; x++) {
				float re = a[2 * x] * b[2 * x] - a[2 * x + 1] * b[2 * x + 1];
				float im = a[2 * x] * b[2 * x + 1] + a[2 * x + 1] * b[2 * x];
				d[2 * x] = re;
				d[2 * x + 1] = im;
			}
		}
	return 0;
}

/* d[i * oc + c] = r[c][i], the result's n pixels interleaved. */
static void interleave(float *d, int oc, const float *const r[4], int n)
{
	switch (oc) {
	case 1:
		memcpy(d, r[0], (size_t)n * sizeof *d);
		break;
	case 2:
		for (int i = 0; i < n; i++)
			d[2 * i] = r[0][i], d[2 * i + 1] = r[1][i];
		break;
	case 3:
		for (int i = 0; i < n; i++)
			d[3 * i] = r[0][i], d[3 * i + 1] = r[1][i], d[3 * i + 2] = r[2][i];
		break;
	default:
		for (int i = 0; i < n; i++)
			d[4 * i] = r[0][i], d[4 * i + 1] = r[1][i], d[4 * i + 2] = r[2][i],
			d[4 * i + 3] = r[3][i];
	}
}

/* Rows of the result: the bloom's composite (add: I + intensity B; mix: (1 - mix) I + mix B;
 * alpha the input's), or the convolution itself; non-finite samples counted (the bloom's only
 * where the input's were finite). The result's channels from RGBA: R; R and A; RGB; RGBA
 * (convolve: its planes in order). */
static int composite_item(void *ctx, int worker, size_t item)
{
	struct frame *f = ctx;
	const struct cpu_plan *q = f->q;
	size_t plane = (size_t)q->pw * q->ph;
	int oc = f->out_ch, bloom = f->op == BLOOM_OP_BLOOM;
	float inten = (float)f->p->intensity, mix = (float)f->p->mix;
	int add = f->p->composite == BLOOM_COMPOSITE_ADD;
	static const int pick[4][4] = {{0}, {0, 3}, {0, 1, 2}, {0, 1, 2, 3}};
	const int *pk = pick[oc - 1];
	unsigned long long bad = 0;
	struct span v, r;
	unsigned char badpx[SPAN];
	for (int y = (int)item * CPU_ROWS; y < f->oh && y < (int)(item + 1) * CPU_ROWS; y++)
		for (int x0 = 0; x0 < f->ow; x0 += SPAN) {
			int n = f->ow - x0 < SPAN ? f->ow - x0 : SPAN;
			/* the tile's plane position of output pixel (ox + x0, oy + y) */
			size_t py = (size_t)(f->oy - f->iy + y), px = (size_t)(f->ox - f->ix + x0);
			const float *b[4];
			for (int o = 0; o < f->nout; o++)
				b[o] = q->real + o * plane + py * q->pw + px;
			float *d = f->out->pixels + ((size_t)(f->oy + y) * f->w + f->ox + x0) * oc;
			const float *res[4], *in[4];
			memset(badpx, 0, (size_t)n);
			if (!bloom) {
				for (int c = 0; c < oc; c++) {
					res[c] = b[c];
					for (int i = 0; i < n; i++)
						badpx[i] |= !finite_(b[c][i]);
				}
			} else {
				span_load(f->in, f->oy + y, f->ox + x0, n, &v);
				for (int c = 0; c < 3; c++) {
					const float *bc = b[f->nout == 1 ? 0 : c], *p = v.c[c];
					float *o = r.c[c];
					if (add)
						for (int i = 0; i < n; i++)
							o[i] = p[i] + inten * bc[i];
					else
						for (int i = 0; i < n; i++)
							o[i] = p[i] + (bc[i] - p[i]) * mix;
				}
				for (int c = 0; c < oc; c++) {
					res[c] = pk[c] == 3 ? v.c[3] : r.c[pk[c]];
					in[c] = v.c[pk[c]];
					for (int i = 0; i < n; i++)
						badpx[i] |= finite_(in[c][i]) > finite_(res[c][i]); /* finite in, not out */
				}
			}
			interleave(d, oc, res, n);
			for (int i = 0; i < n; i++)
				bad += badpx[i];
		}
	f->bad[worker] += bad;
	return 0;
}

/* The planes of a frame: see struct frame. */
static void frame_planes(struct frame *f, int in_ch, int gray_kernel)
{
	f->out_ch = !gray_kernel && in_ch <= 2 ? in_ch + 2 : in_ch;
	if (f->op == BLOOM_OP_BLOOM) {
		f->nsrc = in_ch <= 2 ? 1 : 3;
		f->nout = f->out_ch <= 2 ? 1 : 3;
	} else {
		f->nsrc = in_ch;
		f->nout = f->out_ch;
	}
	for (int o = 0; o < 4; o++) {
		/* a gray image's colour outputs all multiply its one plane; its alpha is plane 1 */
		f->src[o] = f->nsrc == f->nout ? o : f->nsrc == 1 ? 0 : (o == 3 ? 1 : 0);
		f->kc[o] = gray_kernel ? 0 : (f->nout == 2 && o == 1) || o == 3 ? 3 : o;
	}
}

/* q's forward r2c of its nsrc planes, or its inverse c2r of its nout planes: one batched
 * transform, or one plane's plan on each (q->per_plane). */
static void plan_run(const struct cpu_plan *q, int inverse)
{
	size_t rdist = (size_t)q->pw * q->ph, cdist = ((size_t)q->pw / 2 + 1) * q->ph;
	int planes = !q->per_plane ? 1 : inverse ? q->nout : q->nsrc;
	for (int s = 0; s < planes; s++)
		if (inverse)
			fftwf_execute_dft_c2r(q->inv, q->spec + s * cdist, q->real + s * rdist);
		else
			fftwf_execute_dft_r2c(q->fwd, q->real + s * rdist, q->spec + s * cdist);
}

/* Bytes of one pass at padded pw x ph for an image of in_ch channels: the most planes a frame
 * of them transforms (a colour kernel's), their real and complex buffers, and a colour kernel's
 * spectrum. -1 on overflow. */
static int pass_bytes(int in_ch, int pw, int ph, size_t *bytes)
{
	static const struct frame zero;
	struct frame f = zero;
	f.op = BLOOM_OP_CONVOLVE; /* convolve's planes are at least the bloom's */
	frame_planes(&f, in_ch, 0);
	int planes = f.nsrc > f.nout ? f.nsrc : f.nout;
	size_t rb, sb, kr, ks, a;
	if (cpu_plan_bytes(pw, ph, planes, &rb, &sb) || cpu_plan_bytes(pw, ph, 4, &kr, &ks) ||
	    checked_add_size(rb, sb, &a) || checked_add_size(a, ks, bytes))
		return -1;
	return 0;
}

/* A pass's memory bound: its bytes for in_ch channels and the frame memory. */
struct pass_fit {
	int in_ch;
	size_t budget;
};

static int pass_fits(const void *ctx, int pw, int ph)
{
	const struct pass_fit *f = ctx;
	size_t need;
	return !f->budget || (!pass_bytes(f->in_ch, pw, ph, &need) && need <= f->budget);
}

/* The padded size of a w x h frame's transforms in tiles of tw x th output pixels (the whole
 * frame where tw >= w and th >= h) with a kw x kh kernel centred on cx, cy: fft_conv_size_fit
 * of the tiles' spans under opts.frame_bytes, as the GPU engine pads (bloom_tile_padded). *sw,
 * *sh: the spans. */
static void padded(const struct cpu_engine *e, int in_ch, int w, int h, int tw, int th, int kw,
                   int kh, int cx, int cy, int *sw, int *sh, int *pw, int *ph)
{
	struct pass_fit f = {in_ch, e->opts.frame_bytes};
	*sw = fft_tile_span(w, tw, kw, cx), *sh = fft_tile_span(h, th, kh, cy);
	fft_conv_size_fit(h, *sw, *sh, pass_fits, &f, pw, ph);
}

/* The output tile size of a w x h frame with a kw x kh kernel: the whole frame where its pass
 * fits opts.frame_bytes (or there is no bound), else tiles halved along the longer padded side
 * until one fits, at least CPU_TILE_MIN pixels a side (the frame's side where smaller), then
 * evened out over the tiles a side needs. 0, or CPU_E_TOO_LARGE when no tile fits. */
static int tile_size(const struct cpu_engine *e, int in_ch, int w, int h, int kw, int kh,
                     int cx, int cy, int *tw, int *th, char err[CPU_ERR_LEN])
{
	size_t budget = e->opts.frame_bytes, need = 0;
	*tw = w, *th = h;
	if (!budget)
		return 0;
	int minw = w < CPU_TILE_MIN ? w : CPU_TILE_MIN, minh = h < CPU_TILE_MIN ? h : CPU_TILE_MIN;
	for (;;) {
		int sw, sh, pw, ph;
		padded(e, in_ch, w, h, *tw, *th, kw, kh, cx, cy, &sw, &sh, &pw, &ph);
		if (!pass_bytes(in_ch, pw, ph, &need) && need <= budget)
			break;
		int *side = NULL, lo = 0;
		if (pw >= ph && *tw > minw)
			side = tw, lo = minw;
		else if (*th > minh)
			side = th, lo = minh;
		else if (*tw > minw)
			side = tw, lo = minw;
		if (!side) {
			snprintf(err, CPU_ERR_LEN, "a %dx%d kernel leaves no tile of %dx%d pixels or more "
			         "within the frame memory of %zu bytes (%zu needed)", kw, kh, minw, minh,
			         budget, need);
			return CPU_E_TOO_LARGE;
		}
		*side = (*side + 1) / 2 > lo ? (*side + 1) / 2 : lo;
	}
	int nx = (w + *tw - 1) / *tw, ny = (h + *th - 1) / *th;
	*tw = (w + nx - 1) / nx, *th = (h + ny - 1) / ny;
	return 0;
}

static int rows_each(const struct frame *f, int rows, par_item_fn fn, void *ctx)
{
	return par_each(((size_t)rows + CPU_ROWS - 1) / CPU_ROWS, f->threads, fn, ctx, NULL);
}

int cpu_bloom_run(struct cpu_engine *e, int op, const struct image *in,
                  const struct image *kernel, const uint64_t digest[2],
                  const struct bloom_params *p, struct image *out, struct cpu_stats *st,
                  char err[CPU_ERR_LEN])
{
	struct cpu_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	memset(out, 0, sizeof *out);
	double t0 = clock_ms();
	if (op != BLOOM_OP_BLOOM && op != BLOOM_OP_CONVOLVE) {
		snprintf(err, CPU_ERR_LEN, "unknown operation %d", op);
		return CPU_E_ARG;
	}
	if (!in || !in->pixels || in->width < 1 || in->height < 1 || in->channels < 1 ||
	    in->channels > 4) {
		snprintf(err, CPU_ERR_LEN, "empty or malformed image");
		return CPU_E_ARG;
	}
	struct cpu_kinfo ki;
	memset(&ki, 0, sizeof ki);
	const uint64_t *dg = digest;
	if (kernel) {
		ki.img = kernel;
	} else {
		int rc = cpu_preset_image(e, &p->preset, &ki.img, &dg, err);
		if (rc)
			return rc;
	}
	if (!ki.img->pixels || ki.img->width < 1 || ki.img->height < 1 || ki.img->channels < 1 ||
	    ki.img->channels > 4) {
		snprintf(err, CPU_ERR_LEN, "kernel: empty or malformed image");
		return CPU_E_ARG;
	}
	if (dg && (dg[0] || dg[1]))
		ki.digest[0] = dg[0], ki.digest[1] = dg[1];
	else
		image_digest(ki.img, ki.digest);
	int w = in->width, h = in->height;
	if (kshape_geometry(p, ki.img->width, ki.img->height, w, h, &ki.kw, &ki.kh, &ki.cx, &ki.cy,
	                    err, CPU_ERR_LEN))
		return CPU_E_ARG;
	/* every transform spans the kernel at least (fft_conv_span, fft_tile_span); refusing a
	 * longer kernel first keeps the tiles' spans (t + k - 1) from overflowing */
	if (ki.kw > CPU_MAX_N || ki.kh > CPU_MAX_N) {
		snprintf(err, CPU_ERR_LEN, "%dx%d with a %dx%d kernel: the padded size exceeds %d", w, h,
		         ki.kw, ki.kh, CPU_MAX_N);
		return CPU_E_TOO_LARGE;
	}
	int tw, th;
	int rc = tile_size(e, in->channels, w, h, ki.kw, ki.kh, ki.cx, ki.cy, &tw, &th, err);
	if (rc)
		return rc;
	/* the size the transforms run at, refused past the longest transform (fft_conv_size gives 0
	 * for a span past FFT_MAX_N) */
	int sw, sh, pw, ph;
	padded(e, in->channels, w, h, tw, th, ki.kw, ki.kh, ki.cx, ki.cy, &sw, &sh, &pw, &ph);
	if (pw < 1 || ph < 1 || pw > CPU_MAX_N || ph > CPU_MAX_N) {
		snprintf(err, CPU_ERR_LEN, "%dx%d with a %dx%d kernel: the padded size exceeds %d (its "
		         "transforms span %dx%d)", w, h, ki.kw, ki.kh, CPU_MAX_N, sw, sh);
		return CPU_E_TOO_LARGE;
	}
	struct cpu_kentry *k;
	int threads = cpu_engine_frame_threads(e, w, h);
	rc = cpu_kernel_spectrum(e, &ki, pw, ph, threads, p, &k, &st->kernel_cached, err);
	free(ki.rgbl);
	if (rc)
		return rc;
	struct frame *f = calloc(1, sizeof *f);
	if (!f) {
		snprintf(err, CPU_ERR_LEN, "out of host memory");
		return CPU_E_NOMEM;
	}
	*f = (struct frame){.e = e, .in = in, .p = p, .op = op, .w = w, .h = h, .k = k, .out = out,
	                    .threads = threads};
	frame_planes(f, in->channels, k->gray);
	rc = plan_get(e, pw, ph, f->nsrc, f->nout, threads, &f->q, err);
	if (!rc && image_alloc(out, w, h, f->out_ch)) {
		snprintf(err, CPU_ERR_LEN, "out of host memory for the %dx%d result", w, h);
		rc = CPU_E_NOMEM;
	}
	if (rc) {
		free(f);
		return rc;
	}
	double t1 = clock_ms();
	st->setup_ms = t1 - t0;
	/* overlap-save: each tile's outputs from the input its taps reach (an output pixel x reads
	 * x - (kw - 1 - cx) .. x + cx), clipped to the image, at the tile's padded size: the wrapped
	 * taps of a clipped border land in the zero padding, as in the untiled run */
	int nx = (w + tw - 1) / tw, ny = (h + th - 1) / th;
	int left = ki.kw - 1 - ki.cx, right = ki.cx, top = ki.kh - 1 - ki.cy, bottom = ki.cy;
	for (int ty = 0; ty < ny; ty++)
		for (int tx = 0; tx < nx; tx++) {
			f->ox = tx * tw, f->oy = ty * th;
			f->ow = w - f->ox < tw ? w - f->ox : tw;
			f->oh = h - f->oy < th ? h - f->oy : th;
			f->ix = f->ox - left > 0 ? f->ox - left : 0;
			f->iy = f->oy - top > 0 ? f->oy - top : 0;
			f->iw = (f->ox + f->ow + right < w ? f->ox + f->ow + right : w) - f->ix;
			f->ih = (f->oy + f->oh + bottom < h ? f->oy + f->oh + bottom : h) - f->iy;
			double a = clock_ms();
			rows_each(f, f->q->ph, pack_item, f);
			double b = clock_ms();
			plan_run(f->q, 0);
			double c = clock_ms();
			rows_each(f, f->q->ph, multiply_item, f);
			double d = clock_ms();
			plan_run(f->q, 1);
			double g = clock_ms();
			rows_each(f, f->oh, composite_item, f);
			double z = clock_ms();
			st->pack_ms += b - a, st->forward_ms += c - b, st->multiply_ms += d - c;
			st->inverse_ms += g - d, st->composite_ms += z - g;
		}
	unsigned long long bad = 0;
	for (int i = 0; i < PAR_EACH_MAX; i++)
		bad += f->bad[i];
	st->padded_w = pw, st->padded_h = ph, st->tiles_x = nx, st->tiles_y = ny;
	st->gray_kernel = k->gray, st->planes = f->nsrc;
	free(f);
	if (bad) {
		snprintf(err, CPU_ERR_LEN, "%llu samples of the result are not finite: float32 "
		         "overflowed in the convolution (an image or kernel value near 3.4e38, or "
		         "infinite)", bad);
		image_free(out);
		return CPU_E_ARG;
	}
	st->wall_ms = clock_ms() - t0;
	return 0;
}
