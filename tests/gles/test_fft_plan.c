/* FFT planning on the CPU: factorization strategy, pass strides and twiddle offsets, shared-
 * memory fit, fft_good_size, padded and transposed exchanges. No GPU needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gles/fft_plan.h"

static int largest_prime(int n)
{
	int lp = 1;
	for (int f = 2; f * f <= n; f++)
		while (n % f == 0) {
			lp = f;
			n /= f;
		}
	return n > 1 ? n : lp;
}

/* e if n is p^e (e >= 1), else 0 */
static int power_of(int n, int p)
{
	int e = 0;
	while (n > 1 && n % p == 0) {
		n /= p;
		e++;
	}
	return n == 1 ? e : 0;
}

/* composite: the threes and fives come as powers of 3 up to 27 and of 5 up to 25, in the
 * fewest passes, balanced (exponents within one of each other); every other odd radix prime. */
static void check_factor(int n, int max_radix, int composite)
{
	int r[FFT_MAX_PASSES];
	int c = fft_factor(n, max_radix, composite, r);
	assert_true(c >= 0);
	long long prod = 1;
	int seen_pow2 = 0, prev_odd = 1 << 30;
	int e3[FFT_MAX_PASSES], e5[FFT_MAX_PASSES], n3 = 0, n5 = 0, threes = 0, fives = 0;
	for (int i = 0; i < c; i++) {
		prod *= r[i];
		int pow2 = (r[i] & (r[i] - 1)) == 0;
		if (pow2) {
			assert_true(r[i] <= max_radix);
			/* chunks of max_radix, then at most one smaller remainder, last */
			if (r[i] < max_radix)
				assert_int_equal(i, c - 1);
			seen_pow2 = 1;
		} else {
			assert_false(seen_pow2);          /* odd factors come first */
			assert_true(r[i] <= prev_odd);    /* largest first */
			prev_odd = r[i];
			if (composite && power_of(r[i], 3)) {
				e3[n3++] = power_of(r[i], 3);
				assert_true(r[i] <= 27);
			} else if (composite && power_of(r[i], 5)) {
				e5[n5++] = power_of(r[i], 5);
				assert_true(r[i] <= 25);
			} else {
				assert_int_equal(largest_prime(r[i]), r[i]); /* an odd prime */
			}
		}
	}
	assert_true(prod == n);
	for (int m = n; m % 3 == 0; m /= 3)
		threes++;
	for (int m = n; m % 5 == 0; m /= 5)
		fives++;
	if (composite) {
		assert_int_equal(n3, (threes + 2) / 3);
		assert_int_equal(n5, (fives + 1) / 2);
		for (int i = 0; i < n3; i++)
			assert_true(e3[i] == threes / n3 || e3[i] == threes / n3 + 1);
		for (int i = 0; i < n5; i++)
			assert_true(e5[i] == fives / n5 || e5[i] == fives / n5 + 1);
	}
}

static void test_factorization(void **state)
{
	(void)state;
	int radices[] = {4, 8, 16};
	for (int composite = 0; composite < 2; composite++) {
		for (int k = 0; k < 3; k++)
			for (int n = 1; n <= 5000; n++)
				check_factor(n, radices[k], composite);
		int big[] = {1 << 20, 3 * 5 * 7 * 11 * 13 * 16, 4099, 65537, 1 << 24, 16777213,
		             3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3, 9765625};
		for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
			check_factor(big[i], 8, composite);
	}
	int r[FFT_MAX_PASSES];
	assert_int_equal(fft_factor(1080, 8, 0, r), 5); /* 5, 3, 3, 3, 8 */
	assert_int_equal(r[0], 5);
	assert_int_equal(r[4], 8);
	assert_int_equal(fft_factor(2048, 8, 0, r), 4); /* 8, 8, 8, 4 */
	assert_int_equal(r[3], 4);
	assert_int_equal(fft_factor(1, 8, 0, r), 0);
	assert_int_equal(fft_factor(0, 8, 0, r), FFT_PLAN_E_SIZE);
	assert_int_equal(fft_factor(64, 32, 0, r), FFT_PLAN_E_RADIX);
	/* composite: 2187 = 27 x 9 x 9, 1350 = 27 x 25 x 2, 4375 = 25 x 25 x 7, 1080 = 27 x 5 x 8 */
	static const int want[][5] = {{2187, 27, 9, 9, 0}, {1350, 27, 25, 2, 0},
	                              {4375, 25, 25, 7, 0}, {1080, 27, 5, 8, 0}, {81, 9, 9, 0, 0}};
	for (int i = 0; i < 5; i++) {
		int c = fft_factor(want[i][0], 8, 1, r);
		for (int k = 0; k < c; k++)
			assert_int_equal(r[k], want[i][k + 1]);
		assert_int_equal(c, want[i][4] ? 4 : want[i][3] ? 3 : 2);
	}
	assert_int_equal(fft_factor(2240, 8, 1, r), 4); /* 7, 5, 8, 8: nothing to group */
}

static void test_native_and_good_size(void **state)
{
	(void)state;
	assert_true(fft_is_native(1));
	assert_true(fft_is_native(2 * 3 * 5 * 7 * 11 * 13));
	assert_false(fft_is_native(17));
	assert_false(fft_is_native(4099));
	for (int n = 1; n <= 20000; n += (n < 3000 ? 1 : 7)) {
		int g = fft_good_size(n);
		assert_true(g >= n && g <= 2 * n);
		int k = g;
		for (int f = 2; f <= 7; f++)
			while (k % f == 0)
				k /= f;
		assert_int_equal(k, 1);
		/* nothing in [n, 2n] that is 7-smooth is cheaper, or as cheap and shorter */
		for (int m = n; m <= 2 * n; m++) {
			int q = m;
			for (int f = 2; f <= 7; f++)
				while (q % f == 0)
					q /= f;
			if (q != 1)
				continue;
			assert_true(fft_cost(m) > fft_cost(g) || (fft_cost(m) == fft_cost(g) && m >= g));
		}
	}
	assert_int_equal(fft_good_size(1080 + 256 - 1), 1344);
	assert_int_equal(fft_good_size(1920 + 256 - 1), 2240); /* not 2187 = 3^7: 4 passes, not 7 */
	assert_int_equal(fft_good_size(3840 + 512 - 1), 4375); /* 5^4*7: 5 passes, not 4374's 8 */
	assert_int_equal(fft_good_size(1), 1);
}

static void test_passes(void **state)
{
	(void)state;
	struct fft_plan_opts o = {8, FFT_TECH_AUTO, FFT_TW_COMPUTED, 2, 49152, 1024, 0, 0, 0, 0, 0, 0, 0, 0};
	int ns_[] = {1, 2, 7, 64, 97, 360, 1000, 1080, 1920, 2048, 2187, 4096, 4099, 6144, 8192, 1350,
	             4375};
	const size_t count = sizeof ns_ / sizeof ns_[0];
	for (size_t i = 0; i < 2 * count; i++) {
		o.composite = i >= count; /* every length plain, then composite */
		int n = ns_[i % count];
		struct fft_plan p;
		assert_int_equal(fft_plan_make(n, &o, &p), 0);
		assert_int_equal(p.n, n);
		assert_int_equal(p.bluestein, !fft_is_native(n));
		if (p.bluestein)
			assert_true(p.m >= 2 * p.n - 1);
		long long ns = 1;
		int tw = 0;
		for (int k = 0; k < p.npasses; k++) {
			assert_int_equal(p.pass[k].ns, ns);
			assert_int_equal(p.pass[k].tw_offset, tw);
			tw += (int)ns * (p.pass[k].radix - 1);
			ns *= p.pass[k].radix;
		}
		assert_true(ns == p.m);
		assert_int_equal(p.tw_count, tw);
		assert_true(p.tw_count < p.m || p.m == 1);
		if (p.shared) {
			assert_true(p.shared_bytes <= o.shared_limit);
			assert_true(p.signals * p.threads <= o.max_invocations);
			assert_int_equal(p.shared_bytes, p.signals * p.m * 8);
		}
		printf("n %5d%s: m %5d, %d passes, %s, %d x %d invocations, %d B shared\n", p.n,
		       o.composite ? " composite" : "", p.m, p.npasses, p.shared ? "shared" : "global",
		       p.signals, p.threads, p.shared_bytes);
	}
	o.composite = 0;
	/* fit: 6144 vec2 fits 48 KiB, 6145.. does not; vec4 splits */
	struct fft_plan p;
	assert_int_equal(fft_plan_make(6144, &o, &p), 0);
	assert_true(p.shared);
	assert_int_equal(fft_plan_make(8192, &o, &p), 0);
	assert_false(p.shared);
	o.technique = FFT_TECH_SHARED;
	assert_int_equal(fft_plan_make(8192, &o, &p), FFT_PLAN_E_NOFIT);
	o.technique = FFT_TECH_AUTO;
	o.components = 4;
	assert_int_equal(fft_plan_make(4096, &o, &p), 0);
	assert_true(p.shared && p.split);
	assert_int_equal(fft_plan_make(2048, &o, &p), 0);
	assert_true(p.shared && !p.split);
	o.technique = FFT_TECH_GLOBAL;
	assert_int_equal(fft_plan_make(64, &o, &p), 0);
	assert_false(p.shared);
	/* columns: several neighbouring signals per group for coalesced reads */
	o.technique = FFT_TECH_AUTO;
	o.components = 2;
	o.signals_adjacent = 1;
	assert_int_equal(fft_plan_make(256, &o, &p), 0);
	assert_true(p.shared && p.signals * 8 >= 64);
	assert_int_equal(fft_plan_make(1080, &o, &p), 0);
	assert_true(p.shared && p.signals >= 4);
	/* ... but a lone vec4 column per group takes global passes in auto */
	o.components = 4;
	o.max_radix = 0;
	assert_int_equal(fft_plan_make(2744, &o, &p), 0);
	assert_false(p.shared);
	assert_int_equal(p.npasses, 4); /* 7 * 7 * 7 * 8 */
	o.technique = FFT_TECH_SHARED;
	assert_int_equal(fft_plan_make(2744, &o, &p), 0);
	assert_true(p.shared && p.signals == 1);
	o.components = 2;
	assert_int_equal(fft_plan_make(0, &o, &p), FFT_PLAN_E_SIZE);
}

/* Signals a blocked exchange round must hold at least: c over its largest divisor that is at
 * most the rounds allowed. */
static int least_xsig(int c, int rounds)
{
	int r = rounds > 1 ? rounds : 1;
	while (c % r)
		r--;
	return c / r;
}

/* Checks a blocked plan's sweeps: they cover the passes in order, multiply to m, start at the
 * pass strides, fit shared memory in their exchange rounds (the fewest that fit, a divisor of
 * the signals, at most those allowed) and the invocation limit, hold at most 64 values an
 * invocation; and no grouping with fewer sweeps fits (every k consecutive passes that would
 * merge two neighbouring sweeps are too long). Prints the grouping. */
static void check_blocked(int n, const struct fft_plan_opts *o, int want_sweeps)
{
	struct fft_plan p;
	assert_int_equal(fft_plan_make(n, o, &p), 0);
	assert_true(p.blocked);
	assert_false(p.shared);
	int comps = o->components == 4 ? 4 : 2, next = 0;
	long long prod = 1;
	char text[256];
	int at = snprintf(text, sizeof text, "n %5d vec%d%s: %d sweeps of %d signals:", n, comps,
	                  o->half ? " half" : "", p.nsweeps, p.signals);
	for (int i = 0; i < p.nsweeps; i++) {
		const struct fft_sweep *sw = &p.sweep[i];
		assert_int_equal(sw->first, next);
		assert_true(sw->count >= 1);
		long long len = 1;
		for (int k = sw->first; k < sw->first + sw->count; k++)
			len *= p.pass[k].radix;
		assert_true(len == sw->len);
		assert_int_equal(sw->stride, p.pass[sw->first].ns);
		assert_true(sw->rounds >= 1 && p.signals % sw->rounds == 0 && sw->rounds <= p.rounds);
		assert_true(sw->rounds == 1 || sw->rounds <= o->rounds);
		long long xbytes = (long long)sw->len * comps * 4;
		assert_true(xbytes * (p.signals / sw->rounds) <= o->shared_limit);
		assert_true(xbytes * (p.signals / sw->rounds) <= p.shared_bytes);
		for (int r = 1; r < sw->rounds; r++) /* no fewer rounds fit */
			assert_true(p.signals % r || xbytes * (p.signals / r) > o->shared_limit);
		assert_true(sw->threads * p.signals <= o->max_invocations);
		assert_true(sw->vregs <= 64);
		for (int k = sw->first; k < sw->first + sw->count; k++) {
			int nb = sw->len / p.pass[k].radix;
			assert_true((nb + sw->threads - 1) / sw->threads * p.pass[k].radix <= sw->vregs);
		}
		/* merging with the next sweep would not fit shared memory or the values */
		if (i + 1 < p.nsweeps)
			assert_true((long long)sw->len * p.sweep[i + 1].len * comps * 4 *
			            least_xsig(p.signals, o->rounds) > o->shared_limit ||
			            (long long)sw->len * p.sweep[i + 1].len > 64LL * o->max_invocations / p.signals);
		next += sw->count;
		prod *= sw->len;
		at += snprintf(text + at, sizeof text - (size_t)at, " %s%d (x%d", i ? "x " : "",
		               sw->len, sw->threads);
		if (sw->rounds > 1)
			at += snprintf(text + at, sizeof text - (size_t)at, ", %d rounds", sw->rounds);
		at += snprintf(text + at, sizeof text - (size_t)at, ")");
	}
	assert_int_equal(next, p.npasses);
	assert_true(prod == p.m);
	printf("%s\n", text);
	if (want_sweeps)
		assert_int_equal(p.nsweeps, want_sweeps);
}

static void test_blocked(void **state)
{
	(void)state;
	/* the H200's limits (48 KiB, 1024 invocations), and llvmpipe's 32 KiB */
	struct fft_plan_opts o = {8, FFT_TECH_BLOCKED, FFT_TW_COMPUTED, 2, 49152, 1024, 1, 0, 0, 0, 0, 0, 0, 0};
	int cols[] = {1024, 2048, 4096, 1080, 2187, 4375, 1350, 2240, 1344, 8192, 65536};
	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
		o.components = 2;
		o.half = 0;
		check_blocked(cols[i], &o, cols[i] <= 65536 ? 2 : 0);
		o.components = 4;
		check_blocked(cols[i], &o, cols[i] <= 65536 ? 2 : 0);
		o.half = 1;
		check_blocked(cols[i], &o, 0);
	}
	o.components = 2;
	o.half = 0;
	/* balanced: 4096 = 64 x 64 rather than 512 x 8; 1024 = (8*8) x (8*2) */
	struct fft_plan p;
	assert_int_equal(fft_plan_make(4096, &o, &p), 0);
	assert_true(p.nsweeps == 2 && p.sweep[0].len == 64 && p.sweep[1].len == 64);
	assert_int_equal(p.signals, 8); /* 64-byte rows of vec2 */
	assert_int_equal(fft_plan_make(1024, &o, &p), 0);
	assert_true(p.nsweeps == 2 && p.sweep[0].len == 64 && p.sweep[1].len == 16);
	assert_int_equal(p.rounds, 1); /* none asked for */
	/* exchange rounds: whole columns in one sweep, c/rounds signals in shared at a time */
	o.rounds = 8;
	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
		o.signals = 4; /* 32-byte rows */
		check_blocked(cols[i], &o, cols[i] <= 4375 ? 1 : 0);
		o.signals = 8; /* 64-byte rows */
		check_blocked(cols[i], &o, cols[i] <= 4375 ? 1 : 0);
	}
	o.signals = 4;
	assert_int_equal(fft_plan_make(4096, &o, &p), 0); /* 32 KiB a signal: one a round */
	assert_true(p.nsweeps == 1 && p.rounds == 4 && p.shared_bytes == 32768);
	assert_int_equal(fft_plan_make(2048, &o, &p), 0); /* two signals a round */
	assert_true(p.nsweeps == 1 && p.rounds == 2 && p.shared_bytes == 32768);
	assert_int_equal(fft_plan_make(1350, &o, &p), 0); /* all four fit: no rounds */
	assert_true(p.nsweeps == 1 && p.rounds == 1);
	o.rounds = 2; /* too few for 4096: two sweeps, one of them in rounds */
	check_blocked(4096, &o, 2);
	o.signals = 3; /* rounds divide the signals: 3 x 4096 fits in three rounds, not two */
	o.rounds = 2;
	check_blocked(4096, &o, 2);
	o.rounds = 3;
	check_blocked(4096, &o, 1);
	o.signals = 2; /* 8192 vec2 is 64 KiB a signal: never one sweep */
	o.rounds = 8;
	check_blocked(8192, &o, 2);
	o.shared_limit = 32768; /* llvmpipe: 4096 vec2 in four rounds of one signal */
	o.signals = 4;
	assert_int_equal(fft_plan_make(4096, &o, &p), 0);
	assert_true(p.nsweeps == 1 && p.rounds == 4);
	o.shared_limit = 49152;
	o.signals = 0;
	o.rounds = 0;
	/* one sweep when the whole column fits */
	check_blocked(360, &o, 1);
	check_blocked(2, &o, 1);
	o.shared_limit = 32768;
	check_blocked(512, &o, 1);
	check_blocked(1 << 20, &o, 0);
	/* asked for: signals and a cap on invocations */
	o.signals = 32;
	o.threads = 2;
	check_blocked(4096, &o, 0);
	assert_int_equal(fft_plan_make(4096, &o, &p), 0);
	assert_true(p.signals == 32 && p.threads <= 2);
	o.signals = 0;
	o.threads = 0;
	/* half storage: 64-byte rows are 16 vec2 */
	o.half = 1;
	assert_int_equal(fft_plan_make(4096, &o, &p), 0);
	assert_int_equal(p.signals, 16);
	/* n = 1 runs nothing; rows are refused; a group of signals that leaves no room fails */
	assert_int_equal(fft_plan_make(1, &o, &p), 0);
	assert_false(p.blocked);
	o.signals_adjacent = 0;
	assert_int_equal(fft_plan_make(64, &o, &p), FFT_PLAN_E_ROWS);
	o.signals_adjacent = 1;
	o.signals = 1024;
	o.shared_limit = 4096;
	assert_int_equal(fft_plan_make(64, &o, &p), FFT_PLAN_E_NOFIT);
	assert_string_equal(fft_technique_name(FFT_TECH_BLOCKED), "blocked");
}

/* A plan's exchanges as text, one letter each: m shared, p padded, s subgroup transpose. */
static const char *xch(const struct fft_plan *p)
{
	static char buf[FFT_MAX_PASSES + 1];
	int k = 0;
	for (int i = 0; i + 1 < p->npasses; i++)
		buf[k++] = p->pass[i].shuffle ? 's' : p->pass[i].pad ? 'p' : 'm';
	buf[k] = 0;
	return buf;
}

static void test_exchanges(void **state)
{
	(void)state;
	/* an H200's limits (48 KiB, 1024 invocations, subgroups of 32): vec4 rows */
	struct fft_plan_opts o = {.max_radix = 8, .technique = FFT_TECH_AUTO, .components = 4,
	                          .shared_limit = 49152, .max_invocations = 1024, .subgroup = 32};
	static const struct { int n; const char *sg, *pad; int pad_bytes; } rows4[] = {
		{1024, "smm", "pmm", (1024 + 127) * 16},       /* 8 8 8 2 */
		{1920, "mmsm", "mmmm", 1920 * 16},             /* 5 3 8 8 2 */
		{2048, "smm", "pmm", (2048 + 255) * 16},       /* 8 8 8 4 */
		{2240, "mms", "mmm", 2240 * 16},               /* 7 5 8 8 */
		{4375, "mmmm", "mmmm", 4375 * 8},              /* 7 5 5 5 5, split */
		{4096, "sms", "ppm", (4096 + 255) * 8},        /* 8 8 8 8, split */
	};
	struct fft_plan p;
	for (size_t i = 0; i < sizeof rows4 / sizeof rows4[0]; i++) {
		o.bank_pad = 0;
		o.subgroup = 32;
		assert_int_equal(fft_plan_make(rows4[i].n, &o, &p), 0);
		printf("n %d vec4 rows: subgroup %s", rows4[i].n, xch(&p));
		assert_string_equal(xch(&p), rows4[i].sg);
		assert_int_equal(p.subgroup, strchr(rows4[i].sg, 's') ? 32 : 0);
		o.bank_pad = 1;
		o.subgroup = 0;
		assert_int_equal(fft_plan_make(rows4[i].n, &o, &p), 0);
		printf(", padded %s (%d B)\n", xch(&p), p.shared_bytes);
		assert_string_equal(xch(&p), rows4[i].pad);
		assert_int_equal(p.shared_bytes, rows4[i].pad_bytes);
	}
	/* the padded array past the limit: the plain layout, same shape */
	o.shared_limit = 32768;
	assert_int_equal(fft_plan_make(2048, &o, &p), 0);
	assert_true(p.shared && !p.split && p.bank_pad == 0 && p.shared_bytes == 32768);
	assert_string_equal(xch(&p), "mmm");
	/* invariants over every length to 4100, vec2 and vec4, rows and columns, each switch alone
	 * and both (k bit 0: vec4, bit 1: columns, bits 2-3: padding, subgroup) */
	int counts[3] = {0, 0, 0};
	for (int n = 2; n <= 4100; n++)
		for (int k = 4; k < 16; k++) {
			struct fft_plan_opts q = {.max_radix = 8, .technique = FFT_TECH_AUTO,
			                          .components = k & 1 ? 4 : 2, .shared_limit = 49152,
			                          .max_invocations = 1024, .signals_adjacent = (k >> 1) & 1,
			                          .bank_pad = (k >> 2) & 1, .subgroup = k & 8 ? 32 : 0};
			if (fft_plan_make(n, &q, &p) || !p.shared || p.bluestein)
				continue;
			int elem = p.split ? 8 : q.components * 4, lb = elem == 16 ? 3 : 4, any = 0;
			for (int i = 0; i < p.npasses; i++) {
				const struct fft_pass *x = &p.pass[i];
				if (x->shuffle) {
					int w = 32 / p.signals;
					assert_true(i + 1 < p.npasses && p.pass[i + 1].radix == x->radix);
					assert_true(!(x->radix & (x->radix - 1)) && x->radix <= w);
					assert_true(p.threads % w == 0 && p.threads <= p.m);
					assert_false(x->pad || p.pass[i + 1].shuffle);
					counts[0]++;
				}
				if (x->pad) {
					assert_true(i + 1 < p.npasses && x->radix % 2 == 0);
					assert_true(x->ns * p.signals < (1 << lb));
					any = 1;
					counts[1]++;
				}
			}
			long long plain = (long long)p.signals * p.m * elem;
			assert_true(p.shared_bytes <= q.shared_limit);
			assert_true(any ? p.shared_bytes > plain && p.bank_pad == lb
			                : p.shared_bytes == plain && p.bank_pad == 0);
			/* off, the plan is what it was */
			struct fft_plan r;
			q.bank_pad = q.subgroup = 0;
			assert_int_equal(fft_plan_make(n, &q, &r), 0);
			assert_true(r.shared_bytes == plain && r.threads == p.threads && r.signals == p.signals);
			for (int i = 0; i < r.npasses; i++)
				assert_false(r.pass[i].pad || r.pass[i].shuffle);
			counts[2]++;
		}
	printf("%d shared plans: %d transposes, %d padded exchanges\n", counts[2], counts[0], counts[1]);
	assert_true(counts[0] > 100 && counts[1] > 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_factorization),
		cmocka_unit_test(test_native_and_good_size),
		cmocka_unit_test(test_passes),
		cmocka_unit_test(test_exchanges),
		cmocka_unit_test(test_blocked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
