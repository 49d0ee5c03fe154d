/* The tuners' measuring loop (gles/tune_rounds.h), no GL: candidates with random times, some not
 * live. The warm-up runs whole turns of the live ones in order, stops a call past
 * TUNE_WARM_STEP_MS and ends past TUNE_WARM_MS, counting the GPU time used; a failed run ends it
 * after its turn. A round times each live one once (-1 for the others); the choice is the first
 * fastest by median, the medians checked against a sort of their own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "gles/tune_rounds.h"
#include "tests/testutil.h"

#define MAXC 12
#define MAXRUNS 4096

struct fake {
	int live[MAXC];
	double result[MAXC];  /* what a run returns (<= 0: failed) */
	double used[MAXC];    /* the GPU ms it uses (repeats: more than its result) */
	int runs, who[MAXRUNS], with_spent[MAXRUNS];
	double spent_of[MAXRUNS];
	int medians, median_i[MAXC];
	double median_ms[MAXC];
	double ms[MAXC][TUNE_ROUNDS];
};

static int fake_live(void *ctx, int i)
{
	return ((struct fake *)ctx)->live[i];
}

static double fake_time(void *ctx, int i, double *spent)
{
	struct fake *f = ctx;
	assert_true(f->live[i]); /* only live candidates run */
	assert_true(f->runs < MAXRUNS);
	f->who[f->runs] = i;
	f->with_spent[f->runs] = spent != NULL;
	double m = f->result[i], used = m > 0 ? f->used[i] : 0;
	f->spent_of[f->runs++] = used;
	if (spent)
		*spent += used;
	return m;
}

static void fake_median(void *ctx, int i, double ms)
{
	struct fake *f = ctx;
	f->median_i[f->medians] = i;
	f->median_ms[f->medians++] = ms;
}

static struct tune_rounds rounds_of(struct fake *f, int n)
{
	return (struct tune_rounds){.n = n, .live = fake_live, .time = fake_time,
	                            .median = fake_median, .ctx = f, .ms = f->ms};
}

/* n candidates, each live with chance 3/4, runs of 0.2 .. 6 ms using up to twice that. */
static int random_fake(struct fake *f)
{
	memset(f, 0, sizeof *f);
	int n = 1 + (int)(tu_uniform() * MAXC);
	for (int i = 0; i < n; i++) {
		f->live[i] = tu_uniform() < 0.75;
		f->result[i] = 0.2 + 5.8 * tu_uniform();
		f->used[i] = f->result[i] * (1 + tu_uniform());
	}
	return n;
}

/* The runs of one warm-up call from `from`: whole turns of the live candidates in index order.
 * Returns the turns; *last the GPU ms of the last turn (failures counted as TUNE_WARM_MS). */
static int check_turns(const struct fake *f, int n, int from, double *last)
{
	int live = 0, turns = 0;
	for (int i = 0; i < n; i++)
		live += f->live[i];
	if (!live) {
		assert_int_equal(f->runs, from);
		return 0;
	}
	assert_int_equal((f->runs - from) % live, 0);
	for (int r = from; r < f->runs; turns++) {
		*last = 0;
		for (int i = 0; i < n; i++)
			if (f->live[i]) {
				assert_int_equal(f->who[r], i);
				assert_true(f->with_spent[r]);
				*last += f->result[i] > 0 ? f->spent_of[r] : TUNE_WARM_MS;
				r++;
			}
	}
	return turns;
}

static void test_warm(void **state)
{
	(void)state;
	struct fake f;
	for (int c = 0; c < 300; c++) {
		int n = random_fake(&f), fail = -1;
		if (c % 3 == 0) { /* a failing candidate: a negative or a zero time */
			fail = (int)(tu_uniform() * n);
			f.result[fail] = c % 2 ? -1 : 0;
		}
		struct tune_rounds tr = rounds_of(&f, n);
		double t_warm = 0;
		int calls = 0, done = 0;
		while (!done) {
			int from = f.runs;
			double before = t_warm, last = 0;
			done = tune_rounds_warm(&tr, &t_warm);
			calls++;
			int turns = check_turns(&f, n, from, &last);
			if (!turns) { /* no candidate live */
				assert_true(done && t_warm == 0);
				break;
			}
			double step = t_warm - before;
			/* it went on while under both limits, and stopped at one */
			assert_true(before + step - last < TUNE_WARM_MS);
			assert_true(step - last < TUNE_WARM_STEP_MS);
			assert_true(step >= TUNE_WARM_STEP_MS || t_warm >= TUNE_WARM_MS);
			assert_int_equal(done, t_warm >= TUNE_WARM_MS);
			if (fail >= 0 && f.live[fail])
				assert_true(done); /* a failure ends the warm-up after its turn */
			assert_true(calls < 1000);
		}
		double used = 0;
		for (int r = 0; r < f.runs; r++)
			used += f.result[f.who[r]] > 0 ? f.spent_of[r] : TUNE_WARM_MS;
		assert_true(t_warm > used - 1e-9 && t_warm < used + 1e-9);
	}
}

/* ms sorted by insertion, as the reference median of a candidate's rounds. */
static double ref_median(const double *ms)
{
	double s[TUNE_ROUNDS];
	memcpy(s, ms, sizeof s);
	for (int i = 1; i < TUNE_ROUNDS; i++)
		for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
			double x = s[j];
			s[j] = s[j - 1], s[j - 1] = x;
		}
	return s[0] < 0 ? -1 : s[TUNE_ROUNDS / 2];
}

static void test_rounds_pick(void **state)
{
	(void)state;
	struct fake f;
	for (int c = 0; c < 300; c++) {
		int n = random_fake(&f);
		struct tune_rounds tr = rounds_of(&f, n);
		double want[MAXC][TUNE_ROUNDS];
		for (int r = 0; r < TUNE_ROUNDS; r++) {
			int from = f.runs;
			for (int i = 0; i < n; i++) { /* a time a round, at times a failure */
				f.result[i] = tu_uniform() < 0.03 ? -1 : 0.2 + 5.8 * tu_uniform();
				if (c % 5 == 0 && i == 1)
					f.result[i] = f.result[0]; /* equal to the first: it stays first */
				want[i][r] = f.live[i] ? f.result[i] : -1;
			}
			tune_rounds_round(&tr, r);
			for (int i = 0, k = from; i < n; i++) {
				assert_true(f.ms[i][r] == want[i][r]);
				if (f.live[i]) { /* in order, without the warm-up's GPU time */
					assert_int_equal(f.who[k], i);
					assert_false(f.with_spent[k++]);
				}
			}
		}
		double best_ms = -7;
		int best = tune_rounds_pick(&tr, &best_ms), want_best = -1, k = 0;
		double want_ms = -7;
		for (int i = 0; i < n; i++) {
			if (!f.live[i])
				continue;
			double med = ref_median(want[i]);
			assert_int_equal(f.median_i[k], i);
			assert_true(f.median_ms[k++] == med);
			if (med > 0 && (want_best < 0 || med < want_ms))
				want_best = i, want_ms = med;
		}
		assert_int_equal(f.medians, k);
		if (c < 6)
			printf("%d candidates, %d live: chose %d (%.4f ms)\n", n, k, best, best_ms);
		assert_int_equal(best, want_best);
		assert_true(best_ms == want_ms); /* untouched when none */
	}
}

int main(void)
{
	tu_seed_from_clock();
	tu_test_filter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_warm),
		cmocka_unit_test(test_rounds_pick),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
