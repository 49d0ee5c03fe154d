/* libFuzzer target for the HTTP front end: the input is sent as raw bytes on a TCP connection to
 * the daemon's own server (daemon/server.c's on_uri, on_request and on_completed, http.c, the
 * routes, multipart and request parsing, all as fftbloomd links them) on a loopback port; the
 * write side is then shut and the answer read to the server's close. Only the job queue is
 * replaced (jobs_* below): it reports itself full, so a render route parses its whole request
 * and answers 503 queue_full without a GPU, and it counts the --memory-budget bytes held for
 * bodies. Checks: whatever comes back is well-formed HTTP/1.x answers (status line, header
 * fields, a body of the length they give), a complete simple request gets one, and once the
 * connection has closed every request's state is freed (the server counts none active, no
 * budget bytes stay held, and LeakSanitizer finds nothing left of the input's allocations). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "daemon/images.h"
#include "daemon/jobs.h"
#include "daemon/kernels.h"
#include "core/log.h"
#include "daemon/metrics.h"
#include "daemon/server.h"
#include "gles/bloom.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why, const char *detail)
{
	fprintf(stderr, "fuzz_http: %s%s%.300s\n", why, detail ? ": " : "", detail ? detail : "");
	abort();
}

/* ---- the job queue, replaced: always full; the body budget counted ---- */

struct jobs {
	pthread_mutex_t mu;
	unsigned long long held; /* --memory-budget bytes held for bodies */
	unsigned long long budget;
};
static struct jobs fake_jobs = {PTHREAD_MUTEX_INITIALIZER, 0, 0};

int jobs_reserve(struct jobs *J, int kind)
{
	(void)J;
	(void)kind;
	return JOBS_E_FULL;
}

void jobs_start(struct jobs *J, struct job *j)
{
	(void)J;
	(void)j;
	fail("jobs_start after jobs_reserve refused", NULL);
}

/* jobs.c's rule: 0, JOBS_E_OVER_BUDGET or JOBS_E_BUDGET_SPENT. Caller holds J->mu. */
static int fits_locked(const struct jobs *J, unsigned long long bytes)
{
	return bytes > J->budget ? JOBS_E_OVER_BUDGET
	       : J->held + bytes > J->budget ? JOBS_E_BUDGET_SPENT : 0;
}

int jobs_memory_fits(struct jobs *J, unsigned long long bytes)
{
	pthread_mutex_lock(&J->mu);
	int rc = fits_locked(J, bytes);
	pthread_mutex_unlock(&J->mu);
	return rc;
}

int jobs_memory_hold(struct jobs *J, unsigned long long bytes)
{
	pthread_mutex_lock(&J->mu);
	int rc = fits_locked(J, bytes);
	if (!rc)
		J->held += bytes;
	pthread_mutex_unlock(&J->mu);
	return rc;
}

void jobs_memory_release(struct jobs *J, unsigned long long bytes)
{
	pthread_mutex_lock(&J->mu);
	if (bytes > J->held)
		fail("jobs_memory_release of more than is held", NULL);
	J->held -= bytes;
	pthread_mutex_unlock(&J->mu);
}

static unsigned long long held_now(void)
{
	pthread_mutex_lock(&fake_jobs.mu);
	unsigned long long h = fake_jobs.held;
	pthread_mutex_unlock(&fake_jobs.mu);
	return h;
}

void jobs_status(struct jobs *J, struct jobs_status *st)
{
	(void)J;
	memset(st, 0, sizeof *st);
}

int jobs_ready(struct jobs *J, char *why, size_t len)
{
	(void)J;
	snprintf(why, len, "ok");
	return 1;
}

int jobs_live(struct jobs *J, char *why, size_t len)
{
	(void)J;
	if (len)
		why[0] = 0;
	return 0;
}

/* gles/bloom_kernel.c's is beside GL code: the same contract (size, channels, pixels) */
void bloom_kernel_digest(const struct image *k, uint64_t digest[2])
{
	uint64_t h = 1469598103934665603ull, g = (uint64_t)k->width << 32 | (uint64_t)k->height;
	const unsigned char *p = (const unsigned char *)k->pixels;
	size_t n = (size_t)k->width * k->height * k->channels * sizeof(float);
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	digest[0] = h;
	digest[1] = g ^ (uint64_t)k->channels;
}

/* ---- the server ---- */

static struct server *S;
static int port;
static struct config cfg;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* small limits, so that the fuzzer meets them: a 64 KiB body, 1 MiB of budget */
	char *args[] = {"fuzz_http", "--listen", "127.0.0.1", "--port", "0", "--max-per-ip", "0",
	                "--max-body", "65536", "--memory-budget", "1M", "--header-timeout", "2",
	                "--log-level", "error", NULL};
	int npos;
	char err[OPT_ERR_LEN];
	unsetenv("FFTBLOOM_API_KEY_FILE");
	if (config_load(&cfg, (int)(sizeof args / sizeof args[0]) - 1, args, 1, &npos, err))
		fail("config", err);
	log_setup(LOG_ERROR + (getenv("FUZZ_HTTP_LOG") ? 3 : 0), 0);
	fake_jobs.budget = cfg.memory_budget;
	struct kernels *k = NULL;
	struct images *im = NULL;
	struct metrics *m = NULL;
	if (kernels_create(cfg.max_kernels, cfg.kernel_memory, &k) ||
	    images_create(cfg.max_images, cfg.image_memory, &im) || metrics_create(&m))
		fail("out of memory", NULL);
	static struct server_bound bound; /* the daemon binds before server_create; so does this */
	char serr[SERVER_ERR_LEN];
	if (server_bind(&cfg, &bound, serr))
		fail("server_bind", serr);
	struct server_opts so = {.cfg = &cfg, .jobs = &fake_jobs, .kernels = k, .images = im,
	                         .metrics = m, .bound = &bound};
	if (server_create(&so, &S, serr))
		fail("server_create", serr);
	port = server_port(S);
	return 0;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* A token (RFC 9110 tchar) of n bytes. */
static int is_token(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("!#$%&'*+-.^_`|~", s[i]) && !((s[i] >= '0' && s[i] <= '9') ||
		                                        ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z')))
			return 0;
	return 1;
}

/* Parses one answer at p (n bytes): returns its length, or 0 when malformed (*why says how). A
 * HEAD's answer (head) has no body whatever its Content-Length says. */
static size_t parse_answer(const char *p, size_t n, int head, const char **why)
{
	const char *end = memmem(p, n, "\r\n\r\n", 4);
	if (!end)
		return *why = "no end of the header block", 0;
	if (n < 13 || (memcmp(p, "HTTP/1.1 ", 9) && memcmp(p, "HTTP/1.0 ", 9)) ||
	    p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' ||
	    p[12] != ' ')
		return *why = "not a status line", 0;
	int status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	const char *line = memmem(p, (size_t)(end - p) + 2, "\r\n", 2) + 2;
	long long clen = -1;
	int chunked = 0;
	while (line < end + 2) {
		const char *eol = memmem(line, (size_t)(end + 2 - line), "\r\n", 2);
		const char *colon = memchr(line, ':', (size_t)(eol - line));
		if (!colon || !is_token(line, (size_t)(colon - line)))
			return *why = "a header field that is not name: value", 0;
		for (const char *c = colon + 1; c < eol; c++)
			if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
				return *why = "a control byte in a header value", 0;
		size_t nl = (size_t)(colon - line);
		const char *v = colon + 1;
		while (v < eol && *v == ' ')
			v++;
		if (nl == 14 && !strncasecmp(line, "Content-Length", 14)) {
			if (clen >= 0)
				return *why = "Content-Length twice", 0;
			char num[24] = "";
			size_t vl = (size_t)(eol - v);
			if (!vl || vl >= sizeof num)
				return *why = "a bad Content-Length", 0;
			memcpy(num, v, vl);
			char *e;
			clen = strtoll(num, &e, 10);
			if (*e || clen < 0)
				return *why = "a bad Content-Length", 0;
		} else if (nl == 17 && !strncasecmp(line, "Transfer-Encoding", 17)) {
			chunked = 1;
		}
		line = eol + 2;
	}
	size_t hl = (size_t)(end - p) + 4;
	if (head || status == 204 || status == 304 || status < 200)
		return hl;
	if (chunked) {
		if (clen >= 0)
			return *why = "Content-Length with Transfer-Encoding", 0;
		const char *c = p + hl, *e = p + n;
		for (;;) {
			char *x;
			unsigned long long sz = strtoull(c, &x, 16);
			const char *crlf = memmem(x, (size_t)(e - x), "\r\n", 2);
			if (x == c || !crlf || sz > (size_t)(e - crlf))
				return *why = "a bad chunk", 0;
			c = crlf + 2 + sz;
			if (!sz) {
				const char *t = memmem(crlf, (size_t)(e - crlf), "\r\n", 2);
				return t ? (size_t)(t + 2 - p) : (*why = "no end of the chunks", 0);
			}
			if (e - c < 2 || memcmp(c, "\r\n", 2))
				return *why = "a chunk without its CRLF", 0;
			c += 2;
		}
	}
	if (clen < 0)
		return n; /* to the close */
	/* libmicrohttpd 0.9.75's own answer to a bad Content-Length repeats its status line and
	 * header block before the body (issue 35, item 12): known, tolerated unless
	 * FUZZ_HTTP_STRICT is set, so that the fuzzer looks past it */
	if (n - hl >= hl && !memcmp(p, p + hl, hl) && !getenv("FUZZ_HTTP_STRICT"))
		hl *= 2;
	if ((unsigned long long)clen > n - hl)
		return *why = "a body shorter than its Content-Length", 0;
	return hl + (size_t)clen;
}

/* A request line and headers the server must answer: a method and an origin-form target, HTTP/1.1
 * with a Host or 1.0, the header block closed, no body framing, nothing after it. */
static int simple_request(const uint8_t *d, size_t n)
{
	const uint8_t *end = memmem(d, n, "\r\n\r\n", 4);
	if (!end || (size_t)(end - d) + 4 != n || n > 4096)
		return 0;
	const uint8_t *sp = memchr(d, ' ', n);
	if (!sp || !is_token((const char *)d, (size_t)(sp - d)) || sp[1] != '/')
		return 0;
	const uint8_t *eol = memmem(d, n, "\r\n", 2);
	if (eol - d < 11 || (memcmp(eol - 9, " HTTP/1.1", 9) && memcmp(eol - 9, " HTTP/1.0", 9)))
		return 0;
	for (const uint8_t *c = d; c < end; c++)
		if ((*c < 0x20 && *c != '\r' && *c != '\n') || *c >= 0x7f)
			return 0;
	/* libmicrohttpd drops a request whose arguments outgrow the connection's memory (about
	 * 1,200 of them in 64 KiB) without an answer (issue 35, item 2): known, tolerated unless
	 * FUZZ_HTTP_STRICT is set */
	size_t amps = 0;
	for (const uint8_t *c = d; c < eol; c++)
		amps += *c == '&';
	if (amps > 1000 && !getenv("FUZZ_HTTP_STRICT"))
		return 0;
	return !memmem(d, n, "Content-Length", 14) && !memmem(d, n, "Transfer-Encoding", 17) &&
	       !memmem(d, n, "content-length", 14) && !memmem(d, n, "transfer-encoding", 17);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fail("socket", strerror(errno));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* libFuzzer's SIGALRM (its -timeout check) interrupts system calls: EINTR is retried, and
	 * an interrupted connect goes on in the background */
	if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
		int e = errno, soe = 0;
		socklen_t sl = sizeof soe;
		struct pollfd pf = {fd, POLLOUT, 0};
		if (e != EINTR)
			fail("connect", strerror(e));
		while (poll(&pf, 1, 10000) < 0 && errno == EINTR)
			;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soe, &sl) || soe)
			fail("connect", strerror(soe ? soe : errno));
	}
	size_t off = 0;
	while (off < size) {
		ssize_t w = send(fd, data + off, size - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* the server closed early (an error answer): read it */
		off += (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	double t0 = now_s();
	for (;;) {
		struct pollfd pf = {fd, POLLIN, 0};
		if (now_s() - t0 > 10)
			fail("no close within 10 s", NULL);
		if (poll(&pf, 1, 100) <= 0)
			continue;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
		ssize_t r = recv(fd, buf + n, cap - n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	/* every request's state freed: the server counts none active and holds no budget */
	t0 = now_s();
	while (server_active(S) || held_now()) {
		if (now_s() - t0 > 10) {
			char d[64];
			snprintf(d, sizeof d, "%d active, %llu bytes held", server_active(S), held_now());
			fail("a request's state outlives its connection", d);
		}
		usleep(200);
	}
	if (getenv("FUZZ_HTTP_SHOW")) /* to see what a reproduced input gets */
		fprintf(stderr, "fuzz_http: %zu bytes back:\n%.*s\n", n, (int)n, buf);
	if (simple_request(data, size) && !n)
		fail("no answer to a complete request", (const char *)data);
	/* a HEAD's answer has no body: where the input holds one, an answer may be read either way,
	 * and the way that leaves the next answer (or the end) after it is taken */
	int head = memmem(data, size, "HEAD", 4) != NULL;
	for (size_t p = 0; p < n;) {
		const char *why = "";
		size_t l = parse_answer(buf + p, n - p, 0, &why);
		if (head && (!l || (p + l < n && (n - p - l < 7 || memcmp(buf + p + l, "HTTP/1.", 7))))) {
			const char *why1 = "";
			size_t l1 = parse_answer(buf + p, n - p, 1, &why1);
			if (l1 && (p + l1 == n || (n - p - l1 >= 7 && !memcmp(buf + p + l1, "HTTP/1.", 7))))
				l = l1;
		}
		if (!l) {
			char d[400];
			snprintf(d, sizeof d, "%s: %.*s", why, (int)(n - p < 300 ? n - p : 300), buf + p);
			fail("a malformed answer", d);
		}
		p += l;
	}
	free(buf);
	return 0;
}
