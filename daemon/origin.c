/* Fetching source images from allowed origins over libcurl; see origin.h. */
#include "daemon/origin.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"

#define MAX_ADDRS 16          /* addresses of one host kept and checked */
#define DISCARD_BODY (64 << 10) /* bytes of a redirect's or error's body read before closing */

struct allow_entry {
	char scheme[8];   /* "http" or "https" */
	char host[256];   /* as libcurl normalises it: lower case, IPv6 in brackets */
	long port;
	char prefix[1024];
	int ip;           /* host is an IP literal: the address is named explicitly */
};

struct task {
	const char *url;
	origin_decide_fn decide;
	void *ctx;
	struct origin_result *res;
	char *err;
	int rc;
	int done;
	struct task *next;
};

struct origin {
	struct origin_opts o;
	struct allow_entry allow[ORIGIN_MAX_ENTRIES];
	int nallow;
	pthread_mutex_t mu;
	pthread_cond_t work_cv, done_cv;
	struct task *head, *tail;
	int waiting, running, stop;
	pthread_t *threads;
	int nthreads;
	struct origin_stats st;
};

const char *origin_strerror(int code)
{
	switch (code) {
	case ORIGIN_OK: return "ok";
	case ORIGIN_E_OFF: return "no --origin-allow: nothing is fetched";
	case ORIGIN_E_URL: return "not a URL that may be fetched";
	case ORIGIN_E_NOT_ALLOWED: return "no --origin-allow entry names the URL";
	case ORIGIN_E_ADDRESS: return "the host's address is refused";
	case ORIGIN_E_RESOLVE: return "the host does not resolve";
	case ORIGIN_E_CONNECT: return "no connection to the origin";
	case ORIGIN_E_TIMEOUT: return "the origin timed out";
	case ORIGIN_E_TOO_LARGE: return "the origin's body is too large";
	case ORIGIN_E_STATUS: return "the origin answered an error";
	case ORIGIN_E_REDIRECTS: return "too many redirects";
	case ORIGIN_E_BUSY: return "every fetch thread is busy";
	case ORIGIN_E_NOMEM: return "out of memory";
	case ORIGIN_E_TRANSFER: return "the transfer failed";
	case ORIGIN_E_SHUTDOWN: return "shutting down";
	default: return "unknown error";
	}
}

/* ---- addresses ---- */

static const char *v4_refused(uint32_t a)
{
	static const struct {
		uint32_t net, mask;
		const char *why;
	} r[] = {
		{0x00000000, 0xff000000, "unspecified"}, /* 0.0.0.0/8 ("this network") */
		{0x7f000000, 0xff000000, "loopback"},
		{0x0a000000, 0xff000000, "private"},
		{0xac100000, 0xfff00000, "private"},     /* 172.16/12 */
		{0xc0a80000, 0xffff0000, "private"},     /* 192.168/16 */
		{0x64400000, 0xffc00000, "private"},     /* 100.64/10, shared address space (CGNAT) */
		{0xa9fe0000, 0xffff0000, "link-local"},  /* 169.254/16 (cloud metadata services) */
		{0xc0000000, 0xffffff00, "reserved"},    /* 192.0.0/24, IETF protocol assignments */
		{0xc0000200, 0xffffff00, "reserved"},    /* 192.0.2/24, documentation */
		{0xc6120000, 0xfffe0000, "reserved"},    /* 198.18/15, benchmarking */
		{0xc6336400, 0xffffff00, "reserved"},    /* 198.51.100/24, documentation */
		{0xcb007100, 0xffffff00, "reserved"},    /* 203.0.113/24, documentation */
		{0xe0000000, 0xf0000000, "multicast"},
		{0xf0000000, 0xf0000000, "reserved"},    /* 240/4 and the broadcast address */
	};
	for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
		if ((a & r[i].mask) == r[i].net)
			return r[i].why;
	return NULL;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

const char *origin_address_refused(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return v4_refused(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family != AF_INET6)
		return "reserved";
	const unsigned char *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	static const unsigned char zero[16];
	if (!memcmp(b, zero, 16))
		return "unspecified";
	if (!memcmp(b, zero, 15) && b[15] == 1)
		return "loopback";
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (!memcmp(b, mapped, 12)) /* v4-mapped: the IPv4 address itself */
		return v4_refused(be32(b + 12));
	if (!memcmp(b, zero, 12)) /* v4-compatible (deprecated): never public */
		return v4_refused(be32(b + 12)) ? v4_refused(be32(b + 12)) : "reserved";
	static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
	if (!memcmp(b, nat64, 12)) /* 64:ff9b::/96 carries an IPv4 address */
		return v4_refused(be32(b + 12));
	if (b[0] == 0x20 && b[1] == 0x02) /* 6to4: 2002:AABB:CCDD::/48 */
		return v4_refused(be32(b + 2));
	if ((b[0] & 0xfe) == 0xfc)
		return "private";    /* fc00::/7, unique local */
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return "link-local"; /* fe80::/10 */
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		return "private";    /* fec0::/10, the old site-local */
	if (b[0] == 0xff)
		return "multicast";
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
		return "reserved";   /* 2001:db8::/32, documentation */
	if (b[0] == 0x01 && !memcmp(b + 1, zero, 7))
		return "reserved";   /* 100::/64, discard */
	return NULL;
}

/* ---- URLs ---- */

/* 1 when every dot-separated label of host is a number (decimal, 0-octal, 0x-hex): a host the
 * C library's inet_aton would read as an IPv4 address. */
static int numeric_host(const char *h, size_t n)
{
	size_t i = 0;
	if (!n)
		return 0;
	while (i <= n) {
		size_t j = i;
		while (j < n && h[j] != '.')
			j++;
		if (j == i)
			return 0;
		if (j - i >= 2 && h[i] == '0' && (h[i + 1] == 'x' || h[i + 1] == 'X')) {
			for (size_t k = i + 2; k < j; k++)
				if (!isxdigit((unsigned char)h[k]))
					return 0;
		} else {
			for (size_t k = i; k < j; k++)
				if (!isdigit((unsigned char)h[k]))
					return 0;
		}
		i = j + 1;
	}
	return 1;
}

/* 1 when the numeric host is four decimal labels 0-255 without leading zeros. */
static int dotted_decimal(const char *h, size_t n)
{
	int labels = 0;
	size_t i = 0;
	while (i <= n) {
		size_t j = i;
		while (j < n && h[j] != '.')
			j++;
		if (j == i || j - i > 3 || (j - i > 1 && h[i] == '0'))
			return 0;
		for (size_t k = i; k < j; k++)
			if (!isdigit((unsigned char)h[k]))
				return 0;
		if (atoi(h + i) > 255)
			return 0;
		labels++;
		i = j + 1;
	}
	return labels == 4;
}

/* The parts of a URL as libcurl reads it, after this module's own checks of the text. */
struct url_parts {
	char scheme[8];
	char host[256];
	long port;
	char path[1024];
	char url[2048]; /* libcurl's normalised URL: what is fetched */
};

static int parse_url(const char *url, struct url_parts *p, char err[ORIGIN_ERR_LEN])
{
	memset(p, 0, sizeof *p);
	const char *sep = strstr(url, "://");
	size_t sl = sep ? (size_t)(sep - url) : 0;
	if (!sep || !((sl == 4 && !strncasecmp(url, "http", 4)) ||
	              (sl == 5 && !strncasecmp(url, "https", 5)))) {
		snprintf(err, ORIGIN_ERR_LEN, "src: '%.200s' is not an http:// or https:// URL", url);
		return ORIGIN_E_URL;
	}
	/* the authority as written: what the checks below read, so that libcurl's reading (which
	 * normalises numbers and drops what it does not use) cannot differ from it unseen */
	const char *a = sep + 3;
	size_t al = strcspn(a, "/?#\\");
	if (memchr(a, '@', al)) {
		snprintf(err, ORIGIN_ERR_LEN, "src: a URL with userinfo (user@host) is refused");
		return ORIGIN_E_URL;
	}
	if (strchr(url, '#')) {
		snprintf(err, ORIGIN_ERR_LEN, "src: a URL with a fragment (#) is refused");
		return ORIGIN_E_URL;
	}
	if (a[al] == '\\' || strchr(url, '\\')) {
		snprintf(err, ORIGIN_ERR_LEN, "src: a URL with a backslash is refused");
		return ORIGIN_E_URL;
	}
	size_t hl = al;
	if (al && a[0] != '[') {
		const char *colon = memchr(a, ':', al);
		if (colon)
			hl = (size_t)(colon - a);
	}
	if (!hl) {
		snprintf(err, ORIGIN_ERR_LEN, "src: the URL has no host");
		return ORIGIN_E_URL;
	}
	size_t nl = hl && a[hl - 1] == '.' ? hl - 1 : hl;
	if (numeric_host(a, nl) && (nl != hl || !dotted_decimal(a, hl))) {
		snprintf(err, ORIGIN_ERR_LEN, "src: the host '%.*s' is a number in another form than "
		         "dotted decimal (a.b.c.d): refused", (int)(hl > 64 ? 64 : hl), a);
		return ORIGIN_E_URL;
	}
	for (const char *q = a + al; *q && *q != '?'; q++)
		if (*q == '%' && ((q[1] == '2' && (q[2] == 'e' || q[2] == 'E' || q[2] == 'f' ||
		                                   q[2] == 'F')) ||
		                  ((q[1] == '5') && (q[2] == 'c' || q[2] == 'C')))) {
			snprintf(err, ORIGIN_ERR_LEN, "src: encoded dots or slashes (%%2e, %%2f, %%5c) "
			         "in the path are refused");
			return ORIGIN_E_URL;
		}
	CURLU *u = curl_url();
	if (!u)
		return ORIGIN_E_NOMEM;
	int rc = ORIGIN_E_URL;
	char *s = NULL, *h = NULL, *port = NULL, *path = NULL, *full = NULL;
	if (curl_url_set(u, CURLUPART_URL, url, 0) ||
	    curl_url_get(u, CURLUPART_SCHEME, &s, 0) ||
	    curl_url_get(u, CURLUPART_HOST, &h, 0) ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ||
	    curl_url_get(u, CURLUPART_PATH, &path, 0) ||
	    curl_url_get(u, CURLUPART_URL, &full, 0)) {
		snprintf(err, ORIGIN_ERR_LEN, "src: '%.200s' is not a URL libcurl reads", url);
		goto out;
	}
	if (strlen(h) >= sizeof p->host || strlen(path) >= sizeof p->path ||
	    strlen(full) >= sizeof p->url) {
		snprintf(err, ORIGIN_ERR_LEN, "src: the URL is too long");
		goto out;
	}
	snprintf(p->scheme, sizeof p->scheme, "%s", s);
	for (size_t i = 0; h[i]; i++)
		p->host[i] = (char)tolower((unsigned char)h[i]);
	p->port = strtol(port, NULL, 10);
	snprintf(p->path, sizeof p->path, "%s", path);
	snprintf(p->url, sizeof p->url, "%s", full);
	rc = 0;
out:
	curl_free(s);
	curl_free(h);
	curl_free(port);
	curl_free(path);
	curl_free(full);
	curl_url_cleanup(u);
	return rc;
}

static int host_is_ip(const char *host)
{
	unsigned char buf[16];
	if (host[0] == '[') {
		char h[64];
		size_t n = strlen(host);
		if (n < 3 || n - 2 >= sizeof h || host[n - 1] != ']')
			return 0;
		memcpy(h, host + 1, n - 2);
		h[n - 2] = 0;
		char *pct = strchr(h, '%'); /* a zone id */
		if (pct)
			*pct = 0;
		return inet_pton(AF_INET6, h, buf) == 1;
	}
	return inet_pton(AF_INET, host, buf) == 1;
}

static const struct allow_entry *allow_match(const struct origin *o, const struct url_parts *p)
{
	for (int i = 0; i < o->nallow; i++) {
		const struct allow_entry *e = &o->allow[i];
		if (!strcmp(e->scheme, p->scheme) && !strcmp(e->host, p->host) && e->port == p->port &&
		    !strncmp(p->path, e->prefix, strlen(e->prefix)))
			return e;
	}
	return NULL;
}

int origin_check_url(const struct origin *o, const char *url, int *explicit_ip,
                     char err[ORIGIN_ERR_LEN])
{
	*explicit_ip = 0;
	if (!o || !o->nallow) {
		snprintf(err, ORIGIN_ERR_LEN, "src: this server fetches from no origin (start it with "
		         "--origin-allow naming the origins it may fetch from)");
		return ORIGIN_E_OFF;
	}
	struct url_parts p;
	int rc = parse_url(url, &p, err);
	if (rc)
		return rc;
	const struct allow_entry *e = allow_match(o, &p);
	if (!e) {
		snprintf(err, ORIGIN_ERR_LEN, "src: %.300s is not under any --origin-allow entry "
		         "(scheme, host, port and path prefix)", p.url);
		return ORIGIN_E_NOT_ALLOWED;
	}
	*explicit_ip = e->ip;
	return 0;
}

static int parse_allow(struct origin *o, const char *list, char err[ORIGIN_ERR_LEN])
{
	const char *s = list ? list : "";
	while (*s) {
		s += strspn(s, ", \t\n");
		size_t n = strcspn(s, ", \t\n");
		if (!n)
			break;
		char entry[1200];
		if (n >= sizeof entry) {
			snprintf(err, ORIGIN_ERR_LEN, "origin-allow: an entry is too long");
			return ORIGIN_E_URL;
		}
		memcpy(entry, s, n);
		entry[n] = 0;
		s += n;
		if (o->nallow == ORIGIN_MAX_ENTRIES) {
			snprintf(err, ORIGIN_ERR_LEN, "origin-allow: more than %d entries",
			         ORIGIN_MAX_ENTRIES);
			return ORIGIN_E_URL;
		}
		struct url_parts p;
		char perr[ORIGIN_ERR_LEN];
		if (strchr(entry, '?') || parse_url(entry, &p, perr)) {
			snprintf(err, ORIGIN_ERR_LEN, "origin-allow: '%.200s' is not scheme://host[:port]"
			         "/path-prefix (http or https, no user, query or fragment)", entry);
			return ORIGIN_E_URL;
		}
		struct allow_entry *e = &o->allow[o->nallow++];
		snprintf(e->scheme, sizeof e->scheme, "%s", p.scheme);
		snprintf(e->host, sizeof e->host, "%s", p.host);
		e->port = p.port;
		snprintf(e->prefix, sizeof e->prefix, "%s", p.path);
		e->ip = host_is_ip(p.host);
	}
	return 0;
}

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
	if (!rc && !host_is_ip(p->host)) {
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
	if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_SSL_CONNECT_ERROR ||
	    cc == CURLE_PEER_FAILED_VERIFICATION) {
		snprintf(err, ORIGIN_ERR_LEN, "src: no connection to %.300s: %.150s", p->url,
		         cerr[0] ? cerr : curl_easy_strerror(cc));
		return ORIGIN_E_CONNECT;
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
			char why[ORIGIN_ERR_LEN];
			snprintf(why, sizeof why, "%s", err);
			snprintf(err, ORIGIN_ERR_LEN, "src: %.120s redirected (hop %d) to a URL refused: "
			         "%.300s", res->url, hops, why);
		}
		if (rc)
			return rc;
		struct url_parts p;
		parse_url(cur, &p, err);
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
			return ORIGIN_E_URL;
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
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->work_cv, NULL);
	pthread_cond_init(&o->done_cv, NULL);
	int rc = parse_allow(o, opts->allow, err);
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
