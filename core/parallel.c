/* par_for: a range split across short-lived threads (core/parallel.h). A thread costs some
 * tens of microseconds to start, which the callers' pieces (megabytes each) repay many times. */
#include "core/parallel.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

struct piece {
	par_fn fn;
	void *ctx;
	size_t begin, end;
};

static void *run_piece(void *arg)
{
	struct piece *p = arg;
	p->fn(p->ctx, p->begin, p->end);
	return NULL;
}

int par_threads(size_t n, size_t min_items)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set; /* the cores this process may run on, where it is confined to some */
	if (!sched_getaffinity(0, sizeof set, &set) && CPU_COUNT(&set) > 0)
		cores = CPU_COUNT(&set);
	size_t t = min_items ? n / min_items : n;
	if (cores > 0 && t > (size_t)cores)
		t = (size_t)cores;
	if (t > PAR_MAX_THREADS)
		t = PAR_MAX_THREADS;
	return t < 2 ? 1 : (int)t;
}

void par_for(size_t n, size_t min_items, par_fn fn, void *ctx)
{
	int t = par_threads(n, min_items);
	struct piece p[PAR_MAX_THREADS];
	pthread_t th[PAR_MAX_THREADS];
	int started[PAR_MAX_THREADS] = {0};
	for (int i = 0; i < t; i++)
		p[i] = (struct piece){fn, ctx, n * (size_t)i / (size_t)t, n * (size_t)(i + 1) / (size_t)t};
	for (int i = 1; i < t; i++)
		started[i] = !pthread_create(&th[i], NULL, run_piece, &p[i]);
	fn(ctx, p[0].begin, p[0].end);
	for (int i = 1; i < t; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else
			fn(ctx, p[i].begin, p[i].end); /* no thread: this one does its piece */
	}
}
