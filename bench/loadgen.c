/* loadgen: a small HTTP/1.1 load tool for fftbloomd's end-to-end benchmark. One keep-alive
 * connection per client thread, request bodies rotated from the given files, every answer checked
 * (status; a 200 body must be a JPEG), latency percentiles and Server-Timing medians reported,
 * with --json as the harness's result line (bench/bench_json.h; the e2e suite's e2e.* workloads),
 * the GPU threads' busy fraction read from the daemon's /metrics before and after, and its queue
 * depth sampled from /metrics every 0.2 s during the load (what an autoscaler on queue depth sees,
 * deploy/kubernetes/scaledobject.yaml).
 * Loopback only; bounded by a duration, a request count and a per-socket timeout. */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_json.h"

#define MAX_FILES 64
#define MAX_CLIENTS 1024
#define MAX_STATUS 32
#define MAX_HEAD 16384
#define MAX_BODY (512u << 20)
#define MAX_SAMPLES (1u << 22) /* latencies kept per thread at most */
#define NTIMING 8

static const char *timing_names[NTIMING] = {"decode", "queue", "gpu", "encode", "total",
                                            "gpu_copy", "gpu_wait", "gpu_setup"};

struct body {
	unsigned char *data;
	size_t len;
};

struct cfg {
	int clients;
	double seconds;
	long long max_req; /* 0: no count limit (the duration bounds the run) */
	double timeout;    /* seconds a socket may block */
	int json;
	int server_pid; /* --server-pid: the daemon, whose CPU time is read from /proc */
	double parallel_ceiling_fps; /* the planes path on all cores at once (codec_ceiling) */
	int expect_jpeg;
	const char *label;
	const char *id, *suite, *variant, *machine, *gpu, *driver, *command; /* the result line */
	const char *metrics_url; /* the daemon's /metrics, for the GPU busy fraction */
	double ceiling_fps, planes_ceiling_fps; /* the codec ceilings, for their fractions */
	char host[64], hostname[256], path[2048];
	int port;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	struct body files[MAX_FILES];
	int nfiles;
};

struct sample {
	float latency_ms;
	float timing[NTIMING]; /* Server-Timing durations in ms; negative when absent */
};

struct client {
	pthread_t th;
	int idx;
	const struct cfg *c;
	struct sample *samples; /* every completed answer (any status) */
	size_t nsamples, cap;
	unsigned long long ok, ok_in_time, bad_body, io_errors, connects, bytes_out, bytes_in;
	int status[MAX_STATUS], status_n[MAX_STATUS], nstatus;
	double t_last; /* monotonic time of the last completed answer */
};

static atomic_llong g_issued;
static atomic_int g_finished; /* client threads that have returned */
static double g_t0, g_deadline;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int read_file(const char *path, struct body *b)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || ftell(f) <= 0 || ftell(f) > (long)MAX_BODY) {
		fclose(f);
		return -1;
	}
	b->len = (size_t)ftell(f);
	rewind(f);
	b->data = malloc(b->len);
	int rc = b->data && fread(b->data, 1, b->len, f) == b->len ? 0 : -1;
	fclose(f);
	return rc;
}

/* Splits http://HOST[:PORT]/PATH; only loopback hosts are accepted. 0 or -1 with a message. */
static int parse_url(struct cfg *c, const char *url)
{
	if (strncmp(url, "http://", 7)) {
		fprintf(stderr, "loadgen: only http:// URLs\n");
		return -1;
	}
	const char *h = url + 7, *slash = strchr(h, '/');
	size_t hl = slash ? (size_t)(slash - h) : strlen(h);
	if (hl == 0 || hl >= sizeof c->hostname) {
		fprintf(stderr, "loadgen: bad host in %s\n", url);
		return -1;
	}
	memcpy(c->hostname, h, hl);
	c->hostname[hl] = 0;
	snprintf(c->path, sizeof c->path, "%s", slash ? slash : "/");
	c->port = 80;
	char *host = c->hostname, *colon;
	if (host[0] == '[') {
		char *end = strchr(host, ']');
		if (!end) {
			fprintf(stderr, "loadgen: bad host in %s\n", url);
			return -1;
		}
		snprintf(c->host, sizeof c->host, "%.*s", (int)(end - host - 1), host + 1);
		colon = end[1] == ':' ? end + 1 : NULL;
	} else {
		colon = strrchr(host, ':');
		snprintf(c->host, sizeof c->host, "%.*s", colon ? (int)(colon - host) : (int)hl, host);
	}
	if (colon) {
		char *e;
		long p = strtol(colon + 1, &e, 10);
		if (*e || p < 1 || p > 65535) {
			fprintf(stderr, "loadgen: bad port in %s\n", url);
			return -1;
		}
		c->port = (int)p;
	}
	if (!strcmp(c->host, "localhost"))
		snprintf(c->host, sizeof c->host, "127.0.0.1");
	memset(&c->addr, 0, sizeof c->addr);
	struct sockaddr_in *a4 = (struct sockaddr_in *)&c->addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&c->addr;
	if (inet_pton(AF_INET, c->host, &a4->sin_addr) == 1) {
		if ((ntohl(a4->sin_addr.s_addr) >> 24) != 127) {
			fprintf(stderr, "loadgen: %s is not a loopback address\n", c->host);
			return -1;
		}
		a4->sin_family = AF_INET;
		a4->sin_port = htons((unsigned short)c->port);
		c->addrlen = sizeof *a4;
	} else if (inet_pton(AF_INET6, c->host, &a6->sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr)) {
			fprintf(stderr, "loadgen: %s is not a loopback address\n", c->host);
			return -1;
		}
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((unsigned short)c->port);
		c->addrlen = sizeof *a6;
	} else {
		fprintf(stderr, "loadgen: host must be 127.x.x.x, ::1 or localhost, not %s\n", c->host);
		return -1;
	}
	return 0;
}

static int connect_to(const struct cfg *c)
{
	int fd = socket(c->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct timeval tv = {(time_t)c->timeout, (suseconds_t)((c->timeout - (time_t)c->timeout) * 1e6)};
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (const struct sockaddr *)&c->addr, c->addrlen)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const void *buf, size_t len)
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

/* A connection's read buffer: bytes received but not yet consumed. */
struct conn {
	int fd;
	char *buf;
	size_t len, cap;
	unsigned long long *bytes_in;
};

static int fill(struct conn *k)
{
	if (k->cap - k->len < 65536) {
		size_t nc = k->cap ? k->cap * 2 : 262144;
		if (nc > MAX_BODY + MAX_HEAD)
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

static void consume(struct conn *k, size_t n)
{
	memmove(k->buf, k->buf + n, k->len - n);
	k->len -= n;
}

/* Finds "\r\n" at or after off, reading more as needed; returns its offset or -1. */
static long find_crlf(struct conn *k, size_t off, size_t limit)
{
	for (;;) {
		for (size_t i = off; i + 1 < k->len; i++)
			if (k->buf[i] == '\r' && k->buf[i + 1] == '\n')
				return (long)i;
		if (k->len > limit || fill(k))
			return -1;
	}
}

struct answer {
	int status;
	int close;
	float timing[NTIMING];
	unsigned char head2[2]; /* first two body bytes */
	size_t body_len;
};

static void parse_timing(const char *v, float t[NTIMING])
{
	for (int i = 0; i < NTIMING; i++) {
		char key[32];
		snprintf(key, sizeof key, "%s;dur=", timing_names[i]);
		const char *p = strstr(v, key);
		t[i] = p ? strtof(p + strlen(key), NULL) : -1.0f;
	}
}

/* Reads one answer. 0, or -1 on an I/O or protocol error (the connection is then dropped). */
static int read_answer(struct conn *k, struct answer *a, char **body_out)
{
	memset(a, 0, sizeof *a);
	for (int i = 0; i < NTIMING; i++)
		a->timing[i] = -1;
	/* the head */
	size_t hend = 0;
	for (;;) {
		char *e = k->len >= 4 ? memmem(k->buf, k->len, "\r\n\r\n", 4) : NULL;
		if (e) {
			hend = (size_t)(e - k->buf) + 4;
			break;
		}
		if (k->len > MAX_HEAD || fill(k))
			return -1;
	}
	k->buf[hend - 2] = 0;
	char *line = k->buf, *next;
	if (strncmp(line, "HTTP/1.", 7) || strlen(line) < 12)
		return -1;
	a->status = atoi(line + 9);
	if (!strncmp(line, "HTTP/1.0", 8))
		a->close = 1;
	long long clen = -1;
	int chunked = 0;
	for (line = strstr(line, "\r\n"); line; line = next) {
		line += 2;
		next = strstr(line, "\r\n");
		if (next)
			*next = 0;
		char *colon = strchr(line, ':');
		if (colon) {
			*colon = 0;
			char *v = colon + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			if (!strcasecmp(line, "Content-Length"))
				clen = strtoll(v, NULL, 10);
			else if (!strcasecmp(line, "Transfer-Encoding") && strcasestr(v, "chunked"))
				chunked = 1;
			else if (!strcasecmp(line, "Connection") && strcasestr(v, "close"))
				a->close = 1;
			else if (!strcasecmp(line, "Server-Timing"))
				parse_timing(v, a->timing);
		}
		if (!next)
			break;
	}
	consume(k, hend);
	if (a->status == 204 || a->status == 304 || (a->status >= 100 && a->status < 200))
		return 0;
	/* the body: Content-Length, chunked, or until close */
	char *body = NULL;
	size_t blen = 0;
	if (chunked) {
		for (int guard = 0; guard < 1000000; guard++) {
			long e = find_crlf(k, 0, MAX_HEAD);
			if (e < 0)
				goto fail;
			unsigned long long n = strtoull(k->buf, NULL, 16);
			consume(k, (size_t)e + 2);
			if (n > MAX_BODY || blen + n > MAX_BODY)
				goto fail;
			while (k->len < n + 2)
				if (fill(k))
					goto fail;
			if (n) {
				char *nb = realloc(body, blen + n + 1);
				if (!nb)
					goto fail;
				body = nb;
				memcpy(body + blen, k->buf, n);
				blen += n;
			}
			consume(k, (size_t)n + 2);
			if (!n)
				break; /* no trailers expected */
		}
	} else if (clen >= 0) {
		if ((unsigned long long)clen > MAX_BODY)
			goto fail;
		while (k->len < (size_t)clen)
			if (fill(k))
				goto fail;
		body = malloc((size_t)clen + 1);
		if (!body)
			goto fail;
		memcpy(body, k->buf, (size_t)clen);
		blen = (size_t)clen;
		consume(k, blen);
	} else {
		a->close = 1;
		while (k->len <= MAX_BODY && !fill(k))
			;
		body = malloc(k->len + 1);
		if (!body)
			goto fail;
		memcpy(body, k->buf, k->len);
		blen = k->len;
		consume(k, k->len);
	}
	a->body_len = blen;
	if (blen >= 2)
		memcpy(a->head2, body, 2);
	if (body_out) {
		if (!body && !(body = malloc(1)))
			return -1;
		body[blen] = 0;
		*body_out = body;
	} else {
		free(body);
	}
	return 0;
fail:
	free(body);
	return -1;
}

static void count_status(struct client *cl, int status)
{
	for (int i = 0; i < cl->nstatus; i++)
		if (cl->status[i] == status) {
			cl->status_n[i]++;
			return;
		}
	if (cl->nstatus < MAX_STATUS) {
		cl->status[cl->nstatus] = status;
		cl->status_n[cl->nstatus++] = 1;
	}
}

static void *client_main(void *arg)
{
	struct client *cl = arg;
	const struct cfg *c = cl->c;
	struct conn k = {-1, NULL, 0, 0, &cl->bytes_in};
	char head[4096];
	for (long long i = cl->idx;; i++) {
		if (now_s() >= g_deadline)
			break;
		long long n = atomic_fetch_add(&g_issued, 1);
		if (c->max_req && n >= c->max_req)
			break;
		if (k.fd < 0) {
			k.len = 0;
			k.fd = connect_to(c);
			cl->connects++;
			if (k.fd < 0) {
				cl->io_errors++;
				struct timespec ts = {0, 20000000};
				nanosleep(&ts, NULL);
				continue;
			}
		}
		const struct body *b = &c->files[i % c->nfiles];
		int hl = snprintf(head, sizeof head,
		                  "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/octet-stream\r\n"
		                  "Content-Length: %zu\r\nAccept: */*\r\n\r\n",
		                  c->path, c->hostname, b->len);
		double t0 = now_s();
		struct answer a;
		if (send_all(k.fd, head, (size_t)hl) || send_all(k.fd, b->data, b->len) ||
		    read_answer(&k, &a, NULL)) {
			cl->io_errors++;
			close(k.fd);
			k.fd = -1;
			continue;
		}
		double t1 = now_s();
		cl->bytes_out += (unsigned long long)hl + b->len;
		cl->t_last = t1;
		count_status(cl, a.status);
		if (a.status == 200) {
			if (c->expect_jpeg && !(a.body_len >= 2 && a.head2[0] == 0xFF && a.head2[1] == 0xD8))
				cl->bad_body++;
			else {
				cl->ok++;
				cl->ok_in_time += t1 <= g_deadline;
			}
		}
		if (cl->nsamples == cl->cap && cl->cap < MAX_SAMPLES) {
			size_t nc = cl->cap ? cl->cap * 2 : 1024;
			struct sample *ns = realloc(cl->samples, nc * sizeof *ns);
			if (ns) {
				cl->samples = ns;
				cl->cap = nc;
			}
		}
		if (cl->nsamples < cl->cap) {
			struct sample *s = &cl->samples[cl->nsamples++];
			s->latency_ms = (float)((t1 - t0) * 1e3);
			memcpy(s->timing, a.timing, sizeof s->timing);
		}
		if (a.close) {
			close(k.fd);
			k.fd = -1;
		}
	}
	if (k.fd >= 0)
		close(k.fd);
	free(k.buf);
	atomic_fetch_add(&g_finished, 1);
	return NULL;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v (n > 0). */
static double pct(const float *v, size_t n, double p)
{
	size_t i = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (i < 1)
		i = 1;
	if (i > n)
		i = n;
	return v[i - 1];
}

/* One GET of c's URL: the status (or -1 with a message), the body in *body (free it). */
static int http_get(const struct cfg *c, char **body, size_t *len)
{
	unsigned long long bin = 0;
	struct conn k = {connect_to(c), NULL, 0, 0, &bin};
	*body = NULL;
	*len = 0;
	if (k.fd < 0) {
		fprintf(stderr, "loadgen: cannot connect to %s:%d\n", c->host, c->port);
		return -1;
	}
	char head[4096];
	int hl = snprintf(head, sizeof head, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
	                  c->path, c->hostname);
	struct answer a;
	int rc = send_all(k.fd, head, (size_t)hl) || read_answer(&k, &a, body);
	close(k.fd);
	free(k.buf);
	if (rc) {
		fprintf(stderr, "loadgen: no answer from %s:%d%s\n", c->host, c->port, c->path);
		free(*body);
		*body = NULL;
		return -1;
	}
	*len = a.body_len;
	return a.status;
}

/* One GET; the body goes to stdout. Exit status 0 for a 200, 1 otherwise. */
static int fetch(const struct cfg *c)
{
	char *body;
	size_t len;
	int status = http_get(c, &body, &len);
	if (body)
		fwrite(body, 1, len, stdout);
	free(body);
	return status == 200 ? 0 : 1;
}

/* The sum of the samples of a Prometheus metric (every label set) at the URL of mc, and how
 * many series it has in *series. -1 when the page cannot be read. */
static double metric_sum(const struct cfg *mc, const char *name, int *series)
{
	char *body;
	size_t len;
	*series = 0;
	if (http_get(mc, &body, &len) != 200) {
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
		*eol = 0; /* read_answer leaves a byte after the body */
		if ((size_t)(eol - line) > nl && !memcmp(line, name, nl) && (line[nl] == ' ' || line[nl] == '{')) {
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

/* CPU seconds (user + system) of this process, or of pid from /proc/PID/stat (-1: unknown). */
static double cpu_self_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec * 1e-6;
}

static double cpu_pid_s(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = pid > 0 ? fopen(path, "r") : NULL;
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the name may hold spaces */
	unsigned long long ut = 0, st = 0;
	/* after the name: state, then fields 4-13, then utime (14) and stime (15) */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
	                 &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The daemon's CPU by thread name (fftbloomd names its threads fb-gpuN, fb-codecN, fb-compile,
 * fb-watchdog, fb-sweeper; libmicrohttpd's are MHD-listen and MHD-connection; threads a driver
 * starts take their parent's name), the trailing digits dropped so that a pool is one group:
 * each group's cores, threads and busiest thread. */
#define MAX_THREADS 1024
#define MAX_GROUPS 32
struct tsample {
	int n;
	int tid[MAX_THREADS];
	char name[MAX_THREADS][17];
	double s[MAX_THREADS];
};
struct tgroups {
	int n;
	char name[MAX_GROUPS][17];
	double cores[MAX_GROUPS], max[MAX_GROUPS];
	int threads[MAX_GROUPS];
};

/* 0, or -1 when /proc/PID/task cannot be read. */
static int threads_cpu(int pid, struct tsample *t)
{
	char path[64];
	t->n = 0;
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = pid > 0 ? opendir(path) : NULL;
	if (!d)
		return -1;
	struct dirent *e;
	double tck = (double)sysconf(_SC_CLK_TCK);
	while ((e = readdir(d)) && t->n < MAX_THREADS) {
		char sp[384], buf[1024];
		if (e->d_name[0] == '.')
			continue;
		snprintf(sp, sizeof sp, "%s/%s/stat", path, e->d_name);
		FILE *f = fopen(sp, "r");
		if (!f)
			continue; /* the thread ended */
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = 0;
		char *open = strchr(buf, '('), *close = strrchr(buf, ')');
		unsigned long long ut = 0, st = 0;
		if (!open || !close || close < open ||
		    sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
		           &st) != 2)
			continue;
		*close = 0;
		char *end = close;
		while (end > open + 2 && isdigit((unsigned char)end[-1]))
			*--end = 0;
		for (char *q = open + 1; q < end; q++) /* a JSON key: printable ASCII */
			if (*q < 0x20 || *q > 0x7e || *q == '"' || *q == '\\')
				*q = '?';
		t->tid[t->n] = atoi(e->d_name);
		snprintf(t->name[t->n], sizeof t->name[0], "%s", open + 1);
		t->s[t->n++] = (double)(ut + st) / tck;
	}
	closedir(d);
	return 0;
}

static void tgroups_add(struct tgroups *g, const char *name, double cores)
{
	int i = 0;
	while (i < g->n && strcmp(g->name[i], name))
		i++;
	if (i == g->n) {
		if (g->n == MAX_GROUPS)
			return;
		snprintf(g->name[g->n], sizeof g->name[0], "%s", name);
		g->cores[g->n] = g->max[g->n] = 0;
		g->threads[g->n++] = 0;
	}
	g->cores[i] += cores;
	g->max[i] = cores > g->max[i] ? cores : g->max[i];
	g->threads[i]++;
}

/* The groups' cores between samples a and b over `seconds`; the process's own CPU time beyond
 * its threads at b (total: seconds of CPU, < 0 unknown) is the threads that ended between. */
static void tgroups_diff(const struct tsample *a, const struct tsample *b, double total,
                         double seconds, struct tgroups *g)
{
	double sum = 0;
	g->n = 0;
	for (int i = 0; i < b->n; i++) {
		double s = b->s[i];
		for (int j = 0; j < a->n; j++)
			if (a->tid[j] == b->tid[i]) {
				s -= a->s[j];
				break;
			}
		sum += s;
		tgroups_add(g, b->name[i], s / seconds);
	}
	if (total >= 0)
		tgroups_add(g, "(ended)", (total - sum) / seconds);
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: loadgen -c CLIENTS -d SECONDS -u URL -f FILE [-f FILE ...] [-n MAXREQ] [-t TIMEOUT]\n"
	        "               [--json] [--label TEXT] [--any-body] [--metrics-url URL]\n"
	        "               [--ceiling-fps F] [--planes-ceiling-fps F] [--id ID] [--suite NAME]\n"
	        "               [--variant NAME] [--machine NAME] [--gpu TEXT] [--driver TEXT]\n"
	        "               [--command TEXT] [--server-pid PID] [--parallel-ceiling-fps F]\n"
	        "       loadgen --get URL     (one GET, body to stdout, exit 0 on 200)\n"
	        "POSTs the files in turn on one keep-alive connection per client until SECONDS pass or\n"
	        "MAXREQ requests were sent. Loopback URLs only. A 200 answer must be a JPEG unless\n"
	        "--any-body. The report goes to stderr; --json adds a result line on stdout (workload\n"
	        "--id, default e2e.LABEL; --gpu, --driver: the daemon's; --command: how the load was\n"
	        "made, default loadgen's own command line). --metrics-url: the daemon's /metrics, read\n"
	        "before and after for the GPU threads' busy fraction and every 0.2 s during the load\n"
	        "for the queue depth (mean, max); the ceilings give the rate's fraction of them.\n"
	        "The CPU cores the load generator used over the load, and the daemon's with\n"
	        "--server-pid (from /proc), are reported beside the host's cores: the share of the\n"
	        "host the codec threads could have had.\n");
}

int main(int argc, char **argv)
{
	static struct cfg c;
	c.clients = 1;
	c.seconds = 10;
	c.timeout = 120;
	c.expect_jpeg = 1;
	c.label = "";
	c.suite = "e2e";
	const char *url = NULL, *get_url = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int takes = 1;
		if (!strcmp(a, "-c") && v)
			c.clients = atoi(v);
		else if (!strcmp(a, "-d") && v)
			c.seconds = atof(v);
		else if (!strcmp(a, "-n") && v)
			c.max_req = atoll(v);
		else if (!strcmp(a, "-t") && v)
			c.timeout = atof(v);
		else if (!strcmp(a, "-u") && v)
			url = v;
		else if (!strcmp(a, "--label") && v) {
			for (const char *p = v; *p; p++)
				if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) {
					fprintf(stderr, "loadgen: --label takes no quotes, backslashes or controls\n");
					return 2;
				}
			c.label = v;
		} else if (!strcmp(a, "--get") && v)
			get_url = v;
		else if (!strcmp(a, "--id") && v)
			c.id = v;
		else if (!strcmp(a, "--suite") && v)
			c.suite = v;
		else if (!strcmp(a, "--variant") && v)
			c.variant = v;
		else if (!strcmp(a, "--machine") && v)
			c.machine = v;
		else if (!strcmp(a, "--gpu") && v)
			c.gpu = v;
		else if (!strcmp(a, "--driver") && v)
			c.driver = v;
		else if (!strcmp(a, "--command") && v)
			c.command = v;
		else if (!strcmp(a, "--metrics-url") && v)
			c.metrics_url = v;
		else if (!strcmp(a, "--parallel-ceiling-fps") && v)
			c.parallel_ceiling_fps = atof(v);
		else if (!strcmp(a, "--server-pid") && v)
			c.server_pid = atoi(v);
		else if (!strcmp(a, "--ceiling-fps") && v)
			c.ceiling_fps = atof(v);
		else if (!strcmp(a, "--planes-ceiling-fps") && v)
			c.planes_ceiling_fps = atof(v);
		else if (!strcmp(a, "-f") && v) {
			if (c.nfiles == MAX_FILES || read_file(v, &c.files[c.nfiles])) {
				fprintf(stderr, "loadgen: cannot read %s (or more than %d files)\n", v, MAX_FILES);
				return 2;
			}
			c.nfiles++;
		} else {
			takes = 0;
			if (!strcmp(a, "--json"))
				c.json = 1;
			else if (!strcmp(a, "--any-body"))
				c.expect_jpeg = 0;
			else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
				usage(stdout);
				return 0;
			} else {
				fprintf(stderr, "loadgen: bad argument '%s'\n", a);
				usage(stderr);
				return 2;
			}
		}
		i += takes;
	}
	if (!(c.timeout >= 0.1 && c.timeout <= 3600)) {
		fprintf(stderr, "loadgen: -t must be 0.1 to 3600 seconds\n");
		return 2;
	}
	if (get_url) {
		if (parse_url(&c, get_url))
			return 2;
		return fetch(&c);
	}
	if (!url || !c.nfiles || c.clients < 1 || c.clients > MAX_CLIENTS || !(c.seconds > 0) ||
	    c.seconds > 86400 || c.max_req < 0) {
		usage(stderr);
		return 2;
	}
	if (parse_url(&c, url))
		return 2;
	static struct cfg mc; /* the /metrics URL */
	double busy0 = -1, busy1 = -1;
	int nseries = 0;
	if (c.metrics_url) {
		if (parse_url(&mc, c.metrics_url))
			return 2;
		mc.timeout = c.timeout;
		busy0 = metric_sum(&mc, "fftbloom_gpu_busy_seconds_total", &nseries);
	}

	struct client *cl = calloc((size_t)c.clients, sizeof *cl);
	if (!cl)
		return 1;
	static struct tsample ts0, ts1;
	struct tgroups tg;
	/* the process's time outside its threads' samples, so that what ended is not negative */
	double cpu0 = cpu_self_s(), scpu0 = cpu_pid_s(c.server_pid);
	int tg_ok = !threads_cpu(c.server_pid, &ts0);
	g_t0 = now_s();
	g_deadline = g_t0 + c.seconds;
	int started = 0;
	for (int i = 0; i < c.clients; i++) {
		cl[i].idx = i;
		cl[i].c = &c;
		if (pthread_create(&cl[i].th, NULL, client_main, &cl[i])) {
			fprintf(stderr, "loadgen: cannot start client thread %d\n", i);
			break;
		}
		started++;
	}
	/* the queue depth every 0.2 s while the clients run */
	double depth_sum = 0, depth_max = 0;
	int depth_n = 0;
	while (c.metrics_url && busy0 >= 0 && atomic_load(&g_finished) < started) {
		int series;
		double d = metric_sum(&mc, "fftbloom_queue_depth", &series);
		if (d >= 0 && series > 0) {
			depth_sum += d;
			depth_max = d > depth_max ? d : depth_max;
			depth_n++;
		}
		struct timespec ts = {0, 200000000};
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < started; i++)
		pthread_join(cl[i].th, NULL);
	double t_joined = now_s();
	tg_ok = tg_ok && !threads_cpu(c.server_pid, &ts1);
	double cpu1 = cpu_self_s(), scpu1 = cpu_pid_s(c.server_pid);
	if (tg_ok)
		tgroups_diff(&ts0, &ts1, scpu0 >= 0 && scpu1 >= scpu0 ? scpu1 - scpu0 : -1,
		             t_joined - g_t0, &tg);
	double cores_self = cpu0 >= 0 && cpu1 >= cpu0 ? (cpu1 - cpu0) / (t_joined - g_t0) : -1;
	double cores_server = scpu0 >= 0 && scpu1 >= scpu0 ? (scpu1 - scpu0) / (t_joined - g_t0) : -1;
	long host_cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (c.metrics_url && busy0 >= 0)
		busy1 = metric_sum(&mc, "fftbloom_gpu_busy_seconds_total", &nseries);

	/* totals */
	unsigned long long ok = 0, ok_in_time = 0, bad = 0, ioerr = 0, conns = 0, bout = 0, bin = 0;
	size_t ns = 0;
	double t_end = g_t0;
	int st[MAX_STATUS * 4], stn[MAX_STATUS * 4], nst = 0;
	for (int i = 0; i < started; i++) {
		ok += cl[i].ok;
		ok_in_time += cl[i].ok_in_time;
		bad += cl[i].bad_body;
		ioerr += cl[i].io_errors;
		conns += cl[i].connects;
		bout += cl[i].bytes_out;
		bin += cl[i].bytes_in;
		ns += cl[i].nsamples;
		if (cl[i].t_last > t_end)
			t_end = cl[i].t_last;
		for (int j = 0; j < cl[i].nstatus; j++) {
			int k;
			for (k = 0; k < nst && st[k] != cl[i].status[j]; k++)
				;
			if (k == nst && nst < MAX_STATUS * 4) {
				st[nst] = cl[i].status[j];
				stn[nst++] = 0;
			}
			if (k < nst)
				stn[k] += cl[i].status_n[j];
		}
	}
	double elapsed = t_end > g_t0 ? t_end - g_t0 : 1e-9;
	float *lat = malloc((ns ? ns : 1) * sizeof *lat);
	float *tv = malloc((ns ? ns : 1) * sizeof *tv);
	if (!lat || !tv)
		return 1;
	size_t m = 0;
	for (int i = 0; i < started; i++)
		for (size_t j = 0; j < cl[i].nsamples; j++)
			lat[m++] = cl[i].samples[j].latency_ms;
	qsort(lat, ns, sizeof *lat, cmp_float);
	double p50 = ns ? pct(lat, ns, 50) : 0, p90 = ns ? pct(lat, ns, 90) : 0;
	double p99 = ns ? pct(lat, ns, 99) : 0, pmax = ns ? lat[ns - 1] : 0;
	double tmed[NTIMING];
	for (int t = 0; t < NTIMING; t++) {
		m = 0;
		for (int i = 0; i < started; i++)
			for (size_t j = 0; j < cl[i].nsamples; j++)
				if (cl[i].samples[j].timing[t] >= 0)
					tv[m++] = cl[i].samples[j].timing[t];
		qsort(tv, m, sizeof *tv, cmp_float);
		tmed[t] = m ? (m % 2 ? tv[m / 2] : 0.5 * (tv[m / 2 - 1] + tv[m / 2])) : -1;
	}
	unsigned long long non200 = 0;
	for (int k = 0; k < nst; k++)
		if (st[k] != 200)
			non200 += (unsigned long long)stn[k];
	/* throughput as wrk counts it: answers completed within the duration (the drain after it,
	 * long under a deep queue, would otherwise dilute it); -n runs end early: all over elapsed */
	double window = c.seconds < elapsed ? c.seconds : elapsed;
	double rps = (double)ok_in_time / window, rps_all = (double)ok / elapsed;

	fprintf(stderr,
	        "loadgen %s%s%d clients, %.1f s: %llu ok (%.2f req/s within %.1f s, %.2f overall), %llu non-200, %llu bad bodies, "
	        "%llu I/O errors, %llu connections\n"
	        "  latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f   (%zu answers)\n"
	        "  Server-Timing medians ms: decode %.2f  queue %.2f  gpu %.2f (copies %.2f, waiting "
	        "%.2f, setup %.2f)  encode %.2f  total %.2f\n"
	        "  bytes: %.1f MB out, %.1f MB in\n",
	        c.label, c.label[0] ? ": " : "", started, elapsed, ok, rps, window, rps_all, non200, bad, ioerr, conns,
	        p50, p90, p99, pmax, ns, tmed[0], tmed[1], tmed[2], tmed[5], tmed[6], tmed[7], tmed[3], tmed[4],
	        bout / 1e6,
	        bin / 1e6);
	for (int k = 0; k < nst; k++)
		if (st[k] != 200)
			fprintf(stderr, "  status %d: %d\n", st[k], stn[k]);
	if (depth_n)
		fprintf(stderr, "  queue depth: mean %.2f  max %.0f   (%d samples)\n", depth_sum / depth_n,
		        depth_max, depth_n);
	if (cores_server >= 0)
		fprintf(stderr, "  CPU cores used: load generator %.2f, daemon %.2f, of %ld\n", cores_self,
		        cores_server, host_cores);
	else if (cores_self >= 0)
		fprintf(stderr, "  CPU cores used: load generator %.2f of %ld\n", cores_self, host_cores);
	if (tg_ok) {
		fprintf(stderr, "  daemon cores by thread (threads, busiest):");
		for (int i = 0; i < tg.n; i++)
			fprintf(stderr, " %s %.2f (%d, %.2f)", tg.name[i], tg.cores[i], tg.threads[i],
			        tg.max[i]);
		fprintf(stderr, "\n");
	}
	if (c.json) {
		struct bench_meta meta;
		bench_meta_init(&meta, c.suite, c.gpu, c.driver, c.command ? NULL : "loadgen",
		                c.command ? 0 : argc - 1, argv + 1);
		if (c.command)
			snprintf(meta.command, sizeof meta.command, "%s", c.command);
		if (c.machine)
			snprintf(meta.machine, sizeof meta.machine, "%s", c.machine);
		char id[256];
		snprintf(id, sizeof id, "%s%s", c.id ? "" : "e2e.", c.id ? c.id : c.label);
		struct bench_line l;
		bench_line_begin(&l, stdout, &meta, id, "fftbloomd", c.variant);
		bench_metric(&l, "rps", rps);
		bench_metric(&l, "p50_ms", p50);
		bench_metric(&l, "p90_ms", p90);
		bench_metric(&l, "p99_ms", p99);
		bench_metric(&l, "max_ms", pmax);
		/* the GPU threads' busy time over the load's window (start to the last answer) */
		double window = t_joined - g_t0;
		if (busy0 >= 0 && busy1 >= busy0 && nseries > 0)
			bench_metric(&l, "gpu_busy_fraction", (busy1 - busy0) / (window * nseries));
		if (c.ceiling_fps > 0)
			bench_metric(&l, "ceiling_fraction", rps / c.ceiling_fps);
		if (c.planes_ceiling_fps > 0)
			bench_metric(&l, "planes_ceiling_fraction", rps / c.planes_ceiling_fps);
		if (c.parallel_ceiling_fps > 0)
			bench_metric(&l, "parallel_ceiling_fraction", rps / c.parallel_ceiling_fps);
		bench_detail_str(&l, "label", c.label);
		bench_detail_num(&l, "clients", started);
		bench_detail_num(&l, "seconds", elapsed);
		bench_detail_num(&l, "requests", (double)ns);
		bench_detail_num(&l, "ok", (double)ok);
		bench_detail_num(&l, "ok_in_time", (double)ok_in_time);
		bench_detail_num(&l, "rps_all", rps_all);
		bench_detail_num(&l, "non200", (double)non200);
		bench_detail_open(&l, "status");
		for (int k = 0; k < nst; k++) {
			char code[16];
			snprintf(code, sizeof code, "%d", st[k]);
			bench_detail_num(&l, code, stn[k]);
		}
		bench_detail_close(&l);
		bench_detail_num(&l, "bad_body", (double)bad);
		bench_detail_num(&l, "io_errors", (double)ioerr);
		bench_detail_num(&l, "connections", (double)conns);
		bench_detail_open(&l, "server_timing_median_ms"); /* -1: not in the answers */
		for (int t = 0; t < NTIMING; t++)
			bench_detail_num(&l, timing_names[t], tmed[t]);
		bench_detail_close(&l);
		bench_detail_num(&l, "gpu_threads", nseries);
		if (busy0 >= 0 && busy1 >= busy0)
			bench_detail_num(&l, "gpu_busy_s", busy1 - busy0);
		bench_detail_num(&l, "window_s", window);
		if (cores_self >= 0)
			bench_detail_num(&l, "loadgen_cpu_cores", cores_self);
		if (cores_server >= 0)
			bench_detail_num(&l, "server_cpu_cores", cores_server);
		if (tg_ok) {
			bench_detail_open(&l, "server_thread_cores");
			for (int i = 0; i < tg.n; i++)
				bench_detail_num(&l, tg.name[i], tg.cores[i]);
			bench_detail_close(&l);
			bench_detail_open(&l, "server_thread_counts");
			for (int i = 0; i < tg.n; i++)
				bench_detail_num(&l, tg.name[i], tg.threads[i]);
			bench_detail_close(&l);
			bench_detail_open(&l, "server_thread_busiest_cores");
			for (int i = 0; i < tg.n; i++)
				bench_detail_num(&l, tg.name[i], tg.max[i]);
			bench_detail_close(&l);
		}
		bench_detail_num(&l, "host_cores", (double)host_cores);
		if (c.metrics_url) {
			bench_detail_num(&l, "queue_depth_samples", depth_n);
			if (depth_n) {
				bench_detail_num(&l, "queue_depth_mean", depth_sum / depth_n);
				bench_detail_num(&l, "queue_depth_max", depth_max);
			}
		}
		if (c.ceiling_fps > 0)
			bench_detail_num(&l, "ceiling_fps", c.ceiling_fps);
		if (c.planes_ceiling_fps > 0)
			bench_detail_num(&l, "planes_ceiling_fps", c.planes_ceiling_fps);
		bench_detail_num(&l, "bytes_out", (double)bout);
		bench_detail_num(&l, "bytes_in", (double)bin);
		bench_detail_num(&l, "files", c.nfiles);
		bench_line_end(&l, &meta);
	}
	for (int i = 0; i < started; i++)
		free(cl[i].samples);
	free(cl);
	free(lat);
	free(tv);
	for (int i = 0; i < c.nfiles; i++)
		free(c.files[i].data);
	return ok ? 0 : 1;
}
