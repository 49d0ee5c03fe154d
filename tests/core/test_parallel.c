/* Tests for core/parallel: every item of a range visited exactly once, in contiguous pieces
 * of at least the asked size, on at most PAR_MAX_THREADS threads; small ranges on the caller's
 * thread alone. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_item_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
