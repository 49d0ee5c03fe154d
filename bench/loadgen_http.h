/* loadgen's HTTP/1.1 client (bench/loadgen.c): a loopback target parsed from its URL, a
 * connection's read buffer, one answer read (Content-Length, chunked or until close, with its
 * Server-Timing durations), one GET, and a Prometheus sum read from /metrics. Blocking sockets
 * bounded by the target's timeout; messages go to stderr as "loadgen: ...". */
#ifndef FFTBLOOM_BENCH_LOADGEN_HTTP_H
#define FFTBLOOM_BENCH_LOADGEN_HTTP_H

#include <stddef.h>
#include <sys/socket.h>

#define HTTP_MAX_HEAD 16384
#define HTTP_MAX_BODY (512u << 20)
#define HTTP_NTIMING 8 /* the Server-Timing names fftbloomd sends: http_timing_names */

extern const char *const http_timing_names[HTTP_NTIMING];

struct http_target {
	char host[64], hostname[256], path[2048]; /* host: the address; hostname: Host's value */
	int port;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	double timeout; /* seconds a socket may block */
};

/* Splits http://HOST[:PORT]/PATH into t (its timeout left as it is); only loopback hosts are
 * accepted. 0 or -1 with a message. */
int http_target_parse(struct http_target *t, const char *url);

/* A connected TCP socket (no delay, t's timeouts), or -1. */
int http_connect(const struct http_target *t);

/* 0, or -1 when the peer is gone or a timeout passed. */
int http_send_all(int fd, const void *buf, size_t len);

/* A connection's read buffer: bytes received but not yet consumed. */
struct http_conn {
	int fd;
	char *buf; /* malloc'd; the owner frees it */
	size_t len, cap;
	unsigned long long *bytes_in; /* counts what is received */
};

struct http_answer {
	int status;
	int close;                  /* the server closes the connection after it */
	float timing[HTTP_NTIMING]; /* Server-Timing durations in ms; -1 when absent */
	unsigned char head2[2];     /* first two body bytes */
	size_t body_len;
};

/* Reads one answer from k; the body into *body_out (NUL-terminated, free it) unless body_out
 * is NULL. 0, or -1 on an I/O or protocol error (drop the connection then). */
int http_read_answer(struct http_conn *k, struct http_answer *a, char **body_out);

/* One GET of t's URL: the status (or -1 with a message), the body in *body (free it). */
int http_get(const struct http_target *t, char **body, size_t *len);

/* The sum of the samples of a Prometheus metric (every label set) at t's URL, and how many
 * series it has in *series. -1 when the page cannot be read. */
double http_metric_sum(const struct http_target *t, const char *name, int *series);

#endif
