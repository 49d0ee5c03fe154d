/* par_for: a range split across short-lived threads (core/parallel.h). A thread costs some
 * tens of microseconds to start, which the callers' pieces (megabytes each) repay many times. */
#include "core/parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The CPU quota of the process's cgroup in cores, rounded up (cgroup v2 cpu.max, else v1's
 * cfs quota and period), or 0 when none is set or none can be read. */
static long cgroup_cores(void)
{
	long long quota = -1, period = 0;
	FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
	if (f) {
		char q[32];
		if (fscanf(f, "%31s %lld", q, &period) == 2 && strcmp(q, "max"))
			quota = atoll(q);
		fclose(f);
	} else if ((f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "r"))) {
		if (fscanf(f, "%lld", &quota) != 1)
			quota = -1;
		fclose(f);
		if ((f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "r"))) {
			if (fscanf(f, "%lld", &period) != 1)
				period = 0;
			fclose(f);
		}
	}
	if (quota <= 0 || period <= 0)
		return 0;
	return (long)((quota + period - 1) / period);
}

long par_cores(void)
{
	static atomic_long cached;
	long c = atomic_load(&cached);
	if (c > 0)
		return c;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	if (!sched_getaffinity(0, sizeof set, &set) && CPU_COUNT(&set) > 0)
		cores = CPU_COUNT(&set);
	long quota = cgroup_cores();
	if (quota > 0 && quota < cores)
		cores = quota;
	if (cores < 1)
		cores = 1;
	atomic_store(&cached, cores);
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

/* Threads at work now (par_each's callers and helpers, and par_hold's holders): what new helpers
 * are measured against. */
static atomic_int par_busy;

void par_hold(void)
{
	atomic_fetch_add(&par_busy, 1);
}

void par_release(void)
{
	atomic_fetch_sub(&par_busy, 1);
}

int par_busy_now(void)
{
	return atomic_load(&par_busy);
}

struct each {
	par_item_fn fn;
	void *ctx;
	size_t n;
	atomic_size_t next;   /* the next item to hand out */
	atomic_int stop;      /* set once an item failed */
	pthread_mutex_t lock; /* guards first/rc */
	size_t first;         /* the lowest failed item */
	int rc;               /* its value */
	sem_t done;           /* posted by each helper when it has finished its share */
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

/* Helper threads, started on first need and parked between calls (a thread's start costs tens of
 * microseconds, which FFTW's many short parallel loops would pay each time). */
struct helper {
	sem_t go;          /* posted with e and id set */
	struct each *e;
	int id;
	struct helper *next_free;
};
static pthread_mutex_t helpers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct helper *helpers_free;
static int helpers_made;

static void *helper_main(void *arg)
{
	struct helper *h = arg;
	for (;;) {
		while (sem_wait(&h->go))
			;
		struct each *e = h->e;
		each_run(e, h->id);
		pthread_mutex_lock(&helpers_lock);
		h->next_free = helpers_free;
		helpers_free = h;
		pthread_mutex_unlock(&helpers_lock);
		sem_post(&e->done);
	}
	return NULL;
}

/* A parked helper, or a new one (NULL when none can be made). */
static struct helper *helper_take(void)
{
	pthread_mutex_lock(&helpers_lock);
	struct helper *h = helpers_free;
	if (h) {
		helpers_free = h->next_free;
		pthread_mutex_unlock(&helpers_lock);
		return h;
	}
	if (helpers_made >= PAR_EACH_MAX) {
		pthread_mutex_unlock(&helpers_lock);
		return NULL;
	}
	h = calloc(1, sizeof *h);
	pthread_t th;
	pthread_attr_t attr;
	int ok = h && !sem_init(&h->go, 0, 0) && !pthread_attr_init(&attr);
	if (ok) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		ok = !pthread_create(&th, &attr, helper_main, h);
		pthread_attr_destroy(&attr);
	}
	if (!ok) {
		free(h);
		h = NULL;
	} else {
		helpers_made++;
	}
	pthread_mutex_unlock(&helpers_lock);
	return h;
}

int par_each(size_t n, int threads, par_item_fn fn, void *ctx, size_t *failed)
{
	struct each e = {.fn = fn, .ctx = ctx, .n = n, .first = SIZE_MAX, .rc = 0};
	atomic_init(&e.next, 0);
	atomic_init(&e.stop, 0);
	pthread_mutex_init(&e.lock, NULL);
	sem_init(&e.done, 0, 0);
	if (threads > PAR_EACH_MAX)
		threads = PAR_EACH_MAX;
	if ((size_t)threads > n)
		threads = (int)n;
	/* helpers only where cores are free of other par_each threads and holders */
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
	int started = 0;
	for (int i = 1; i <= helpers; i++) {
		struct helper *h = helper_take();
		if (!h)
			break;
		h->e = &e;
		h->id = i;
		started++;
		sem_post(&h->go);
	}
	if (started < helpers) /* threads that could not start give their place back */
		atomic_fetch_sub(&par_busy, helpers - started);
	each_run(&e, 0);
	for (int i = 0; i < started; i++)
		while (sem_wait(&e.done))
			;
	atomic_fetch_sub(&par_busy, 1 + started);
	pthread_mutex_destroy(&e.lock);
	sem_destroy(&e.done);
	if (e.rc && failed)
		*failed = e.first;
	return e.rc;
}
