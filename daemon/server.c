/* HTTP routes on libmicrohttpd; see server.h. */
#include "daemon/server.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon/apiutil.h"
#include "daemon/log.h"
#include "daemon/multipart.h"
#include "protocol/openapi.h"
#include "daemon/web.h"
#include "protocol/request.h"

#define FFTBLOOMD_VERSION "0.1.0"
#define DISCARD_MAX (16u << 20) /* bytes past --max-body of a chunked body read (and dropped) so
                                   that its 413 can be answered; a longer one is cut off */
#define MAX_PARTS 8
#define SWEEP_MS 200            /* how often connection deadlines are checked */

enum route {
	R_NONE = 0, R_BLOOM, R_CONVOLVE, R_KERNELS, R_KERNEL, R_HEALTHZ, R_READYZ, R_METRICS,
	R_INFO, R_OPENAPI, R_WEB,
};

static const struct {
	const char *path; /* exact path; R_KERNEL matches the prefix */
	const char *label;
	const char *allow;
} routes[] = {
	[R_NONE] = {NULL, "other", ""},
	[R_BLOOM] = {"/v1/bloom", "bloom", "POST, OPTIONS"},
	[R_CONVOLVE] = {"/v1/convolve", "convolve", "POST, OPTIONS"},
	[R_KERNELS] = {"/v1/kernels", "kernels", "GET, HEAD, OPTIONS"},
	[R_KERNEL] = {"/v1/kernels/", "kernel", "GET, HEAD, PUT, DELETE, OPTIONS"},
	[R_HEALTHZ] = {"/healthz", "healthz", "GET, HEAD, OPTIONS"},
	[R_READYZ] = {"/readyz", "readyz", "GET, HEAD, OPTIONS"},
	[R_METRICS] = {"/metrics", "metrics", "GET, HEAD, OPTIONS"},
	[R_INFO] = {"/v1/info", "info", "GET, HEAD, OPTIONS"},
	[R_OPENAPI] = {"/openapi.json", "openapi", "GET, HEAD, OPTIONS"},
	[R_WEB] = {"/", "web", "GET, HEAD, OPTIONS"}, /* and every /web/NAME web_find knows */
};

/* A TCP connection's deadlines (libmicrohttpd's own timeout is for idleness, which a client
 * trickling a byte at a time never reaches): its request's headers must be complete within
 * --header-timeout, and its body must average --min-body-rate once that long has passed. */
enum conn_phase {
	CONN_HEADERS = 0, /* waiting for the request line and headers */
	CONN_BODY,        /* receiving a body */
	CONN_BUSY,        /* handled: queued, on a GPU, or answering */
	CONN_IDLE,        /* between requests (keep-alive; libmicrohttpd's idle timeout) */
};

struct conn {
	struct conn *prev, *next; /* the server's list, under its lock */
	int fd;
	int phase;                /* enum conn_phase */
	double since;             /* start of the phase (headers: the connection or request line) */
	unsigned long long body;  /* bytes of the body received */
	int first;                /* no request has begun on it yet */
	int cut;                  /* shut down for missing a deadline */
};

struct server {
	struct server_opts o;
	struct config cfg;
	struct MHD_Daemon *d;
	int port;
	pthread_mutex_t lock;
	int active;          /* guarded by lock */
	double last_change;  /* guarded by lock */
	struct conn conns;   /* list head, guarded by lock */
	unsigned long long cut_headers, cut_body; /* connections cut, guarded by lock */
	pthread_t sweeper;
	int sweeper_started, stop; /* stop guarded by lock */
	pthread_cond_t stop_cv;
	volatile int quiescing;
	unsigned long long next_id;
	unsigned long long id_salt;
};

struct req {
	struct server *S;
	struct MHD_Connection *conn;
	struct conn *tcp;     /* the connection's deadlines */
	int init;             /* the first call with the headers ran */
	enum route route;
	char method[8];
	char path[128];
	char raw[256];        /* the request target as sent (before percent-decoding), cut */
	int raw_bad;          /* the target holds %00 or a control byte */
	char code[32];        /* the error code answered, for the log */
	char name[65];        /* R_KERNEL: the kernel's name */
	char id[65];          /* X-Request-Id */
	char client[64];
	int cors;             /* the Origin is allowed: answer with CORS headers */
	int bad_name;         /* R_KERNEL with an invalid name */
	int checked;          /* precheck ran */
	char origin[256];
	double t0;
	unsigned char *body;
	size_t len, cap;
	int too_large;        /* the body passed --max-body while streaming */
	size_t discarded;
	int started;          /* a job was started */
	int job_done;         /* its done() ran; guarded by done_mu */
	pthread_mutex_t done_mu;
	pthread_cond_t done_cv;
	struct job job;
	int status;           /* of the answer queued; 0 until then */
	size_t bytes;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void touch(struct server *S, int delta)
{
	pthread_mutex_lock(&S->lock);
	S->active += delta;
	S->last_change = now_s();
	pthread_mutex_unlock(&S->lock);
}

/* ---- answers ---- */

/* Queues an answer with the headers every answer carries. body: owned (freed with free) when
 * `owned`, else copied. extra: NULL-terminated name/value pairs. */
static enum MHD_Result respond(struct req *r, int status, const char *ctype, void *body,
                               size_t len, int owned, const char *const *extra)
{
	struct MHD_Response *resp;
	if (owned)
		resp = MHD_create_response_from_buffer_with_free_callback(len, body, free);
	else
		resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_COPY);
	if (!resp) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	const struct job *j = &r->job;
	char timing[320];
	snprintf(timing, sizeof timing,
	         "decode;dur=%.3f, queue;dur=%.3f, gpu;dur=%.3f, gpu_copy;dur=%.3f, gpu_wait;dur=%.3f, "
	         "encode;dur=%.3f, total;dur=%.3f",
	         j->decode_s * 1e3, j->queue_s * 1e3, j->gpu_s * 1e3, j->gpu_copy_s * 1e3,
	         j->gpu_wait_s * 1e3, j->encode_s * 1e3, (now_s() - r->t0) * 1e3);
	MHD_add_response_header(resp, "X-Request-Id", r->id);
	MHD_add_response_header(resp, "Server-Timing", timing);
	if (ctype)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (r->cors) {
		MHD_add_response_header(resp, "Access-Control-Allow-Origin", r->origin);
		MHD_add_response_header(resp, "Vary", "Origin");
		MHD_add_response_header(resp, "Access-Control-Expose-Headers",
		                        "X-Request-Id, Server-Timing, Retry-After, X-Image-Lost");
	}
	for (; extra && extra[0]; extra += 2)
		MHD_add_response_header(resp, extra[0], extra[1]);
	if (!MHD_get_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL))
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (r->S->quiescing)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	r->status = status;
	r->bytes = len;
	enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result respond_json(struct req *r, int status, json_t *o, const char *const *extra)
{
	char *s = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
	json_decref(o);
	if (!s)
		return MHD_NO;
	size_t l = strlen(s);
	char *t = realloc(s, l + 2);
	if (t) {
		s = t;
		s[l++] = '\n';
		s[l] = 0;
	}
	return respond(r, status, "application/json", s, l, 1, extra);
}

static enum MHD_Result respond_error_x(struct req *r, int status, const char *code,
                                       const char *const *extra, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static enum MHD_Result respond_error_x(struct req *r, int status, const char *code,
                                       const char *const *extra, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	json_t *o = json_pack("{s:{s:i,s:s,s:s}}", "error", "status", status, "code", code,
	                      "message", msg);
	snprintf(r->code, sizeof r->code, "%s", code);
	return respond_json(r, status, o, extra);
}

#define respond_error(r, status, code, ...) respond_error_x(r, status, code, NULL, __VA_ARGS__)

static enum MHD_Result respond_busy(struct req *r, const char *code, const char *msg)
{
	char ra[16];
	snprintf(ra, sizeof ra, "%d", r->S->cfg.retry_after);
	const char *extra[] = {"Retry-After", ra, NULL};
	return respond_error_x(r, 503, code, extra, "%s", msg);
}

/* ---- request set-up ---- */

static enum route match_route(const char *url, char name[65], int *bad_name)
{
	*bad_name = 0;
	for (int i = 1; i < (int)(sizeof routes / sizeof routes[0]); i++) {
		if (i == R_KERNEL) {
			size_t pl = strlen(routes[i].path);
			if (!strncmp(url, routes[i].path, pl) && url[pl]) {
				const char *n = url + pl;
				if (strlen(n) > 64 || !api_valid_name(n))
					*bad_name = 1;
				else
					snprintf(name, 65, "%s", n);
				return R_KERNEL;
			}
		} else if (!strcmp(url, routes[i].path)) {
			return (enum route)i;
		}
	}
	return web_find(url, NULL, NULL, NULL, NULL) == WEB_OK ? R_WEB : R_NONE;
}

static int method_allowed(enum route rt, const char *m)
{
	int get = !strcmp(m, "GET") || !strcmp(m, "HEAD");
	switch (rt) {
	case R_BLOOM:
	case R_CONVOLVE: return !strcmp(m, "POST");
	case R_KERNEL: return get || !strcmp(m, "PUT") || !strcmp(m, "DELETE");
	case R_NONE: return 0;
	default: return get;
	}
}

static void client_addr(struct MHD_Connection *c, char *buf, size_t len)
{
	snprintf(buf, len, "?");
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!ci || !ci->client_addr)
		return;
	const struct sockaddr *sa = ci->client_addr;
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)len);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)len);
}

static int authorized(struct req *r)
{
	const struct server *S = r->S;
	if (!S->o.api_key || strncmp(r->path, "/v1/", 4))
		return 1;
	const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                            MHD_HTTP_HEADER_AUTHORIZATION);
	if (!h || strncasecmp(h, "Bearer ", 7))
		return 0;
	h += 7;
	while (*h == ' ')
		h++;
	return api_key_equal(h, strlen(h), S->o.api_key, S->o.api_key_len);
}

/* ---- connections: deadlines for headers and bodies ---- */

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

static void set_phase(struct server *S, struct conn *t, int phase)
{
	if (!t)
		return;
	pthread_mutex_lock(&S->lock);
	t->phase = phase;
	t->since = now_s();
	t->body = 0;
	pthread_mutex_unlock(&S->lock);
}

static int client_fd(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	return ci ? ci->connect_fd : -1;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	struct server *S = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		struct conn *t = calloc(1, sizeof *t);
		if (!t)
			return;
		t->fd = client_fd(c);
		t->phase = CONN_HEADERS;
		t->since = now_s();
		t->first = 1;
		pthread_mutex_lock(&S->lock);
		t->next = S->conns.next;
		t->prev = &S->conns;
		S->conns.next->prev = t;
		S->conns.next = t;
		pthread_mutex_unlock(&S->lock);
		*socket_context = t;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		/* libmicrohttpd closes the socket only after this: a shutdown under the lock never
		 * reaches a socket that a new connection reuses */
		struct conn *t = *socket_context;
		pthread_mutex_lock(&S->lock);
		t->prev->next = t->next;
		t->next->prev = t->prev;
		pthread_mutex_unlock(&S->lock);
		free(t);
		*socket_context = NULL;
	}
}

/* Shuts down the connections that missed a deadline; libmicrohttpd then sees them end. */
static void *sweeper_main(void *arg)
{
	struct server *S = arg;
	pthread_mutex_lock(&S->lock);
	while (!S->stop) {
		double t = now_s(), hto = S->cfg.header_timeout;
		double rate = (double)S->cfg.min_body_rate;
		for (struct conn *c = S->conns.next; c != &S->conns; c = c->next) {
			if (c->cut || c->fd < 0)
				continue;
			double age = t - c->since;
			int late_headers = c->phase == CONN_HEADERS && age > hto;
			int slow_body = c->phase == CONN_BODY && rate > 0 && age > hto &&
			                (double)c->body < rate * age;
			if (!late_headers && !slow_body)
				continue;
			c->cut = 1;
			if (late_headers)
				S->cut_headers++;
			else
				S->cut_body++;
			shutdown(c->fd, SHUT_RDWR);
			log_msg(LOG_INFO, late_headers
			        ? "connection closed: no complete request headers within %g s "
			          "(--header-timeout)"
			        : "connection closed: its body came slower than %g bytes a second "
			          "(--min-body-rate)", late_headers ? hto : rate);
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += SWEEP_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&S->stop_cv, &S->lock, &ts);
	}
	pthread_mutex_unlock(&S->lock);
	return NULL;
}

/* 1 when a request target carries what no route or name can: a NUL or control byte, raw or
 * percent-encoded (libmicrohttpd decodes %00 into the string's end). */
static int target_bad(const char *u)
{
	for (const unsigned char *p = (const unsigned char *)u; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return 1;
		if (*p == '%' && p[1] && p[2]) {
			int hi = p[1] >= 'a' ? p[1] - 'a' + 10 : p[1] >= 'A' ? p[1] - 'A' + 10 : p[1] - '0';
			int lo = p[2] >= 'a' ? p[2] - 'a' + 10 : p[2] >= 'A' ? p[2] - 'A' + 10 : p[2] - '0';
			int v = hi * 16 + lo;
			if (hi >= 0 && hi < 16 && lo >= 0 && lo < 16 && (v < 0x20 || v == 0x7f))
				return 1;
		}
	}
	return 0;
}

/* libmicrohttpd's URI callback: a request line has arrived. The request's state starts here,
 * with the target as sent. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct server *S = cls;
	struct req *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	pthread_mutex_init(&r->done_mu, NULL);
	pthread_cond_init(&r->done_cv, NULL);
	r->S = S;
	r->conn = c;
	r->t0 = now_s();
	r->job.client_fd = -1;
	snprintf(r->raw, sizeof r->raw, "%s", uri ? uri : "");
	snprintf(r->path, sizeof r->path, "%.127s", r->raw); /* until the headers decode it */
	snprintf(r->method, sizeof r->method, "?");
	client_addr(c, r->client, sizeof r->client);
	r->raw_bad = uri && target_bad(uri);
	r->tcp = conn_of(c);
	if (r->tcp) {
		pthread_mutex_lock(&S->lock);
		if (!r->tcp->first) { /* a keep-alive request: its headers' deadline starts now */
			r->tcp->phase = CONN_HEADERS;
			r->tcp->since = r->t0;
		}
		r->tcp->first = 0;
		pthread_mutex_unlock(&S->lock);
	}
	touch(S, 1);
	return r;
}

/* The rest of a request's state, once its headers are in. */
static void req_init(struct req *r, const char *url, const char *method)
{
	struct server *S = r->S;
	struct MHD_Connection *c = r->conn;
	r->init = 1;
	snprintf(r->method, sizeof r->method, "%s", method);
	snprintf(r->path, sizeof r->path, "%s", url);
	client_addr(c, r->client, sizeof r->client);
	const char *rid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Request-Id");
	if (rid && api_valid_name(rid)) {
		snprintf(r->id, sizeof r->id, "%s", rid);
	} else {
		unsigned long long n = __atomic_fetch_add(&S->next_id, 1, __ATOMIC_RELAXED);
		snprintf(r->id, sizeof r->id, "%016llx", (n * 0x9E3779B97F4A7C15ull) ^ S->id_salt);
	}
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	if (origin && strlen(origin) < sizeof r->origin &&
	    api_origin_allowed(S->cfg.cors_origins, origin)) {
		r->cors = 1;
		snprintf(r->origin, sizeof r->origin, "%s", origin);
	}
}

/* ---- parameters ---- */

struct query_ctx {
	struct request *req;
	char err[REQUEST_ERR_LEN];
	int failed;
};

static enum MHD_Result query_iter(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
	(void)kind;
	struct query_ctx *qc = cls;
	if (qc->failed)
		return MHD_NO;
	if (request_set(qc->req, key, value, REQUEST_SRC_QUERY, qc->err)) {
		qc->failed = 1;
		return MHD_NO;
	}
	return MHD_YES;
}

/* ---- routes ---- */

static enum MHD_Result answer_job(struct req *r);

static void on_job_done(struct job *j, void *ctx)
{
	struct req *r = ctx;
	(void)j;
	pthread_mutex_lock(&r->done_mu);
	r->job_done = 1;
	pthread_cond_signal(&r->done_cv);
	pthread_mutex_unlock(&r->done_mu);
}

/* Admits the job, starts it and waits for its answer in this connection's thread; or answers
 * 503. The connection's thread waits rather than suspending the connection: libmicrohttpd
 * (0.9.75) reads a resumed connection before answering it, and takes the end of a request
 * whose client half-closed after sending it (HTTP allows that) as an abort, losing the answer;
 * a thread that never returns to the library until it answers never makes that read. */
static enum MHD_Result start_job(struct req *r)
{
	struct server *S = r->S;
	int rc = jobs_reserve(S->o.jobs, r->job.kind);
	if (rc == JOBS_E_FULL) {
		kernels_release(S->o.kernels, r->job.named);
		r->job.named = NULL;
		char msg[128];
		snprintf(msg, sizeof msg, "the queue is full (%d jobs wait for a GPU); retry later",
		         S->cfg.queue_size);
		return respond_busy(r, "queue_full", msg);
	}
	if (rc) {
		kernels_release(S->o.kernels, r->job.named);
		r->job.named = NULL;
		return respond_busy(r, "shutting_down", "the server is shutting down");
	}
	r->job.client_fd = client_fd(r->conn);
	snprintf(r->job.client, sizeof r->job.client, "%s", r->client);
	r->job.done = on_job_done;
	r->job.done_ctx = r;
	r->started = 1;
	set_phase(S, r->tcp, CONN_BUSY);
	jobs_start(S->o.jobs, &r->job);
	pthread_mutex_lock(&r->done_mu);
	while (!r->job_done)
		pthread_cond_wait(&r->done_cv, &r->done_mu);
	pthread_mutex_unlock(&r->done_mu);
	return answer_job(r);
}

static int sniffed(const unsigned char *p, size_t len)
{
	return image_sniff(p, len) != IMAGE_FORMAT_UNKNOWN;
}

/* A multipart form field as a parameter's text: the part's bytes, which must be short text. */
static int form_field(struct request *req, const struct multipart_part *part,
                      char err[REQUEST_ERR_LEN])
{
	char text[OPT_STR_MAX];
	if (part->len >= sizeof text || memchr(part->data, 0, part->len)) {
		snprintf(err, REQUEST_ERR_LEN, "%.64s: a form field's value must be text shorter than "
		         "%zu bytes", part->name, sizeof text);
		return REQUEST_E_VALUE;
	}
	memcpy(text, part->data, part->len);
	text[part->len] = 0;
	return request_set(req, part->name, text, REQUEST_SRC_FORM, err);
}

static enum MHD_Result route_image(struct req *r)
{
	struct server *S = r->S;
	struct job *j = &r->job;
	j->kind = r->route == R_CONVOLVE ? JOB_CONVOLVE : JOB_BLOOM;
	request_init(&j->req, r->route == R_CONVOLVE ? REQUEST_CONVOLVE : REQUEST_BLOOM);
	j->req.format = format_from_accept(
		MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT),
		&j->png_from_accept);
	struct query_ctx qc = {&j->req, "", 0};
	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_iter, &qc);
	if (qc.failed)
		return respond_error(r, 400, "bad_parameter", "%s", qc.err);
	if (request_given(&j->req, "format"))
		j->png_from_accept = 0;

	const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                             MHD_HTTP_HEADER_CONTENT_TYPE);
	char boundary[MULTIPART_BOUNDARY_MAX + 1];
	int mrc = multipart_boundary(ct, boundary);
	if (mrc == MULTIPART_E_BOUNDARY)
		return respond_error(r, 400, "bad_multipart", "multipart/form-data without a valid "
		                     "boundary parameter");
	if (!r->len)
		return respond_error(r, 400, "empty_body", "the request has no body: send an image "
		                     "(raw, or as the multipart part 'image')");
	char err[REQUEST_ERR_LEN];
	if (mrc == 0) {
		/* parts: image (or file, what an HTML form's file input is often named), kernel,
		 * params (a JSON object), and any parameter as a form field of its own */
		struct multipart_part parts[MAX_PARTS];
		size_t n;
		char merr[MULTIPART_ERR_LEN];
		if (multipart_parse(r->body, r->len, boundary, parts, MAX_PARTS, &n, merr))
			return respond_error(r, 400, "bad_multipart", "%s", merr);
		const struct multipart_part *img = NULL, *ker = NULL, *par = NULL;
		for (size_t i = 0; i < n; i++) {
			const struct multipart_part *p = &parts[i];
			if (!strcmp(p->name, "image") || !strcmp(p->name, "file")) {
				if (img)
					return respond_error(r, 400, "bad_multipart", "both 'image' and 'file' "
					                     "parts: send the image once");
				img = p;
			} else if (!strcmp(p->name, "kernel") && (p->filename[0] || sniffed(p->data, p->len))) {
				ker = p; /* an image part; a short text field named kernel is kernel=NAME */
			} else if (!strcmp(p->name, "params")) {
				par = p;
			} else if (!request_find(p->name)) {
				return respond_error(r, 400, "bad_multipart", "unknown multipart part '%.64s' "
				                     "(expected image or file, kernel, params, or a parameter)",
				                     p->name);
			} else if (form_field(&j->req, p, err)) {
				return respond_error(r, 400, "bad_parameter", "%s", err);
			}
		}
		if (!img)
			return respond_error(r, 400, "missing_image", "multipart body without an 'image' "
			                     "part");
		if (!img->len)
			return respond_error(r, 400, "empty_body", "the 'image' part is empty");
		if (par && request_set_json(&j->req, par->data, par->len, err))
			return respond_error(r, 400, "bad_parameter", "%s", err);
		j->image = img->data;
		j->image_len = img->len;
		if (ker) {
			if (!ker->len)
				return respond_error(r, 400, "empty_body", "the 'kernel' part is empty");
			if (!sniffed(ker->data, ker->len))
				return respond_error(r, 415, "unsupported_media_type", "kernel: not a JPEG, "
				                     "PNG, OpenEXR, Radiance HDR or PFM image");
			j->kernel_data = ker->data;
			j->kernel_len = ker->len;
		}
	} else {
		j->image = r->body;
		j->image_len = r->len;
	}
	if (request_finish(&j->req, j->kernel_data != NULL, err))
		return respond_error(r, 400, "bad_parameter", "%s", err);
	if (!sniffed(j->image, j->image_len))
		return respond_error(r, 415, "unsupported_media_type", "image: not a JPEG, PNG, "
		                     "OpenEXR, Radiance HDR or PFM image (by its first bytes)");
	if (j->req.kernel[0]) {
		j->named = kernels_get(S->o.kernels, j->req.kernel);
		if (!j->named)
			return respond_error(r, 400, "unknown_kernel", "kernel: no kernel named '%s' "
			                     "(register it with PUT /v1/kernels/%s)", j->req.kernel,
			                     j->req.kernel);
	}
	return start_job(r);
}

static json_t *kernel_json(const struct kernel_entry *e)
{
	char digest[40];
	snprintf(digest, sizeof digest, "%016llx%016llx", (unsigned long long)e->digest[0],
	         (unsigned long long)e->digest[1]);
	return json_pack("{s:s,s:i,s:i,s:i,s:s,s:i,s:s,s:I}", "name", e->name, "width", e->img.width,
	                 "height", e->img.height, "channels", e->img.channels, "format",
	                 image_format_name(e->info.format), "bits", e->info.bits, "digest", digest,
	                 "bytes", (json_int_t)e->img.width * e->img.height * e->img.channels * 4);
}

static void list_one(const struct kernel_entry *e, void *ctx)
{
	json_array_append_new(ctx, kernel_json(e));
}

static enum MHD_Result route_kernel(struct req *r)
{
	struct server *S = r->S;
	if (!strcmp(r->method, "PUT")) {
		if (!r->len)
			return respond_error(r, 400, "empty_body", "the request has no body: send the "
			                     "kernel image");
		if (!sniffed(r->body, r->len))
			return respond_error(r, 415, "unsupported_media_type", "kernel: not a JPEG, PNG, "
			                     "OpenEXR, Radiance HDR or PFM image (by its first bytes)");
		r->job.kind = JOB_KERNEL_PUT;
		r->job.image = r->body;
		r->job.image_len = r->len;
		snprintf(r->job.put_name, sizeof r->job.put_name, "%s", r->name);
		return start_job(r);
	}
	if (!strcmp(r->method, "DELETE")) {
		if (kernels_delete(S->o.kernels, r->name))
			return respond_error(r, 404, "kernel_not_found", "no kernel named '%s'", r->name);
		return respond(r, 204, NULL, NULL, 0, 0, NULL);
	}
	struct kernel_entry *e = kernels_get(S->o.kernels, r->name);
	if (!e)
		return respond_error(r, 404, "kernel_not_found", "no kernel named '%s'", r->name);
	json_t *o = kernel_json(e);
	kernels_release(S->o.kernels, e);
	return respond_json(r, 200, o, NULL);
}

static json_t *gpus_json(const struct jobs_status *st)
{
	json_t *a = json_array();
	for (int i = 0; i < st->ngpus; i++) {
		const struct jobs_gpu_status *g = &st->gpu[i];
		json_array_append_new(
			a, json_pack("{s:i,s:i,s:s,s:s,s:s,s:b,s:b,s:b,s:f,s:f,s:I,s:I,s:i,s:I,"
			             "s:{s:i,s:I,s:I,s:f,s:I,s:I},s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}}",
			             "index", i, "device", g->device, "platform", g->platform, "renderer",
			             g->renderer, "version", g->version, "alive", g->alive, "warmed",
			             g->warmed, "busy", g->busy, "heartbeat_age_s", g->heartbeat_age,
			             "busy_s", g->busy_s, "jobs", (json_int_t)g->jobs, "failures",
			             (json_int_t)g->failures, "planes_lent", g->planes_lent,
			             "planes_lent_total", (json_int_t)g->planes_lent_total,
			             "programs", "count", (int)g->programs.count,
			             "hits", (json_int_t)g->programs.hits, "misses",
			             (json_int_t)g->programs.misses, "compile_ms", g->programs.compile_ms,
			             "evictions", (json_int_t)g->programs.evictions, "bytes",
			             (json_int_t)g->programs.bytes,
			             "caches", "kernel_hits", (json_int_t)g->caches.kernel_hits,
			             "kernel_misses", (json_int_t)g->caches.kernel_misses,
			             "kernel_evictions", (json_int_t)g->caches.kernel_evictions,
			             "kernel_bytes", (json_int_t)g->caches.kernel_bytes, "kernel_entries",
			             (json_int_t)g->caches.kernel_entries, "plan_hits",
			             (json_int_t)g->caches.plan_hits, "plan_misses",
			             (json_int_t)g->caches.plan_misses, "plan_entries",
			             (json_int_t)g->caches.plan_entries));
	}
	return a;
}

static enum MHD_Result route_info(struct req *r)
{
	struct server *S = r->S;
	struct jobs_status st;
	jobs_status(S->o.jobs, &st);
	json_t *cfg = json_object();
	for (size_t i = 0; i < config_table_len; i++) {
		char v[OPT_STR_MAX + 32];
		opts_format(&config_table[i], &S->cfg, v, sizeof v);
		json_object_set_new(cfg, config_table[i].name, json_string(v));
	}
	size_t nk, kb;
	kernels_totals(S->o.kernels, &nk, &kb);
	json_t *params = json_array();
	for (size_t i = 0; i < request_table_len; i++) {
		char name[64];
		request_api_name(&request_table[i], name, sizeof name);
		json_array_append_new(params, json_string(name));
	}
	json_t *o = json_pack(
		"{s:s,s:o,s:{s:I,s:I,s:i,s:i,s:f},s:{s:i,s:i,s:i},s:o,s:{s:I,s:I},s:[s,s,s,s,s],"
		"s:[s,s,s,s,s,s],s:o,s:b,s:b}",
		"version", FFTBLOOMD_VERSION, "gpus", gpus_json(&st), "limits", "max_body",
		(json_int_t)S->cfg.max_body, "max_pixels", (json_int_t)S->cfg.max_pixels, "max_side",
		S->cfg.max_side, "queue_size", S->cfg.queue_size, "deadline_s", S->cfg.deadline,
		"queue", "queued", st.queued, "size", st.queue_size, "in_flight", st.in_flight,
		"configuration", cfg, "named_kernels", "count", (json_int_t)nk, "bytes", (json_int_t)kb,
		"input_formats", "jpeg", "png", "exr", "hdr", "pfm", "output_formats", "jpeg", "png",
		"png16", "exr", "hdr", "pfm", "parameters", params, "tls", S->o.tls_cert != NULL,
		"api_key", S->o.api_key != NULL);
	return respond_json(r, 200, o, NULL);
}

static void metrics_gpu(FILE *f, const struct jobs_status *st)
{
	struct {
		const char *name, *type, *help;
	} fam[] = {
		{"fftbloom_gpu_busy_seconds_total", "counter", "Seconds each GPU thread spent running jobs."},
		{"fftbloom_gpu_jobs_total", "counter", "Jobs each GPU thread ran."},
		{"fftbloom_gpu_up", "gauge", "1 while the GPU thread's context is alive and warmed."},
		{"fftbloom_gpu_busy", "gauge", "1 while the GPU thread runs a job."},
		{"fftbloom_program_cache_hits_total", "counter", "Compiled-program cache hits."},
		{"fftbloom_program_cache_misses_total", "counter", "Compiled-program cache misses (compiles)."},
		{"fftbloom_program_cache_programs", "gauge", "Programs held."},
		{"fftbloom_kernel_cache_hits_total", "counter", "Kernel spectrum cache hits."},
		{"fftbloom_kernel_cache_misses_total", "counter", "Kernel spectrum cache misses."},
		{"fftbloom_kernel_cache_evictions_total", "counter", "Kernel spectra evicted."},
		{"fftbloom_kernel_cache_bytes", "gauge", "Bytes of kernel spectra held."},
		{"fftbloom_plan_cache_hits_total", "counter", "FFT plan cache hits."},
		{"fftbloom_plan_cache_misses_total", "counter", "FFT plan cache misses."},
		{"fftbloom_planes_lent", "gauge",
		 "JPEG answers' planes lent from the GPU thread's mapped buffers, not yet encoded."},
		{"fftbloom_planes_lent_total", "counter",
		 "JPEG answers encoded straight from planes lent by the GPU thread (--lend-planes)."},
	};
	for (size_t k = 0; k < sizeof fam / sizeof fam[0]; k++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fam[k].name, fam[k].help, fam[k].name,
		        fam[k].type);
		for (int i = 0; i < st->ngpus; i++) {
			const struct jobs_gpu_status *g = &st->gpu[i];
			double v = 0;
			switch (k) {
			case 0: v = g->busy_s; break;
			case 1: v = (double)g->jobs; break;
			case 2: v = g->alive && g->warmed; break;
			case 3: v = g->busy; break;
			case 4: v = (double)g->programs.hits; break;
			case 5: v = (double)g->programs.misses; break;
			case 6: v = g->programs.count; break;
			case 7: v = (double)g->caches.kernel_hits; break;
			case 8: v = (double)g->caches.kernel_misses; break;
			case 9: v = (double)g->caches.kernel_evictions; break;
			case 10: v = (double)g->caches.kernel_bytes; break;
			case 11: v = (double)g->caches.plan_hits; break;
			case 12: v = (double)g->caches.plan_misses; break;
			case 13: v = g->planes_lent; break;
			case 14: v = (double)g->planes_lent_total; break;
			}
			fprintf(f, "%s{gpu=\"%d\"} %.9g\n", fam[k].name, i, v);
		}
	}
}

static enum MHD_Result route_metrics(struct req *r)
{
	struct server *S = r->S;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return MHD_NO;
	metrics_write(S->o.metrics, f);
	struct jobs_status st;
	jobs_status(S->o.jobs, &st);
	size_t nk, kb;
	kernels_totals(S->o.kernels, &nk, &kb);
	char why[128];
	int ready = !S->quiescing && jobs_ready(S->o.jobs, why, sizeof why);
	fprintf(f, "# HELP fftbloom_queue_depth Jobs accepted and not yet on a GPU.\n"
	        "# TYPE fftbloom_queue_depth gauge\nfftbloom_queue_depth %d\n"
	        "# HELP fftbloom_queue_capacity The queue's size (--queue-size).\n"
	        "# TYPE fftbloom_queue_capacity gauge\nfftbloom_queue_capacity %d\n"
	        "# HELP fftbloom_jobs_in_flight Jobs accepted and not yet answered.\n"
	        "# TYPE fftbloom_jobs_in_flight gauge\nfftbloom_jobs_in_flight %d\n"
	        "# HELP fftbloom_named_kernels Kernels registered by name.\n"
	        "# TYPE fftbloom_named_kernels gauge\nfftbloom_named_kernels %zu\n"
	        "# HELP fftbloom_named_kernel_bytes Bytes of the registered kernels' pixels.\n"
	        "# TYPE fftbloom_named_kernel_bytes gauge\nfftbloom_named_kernel_bytes %zu\n"
	        "# HELP fftbloom_ready 1 when /readyz answers 200.\n"
	        "# TYPE fftbloom_ready gauge\nfftbloom_ready %d\n"
	        "# HELP fftbloom_memory_reserved_bytes Bytes of decoded images reserved by "
	        "requests in progress.\n"
	        "# TYPE fftbloom_memory_reserved_bytes gauge\nfftbloom_memory_reserved_bytes %llu\n"
	        "# HELP fftbloom_memory_budget_bytes The --memory-budget.\n"
	        "# TYPE fftbloom_memory_budget_bytes gauge\nfftbloom_memory_budget_bytes %llu\n",
	        st.queued, st.queue_size, st.in_flight, nk, kb, ready, st.memory_used,
	        st.memory_budget);
	pthread_mutex_lock(&S->lock);
	unsigned long long ch = S->cut_headers, cb = S->cut_body;
	pthread_mutex_unlock(&S->lock);
	fprintf(f, "# HELP fftbloom_connections_cut_total Connections closed for missing a deadline: "
	        "headers (--header-timeout) or body (--min-body-rate).\n"
	        "# TYPE fftbloom_connections_cut_total counter\n"
	        "fftbloom_connections_cut_total{reason=\"headers\"} %llu\n"
	        "fftbloom_connections_cut_total{reason=\"body\"} %llu\n", ch, cb);
	metrics_gpu(f, &st);
	fclose(f);
	return respond(r, 200, "text/plain; version=0.0.4; charset=utf-8", buf, len, 1, NULL);
}

/* The web page (web/, embedded): no API key needed (the page asks for it), revalidated by ETag. */
static enum MHD_Result route_web(struct req *r)
{
	const unsigned char *data;
	size_t len;
	const char *ctype, *etag;
	if (web_find(r->path, &data, &len, &ctype, &etag))
		return respond_error(r, 404, "not_found", "no route %s", r->path);
	const char *extra[] = {MHD_HTTP_HEADER_ETAG, etag, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache",
	                       "X-Content-Type-Options", "nosniff", "Content-Security-Policy", WEB_CSP,
	                       NULL};
	if (web_etag_match(MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                               MHD_HTTP_HEADER_IF_NONE_MATCH), etag))
		return respond(r, 304, NULL, NULL, 0, 0, extra);
	return respond(r, 200, ctype, (void *)data, len, 0, extra);
}

static enum MHD_Result route_get(struct req *r)
{
	struct server *S = r->S;
	switch (r->route) {
	case R_HEALTHZ: return respond_json(r, 200, json_pack("{s:s}", "status", "ok"), NULL);
	case R_READYZ: {
		char why[160];
		if (S->quiescing)
			snprintf(why, sizeof why, "shutting down");
		if (!S->quiescing && jobs_ready(S->o.jobs, why, sizeof why))
			return respond_json(r, 200, json_pack("{s:s}", "status", "ready"), NULL);
		return respond_json(r, 503, json_pack("{s:s,s:s}", "status", "not_ready", "reason",
		                                      why), NULL);
	}
	case R_METRICS: return route_metrics(r);
	case R_WEB: return route_web(r);
	case R_INFO: return route_info(r);
	case R_OPENAPI: return respond_json(r, 200, openapi_document(FFTBLOOMD_VERSION,
	                                                             S->o.api_key != NULL), NULL);
	case R_KERNELS: {
		json_t *a = json_array();
		kernels_each(S->o.kernels, list_one, a);
		return respond_json(r, 200, json_pack("{s:o}", "kernels", a), NULL);
	}
	default: return respond_error(r, 404, "not_found", "no route %s", r->path);
	}
}

/* An answer for a finished job. */
static enum MHD_Result answer_job(struct req *r)
{
	struct job *j = &r->job;
	if (j->dropped) {
		r->status = 499;
		return MHD_NO; /* the client has gone: close */
	}
	if (j->status >= 400 || !j->body) {
		if (j->status == 503)
			return respond_busy(r, j->code, j->message);
		if (j->status == 429) {
			char ra[16];
			snprintf(ra, sizeof ra, "%d", j->retry_after > 0 ? j->retry_after : 1);
			const char *extra[] = {"Retry-After", ra, NULL};
			return respond_error_x(r, 429, j->code, extra, "%s", j->message);
		}
		return respond_error(r, j->status >= 400 ? j->status : 500,
		                     j->code[0] ? j->code : "internal", "%s",
		                     j->message[0] ? j->message : "no result");
	}
	unsigned char *body = j->body;
	j->body = NULL;
	char lost[64] = "";
	if (j->lost & IMAGE_LOST_ALPHA)
		strcat(lost, "alpha,");
	if (j->lost & IMAGE_LOST_RANGE)
		strcat(lost, "range,");
	if (j->lost & IMAGE_LOST_NEGATIVE)
		strcat(lost, "negative,");
	if (j->lost & IMAGE_LOST_PRECISION)
		strcat(lost, "precision,");
	if (*lost)
		lost[strlen(lost) - 1] = 0;
	char gpu[16];
	snprintf(gpu, sizeof gpu, "%d", j->gpu);
	const char *extra[5] = {NULL};
	int e = 0;
	if (*lost) {
		extra[e++] = "X-Image-Lost";
		extra[e++] = lost;
	}
	if (j->gpu >= 0) {
		extra[e++] = "X-Gpu";
		extra[e++] = gpu;
	}
	return respond(r, j->status, j->content_type, body, j->body_len, 1, extra);
}

/* ---- libmicrohttpd callbacks ---- */

struct header_count {
	const char *name;
	int n;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
	(void)kind;
	(void)value;
	struct header_count *hc = cls;
	if (!strcasecmp(key, hc->name))
		hc->n++;
	return MHD_YES;
}

/* The request's framing, before anything else: a target holding NUL or control bytes, an
 * HTTP/1.1 request without Host, Content-Length given twice or not a number, or with
 * Transfer-Encoding (ambiguous framing behind a proxy is how requests are smuggled) are 400;
 * a transfer coding other than chunked is 501. Each closes the connection unread. Returns 1
 * when it answered (*ret holds the result). */
static int framing_check(struct req *r, const char *version, enum MHD_Result *ret)
{
	const char *close_hdr[] = {MHD_HTTP_HEADER_CONNECTION, "close", NULL};
	struct MHD_Connection *c = r->conn;
	if (r->raw_bad) {
		*ret = respond_error_x(r, 400, "bad_request", close_hdr, "the request target holds a "
		                       "NUL or control character");
		return 1;
	}
	if (version && !strcmp(version, MHD_HTTP_VERSION_1_1) &&
	    !MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)) {
		*ret = respond_error_x(r, 400, "bad_request", close_hdr, "an HTTP/1.1 request needs a "
		                       "Host header");
		return 1;
	}
	struct header_count cl = {MHD_HTTP_HEADER_CONTENT_LENGTH, 0},
	                    te = {MHD_HTTP_HEADER_TRANSFER_ENCODING, 0};
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &cl);
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &te);
	const char *clv = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	                                              MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *tev = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	                                              MHD_HTTP_HEADER_TRANSFER_ENCODING);
	if (cl.n > 1 || te.n > 1 || (cl.n && te.n)) {
		*ret = respond_error_x(r, 400, "bad_request", close_hdr, "%s", cl.n && te.n
		                       ? "Content-Length together with Transfer-Encoding"
		                       : "Content-Length or Transfer-Encoding given more than once");
		return 1;
	}
	if (clv) {
		const char *p = clv;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t d = strspn(p, "0123456789");
		if (!d || d > 19 || p[d + strspn(p + d, " \t")]) {
			*ret = respond_error_x(r, 400, "bad_request", close_hdr, "Content-Length '%.32s' "
			                       "is not a number of bytes", clv);
			return 1;
		}
	}
	if (tev) {
		const char *p = tev;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t l = strcspn(p, " \t");
		if (l != 7 || strncasecmp(p, "chunked", 7) || p[l + strspn(p + l, " \t")]) {
			*ret = respond_error_x(r, 501, "not_implemented", close_hdr, "Transfer-Encoding "
			                       "'%.40s' is not supported (only chunked)", tev);
			return 1;
		}
	}
	return 0;
}

/* Route, method, CORS preflight, authentication and name checks. Returns 1 when it answered
 * (*ret holds the result). early: the body is not read, so the connection must close. */
static int precheck(struct req *r, int early, enum MHD_Result *ret)
{
	const char *close_hdr[] = {early ? MHD_HTTP_HEADER_CONNECTION : NULL, "close", NULL};
	const char *url = r->path, *method = r->method;
	if (r->route == R_NONE) {
		*ret = respond_error_x(r, 404, "not_found", close_hdr, "no route %s", url);
		return 1;
	}
	if (!strcmp(method, "OPTIONS")) {
		const char *extra[] = {"Allow", routes[r->route].allow, "Access-Control-Allow-Methods",
		                       routes[r->route].allow, "Access-Control-Allow-Headers",
		                       "Authorization, Content-Type, Accept, X-Request-Id",
		                       "Access-Control-Max-Age", "600", NULL, NULL, NULL};
		if (!r->cors)
			extra[2] = NULL;
		else if (early)
			extra[8] = MHD_HTTP_HEADER_CONNECTION, extra[9] = "close";
		*ret = respond(r, 204, NULL, NULL, 0, 0, extra);
		return 1;
	}
	if (!method_allowed(r->route, method)) {
		const char *extra[] = {"Allow", routes[r->route].allow, close_hdr[0], "close", NULL};
		*ret = respond_error_x(r, 405, "method_not_allowed", extra,
		                       "%s is not allowed on %s (allowed: %s)", method, url,
		                       routes[r->route].allow);
		return 1;
	}
	if (!authorized(r)) {
		const char *extra[] = {"WWW-Authenticate", "Bearer realm=\"fftbloomd\"", close_hdr[0],
		                       "close", NULL};
		*ret = respond_error_x(r, 401, "unauthorized", extra,
		                       "%s requires Authorization: Bearer <API key>", url);
		return 1;
	}
	if (r->bad_name) {
		*ret = respond_error_x(r, 400, "bad_kernel_name", close_hdr,
		                       "kernel names are 1-64 characters of A-Z a-z 0-9 . _ - "
		                       "(not starting with '.')");
		return 1;
	}
	return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
	struct server *S = cls;
	struct req *r = *con_cls;
	if (!r) { /* the URI callback failed (out of memory): try once more */
		r = on_uri(S, url, c);
		if (!r)
			return MHD_NO;
		*con_cls = r;
	}
	if (!r->init) {
		req_init(r, url, method);
		r->route = match_route(url, r->name, &r->bad_name);
		enum MHD_Result ret;
		if (framing_check(r, version, &ret))
			return ret;
		/* A request with a body is judged now, before its body is read (the connection then
		 * closes); one without is judged on the next call, keeping the connection alive. */
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		                                             MHD_HTTP_HEADER_CONTENT_LENGTH);
		const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		                                             MHD_HTTP_HEADER_TRANSFER_ENCODING);
		unsigned long long n = cl ? strtoull(cl, NULL, 10) : 0;
		if (!n && !te) {
			set_phase(S, r->tcp, CONN_BUSY);
			return MHD_YES;
		}
		set_phase(S, r->tcp, CONN_BODY);
		r->checked = 1;
		if (precheck(r, 1, &ret))
			return ret;
		if (n > S->cfg.max_body) {
			const char *close_hdr[] = {MHD_HTTP_HEADER_CONNECTION, "close", NULL};
			return respond_error_x(r, 413, "body_too_large", close_hdr, "the body of %llu "
			                       "bytes is larger than the %llu bytes allowed (--max-body)",
			                       n, S->cfg.max_body);
		}
		/* room for the announced body, up to 16 MiB ahead of its arrival */
		size_t pre = n < (16u << 20) ? (size_t)n : (16u << 20);
		if (pre && (r->body = malloc(pre)))
			r->cap = pre;
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (r->tcp) {
			pthread_mutex_lock(&S->lock);
			r->tcp->body += n;
			pthread_mutex_unlock(&S->lock);
		}
		if (r->too_large) {
			r->discarded += n;
			return r->discarded > DISCARD_MAX ? MHD_NO : MHD_YES;
		}
		if (r->len + n > S->cfg.max_body) {
			r->too_large = 1;
			r->discarded = r->len + n - S->cfg.max_body; /* bytes past the limit */
			free(r->body);
			r->body = NULL;
			r->len = r->cap = 0;
			return MHD_YES;
		}
		if (r->len + n > r->cap) {
			size_t cap = r->cap ? r->cap : 65536;
			while (cap < r->len + n)
				cap *= 2;
			if (cap > S->cfg.max_body)
				cap = S->cfg.max_body;
			unsigned char *b = realloc(r->body, cap);
			if (!b)
				return MHD_NO;
			r->body = b;
			r->cap = cap;
		}
		memcpy(r->body + r->len, upload, n);
		r->len += n;
		return MHD_YES;
	}
	if (r->tcp && r->tcp->phase == CONN_BODY)
		set_phase(S, r->tcp, CONN_BUSY); /* the body is in */
	if (r->status)
		return MHD_YES; /* answered already */
	if (r->started)
		return MHD_YES; /* answered by start_job */
	if (!r->checked) {
		enum MHD_Result ret;
		r->checked = 1;
		if (precheck(r, 0, &ret))
			return ret;
	}
	if (r->too_large) {
		const char *close_hdr[] = {MHD_HTTP_HEADER_CONNECTION, "close", NULL};
		return respond_error_x(r, 413, "body_too_large", close_hdr, "the body is larger than "
		                       "the %llu bytes allowed (--max-body)", S->cfg.max_body);
	}
	switch (r->route) {
	case R_BLOOM:
	case R_CONVOLVE: return route_image(r);
	case R_KERNEL: return route_kernel(r);
	default: return route_get(r);
	}
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct server *S = cls;
	struct req *r = *con_cls;
	if (!r)
		return;
	*con_cls = NULL;
	set_phase(S, conn_of(c), CONN_IDLE);
	if (!r->init && !r->status) { /* refused by libmicrohttpd before its headers were in */
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
		r->status = ci && ci->http_status ? (int)ci->http_status : 400;
	}
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && (!r->status || r->status < 400))
		r->status = 499; /* the connection closed before the answer was sent */
	double total = now_s() - r->t0;
	metrics_request(S->o.metrics, routes[r->route].label, r->status);
	metrics_observe(S->o.metrics, METRICS_TOTAL, total);
	const char *code = r->job.code[0] ? r->job.code : r->code;
	struct log_field f[] = {
		{"id", LOG_STR, r->id, 0}, {"client", LOG_STR, r->client, 0},
		{"method", LOG_STR, r->method, 0}, {"path", LOG_STR, r->path, 0},
		{"status", LOG_INT, NULL, r->status}, {"in_bytes", LOG_INT, NULL, (double)r->len},
		{"out_bytes", LOG_INT, NULL, (double)r->bytes},
		{"ms", LOG_NUM, NULL, round(total * 1e6) / 1e3},
		{"decode_ms", LOG_NUM, NULL, round(r->job.decode_s * 1e6) / 1e3},
		{"queue_ms", LOG_NUM, NULL, round(r->job.queue_s * 1e6) / 1e3},
		{"gpu_ms", LOG_NUM, NULL, round(r->job.gpu_s * 1e6) / 1e3},
		{"encode_ms", LOG_NUM, NULL, round(r->job.encode_s * 1e6) / 1e3},
		{"error", LOG_STR, code, 0},
	};
	int n = code[0] ? 13 : 12;
	int quiet = r->route == R_HEALTHZ || r->route == R_READYZ || r->route == R_METRICS;
	log_fields(quiet ? LOG_DEBUG : LOG_INFO, "request", f, n);
	free(r->job.body);
	kernels_release(S->o.kernels, r->job.named);
	free(r->body);
	pthread_cond_destroy(&r->done_cv);
	pthread_mutex_destroy(&r->done_mu);
	free(r);
	touch(S, -1);
}

static int load_addr(const char *listen, int port, struct sockaddr_storage *ss, int *v6)
{
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, listen, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((unsigned short)port);
		*v6 = 0;
		return 0;
	}
	const char *l = listen;
	char buf[64];
	if (*l == '[') { /* [::1] */
		snprintf(buf, sizeof buf, "%s", l + 1);
		char *e = strchr(buf, ']');
		if (e)
			*e = 0;
		l = buf;
	}
	if (inet_pton(AF_INET6, l, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((unsigned short)port);
		*v6 = 1;
		return 0;
	}
	return -1;
}

/* libmicrohttpd's own messages go through the daemon's log (one format, escaped). */
static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	log_vmsg(LOG_WARN, "libmicrohttpd: ", fmt, ap);
}

int server_create(const struct server_opts *o, struct server **out, char err[SERVER_ERR_LEN])
{
	*out = NULL;
	struct server *S = calloc(1, sizeof *S);
	if (!S) {
		snprintf(err, SERVER_ERR_LEN, "out of memory");
		return -1;
	}
	S->o = *o;
	S->cfg = *o->cfg;
	pthread_mutex_init(&S->lock, NULL);
	pthread_cond_init(&S->stop_cv, NULL);
	S->conns.next = S->conns.prev = &S->conns;
	S->last_change = now_s();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	S->id_salt = ((unsigned long long)ts.tv_nsec << 20) ^ (unsigned long long)ts.tv_sec ^
	             ((unsigned long long)(size_t)S << 7);
	struct sockaddr_storage ss;
	int v6;
	if (load_addr(S->cfg.listen, S->cfg.port, &ss, &v6)) {
		snprintf(err, SERVER_ERR_LEN, "listen: '%.64s' is not an IPv4 or IPv6 address",
		         S->cfg.listen);
		goto fail;
	}
	/* A thread per connection: a request waits for its job in its own thread (start_job) */
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
	                 MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	if (v6)
		flags |= MHD_USE_IPv6;
	if (o->tls_cert) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			snprintf(err, SERVER_ERR_LEN, "this libmicrohttpd has no TLS support");
			goto fail;
		}
		flags |= MHD_USE_TLS;
	}
	struct MHD_OptionItem opts[24];
	int n = 0;
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &ss};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT,
	                                    (intptr_t)S->cfg.max_connections, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	                                    (intptr_t)S->cfg.max_per_ip, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT,
	                                    (intptr_t)S->cfg.conn_timeout, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, 64 * 1024, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_STACK_SIZE, 512 * 1024, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, S};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, S};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_uri, S};
	/* exclusive unless asked: a second daemon on the port must fail, not take half its load */
	if (S->cfg.reuse_port)
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, NULL};
	if (o->tls_cert) {
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)o->tls_cert};
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)o->tls_key};
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
		                                    (void *)S->cfg.tls_priorities};
	}
	if (o->listen_fd > 0) /* socket activation: the service manager bound and listens */
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, o->listen_fd, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	S->d = MHD_start_daemon(flags, (uint16_t)S->cfg.port, NULL, NULL, on_request, S,
	                        MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, S, MHD_OPTION_ARRAY, opts,
	                        MHD_OPTION_END);
	if (!S->d) {
		snprintf(err, SERVER_ERR_LEN, "cannot listen on %.64s port %d (in use, or a bad TLS "
		         "certificate or key?)", S->cfg.listen, S->cfg.port);
		goto fail;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(S->d, MHD_DAEMON_INFO_BIND_PORT);
	S->port = di ? di->port : S->cfg.port;
	if (pthread_create(&S->sweeper, NULL, sweeper_main, S)) {
		snprintf(err, SERVER_ERR_LEN, "cannot start the connection sweeper thread");
		MHD_stop_daemon(S->d);
		goto fail;
	}
	S->sweeper_started = 1;
	*out = S;
	return 0;
fail:
	pthread_cond_destroy(&S->stop_cv);
	pthread_mutex_destroy(&S->lock);
	free(S);
	return -1;
}

int server_port(const struct server *s)
{
	return s->port;
}

void server_quiesce(struct server *s)
{
	s->quiescing = 1;
	MHD_socket fd = MHD_quiesce_daemon(s->d);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
}

int server_active(struct server *s)
{
	pthread_mutex_lock(&s->lock);
	int n = s->active;
	pthread_mutex_unlock(&s->lock);
	return n;
}

double server_idle_s(struct server *s)
{
	pthread_mutex_lock(&s->lock);
	double t = now_s() - s->last_change;
	pthread_mutex_unlock(&s->lock);
	return t;
}

void server_destroy(struct server *s)
{
	if (!s)
		return;
	if (s->sweeper_started) {
		pthread_mutex_lock(&s->lock);
		s->stop = 1;
		pthread_cond_signal(&s->stop_cv);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->sweeper, NULL);
	}
	MHD_stop_daemon(s->d);
	pthread_cond_destroy(&s->stop_cv);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
