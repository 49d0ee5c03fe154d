/* An origin URL's checks as written, the allow list, and the address classes refused; see
 * origin.h and origin_impl.h. */
#include "daemon/origin_impl.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
	case ORIGIN_E_TLS: return "the origin's certificate was not accepted";
	case ORIGIN_E_LOCATION: return "the origin redirected to something not a URL";
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


int origin_parse_url(const char *url, struct url_parts *p, char err[ORIGIN_ERR_LEN])
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

int origin_host_is_ip(const char *host)
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

const struct allow_entry *origin_allow_match(const struct origin *o, const struct url_parts *p)
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
	int rc = origin_parse_url(url, &p, err);
	if (rc)
		return rc;
	const struct allow_entry *e = origin_allow_match(o, &p);
	if (!e) {
		snprintf(err, ORIGIN_ERR_LEN, "src: %.300s is not under any --origin-allow entry "
		         "(scheme, host, port and path prefix)", p.url);
		return ORIGIN_E_NOT_ALLOWED;
	}
	*explicit_ip = e->ip;
	return 0;
}

int origin_parse_allow(struct origin *o, const char *list, char err[ORIGIN_ERR_LEN])
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
		if (strchr(entry, '?') || origin_parse_url(entry, &p, perr)) {
			snprintf(err, ORIGIN_ERR_LEN, "origin-allow: '%.200s' is not scheme://host[:port]"
			         "/path-prefix (http or https, no user, query or fragment)", entry);
			return ORIGIN_E_URL;
		}
		struct allow_entry *e = &o->allow[o->nallow++];
		snprintf(e->scheme, sizeof e->scheme, "%s", p.scheme);
		snprintf(e->host, sizeof e->host, "%s", p.host);
		e->port = p.port;
		snprintf(e->prefix, sizeof e->prefix, "%s", p.path);
		e->ip = origin_host_is_ip(p.host);
	}
	return 0;
}
