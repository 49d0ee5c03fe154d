/* Source images fetched from an origin by URL (GET /v1/bloom?src=URL): only URLs an entry of
 * --origin-allow names (scheme, host, port, path prefix; nothing without one), over libcurl with
 * connect and total timeouts and a size limit checked from Content-Length and while the body
 * arrives; redirects followed here, hop by hop, each hop checked like the first; a host resolved
 * once, every address checked (private, loopback, link-local, multicast, unspecified and the other
 * special ranges refused, v4-mapped v6 as its v4, unless the allow entry names that address as an
 * IP literal), and the connection made to a checked address only (CURLOPT_RESOLVE, and a socket
 * callback refusing any other), so DNS rebinding cannot reach what the check refused. Fetches run
 * on the module's own threads (--origin-concurrency), never on a GPU or connection thread; the
 * caller waits. libcurl is used here alone. Thread-safe. */
#ifndef FFTBLOOM_DAEMON_ORIGIN_H
#define FFTBLOOM_DAEMON_ORIGIN_H

#include <stddef.h>
#include <sys/socket.h>

#define ORIGIN_ERR_LEN 512
#define ORIGIN_MAX_ENTRIES 64
#define ORIGIN_MAX_REDIRECTS 5

enum origin_error {
	ORIGIN_OK = 0,
	ORIGIN_E_OFF = -1,         /* no --origin-allow: nothing is fetched */
	ORIGIN_E_URL = -2,         /* not a URL this module takes: a scheme other than http(s),
	                              userinfo, a fragment, a host written as a number other than
	                              dotted decimal, encoded dots or slashes in the path */
	ORIGIN_E_NOT_ALLOWED = -3, /* no allow entry names the URL (or a redirect's target) */
	ORIGIN_E_ADDRESS = -4,     /* the host is or resolves to a refused address */
	ORIGIN_E_RESOLVE = -5,     /* the host does not resolve */
	ORIGIN_E_CONNECT = -6,     /* no connection (refused, unreachable) */
	ORIGIN_E_TIMEOUT = -7,     /* the connect or the total timeout passed */
	ORIGIN_E_TOO_LARGE = -8,   /* more than --origin-max-bytes (Content-Length or bytes) */
	ORIGIN_E_STATUS = -9,      /* the origin answered other than 200 (status in the result) */
	ORIGIN_E_REDIRECTS = -10,  /* more than ORIGIN_MAX_REDIRECTS, or one without Location */
	ORIGIN_E_BUSY = -11,       /* every fetch thread busy and the wait list full */
	ORIGIN_E_NOMEM = -12,
	ORIGIN_E_TRANSFER = -13,   /* another transfer failure (the message says libcurl's) */
	ORIGIN_E_SHUTDOWN = -14,
	ORIGIN_E_TLS = -15,        /* an https origin's certificate refused, or its handshake
	                              failed; at origin_create: --origin-ca unreadable */
	ORIGIN_E_LOCATION = -16,   /* a redirect's Location is not a URL this module takes (its
	                              fragment dropped first): the origin's fault, not the client's */
};

const char *origin_strerror(int code);

struct origin_opts {
	const char *allow;       /* entries "scheme://host[:port]/prefix", separated by commas
	                            or spaces; "" or NULL: nothing is fetched */
	double connect_timeout;  /* seconds for each hop's connection */
	double timeout;          /* seconds for the whole fetch, redirects included */
	unsigned long long max_bytes; /* bytes of an origin's body at most */
	int concurrency;         /* fetch threads */
	int queue;               /* fetches waiting for a thread at most (ORIGIN_E_BUSY above) */
	const char *ca_file;     /* PEM certificates https origins are checked against instead of
	                            the system's store; "" or NULL: the system's */
};

struct origin;

/* Parses the allow list and starts the threads (none when the list is empty). Returns 0, or
 * ORIGIN_E_URL with the entry and what is wrong with it in err, or ORIGIN_E_NOMEM. */
int origin_create(const struct origin_opts *o, struct origin **out, char err[ORIGIN_ERR_LEN]);
/* Refuses new fetches, lets running ones end and stops the threads. NULL-safe. */
void origin_destroy(struct origin *o);
int origin_enabled(const struct origin *o); /* an allow list is set */

struct origin_result {
	unsigned char *data;     /* the body (malloc'd), NULL when skipped or on failure */
	size_t len;
	int http_status;         /* the last answer's status (0: none) */
	int redirects;           /* hops followed */
	int skipped;             /* the decide callback stopped the transfer before the body */
	char url[2048];          /* the URL the body came from (after redirects) */
	char etag[256];          /* the origin's ETag and Last-Modified ("" when not sent) */
	char last_modified[128];
	unsigned char identity[32]; /* what names this image: SHA-256 of the final URL and the
	                               origin's ETag and Last-Modified where it sent either (known
	                               before the body), else of the URL and the body's bytes */
	int by_validators;       /* identity came from the ETag / Last-Modified */
};

/* Called on the fetch thread once the final 200's headers are in, when the origin sent an ETag
 * or Last-Modified, with the identity they make: returning 1 stops the transfer (the caller has
 * what it needs, e.g. a stored answer); the fetch then returns 0 with skipped set. */
typedef int (*origin_decide_fn)(const unsigned char identity[32], void *ctx);

/* Fetches url on a fetch thread and waits for it. 0 with *res filled (origin_result_free it),
 * or a negative origin_error with a message naming the URL and the reason in err (res's
 * http_status and url say where it stopped). */
int origin_fetch(struct origin *o, const char *url, origin_decide_fn decide, void *ctx,
                 struct origin_result *res, char err[ORIGIN_ERR_LEN]);
void origin_result_free(struct origin_result *r);

/* The checks a fetch makes before connecting, without connecting: the URL's form and the
 * allow list. 0, or ORIGIN_E_OFF, _URL, _NOT_ALLOWED with a message. *explicit_ip says whether
 * the entry that names it names its host as an IP literal (then that address is allowed
 * whatever its range). */
int origin_check_url(const struct origin *o, const char *url, int *explicit_ip,
                     char err[ORIGIN_ERR_LEN]);

/* Why an address may not be fetched from unless named: "loopback", "private", "link-local",
 * "multicast", "unspecified", "reserved" (and the other special-purpose ranges), or NULL for an
 * ordinary public address. A v4-mapped, v4-compatible, NAT64 or 6to4 IPv6 address is judged by
 * the IPv4 address it carries. */
const char *origin_address_refused(const struct sockaddr *sa);

/* Counts since the start, for /metrics. */
struct origin_stats {
	unsigned long long fetches, failures, bytes, skipped, busy;
	int running, waiting;
};
void origin_stats(struct origin *o, struct origin_stats *s);

#endif
