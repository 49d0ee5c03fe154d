/* fftbloomd --health-check [URL]: one HTTP or HTTPS GET (GnuTLS, which libmicrohttpd already
 * brings) for container health checks that have no curl. Succeeds only on a 200 answer. */
#ifndef FFTBLOOM_HEALTHCHECK_H
#define FFTBLOOM_HEALTHCHECK_H

#include <stddef.h>

/* GETs url ("http://HOST[:PORT][/PATH]" or "https://..."; no path means /readyz) within
 * timeout_s seconds. HTTPS does not verify the server's certificate: the check asks whether the
 * daemon answers (it runs beside it), not who it is. Returns 0 when the status is 200, else -1
 * with what happened in msg. */
int healthcheck(const char *url, double timeout_s, char *msg, size_t len);

/* The URL of path on a daemon listening on listen:port (a wildcard address becomes the
 * loopback address of its family), https when tls. Returns 0, or -1 with the reason in msg
 * (port 0: the port is chosen at start and cannot be known here). */
int healthcheck_url(const char *listen, int port, int tls, const char *path, char *url,
                    size_t url_len, char *msg, size_t len);

#endif
