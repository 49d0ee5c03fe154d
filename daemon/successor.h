/* A worker of --compile-mode process (docs/deployment.md, "Idle work in a successor
 * process") before its server starts: a successor (or the first worker) builds the frame shapes
 * its slot was handed and every piece of its idle work, then runs a JPEG frame of its newest
 * sizes through the whole path; a serving worker restarted after a fault serves once warm and
 * leaves its shapes to a successor. */
#ifndef FFTBLOOM_DAEMON_SUCCESSOR_H
#define FFTBLOOM_DAEMON_SUCCESSOR_H

#include <signal.h>

#include "daemon/jobs.h"
#include "daemon/service.h"

/* Called once jobs_create returned, with the worker's signals blocked (set: TERM, INT, QUIT,
 * HUP, USR1, taken by sigtimedwait while it waits). Returns 0 when the worker may serve (its
 * jobs then do no idle work: JOBS_IDLE_OFF), 1 when a stop signal came first, -1 when a GPU
 * thread failed or memory ran out; *hup is set when a SIGHUP came meanwhile (the caller reloads
 * once it serves). */
int successor_prepare(struct service *svc, struct jobs *jobs, const sigset_t *set, int *hup);

#endif
