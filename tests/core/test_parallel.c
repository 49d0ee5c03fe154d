/* Tests for core/parallel: every item of a range visited exactly once, in contiguous pieces
 * of at least the asked size, on at most PAR_MAX_THREADS threads; small ranges on the caller's
 * thread alone; par_each's items once each, its failures reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/parallel.h"

struct visit {
	unsigned char *seen; /* one count an item */
	size_t min_items, n;
	_Atomic int pieces, short_pieces, other_threads;
	pthread_t caller;
};

static void mark(void *ctx, size_t b, size_t e)
{
	struct visit *v = ctx;
	v->pieces++;
	if (e - b < v->min_items && e - b != v->n)
		v->short_pieces++;
	if (!pthread_equal(pthread_self(), v->caller))
		v->other_threads++;
	for (size_t i = b; i < e; i++)
		v->seen[i]++;
}

static void run(size_t n, size_t min_items, int *pieces, int *others)
{
	struct visit v = {calloc(n ? n : 1, 1), min_items, n, 0, 0, 0, pthread_self()};
	assert_non_null(v.seen);
	par_for(n, min_items, mark, &v);
	for (size_t i = 0; i < n; i++)
		if (v.seen[i] != 1)
			fail_msg("n=%zu min=%zu: item %zu visited %d times", n, min_items, i, v.seen[i]);
	if (v.short_pieces)
		fail_msg("n=%zu min=%zu: %d pieces shorter than asked", n, min_items, v.short_pieces);
	*pieces = v.pieces, *others = v.other_threads;
	free(v.seen);
}

static void test_every_item_once(void **state)
{
	(void)state;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set; /* par_for follows the process's CPU affinity */
	if (!sched_getaffinity(0, sizeof set, &set) && CPU_COUNT(&set) > 0)
		cores = CPU_COUNT(&set);
	int want = cores < PAR_MAX_THREADS ? (int)cores : PAR_MAX_THREADS;
	const size_t sizes[][2] = {{0, 1}, {1, 1}, {2, 1}, {7, 3}, {1000, 1}, {1000, 499},
	                           {1000, 500}, {1000, 501}, {1 << 20, 1000}, {12345, 17}};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		size_t n = sizes[k][0], m = sizes[k][1];
		int pieces, others;
		run(n, m, &pieces, &others);
		int expect = par_threads(n, m);
		if (pieces != expect) /* an empty range too makes one call */
			fail_msg("n=%zu min=%zu: %d pieces, par_threads says %d", n, m, pieces, expect);
		if (expect < 1 || expect > PAR_MAX_THREADS || (cores > 0 && expect > cores))
			fail_msg("n=%zu min=%zu: par_threads %d, %ld cores", n, m, expect, cores);
		if (others > expect - 1)
			fail_msg("n=%zu min=%zu: %d pieces on other threads of %d", n, m, others, expect);
	}
	/* a range of many pieces goes to every thread the host allows */
	assert_int_equal(par_threads((size_t)1 << 20, 1000), want > 1 ? want : 1);
	/* too short to split: the caller alone */
	assert_int_equal(par_threads(1999, 1000), 1);
	assert_int_equal(par_threads(0, 1000), 1);
}

/* par_each: each item once, on workers numbered below the threads asked; a failing item stops
 * the hand-out, and the lowest failed item is reported. */
struct each_visit {
	_Atomic int *seen;
	size_t fail_from;  /* items from here fail (SIZE_MAX: none) */
	_Atomic int bad_worker;
	int threads;
};

static int each_mark(void *ctx, int worker, size_t i)
{
	struct each_visit *v = ctx;
	if (worker < 0 || worker >= v->threads)
		v->bad_worker++;
	v->seen[i]++;
	return i >= v->fail_from ? (int)(i + 1) : 0;
}

static void test_each(void **state)
{
	(void)state;
	static const size_t ns[] = {0, 1, 2, 7, 64, 1000};
	for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
		for (int t = 1; t <= PAR_MAX_THREADS + 1; t += 3) {
			size_t n = ns[k];
			struct each_visit v = {calloc(n ? n : 1, sizeof(_Atomic int)), SIZE_MAX, 0,
			                       t > PAR_MAX_THREADS ? PAR_MAX_THREADS : t};
			size_t failed = 12345;
			assert_int_equal(par_each(n, t, each_mark, &v, &failed), 0);
			assert_int_equal(failed, 12345); /* untouched on success */
			for (size_t i = 0; i < n; i++)
				if (v.seen[i] != 1)
					fail_msg("n=%zu threads=%d: item %zu seen %d times", n, t, i,
					         (int)v.seen[i]);
			assert_int_equal(v.bad_worker, 0);
			if (n > 3) { /* items from n/2 fail: the lowest of those run is reported */
				memset(v.seen, 0, n * sizeof(_Atomic int));
				v.fail_from = n / 2;
				int rc = par_each(n, t, each_mark, &v, &failed);
				assert_true(failed >= n / 2 && failed < n);
				assert_int_equal(rc, (int)failed + 1);
				for (size_t i = 0; i < n / 2; i++)
					assert_int_equal(v.seen[i], 1); /* handed out in order */
				if (t == 1) /* one thread stops at the first */
					assert_int_equal(failed, n / 2);
			}
			free(v.seen);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_item_once),
		cmocka_unit_test(test_each),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
