/* A job's cancellation as the engines see it: a flag another thread may raise and a deadline on
 * the monotonic clock (core/clock.h). Long GPU work (a tensor's dispatch loops, an image's
 * tiles) looks at it before issuing each further dispatch and stops there with its
 * E_CANCELLED code; work already issued runs out. The engines know nothing of why (a request's
 * deadline, a shutdown): the daemon decides what a cancellation answers. */
#ifndef FFTBLOOM_GLES_CANCEL_H
#define FFTBLOOM_GLES_CANCEL_H

#include <stdatomic.h>

#include "core/clock.h"

struct gles_cancel {
	atomic_int flag; /* nonzero: stop at the next check (any thread may raise it) */
	double deadline; /* clock_s() past it: stop; 0: none (written by the engine's thread) */
};

/* 1 when c (NULL: never) asks the work to stop now. */
static inline int gles_cancelled(struct gles_cancel *c)
{
	if (!c)
		return 0;
	if (atomic_load_explicit(&c->flag, memory_order_relaxed))
		return 1;
	return c->deadline > 0 && clock_s() > c->deadline;
}

#endif
