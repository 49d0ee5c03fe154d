/* The monotonic clock; see clock.h. */
#include "protocol/clock.h"

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
