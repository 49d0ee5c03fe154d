/* Signed render URLs; see urlsign.h. */
#include "core/urlsign.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


const char *urlsign_strerror(int code)
{
	switch (code) {
	case URLSIGN_OK: return "ok";
	case URLSIGN_E_ARG: return "bad argument";
	case URLSIGN_E_NOMEM: return "out of memory";
	case URLSIGN_E_CRYPTO: return "HMAC-SHA256 failed";
	case URLSIGN_E_MISSING: return "no signature";
	case URLSIGN_E_BAD: return "wrong signature";
	case URLSIGN_E_KEY: return "unusable key";
	case URLSIGN_E_EXPIRED: return "expired";
	case URLSIGN_E_NO_EXP: return "no expiry";
	case URLSIGN_E_EXP: return "exp is not Unix seconds";
	}
	return "unknown error";
}

void urlsign_base64url(const unsigned char *in, size_t n, char *out)
{
	static const char a[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = a[(v >> 18) & 63];
		out[o++] = a[(v >> 12) & 63];
		if (i + 1 < n)
			out[o++] = a[(v >> 6) & 63];
		if (i + 2 < n)
			out[o++] = a[v & 63];
	}
	out[o] = 0;
}

int urlsign_hmac(const void *key, size_t key_len, const void *msg, size_t msg_len,
                 unsigned char mac[32])
{
	return gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, key_len, msg, msg_len, mac) ? URLSIGN_E_CRYPTO
	                                                                             : 0;
}

static int unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

/* Appends s percent-encoded at *o (the caller sized the buffer for 3 bytes per byte). */
static void encode(const char *s, char *buf, size_t *o)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (unreserved(*p)) {
			buf[(*o)++] = (char)*p;
		} else {
			buf[(*o)++] = '%';
			buf[(*o)++] = hex[*p >> 4];
			buf[(*o)++] = hex[*p & 15];
		}
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int urlsign_canonical(const char *path, const struct urlsign_param *p, size_t n, char **out)
{
	*out = NULL;
	if (n > URLSIGN_MAX_PARAMS)
		return URLSIGN_E_ARG;
	char *items[URLSIGN_MAX_PARAMS];
	size_t k = 0, total = strlen(path) + 2;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(p[i].name, "sig"))
			continue;
		const char *v = p[i].value ? p[i].value : "";
		size_t len = 3 * (strlen(p[i].name) + strlen(v)) + 2;
		char *it = malloc(len);
		if (!it) {
			rc = URLSIGN_E_NOMEM;
			goto out;
		}
		size_t o = 0;
		encode(p[i].name, it, &o);
		it[o++] = '=';
		encode(v, it, &o);
		it[o] = 0;
		items[k++] = it;
		total += o + 1;
	}
	qsort(items, k, sizeof *items, cmp_str);
	char *s = malloc(total);
	if (!s) {
		rc = URLSIGN_E_NOMEM;
		goto out;
	}
	size_t o = strlen(path);
	memcpy(s, path, o);
	for (size_t i = 0; i < k; i++) {
		s[o++] = i ? '&' : '?';
		size_t l = strlen(items[i]);
		memcpy(s + o, items[i], l);
		o += l;
	}
	s[o] = 0;
	*out = s;
out:
	for (size_t i = 0; i < k; i++)
		free(items[i]);
	return rc;
}

int urlsign_sign(const void *key, size_t key_len, const char *path, const struct urlsign_param *p,
                 size_t n, char sig[URLSIGN_SIG_LEN + 1])
{
	char *msg;
	int rc = urlsign_canonical(path, p, n, &msg);
	if (rc)
		return rc;
	unsigned char mac[32];
	rc = urlsign_hmac(key, key_len, msg, strlen(msg), mac);
	free(msg);
	if (!rc)
		urlsign_base64url(mac, sizeof mac, sig);
	return rc;
}

int urlsign_verify(const void *key, size_t key_len, const char *path,
                   const struct urlsign_param *p, size_t n)
{
	const char *given = NULL;
	int count = 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(p[i].name, "sig")) {
			given = p[i].value ? p[i].value : "";
			count++;
		}
	if (!count)
		return URLSIGN_E_MISSING;
	if (count > 1)
		return URLSIGN_E_BAD;
	char want[URLSIGN_SIG_LEN + 1];
	int rc = urlsign_sign(key, key_len, path, p, n, want);
	if (rc)
		return rc;
	return urlsign_equal(given, strlen(given), want, URLSIGN_SIG_LEN) ? 0 : URLSIGN_E_BAD;
}

int urlsign_check_expiry(const struct urlsign_param *p, size_t n, long long now, int require)
{
	const char *exp = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(p[i].name, "exp")) {
			if (exp)
				return URLSIGN_E_EXP;
			exp = p[i].value ? p[i].value : "";
		}
	if (!exp)
		return require ? URLSIGN_E_NO_EXP : 0;
	size_t len = strlen(exp);
	if (!len || len > 18 || strspn(exp, "0123456789") != len)
		return URLSIGN_E_EXP;
	return strtoll(exp, NULL, 10) + URLSIGN_EXP_SKEW >= now ? 0 : URLSIGN_E_EXPIRED;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* s[0..len) decoded as libmicrohttpd decodes a query's names and values ('+' a space, %XX a
 * byte, a '%' not followed by two hex digits kept) into a malloc'd string; NULL when out of
 * memory. plus: whether '+' means a space (query) or itself (path). */
static char *decode(const char *s, size_t len, int plus)
{
	char *d = malloc(len + 1);
	if (!d)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '+' && plus) {
			d[o++] = ' ';
		} else if (s[i] == '%' && i + 2 < len && hexval(s[i + 1]) >= 0 &&
		           hexval(s[i + 2]) >= 0) {
			d[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else {
			d[o++] = s[i];
		}
	}
	d[o] = 0;
	return d;
}

int urlsign_sign_url(const void *key, size_t key_len, const char *url, long long exp, char **out,
                     char err[URLSIGN_ERR_LEN])
{
	*out = NULL;
	const char *path = url;
	const char *scheme = strstr(url, "://");
	if (scheme && scheme < url + strcspn(url, "/?#"))
		path = strchr(scheme + 3, '/');
	if (!path || *path != '/') {
		snprintf(err, URLSIGN_ERR_LEN, "'%.100s' has no path (it should look like "
		         "/v1/bloom/NAME?threshold=0.5, optionally after http://HOST)", url);
		return URLSIGN_E_ARG;
	}
	if (strchr(url, '#')) {
		snprintf(err, URLSIGN_ERR_LEN, "the URL has a fragment ('#'): a server never sees it, "
		         "so it cannot be signed");
		return URLSIGN_E_ARG;
	}
	size_t plen = strcspn(path, "?");
	const char *query = path[plen] == '?' ? path + plen + 1 : NULL;
	struct urlsign_param params[URLSIGN_MAX_PARAMS + 1];
	char *owned[2 * URLSIGN_MAX_PARAMS + 1];
	size_t n = 0, no = 0;
	int rc = 0;
	char *dpath = decode(path, plen, 0);
	if (!dpath)
		return URLSIGN_E_NOMEM;
	owned[no++] = dpath;
	for (const char *q = query; q && *q;) {
		size_t l = strcspn(q, "&");
		if (l) {
			if (n == URLSIGN_MAX_PARAMS) {
				snprintf(err, URLSIGN_ERR_LEN, "more than %d query parameters",
				         URLSIGN_MAX_PARAMS);
				rc = URLSIGN_E_ARG;
				goto out;
			}
			const char *eq = memchr(q, '=', l);
			char *name = decode(q, eq ? (size_t)(eq - q) : l, 1);
			char *value = eq ? decode(eq + 1, l - (size_t)(eq + 1 - q), 1) : NULL;
			if (name)
				owned[no++] = name;
			if (value)
				owned[no++] = value;
			if (!name || (eq && !value)) {
				rc = URLSIGN_E_NOMEM;
				goto out;
			}
			if (!strcmp(name, "sig") || (exp > 0 && !strcmp(name, "exp"))) {
				snprintf(err, URLSIGN_ERR_LEN, "the URL has a%s parameter already",
				         name[0] == 's' ? " sig" : "n exp");
				rc = URLSIGN_E_ARG;
				goto out;
			}
			params[n++] = (struct urlsign_param){name, value};
		}
		q += l;
		if (*q == '&')
			q++;
	}
	char exp_text[24];
	if (exp > 0) {
		if (n == URLSIGN_MAX_PARAMS) {
			snprintf(err, URLSIGN_ERR_LEN, "more than %d query parameters",
			         URLSIGN_MAX_PARAMS);
			rc = URLSIGN_E_ARG;
			goto out;
		}
		snprintf(exp_text, sizeof exp_text, "%lld", exp);
		params[n++] = (struct urlsign_param){"exp", exp_text};
	}
	char sig[URLSIGN_SIG_LEN + 1], *canonical;
	if ((rc = urlsign_sign(key, key_len, dpath, params, n, sig)) ||
	    (rc = urlsign_canonical(dpath, params, n, &canonical))) {
		snprintf(err, URLSIGN_ERR_LEN, "%s", urlsign_strerror(rc));
		goto out;
	}
	size_t len = (size_t)(path - url) + strlen(canonical) + URLSIGN_SIG_LEN + 6;
	char *s = malloc(len);
	if (!s) {
		free(canonical);
		rc = URLSIGN_E_NOMEM;
		goto out;
	}
	snprintf(s, len, "%.*s%s%csig=%s", (int)(path - url), url, canonical,
	         strchr(canonical, '?') ? '&' : '?', sig);
	free(canonical);
	*out = s;
out:
	for (size_t i = 0; i < no; i++)
		free(owned[i]);
	return rc;
}

int urlsign_read_key(const char *path, unsigned char **key, size_t *len, char err[URLSIGN_ERR_LEN])
{
	*key = NULL;
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, URLSIGN_ERR_LEN, "cannot open the URL signing key file '%.180s'", path);
		return URLSIGN_E_KEY;
	}
	unsigned char buf[4097];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	if (n == sizeof buf) {
		snprintf(err, URLSIGN_ERR_LEN, "the URL signing key file '%.180s' is larger than 4 KiB",
		         path);
		return URLSIGN_E_KEY;
	}
	while (n && strchr(" \t\r\n", buf[n - 1]))
		n--;
	if (n < URLSIGN_KEY_MIN) {
		snprintf(err, URLSIGN_ERR_LEN, "the URL signing key in '%.100s' has %zu bytes; at least "
		         "%d are needed (make one with: openssl rand -hex 32)", path, n, URLSIGN_KEY_MIN);
		return URLSIGN_E_KEY;
	}
	unsigned char *k = malloc(n);
	if (!k) {
		snprintf(err, URLSIGN_ERR_LEN, "out of memory");
		return URLSIGN_E_KEY;
	}
	memcpy(k, buf, n);
	*key = k;
	*len = n;
	return 0;
}

int urlsign_equal(const char *given, size_t given_len, const char *expected, size_t expected_len)
{
	/* Walk the expected secret once; index the given one modulo its length so the work and the
	 * memory touched do not depend on the given one's content. */
	volatile unsigned char diff = (unsigned char)(given_len != expected_len);
	for (size_t i = 0; i < expected_len; i++) {
		unsigned char g = given_len ? (unsigned char)given[i % given_len] : 0;
		diff |= g ^ (unsigned char)expected[i];
	}
	return diff == 0 && expected_len > 0;
}
