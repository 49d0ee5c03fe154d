/* Fetching source images from allowed origins over libcurl; see origin.h. */
#include "daemon/origin_impl.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/clock.h"

#define MAX_ADDRS 16          /* addresses of one host kept and checked */
#define DISCARD_BODY (64 << 10) /* bytes of a redirect's or error's body read before closing */

/* ---- one hop ---- */

struct hop {
	struct origin *o;
	struct origin_result *res;
	origin_decide_fn decide;
	void *ctx;
	struct sockaddr_storage addrs[MAX_ADDRS]; /* the checked addresses: the only ones connected to */
	int naddrs;
	int status;             /* the answer's status, from its status line */
	char location[2048];
	unsigned char *buf;
	size_t len, cap;
	int too_large, decided, stopped;
	const char *url;
};

static int same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return 0;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		               &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
	return 0;
}

/* libcurl's socket: only to an address the resolution checked. */
static curl_socket_t open_socket(void *cls, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct hop *h = cls;
	(void)purpose;
	for (int i = 0; i < h->naddrs; i++)
		if (same_addr(&a->addr, &h->addrs[i]))
			return socket(a->family, a->socktype, a->protocol);
	return CURL_SOCKET_BAD;
}

static void header_value(const char *line, size_t n, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);
	if (n <= nl || strncasecmp(line, name, nl) || line[nl] != ':')
		return;
	const char *v = line + nl + 1;
	size_t vl = n - nl - 1;
	while (vl && (*v == ' ' || *v == '\t'))
		v++, vl--;
	while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
		vl--;
	if (vl >= cap)
		vl = cap - 1;
	memcpy(out, v, vl);
	out[vl] = 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *cls)
{
	struct hop *h = cls;
	size_t len = size * n;
	if (len >= 5 && !strncmp(p, "HTTP/", 5)) { /* a new answer (after a 100 Continue) */
		const char *sp = memchr(p, ' ', len);
		h->status = sp ? atoi(sp + 1) : 0;
		h->res->etag[0] = h->res->last_modified[0] = h->location[0] = 0;
		return len;
	}
	header_value(p, len, "ETag", h->res->etag, sizeof h->res->etag);
	header_value(p, len, "Last-Modified", h->res->last_modified,
	             sizeof h->res->last_modified);
	header_value(p, len, "Location", h->location, sizeof h->location);
	return len;
}

static void identity_of(struct origin_result *r, const unsigned char *bytes, size_t len)
{
	gnutls_hash_hd_t g;
	memset(r->identity, 0, sizeof r->identity);
	if (gnutls_hash_init(&g, GNUTLS_DIG_SHA256))
		return;
	static const char tag[] = "fftbloomd origin image 1";
	gnutls_hash(g, tag, sizeof tag);
	gnutls_hash(g, r->url, strlen(r->url) + 1);
	r->by_validators = !bytes;
	if (bytes) {
		gnutls_hash(g, "bytes", 6);
		gnutls_hash(g, bytes, len);
	} else {
		gnutls_hash(g, r->etag, strlen(r->etag) + 1);
		gnutls_hash(g, r->last_modified, strlen(r->last_modified) + 1);
	}
	gnutls_hash_deinit(g, r->identity);
}

static size_t on_body(char *p, size_t size, size_t n, void *cls)
{
	struct hop *h = cls;
	size_t len = size * n;
	if (h->status != 200) { /* a redirect's or an error's body: read a little, then close */
		h->len += len;
		return h->len > DISCARD_BODY ? 0 : len;
	}
	if (!h->decided) {
		h->decided = 1;
		if (h->decide && (h->res->etag[0] || h->res->last_modified[0])) {
			snprintf(h->res->url, sizeof h->res->url, "%s", h->url);
			identity_of(h->res, NULL, 0);
			if (h->decide(h->res->identity, h->ctx)) {
				h->stopped = 1;
				return 0;
			}
		}
	}
	if (h->len + len > h->o->o.max_bytes) {
		h->too_large = 1;
		return 0;
	}
	if (h->len + len > h->cap) {
		size_t cap = h->cap ? h->cap : 65536;
		while (cap < h->len + len)
			cap *= 2;
		if (cap > h->o->o.max_bytes)
			cap = (size_t)h->o->o.max_bytes;
		unsigned char *b = realloc(h->buf, cap);
		if (!b)
			return 0;
		h->buf = b;
		h->cap = cap;
	}
	memcpy(h->buf + h->len, p, len);
	h->len += len;
	return len;
}

/* Resolves p's host once and checks every address; the CURLOPT_RESOLVE line pinning them. */
static int resolve(struct hop *h, const struct url_parts *p, int explicit_ip,
                   struct curl_slist **pin, char err[ORIGIN_ERR_LEN])
{
	char host[256];
	snprintf(host, sizeof host, "%s", p->host);
	if (host[0] == '[') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	char port[16];
	snprintf(port, sizeof port, "%ld", p->port);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *ai = NULL;
	int g = getaddrinfo(host, port, &hints, &ai);
	if (g) {
		snprintf(err, ORIGIN_ERR_LEN, "src: the host %.200s does not resolve (%s)", p->host,
		         gai_strerror(g));
		return ORIGIN_E_RESOLVE;
	}
	char line[1200];
	int at = snprintf(line, sizeof line, "%s:%ld:", host, p->port);
	h->naddrs = 0;
	int rc = 0;
	for (struct addrinfo *a = ai; a && h->naddrs < MAX_ADDRS; a = a->ai_next) {
		if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
			continue;
		const char *why = origin_address_refused(a->ai_addr);
		char text[INET6_ADDRSTRLEN] = "?";
		const void *bin = a->ai_family == AF_INET
			? (const void *)&((struct sockaddr_in *)a->ai_addr)->sin_addr
			: (const void *)&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr;
		inet_ntop(a->ai_family, bin, text, sizeof text);
		if (why && !explicit_ip) {
			snprintf(err, ORIGIN_ERR_LEN, "src: %.200s resolves to %s, a %s address, which "
			         "only an --origin-allow entry naming that IP address may reach", p->host,
			         text, why);
			rc = ORIGIN_E_ADDRESS;
			break;
		}
		memcpy(&h->addrs[h->naddrs++], a->ai_addr, a->ai_addrlen);
		if (at < (int)sizeof line - 50)
			at += snprintf(line + at, sizeof line - at, "%s%s%s%s", h->naddrs > 1 ? "," : "",
			               a->ai_family == AF_INET6 ? "[" : "", text,
			               a->ai_family == AF_INET6 ? "]" : "");
	}
	freeaddrinfo(ai);
	if (!rc && !h->naddrs) {
		snprintf(err, ORIGIN_ERR_LEN, "src: the host %.200s has no IP address", p->host);
		rc = ORIGIN_E_RESOLVE;
	}
	if (!rc && !origin_host_is_ip(p->host)) {
		*pin = curl_slist_append(NULL, line);
		if (!*pin)
			rc = ORIGIN_E_NOMEM;
	}
	return rc;
}

static int one_hop(struct hop *h, const struct url_parts *p, int explicit_ip, double deadline,
                   char err[ORIGIN_ERR_LEN])
{
	struct origin *o = h->o;
	struct curl_slist *pin = NULL;
	int rc = resolve(h, p, explicit_ip, &pin, err);
	if (rc)
		return rc;
	double left = deadline - clock_s();
	if (left <= 0) {
		snprintf(err, ORIGIN_ERR_LEN, "src: %.300s: the --origin-timeout of %g s passed",
		         p->url, o->o.timeout);
		curl_slist_free_all(pin);
		return ORIGIN_E_TIMEOUT;
	}
	CURL *c = curl_easy_init();
	if (!c) {
		curl_slist_free_all(pin);
		return ORIGIN_E_NOMEM;
	}
	char cerr[CURL_ERROR_SIZE] = "";
	h->url = p->url;
	curl_easy_setopt(c, CURLOPT_URL, p->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");     /* never a proxy from the environment */
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_RESOLVE, pin);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, h);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->o.connect_timeout * 1000));
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(left * 1000) + 1);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->o.max_bytes);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "fftbloomd");
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_DNS_CACHE_TIMEOUT, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (o->ca_file[0])
		curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	CURLcode cc = curl_easy_perform(c);
	long code = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	curl_slist_free_all(pin);
	h->res->http_status = (int)code;
	if (h->stopped)
		return 0;
	if (h->too_large || cc == CURLE_FILESIZE_EXCEEDED) {
		snprintf(err, ORIGIN_ERR_LEN, "src: %.300s is larger than --origin-max-bytes (%llu "
		         "bytes)", p->url, o->o.max_bytes);
		return ORIGIN_E_TOO_LARGE;
	}
	if (cc == CURLE_OPERATION_TIMEDOUT) {
		snprintf(err, ORIGIN_ERR_LEN, "src: %.300s did not answer within the timeouts "
		         "(--origin-connect-timeout %g s, --origin-timeout %g s)", p->url,
		         o->o.connect_timeout, o->o.timeout);
		return ORIGIN_E_TIMEOUT;
	}
	if (cc == CURLE_WRITE_ERROR && h->status != 200)
		cc = CURLE_OK; /* a long redirect or error body, cut */
	if (cc == CURLE_COULDNT_CONNECT) {
		snprintf(err, ORIGIN_ERR_LEN, "src: no connection to %.300s: %.150s", p->url,
		         cerr[0] ? cerr : curl_easy_strerror(cc));
		return ORIGIN_E_CONNECT;
	}
	if (cc == CURLE_SSL_CONNECT_ERROR || cc == CURLE_PEER_FAILED_VERIFICATION ||
	    cc == CURLE_SSL_CERTPROBLEM || cc == CURLE_SSL_CIPHER || cc == CURLE_SSL_CACERT_BADFILE ||
	    cc == CURLE_SSL_ISSUER_ERROR || cc == CURLE_SSL_INVALIDCERTSTATUS) {
		snprintf(err, ORIGIN_ERR_LEN, "src: %.250s: the origin's certificate was not accepted "
		         "(trusted: %s): %.150s", p->url, o->ca_file[0] ? "--origin-ca" : "the system's CAs",
		         cerr[0] ? cerr : curl_easy_strerror(cc));
		return ORIGIN_E_TLS;
	}
	if (cc != CURLE_OK) {
		snprintf(err, ORIGIN_ERR_LEN, "src: fetching %.300s failed: %.150s", p->url,
		         cerr[0] ? cerr : curl_easy_strerror(cc));
		return cc == CURLE_OUT_OF_MEMORY ? ORIGIN_E_NOMEM : ORIGIN_E_TRANSFER;
	}
	return 0;
}

static int is_redirect(int s)
{
	return s == 301 || s == 302 || s == 303 || s == 307 || s == 308;
}

static int fetch(struct origin *o, const char *url, origin_decide_fn decide, void *ctx,
                 struct origin_result *res, char err[ORIGIN_ERR_LEN])
{
	double deadline = clock_s() + o->o.timeout;
	char cur[2048];
	snprintf(cur, sizeof cur, "%s", url);
	for (int hops = 0;; hops++) {
		int explicit_ip;
		int rc = origin_check_url(o, cur, &explicit_ip, err);
		if (rc && hops) { /* say that it was a redirect's target */
			if (rc == ORIGIN_E_URL) /* the origin sent it: its fault */
				rc = ORIGIN_E_LOCATION;
			char why[ORIGIN_ERR_LEN];
			snprintf(why, sizeof why, "%s", err);
			snprintf(err, ORIGIN_ERR_LEN, "src: %.120s redirected (hop %d) to '%.150s', "
			         "refused: %.200s", res->url, hops, cur, why);
		}
		if (rc)
			return rc;
		struct url_parts p;
		origin_parse_url(cur, &p, err);
		snprintf(res->url, sizeof res->url, "%s", p.url);
		struct hop h;
		memset(&h, 0, sizeof h);
		h.o = o;
		h.res = res;
		h.decide = decide;
		h.ctx = ctx;
		rc = one_hop(&h, &p, explicit_ip, deadline, err);
		if (rc) {
			free(h.buf);
			return rc;
		}
		if (h.stopped) {
			res->skipped = 1;
			free(h.buf);
			return 0;
		}
		if (h.status == 200) {
			res->data = h.buf;
			res->len = h.len;
			res->redirects = hops;
			if (res->etag[0] || res->last_modified[0])
				identity_of(res, NULL, 0);
			else
				identity_of(res, h.buf, h.len);
			return 0;
		}
		free(h.buf);
		if (!is_redirect(h.status)) {
			snprintf(err, ORIGIN_ERR_LEN, "src: the origin answered %d for %.300s", h.status,
			         p.url);
			return ORIGIN_E_STATUS;
		}
		if (!h.location[0] || hops == ORIGIN_MAX_REDIRECTS) {
			snprintf(err, ORIGIN_ERR_LEN, "src: %.300s: %s", p.url, h.location[0] ?
			         "more than 5 redirects" : "a redirect without Location");
			return ORIGIN_E_REDIRECTS;
		}
		/* a fragment never reaches a server (RFC 9110 10.2.2 lets a Location carry one):
		 * dropped, and what is left checked as usual */
		h.location[strcspn(h.location, "#")] = 0;
		/* the next hop, resolved against this one, checked like the first */
		CURLU *u = curl_url();
		char *next = NULL;
		if (!u)
			return ORIGIN_E_NOMEM;
		int bad = curl_url_set(u, CURLUPART_URL, p.url, 0) ||
		          curl_url_set(u, CURLUPART_URL, h.location, 0) ||
		          curl_url_get(u, CURLUPART_URL, &next, 0) || strlen(next) >= sizeof cur;
		if (!bad)
			snprintf(cur, sizeof cur, "%s", next);
		curl_free(next);
		curl_url_cleanup(u);
		if (bad) {
			snprintf(err, ORIGIN_ERR_LEN, "src: %.200s redirects to '%.200s', not a URL",
			         p.url, h.location);
			return ORIGIN_E_LOCATION;
		}
		/* a relative Location keeps the absolute form libcurl made; an absolute one is
		 * checked as written, so its own text is what the next hop's checks read */
		if (strstr(h.location, "://"))
			snprintf(cur, sizeof cur, "%s", h.location);
	}
}

/* ---- threads ---- */

static void *fetch_main(void *arg)
{
	struct origin *o = arg;
	pthread_mutex_lock(&o->mu);
	for (;;) {
		while (!o->head && !o->stop)
			pthread_cond_wait(&o->work_cv, &o->mu);
		if (!o->head)
			break;
		struct task *t = o->head;
		o->head = t->next;
		if (!o->head)
			o->tail = NULL;
		o->waiting--;
		o->running++;
		pthread_mutex_unlock(&o->mu);
		t->rc = fetch(o, t->url, t->decide, t->ctx, t->res, t->err);
		pthread_mutex_lock(&o->mu);
		o->running--;
		o->st.fetches++;
		if (t->rc)
			o->st.failures++;
		o->st.bytes += t->res->len;
		o->st.skipped += t->res->skipped != 0;
		t->done = 1;
		pthread_cond_broadcast(&o->done_cv);
	}
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

int origin_fetch(struct origin *o, const char *url, origin_decide_fn decide, void *ctx,
                 struct origin_result *res, char err[ORIGIN_ERR_LEN])
{
	memset(res, 0, sizeof *res);
	int explicit_ip;
	int rc = origin_check_url(o, url, &explicit_ip, err); /* the cheap refusals at once */
	if (rc)
		return rc;
	struct task t = {.url = url, .decide = decide, .ctx = ctx, .res = res, .err = err};
	pthread_mutex_lock(&o->mu);
	if (o->stop) {
		pthread_mutex_unlock(&o->mu);
		snprintf(err, ORIGIN_ERR_LEN, "the server is shutting down");
		return ORIGIN_E_SHUTDOWN;
	}
	if (o->running + o->waiting >= o->nthreads && o->waiting >= o->o.queue) {
		o->st.busy++;
		pthread_mutex_unlock(&o->mu);
		snprintf(err, ORIGIN_ERR_LEN, "src: every fetch thread is busy (--origin-concurrency "
		         "%d) and %d fetches wait: retry later", o->o.concurrency, o->waiting);
		return ORIGIN_E_BUSY;
	}
	if (o->tail)
		o->tail->next = &t;
	else
		o->head = &t;
	o->tail = &t;
	o->waiting++;
	pthread_cond_signal(&o->work_cv);
	while (!t.done)
		pthread_cond_wait(&o->done_cv, &o->mu);
	pthread_mutex_unlock(&o->mu);
	if (t.rc) {
		free(res->data);
		res->data = NULL;
		res->len = 0;
	}
	return t.rc;
}

void origin_result_free(struct origin_result *r)
{
	if (!r)
		return;
	free(r->data);
	r->data = NULL;
	r->len = 0;
}

int origin_create(const struct origin_opts *opts, struct origin **out, char err[ORIGIN_ERR_LEN])
{
	*out = NULL;
	struct origin *o = calloc(1, sizeof *o);
	if (!o)
		return ORIGIN_E_NOMEM;
	o->o = *opts;
	o->o.allow = NULL;
	o->o.ca_file = NULL;
	if (opts->ca_file && opts->ca_file[0]) {
		FILE *f = strlen(opts->ca_file) < sizeof o->ca_file ? fopen(opts->ca_file, "r") : NULL;
		if (!f) {
			snprintf(err, ORIGIN_ERR_LEN, "--origin-ca %.300s: cannot be read", opts->ca_file);
			free(o);
			return ORIGIN_E_TLS;
		}
		fclose(f);
		snprintf(o->ca_file, sizeof o->ca_file, "%s", opts->ca_file);
	}
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->work_cv, NULL);
	pthread_cond_init(&o->done_cv, NULL);
	int rc = origin_parse_allow(o, opts->allow, err);
	if (rc) {
		origin_destroy(o);
		return rc;
	}
	if (o->nallow) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
			origin_destroy(o);
			return ORIGIN_E_NOMEM;
		}
		o->threads = calloc((size_t)opts->concurrency, sizeof *o->threads);
		if (!o->threads) {
			origin_destroy(o);
			return ORIGIN_E_NOMEM;
		}
		for (int i = 0; i < opts->concurrency; i++) {
			if (pthread_create(&o->threads[i], NULL, fetch_main, o))
				break;
			o->nthreads++;
		}
		if (!o->nthreads) {
			origin_destroy(o);
			return ORIGIN_E_NOMEM;
		}
	}
	*out = o;
	return 0;
}

void origin_destroy(struct origin *o)
{
	if (!o)
		return;
	pthread_mutex_lock(&o->mu);
	o->stop = 1;
	pthread_cond_broadcast(&o->work_cv);
	pthread_mutex_unlock(&o->mu);
	for (int i = 0; i < o->nthreads; i++)
		pthread_join(o->threads[i], NULL);
	free(o->threads);
	pthread_cond_destroy(&o->work_cv);
	pthread_cond_destroy(&o->done_cv);
	pthread_mutex_destroy(&o->mu);
	free(o);
}

int origin_enabled(const struct origin *o)
{
	return o && o->nallow > 0;
}

void origin_stats(struct origin *o, struct origin_stats *s)
{
	memset(s, 0, sizeof *s);
	if (!o)
		return;
	pthread_mutex_lock(&o->mu);
	*s = o->st;
	s->running = o->running;
	s->waiting = o->waiting;
	pthread_mutex_unlock(&o->mu);
}
