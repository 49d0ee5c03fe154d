/* The one clock: monotonic time in seconds or milliseconds, for durations, deadlines and
 * timings (never for dates). */
#ifndef FFTBLOOM_CLOCK_H
#define FFTBLOOM_CLOCK_H

double clock_s(void);  /* CLOCK_MONOTONIC, seconds */
double clock_ms(void); /* the same, milliseconds */

#include <pthread.h>
/* pthread_cond_timedwait on cv (m held) for at most ns nanoseconds from now (the condition
 * variable's default clock, CLOCK_REALTIME); returns what it returns. */
int clock_cond_wait_ns(pthread_cond_t *cv, pthread_mutex_t *m, long long ns);

#endif
