/* FFT planning on the CPU: factorization strategy, pass strides, shared-memory fit, blocked
 * sweeps, fft_good_size, padded exchanges. No GPU needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/kernel_shape.h"
#include "gles/fft_plan.h"
#include "gles/wisdom.h"

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

/* The radices multiply to n: odd primes first, largest first, then radix-8 passes and at most
 * one smaller power of two (2 or 4), last. */
static void check_factor(int n)
{
	int r[FFT_MAX_PASSES];
	int c = fft_factor(n, r);
	assert_true(c >= 0);
	long long prod = 1;
	int seen_pow2 = 0, prev_odd = 1 << 30;
	for (int i = 0; i < c; i++) {
		prod *= r[i];
		int pow2 = (r[i] & (r[i] - 1)) == 0;
		if (pow2) {
			assert_true(r[i] >= 2 && r[i] <= 8);
			if (r[i] < 8) /* the remainder comes last */
				assert_int_equal(i, c - 1);
			seen_pow2 = 1;
		} else {
			assert_false(seen_pow2);       /* odd factors come first */
			assert_true(r[i] <= prev_odd); /* largest first */
			prev_odd = r[i];
			assert_int_equal(largest_prime(r[i]), r[i]); /* an odd prime */
		}
	}
	assert_true(prod == n);
}

static void test_factorization(void **state)
{
	(void)state;
	for (int n = 1; n <= 5000; n++)
		check_factor(n);
	int big[] = {1 << 20, 3 * 5 * 7 * 11 * 13 * 16, 4099, 65537, 1 << 24, 16777213,
	             3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3, 9765625};
	for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
		check_factor(big[i]);
	int r[FFT_MAX_PASSES];
	assert_int_equal(fft_factor(1080, r), 5); /* 5, 3, 3, 3, 8 */
	assert_int_equal(r[0], 5);
	assert_int_equal(r[4], 8);
	assert_int_equal(fft_factor(2048, r), 4); /* 8, 8, 8, 4 */
	assert_int_equal(r[3], 4);
	assert_int_equal(fft_factor(4375, r), 5); /* 7, 5, 5, 5, 5 */
	assert_true(r[0] == 7 && r[4] == 5);
	assert_int_equal(fft_factor(1, r), 0);
	assert_int_equal(fft_factor(0, r), FFT_PLAN_E_SIZE);
	assert_int_equal(fft_factor(FFT_MAX_N + 1, r), FFT_PLAN_E_SIZE);
}

static int smooth7(int m)
{
	for (int f = 2; f <= 7; f++)
		while (m % f == 0)
			m /= f;
	return m == 1;
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
		assert_true(smooth7(g));
		/* nothing in [n, 2n] that is 7-smooth is cheaper, or as cheap and shorter */
		for (int m = n; m <= 2 * n; m++) {
			if (!smooth7(m))
				continue;
			assert_true(fft_cost(m) > fft_cost(g) || (fft_cost(m) == fft_cost(g) && m >= g));
		}
	}
	assert_int_equal(fft_good_size(1080 + 256 - 1), 1344);
	assert_int_equal(fft_good_size(1920 + 256 - 1), 2240); /* not 2187 = 3^7: 4 passes, not 7 */
	assert_int_equal(fft_good_size(3840 + 512 - 1), 4375); /* 5^4*7: 5 passes, not 4374's 8 */
	assert_int_equal(fft_good_size(1208), 1280);           /* 5 8 8 4, not 1225's 5 5 7 7 */
	assert_int_equal(fft_good_size(1), 1);
	assert_true(fft_point_cost(7 * 7 * 64) > fft_point_cost(5 * 5 * 64));
	assert_true(fft_point_cost(27 * 64) > fft_point_cost(5 * 64 * 4));
	/* a whole frame's span: the frame and the kernel's longer reach past its centre, at least
	 * the kernel; a centre outside it: the linear convolution's n + k - 1 */
	assert_int_equal(fft_conv_span(1920, 256, 128), 2048);
	assert_int_equal(fft_conv_span(1920, 255, 127), 2047);
	assert_int_equal(fft_conv_span(3840, 512, 256), 4096);
	assert_int_equal(fft_conv_span(100, 9, 0), 108);
	assert_int_equal(fft_conv_span(100, 9, 8), 108);
	assert_int_equal(fft_conv_span(100, 9, 3), 105);
	assert_int_equal(fft_conv_span(100, 1, 0), 100);
	assert_int_equal(fft_conv_span(5, 31, 30), 35);
	assert_int_equal(fft_conv_span(5, 31, 15), 31);
	assert_int_equal(fft_conv_span(100, 9, 9), 108);
	assert_int_equal(fft_conv_span(100, 9, -1), 108);
	for (int n = 1; n < 40; n++)
		for (int k = 1; k < 40; k++)
			for (int c = 0; c < k; c++) {
				int s = fft_conv_span(n, k, c);
				assert_true(s >= k && s <= n + k - 1);
				assert_true(s - (k - 1 - c) >= n && s - c >= n); /* both tails in the zeros */
			}
}

/* a memory bound of *ctx samples */
static int fits_area(const void *ctx, int pw, int ph)
{
	return (size_t)pw * ph <= *(const size_t *)ctx;
}

/* fft_conv_size: the height is fft_good_size's, the width the cheapest for the rows it is
 * transformed over and the columns it adds, the benchmark's frames at the sizes measured
 * fastest on the H200 (bench/RESULTS.md, "Padded sizes by a weighted cost") */
static void test_conv_size(void **state)
{
	(void)state;
	int pw, ph;
	fft_conv_frame_size(1920, 1080, 256, 256, 128, 128, &pw, &ph);
	assert_int_equal(pw, 2048);
	assert_int_equal(ph, 1280);
	fft_conv_frame_size(3840, 2160, 512, 512, 256, 256, &pw, &ph);
	assert_int_equal(pw, 4096);
	assert_int_equal(ph, 2560);
	fft_conv_frame_size(1920, 1080, 1920, 1080, 960, 540, &pw, &ph);
	assert_int_equal(pw, 2880); /* not 3136 = 7^2 2^6: the columns it adds */
	assert_int_equal(ph, 1792);
	assert_int_equal(fft_good_size(2880 + 250), 3136); /* the width alone */
	/* the aperture's grid keeps length x passes (its images drawn so): 2 x 33 -> 70 (7 5 2),
	 * 2 x 171 -> 343 (7 7 7) */
	assert_int_equal(kshape_aperture_grid(33), 70);
	assert_int_equal(kshape_aperture_grid(171), 343);
	for (int h = 1; h < 300; h += 37)
		for (int sw = 1; sw < 700; sw += 13)
			for (int sh = 1; sh < h + 200; sh += 23) {
				fft_conv_size(h, sw, sh, &pw, &ph);
				assert_int_equal(ph, fft_good_size(sh));
				assert_true(pw >= sw && pw <= 2 * sw && smooth7(pw));
				double rows = h < sh ? h : sh, cols = ph * fft_point_cost(ph);
				double best = pw * (rows * fft_point_cost(pw) + cols);
				for (int m = sw; m <= 2 * sw; m++)
					if (smooth7(m)) {
						double c = m * (rows * fft_point_cost(m) + cols);
						assert_true(c > best || (c == best && m >= pw));
					}
			}
	/* a tile of 1801x2564 in a frame of 2731 rows: the rows transformed are the tile's 2564 */
	fft_conv_size(2731, 1801, 2564, &pw, &ph);
	assert_int_equal(pw, 1875);
	assert_int_equal(ph, 2625);
	/* the weights: 2 for the memory traffic, radix 5 or 8 1, radix 3 1.25, radix 7 1.5 */
	assert_true(fft_point_cost(2880) == 7.5); /* 5 3 3 8 8 */
	assert_true(fft_point_cost(1280) == 6.0); /* 5 8 8 4 */
	assert_true(fft_point_cost(1225) == 7.0); /* 7 7 5 5 */
	assert_true(fft_point_cost(343) == 6.5);  /* 7 7 7 */
	/* past FFT_SHARED_MAX_N a pass weighs 1 whatever its radix: 7840 (7 7 5 8 4) over 8000 */
	assert_true(fft_point_cost(7840) == 7.0);
	assert_int_equal(fft_good_size(7809), 7840);
	assert_int_equal(fft_good_size(8321), 8575); /* 5^2 7^3 */
	/* the fewest samples: the next 7-smooth length */
	assert_int_equal(fft_smallest_size(97), 98);
	assert_int_equal(fft_smallest_size(141), 144);
	assert_int_equal(fft_smallest_size(1), 1);
	assert_int_equal(fft_smallest_size(FFT_MAX_N), FFT_MAX_N);
	assert_int_equal(fft_smallest_size(FFT_MAX_N + 1), 0);
	/* under a memory bound: the fewest samples where the cheapest does not fit and they do */
	size_t room = 98 * 144;
	fft_conv_size_fit(136, 97, 141, fits_area, &room, &pw, &ph);
	assert_true(pw == 98 && ph == 144);
	room = 100 * 160;
	fft_conv_size_fit(136, 97, 141, fits_area, &room, &pw, &ph);
	assert_true(pw == 100 && ph == 160);
	room = 98 * 144 - 1; /* neither fits: the cheapest, for the caller to tile */
	fft_conv_size_fit(136, 97, 141, fits_area, &room, &pw, &ph);
	assert_true(pw == 100 && ph == 160);
	fft_conv_size(10, FFT_MAX_N + 1, 20, &pw, &ph);
	assert_int_equal(pw, 0);
	fft_conv_size(10, 20, INT_MAX, &pw, &ph);
	assert_int_equal(ph, 0);
}

static void test_passes(void **state)
{
	(void)state;
	struct fft_plan_opts o = {.technique = FFT_TECH_AUTO, .components = 2, .shared_limit = 49152,
	                          .max_invocations = 1024};
	int ns_[] = {1, 2, 7, 64, 97, 360, 1000, 1080, 1920, 2048, 2187, 4096, 4099, 6144, 8192, 1350,
	             4375};
	const size_t count = sizeof ns_ / sizeof ns_[0];
	for (size_t i = 0; i < count; i++) {
		int n = ns_[i];
		struct fft_plan p;
		assert_int_equal(fft_plan_make(n, &o, &p), 0);
		assert_int_equal(p.n, n);
		assert_int_equal(p.bluestein, !fft_is_native(n));
		if (p.bluestein)
			assert_true(p.m >= 2 * p.n - 1);
		long long ns = 1;
		for (int k = 0; k < p.npasses; k++) {
			assert_int_equal(p.pass[k].ns, ns);
			ns *= p.pass[k].radix;
		}
		assert_true(ns == p.m);
		if (p.shared) {
			assert_true(p.shared_bytes <= o.shared_limit);
			assert_true(p.signals * p.threads <= o.max_invocations);
			/* padded only at power-of-two lengths from FFT_PAD_FROM */
			long long plain = (long long)p.signals * p.m * 8;
			if (p.bank_pad)
				assert_true(p.m >= FFT_PAD_FROM && !(p.m & (p.m - 1)) && p.shared_bytes > plain);
			else
				assert_true(p.shared_bytes == plain);
		}
		printf("n %5d: m %5d, %d passes, %s, %d x %d invocations, %d B shared\n", p.n, p.m,
		       p.npasses, p.shared ? "shared" : "global", p.signals, p.threads, p.shared_bytes);
	}
	/* fit: 6144 vec2 fits 48 KiB, 6145.. does not; vec4 past FFT_ROUNDS_ABOVE exchanges in four
	 * float rounds up to FFT_FLOAT_ROUNDS_TO where two vec2 rounds fit, in vec2 rounds past it
	 * and past what fits whole */
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
	assert_true(p.shared && p.split == 2);
	assert_int_equal(fft_plan_make(FFT_ROUNDS_ABOVE * 2, &o, &p), 0);
	assert_true(p.shared && p.split == 2);
	assert_int_equal(fft_plan_make(FFT_ROUNDS_ABOVE, &o, &p), 0);
	assert_true(p.shared && !p.split);
	assert_int_equal(fft_plan_make(FFT_FLOAT_ROUNDS_TO, &o, &p), 0);
	assert_true(p.shared && p.split == 2);
	assert_int_equal(fft_plan_make(4375, &o, &p), 0); /* the 2160p k512 bloom's rows */
	assert_true(p.shared && p.split == 1);
	assert_int_equal(fft_plan_make(6144, &o, &p), 0); /* 48 KiB in vec2 rounds */
	assert_true(p.shared && p.split == 1);
	assert_int_equal(fft_plan_make(8192, &o, &p), 0); /* vec2 rounds do not fit: global */
	assert_false(p.shared);
	struct fft_plan_opts small = o; /* 12 KiB: 1024 whole vec4 do not fit, vec2 rounds do */
	small.shared_limit = 12288;
	assert_int_equal(fft_plan_make(1024, &small, &p), 0);
	assert_true(p.shared && p.split == 1);
	assert_int_equal(fft_plan_make(2048, &small, &p), 0); /* nor do 2048 in vec2 rounds */
	assert_false(p.shared);
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
	assert_int_equal(fft_plan_make(2744, &o, &p), 0);
	assert_false(p.shared);
	assert_int_equal(p.npasses, 4); /* 7 * 7 * 7 * 8 */
	o.technique = FFT_TECH_SHARED; /* in vec2 rounds (past 1024) two columns fit a group */
	assert_int_equal(fft_plan_make(2744, &o, &p), 0);
	assert_true(p.shared && p.split && p.signals == 2);
	o.components = 2;
	assert_int_equal(fft_plan_make(0, &o, &p), FFT_PLAN_E_SIZE);
}

/* Checks a blocked plan's sweeps: they cover the passes in order, multiply to m, start at the
 * pass strides, fit shared memory with all the group's signals at once and the invocation
 * limit, hold at most 64 values an invocation; and no grouping with fewer sweeps fits (every k
 * consecutive passes that would merge two neighbouring sweeps are too long). Prints the
 * grouping. */
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
		long long xbytes = (long long)sw->len * comps * 4;
		assert_true(xbytes * p.signals <= o->shared_limit);
		assert_true(xbytes * p.signals <= p.shared_bytes);
		assert_true(sw->threads * p.signals <= o->max_invocations);
		assert_true(sw->vregs <= 64);
		for (int k = sw->first; k < sw->first + sw->count; k++) {
			int nb = sw->len / p.pass[k].radix;
			assert_true((nb + sw->threads - 1) / sw->threads * p.pass[k].radix <= sw->vregs);
		}
		/* merging with the next sweep would not fit shared memory or the values */
		if (i + 1 < p.nsweeps)
			assert_true((long long)sw->len * p.sweep[i + 1].len * comps * 4 * p.signals >
			            o->shared_limit ||
			            (long long)sw->len * p.sweep[i + 1].len > 64LL * o->max_invocations / p.signals);
		next += sw->count;
		prod *= sw->len;
		at += snprintf(text + at, sizeof text - (size_t)at, " %s%d (x%d)", i ? "x " : "",
		               sw->len, sw->threads);
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
	struct fft_plan_opts o = {.technique = FFT_TECH_BLOCKED, .components = 2, .shared_limit = 49152,
	                          .max_invocations = 1024, .signals_adjacent = 1};
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
	/* 4096 vec2 in 32-byte rows (4 signals) is 128 KiB a group: still two sweeps */
	o.signals = 4;
	check_blocked(4096, &o, 2);
	o.signals = 0;
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

/* A plan's exchanges as text, one letter each: m shared, p padded. */
static const char *xch(const struct fft_plan *p)
{
	static char buf[FFT_MAX_PASSES + 1];
	int k = 0;
	for (int i = 0; i + 1 < p->npasses; i++)
		buf[k++] = p->pass[i].pad ? 'p' : 'm';
	buf[k] = 0;
	return buf;
}

static void test_exchanges(void **state)
{
	(void)state;
	/* an H200's limits (48 KiB, 1024 invocations): vec4 rows; pad_from 2: every power of two */
	struct fft_plan_opts o = {.technique = FFT_TECH_AUTO, .components = 4, .shared_limit = 49152,
	                          .max_invocations = 1024};
	static const struct { int n; const char *rule, *all; int pad_bytes; } rows4[] = {
		{1024, "mmm", "pmm", (1024 + 127) * 16},  /* 8 8 8 2 */
		{1920, "mmmm", "mmmm", 1920 * 4},         /* 5 3 8 8 2: float rounds (past 1024) */
		{2048, "mmm", "ppm", (2048 + 63) * 4},    /* 8 8 8 4, float rounds */
		{2240, "mmm", "mmm", 2240 * 4},           /* 7 5 8 8 */
		{4375, "mmmm", "mmmm", 4375 * 4},         /* 7 5 5 5 5 */
		{4096, "ppm", "ppm", (4096 + 127) * 4},   /* 8 8 8 8, padded by the rule */
	};
	struct fft_plan p;
	for (size_t i = 0; i < sizeof rows4 / sizeof rows4[0]; i++) {
		o.pad_from = 0;
		assert_int_equal(fft_plan_make(rows4[i].n, &o, &p), 0);
		printf("n %d vec4 rows: %s (%d B)", rows4[i].n, xch(&p), p.shared_bytes);
		assert_string_equal(xch(&p), rows4[i].rule);
		o.pad_from = 2;
		assert_int_equal(fft_plan_make(rows4[i].n, &o, &p), 0);
		printf(", every power of two padded: %s (%d B)\n", xch(&p), p.shared_bytes);
		assert_string_equal(xch(&p), rows4[i].all);
		assert_int_equal(p.shared_bytes, strchr(rows4[i].all, 'p') ? rows4[i].pad_bytes
		                                                           : rows4[i].n * (16 >> p.split));
	}
	/* the padded array past the limit: the plain layout, same shape (vec2 rounds asked for in
	 * 32 KiB; 16 KiB for a whole-vec4 1024) */
	o.shared_limit = 32768;
	o.pad_from = 0;
	o.split = 1;
	assert_int_equal(fft_plan_make(4096, &o, &p), 0);
	assert_true(p.shared && p.split == 1 && p.bank_pad == 0 && p.shared_bytes == 32768);
	assert_string_equal(xch(&p), "mmm");
	o.split = 0;
	o.shared_limit = 16384;
	o.pad_from = 2;
	assert_int_equal(fft_plan_make(1024, &o, &p), 0);
	assert_true(p.shared && !p.split && p.bank_pad == 0 && p.shared_bytes == 16384);
	assert_string_equal(xch(&p), "mmm");
	/* invariants over every length to 8200, vec2 and vec4, rows and columns, by the rule and
	 * with every power of two padded (k bit 0: vec4, bit 1: columns, bit 2: pad_from 2) */
	int counts[3] = {0, 0, 0};
	for (int n = 2; n <= 8200; n++)
		for (int k = 0; k < 8; k++) {
			struct fft_plan_opts q = {.technique = FFT_TECH_AUTO, .components = k & 1 ? 4 : 2,
			                          .shared_limit = 49152, .max_invocations = 1024,
			                          .signals_adjacent = (k >> 1) & 1,
			                          .pad_from = k & 4 ? 2 : 0};
			if (fft_plan_make(n, &q, &p) || !p.shared || p.bluestein)
				continue;
			int elem = q.components * 4 >> p.split, lb = elem == 16 ? 3 : elem == 8 ? 4 : 5;
			int any = 0;
			int pow2 = !(p.m & (p.m - 1));
			for (int i = 0; i < p.npasses; i++) {
				const struct fft_pass *x = &p.pass[i];
				if (x->pad) {
					assert_true(pow2 && p.m >= (q.pad_from ? q.pad_from : FFT_PAD_FROM));
					assert_true(i + 1 < p.npasses && x->radix % 2 == 0);
					assert_true(x->ns * p.signals < (1 << lb));
					any = 1;
					counts[k & 4 ? 1 : 0]++;
				}
			}
			long long plain = (long long)p.signals * p.m * elem;
			assert_true(p.shared_bytes <= q.shared_limit);
			assert_true(any ? p.shared_bytes > plain && p.bank_pad == lb
			                : p.shared_bytes == plain && p.bank_pad == 0);
			counts[2]++;
		}
	printf("%d shared plans: %d padded exchanges by the rule, %d with every power of two\n",
	       counts[2], counts[0], counts[1]);
	assert_true(counts[0] > 0 && counts[1] > counts[0]);
}

/* The built-in rule against the H200's measured winners (gles/wisdom/nvidia-h200.txt, float32,
 * the lines that fit its rule; bench/RESULTS.md "Built-in FFT choices" and "vec2 in float
 * rounds" have the tables), and what it leaves to the plan: short lengths, 1024-long columns
 * past the one-pass count, software renderers. The rows of 1716 and 2187 measured fastest on
 * invocation counts that fill their odd radices' butterflies (156, 243), which the shipped
 * wisdom holds and the rule does not make (as a rule such counts lost at 2048). */
static void test_rule(void **state)
{
	(void)state;
	struct {
		int n, adjacent, comps, half, count, technique, threads, signals, split;
	} w[] = {
		/* rows: shared, 256 invocations up to 2048, 512 above (technique auto: the plan
		 * falls back to global passes where the signal does not fit, as 8192 measured);
		 * vec2 float32 from 2048 in float rounds */
		{1024, 0, 2, 0, 1024, FFT_TECH_AUTO, 256, 0, 0},
		{1920, 0, 2, 0, 1080, FFT_TECH_AUTO, 256, 0, 0},
		{2048, 0, 2, 0, 2048, FFT_TECH_AUTO, 256, 0, 1},
		{2187, 0, 2, 0, 1350, FFT_TECH_AUTO, 512, 0, 1},
		{2240, 0, 4, 0, 1344, FFT_TECH_AUTO, 512, 0, 0},
		{4096, 0, 2, 0, 4096, FFT_TECH_AUTO, 512, 0, 1},
		{4096, 0, 2, 1, 4096, FFT_TECH_AUTO, 512, 0, 0},
		{4375, 0, 4, 1, 2744, FFT_TECH_AUTO, 512, 0, 0},
		{8192, 0, 4, 0, 8192, FFT_TECH_AUTO, 512, 0, 0},
		/* vec2 float32 columns, at most 2048 of them: one pass, 8 columns a group of 128
		 * invocations to 1152, 4 of 256 to 1536 */
		{1024, 1, 2, 0, 1024, FFT_TECH_SHARED, 128, 8, 1},
		{1080, 1, 2, 0, 1920, FFT_TECH_SHARED, 128, 8, 1},
		{1152, 1, 2, 0, 2048, FFT_TECH_SHARED, 128, 8, 1},
		{1200, 1, 2, 0, 1920, FFT_TECH_SHARED, 256, 4, 1},
		{1536, 1, 2, 0, 1920, FFT_TECH_SHARED, 256, 4, 1},
		/* columns longer than 1024 otherwise: blocked, 128-byte rows, 8 invocations */
		{1080, 1, 2, 0, 3840, FFT_TECH_BLOCKED, 8, 16, 0},
		{1350, 1, 2, 0, 2187, FFT_TECH_BLOCKED, 8, 16, 0},
		{1600, 1, 2, 0, 1920, FFT_TECH_BLOCKED, 8, 16, 0},
		{1344, 1, 4, 0, 2240, FFT_TECH_BLOCKED, 8, 8, 0},
		{2744, 1, 4, 0, 4375, FFT_TECH_BLOCKED, 8, 8, 0},
		{4096, 1, 2, 0, 4096, FFT_TECH_BLOCKED, 8, 16, 0},
		/* float16 vec4 columns: global passes */
		{1344, 1, 4, 1, 2240, FFT_TECH_GLOBAL, 0, 0, 0},
		{2744, 1, 4, 1, 4375, FFT_TECH_GLOBAL, 0, 0, 0},
		/* 1024-long columns past 2048 of them, and short lengths: the plan's choice */
		{1024, 1, 2, 0, 4096, FFT_TECH_AUTO, 0, 0, 0},
		{1024, 1, 4, 0, 1024, FFT_TECH_AUTO, 0, 0, 0},
		{512, 0, 2, 0, 512, FFT_TECH_AUTO, 0, 0, 0},
		{600, 1, 4, 0, 600, FFT_TECH_AUTO, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		struct fft_choice c;
		fft_plan_rule(w[i].n, w[i].adjacent, w[i].comps, w[i].half, 0, 1024, 49152, w[i].count,
		              &c);
		printf("n=%d x%d %s vec%d%s: %s %d %d%s\n", w[i].n, w[i].count,
		       w[i].adjacent ? "cols" : "rows", w[i].comps, w[i].half ? " half" : "",
		       fft_technique_name(c.technique), c.threads, c.signals, c.split ? " split" : "");
		assert_int_equal(c.technique, w[i].technique);
		assert_int_equal(c.threads, w[i].threads);
		assert_int_equal(c.signals, w[i].signals);
		assert_int_equal(c.split, w[i].split);
		/* the H200's limits plan it: blocked as asked, shared where it fits, in the shape */
		struct fft_plan_opts po = {.technique = c.technique, .components = w[i].comps,
		                           .shared_limit = 49152, .max_invocations = 1024,
		                           .signals_adjacent = w[i].adjacent, .threads = c.threads,
		                           .signals = c.signals, .half = w[i].half, .split = c.split};
		struct fft_plan p;
		assert_int_equal(fft_plan_make(w[i].n, &po, &p), 0);
		if (c.technique == FFT_TECH_BLOCKED) {
			assert_true(p.blocked);
			assert_int_equal(p.signals, c.signals);
			assert_true(p.threads <= 8);
		}
		if (c.technique == FFT_TECH_SHARED) {
			assert_true(p.shared && p.split);
			assert_int_equal(p.signals, c.signals);
			assert_int_equal(p.threads, c.threads);
			assert_true(p.shared_bytes <= 49152);
		}
		if (!w[i].adjacent && c.threads && (long long)w[i].n * w[i].comps * 4 / 2 <= 49152) {
			assert_true(p.shared);
			assert_int_equal(p.threads, c.threads);
			int split = w[i].comps != 4 ? c.split : w[i].n > FFT_FLOAT_ROUNDS_TO ? 1 : 2;
			assert_int_equal(p.split, split);
		}
	}
	/* fewer invocations a group than the rule's: as many as the device has */
	struct fft_choice c;
	fft_plan_rule(4096, 0, 2, 0, 0, 384, 49152, 4096, &c);
	assert_int_equal(c.threads, 256);
	/* one-pass columns that do not fit the device's shared memory or invocations: the next
	 * choice (blocked) */
	fft_plan_rule(1080, 1, 2, 0, 0, 1024, 32768, 1920, &c);
	assert_int_equal(c.technique, FFT_TECH_BLOCKED);
	fft_plan_rule(1080, 1, 2, 0, 0, 512, 49152, 1920, &c);
	assert_int_equal(c.technique, FFT_TECH_BLOCKED);
	fft_plan_rule(1024, 1, 2, 0, 0, 512, 49152, 1024, &c);
	assert_int_equal(c.technique, FFT_TECH_AUTO);
	/* a software renderer keeps the plan's choices everywhere */
	for (int adj = 0; adj < 2; adj++) {
		fft_plan_rule(adj ? 1080 : 4096, adj, 2, 0, 1, 1024, 49152, 1920, &c);
		assert_int_equal(c.technique, FFT_TECH_AUTO);
		assert_int_equal(c.threads, 0);
		assert_int_equal(c.signals, 0);
		assert_int_equal(c.split, 0);
	}
}

/* The pair order (gles/fft.h, fft_pair_pos) is a permutation of [0, n) with k and n - k side
 * by side, the pair of k = 1 first. */
static void test_pair_order(void **state)
{
	(void)state;
	for (unsigned n = 1; n <= 300; n++) {
		unsigned char seen[300] = {0};
		for (unsigned k = 0; k < n; k++) {
			unsigned p = fft_pair_pos(k, n);
			assert_true(p < n);
			assert_int_equal(seen[p], 0);
			seen[p] = 1;
			if (k > 0 && 2 * k != n) { /* a proper pair: k and n - k neighbours, k first */
				unsigned q = fft_pair_pos(n - k, n);
				unsigned lo = k < n - k ? k : n - k;
				assert_int_equal(fft_pair_pos(lo, n), 2 * (lo - 1));
				assert_true(p / 2 == q / 2 && p != q);
			}
		}
	}
	assert_int_equal(fft_pair_pos(0, 5), 4);
	assert_int_equal(fft_pair_pos(3, 6), 5);
	assert_int_equal(fft_pair_pos(4, 5), 1);
}

/* Bluestein's one-dispatch form on a GPU: about four values an invocation, a power of two, at
 * most FFT_BLUESTEIN_FUSED_THREADS, halved until asked-for signals a group fit the device's
 * invocations, and 0 (the plan's own choice) where nothing fits. */
static void test_bluestein_fused_threads(void **state)
{
	(void)state;
	assert_int_equal(fft_bluestein_fused_threads(36, 0, 1024, 1024), 16);   /* 17: 9 values */
	assert_int_equal(fft_bluestein_fused_threads(196, 0, 1024, 1024), 64);  /* 97: 49 -> 64 */
	assert_int_equal(fft_bluestein_fused_threads(2048, 0, 1024, 1024), 512);/* 1009 */
	assert_int_equal(fft_bluestein_fused_threads(8232, 1, 1024, 1024), 512);/* capped */
	assert_int_equal(fft_bluestein_fused_threads(4, 0, 1024, 1024), 1);
	/* signals a group asked for: the invocations halve to fit */
	assert_int_equal(fft_bluestein_fused_threads(1225, 4, 1024, 1024), 256);
	assert_int_equal(fft_bluestein_fused_threads(2048, 0, 256, 1024), 256);
	assert_int_equal(fft_bluestein_fused_threads(2048, 3, 1024, 1024), 256);
	assert_int_equal(fft_bluestein_fused_threads(2048, 0, 1024, 256), 0);
	assert_int_equal(fft_bluestein_fused_threads(2048, 2048, 1024, 1024), 0);
	for (int m = 4; m <= 16384; m += 7) {
		int t = fft_bluestein_fused_threads(m, 0, 1024, 1024);
		assert_true(t >= 1 && t <= FFT_BLUESTEIN_FUSED_THREADS && (t & (t - 1)) == 0);
		assert_true(t == FFT_BLUESTEIN_FUSED_THREADS || t >= m / 4);
		assert_true(t == 1 || t / 2 < m / 4);
	}
}

/* The shipped wisdom of the H200 (gles/wisdom/nvidia-h200.txt): each of its lines, read here by
 * the format wisdom.h states, plans on that card's limits (48 KiB of shared memory, 1024
 * invocations; a choice that cannot is replaced by the rule there without a word), and a lookup
 * of the 1716- and 2187-long rows and the 2160p bloom's 4375-long vec4 rows gives the shapes
 * measured for them. */
static void test_shipped_wisdom(void **state)
{
	(void)state;
	static const char drv[] = "NVIDIA H200/PCIe/SSE2 / OpenGL ES 3.2 NVIDIA 580.159.04";
	int lines = 0, planned = 0;
	for (const char *s = fft_wisdom_shipped; *s;) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		char line[512];
		assert_true(len < sizeof line);
		memcpy(line, s, len);
		line[len] = 0;
		s += len + (e != NULL);
		if (!line[0] || line[0] == '#')
			continue;
		int n, comps, adj, half, table, count_log2, tech, threads, signals = 0, radix = 0,
		    composite = 0, split = 0;
		double ms;
		assert_true(!strncmp(line, drv, strlen(drv)) && line[strlen(drv)] == '|');
		assert_true(sscanf(line + strlen(drv), "|%d|%d|%d|%d|%d|%d|%d|%d|%lf|%d|%d|%d|%d", &n,
		                   &comps, &adj, &half, &table, &count_log2, &tech, &threads, &ms,
		                   &signals, &radix, &composite, &split) >= 9);
		lines++;
		struct fft_plan_opts po = {.technique = tech, .components = comps, .shared_limit = 49152,
		                           .max_invocations = 1024, .signals_adjacent = adj,
		                           .threads = threads, .signals = signals, .half = half,
		                           .split = split};
		struct fft_plan p;
		int rc = fft_plan_make(n, &po, &p);
		if (rc)
			printf("shipped line does not plan (%d): %s\n", rc, line);
		planned += rc == 0;
	}
	printf("%d shipped lines, %d plan on the H200's limits\n", lines, planned);
	assert_true(lines > 30);
	assert_int_equal(planned, lines);

	struct fft_wisdom *w;
	assert_int_equal(fft_wisdom_create("", drv, fft_wisdom_shipped, NULL, &w), 0);
	struct fft_wisdom_choice ch;
	struct fft_wisdom_key rows1716 = {.n = 1716, .components = 2, .count_log2 = 10};
	assert_int_equal(fft_wisdom_get(w, &rows1716, &ch), 0);
	assert_int_equal(ch.technique, FFT_TECH_SHARED);
	assert_int_equal(ch.threads, 156);
	assert_int_equal(ch.split, 0);
	struct fft_wisdom_key rows2187 = {.n = 2187, .components = 2, .count_log2 = 10};
	assert_int_equal(fft_wisdom_get(w, &rows2187, &ch), 0);
	assert_int_equal(ch.threads, 243);
	assert_int_equal(ch.split, 1);
	/* the 2160p k512 bloom's vec4 rows of 4375, fp32 and fp16: with the prefilter and
	 * composite in them (the ends' key), the invocations its whole bloom measured fastest with;
	 * the plain transform's, the tuner's */
	for (int half = 0; half <= 1; half++) {
		struct fft_wisdom_key rows4375 = {.n = 4375, .components = 4, .half = half,
		                                  .count_log2 = 11, .io = 1};
		assert_int_equal(fft_wisdom_get(w, &rows4375, &ch), 0);
		assert_int_equal(ch.threads, 875);
		rows4375.io = 0;
		assert_int_equal(fft_wisdom_get(w, &rows4375, &ch), 0);
		assert_int_equal(ch.threads, 512);
		/* the 1080p k256 bloom's rows of 2240 with their ends: 320 */
		struct fft_wisdom_key rows2240 = {.n = 2240, .components = 4, .half = half,
		                                  .count_log2 = 10, .io = 1};
		assert_int_equal(fft_wisdom_get(w, &rows2240, &ch), 0);
		assert_int_equal(ch.threads, 320);
		/* the span's padded sizes: 1080p k256's rows of 2048 with their ends on 256 in float
		 * rounds, 2160p k512's of 4096 on 512 */
		struct fft_wisdom_key rows2048 = {.n = 2048, .components = 4, .half = half,
		                                  .count_log2 = 10, .io = 1};
		assert_int_equal(fft_wisdom_get(w, &rows2048, &ch), 0);
		assert_int_equal(ch.threads, 256);
		assert_int_equal(ch.split, 2);
		struct fft_wisdom_key rows4096 = {.n = 4096, .components = 4, .half = half,
		                                  .count_log2 = 11, .io = 1};
		assert_int_equal(fft_wisdom_get(w, &rows4096, &ch), 0);
		assert_int_equal(ch.threads, 512);
	}
	/* the weighted cost's full-frame size: rows of 2880 with their ends on 360 in float rounds */
	struct fft_wisdom_key rows2880 = {.n = 2880, .components = 4, .count_log2 = 10, .io = 1};
	assert_int_equal(fft_wisdom_get(w, &rows2880, &ch), 0);
	assert_int_equal(ch.threads, 360);
	assert_int_equal(ch.split, 2);
	fft_wisdom_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_factorization),
		cmocka_unit_test(test_native_and_good_size),
		cmocka_unit_test(test_conv_size),
		cmocka_unit_test(test_passes),
		cmocka_unit_test(test_exchanges),
		cmocka_unit_test(test_blocked),
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_pair_order),
		cmocka_unit_test(test_shipped_wisdom),
		cmocka_unit_test(test_bluestein_fused_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
