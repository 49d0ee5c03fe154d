/* FFT planning; see fft_plan.h for the index mapping. */
#include "gles/fft_plan.h"

#include <string.h>

const char *fft_plan_strerror(int code)
{
	switch (code) {
	case FFT_PLAN_OK: return "ok";
	case FFT_PLAN_E_SIZE: return "transform length out of range";
	case FFT_PLAN_E_NOFIT: return "signal does not fit in shared memory";
	case FFT_PLAN_E_ROWS: return "the blocked technique is for columns (adjacent signals)";
	}
	return "unknown error";
}

const char *fft_technique_name(int technique)
{
	return technique >= 0 && technique < FFT_TECH_COUNT ? fft_technique_names[technique] : "?";
}

const char *fft_plan_kind(const struct fft_plan *p)
{
	return p->blocked ? "blocked" : p->shared ? "shared" : "global";
}

int fft_is_native(int n)
{
	if (n < 1)
		return 0;
	for (int f = 2; f <= FFT_MAX_PRIME; f++)
		while (n % f == 0)
			n /= f;
	return n == 1;
}

static int pow2_floor(int x)
{
	int p = 1;
	while (p * 2 <= x)
		p *= 2;
	return p;
}

static int pow2_ceil(int x)
{
	int p = 1;
	while (p < x)
		p *= 2;
	return p;
}

/* Work-group shape for the shared technique; 0 if the signal does not fit. */
static int shape_shared(struct fft_plan *p, const struct fft_plan_opts *o)
{
	int m = p->m;
	int comps = o->components == 4 ? 4 : 2;
	int limit = o->shared_limit > 0 ? o->shared_limit : 16384;
	int maxinv = o->max_invocations > 0 ? o->max_invocations : 128;
	/* vec4 goes through shared memory whole when it fits and is short; past FFT_ROUNDS_ABOVE in
	 * two vec2 rounds, rows up to FFT_FLOAT_ROUNDS_TO in four float rounds where the vec2 rounds
	 * would fit. vec2 whole. o->split asks for exactly so many rounds (1: halves, 2: vec4 in four
	 * float rounds) */
	p->split = 0;
	if (o->split)
		p->split = o->split < (comps == 4 ? 2 : 1) ? o->split : comps == 4 ? 2 : 1;
	else if (comps == 4 && m > FFT_ROUNDS_ABOVE && (long long)m * 8 <= limit)
		p->split = o->signals_adjacent || m > FFT_FLOAT_ROUNDS_TO ? 1 : 2;
	else if (comps == 4 && (long long)m * 16 > limit)
		p->split = 1;
	int elem = comps * 4 >> p->split;
	if ((long long)m * elem > limit)
		return 0;
	/* invocations per signal: each holds about 8 (vec2) or 4 (vec4) elements between passes */
	int per = comps == 4 ? 4 : 8;
	int t = pow2_ceil((m + per - 1) / per);
	int tmax = maxinv < 256 ? maxinv : 256;
	if (t > tmax)
		t = tmax;
	if (o->threads > 0) { /* asked for (wisdom): any count, if no invocation holds over 64 values */
		t = o->threads;
		for (int i = 0; i < p->npasses; i++) {
			int nb = m / p->pass[i].radix;
			if ((nb + t - 1) / t * p->pass[i].radix > 64)
				return 0;
		}
	}
	/* the largest count of butterflies in a pass must not need more than 32 values a thread */
	int s_fit = pow2_floor(limit / (m * elem));
	int s;
	if (o->signals_adjacent) {
		s = 16 * 4 / comps; /* aim at 64 contiguous bytes per row of the tile */
	} else {
		s = 64 / t;          /* at least 64 invocations a group for short signals */
	}
	if (s < 1)
		s = 1;
	if (s > s_fit)
		s = s_fit;
	if (o->signals > 0) { /* asked for: exactly that many, if they fit */
		if ((long long)o->signals * m * elem > limit)
			return 0;
		s = o->signals;
	}
	/* neighbouring signals read together make the strided reads of columns coalesce; a group of
	 * one vec4 column reads half a 32-byte sector per row, and then global passes, which read
	 * 64 neighbouring columns at a time, are faster (one vec2 column a group reads a whole
	 * sector and stays with shared memory) */
	if (o->signals_adjacent && o->technique == FFT_TECH_AUTO && comps == 4 && s * elem < 32)
		return 0;
	if (o->signals > 0 && s * t > maxinv)
		return 0;
	while (s > 1 && s * t > maxinv)
		s /= 2;
	if (s * t > maxinv)
		return 0;
	p->threads = t;
	p->signals = s;
	fft_plan_exchanges(p, o);
	return 1;
}

/* Work-group shape of a sweep of length len over c signals: 0 if it does not fit (shared
 * memory, invocations, or more than 64 values an invocation). One sweep holds all c signals at
 * once; exchanging them in rounds is slower (bench/RESULTS.md, log of decisions: "columns
 * exchanged in rounds"). */
static int shape_sweep(const struct fft_plan *p, const struct fft_plan_opts *o, int first,
                       int count, int c, struct fft_sweep *sw)
{
	int comps = o->components == 4 ? 4 : 2;
	int limit = o->shared_limit > 0 ? o->shared_limit : 16384;
	int maxinv = o->max_invocations > 0 ? o->max_invocations : 128;
	long long len = 1;
	for (int i = first; i < first + count; i++)
		len *= p->pass[i].radix;
	/* shared memory holds float32 whatever the storage */
	if (len * c * comps * 4 > limit)
		return 0;
	/* as the shared technique: about 8 (vec2) or 4 (vec4) values an invocation, but no more
	 * invocations than the most butterflies of a pass (vec4 64 = 8 x 8: 8, not 16 half idle) */
	int per = comps == 4 ? 4 : 8, nb_max = 1;
	for (int i = first; i < first + count; i++)
		if (len / p->pass[i].radix > nb_max)
			nb_max = (int)(len / p->pass[i].radix);
	int t = pow2_ceil((int)((len + per - 1) / per));
	if (t > nb_max)
		t = nb_max;
	if (o->threads > 0 && t > o->threads)
		t = o->threads;
	if (t > maxinv / c)
		t = pow2_floor(maxinv / c);
	if (t < 1)
		return 0;
	int vregs = 1;
	for (int i = first; i < first + count; i++) {
		int r = p->pass[i].radix, nb = (int)len / r;
		int v = (nb + t - 1) / t * r;
		if (v > vregs)
			vregs = v;
	}
	if (vregs > 64)
		return 0;
	sw->first = first;
	sw->count = count;
	sw->len = (int)len;
	sw->stride = p->pass[first].ns;
	sw->threads = t;
	sw->vregs = vregs;
	return 1;
}

/* Groups the passes into sweeps for the blocked technique: the fewest sweeps that fit, and
 * among those the smallest longest sweep (balanced: 4096 = 64 x 64, not 512 x 8). 0 if a single
 * pass does not fit. */
static int shape_blocked(struct fft_plan *p, const struct fft_plan_opts *o)
{
	int comps = o->components == 4 ? 4 : 2;
	int maxinv = o->max_invocations > 0 ? o->max_invocations : 128;
	/* C: neighbouring signals a group, 64 bytes of each row by default (two 32-byte sectors) */
	int selem = comps * (o->half ? 2 : 4);
	int c = o->signals > 0 ? o->signals : 64 / selem;
	if (c > maxinv)
		c = maxinv;
	int np = p->npasses;
	/* best[i]: sweeps and longest sweep for passes i..np-1; take[i]: passes in the first */
	int best[FFT_MAX_PASSES + 1], longest[FFT_MAX_PASSES + 1], take[FFT_MAX_PASSES + 1];
	best[np] = 0;
	longest[np] = 0;
	for (int i = np - 1; i >= 0; i--) {
		best[i] = -1;
		for (int k = 1; i + k <= np; k++) {
			struct fft_sweep sw;
			if (!shape_sweep(p, o, i, k, c, &sw))
				break; /* longer sweeps do not fit either */
			if (best[i + k] < 0)
				continue;
			int sweeps = 1 + best[i + k];
			int lg = sw.len > longest[i + k] ? sw.len : longest[i + k];
			if (best[i] < 0 || sweeps < best[i] || (sweeps == best[i] && lg < longest[i])) {
				best[i] = sweeps;
				longest[i] = lg;
				take[i] = k;
			}
		}
	}
	if (best[0] < 0)
		return 0;
	int comps_bytes = comps * 4, maxt = 0, maxshared = 0;
	p->nsweeps = 0;
	for (int i = 0; i < np; i += take[i]) {
		struct fft_sweep *sw = &p->sweep[p->nsweeps++];
		shape_sweep(p, o, i, take[i], c, sw);
		if (sw->threads > maxt)
			maxt = sw->threads;
		if (c * sw->len * comps_bytes > maxshared)
			maxshared = c * sw->len * comps_bytes;
	}
	p->signals = c;
	p->threads = maxt;
	p->shared_bytes = maxshared;
	return 1;
}

static int is_pow2(int x)
{
	return x > 0 && !(x & (x - 1));
}

void fft_plan_exchanges(struct fft_plan *p, const struct fft_plan_opts *o)
{
	int m = p->m, s = p->signals;
	int comps = o->components == 4 ? 4 : 2;
	int elem = comps * 4 >> p->split;
	int log_b = elem == 16 ? 3 : elem == 8 ? 4 : 5; /* elements per 128 bytes: 8, 16, 32 */
	int limit = o->shared_limit > 0 ? o->shared_limit : 16384;
	int pad_from = o->pad_from > 0 ? o->pad_from : FFT_PAD_FROM;
	int padded = o->pad_from < 0 || (is_pow2(m) && m >= pad_from), any_pad = 0;
	for (int i = 0; i < p->npasses; i++) {
		int r = p->pass[i].radix;
		p->pass[i].pad = padded && i + 1 < p->npasses && r % 2 == 0 &&
		                 (long long)p->pass[i].ns * s < (1 << log_b);
		any_pad |= p->pass[i].pad;
	}
	long long elems = (long long)s * m;
	p->bank_pad = 0;
	if (any_pad) {
		long long with_pad = elems + ((elems - 1) >> log_b);
		if (with_pad * elem <= limit) {
			elems = with_pad;
			p->bank_pad = log_b;
		} else {
			for (int i = 0; i < p->npasses; i++)
				p->pass[i].pad = 0;
		}
	}
	p->shared_bytes = (int)(elems * elem);
}

int fft_bluestein_fused_threads(int m, int signals, int max_invocations, int max_group_y)
{
	long long s = signals > 1 ? signals : 1;
	int t = 1;
	while (t < m / 4 && t < FFT_BLUESTEIN_FUSED_THREADS)
		t *= 2;
	while (t > 1 && t * s > max_invocations)
		t /= 2;
	return t * s > max_invocations || t > max_group_y ? 0 : t;
}

int fft_plan_make(int n, const struct fft_plan_opts *o, struct fft_plan *p)
{
	memset(p, 0, sizeof *p);
	if (n < 1 || n > FFT_MAX_N)
		return FFT_PLAN_E_SIZE;
	p->n = n;
	p->bluestein = !fft_is_native(n);
	p->m = p->bluestein ? fft_good_size(2 * n - 1) : n;
	if (p->m > FFT_MAX_N)
		return FFT_PLAN_E_SIZE;
	int r[FFT_MAX_PASSES];
	int count = fft_factor(p->m, r);
	if (count < 0)
		return count;
	int ns = 1;
	for (int i = 0; i < count; i++) {
		p->pass[i].radix = r[i];
		p->pass[i].ns = ns;
		ns *= r[i];
	}
	p->npasses = count;
	if (o->technique == FFT_TECH_BLOCKED) {
		if (!o->signals_adjacent)
			return FFT_PLAN_E_ROWS;
		p->blocked = count > 0;
		if (count > 0 && !shape_blocked(p, o))
			return FFT_PLAN_E_NOFIT;
		return 0;
	}
	if (o->technique != FFT_TECH_GLOBAL) {
		p->shared = count > 0 && shape_shared(p, o);
		if (!p->shared && count > 0 && o->technique == FFT_TECH_SHARED)
			return FFT_PLAN_E_NOFIT;
	}
	return 0;
}

void fft_plan_rule(int n, int adjacent, int components, int half, int software,
                   int max_invocations, int shared_limit, int count, struct fft_choice *c)
{
	c->technique = FFT_TECH_AUTO;
	c->threads = c->signals = c->split = 0;
	if (software || n < FFT_RULE_FROM)
		return;
	int maxinv = max_invocations > 0 ? max_invocations : 128;
	int vec2_f32 = components == 2 && !half;
	if (!adjacent) {
		int t = n <= 2048 ? 256 : 512;
		c->threads = t < maxinv ? t : pow2_floor(maxinv);
		c->split = vec2_f32 && n >= FFT_ROWS_SPLIT_FROM;
		return;
	}
	if (vec2_f32 && count <= FFT_COLS_ONE_PASS_COUNT && n <= FFT_COLS_FOUR_TO) {
		int s = n <= FFT_COLS_EIGHT_TO ? 8 : 4, t = s == 8 ? 128 : 256;
		if ((long long)s * n * 4 <= shared_limit && s * t <= maxinv) {
			c->technique = FFT_TECH_SHARED;
			c->threads = t;
			c->signals = s;
			c->split = 1;
			return;
		}
	}
	if (n == FFT_RULE_FROM)
		return;
	if (half && components == 4) {
		c->technique = FFT_TECH_GLOBAL;
		return;
	}
	int selem = (components == 4 ? 4 : 2) * (half ? 2 : 4);
	c->technique = FFT_TECH_BLOCKED;
	c->threads = 8;
	c->signals = 128 / selem;
}
