/* loadgen's HTTP/1.1 client; see loadgen_http.h. */
#include "bench/loadgen_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <unistd.h>

const char *const http_timing_names[HTTP_NTIMING] = {"decode", "queue",    "gpu",      "encode",
                                                     "total",  "gpu_copy", "gpu_wait", "gpu_setup"};

/* t->host as a loopback address in t->addr: 0, or -1 with a message. */
static int set_address(struct http_target *t)
{
	memset(&t->addr, 0, sizeof t->addr);
	struct sockaddr_in *a4 = (struct sockaddr_in *)&t->addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&t->addr;
	if (inet_pton(AF_INET, t->host, &a4->sin_addr) == 1) {
		if ((ntohl(a4->sin_addr.s_addr) >> 24) != 127) {
			fprintf(stderr, "loadgen: %s is not a loopback address\n", t->host);
			return -1;
		}
		a4->sin_family = AF_INET;
		a4->sin_port = htons((unsigned short)t->port);
		t->addrlen = sizeof *a4;
	} else if (inet_pton(AF_INET6, t->host, &a6->sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr)) {
			fprintf(stderr, "loadgen: %s is not a loopback address\n", t->host);
			return -1;
		}
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((unsigned short)t->port);
		t->addrlen = sizeof *a6;
	} else {
		fprintf(stderr, "loadgen: host must be 127.x.x.x, ::1 or localhost, not %s\n", t->host);
		return -1;
	}
	return 0;
}

int http_target_parse(struct http_target *t, const char *url)
{
	if (strncmp(url, "http://", 7)) {
		fprintf(stderr, "loadgen: only http:// URLs\n");
		return -1;
	}
	const char *h = url + 7, *slash = strchr(h, '/');
	size_t hl = slash ? (size_t)(slash - h) : strlen(h);
	if (hl == 0 || hl >= sizeof t->hostname) {
		fprintf(stderr, "loadgen: bad host in %s\n", url);
		return -1;
	}
	memcpy(t->hostname, h, hl);
	t->hostname[hl] = 0;
	snprintf(t->path, sizeof t->path, "%s", slash ? slash : "/");
	t->port = 80;
	char *host = t->hostname, *colon;
	if (host[0] == '[') {
		char *end = strchr(host, ']');
		if (!end) {
			fprintf(stderr, "loadgen: bad host in %s\n", url);
			return -1;
		}
		snprintf(t->host, sizeof t->host, "%.*s", (int)(end - host - 1), host + 1);
		colon = end[1] == ':' ? end + 1 : NULL;
	} else {
		colon = strrchr(host, ':');
		snprintf(t->host, sizeof t->host, "%.*s", colon ? (int)(colon - host) : (int)hl, host);
	}
	if (colon) {
		char *e;
		long p = strtol(colon + 1, &e, 10);
		if (*e || p < 1 || p > 65535) {
			fprintf(stderr, "loadgen: bad port in %s\n", url);
			return -1;
		}
		t->port = (int)p;
	}
	if (!strcmp(t->host, "localhost"))
		snprintf(t->host, sizeof t->host, "127.0.0.1");
	return set_address(t);
}

int http_connect(const struct http_target *t)
{
	int fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct timeval tv = {(time_t)t->timeout,
	                     (suseconds_t)((t->timeout - (time_t)t->timeout) * 1e6)};
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (const struct sockaddr *)&t->addr, t->addrlen)) {
		close(fd);
		return -1;
	}
	return fd;
}

int http_send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Receives more into k's buffer (grown as needed): 0, or -1 at the end or an error. */
static int fill(struct http_conn *k)
{
	if (k->cap - k->len < 65536) {
		size_t nc = k->cap ? k->cap * 2 : 262144;
		if (nc > HTTP_MAX_BODY + HTTP_MAX_HEAD)
			return -1;
		char *nb = realloc(k->buf, nc);
		if (!nb)
			return -1;
		k->buf = nb;
		k->cap = nc;
	}
	for (;;) {
		ssize_t r = recv(k->fd, k->buf + k->len, k->cap - k->len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		k->len += (size_t)r;
		*k->bytes_in += (unsigned long long)r;
		return 0;
	}
}

static void consume(struct http_conn *k, size_t n)
{
	memmove(k->buf, k->buf + n, k->len - n);
	k->len -= n;
}

/* Finds "\r\n" at or after off, reading more as needed; returns its offset or -1. */
static long find_crlf(struct http_conn *k, size_t off, size_t limit)
{
	for (;;) {
		for (size_t i = off; i + 1 < k->len; i++)
			if (k->buf[i] == '\r' && k->buf[i + 1] == '\n')
				return (long)i;
		if (k->len > limit || fill(k))
			return -1;
	}
}

static void parse_timing(const char *v, float t[HTTP_NTIMING])
{
	for (int i = 0; i < HTTP_NTIMING; i++) {
		char key[32];
		snprintf(key, sizeof key, "%s;dur=", http_timing_names[i]);
		const char *p = strstr(v, key);
		t[i] = p ? strtof(p + strlen(key), NULL) : -1.0f;
	}
}

/* The head's framing: Content-Length (-1: none) and chunked. */
struct framing {
	long long clen;
	int chunked;
};

/* One header line "Name: value" (NUL-terminated, changed in place) into a and f. */
static void header_line(char *line, struct http_answer *a, struct framing *f)
{
	char *colon = strchr(line, ':');
	if (!colon)
		return;
	*colon = 0;
	char *v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	if (!strcasecmp(line, "Content-Length"))
		f->clen = strtoll(v, NULL, 10);
	else if (!strcasecmp(line, "Transfer-Encoding") && strcasestr(v, "chunked"))
		f->chunked = 1;
	else if (!strcasecmp(line, "Connection") && strcasestr(v, "close"))
		a->close = 1;
	else if (!strcasecmp(line, "Server-Timing"))
		parse_timing(v, a->timing);
}

/* Reads and consumes the head: 0, or -1. */
static int read_head(struct http_conn *k, struct http_answer *a, struct framing *f)
{
	size_t hend = 0;
	for (;;) {
		char *e = k->len >= 4 ? memmem(k->buf, k->len, "\r\n\r\n", 4) : NULL;
		if (e) {
			hend = (size_t)(e - k->buf) + 4;
			break;
		}
		if (k->len > HTTP_MAX_HEAD || fill(k))
			return -1;
	}
	k->buf[hend - 2] = 0;
	char *line = k->buf, *next;
	if (strncmp(line, "HTTP/1.", 7) || strlen(line) < 12)
		return -1;
	a->status = atoi(line + 9);
	if (!strncmp(line, "HTTP/1.0", 8))
		a->close = 1;
	*f = (struct framing){-1, 0};
	for (line = strstr(line, "\r\n"); line; line = next) {
		line += 2;
		next = strstr(line, "\r\n");
		if (next)
			*next = 0;
		header_line(line, a, f);
		if (!next)
			break;
	}
	consume(k, hend);
	return 0;
}

/* A chunked body into *body (*blen bytes): 0, or -1. */
static int read_chunked(struct http_conn *k, char **body, size_t *blen)
{
	for (int guard = 0; guard < 1000000; guard++) {
		long e = find_crlf(k, 0, HTTP_MAX_HEAD);
		if (e < 0)
			return -1;
		unsigned long long n = strtoull(k->buf, NULL, 16);
		consume(k, (size_t)e + 2);
		if (n > HTTP_MAX_BODY || *blen + n > HTTP_MAX_BODY)
			return -1;
		while (k->len < n + 2)
			if (fill(k))
				return -1;
		if (n) {
			char *nb = realloc(*body, *blen + n + 1);
			if (!nb)
				return -1;
			*body = nb;
			memcpy(*body + *blen, k->buf, n);
			*blen += n;
		}
		consume(k, (size_t)n + 2);
		if (!n)
			return 0; /* no trailers expected */
	}
	return 0;
}

/* The next n bytes (a Content-Length body, or what came before the close) into *body. */
static int take(struct http_conn *k, size_t n, char **body, size_t *blen)
{
	if (!(*body = malloc(n + 1)))
		return -1;
	memcpy(*body, k->buf, n);
	*blen = n;
	consume(k, n);
	return 0;
}

/* The body as the head framed it: 0, or -1. */
static int read_body(struct http_conn *k, const struct framing *f, struct http_answer *a,
                     char **body, size_t *blen)
{
	if (f->chunked)
		return read_chunked(k, body, blen);
	if (f->clen >= 0) {
		if ((unsigned long long)f->clen > HTTP_MAX_BODY)
			return -1;
		while (k->len < (size_t)f->clen)
			if (fill(k))
				return -1;
		return take(k, (size_t)f->clen, body, blen);
	}
	a->close = 1; /* until the close */
	while (k->len <= HTTP_MAX_BODY && !fill(k))
		;
	return take(k, k->len, body, blen);
}

int http_read_answer(struct http_conn *k, struct http_answer *a, char **body_out)
{
	memset(a, 0, sizeof *a);
	for (int i = 0; i < HTTP_NTIMING; i++)
		a->timing[i] = -1;
	struct framing f;
	if (read_head(k, a, &f))
		return -1;
	if (a->status == 204 || a->status == 304 || (a->status >= 100 && a->status < 200))
		return 0;
	char *body = NULL;
	size_t blen = 0;
	if (read_body(k, &f, a, &body, &blen)) {
		free(body);
		return -1;
	}
	a->body_len = blen;
	if (blen >= 2)
		memcpy(a->head2, body, 2);
	if (!body_out) {
		free(body);
		return 0;
	}
	if (!body && !(body = malloc(1)))
		return -1;
	body[blen] = 0;
	*body_out = body;
	return 0;
}

int http_get(const struct http_target *t, char **body, size_t *len)
{
	unsigned long long bin = 0;
	struct http_conn k = {http_connect(t), NULL, 0, 0, &bin};
	*body = NULL;
	*len = 0;
	if (k.fd < 0) {
		fprintf(stderr, "loadgen: cannot connect to %s:%d\n", t->host, t->port);
		return -1;
	}
	char head[4096];
	int hl = snprintf(head, sizeof head, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
	                  t->path, t->hostname);
	struct http_answer a;
	int rc = http_send_all(k.fd, head, (size_t)hl) || http_read_answer(&k, &a, body);
	close(k.fd);
	free(k.buf);
	if (rc) {
		fprintf(stderr, "loadgen: no answer from %s:%d%s\n", t->host, t->port, t->path);
		free(*body);
		*body = NULL;
		return -1;
	}
	*len = a.body_len;
	return a.status;
}

double http_metric_sum(const struct http_target *t, const char *name, int *series)
{
	char *body;
	size_t len;
	*series = 0;
	if (http_get(t, &body, &len) != 200) {
		free(body);
		return -1;
	}
	double sum = 0;
	size_t nl = strlen(name);
	char *end = body + len;
	for (char *line = body; line < end;) {
		char *eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		*eol = 0; /* http_read_answer leaves a byte after the body */
		if ((size_t)(eol - line) > nl && !memcmp(line, name, nl) &&
		    (line[nl] == ' ' || line[nl] == '{')) {
			char *v = strrchr(line, ' '); /* "NAME{labels} VALUE" */
			if (v) {
				sum += strtod(v + 1, NULL);
				(*series)++;
			}
		}
		line = eol + 1;
	}
	free(body);
	return sum;
}
