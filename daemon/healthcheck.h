/* fftbloomd --health-check URL: one plain-socket HTTP GET for container health checks that have
 * no curl. Succeeds only on a 200 answer. */
#ifndef FFTBLOOM_HEALTHCHECK_H
#define FFTBLOOM_HEALTHCHECK_H

#include <stddef.h>

/* GETs url ("http://HOST[:PORT][/PATH]"; no path means /readyz) within timeout_s seconds.
 * Returns 0 when the status is 200, else -1 with what happened in msg. */
int healthcheck(const char *url, double timeout_s, char *msg, size_t len);

#endif
