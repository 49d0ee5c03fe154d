/* The GLES FFT engine: builds the programs and buffers of a plan (fft_plan), then dispatches. */
#include "gles/fft.h"

#include <GLES3/gl31.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/fft_cpu.h"
#include "gles/gpu_timer.h"

#define B_DATA 0
#define B_DST 2
#define B_WORK 3
#define B_CHIRP 4
#define B_FILTER 5

struct prog {
	GLuint id;
	GLint u_offset, u_sig_stride, u_elem_stride, u_count;
};

/* The parameter struct that keys every FFT program; memset to 0 before filling. */
struct fft_key {
	int kind; /* 1 shared, 2 global pass, 3 bluestein, 4 blocked sweep */
	int n, components, inverse, half, norm_forward;
	int threads;
	int nsig, nthr, split;
	int pass, radix, ns, last, sig_fast;
	int mode, bn;
	int sweep_len, sweep_count, inplace;
	int bank_pad;  /* the plan's padding period */
	unsigned pads; /* bit i: the exchange after pass i is padded */
};

struct fft_axis {
	struct program_cache *pc;                /* holds the axis's programs (program_hold) */
	struct fft_plan plan;
	struct fft_opts opts;
	int n, adjacent, max_count;
	size_t capacity;
	const struct egl_info *info;
	struct gles_log log;
	struct prog shared[2];                   /* [inverse] */
	struct prog pass[2][FFT_MAX_PASSES];     /* global technique, [inverse][pass] */
	struct prog sweep[2][FFT_MAX_PASSES];    /* blocked technique, [inverse][sweep] */
	GLuint scratch;                          /* global and blocked techniques' ping-pong buffer */
	/* Bluestein */
	struct fft_axis *inner;                  /* native length-m transforms on the work rows */
	struct prog bl[2][3];                    /* [inverse][mode-1] */
	GLuint work, chirp, filter[2];
};

struct fft {
	int width, height, axes;
	struct fft_axis *rows, *cols;
};

const char *fft_strerror(int code)
{
	switch (code) {
	case FFT_OK: return "ok";
	case FFT_E_PLAN: return "no FFT plan";
	case FFT_E_PROGRAM: return "FFT program failed to build";
	case FFT_E_GL: return "GL error";
	case FFT_E_NOMEM: return "out of memory";
	case FFT_E_ARG: return "bad FFT argument";
	case FFT_E_LIMIT: return "exceeds a device limit";
	}
	return "unknown error";
}

/* ---- text helpers for the #define preamble ---- */
struct sb {
	char *s;
	size_t len, cap;
	int oom;
};

static void sbf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sbf(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		size_t room = b->cap - b->len;
		va_start(ap, fmt);
		int n = b->s ? vsnprintf(b->s + b->len, room, fmt, ap) : -1;
		va_end(ap);
		if (n >= 0 && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (n >= 0 && cap - b->len <= (size_t)n)
			cap *= 2;
		char *ns = realloc(b->s, cap);
		if (!ns) {
			b->oom = 1;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
}

/* Common defines: element type, storage, direction, odd butterfly tables. */
static void common_defines(struct sb *b, int components, int half, int inverse, int conv)
{
	sbf(b, "#define COMPONENTS %d\n#define STORAGE_F16 %d\n#define INVERSE %d\n",
	    components, half, inverse);
	sbf(b, "#define CONV %d\n", conv);
	static const int primes[] = {3, 5, 7, 11, 13};
	for (int i = 0; i < 5; i++) {
		int p = primes[i], h = (p - 1) / 2;
		for (int t = 0; t < 2; t++) {
			sbf(b, "const float %s%d[%d] = float[](", t ? "SIN" : "COS", p, h * h);
			for (int k = 1; k <= h; k++)
				for (int r = 1; r <= h; r++) {
					double a = 2 * M_PI * (double)((r * k) % p) / p;
					sbf(b, "%s%.9g", (k == 1 && r == 1) ? "" : ", ", t ? sin(a) : cos(a));
				}
			sbf(b, ");\n");
		}
	}
}

/* Scale applied where a transform of length n ends: 1/n on the scaled direction. */
static double end_scale(const struct fft_opts *o, int inverse, int n)
{
	return (inverse != 0) != (o->norm_forward != 0) ? 1.0 / n : 1.0;
}

static const char *scale_text(char *buf, size_t len, double scale)
{
	snprintf(buf, len, "%.9e", scale);
	return buf;
}

/* The program `name` for key with the defines built in *defs, which it frees (FFT_E_NOMEM
 * where building them ran out of memory). */
static int get_prog(struct program_cache *pc, const char *name, const struct fft_key *key,
                    struct sb *defs, struct prog *p, char err[FFT_ERR_LEN])
{
	char perr[PROGRAM_ERR_LEN];
	unsigned id;
	if (defs->oom) {
		free(defs->s);
		return FFT_E_NOMEM;
	}
	int rc = program_get(pc, name, key, sizeof *key, defs->s, &id, perr);
	free(defs->s);
	if (rc) {
		snprintf(err, FFT_ERR_LEN, "%s", perr);
		return FFT_E_PROGRAM;
	}
	program_hold(pc, id); /* dropped by the axis's or fused plan's destroy */
	p->id = id;
	p->u_offset = glGetUniformLocation(id, "u_offset");
	p->u_sig_stride = glGetUniformLocation(id, "u_sig_stride");
	p->u_elem_stride = glGetUniformLocation(id, "u_elem_stride");
	p->u_count = glGetUniformLocation(id, "u_count");
	return 0;
}

/* The pass calls of fft_shared (FFT_SEQUENCE): the first pass reads global memory, the last
 * writes it, and between passes the values go through shared memory (in two rounds, .xy then
 * .zw, when SPLIT; at the padded index where the plan pads). With conv the forward passes are
 * followed by the inverse ones, with the spectrum multiply while the forward result sits in
 * shared memory in natural order (never padded). */
static void gen_sequence(struct sb *b, const struct fft_plan *p, int conv)
{
	int n = p->npasses, total = conv ? 2 * n : n;
	sbf(b, "#define FFT_SEQUENCE ");
	for (int i = 0; i < total; i++) {
		const struct fft_pass *cur = &p->pass[i % n];
		if (i == 0) {
			sbf(b, "load_global_r%d(); ", cur->radix);
		} else {
			const struct fft_pass *prev = &p->pass[(i - 1) % n];
			int mult = conv && i == n, pad = prev->pad && !mult;
			for (int part = p->split ? 1 : 0; part <= (p->split ? 2 : 0); part++) {
				sbf(b, "store_shared_r%d(%du, %d, %d); barrier(); ", prev->radix, prev->ns, part,
				    pad);
				if (mult)
					sbf(b, "conv_multiply(%d); barrier(); ", part);
				sbf(b, "load_shared_r%d(%d, %d); barrier(); ", cur->radix, part, pad);
			}
			if (mult)
				sbf(b, "SIGN = 1.0; ");
		}
		if (total == 1)
			sbf(b, "barrier(); ");
		sbf(b, "compute_r%d(%du); ", cur->radix, cur->ns);
	}
	const struct fft_pass *last = &p->pass[(total - 1) % n];
	sbf(b, "store_global_r%d(%du);\n", last->radix, last->ns);
}

/* The fft_shared program for plan p: a transform (conv 0) in one direction, or the fused
 * forward + multiply + inverse (conv 1; kgray: the kernel spectrum is a real kernel's, vec2). */
static int shared_program(struct program_cache *pc, const struct fft_plan *p,
                          const struct fft_opts *o, int inverse, int conv, int kgray,
                          double scale, struct prog *out, char err[FFT_ERR_LEN])
{
	struct fft_key key;
	memset(&key, 0, sizeof key);
	key.kind = 1;
	key.n = p->m;
	key.components = o->components;
	key.inverse = inverse;
	key.nsig = p->signals;
	key.nthr = p->threads;
	key.split = p->split;
	key.threads = o->threads;
	key.half = o->half;
	key.norm_forward = o->norm_forward;
	key.mode = conv ? 1 + kgray : 0;
	key.bank_pad = p->bank_pad;
	for (int i = 0; i < p->npasses; i++)
		key.pads |= p->pass[i].pad ? 1u << i : 0;
	struct sb b = {0};
	common_defines(&b, key.components, key.half, inverse, conv);
	int vregs = 1, used[FFT_MAX_RADIX + 1] = {0};
	for (int i = 0; i < p->npasses; i++) {
		int r = p->pass[i].radix;
		int per = (p->m / r + p->threads - 1) / p->threads;
		if (per * r > vregs)
			vregs = per * r;
		used[r] = 1;
	}
	char sc[32];
	int elem = p->split ? 8 : o->components * 4;
	sbf(&b, "#define N %d\n#define NSIG %d\n#define NTHR %d\n#define VREGS %d\n#define SPLIT %d\n"
	        "#define SCALE %s\n#define KGRAY %d\n",
	    p->m, p->signals, p->threads, vregs, p->split, scale_text(sc, sizeof sc, scale), kgray);
	sbf(&b, "#define S_ELEMS %d\n#define SPAD_LOG %d\n", p->shared_bytes / elem, p->bank_pad);
	for (int r = 2; r <= FFT_MAX_RADIX; r++)
		sbf(&b, "#define USE_R%d %d\n", r, used[r]);
	gen_sequence(&b, p, conv);
	return get_prog(pc, "fft_common+fft_shared", &key, &b, out, err);
}

static int build_shared(struct fft_axis *a, struct program_cache *pc, int inverse,
                        char err[FFT_ERR_LEN])
{
	return shared_program(pc, &a->plan, &a->opts, inverse, 0, 0,
	                      end_scale(&a->opts, inverse, a->plan.m), &a->shared[inverse], err);
}

static int build_global(struct fft_axis *a, struct program_cache *pc, int inverse,
                        char err[FFT_ERR_LEN])
{
	const struct fft_plan *p = &a->plan;
	for (int i = 0; i < p->npasses; i++) {
		struct fft_key key;
		memset(&key, 0, sizeof key);
		key.kind = 2;
		key.n = p->m;
		key.components = a->opts.components;
		key.inverse = inverse;
		key.pass = i;
		key.radix = p->pass[i].radix;
		key.ns = p->pass[i].ns;
		key.last = i == p->npasses - 1;
		key.sig_fast = a->adjacent;
		key.half = a->opts.half;
		key.norm_forward = a->opts.norm_forward;
		struct sb b = {0};
		common_defines(&b, key.components, key.half, inverse, 0);
		char sc[32];
		double scale = key.last ? end_scale(&a->opts, inverse, p->m) : 1.0;
		sbf(&b, "#define N %d\n#define RADIX %d\n#define NS %d\n"
		        "#define SCALE %s\n#define SIG_FAST %d\n#define BFLY bfly%d\n",
		    p->m, key.radix, key.ns, scale_text(sc, sizeof sc, scale), key.sig_fast, key.radix);
		int rc = get_prog(pc, "fft_common+fft_global", &key, &b, &a->pass[inverse][i], err);
		if (rc)
			return rc;
	}
	return 0;
}

/* The pass calls of one fft_blocked sweep (FFT_SEQUENCE): as gen_sequence, with the passes'
 * local strides (within the sweep). */
static void gen_sweep_sequence(struct sb *b, const struct fft_plan *p, const struct fft_sweep *sw)
{
	sbf(b, "#define FFT_SEQUENCE ");
	int ns = 1;
	for (int i = sw->first; i < sw->first + sw->count; i++) {
		const struct fft_pass *cur = &p->pass[i];
		if (i == sw->first) {
			sbf(b, "load_global_r%d(); ", cur->radix);
		} else {
			const struct fft_pass *prev = &p->pass[i - 1];
			sbf(b, "store_shared_r%d(%du); barrier(); load_shared_r%d(); barrier(); ",
			    prev->radix, ns / prev->radix, cur->radix);
		}
		if (sw->count == 1)
			sbf(b, "barrier(); "); /* in place: every load before any store */
		sbf(b, "compute_r%d(%du); ", cur->radix, ns);
		ns *= cur->radix;
	}
	const struct fft_pass *last = &p->pass[sw->first + sw->count - 1];
	sbf(b, "store_global_r%d(%du);\n", last->radix, ns / last->radix);
}

static int build_blocked(struct fft_axis *a, struct program_cache *pc, int inverse,
                         char err[FFT_ERR_LEN])
{
	const struct fft_plan *p = &a->plan;
	for (int i = 0; i < p->nsweeps; i++) {
		const struct fft_sweep *sw = &p->sweep[i];
		struct fft_key key;
		memset(&key, 0, sizeof key);
		key.kind = 4;
		key.n = p->m;
		key.components = a->opts.components;
		key.inverse = inverse;
		key.half = a->opts.half;
		key.norm_forward = a->opts.norm_forward;
		key.nsig = p->signals;
		key.nthr = sw->threads;
		key.pass = sw->first;
		key.sweep_count = sw->count;
		key.sweep_len = sw->len;
		key.ns = sw->stride;
		key.last = i == p->nsweeps - 1;
		key.inplace = p->nsweeps == 1;
		struct sb b = {0};
		common_defines(&b, key.components, key.half, inverse, 0);
		char sc[32];
		double scale = key.last ? end_scale(&a->opts, inverse, p->m) : 1.0;
		sbf(&b, "#define N %d\n#define L %d\n#define S %d\n#define NSIG %d\n#define NTHR %d\n"
		        "#define VREGS %d\n#define SCALE %s\n#define INPLACE %d\n",
		    p->m, sw->len, sw->stride, p->signals, sw->threads, sw->vregs,
		    scale_text(sc, sizeof sc, scale), key.inplace);
		int used[FFT_MAX_RADIX + 1] = {0};
		for (int k = sw->first; k < sw->first + sw->count; k++)
			used[p->pass[k].radix] = 1;
		for (int r = 2; r <= FFT_MAX_RADIX; r++)
			sbf(&b, "#define USE_R%d %d\n", r, used[r]);
		gen_sweep_sequence(&b, p, sw);
		int rc = get_prog(pc, "fft_common+fft_blocked", &key, &b, &a->sweep[inverse][i], err);
		if (rc)
			return rc;
	}
	return 0;
}

static int build_bluestein(struct fft_axis *a, struct program_cache *pc, int inverse,
                           char err[FFT_ERR_LEN])
{
	const struct fft_plan *p = &a->plan;
	for (int mode = 1; mode <= 3; mode++) {
		struct fft_key key;
		memset(&key, 0, sizeof key);
		key.kind = 3;
		key.n = p->n;
		key.bn = p->m;
		key.components = a->opts.components;
		key.inverse = inverse;
		key.mode = mode;
		key.half = a->opts.half;
		key.norm_forward = a->opts.norm_forward;
		struct sb b = {0};
		common_defines(&b, key.components, key.half, inverse, 0);
		char sc[32];
		sbf(&b, "#define N %d\n#define M %d\n#define MODE %d\n#define SCALE %s\n", p->n, p->m,
		    mode, scale_text(sc, sizeof sc, end_scale(&a->opts, inverse, p->n)));
		int rc = get_prog(pc, "fft_common+bluestein", &key, &b, &a->bl[inverse][mode - 1], err);
		if (rc)
			return rc;
	}
	return 0;
}

/* A storage buffer of `bytes` bytes, optionally filled from data; 0 on failure. */
static GLuint make_buffer(size_t bytes, const void *data, const struct gles_log *log)
{
	GLuint b = 0;
	glGenBuffers(1, &b);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(bytes ? bytes : 16), data, GL_STATIC_DRAW);
	if (gl_check(log, "fft buffer")) {
		glDeleteBuffers(1, &b);
		return 0;
	}
	return b;
}

static GLuint upload_f32(const double *v, size_t count, const struct gles_log *log)
{
	float *f = malloc((count ? count : 1) * sizeof *f);
	if (!f)
		return 0;
	for (size_t i = 0; i < count; i++)
		f[i] = (float)v[i];
	GLuint b = make_buffer(count * sizeof *f, f, log);
	free(f);
	return b;
}

/* Bluestein tables: chirp c_n = exp(-i*pi*n^2/N); filter spectra FFT_M(b) for both directions
 * with b_m = conj(c_m) (forward) or c_m (inverse) at m and M-m. */
static int make_bluestein_tables(struct fft_axis *a)
{
	int n = a->plan.n, m = a->plan.m;
	double *c = malloc((size_t)n * 2 * sizeof *c), *bb = calloc((size_t)m * 2, sizeof *bb),
	       *spec = malloc((size_t)m * 2 * sizeof *spec);
	int rc = FFT_E_NOMEM;
	if (!c || !bb || !spec)
		goto out;
	for (long long i = 0; i < n; i++) {
		long long e = i * i % (2LL * n);
		double ang = -M_PI * (double)e / n;
		c[2 * i] = cos(ang);
		c[2 * i + 1] = sin(ang);
	}
	a->chirp = upload_f32(c, (size_t)n * 2, &a->log);
	for (int dir = 0; dir < 2; dir++) {
		memset(bb, 0, (size_t)m * 2 * sizeof *bb);
		for (int i = 0; i < n; i++) {
			double re = c[2 * i], im = dir ? c[2 * i + 1] : -c[2 * i + 1];
			bb[2 * i] = re, bb[2 * i + 1] = im;
			if (i)
				bb[2 * (m - i)] = re, bb[2 * (m - i) + 1] = im;
		}
		if (fft_cpu(bb, 1, spec, m, -1))
			goto out;
		a->filter[dir] = upload_f32(spec, (size_t)m * 2, &a->log);
	}
	rc = a->chirp && a->filter[0] && a->filter[1] ? 0 : FFT_E_GL;
out:
	free(c), free(bb), free(spec);
	return rc;
}

static int create_axis(struct program_cache *pc, const struct egl_info *info, int n,
                       int signals_adjacent, size_t capacity, int max_count,
                       const struct fft_opts *o, const struct gles_log *log,
                       struct fft_axis **out, char err[FFT_ERR_LEN]);

static unsigned long long tune_rng = 0x2545F4914F6CDD1Dull;

#define TUNE_ROUNDS 7     /* measurements per candidate; the median counts */
#define TUNE_WARM_MS 50.0 /* GPU time spent running the candidates before measuring */

/* GPU time of one forward + inverse run of axis a over `count` signals on buffer buf;
 * negative when it failed. */
static double time_axis_once(struct fft_axis *a, struct gpu_timer *t, unsigned buf, int count)
{
	size_t sig = a->adjacent ? 1 : (size_t)a->n, el = a->adjacent ? (size_t)count : 1;
	int stage = a->adjacent ? GPU_STAGE_COLS : GPU_STAGE_ROWS;
	double ms[GPU_STAGE_COUNT];
	gpu_timer_start(t);
	int rc = fft_axis_execute(a, buf, 0, sig, el, count, 0);
	rc |= fft_axis_execute(a, buf, 0, sig, el, count, 1);
	gpu_timer_mark(t, stage);
	if (rc || gpu_timer_read(t, ms))
		return -1;
	return ms[stage];
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

#define TUNE_MAX_CAND 12

/* The shapes tune measures: shared at several invocation counts, global, and for adjacent
 * signals blocked with rows of 64 (its default), 32 and 128 bytes and with half the invocations.
 * Returns the count written to cand (at most TUNE_MAX_CAND). */
static int tune_candidates(const struct egl_info *info, int n, int adjacent,
                           const struct fft_opts *o, struct fft_opts cand[TUNE_MAX_CAND])
{
	static const int threads[] = {0, 32, 64, 128, 256, 512};
	int nc = 0;
	for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++)
		if (threads[i] <= info->max_invocations) {
			cand[nc] = *o;
			cand[nc].technique = FFT_TECH_SHARED;
			cand[nc++].threads = threads[i];
		}
	cand[nc] = *o;
	cand[nc++].technique = FFT_TECH_GLOBAL;
	if (!adjacent)
		return nc;
	int selem = o->components * (o->half ? 2 : 4);
	static const int row_bytes[] = {64, 32, 128};
	for (int i = 0; i < 3; i++) {
		cand[nc] = *o;
		cand[nc].technique = FFT_TECH_BLOCKED;
		cand[nc++].signals = row_bytes[i] / selem > 1 ? row_bytes[i] / selem : 1;
	}
	struct fft_plan_opts po = {.technique = FFT_TECH_BLOCKED, .components = o->components,
	                           .shared_limit = info->max_shared_memory,
	                           .max_invocations = info->max_invocations, .signals_adjacent = 1,
	                           .half = o->half, .pad_from = o->pad_from};
	struct fft_plan p;
	if (!fft_plan_make(n, &po, &p) && p.blocked && p.threads > 1) {
		cand[nc] = *o;
		cand[nc].technique = FFT_TECH_BLOCKED;
		cand[nc++].threads = p.threads / 2;
	}
	return nc;
}

/* Measures the candidate shapes (tune_candidates) on random data of the real shape, and returns
 * the fastest in *best (technique, threads, signals). */
static int tune(struct program_cache *pc, const struct egl_info *info, int n, int adjacent,
                size_t capacity, int max_count, const struct fft_opts *o,
                const struct gles_log *log, struct fft_opts *best, double *best_ms)
{
	int count = max_count;
	size_t elems = adjacent ? (size_t)n * count : (size_t)count * n;
	if (elems > capacity)
		elems = capacity;
	size_t floats = elems * (size_t)o->components;
	size_t bytes = floats * (o->half ? 2 : 4);
	float *data = malloc(floats * sizeof *data);
	struct gpu_timer *t = NULL;
	if (!data || gpu_timer_create(info, &t)) {
		free(data);
		return -1;
	}
	for (size_t i = 0; i < floats; i++) {
		tune_rng ^= tune_rng << 13, tune_rng ^= tune_rng >> 7, tune_rng ^= tune_rng << 17;
		data[i] = (float)((tune_rng >> 40) * (1.0 / 16777216.0)) - 0.5f;
	}
	GLuint buf;
	glGenBuffers(1, &buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
	if (o->half) { /* the bits of random halves: exponent and sign kept sane */
		unsigned short *h = (unsigned short *)data;
		for (size_t i = 0; i < floats; i++)
			h[i] = (unsigned short)(0x3000 | ((unsigned)(data[i] * 65536.0f) & 0x83ff));
	}
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)bytes, data, GL_DYNAMIC_COPY);
	free(data);
	/* Every candidate is built first and then measured in interleaved rounds, after a warm-up:
	 * GPU clocks ramp up over tens of milliseconds of load (the H200 under GL: 2-4x), and
	 * measuring the candidates one after the other favoured whichever came last. */
	struct fft_opts cand[TUNE_MAX_CAND];
	struct fft_axis *ax[TUNE_MAX_CAND] = {NULL};
	double ms[TUNE_MAX_CAND][TUNE_ROUNDS];
	int nc = tune_candidates(info, n, adjacent, o, cand), found = 0, live = 0;
	for (int i = 0; i < nc; i++) {
		cand[i].wisdom = NULL;
		char err[FFT_ERR_LEN];
		if (create_axis(pc, info, n, adjacent, capacity, max_count, &cand[i], log, &ax[i], err))
			ax[i] = NULL;
		else
			live++;
	}
	double t_warm = 0; /* warm-up: the live candidates in turn until TUNE_WARM_MS of GPU time */
	for (int w = 0; live && t_warm < TUNE_WARM_MS && w < 1000; w++)
		for (int i = 0; i < nc; i++)
			if (ax[i]) {
				double m = time_axis_once(ax[i], t, buf, count);
				t_warm += m > 0 ? m : TUNE_WARM_MS; /* a failure ends the warm-up */
			}
	for (int r = 0; r < TUNE_ROUNDS; r++)
		for (int i = 0; i < nc; i++)
			ms[i][r] = ax[i] ? time_axis_once(ax[i], t, buf, count) : -1;
	for (int i = 0; i < nc; i++) {
		if (!ax[i])
			continue;
		qsort(ms[i], TUNE_ROUNDS, sizeof ms[i][0], cmp_double);
		double med = ms[i][0] < 0 ? -1 : ms[i][TUNE_ROUNDS / 2];
		struct fft_axis *a = ax[i];
		char shape[64] = "";
		if (a->plan.blocked)
			snprintf(shape, sizeof shape, ", %d sweeps", a->plan.nsweeps);
		gles_logf(log, GLES_LOG_DEBUG, "FFT tune n=%d vec%d %s %s: %d signals x %d invocations%s: "
		          "%.4f ms", n, o->components, adjacent ? "cols" : "rows",
		          fft_technique_name(cand[i].technique), a->plan.signals, a->plan.threads, shape,
		          med);
		if (med > 0 && (!found || med < *best_ms)) {
			*best = cand[i];
			/* the shape measured, so that the plan rebuilt from wisdom is this one */
			best->threads = cand[i].technique == FFT_TECH_GLOBAL ? 0 : cand[i].threads
			              ? cand[i].threads : a->plan.threads;
			best->signals = cand[i].technique == FFT_TECH_BLOCKED ? a->plan.signals : 0;
			*best_ms = med;
			found = 1;
		}
		fft_axis_destroy(a);
	}
	glDeleteBuffers(1, &buf);
	gpu_timer_destroy(t);
	return found ? 0 : -1;
}

int fft_axis_create(struct program_cache *pc, const struct egl_info *info, int n,
                    int signals_adjacent, size_t capacity, int max_count,
                    const struct fft_opts *o, const struct gles_log *log,
                    struct fft_axis **out, char err[FFT_ERR_LEN])
{
	struct fft_opts ro;
	if (o->technique == FFT_TECH_BLOCKED && !signals_adjacent) {
		ro = *o; /* blocked is for columns; rows (and Bluestein's work rows) take auto */
		ro.technique = FFT_TECH_AUTO;
		ro.threads = ro.signals = 0;
		o = &ro;
	}
	if (!o->wisdom || o->technique != FFT_TECH_AUTO || o->threads || o->signals ||
	    n < 2 ||
	    !fft_is_native(n))
		return create_axis(pc, info, n, signals_adjacent, capacity, max_count, o, log, out, err);
	struct fft_wisdom_key k;
	memset(&k, 0, sizeof k);
	k.n = n;
	k.components = o->components;
	k.adjacent = signals_adjacent;
	k.half = o->half;
	while ((1 << (k.count_log2 + 1)) <= max_count)
		k.count_log2++;
	struct fft_opts c = *o;
	struct fft_wisdom_choice ch;
	if (fft_wisdom_get(o->wisdom, &k, &ch) == 0) {
		c.technique = ch.technique;
		c.threads = ch.threads;
		c.signals = ch.signals;
	} else {
		double ms = 0;
		struct fft_opts best;
		if (tune(pc, info, n, signals_adjacent, capacity, max_count, o, log, &best, &ms) == 0) {
			c = best;
			ch.technique = c.technique;
			ch.threads = c.threads;
			ch.signals = c.signals;
			fft_wisdom_put(o->wisdom, &k, &ch, ms);
			gles_logf(log, GLES_LOG_INFO, "FFT wisdom: n=%d vec%d %s: %s, %d signals x %d "
			          "invocations (%.4f ms)", n, o->components, signals_adjacent ? "cols" : "rows",
			          fft_technique_name(c.technique), c.signals, c.threads, ms);
		}
	}
	c.wisdom = NULL;
	return create_axis(pc, info, n, signals_adjacent, capacity, max_count, &c, log, out, err);
}

static int create_axis(struct program_cache *pc, const struct egl_info *info, int n,
                       int signals_adjacent, size_t capacity, int max_count,
                       const struct fft_opts *o, const struct gles_log *log,
                       struct fft_axis **out, char err[FFT_ERR_LEN])
{
	*out = NULL;
	err[0] = 0;
	if (o->components != 2 && o->components != 4) {
		snprintf(err, FFT_ERR_LEN, "components must be 2 or 4, not %d", o->components);
		return FFT_E_ARG;
	}
	if (max_count < 1 || capacity < 1) {
		snprintf(err, FFT_ERR_LEN, "empty FFT batch");
		return FFT_E_ARG;
	}
	struct fft_axis *a = calloc(1, sizeof *a);
	if (!a)
		return FFT_E_NOMEM;
	a->pc = pc;
	a->opts = *o;
	a->n = n;
	a->adjacent = signals_adjacent;
	a->capacity = capacity;
	a->max_count = max_count;
	a->info = info;
	if (log)
		a->log = *log;
	struct fft_plan_opts po = {.technique = o->technique, .components = o->components,
	                           .shared_limit = info->max_shared_memory,
	                           .max_invocations = info->max_invocations,
	                           .signals_adjacent = signals_adjacent, .threads = o->threads,
	                           .signals = o->signals, .half = o->half, .pad_from = o->pad_from};
	int rc = fft_plan_make(n, &po, &a->plan);
	if (rc) {
		snprintf(err, FFT_ERR_LEN, "length %d: %s", n, fft_plan_strerror(rc));
		free(a);
		return FFT_E_PLAN;
	}
	size_t elem = (size_t)o->components * (o->half ? 2 : 4);
	if (a->plan.bluestein) {
		size_t work = (size_t)max_count * a->plan.m, welem = (size_t)o->components * 4;
		if (work * welem > (size_t)info->max_ssbo_size) {
			snprintf(err, FFT_ERR_LEN, "Bluestein work buffer of %zu bytes exceeds the "
			         "storage-buffer limit of %lld", work * welem, info->max_ssbo_size);
			rc = FFT_E_LIMIT;
			goto fail;
		}
		/* the inner transform is native (m is 7-smooth) and runs on the float32 work rows */
		struct fft_opts io = *o;
		io.half = 0;
		io.norm_forward = 0;
		io.threads = 0;
		rc = fft_axis_create(pc, info, a->plan.m, 0, work, max_count, &io, log, &a->inner, err);
		if (rc)
			goto fail;
		a->work = make_buffer(work * welem, NULL, &a->log);
		rc = a->work ? make_bluestein_tables(a) : FFT_E_GL;
		if (rc) {
			snprintf(err, FFT_ERR_LEN, "length %d: Bluestein buffers: %s", n, fft_strerror(rc));
			goto fail;
		}
		for (int inv = 0; inv < 2; inv++)
			if ((rc = build_bluestein(a, pc, inv, err)))
				goto fail;
		*out = a;
		return 0;
	}
	if (capacity * elem > (size_t)info->max_ssbo_size) {
		snprintf(err, FFT_ERR_LEN, "buffer of %zu bytes exceeds the storage-buffer limit of %lld",
		         capacity * elem, info->max_ssbo_size);
		rc = FFT_E_LIMIT;
		goto fail;
	}
	if (a->plan.npasses == 0) { /* n == 1: the identity */
		*out = a;
		return 0;
	}
	for (int inv = 0; inv < 2; inv++) {
		rc = a->plan.blocked ? build_blocked(a, pc, inv, err)
		   : a->plan.shared ? build_shared(a, pc, inv, err) : build_global(a, pc, inv, err);
		if (rc)
			goto fail;
	}
	if (!a->plan.shared && !(a->plan.blocked && a->plan.nsweeps == 1)) {
		a->scratch = make_buffer(capacity * elem, NULL, &a->log);
		if (!a->scratch) {
			snprintf(err, FFT_ERR_LEN, "length %d: scratch buffer of %zu bytes: out of GPU memory",
			         n, capacity * elem);
			rc = FFT_E_GL;
			goto fail;
		}
	}
	*out = a;
	return 0;
fail:
	fft_axis_destroy(a);
	return rc;
}

void fft_axis_destroy(struct fft_axis *a)
{
	if (!a)
		return;
	fft_axis_destroy(a->inner);
	for (int inv = 0; inv < 2; inv++) {
		const struct prog *held[2 * FFT_MAX_PASSES + 4];
		int nh = 0;
		held[nh++] = &a->shared[inv];
		for (int i = 0; i < FFT_MAX_PASSES; i++) {
			held[nh++] = &a->pass[inv][i];
			held[nh++] = &a->sweep[inv][i];
		}
		for (int i = 0; i < 3; i++)
			held[nh++] = &a->bl[inv][i];
		for (int i = 0; i < nh; i++)
			if (held[i]->id)
				program_drop(a->pc, held[i]->id);
	}
	GLuint bufs[] = {a->scratch, a->work, a->chirp, a->filter[0], a->filter[1]};
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
		if (bufs[i])
			glDeleteBuffers(1, &bufs[i]);
	free(a);
}

const struct fft_plan *fft_axis_plan(const struct fft_axis *a)
{
	return &a->plan;
}

const struct fft_axis *fft_axis_inner(const struct fft_axis *a)
{
	return a->inner;
}

static void set_uniforms(const struct prog *p, size_t offset, size_t sig_stride,
                         size_t elem_stride, int count)
{
	glUseProgram(p->id);
	glUniform1ui(p->u_offset, (GLuint)offset);
	glUniform1ui(p->u_sig_stride, (GLuint)sig_stride);
	glUniform1ui(p->u_elem_stride, (GLuint)elem_stride);
	glUniform1ui(p->u_count, (GLuint)count);
}

static void barrier(void)
{
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
}

/* Signals per dispatch where the signal index runs over work-group y. */
#define MAX_Y 65535

/* Copies the region the signals occupy from buf to the scratch buffer (same offsets), so that
 * an odd count of ping-pong dispatches ends in buf. */
static void copy_to_scratch(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                            size_t elem_stride, int count)
{
	size_t first = offset, last = offset + (size_t)(count - 1) * sig_stride +
	                              (size_t)(a->plan.m - 1) * elem_stride + 1;
	size_t esz = (size_t)a->opts.components * (a->opts.half ? 2 : 4);
	glBindBuffer(GL_COPY_READ_BUFFER, buf);
	glBindBuffer(GL_COPY_WRITE_BUFFER, a->scratch);
	glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)(first * esz),
	                    (GLintptr)(first * esz), (GLsizeiptr)((last - first) * esz));
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
}

/* Blocked technique: a dispatch per sweep, ping-pong between buf and the scratch buffer so that
 * the last lands in buf (one sweep runs in place). A sweep's groups are (column group, set g),
 * the column group fastest, laid over x and y. */
static int run_blocked(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                       size_t elem_stride, int count, int inverse)
{
	const struct fft_plan *p = &a->plan;
	GLuint src = buf, dst = p->nsweeps == 1 ? buf : a->scratch;
	if (p->nsweeps > 1 && p->nsweeps % 2) {
		copy_to_scratch(a, buf, offset, sig_stride, elem_stride, count);
		src = a->scratch;
		dst = buf;
	}
	unsigned long long cgroups = (unsigned long long)(count + p->signals - 1) / p->signals;
	GLuint maxx = (GLuint)a->info->max_group_count[0];
	for (int i = 0; i < p->nsweeps; i++) {
		const struct prog *pr = &a->sweep[inverse][i];
		unsigned long long total = cgroups * (unsigned long long)(p->m / p->sweep[i].len);
		GLuint gx = total < maxx ? (GLuint)total : maxx;
		unsigned long long gy = (total + gx - 1) / gx;
		if (gy > (unsigned long long)a->info->max_group_count[1])
			return FFT_E_LIMIT;
		set_uniforms(pr, offset, sig_stride, elem_stride, count);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_DATA, src);
		if (dst != src)
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_DST, dst);
		glDispatchCompute(gx, (GLuint)gy, 1);
		barrier();
		GLuint t = src;
		src = dst;
		dst = t;
	}
	return 0;
}

static int run_native(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                      size_t elem_stride, int count, int inverse)
{
	const struct fft_plan *p = &a->plan;
	if (p->npasses == 0)
		return 0;
	if (p->shared) {
		const struct prog *pr = &a->shared[inverse];
		set_uniforms(pr, offset, sig_stride, elem_stride, count);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_DATA, buf);
		GLuint groups = (GLuint)((count + p->signals - 1) / p->signals);
		GLuint gx = groups, gy = 1, maxx = (GLuint)a->info->max_group_count[0];
		if (gx > maxx) {
			gx = maxx;
			gy = (groups + maxx - 1) / maxx;
		}
		glDispatchCompute(gx, gy, 1);
		barrier();
		return 0;
	}
	if (p->blocked)
		return run_blocked(a, buf, offset, sig_stride, elem_stride, count, inverse);
	/* global technique: ping-pong so that the last pass lands in buf */
	GLuint src = buf, dst = a->scratch;
	if (p->npasses % 2) {
		copy_to_scratch(a, buf, offset, sig_stride, elem_stride, count);
		src = a->scratch;
		dst = buf;
	}
	for (int i = 0; i < p->npasses; i++) {
		const struct prog *pr = &a->pass[inverse][i];
		GLuint nb = (GLuint)(p->m / p->pass[i].radix);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_DATA, src);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_DST, dst);
		glUseProgram(pr->id);
		glUniform1ui(pr->u_sig_stride, (GLuint)sig_stride);
		glUniform1ui(pr->u_elem_stride, (GLuint)elem_stride);
		for (int s0 = 0; s0 < count; s0 += MAX_Y) {
			int c = count - s0 < MAX_Y ? count - s0 : MAX_Y;
			glUniform1ui(pr->u_offset, (GLuint)(offset + (size_t)s0 * sig_stride));
			glUniform1ui(pr->u_count, (GLuint)c);
			if (a->adjacent)
				glDispatchCompute((GLuint)(c + 63) / 64, nb, 1);
			else
				glDispatchCompute((nb + 63) / 64, (GLuint)c, 1);
		}
		barrier();
		GLuint t = src;
		src = dst;
		dst = t;
	}
	return 0;
}

static int run_bluestein(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                         size_t elem_stride, int count, int inverse)
{
	const struct fft_plan *p = &a->plan;
	for (int s0 = 0; s0 < count; s0 += a->max_count) {
		int c = count - s0 < a->max_count ? count - s0 : a->max_count;
		size_t off = offset + (size_t)s0 * sig_stride;
		/* work rows are indexed by the signal within one dispatch (at most MAX_Y) */
		int step = c < MAX_Y ? c : MAX_Y;
		for (int y0 = 0; y0 < c; y0 += step) {
			int cy = c - y0 < step ? c - y0 : step;
			size_t o2 = off + (size_t)y0 * sig_stride;
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_DATA, buf);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_WORK, a->work);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_CHIRP, a->chirp);
			/* 1: chirp the input into the zero-padded work rows; 2: forward, times the
			 * filter spectrum, inverse; 3: chirp again into place */
			set_uniforms(&a->bl[inverse][0], o2, sig_stride, elem_stride, cy);
			glDispatchCompute((GLuint)(p->m + 63) / 64, (GLuint)cy, 1);
			barrier();
			run_native(a->inner, a->work, 0, (size_t)p->m, 1, cy, 0);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_WORK, a->work);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_FILTER, a->filter[inverse]);
			set_uniforms(&a->bl[inverse][1], 0, 0, 0, cy);
			glDispatchCompute((GLuint)(p->m + 63) / 64, (GLuint)cy, 1);
			barrier();
			run_native(a->inner, a->work, 0, (size_t)p->m, 1, cy, 1);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_DATA, buf);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_WORK, a->work);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_CHIRP, a->chirp);
			set_uniforms(&a->bl[inverse][2], o2, sig_stride, elem_stride, cy);
			glDispatchCompute((GLuint)(p->n + 63) / 64, (GLuint)cy, 1);
			barrier();
		}
	}
	return 0;
}

int fft_axis_execute(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                     size_t elem_stride, int count, int inverse)
{
	if (count <= 0)
		return 0;
	inverse = inverse ? 1 : 0;
	int rc = a->plan.bluestein
	       ? run_bluestein(a, buf, offset, sig_stride, elem_stride, count, inverse)
	       : run_native(a, buf, offset, sig_stride, elem_stride, count, inverse);
	if (!rc && gl_check(&a->log, "fft execute"))
		rc = FFT_E_GL;
	return rc;
}

int fft_create(struct program_cache *pc, const struct egl_info *info, int width, int height,
               int axes, const struct fft_opts *o, const struct gles_log *log,
               struct fft **out, char err[FFT_ERR_LEN])
{
	*out = NULL;
	if (width < 1 || height < 1 || axes < FFT_ROWS || axes > FFT_BOTH) {
		snprintf(err, FFT_ERR_LEN, "bad FFT shape %dx%d or axes %d", width, height, axes);
		return FFT_E_ARG;
	}
	struct fft *f = calloc(1, sizeof *f);
	if (!f)
		return FFT_E_NOMEM;
	f->width = width;
	f->height = height;
	f->axes = axes;
	size_t cap = (size_t)width * height;
	int rc = 0;
	if (axes & FFT_ROWS)
		rc = fft_axis_create(pc, info, width, 0, cap, height, o, log, &f->rows, err);
	if (!rc && (axes & FFT_COLS))
		rc = fft_axis_create(pc, info, height, 1, cap, width, o, log, &f->cols, err);
	if (rc) {
		fft_destroy(f);
		return rc;
	}
	*out = f;
	return 0;
}

void fft_destroy(struct fft *f)
{
	if (!f)
		return;
	fft_axis_destroy(f->rows);
	fft_axis_destroy(f->cols);
	free(f);
}

int fft_execute(struct fft *f, unsigned buf, int inverse)
{
	int rc = 0;
	if (f->rows)
		rc = fft_axis_execute(f->rows, buf, 0, (size_t)f->width, 1, f->height, inverse);
	if (!rc && f->cols)
		rc = fft_axis_execute(f->cols, buf, 0, 1, (size_t)f->width, f->width, inverse);
	return rc;
}

struct fft_axis *fft_rows(struct fft *f)
{
	return f->rows;
}

struct fft_axis *fft_cols(struct fft *f)
{
	return f->cols;
}

struct fft_conv {
	struct program_cache *pc;
	struct fft_plan plan;
	struct prog prog;
	int count;
	const struct egl_info *info;
};

int fft_conv_create(struct program_cache *pc, const struct egl_info *info, int n, int count,
                    int gray, const struct fft_opts *o, struct fft_conv **out,
                    char err[FFT_ERR_LEN])
{
	*out = NULL;
	if (o->components != 4 || n < 2 || count < 1 || !fft_is_native(n)) {
		snprintf(err, FFT_ERR_LEN, "fused convolution: needs vec4 rows of a native length >= 2");
		return FFT_E_ARG;
	}
	struct fft_conv *c = calloc(1, sizeof *c);
	if (!c)
		return FFT_E_NOMEM;
	c->pc = pc;
	c->count = count;
	c->info = info;
	struct fft_plan_opts po = {.technique = FFT_TECH_SHARED, .components = 4,
	                           .shared_limit = info->max_shared_memory,
	                           .max_invocations = info->max_invocations, .threads = o->threads,
	                           .half = o->half, .pad_from = o->pad_from};
	int rc = fft_plan_make(n, &po, &c->plan);
	struct fft_plan *p = &c->plan;
	/* two rows a group: whole vec4 if they fit, else two vec2 rounds */
	long long limit = info->max_shared_memory;
	p->split = 2LL * n * 16 > limit;
	if (rc || (p->split && 2LL * n * 8 > limit) || 2 * p->threads > info->max_invocations) {
		snprintf(err, FFT_ERR_LEN, "fused convolution: two rows of %d do not fit shared memory", n);
		free(c);
		return FFT_E_PLAN;
	}
	p->signals = 2;
	fft_plan_exchanges(p, &po); /* the padding for two signals a group */
	rc = shared_program(pc, p, o, 0, 1, gray, 1.0 / n, &c->prog, err);
	if (rc) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void fft_conv_destroy(struct fft_conv *c)
{
	if (!c)
		return;
	if (c->prog.id)
		program_drop(c->pc, c->prog.id);
	free(c);
}

const struct fft_plan *fft_conv_plan(const struct fft_conv *c)
{
	return &c->plan;
}

int fft_conv_execute(struct fft_conv *c, unsigned buf, unsigned kernel)
{
	set_uniforms(&c->prog, 0, (size_t)c->plan.m, 1, c->count);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_DATA, buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 8, kernel);
	GLuint groups = (GLuint)(c->count / 2 + 1);
	GLuint gx = groups, gy = 1, maxx = (GLuint)c->info->max_group_count[0];
	if (gx > maxx) {
		gx = maxx;
		gy = (groups + maxx - 1) / maxx;
	}
	glDispatchCompute(gx, gy, 1);
	barrier();
	return gl_check(NULL, "fft_conv") ? FFT_E_GL : 0;
}

struct cached_fft {
	int width, height, axes;
	struct fft_opts opts; /* wisdom set to NULL: not part of the key */
	struct fft *f;
	unsigned long long last_use;
};

struct fft_cache {
	struct program_cache *pc;
	const struct egl_info *info;
	struct gles_log log;
	struct cached_fft *e;
	int n, max;
	unsigned long long tick, hits, misses;
};

int fft_cache_create(struct program_cache *pc, const struct egl_info *info,
                     const struct gles_log *log, int max_plans, struct fft_cache **out)
{
	struct fft_cache *c = calloc(1, sizeof *c);
	if (!c)
		return FFT_E_NOMEM;
	c->max = max_plans > 0 ? max_plans : 8;
	c->e = calloc((size_t)c->max, sizeof *c->e);
	if (!c->e) {
		free(c);
		return FFT_E_NOMEM;
	}
	c->pc = pc;
	c->info = info;
	if (log)
		c->log = *log;
	*out = c;
	return 0;
}

void fft_cache_destroy(struct fft_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++)
		fft_destroy(c->e[i].f);
	free(c->e);
	free(c);
}

int fft_cache_get(struct fft_cache *c, int width, int height, int axes, const struct fft_opts *o,
                  struct fft **out, char err[FFT_ERR_LEN])
{
	struct fft_opts key = *o;
	key.wisdom = NULL;
	c->tick++;
	for (int i = 0; i < c->n; i++) {
		struct cached_fft *e = &c->e[i];
		if (e->width == width && e->height == height && e->axes == axes &&
		    !memcmp(&e->opts, &key, sizeof key)) {
			e->last_use = c->tick;
			c->hits++;
			*out = e->f;
			return 0;
		}
	}
	c->misses++;
	struct fft *f;
	int rc = fft_create(c->pc, c->info, width, height, axes, o, &c->log, &f, err);
	if (rc)
		return rc;
	int slot = c->n;
	if (c->n == c->max) { /* replace the least recently used */
		slot = 0;
		for (int i = 1; i < c->n; i++)
			if (c->e[i].last_use < c->e[slot].last_use)
				slot = i;
		fft_destroy(c->e[slot].f);
	} else {
		c->n++;
	}
	struct cached_fft *e = &c->e[slot];
	memset(e, 0, sizeof *e);
	e->width = width;
	e->height = height;
	e->axes = axes;
	e->opts = key;
	e->f = f;
	e->last_use = c->tick;
	*out = f;
	return 0;
}

void fft_cache_stats(const struct fft_cache *c, unsigned long long *hits,
                     unsigned long long *misses, int *plans)
{
	*hits = c->hits;
	*misses = c->misses;
	*plans = c->n;
}
