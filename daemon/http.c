/* The HTTP server's answers (the headers every answer carries, JSON errors) and the connection
 * rules (headers within --header-timeout, bodies at --min-body-rate, keep-alive connections
 * idle within --idle-timeout, room made at --max-connections); see http.h. */
#include "daemon/http.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/apiutil.h"
#include "core/log.h"
#include "core/clock.h"

void touch(struct server *S, int delta)
{
	pthread_mutex_lock(&S->lock);
	S->active += delta;
	S->last_change = clock_s();
	pthread_mutex_unlock(&S->lock);
}

/* ---- answers ---- */

/* Queues an answer with the headers every answer carries. body: owned (freed with free) when
 * `owned`, else copied. extra: NULL-terminated name/value pairs. */
enum MHD_Result respond(struct req *r, int status, const char *ctype, void *body,
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
	char timing[384];
	snprintf(timing, sizeof timing,
	         "decode;dur=%.3f, queue;dur=%.3f, gpu;dur=%.3f, gpu_copy;dur=%.3f, gpu_wait;dur=%.3f, "
	         "gpu_setup;dur=%.3f, encode;dur=%.3f, total;dur=%.3f",
	         j->decode_s * 1e3, j->queue_s * 1e3, j->gpu_s * 1e3, j->gpu_copy_s * 1e3,
	         j->gpu_wait_s * 1e3, j->gpu_setup_s * 1e3, j->encode_s * 1e3,
	         (clock_s() - r->t0) * 1e3);
	if (r->origin_s > 0) /* a src= render: the fetch from the origin */
		snprintf(timing + strlen(timing), sizeof timing - strlen(timing), ", origin;dur=%.3f",
		         r->origin_s * 1e3);
	MHD_add_response_header(resp, "X-Request-Id", r->id);
	MHD_add_response_header(resp, "Server-Timing", timing);
	if (ctype)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	const char *vary = NULL; /* an answer's own Vary joins CORS's Origin in one field */
	for (const char *const *e = extra; e && e[0]; e += 2)
		if (!strcasecmp(e[0], "Vary"))
			vary = e[1];
	/* with CORS on, every answer depends on the Origin, an allowed one or not (a cache must not
	 * give one origin's answer to another) */
	int vary_origin = r->S->cfg.cors_origins[0] != 0;
	if (vary_origin) {
		char v[128];
		snprintf(v, sizeof v, "Origin%s%s", vary ? ", " : "", vary ? vary : "");
		MHD_add_response_header(resp, "Vary", v);
	}
	if (r->cors) {
		MHD_add_response_header(resp, "Access-Control-Allow-Origin", r->origin);
		MHD_add_response_header(resp, "Access-Control-Expose-Headers",
		                        "X-Request-Id, Server-Timing, Retry-After, X-Image-Lost, X-Gpu, "
		                        "X-Convolve-Method, X-Tiles, X-Borrowed-Plan, ETag, Location, "
		                        "X-Result-Cache");
	}
	for (; extra && extra[0]; extra += 2)
		if (!vary_origin || strcasecmp(extra[0], "Vary"))
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

enum MHD_Result respond_json(struct req *r, int status, json_t *o, const char *const *extra)
{
	char *s = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
	json_decref(o);
	if (!s) { /* out of memory: a fixed answer rather than none */
		const struct api_error_def *e = api_error(API_E_ANSWER_NOMEM);
		char oom[160];
		int n = snprintf(oom, sizeof oom, "{\"error\": {\"status\": %d, \"code\": \"%s\", "
		                 "\"message\": \"the answer could not be built\"}}\n", e->status,
		                 e->code);
		snprintf(r->code, sizeof r->code, "%s", e->code);
		return respond(r, e->status, "application/json", oom, (size_t)n, 0, extra);
	}
	size_t l = strlen(s);
	char *t = realloc(s, l + 2);
	if (t) {
		s = t;
		s[l++] = '\n';
		s[l] = 0;
	}
	return respond(r, status, "application/json", s, l, 1, extra);
}

enum MHD_Result respond_error_x(struct req *r, int error, const char *const *extra,
                                const char *fmt, ...)
{
	const struct api_error_def *e = api_error(error);
	int status = e->status ? e->status : 500;
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	api_utf8_clean(msg); /* messages quote the client's bytes */
	json_t *o = json_pack("{s:{s:i,s:s,s:s}}", "error", "status", status, "code",
	                      e->status ? e->code : "internal", "message", msg);
	snprintf(r->code, sizeof r->code, "%s", e->status ? e->code : "internal");
	return respond_json(r, status, o, extra);
}

const char *retry_after(const struct req *r, char buf[16])
{
	snprintf(buf, 16, "%d", r->S->cfg.retry_after);
	return buf;
}

enum MHD_Result respond_busy(struct req *r, int error, const char *msg)
{
	char ra[16];
	const char *extra[] = {"Retry-After", retry_after(r, ra), NULL};
	return respond_error_x(r, error, extra, "%s", msg);
}

void client_addr(struct MHD_Connection *c, char *buf, size_t len)
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

/* ---- connections: deadlines for headers and bodies ---- */

struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

void set_phase(struct server *S, struct conn *t, int phase)
{
	if (!t)
		return;
	pthread_mutex_lock(&S->lock);
	t->phase = phase;
	t->since = clock_s();
	t->body = 0;
	pthread_mutex_unlock(&S->lock);
}

int client_fd(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	return ci ? ci->connect_fd : -1;
}

/* At the limit, the body of the address holding the most connections, when that is more than
 * an eighth of --max-connections (a fair share): its slowest (fewest bytes a second so far), or
 * NULL. Called under S->lock. */
static struct conn *hoarded_body(struct server *S, struct conn *fresh, double t)
{
	struct conn *top = NULL;
	int top_n = 0;
	for (struct conn *c = S->conns.next; c != &S->conns; c = c->next) {
		if (c == fresh || c->cut || c->phase != CONN_BODY)
			continue;
		int n = 0;
		for (struct conn *d = S->conns.next; d != &S->conns; d = d->next)
			n += d != fresh && !d->cut && !strcmp(d->addr, c->addr);
		if (n > top_n)
			top = c, top_n = n;
	}
	if (!top || top_n <= S->cfg.max_connections / 8)
		return NULL;
	struct conn *slow = NULL;
	double slow_rate = 0;
	for (struct conn *c = S->conns.next; c != &S->conns; c = c->next) {
		if (c == fresh || c->cut || c->phase != CONN_BODY || strcmp(c->addr, top->addr))
			continue;
		double age = t - c->since, rate = age > 0 ? (double)c->body / age : 0;
		if (!slow || rate < slow_rate)
			slow = c, slow_rate = rate;
	}
	return slow;
}

/* A connection past --max-connections has been accepted (into libmicrohttpd's spare room): the
 * longest-idle keep-alive connection is closed to make room for it, else the one that has been
 * sending its request's headers longest, for more than a second (a slow or silent client), else
 * the slowest body of an address holding more than its share (hoarded_body), else the new one
 * itself. Called under S->lock. */
static void make_room(struct server *S, struct conn *fresh)
{
	struct conn *idle = NULL, *silent = NULL;
	double t = clock_s();
	for (struct conn *c = S->conns.next; c != &S->conns; c = c->next) {
		if (c == fresh || c->cut || c->fd < 0)
			continue;
		if (c->phase == CONN_IDLE && (!idle || c->since < idle->since))
			idle = c;
		else if (c->phase == CONN_HEADERS && t - c->since > 1.0 &&
		         (!silent || c->since < silent->since))
			silent = c;
	}
	struct conn *v = idle ? idle : silent ? silent : hoarded_body(S, fresh, t);
	if (!v)
		v = fresh;
	v->cut = 1;
	if (v == fresh)
		S->refused_full++;
	else
		S->evicted++;
	shutdown(v->fd, SHUT_RDWR);
}

void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	struct server *S = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		struct conn *t = calloc(1, sizeof *t);
		if (!t)
			return;
		t->fd = client_fd(c);
		client_addr(c, t->addr, sizeof t->addr);
		t->phase = CONN_HEADERS;
		t->since = clock_s();
		t->first = 1;
		pthread_mutex_lock(&S->lock);
		t->next = S->conns.next;
		t->prev = &S->conns;
		S->conns.next->prev = t;
		S->conns.next = t;
		if (++S->nconns > S->cfg.max_connections)
			make_room(S, t);
		pthread_mutex_unlock(&S->lock);
		*socket_context = t;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		/* libmicrohttpd closes the socket only after this: a shutdown under the lock never
		 * reaches a socket that a new connection reuses */
		struct conn *t = *socket_context;
		if (t->pending)
			req_dropped(S, c, t->pending);
		pthread_mutex_lock(&S->lock);
		t->prev->next = t->next;
		t->next->prev = t->prev;
		S->nconns--;
		pthread_mutex_unlock(&S->lock);
		free(t);
		*socket_context = NULL;
	}
}

/* Shuts down the connections that missed a deadline; libmicrohttpd then sees them end. */
void *sweeper_main(void *arg)
{
	struct server *S = arg;
	pthread_mutex_lock(&S->lock);
	while (!S->stop) {
		double t = clock_s(), hto = S->cfg.header_timeout;
		double rate = (double)S->cfg.min_body_rate;
		for (struct conn *c = S->conns.next; c != &S->conns; c = c->next) {
			if (c->cut || c->fd < 0)
				continue;
			double age = t - c->since;
			int late_headers = c->phase == CONN_HEADERS && age > hto;
			int slow_body = c->phase == CONN_BODY && rate > 0 && age > hto &&
			                (double)c->body < rate * age;
			int idle = c->phase == CONN_IDLE && age > S->cfg.idle_timeout;
			if (!late_headers && !slow_body && !idle)
				continue;
			c->cut = 1;
			shutdown(c->fd, SHUT_RDWR);
			if (idle) { /* the ordinary end of a keep-alive connection: counted, not logged */
				S->cut_idle++;
				continue;
			}
			if (late_headers)
				S->cut_headers++;
			else
				S->cut_body++;
			log_msg(LOG_INFO, late_headers
			        ? "connection closed: no complete request headers within %g s "
			          "(--header-timeout)"
			        : "connection closed: its body came slower than %g bytes a second "
			          "(--min-body-rate)", late_headers ? hto : rate);
		}
		clock_cond_wait_ns(&S->stop_cv, &S->lock, SWEEP_MS * 1000000LL);
	}
	pthread_mutex_unlock(&S->lock);
	return NULL;
}
