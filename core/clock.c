/* The monotonic clock; see clock.h. */
#include "core/clock.h"

#include <time.h>

double clock_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double clock_ms(void)
{
	return clock_s() * 1e3;
}

int clock_cond_wait_ns(pthread_cond_t *cv, pthread_mutex_t *m, long long ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	long long t = (long long)ts.tv_nsec + (ns > 0 ? ns : 0);
	ts.tv_sec += (time_t)(t / 1000000000LL);
	ts.tv_nsec = (long)(t % 1000000000LL);
	return pthread_cond_timedwait(cv, m, &ts);
}
