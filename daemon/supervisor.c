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

struct worker {
	pid_t pid;                /* 0: not running */
	double started;           /* clock_s() of the fork */
	double restart_at;        /* > 0: start again then */
	int faults;               /* quick faults in a row (the backoff's exponent) */
	int was_ready;            /* ready once since started */
	int killed;               /* SIGKILLed for a hang */
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

int supervisor_run(const struct supervisor_opts *o)
{
	int n = service_workers(o->service);
	struct worker w[SERVICE_MAX_WORKERS];
	memset(w, 0, sizeof w);
	sigset_t set = *o->signals;
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int rc = 0, stopping = 0, ever_ready = 0, said_ready = 0, last_ready = -1;
	double stop_by = 0, next_ping = 0;
	unsigned long long wd = o->notify ? sdnotify_watchdog_usec(o->notify) : 0;
	double ping_every = wd ? (double)wd / 2e6 : 0;
	for (int i = 0; i < n; i++)
		if (start(o, &w[i], i)) {
			rc = 1;
			stopping = 1;
			stop_by = clock_s() + o->cfg->drain_timeout + STOP_GRACE_S;
			signal_all(w, n, SIGTERM);
			break;
		}
	sdnotify_sendf(o->notify, "STATUS=starting %d workers, one a GPU", n);
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
				if (w[i].restart_at > 0 && now >= w[i].restart_at && start(o, &w[i], i))
					w[i].restart_at = now + BACKOFF_MAX_S; /* fork failed: later */
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
			all_were &= w[i].was_ready;
		if (all_were && !said_ready) {
			said_ready = 1;
			sdnotify_send(o->notify, "READY=1");
			log_msg(LOG_INFO, "ready: %d workers, one a GPU", n);
		}
		if (ready != last_ready && said_ready) {
			sdnotify_sendf(o->notify, "STATUS=%d of %d GPU workers ready", ready, n);
			last_ready = ready;
		}
		if (ping_every > 0 && fresh && now >= next_ping) {
			sdnotify_send(o->notify, "WATCHDOG=1");
			next_ping = now + ping_every;
		}
	}
	log_msg(LOG_INFO, "every worker has exited");
	return rc;
}
