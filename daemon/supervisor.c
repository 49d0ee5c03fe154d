/* The worker processes of several GPUs and their supervision; see supervisor.h. */
#include "daemon/supervisor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"

#define TICK_S 0.05           /* how often the supervisor looks at its workers */
#define BACKOFF_FIRST_S 0.1   /* the first restart's delay; doubled for each quick fault */
#define BACKOFF_MAX_S 10.0
#define STEADY_S 10.0         /* a worker that ran this long resets its backoff */
#define START_TIMEOUTS 5      /* --worker-timeouts a worker may take to make its contexts, */
#define START_MIN_S 30.0      /* and at least this (a software renderer's first compiles) */
#define STOP_GRACE_S 10.0     /* past --drain-timeout, workers still running are killed */
#define SUCC_GAP_S 2.0        /* a successor starts once the serving worker has had idle work
                                 waiting this long */
#define SUCC_INTERVAL_S 30.0  /* after a takeover, the next successor starts this much later at
                                 the soonest: a load of ever new sizes (or of more padded sizes
                                 than --max-plans) costs a process build every 30 s at most */
#define SUCC_RETRY_S 10.0     /* after a successor failed: the first retry's delay, doubled */
#define SUCC_RETRY_MAX_S 300.0
#define SUCC_BUILD_MAX_S 900.0 /* a successor still building after this long is killed */

struct worker {
	pid_t pid;                /* 0: not running */
	double started;           /* clock_s() of the fork */
	double restart_at;        /* > 0: start again then */
	int faults;               /* quick faults in a row (the backoff's exponent) */
	int was_ready;            /* ready once since started */
	int killed;               /* SIGKILLed for a hang */
	int retiring;             /* told to drain: its successor serves (alternates) */
};

/* --compile-mode process (service_alternates): slot d or d + m serves device d, the other is
 * its successor while one runs. */
struct pair {
	int serving;              /* the slot that serves */
	double pending_since;     /* since when the serving worker has had idle work; < 0: not */
	double next_at;           /* no successor starts before then */
	double retry_s;           /* the delay after the next failed successor */
};

/* Forks worker i; the child never returns. */
static int start(const struct supervisor_opts *o, struct worker *w, int i)
{
	pid_t parent = getpid();
	fflush(stderr);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		log_msg(LOG_ERROR, "worker %d: fork: %s", i, strerror(errno));
		return -1;
	}
	if (!pid) {
		/* the worker stops (drains) with the supervisor, however that ends */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		sigset_t chld; /* the supervisor's own; the worker's mask is otherwise its */
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		service_attach(o->service, i);
		log_set_gpu(i);
		int rc = o->worker_main(o->ctx, i);
		fflush(stderr);
		exit(rc);
	}
	w->pid = pid;
	w->started = clock_s();
	w->restart_at = 0;
	w->was_ready = 0;
	w->killed = 0;
	w->retiring = 0;
	service_started(o->service, i, pid);
	log_msg(LOG_INFO, "worker %d (device %d) started: pid %d", i,
	        service_device(o->service, i), (int)pid);
	return 0;
}

static void describe(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
		         strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "ended (status 0x%x)", status);
}

static void close_listening(const struct supervisor_opts *o)
{
	for (int i = 0; i < o->nlisten; i++)
		if (o->listen_fds[i] >= 0) {
			close(o->listen_fds[i]);
			o->listen_fds[i] = -1;
		}
}

static void signal_all(struct worker *w, int n, int sig)
{
	for (int i = 0; i < n; i++)
		if (w[i].pid > 0)
			kill(w[i].pid, sig);
}

/* Whether any GPU thread of a published worker has idle work waiting. */
static int idle_pending(const struct service_worker *sw)
{
	for (int g = 0; g < sw->status.ngpus; g++)
		if (sw->status.gpu[g].idle_pending)
			return 1;
	return 0;
}

/* Worker i, building before it serves, killed once it has built for SUCC_BUILD_MAX_S (who: what
 * the log calls it). */
static void bound_build(struct worker *w, int i, double now, const char *who)
{
	if (now - w[i].started <= SUCC_BUILD_MAX_S || w[i].killed)
		return;
	log_msg(LOG_ERROR, "worker %d (pid %d), %s, still building before it serves after %.0f s: "
	        "killed", i, (int)w[i].pid, who, now - w[i].started);
	kill(w[i].pid, SIGKILL);
	w[i].killed = 1;
}

/* --compile-mode process, each tick: a successor started for a device whose serving worker has
 * had idle work waiting, a successor that serves now takes over (the old worker drains), one
 * building past SUCC_BUILD_MAX_S is killed, as is a first worker that has not served by then. */
static void tend_pairs(const struct supervisor_opts *o, struct worker *w, struct pair *pr, int m,
                       double now)
{
	for (int d = 0; d < m; d++) {
		int a = pr[d].serving, s = a == d ? d + m : d;
		if (w[s].pid > 0 && w[s].retiring)
			continue; /* the worker taken over from, still draining */
		if (w[s].pid > 0) {
			struct service_worker sw;
			if (service_read(o->service, s, &sw) && sw.published && sw.serving) {
				service_set_active(o->service, s);
				if (w[a].pid > 0) {
					service_retire(o->service, a);
					kill(w[a].pid, SIGTERM);
					w[a].retiring = 1;
				}
				w[a].restart_at = 0; /* a fault's restart pending there: not wanted now */
				pr[d].serving = s;
				pr[d].pending_since = -1;
				pr[d].next_at = now + SUCC_INTERVAL_S;
				pr[d].retry_s = SUCC_RETRY_S;
				service_count_takeover(o->service, s);
				log_msg(LOG_INFO, "worker %d (pid %d) serves device %d after building its plans "
				        "in %.1f s; worker %d drains and exits", s, (int)w[s].pid,
				        service_device(o->service, s), now - w[s].started, a);
			} else {
				bound_build(w, s, now, "a successor");
			}
			continue;
		}
		if (w[a].pid <= 0 || w[a].retiring)
			continue;
		struct service_worker sw;
		if (!service_read(o->service, a, &sw))
			continue;
		if (sw.published && !sw.serving) /* the first worker builds before it serves */
			bound_build(w, a, now, "the first worker");
		if (!sw.published || !sw.serving || !idle_pending(&sw)) {
			pr[d].pending_since = -1;
			continue;
		}
		if (pr[d].pending_since < 0)
			pr[d].pending_since = now;
		if (now - pr[d].pending_since < SUCC_GAP_S || now < pr[d].next_at)
			continue;
		service_hand(o->service, s, a);
		service_set_quick(o->service, s, 0);
		if (!start(o, &w[s], s))
			log_msg(LOG_INFO, "worker %d: a successor for device %d, whose serving worker %d has "
			        "idle work waiting: it builds that worker's plans and the wanted ones, then "
			        "takes over", s, service_device(o->service, s), a);
		else
			pr[d].next_at = now + pr[d].retry_s;
	}
}

int supervisor_run(const struct supervisor_opts *o)
{
	int n = service_workers(o->service);
	int m = service_alternates(o->service); /* > 0: slot pairs (--compile-mode process) */
	struct worker w[SERVICE_MAX_WORKERS];
	memset(w, 0, sizeof w);
	struct pair pr[SERVICE_MAX_WORKERS];
	for (int d = 0; d < m; d++)
		pr[d] = (struct pair){d, -1, 0, SUCC_RETRY_S};
	sigset_t set = *o->signals;
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int rc = 0, stopping = 0, ever_ready = 0, said_ready = 0, last_ready = -1;
	double stop_by = 0, next_ping = 0, next_extend = 0;
	unsigned long long wd = o->notify ? sdnotify_watchdog_usec(o->notify) : 0;
	double ping_every = wd ? (double)wd / 2e6 : 0;
	for (int i = 0; i < (m ? m : n); i++)
		if (start(o, &w[i], i)) {
			rc = 1;
			stopping = 1;
			stop_by = clock_s() + o->cfg->drain_timeout + STOP_GRACE_S;
			signal_all(w, n, SIGTERM);
			break;
		}
	sdnotify_sendf(o->notify, "STATUS=starting %d workers, one a GPU; serving on %s once one is "
	               "ready", m ? m : n, o->endpoint);
	for (;;) {
		int running = 0;
		for (int i = 0; i < n; i++)
			running += w[i].pid > 0;
		if (stopping && !running)
			break;
		struct timespec tick = {0, (long)(TICK_S * 1e9)};
		int sig = sigtimedwait(&set, NULL, &tick);
		double now = clock_s();
		if (sig == SIGTERM || sig == SIGINT || sig == SIGQUIT) {
			if (!stopping) {
				stopping = 1;
				stop_by = now + o->cfg->drain_timeout + STOP_GRACE_S;
				sdnotify_sendf(o->notify, "STOPPING=1\nSTATUS=signal %d: the workers drain "
				               "(up to %g s)", sig, o->cfg->drain_timeout);
				log_msg(LOG_INFO, "signal %d: stopping %d workers", sig, running);
				close_listening(o);
			}
			signal_all(w, n, SIGTERM);
		} else if (sig == SIGHUP || sig == SIGUSR1) {
			signal_all(w, n, sig);
		}
		/* reap */
		int status;
		pid_t pid;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			int i;
			for (i = 0; i < n && w[i].pid != pid; i++)
				;
			if (i == n)
				continue;
			char how[96];
			describe(status, how, sizeof how);
			w[i].pid = 0;
			service_ended(o->service, i);
			if (stopping) {
				log_msg(status ? LOG_WARN : LOG_INFO, "worker %d %s", i, how);
				continue;
			}
			if (w[i].retiring) {
				log_msg(status ? LOG_WARN : LOG_INFO, "worker %d %s after its successor took "
				        "over", i, how);
				continue;
			}
			if (m && pr[i % m].serving != i) { /* a successor that never served */
				struct pair *p = &pr[i % m];
				p->next_at = now + p->retry_s;
				log_msg(LOG_WARN, "worker %d, a successor, %s before it served; worker %d "
				        "serves on; another successor in %.0f s", i, how, p->serving,
				        p->retry_s);
				p->retry_s = p->retry_s * 2 > SUCC_RETRY_MAX_S ? SUCC_RETRY_MAX_S
				                                               : p->retry_s * 2;
				continue;
			}
			if (!ever_ready) { /* it never served: a start that cannot work */
				log_msg(LOG_ERROR, "worker %d %s before the service was ever ready: stopping",
				        i, how);
				rc = 1;
				stopping = 1;
				stop_by = now + o->cfg->drain_timeout + STOP_GRACE_S;
				signal_all(w, n, SIGTERM);
				continue;
			}
			w[i].faults = now - w[i].started >= STEADY_S ? 1 : w[i].faults + 1;
			double delay = BACKOFF_FIRST_S;
			for (int k = 1; k < w[i].faults && delay < BACKOFF_MAX_S; k++)
				delay *= 2;
			if (delay > BACKOFF_MAX_S)
				delay = BACKOFF_MAX_S;
			w[i].restart_at = now + delay;
			service_count_restart(o->service, i);
			log_msg(LOG_WARN, "worker %d %s%s; restarting it in %.1f s (the others serve)", i,
			        how, w[i].killed ? " (hung)" : "", delay);
		}
		if (stopping) {
			if (now > stop_by) {
				log_msg(LOG_WARN, "workers still running %.0f s past --drain-timeout: killed",
				        STOP_GRACE_S);
				signal_all(w, n, SIGKILL);
				stop_by = now + 3600;
			}
			continue;
		}
		/* restarts due, hangs, readiness */
		int ready = 0, fresh = 0;
		for (int i = 0; i < n; i++) {
			if (!w[i].pid) {
				if (w[i].restart_at > 0 && now >= w[i].restart_at) {
					if (m) { /* the shapes it served, wanted again; it serves once warm and
					          a successor builds them */
						service_hand(o->service, i, i);
						service_set_quick(o->service, i, 1);
					}
					if (start(o, &w[i], i))
						w[i].restart_at = now + BACKOFF_MAX_S; /* fork failed: later */
				}
				continue;
			}
			struct service_worker sw;
			service_read(o->service, i, &sw);
			if (!sw.published) { /* still starting: making its contexts, bounded too */
				double bound = START_TIMEOUTS * o->cfg->worker_timeout;
				if (bound < START_MIN_S)
					bound = START_MIN_S;
				if (now - w[i].started > bound && !w[i].killed) {
					log_msg(LOG_ERROR, "worker %d (pid %d) still starting after %.1f s (the "
					        "bound: %g s, 5 x --worker-timeout, 30 s at least): killed", i,
					        (int)w[i].pid, now - w[i].started, bound);
					kill(w[i].pid, SIGKILL);
					w[i].killed = 1;
				}
				continue;
			}
			double gpu_age = 0;
			for (int g = 0; g < sw.status.ngpus; g++)
				if (sw.status.gpu[g].warmed && sw.status.gpu[g].heartbeat_age > gpu_age)
					gpu_age = sw.status.gpu[g].heartbeat_age;
			/* a stopped or stuck process stops its beat; a stuck GPU thread ages in what the
			 * live process publishes */
			double age = sw.beat_age > gpu_age ? sw.beat_age : gpu_age;
			if (age > o->cfg->worker_timeout && !w[i].killed) {
				log_msg(LOG_ERROR, "worker %d (pid %d) silent for %.1f s (heartbeat %.1f s ago, "
				        "its GPU thread %.1f s; --worker-timeout %g): killed", i,
				        (int)w[i].pid, age, sw.beat_age, gpu_age, o->cfg->worker_timeout);
				kill(w[i].pid, SIGKILL);
				w[i].killed = 1;
				continue;
			}
			fresh += age <= o->cfg->worker_timeout;
			if (sw.ready) {
				ready++;
				w[i].was_ready = 1;
			}
		}
		if (ready && !ever_ready)
			ever_ready = 1;
		int all_were = 1;
		for (int i = 0; i < n; i++)
			all_were &= w[i].was_ready || (m && pr[i % m].serving != i);
		if (all_were && !said_ready) {
			said_ready = 1;
			sdnotify_send(o->notify, "READY=1");
			log_msg(LOG_INFO, "ready: %d workers, one a GPU", m ? m : n);
		}
		/* until READY=1, while a worker beats, the manager's start timeout is kept a
		 * --worker-timeout ahead (the first worker of --compile-mode process does its idle
		 * work before it serves: measuring FFT shapes may outlast TimeoutStartSec) */
		if (!said_ready && fresh && now >= next_extend) {
			sdnotify_sendf(o->notify, "EXTEND_TIMEOUT_USEC=%llu",
			               (unsigned long long)((o->cfg->worker_timeout + 2.0) * 1e6));
			next_extend = now + 1.0;
		}
		if (ready != last_ready && said_ready) {
			if (ready)
				sdnotify_sendf(o->notify, "STATUS=ready on %s: %d of %d GPU workers ready",
				               o->endpoint, ready, m ? m : n);
			else
				sdnotify_sendf(o->notify, "STATUS=none of %d GPU workers ready; not ready, "
				               "serving on %s", m ? m : n, o->endpoint);
			last_ready = ready;
		}
		if (m)
			tend_pairs(o, w, pr, m, now);
		if (ping_every > 0 && fresh && now >= next_ping) {
			sdnotify_send(o->notify, "WATCHDOG=1");
			next_ping = now + ping_every;
		}
	}
	log_msg(LOG_INFO, "every worker has exited");
	return rc;
}
