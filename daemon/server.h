/* The HTTP/JSON front of fftbloomd on libmicrohttpd: a thread per connection (a request waits
 * there for the job that decodes, runs on a GPU and encodes it), connection, per-IP, idle,
 * header and body-rate limits, and the routes of the API. Every answer carries X-Request-Id and
 * Server-Timing; every error is {"error": {"status", "code", "message"}}; one log line and one
 * metrics count per request. */
#ifndef FFTBLOOM_SERVER_H
#define FFTBLOOM_SERVER_H

#include <stddef.h>

#include "core/config.h"
#include "daemon/images.h"
#include "daemon/jobs.h"
#include "daemon/kernels.h"
#include "daemon/metrics.h"
#include "daemon/origin.h"
#include "daemon/result_cache.h"
#include "daemon/service.h"

#define SERVER_ERR_LEN 512

/* The listening addresses, bound before the slow part of the start (the GPU contexts) so that a
 * port in use is said at once: --listen on --port, or for localhost 127.0.0.1 and ::1 (where the
 * host has IPv6) on one port. */
struct server_bound {
	int fd[2]; /* bound sockets, not listening yet */
	int n;     /* how many */
	int port;  /* the port bound (--port 0 picks one) */
};

/* Binds cfg's --listen and --port (SO_REUSEPORT with --reuse-port). Returns 0, or -1 with the
 * reason in err ("port N in use on ADDR", a bad address, no permission). */
int server_bind(const struct config *cfg, struct server_bound *b, char err[SERVER_ERR_LEN]);

/* Closes sockets server_create did not take. NULL-safe; idempotent. */
void server_bound_close(struct server_bound *b);

struct server_opts {
	const struct config *cfg;
	struct jobs *jobs;
	struct kernels *kernels;
	struct images *images;   /* stored source images */
	struct metrics *metrics;
	const char *api_key;     /* NULL: no authentication */
	size_t api_key_len;
	const unsigned char *sign_key; /* URL signing key; NULL: GET renders need no signature */
	size_t sign_key_len;
	const char *tls_cert;    /* PEM text; NULL: plain HTTP */
	const char *tls_key;
	int listen_fd;           /* > 0: serve this listening socket (socket activation); 0: serve
	                            bound's */
	struct server_bound *bound; /* server_bind's sockets: server_create takes them (n set to 0) */
	struct service *service; /* several GPUs: the workers' shared region (this one's slot is
	                            service_self); NULL: one process */
	struct origin *origin;   /* GET renders' src= fetches (origin.h); NULL or an empty allow
	                            list: src= is refused */
	struct result_cache *results; /* --result-cache; NULL: none */
	int shared_listen;       /* 1: the listening sockets are shared with another worker
	                            process that goes on accepting (--compile-mode process): a
	                            quiesce closes this process's copy, never shuts them down */
};

struct server;

/* Starts listening. Returns 0, or -1 with the reason in err. */
int server_create(const struct server_opts *o, struct server **out, char err[SERVER_ERR_LEN]);

/* The port actually bound (--port 0 picks one). */
int server_port(const struct server *s);

/* Addresses listened on: 2 for localhost on a host with IPv6 (127.0.0.1 and ::1), else 1. */
int server_listeners(const struct server *s);

/* Stops accepting connections; requests already begun are finished, answers from now on close
 * their connection and /readyz says 503. */
void server_quiesce(struct server *s);

/* Requests begun (headers received) and not yet completed. */
int server_active(struct server *s);

/* Its connection counters and gauges, as /metrics writes them. */
void server_conns(struct server *s, struct service_conns *c);

/* Seconds since a request last began or completed. */
double server_idle_s(struct server *s);

/* Stops the daemon (no job may still be waited for: jobs_shutdown first) and frees. NULL-safe. */
void server_destroy(struct server *s);

#endif
