/* fftbloomd over several GPUs: the process started forks one worker process a GPU (each the
 * single-GPU daemon, serving the listening sockets bound for it, or the one socket passed in
 * LISTEN_FDS that they all share), restarts alone one that faults (exits or is killed) or hangs (its
 * heartbeat or its GPU thread silent past --worker-timeout: SIGKILL, then a restart), with a
 * backoff, forwards SIGTERM/SIGINT/SIGQUIT (drain and stop), SIGHUP (reload) and SIGUSR1, and
 * speaks for the service to systemd (READY=1 once every worker was ready, STATUS=, WATCHDOG=1
 * while a worker is fresh, STOPPING=1). It makes no thread and no GL or EGL call, so that each
 * fork starts clean. */
#ifndef FFTBLOOM_DAEMON_SUPERVISOR_H
#define FFTBLOOM_DAEMON_SUPERVISOR_H

#include <signal.h>

#include "core/config.h"
#include "daemon/sdnotify.h"
#include "daemon/service.h"

struct supervisor_opts {
	const struct config *cfg;
	struct service *service;        /* its slots: one a worker */
	struct sdnotify *notify;        /* NULL or disabled: nothing sent */
	const sigset_t *signals;        /* blocked in this thread: TERM, INT, QUIT, HUP, USR1 */
	/* Runs in the forked worker (service_attach done, the signals still blocked) and returns
	 * its exit status. */
	int (*worker_main)(void *ctx, int worker);
	void *ctx;
	int *listen_fds;                /* this process's copies of the listening sockets: closed
	                                   (set to -1) when a stop begins, so that once the workers
	                                   stop accepting, new connections are refused */
	int nlisten;
	const char *endpoint;           /* where the service answers (its STATUS= lines name it) */
};

/* Starts every worker and supervises them until a stop signal has been forwarded and every
 * worker has exited (past --drain-timeout plus 10 s, the rest are killed). Returns the exit
 * status: 0 after a stop; 1 when a worker failed before any worker was ever ready (a start
 * that cannot work: the others are stopped). */
int supervisor_run(const struct supervisor_opts *o);

#endif
