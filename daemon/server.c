/* fftbloomd's HTTP server on libmicrohttpd: the operation table's routes bound to handlers, and
 * a request's life from its first line to its log line (framing, method, CORS, authentication,
 * body collection, dispatch); the listeners' start and stop are server_listen.c; see server.h. */
#include "daemon/server.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/apiutil.h"
#include "daemon/http.h"
#include "core/log.h"
#include "daemon/metrics.h"
#include "daemon/web.h"
#include "gles/fault.h"
#include "core/clock.h"
#include "core/urlsign.h"

/* Each operation's handler (api/operation.h's rows bound to code): server_create refuses
 * to start while a row has none. */
typedef enum MHD_Result route_handler(struct req *r);
static route_handler *const handlers[OP_COUNT] = {
	[OP_BLOOM] = route_image,
	[OP_CONVOLVE] = route_image,
	[OP_CONV2D] = route_tensor,
	[OP_CONV2D_T] = route_tensor,
	[OP_KERNELS] = route_get,
	[OP_KERNEL] = route_kernel,
	[OP_IMAGES] = route_images,
	[OP_IMAGE] = route_image_store,
	[OP_BLOOM_GET] = route_render,
	[OP_CONVOLVE_GET] = route_render,
	[OP_HEALTHZ] = route_get,
	[OP_READYZ] = route_get,
	[OP_METRICS] = route_get,
	[OP_INFO] = route_get,
	[OP_OPENAPI] = route_get,
	[OP_WEB] = route_get,
	[OP_FAULTS] = route_faults,
};

int routes_complete(char *missing, size_t len)
{
	for (int op = OP_NONE + 1; op < OP_COUNT; op++)
		if (!handlers[op]) {
			snprintf(missing, len, "%s", operations[op].label);
			return 0;
		}
	return 1;
}

static int match_route(const char *url, char name[65], int *bad_name)
{
	*bad_name = 0;
	for (int i = OP_NONE + 1; i < OP_COUNT; i++) {
		const struct operation *o = &operations[i];
		if (o->named) { /* a prefix, then a name */
			size_t pl = strlen(o->path);
			if (!strncmp(url, o->path, pl) && url[pl]) {
				const char *n = url + pl;
				if (strlen(n) > 64 || !api_valid_name(n))
					*bad_name = 1;
				else
					snprintf(name, 65, "%s", n);
				return i;
			}
		} else if (!strcmp(url, o->path) && (i != OP_FAULTS || GLES_FAULTS_BUILT)) {
			return i;
		}
	}
	return web_find(url, NULL, NULL, NULL, NULL) == WEB_OK ? OP_WEB : OP_NONE;
}

/* 1 when the request carries the API key (Authorization: Bearer KEY); 0 without one set. */
static int bearer_valid(struct req *r)
{
	const struct server *S = r->S;
	if (!S->o.api_key)
		return 0;
	const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                            MHD_HTTP_HEADER_AUTHORIZATION);
	if (!h || strncasecmp(h, "Bearer ", 7))
		return 0;
	h += 7;
	while (*h == ' ')
		h++;
	return urlsign_equal(h, strlen(h), S->o.api_key, S->o.api_key_len);
}

/* Whether r may go on: API_E_NONE, or the error to answer (401, 403) with its message. /v1/
 * needs the API key when one is set; GET renders follow store_access (signed URLs). */
static int access_error(struct req *r, char *msg, size_t len)
{
	const struct server *S = r->S;
	if (operation_signed(r->route) || (operation_signed_path(operations[r->route].path) &&
	                                   operation_method_bit(r->method) == OP_M_GET))
		return store_access(r, bearer_valid(r), msg, len);
	if (!S->o.api_key || strncmp(r->path, "/v1/", 4) || bearer_valid(r))
		return 0;
	snprintf(msg, len, "%s requires Authorization: Bearer <API key>", r->path);
	return API_E_UNAUTHORIZED;
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
void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct server *S = cls;
	struct req *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	pthread_mutex_init(&r->done_mu, NULL);
	pthread_cond_init(&r->done_cv, NULL);
	r->S = S;
	r->conn = c;
	r->t0 = clock_s();
	r->job.client_fd = -1;
	snprintf(r->raw, sizeof r->raw, "%s", uri ? uri : "");
	snprintf(r->path, sizeof r->path, "%.127s", r->raw); /* until the headers decode it */
	snprintf(r->method, sizeof r->method, "?");
	client_addr(c, r->client, sizeof r->client);
	r->raw_bad = uri && target_bad(uri);
	r->tcp = conn_of(c);
	if (r->tcp) {
		if (r->tcp->pending) /* the previous request line was dropped unanswered */
			req_dropped(S, c, r->tcp->pending);
		r->tcp->pending = r;
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

/* Counts the header fields that no proxy in front may read otherwise than libmicrohttpd: a name
 * empty or holding whitespace or a control byte (RFC 9112 5.1: no whitespace between a field
 * name and its colon; libmicrohttpd keeps such a name as sent, so "Content-Length : 5" would be
 * some other header to it while a lax proxy frames the body by it), or a value holding a
 * control byte other than tab (a bare CR a proxy may take as a line's end). libmicrohttpd ends a
 * value at a NUL, so what follows one is not seen here. */
static enum MHD_Result count_bad_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                       size_t key_size, const char *value, size_t value_size)
{
	(void)kind;
	int *n = cls;
	int bad = !key_size;
	for (size_t i = 0; i < key_size && !bad; i++)
		bad = (unsigned char)key[i] <= 0x20 || key[i] == 0x7f;
	for (size_t i = 0; value && i < value_size && !bad; i++) {
		unsigned char ch = (unsigned char)value[i];
		bad = (ch < 0x20 && ch != '\t') || ch == 0x7f;
	}
	*n += bad;
	return MHD_YES;
}

/* The request's framing, before anything else: a target holding NUL or control bytes, a header
 * name holding whitespace or a value a control byte, Host twice, an HTTP/1.1 request without
 * Host, Content-Length given twice or not a number, or with
 * Transfer-Encoding (ambiguous framing behind a proxy is how requests are smuggled) are 400;
 * a transfer coding other than chunked is 501. Each closes the connection unread. Returns 1
 * when it answered (*ret holds the result). */
static int framing_check(struct req *r, const char *version, enum MHD_Result *ret)
{
	const char *close_hdr[] = {MHD_HTTP_HEADER_CONNECTION, "close", NULL};
	struct MHD_Connection *c = r->conn;
	if (r->raw_bad) {
		*ret = respond_error_x(r, API_E_BAD_REQUEST, close_hdr, "the request target holds a "
		                       "NUL or control character");
		return 1;
	}
	if (version && !strcmp(version, MHD_HTTP_VERSION_1_1) &&
	    !MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)) {
		*ret = respond_error_x(r, API_E_BAD_REQUEST, close_hdr, "an HTTP/1.1 request needs a "
		                       "Host header");
		return 1;
	}
	int bad_fields = 0;
	MHD_get_connection_values_n(c, MHD_HEADER_KIND, count_bad_field, &bad_fields);
	if (bad_fields) {
		*ret = respond_error_x(r, API_E_BAD_REQUEST, close_hdr, "a header field's name holds "
		                       "whitespace or a control character (as 'Content-Length : 5' "
		                       "would), or its value a control character");
		return 1;
	}
	struct header_count host = {MHD_HTTP_HEADER_HOST, 0};
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &host);
	if (host.n > 1) {
		*ret = respond_error_x(r, API_E_BAD_REQUEST, close_hdr, "Host given more than once");
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
		*ret = respond_error_x(r, API_E_BAD_REQUEST, close_hdr, "%s", cl.n && te.n
		                       ? "Content-Length together with Transfer-Encoding"
		                       : "Content-Length or Transfer-Encoding given more than once");
		return 1;
	}
	if (clv) {
		const char *p = clv;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t d = strspn(p, "0123456789");
		if (!d || d > 20 || p[d + strspn(p + d, " \t")]) { /* 20 digits: MHD answers past 2^64 */
			*ret = respond_error_x(r, API_E_BAD_REQUEST, close_hdr, "Content-Length '%.32s' "
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
			*ret = respond_error_x(r, API_E_NOT_IMPLEMENTED, close_hdr, "Transfer-Encoding "
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
	if (r->route == OP_NONE) {
		*ret = respond_error_x(r, API_E_NOT_FOUND, close_hdr, "no route %s", url);
		return 1;
	}
	char allow[64];
	operation_allow(r->route, allow);
	if (!strcmp(method, "OPTIONS")) {
		const char *extra[] = {"Allow", allow, "Access-Control-Allow-Methods",
		                       allow, "Access-Control-Allow-Headers",
		                       "Authorization, Content-Type, Accept, X-Request-Id, "
		                       "If-None-Match",
		                       "Access-Control-Max-Age", "600", NULL, NULL, NULL};
		if (!r->cors)
			extra[2] = NULL;
		else if (early)
			extra[8] = MHD_HTTP_HEADER_CONNECTION, extra[9] = "close";
		*ret = respond(r, 204, NULL, NULL, 0, 0, extra);
		return 1;
	}
	if (!(operations[r->route].methods & operation_method_bit(method))) {
		const char *extra[] = {"Allow", allow, close_hdr[0], "close", NULL};
		*ret = respond_error_x(r, API_E_METHOD_NOT_ALLOWED, extra,
		                       "%s is not allowed on %s (allowed: %s)", method, url, allow);
		return 1;
	}
	char msg[400];
	int err = access_error(r, msg, sizeof msg);
	if (err) {
		const char *extra[] = {"WWW-Authenticate", "Bearer realm=\"fftbloomd\"", close_hdr[0],
		                       "close", NULL};
		*ret = respond_error_x(r, err, err == API_E_UNAUTHORIZED ? extra : extra + 2, "%s",
		                       msg);
		return 1;
	}
	if (r->bad_name) {
		int k = r->route == OP_KERNEL;
		*ret = respond_error_x(r, k ? API_E_BAD_KERNEL_NAME : API_E_BAD_IMAGE_NAME, close_hdr,
		                       "%s names are 1-64 characters of A-Z a-z 0-9 . _ - "
		                       "(not starting with '.')", operations[r->route].named);
		return 1;
	}
	if (r->S->o.service) { /* the other workers' PUTs and DELETEs, before any name is looked up */
		const struct config *c = &r->S->cfg;
		struct image_limits klim = {(unsigned)c->max_side, (unsigned)c->max_side,
		                            c->kernel_max_pixels < c->max_pixels ? c->kernel_max_pixels
		                            : c->max_pixels, NULL, NULL, 0};
		struct image_limits ilim = {(unsigned)c->max_side, (unsigned)c->max_side,
		                            c->max_pixels, NULL, NULL, 0};
		service_store_sync(r->S->o.service, r->S->o.kernels, r->S->o.images, &klim, &ilim);
	}
	return 0;
}

/* Holds bytes of --memory-budget for r's body: 0 or a JOBS_E_ code. */
static int body_hold(struct req *r, unsigned long long bytes)
{
	struct jobs *J = r->S->o.jobs;
	int rc = J ? jobs_memory_hold(J, bytes) : 0;
	if (!rc && J)
		r->held += bytes;
	return rc;
}

/* Frees what r's body holds: its buffer and its part of --memory-budget. */
static void body_drop(struct req *r)
{
	free(r->body);
	r->body = NULL;
	r->len = r->cap = 0;
	if (r->held)
		jobs_memory_release(r->S->o.jobs, r->held);
	r->held = 0;
}

/* The answer to a body that does not fit --memory-budget (body_hold's rc): 503 memory_budget
 * with Retry-After while other requests hold it, 413 when it is larger than the whole budget;
 * the connection closes (the body is not read, or was dropped). */
static enum MHD_Result body_refused(struct req *r, int rc, unsigned long long n)
{
	struct server *S = r->S;
	unsigned long long budget = S->cfg.memory_budget;
	char ra[16];
	const char *extra[] = {"Retry-After", retry_after(r, ra), MHD_HTTP_HEADER_CONNECTION,
	                       "close", NULL};
	if (rc == JOBS_E_OVER_BUDGET)
		return respond_error_x(r, API_E_BODY_TOO_LARGE, extra + 2, "the body of %llu bytes "
		                       "is larger than the whole --memory-budget of %llu bytes", n,
		                       budget);
	return respond_error_x(r, API_E_MEMORY_BUDGET, extra, "the body of %llu bytes does not "
	                       "fit the --memory-budget of %llu bytes that the requests in "
	                       "progress hold; retry later", n, budget);
}

enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                           const char *method, const char *version, const char *upload,
                           size_t *upload_size, void **con_cls)
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
		if (r->tcp && r->tcp->pending == r)
			r->tcp->pending = NULL; /* on_completed ends it from now on */
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
		const char *close_hdr[] = {MHD_HTTP_HEADER_CONNECTION, "close", NULL};
		if (strcmp(method, "POST") && strcmp(method, "PUT"))
			return respond_error_x(r, API_E_BAD_REQUEST, close_hdr, "%s %s takes no body",
			                       method, r->path);
		if (n > S->cfg.max_body)
			return respond_error_x(r, API_E_BODY_TOO_LARGE, close_hdr, "the body of %llu "
			                       "bytes is larger than the %llu bytes allowed (--max-body)",
			                       n, S->cfg.max_body);
		/* an announced body that cannot fit --memory-budget now is refused before any byte;
		 * one that can holds the budget as its buffer grows with what arrives */
		int hr = S->o.jobs ? jobs_memory_fits(S->o.jobs, n) : 0;
		if (hr)
			return body_refused(r, hr, n);
		r->announced = n;
		size_t pre = n < BODY_AHEAD ? (size_t)n : BODY_AHEAD;
		if (pre && !body_hold(r, pre) && (r->body = malloc(pre)))
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
		if (r->too_large || r->over_budget) {
			r->discarded += n;
			return r->discarded > DISCARD_MAX ? MHD_NO : MHD_YES;
		}
		if (r->len + n > S->cfg.max_body) {
			r->too_large = 1;
			r->discarded = r->len + n - S->cfg.max_body; /* bytes past the limit */
			body_drop(r);
			return MHD_YES;
		}
		if (r->len + n > r->cap) {
			size_t cap = r->cap ? r->cap : 65536;
			while (cap < r->len + n)
				cap *= 2;
			if (cap > S->cfg.max_body)
				cap = S->cfg.max_body;
			if (r->announced && cap > r->announced)
				cap = r->announced; /* libmicrohttpd passes no more than announced */
			int hr = cap > r->held ? body_hold(r, cap - r->held) : 0;
			if (hr) { /* a chunked body: read and drop the rest, then answer */
				r->over_budget = hr;
				r->discarded = n;
				body_drop(r);
				return MHD_YES;
			}
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
		return respond_error_x(r, API_E_BODY_TOO_LARGE, close_hdr, "the body is larger than "
		                       "the %llu bytes allowed (--max-body)", S->cfg.max_body);
	}
	if (r->over_budget)
		return body_refused(r, r->over_budget, r->len + r->discarded);
	return handlers[r->route](r);
}

/* Logs, counts and frees a request that has ended. */
static void req_end(struct server *S, struct MHD_Connection *c, struct req *r,
                    enum MHD_RequestTerminationCode toe)
{
	if (r->tcp && r->tcp->pending == r)
		r->tcp->pending = NULL;
	if (!r->init && !r->status) { /* refused by libmicrohttpd before its headers were in */
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
		r->status = ci && ci->http_status ? (int)ci->http_status : 400;
	}
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && (!r->status || r->status < 400))
		r->status = 499; /* the connection closed before the answer was sent */
	double total = clock_s() - r->t0;
	metrics_request(S->o.metrics, operations[r->route].label, r->status);
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
	int quiet = r->route == OP_HEALTHZ || r->route == OP_READYZ || r->route == OP_METRICS;
	log_fields(quiet ? LOG_DEBUG : LOG_INFO, "request", f, n);
	free(r->job.body);
	kernels_release(S->o.kernels, r->job.named);
	images_release(S->o.images, r->stored);
	free(r->fetched);
	body_drop(r);
	pthread_cond_destroy(&r->done_cv);
	pthread_mutex_destroy(&r->done_mu);
	free(r);
	touch(S, -1);
}

void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                  enum MHD_RequestTerminationCode toe)
{
	struct server *S = cls;
	struct req *r = *con_cls;
	if (!r)
		return;
	*con_cls = NULL;
	set_phase(S, conn_of(c), CONN_IDLE);
	req_end(S, c, r, toe);
}

void req_dropped(struct server *S, struct MHD_Connection *c, struct req *r)
{
	req_end(S, c, r, MHD_REQUEST_TERMINATED_WITH_ERROR);
}

void server_conns(struct server *s, struct service_conns *c)
{
	pthread_mutex_lock(&s->lock);
	c->cut_headers = s->cut_headers;
	c->cut_body = s->cut_body;
	c->cut_idle = s->cut_idle;
	c->evicted = s->evicted;
	c->refused_full = s->refused_full;
	c->open_conns = s->nconns;
	c->open_requests = s->active;
	pthread_mutex_unlock(&s->lock);
}
