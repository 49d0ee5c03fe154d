/* par_for: a range split across short-lived threads (core/parallel.h). A thread costs some
 * tens of microseconds to start, which the callers' pieces (megabytes each) repay many times. */
#include "core/parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
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

long par_cores(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	if (!sched_getaffinity(0, sizeof set, &set) && CPU_COUNT(&set) > 0)
		cores = CPU_COUNT(&set);
	return cores;
}

int par_threads(size_t n, size_t min_items)
{
	long cores = par_cores();
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

/* Threads inside par_each now, callers and helpers: what new helpers are measured against. */
static atomic_int par_busy;

struct each {
	par_item_fn fn;
	void *ctx;
	size_t n;
	atomic_size_t next;   /* the next item to hand out */
	atomic_int stop;      /* set once an item failed */
	pthread_mutex_t lock; /* guards first/rc */
	size_t first;         /* the lowest failed item */
	int rc;               /* its value */
};

struct each_worker {
	struct each *e;
	int id;
};

static void each_run(struct each *e, int id)
{
	while (!atomic_load(&e->stop)) {
		size_t i = atomic_fetch_add(&e->next, 1);
		if (i >= e->n)
			break;
		int rc = e->fn(e->ctx, id, i);
		if (rc) {
			pthread_mutex_lock(&e->lock);
			if (!e->rc || i < e->first) {
				e->rc = rc;
				e->first = i;
			}
			pthread_mutex_unlock(&e->lock);
			atomic_store(&e->stop, 1);
		}
	}
}

static void *each_main(void *arg)
{
	struct each_worker *w = arg;
	each_run(w->e, w->id);
	return NULL;
}

int par_each(size_t n, int threads, par_item_fn fn, void *ctx, size_t *failed)
{
	struct each e = {.fn = fn, .ctx = ctx, .n = n, .first = SIZE_MAX, .rc = 0};
	atomic_init(&e.next, 0);
	atomic_init(&e.stop, 0);
	pthread_mutex_init(&e.lock, NULL);
	if (threads > PAR_MAX_THREADS)
		threads = PAR_MAX_THREADS;
	if ((size_t)threads > n)
		threads = (int)n;
	/* helpers only where cores are free of other par_each threads */
	long cores = par_cores();
	int busy = atomic_fetch_add(&par_busy, 1) + 1, helpers = 0;
	while (threads > 1) {
		int want = threads - 1, room = cores > busy ? (int)(cores - busy) : 0;
		helpers = want < room ? want : room;
		if (helpers < 1 ||
		    atomic_compare_exchange_weak(&par_busy, &busy, busy + helpers))
			break;
	}
	if (helpers < 0)
		helpers = 0;
	pthread_t th[PAR_MAX_THREADS];
	struct each_worker w[PAR_MAX_THREADS];
	int started = 0;
	for (int i = 1; i <= helpers; i++) {
		w[i] = (struct each_worker){&e, i};
		if (pthread_create(&th[i], NULL, each_main, &w[i]))
			break;
		started++;
	}
	if (started < helpers) /* threads that could not start give their place back */
		atomic_fetch_sub(&par_busy, helpers - started);
	each_run(&e, 0);
	for (int i = 1; i <= started; i++)
		pthread_join(th[i], NULL);
	atomic_fetch_sub(&par_busy, 1 + started);
	pthread_mutex_destroy(&e.lock);
	if (e.rc && failed)
		*failed = e.first;
	return e.rc;
}
