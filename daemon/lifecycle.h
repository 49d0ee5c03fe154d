/* fftbloomd's account of itself to a service manager (systemd Type=notify, through sdnotify):
 * READY=1 once every GPU thread has its context and has finished the --warm-sizes warm-up,
 * EXTEND_TIMEOUT_USEC= while a warm-up makes progress, STATUS= lines as things change,
 * WATCHDOG=1 at half the manager's interval only while every GPU thread's heartbeat is fresh (a
 * hung GPU stops the pings, so the manager restarts the service), STOPPING=1 on drain.
 * Without a service manager it only logs the moment the daemon is ready. */
#ifndef FFTBLOOM_LIFECYCLE_H
#define FFTBLOOM_LIFECYCLE_H

#include <stddef.h>

#include "daemon/jobs.h"
#include "daemon/sdnotify.h"

enum lifecycle_state {
	LIFECYCLE_WARMING = 0, /* a GPU thread is still warming up (or has no context yet) */
	LIFECYCLE_UP,          /* every GPU thread alive, warmed, heard from within the timeout */
	LIFECYCLE_STALE,       /* a warmed GPU thread has been silent longer than the timeout */
	LIFECYCLE_FAILED,      /* a GPU thread's warm-up failed, or its thread ended */
};

/* The GPU threads' state by the rules above (the first GPU thread that is not up decides, and
 * why says which and how; "" when up). A thread whose heartbeat_age equals the timeout is
 * still fresh. Pure: reads st only. */
int lifecycle_gpu_state(const struct jobs_status *st, double heartbeat_timeout, char *why,
                        size_t len);

struct lifecycle;

/* notify may be NULL or disabled (then nothing is sent). endpoint names where the daemon
 * serves ("http://0.0.0.0:8080"), for STATUS= and the log. Sends STATUS= at once. */
int lifecycle_create(struct sdnotify *notify, struct jobs *jobs, double heartbeat_timeout,
                     const char *endpoint, struct lifecycle **out);
void lifecycle_destroy(struct lifecycle *l);

/* Does what is due now: READY=1 (once), STATUS= when it changed (at most once a second unless
 * the state changed), a watchdog ping when its half-interval has passed and the state is
 * LIFECYCLE_UP. Returns the seconds until something may next be due (0.001 to 1): the caller
 * waits that long (for a signal, or work) and calls again. */
double lifecycle_tick(struct lifecycle *l);

/* STOPPING=1 with a STATUS= line naming the requests still open; later ticks keep feeding the
 * watchdog while the GPU threads stay fresh and send no other STATUS=. */
void lifecycle_stopping(struct lifecycle *l, int open_requests, double drain_timeout);

/* After a stop signal the process ends within drain (--drain-timeout) plus a grace of seconds
 * whatever happens: a GL call that never returns (a hung GPU or driver) would otherwise hold a
 * GPU thread, and the process, for ever. A detached thread then logs why and exits with status
 * 1, so the service manager restarts the daemon. Call once, when the drain begins; a thread
 * that cannot start is logged and the stop goes on unguarded. */
void lifecycle_stop_guard(double drain);

/* 1 once READY=1 was due (also without a service manager). */
int lifecycle_is_ready(const struct lifecycle *l);

#endif
