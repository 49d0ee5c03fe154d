/* Readiness, status and watchdog notices from the GPU threads' state, and the guard that ends
 * a stop that hangs; see lifecycle.h. */
#include "daemon/lifecycle.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/clock.h"

struct lifecycle {
	struct sdnotify *n;
	struct jobs *jobs;
	double timeout;          /* --heartbeat-timeout */
	char endpoint[128];
	double t_start;
	double interval;         /* seconds between watchdog pings (half WATCHDOG_USEC); 0: none */
	double next_ping;        /* when the next ping is due */
	double next_extend;      /* when the next EXTEND_TIMEOUT_USEC is due while warming */
	double last_status_t;
	int ready, stopping;
	int last_state;          /* -1 before the first tick */
	char status[512];        /* last STATUS= sent */
};

/* Severity for picking the state that decides: up < warming < stale < failed. */
static int rank(int state)
{
	switch (state) {
	case LIFECYCLE_UP: return 0;
	case LIFECYCLE_WARMING: return 1;
	case LIFECYCLE_STALE: return 2;
	default: return 3;
	}
}

int lifecycle_gpu_state(const struct jobs_status *st, double heartbeat_timeout, char *why,
                        size_t len)
{
	int worst = LIFECYCLE_UP;
	if (len)
		why[0] = 0;
	for (int i = 0; i < st->ngpus; i++) {
		const struct jobs_gpu_status *g = &st->gpu[i];
		int s;
		char w[160];
		if (g->warm_failed) {
			s = LIFECYCLE_FAILED;
			snprintf(w, sizeof w, "gpu %d: warm-up failed", i);
		} else if (g->rebuilding && !(g->heartbeat_age <= heartbeat_timeout)) {
			s = LIFECYCLE_STALE;
			snprintf(w, sizeof w, "gpu %d: rebuilding after a GPU reset, silent for %.1f s", i,
			         g->heartbeat_age);
		} else if (g->rebuilding) {
			s = LIFECYCLE_WARMING;
			snprintf(w, sizeof w, "gpu %d: rebuilding its context after a GPU reset", i);
		} else if (!g->alive && g->warmed) {
			s = LIFECYCLE_FAILED;
			snprintf(w, sizeof w, "gpu %d: thread ended", i);
		} else if (!g->alive) {
			s = LIFECYCLE_WARMING;
			snprintf(w, sizeof w, "gpu %d: no context yet", i);
		} else if (!g->warmed) {
			s = LIFECYCLE_WARMING;
			snprintf(w, sizeof w, "gpu %d: warming up", i);
		} else if (!(g->heartbeat_age <= heartbeat_timeout)) {
			s = LIFECYCLE_STALE;
			snprintf(w, sizeof w, "gpu %d: no heartbeat for %.1f s (limit %g s)", i,
			         g->heartbeat_age, heartbeat_timeout);
		} else {
			continue;
		}
		if (rank(s) > rank(worst)) {
			worst = s;
			if (len)
				snprintf(why, len, "%s", w);
		}
	}
	return worst;
}

/* 1 when every GPU thread still warming up has shown life within the timeout. */
static int warming_fresh(const struct jobs_status *st, double timeout)
{
	for (int i = 0; i < st->ngpus; i++)
		if (!st->gpu[i].warmed && st->gpu[i].alive && !(st->gpu[i].heartbeat_age <= timeout))
			return 0;
	return 1;
}

static void set_status(struct lifecycle *l, const char *s, int force, double t)
{
	if (!strcmp(s, l->status) || (!force && t - l->last_status_t < 1.0))
		return;
	snprintf(l->status, sizeof l->status, "%s", s);
	l->last_status_t = t;
	sdnotify_sendf(l->n, "STATUS=%s", s);
}

int lifecycle_create(struct sdnotify *notify, struct jobs *jobs, double heartbeat_timeout,
                     const char *endpoint, struct lifecycle **out)
{
	struct lifecycle *l = calloc(1, sizeof *l);
	if (!(*out = l))
		return -1;
	l->n = notify;
	l->jobs = jobs;
	l->timeout = heartbeat_timeout;
	snprintf(l->endpoint, sizeof l->endpoint, "%s", endpoint);
	l->t_start = clock_s();
	l->last_state = -1;
	unsigned long long us = sdnotify_watchdog_usec(notify);
	l->interval = us ? (double)us * 0.5e-6 : 0;
	l->next_ping = l->t_start;
	l->next_extend = l->t_start;
	if (us)
		log_msg(LOG_INFO, "watchdog: every %.3g s while every GPU thread's heartbeat is "
		        "younger than %g s", l->interval, heartbeat_timeout);
	return 0;
}

void lifecycle_destroy(struct lifecycle *l)
{
	free(l);
}

int lifecycle_is_ready(const struct lifecycle *l)
{
	return l->ready;
}

double lifecycle_tick(struct lifecycle *l)
{
	double t = clock_s();
	struct jobs_status st;
	jobs_status(l->jobs, &st);
	char why[200], s[512];
	int state = lifecycle_gpu_state(&st, l->timeout, why, sizeof why);
	int changed = state != l->last_state;

	if (changed && l->last_state >= 0 && (state == LIFECYCLE_STALE ||
	                                     state == LIFECYCLE_FAILED))
		log_msg(LOG_WARN, "%s: %s", why, l->interval > 0 ? "watchdog not fed" : "not ready");
	else if (changed && l->last_state == LIFECYCLE_STALE && state == LIFECYCLE_UP)
		log_msg(LOG_INFO, "every GPU thread heard from again%s",
		        l->interval > 0 ? ": watchdog fed again" : "");
	l->last_state = state;

	if (!l->stopping) {
		switch (state) {
		case LIFECYCLE_WARMING:
			snprintf(s, sizeof s, "%s; not ready, serving on %s", why, l->endpoint);
			break;
		case LIFECYCLE_UP: {
			unsigned long long jobs = 0;
			for (int i = 0; i < st.ngpus; i++)
				jobs += st.gpu[i].jobs;
			snprintf(s, sizeof s, "ready on %s: %d GPU thread%s, queue %d of %d, %d in flight, "
			         "%llu jobs run", l->endpoint, st.ngpus, st.ngpus == 1 ? "" : "s", st.queued,
			         st.queue_size, st.in_flight, jobs);
			break;
		}
		case LIFECYCLE_STALE:
			snprintf(s, sizeof s, "%s: %s", why,
			         l->interval > 0 ? "watchdog not fed" : "not ready");
			break;
		default:
			snprintf(s, sizeof s, "%s: not ready", why);
		}
		if (state == LIFECYCLE_UP && !l->ready) {
			l->ready = 1;
			log_msg(LOG_INFO, "ready: %d GPU thread%s up and warmed %.3f s after start",
			        st.ngpus, st.ngpus == 1 ? "" : "s", t - l->t_start);
			sdnotify_sendf(l->n, "READY=1\nSTATUS=%s", s);
			snprintf(l->status, sizeof l->status, "%s", s);
			l->last_status_t = t;
		}
		set_status(l, s, changed, t);
	}

	/* While warming, keep the manager's start timeout a heartbeat-timeout ahead as long as
	 * every warming thread shows progress. */
	if (state == LIFECYCLE_WARMING && !l->ready && t >= l->next_extend &&
	    warming_fresh(&st, l->timeout)) {
		sdnotify_sendf(l->n, "EXTEND_TIMEOUT_USEC=%llu",
		               (unsigned long long)((l->timeout + 2.0) * 1e6));
		l->next_extend = t + 1.0;
	}

	double wait = 1.0;
	if (l->interval > 0) {
		if (t >= l->next_ping) {
			if (state == LIFECYCLE_UP) {
				sdnotify_send(l->n, "WATCHDOG=1");
				l->next_ping = t + l->interval;
			}
			/* else: asked again at the next tick, pinged as soon as it is up */
		}
		double until = l->next_ping - t;
		if (until > 0 && until < wait)
			wait = until;
		else if (until <= 0)
			wait = 0.05; /* overdue: ping as soon as every GPU thread is heard from again */
	}
	if (!l->ready && wait > 0.05)
		wait = 0.05; /* READY=1 soon after the warm-up ends */
	return wait < 0.001 ? 0.001 : wait;
}

void lifecycle_stopping(struct lifecycle *l, int open_requests, double drain_timeout)
{
	char s[256];
	snprintf(s, sizeof s, "stopping: finishing %d accepted request%s (up to %g s)",
	         open_requests, open_requests == 1 ? "" : "s", drain_timeout);
	l->stopping = 1;
	sdnotify_sendf(l->n, "STOPPING=1\nSTATUS=%s", s);
	snprintf(l->status, sizeof l->status, "%s", s);
}

/* The stop guard's grace past --drain-timeout: once the drain is over the running jobs stop at
 * their next dispatch and the threads are joined, which takes far less unless a GL call hangs. */
#define STOP_GRACE_S 5.0

static double stop_by; /* clock_s() when the guard ends the process; written before it starts */

static void *stop_guard_main(void *arg)
{
	(void)arg;
	const struct timespec step = {0, 250000000L};
	while (clock_s() < stop_by)
		nanosleep(&step, NULL);
	log_msg(LOG_ERROR, "shutdown: still running %g s after the drain timeout (a GPU call that "
	        "does not return?): exiting now, status 1", STOP_GRACE_S);
	_exit(1);
	return NULL;
}

void lifecycle_stop_guard(double drain)
{
	stop_by = clock_s() + drain + STOP_GRACE_S;
	pthread_t th;
	if (pthread_create(&th, NULL, stop_guard_main, NULL)) {
		log_msg(LOG_WARN, "shutdown: cannot start the guard thread; a hung GPU call would "
		        "hold the process");
		return;
	}
	pthread_setname_np(th, "fb-stopguard");
	pthread_detach(th);
}
