/* FFT code generation: the #define preamble and the pass sequence of each FFT program, built
 * from a plan (gles/fft_plan.h) and compiled through the program cache; see fft_internal.h. */
#include "gles/fft_internal.h"

#include <GLES3/gl31.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which FFT program a key builds (never 0, so that a zeroed key names none). */
enum fft_key_kind {
	FFT_KEY_SHARED = 1, /* a whole transform in shared memory */
	FFT_KEY_PASS,       /* one pass through global memory */
	FFT_KEY_BLUESTEIN,  /* Bluestein's chirp steps */
	FFT_KEY_SWEEP,      /* a blocked sweep of several passes */
};

/* The parameter struct that keys every FFT program; memset to 0 before filling. */
struct fft_key {
	int kind; /* enum fft_key_kind (an int: the key's bytes are its identity) */
	int n, components, inverse, half, norm_forward;
	int threads;
	int nsig, nthr, split;
	int pass, radix, ns, last, sig_fast;
	int mode, bn;
	int sweep_len, sweep_count, inplace;
	int bank_pad;  /* the plan's padding period */
	unsigned pads; /* bit i: the exchange after pass i is padded */
	int probe;     /* fft_opts.probe */
	int io, io_id; /* fft_io: FFT_IO_* hooks and layout, the caller's variant */
	int pairs;     /* the fused convolution's columns in the pair order */
	int mulreg;    /* the fused convolution's multiply in registers: enum conv_regs */
};

/* Where a fused convolution multiplies (gen_sequence's regs). */
enum conv_regs {
	CONV_MULT_SHARED = 0, /* in shared memory in natural order (conv_multiply) */
	CONV_MULREG,          /* a real kernel's, in registers (conv_mulreg, KGRAY) */
	CONV_MULPAIR_SHUFFLE, /* a colour kernel's, in registers, the partners by subgroup shuffles
	                         (conv_mulreg, MULPAIR 1) */
	CONV_MULPAIR_SHARED,  /* ... the partners through shared memory (MULPAIR 2) */
};

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
	sbf(b, "#define CONV %d\n#define FFT_IO_LOAD 0\n#define FFT_IO_STORE 0\n"
	       "#define FFT_PAIRS 0\n#define CONV_PAIRS 0\n#define TILE_LOG 0\n#define MULPAIR 0\n",
	    conv);
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

double fft_end_scale(const struct fft_opts *o, int inverse, int n)
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
                    struct sb *defs, struct fft_prog *p, char err[FFT_ERR_LEN])
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
	program_hold(pc, id); /* dropped by the axis's or fused plan's destroy (fft_prog_drop) */
	p->id = id;
	p->u_offset = glGetUniformLocation(id, "u_offset");
	p->u_sig_stride = glGetUniformLocation(id, "u_sig_stride");
	p->u_elem_stride = glGetUniformLocation(id, "u_elem_stride");
	p->u_count = glGetUniformLocation(id, "u_count");
	p->u_valid = glGetUniformLocation(id, "u_valid");
	return 0;
}

/* The pass calls of fft_shared (FFT_SEQUENCE): the first pass reads global memory, the last
 * writes it, and between passes the values go through shared memory (in 1 << split rounds of
 * part of an element when split: .xy then .zw, or one float component each; at the padded
 * index where the plan pads). With conv the forward passes are followed by the inverse ones.
 * regs (enum conv_regs, not CONV_MULT_SHARED): the inverse runs the radices in the reverse
 * order, unpadded, so that its first pass takes its inputs from the forward's last in the same
 * invocation's registers, and the spectrum is multiplied there (conv_mulreg; a colour kernel's
 * partners through shared memory in natural order with CONV_MULPAIR_SHARED); else the
 * forward result goes through shared memory in natural order (never padded) and conv_multiply
 * pairs each element with its Hermitian partner there. */
static void gen_sequence(struct sb *b, const struct fft_plan *p, int conv, int regs, int probe)
{
	int n = p->npasses, total = conv ? 2 * n : n;
	const char *bar = probe == FFT_PROBE_NO_BARRIERS ? "" : "barrier(); ";
	sbf(b, "#define FFT_SEQUENCE ");
	if (probe == FFT_PROBE_COPY) { /* the first pass's loads, stored back where they came from */
		sbf(b, "load_global_r%d(); barrier(); store_global_r%d(%du);\n", p->pass[0].radix,
		    p->pass[0].radix, p->m / p->pass[0].radix);
		return;
	}
	struct fft_pass seq[2 * FFT_MAX_PASSES];
	for (int i = 0; i < total; i++)
		seq[i] = p->pass[i % n];
	if (conv && regs)
		for (int i = 0, ns = 1; i < n; i++) {
			seq[n + i].radix = p->pass[n - 1 - i].radix;
			seq[n + i].ns = ns;
			seq[n + i].pad = 0;
			ns *= seq[n + i].radix;
		}
	for (int i = 0; i < total; i++) {
		const struct fft_pass *cur = &seq[i];
		if (i == 0) {
			sbf(b, "load_global_r%d(); ", cur->radix);
		} else if (conv && regs && i == n) {
			const struct fft_pass *prev = &seq[i - 1];
			if (regs != CONV_MULPAIR_SHARED)
				sbf(b, "conv_mulreg_r%d(%du, 0); ", prev->radix, prev->ns);
			else
				for (int part = p->split ? 1 : 0; part <= (p->split ? 1 << p->split : 0); part++)
					sbf(b, "store_shared_r%d(%du, %d, 0); %sconv_mulreg_r%d(%du, %d); %s",
					    prev->radix, prev->ns, part, bar, prev->radix, prev->ns, part, bar);
			sbf(b, "SIGN = 1.0; ");
		} else {
			const struct fft_pass *prev = &seq[i - 1];
			int mult = conv && i == n, pad = prev->pad && !mult;
			for (int part = p->split ? 1 : 0; part <= (p->split ? 1 << p->split : 0); part++) {
				sbf(b, "store_shared_r%d(%du, %d, %d); %s", prev->radix, prev->ns, part, pad, bar);
				if (mult)
					sbf(b, "conv_multiply(%d); %s", part, bar);
				sbf(b, "load_shared_r%d(%d, %d); %s", cur->radix, part, pad, bar);
			}
			if (mult)
				sbf(b, "SIGN = 1.0; ");
		}
		if (total == 1)
			sbf(b, "barrier(); ");
		if (probe != FFT_PROBE_NO_ARITHMETIC)
			sbf(b, "compute_r%d(%du); ", cur->radix, cur->ns);
	}
	const struct fft_pass *last = &seq[total - 1];
	sbf(b, "store_global_r%d(%du);\n", last->radix, last->ns);
}

void fft_prog_drop(struct program_cache *pc, struct fft_prog *p)
{
	if (p->id)
		program_drop(pc, p->id);
	memset(p, 0, sizeof *p);
}

void fft_prog_use(const struct fft_prog *p, size_t offset, size_t sig_stride, size_t elem_stride,
                  int count)
{
	glUseProgram(p->id);
	glUniform1ui(p->u_offset, (GLuint)offset);
	glUniform1ui(p->u_sig_stride, (GLuint)sig_stride);
	glUniform1ui(p->u_elem_stride, (GLuint)elem_stride);
	glUniform1ui(p->u_count, (GLuint)count);
}

/* fft_prog_shared with io hooks (FFT_IO_LOAD | FFT_IO_STORE, the caller's sources src, its
 * variant io_id): the program fft_io_create makes; io's FFT_IO_PAIRS and FFT_IO_TILES the data
 * side's layout (a fused convolution's tiles with no hook). */
static int prog_shared(struct program_cache *pc, const struct fft_plan *p, const struct fft_opts *o,
                       int inverse, int conv, int kgray, int shuffle, double scale, int io,
                       const char *src, int io_id, struct fft_prog *out, char err[FFT_ERR_LEN])
{
	struct fft_key key;
	memset(&key, 0, sizeof key);
	key.kind = FFT_KEY_SHARED;
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
	key.pairs = conv == 2;
	/* the multiply in registers, but for probes (which time the other form) */
	key.mulreg = !conv || o->mult_shared || o->probe ? CONV_MULT_SHARED
	             : kgray                             ? CONV_MULREG
	             : shuffle                           ? CONV_MULPAIR_SHUFFLE
	                                                 : CONV_MULPAIR_SHARED;
	int hooks = io & (FFT_IO_LOAD | FFT_IO_STORE);
	key.bank_pad = p->bank_pad;
	key.probe = o->probe;
	key.io = io;
	key.io_id = io_id;
	for (int i = 0; i < p->npasses; i++)
		key.pads |= p->pass[i].pad ? 1u << i : 0;
	char name[64]; /* the program cache's name length */
	int len = snprintf(name, sizeof name, "fft_common+%s%sfft_shared", hooks ? src : "",
	                   hooks ? "+" : "");
	if (len < 0 || (size_t)len >= sizeof name) {
		snprintf(err, FFT_ERR_LEN, "FFT io sources: names too long");
		return FFT_E_ARG;
	}
	struct sb b = {0};
	if (key.mulreg == CONV_MULPAIR_SHUFFLE)
		sbf(&b, "#extension GL_KHR_shader_subgroup_shuffle : require\n");
	common_defines(&b, key.components, key.half, inverse, conv != 0);
	sbf(&b, "#undef FFT_IO_LOAD\n#define FFT_IO_LOAD %d\n#undef FFT_IO_STORE\n"
	        "#define FFT_IO_STORE %d\n#undef FFT_PAIRS\n#define FFT_PAIRS %d\n"
	        "#undef CONV_PAIRS\n#define CONV_PAIRS %d\n#undef TILE_LOG\n#define TILE_LOG %d\n",
	    (io & FFT_IO_LOAD) != 0, (io & FFT_IO_STORE) != 0, (io & FFT_IO_PAIRS) != 0, key.pairs,
	    FFT_IO_TILE_LOG(io));
	int vregs = 1, used[FFT_MAX_RADIX + 1] = {0};
	for (int i = 0; i < p->npasses; i++) {
		int r = p->pass[i].radix;
		int per = (p->m / r + p->threads - 1) / p->threads;
		if (per * r > vregs)
			vregs = per * r;
		used[r] = 1;
	}
	char sc[32];
	int elem = o->components * 4 >> p->split;
	sbf(&b, "#define N %d\n#define NSIG %d\n#define NTHR %d\n#define VREGS %d\n#define SPLIT %d\n"
	        "#define SCALE %s\n#define KGRAY %d\n",
	    p->m, p->signals, p->threads, vregs, p->split, scale_text(sc, sizeof sc, scale), kgray);
	if (key.mulreg == CONV_MULPAIR_SHUFFLE || key.mulreg == CONV_MULPAIR_SHARED)
		sbf(&b, "#undef MULPAIR\n#define MULPAIR %d\n",
		    key.mulreg == CONV_MULPAIR_SHUFFLE ? 1 : 2);
	sbf(&b, "#define S_ELEMS %d\n#define SPAD_LOG %d\n#define FFT_PROBE %d\n",
	    p->shared_bytes / elem, p->bank_pad, o->probe);
	for (int r = 2; r <= FFT_MAX_RADIX; r++)
		sbf(&b, "#define USE_R%d %d\n", r, used[r]);
	gen_sequence(&b, p, conv, key.mulreg, o->probe);
	return get_prog(pc, name, &key, &b, out, err);
}

int fft_prog_shared(struct program_cache *pc, const struct fft_plan *p, const struct fft_opts *o,
                    int inverse, int conv, int kgray, int shuffle, int tile_log, double scale,
                    struct fft_prog *out, char err[FFT_ERR_LEN])
{
	return prog_shared(pc, p, o, inverse, conv, kgray, shuffle, scale, FFT_IO_TILES(tile_log),
	                   NULL, 0, out, err);
}

int fft_prog_shared_io(struct program_cache *pc, const struct fft_plan *p,
                       const struct fft_opts *o, int inverse, int io, const char *src, int io_id,
                       struct fft_prog *out, char err[FFT_ERR_LEN])
{
	return prog_shared(pc, p, o, inverse, 0, 0, 0, fft_end_scale(o, inverse, p->m), io, src,
	                   io_id, out, err);
}

int fft_prog_bluestein_fused(struct program_cache *pc, const struct fft_plan *p,
                             const struct fft_opts *o, struct fft_prog *out, char err[FFT_ERR_LEN])
{
	if (!p->shared || p->split > (o->components == 4 ? 1 : 0)) {
		snprintf(err, FFT_ERR_LEN, "Bluestein in one dispatch: needs a shared plan whose "
		         "values go through shared memory whole, or vec4 in vec2 rounds");
		return FFT_E_PLAN;
	}
	return prog_shared(pc, p, o, 0, 1, 1, 0, 1.0 / p->m, FFT_IO_LOAD | FFT_IO_STORE,
	                   "bluestein_io", 2, out, err);
}

int fft_prog_global(struct program_cache *pc, const struct fft_plan *p, const struct fft_opts *o,
                    int adjacent, int inverse, int pass, struct fft_prog *out,
                    char err[FFT_ERR_LEN])
{
	struct fft_key key;
	memset(&key, 0, sizeof key);
	key.kind = FFT_KEY_PASS;
	key.n = p->m;
	key.components = o->components;
	key.inverse = inverse;
	key.pass = pass;
	key.radix = p->pass[pass].radix;
	key.ns = p->pass[pass].ns;
	key.last = pass == p->npasses - 1;
	key.sig_fast = adjacent;
	key.half = o->half;
	key.norm_forward = o->norm_forward;
	struct sb b = {0};
	common_defines(&b, key.components, key.half, inverse, 0);
	char sc[32];
	double scale = key.last ? fft_end_scale(o, inverse, p->m) : 1.0;
	sbf(&b, "#define N %d\n#define RADIX %d\n#define NS %d\n"
	        "#define SCALE %s\n#define SIG_FAST %d\n#define BFLY bfly%d\n",
	    p->m, key.radix, key.ns, scale_text(sc, sizeof sc, scale), key.sig_fast, key.radix);
	return get_prog(pc, "fft_common+fft_global", &key, &b, out, err);
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

int fft_prog_sweep(struct program_cache *pc, const struct fft_plan *p, const struct fft_opts *o,
                   int inverse, int sweep, struct fft_prog *out, char err[FFT_ERR_LEN])
{
	const struct fft_sweep *sw = &p->sweep[sweep];
	struct fft_key key;
	memset(&key, 0, sizeof key);
	key.kind = FFT_KEY_SWEEP;
	key.n = p->m;
	key.components = o->components;
	key.inverse = inverse;
	key.half = o->half;
	key.norm_forward = o->norm_forward;
	key.nsig = p->signals;
	key.nthr = sw->threads;
	key.pass = sw->first;
	key.sweep_count = sw->count;
	key.sweep_len = sw->len;
	key.ns = sw->stride;
	key.last = sweep == p->nsweeps - 1;
	key.inplace = p->nsweeps == 1;
	struct sb b = {0};
	common_defines(&b, key.components, key.half, inverse, 0);
	char sc[32];
	double scale = key.last ? fft_end_scale(o, inverse, p->m) : 1.0;
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
	return get_prog(pc, "fft_common+fft_blocked", &key, &b, out, err);
}

int fft_prog_bluestein(struct program_cache *pc, const struct fft_plan *p,
                       const struct fft_opts *o, int inverse, int mode, struct fft_prog *out,
                       char err[FFT_ERR_LEN])
{
	struct fft_key key;
	memset(&key, 0, sizeof key);
	key.kind = FFT_KEY_BLUESTEIN;
	key.n = p->n;
	key.bn = p->m;
	key.components = o->components;
	key.inverse = inverse;
	key.mode = mode;
	key.half = o->half;
	key.norm_forward = o->norm_forward;
	struct sb b = {0};
	common_defines(&b, key.components, key.half, inverse, 0);
	char sc[32];
	sbf(&b, "#define N %d\n#define M %d\n#define MODE %d\n#define SCALE %s\n", p->n, p->m,
	    mode, scale_text(sc, sizeof sc, fft_end_scale(o, inverse, p->n)));
	return get_prog(pc, "fft_common+bluestein", &key, &b, out, err);
}
