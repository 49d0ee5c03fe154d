/* libFuzzer target for the origin fetcher's checks (daemon/origin.h), without a network: the
 * first line is an --origin-allow list (origin_create), the rest a src= URL (origin_check_url,
 * which connects to nothing); the input's first 16 bytes are also an IPv6 and its first 4 an
 * IPv4 address for origin_address_refused. Whatever is accepted or refused, every code is a
 * documented one and every message terminated and non-empty; a URL taken is http(s) without
 * userinfo, fragment or backslash, and its host is no number in a form other than dotted
 * decimal; a refused list makes no origin; an IPv4 address and its v4-mapped IPv6 form get the
 * same answer, and every answer is one of the documented words. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/origin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why, const char *detail)
{
	fprintf(stderr, "fuzz_origin: %s%s%s\n", why, detail ? ": " : "", detail ? detail : "");
	abort();
}

static void check_word(const char *w)
{
	static const char *const words[] = {"loopback", "private", "link-local", "multicast",
	                                    "unspecified", "reserved"};
	if (!w)
		return;
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (!strcmp(w, words[i]))
			return;
	fail("an undocumented address class", w);
}

static void addresses(const uint8_t *data, size_t size)
{
	unsigned char b[16] = {0};
	memcpy(b, data, size < 16 ? size : 16);
	struct sockaddr_in6 a6;
	memset(&a6, 0, sizeof a6);
	a6.sin6_family = AF_INET6;
	memcpy(&a6.sin6_addr, b, 16);
	check_word(origin_address_refused((struct sockaddr *)&a6));
	struct sockaddr_in a4;
	memset(&a4, 0, sizeof a4);
	a4.sin_family = AF_INET;
	memcpy(&a4.sin_addr, b, 4);
	const char *w4 = origin_address_refused((struct sockaddr *)&a4);
	check_word(w4);
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	memcpy(&a6.sin6_addr, mapped, 12);
	memcpy((unsigned char *)&a6.sin6_addr + 12, b, 4);
	const char *w6 = origin_address_refused((struct sockaddr *)&a6);
	if ((w4 == NULL) != (w6 == NULL) || (w4 && strcmp(w4, w6)))
		fail("v4 and v4-mapped v6 differ", w4 ? w4 : w6);
}

static int known(int rc)
{
	return rc == ORIGIN_OK || rc == ORIGIN_E_OFF || rc == ORIGIN_E_URL ||
	       rc == ORIGIN_E_NOT_ALLOWED || rc == ORIGIN_E_NOMEM;
}

/* 1 when the URL's host, as written, is numbers in another form than dotted decimal. */
static int odd_number_host(const char *url)
{
	const char *a = strstr(url, "://");
	if (!a)
		return 0;
	a += 3;
	size_t n = strcspn(a, "/?#\\:");
	if (!n || a[0] == '[')
		return 0;
	int digits = 0, other = 0, dots = 0, lead0 = 0;
	for (size_t i = 0; i < n; i++) {
		char c = a[i];
		if (c >= '0' && c <= '9') {
			if (c == '0' && (i == 0 || a[i - 1] == '.') && i + 1 < n && a[i + 1] != '.')
				lead0 = 1;
			digits++;
		} else if (c == '.') {
			dots++;
		} else {
			other = 1;
		}
	}
	if (other || !digits)
		return 0; /* hex forms start 0x: lead0 catches them, 'x' counts as other */
	return dots != 3 || lead0 || a[n - 1] == '.';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	addresses(data, size);
	const uint8_t *nl = memchr(data, '\n', size);
	size_t al = nl ? (size_t)(nl - data) : size;
	if (al > 511)
		return 0; /* the option's length */
	char allow[512], *url = malloc(size - al + 1);
	if (!url)
		return 0;
	memcpy(allow, data, al);
	allow[al] = 0;
	size_t ul = nl ? size - al - 1 : 0;
	memcpy(url, nl ? nl + 1 : data, ul);
	url[ul] = 0;
	struct origin_opts o = {.allow = allow, .connect_timeout = 1, .timeout = 1,
	                        .max_bytes = 1 << 20, .concurrency = 1, .queue = 0};
	struct origin *or = NULL;
	char err[ORIGIN_ERR_LEN];
	memset(err, 'x', sizeof err);
	int rc = origin_create(&o, &or, err);
	if (rc) {
		if (rc != ORIGIN_E_URL && rc != ORIGIN_E_NOMEM)
			fail("origin_create: an undocumented code", NULL);
		if (or)
			fail("a refused list made an origin", NULL);
		if (!memchr(err, 0, sizeof err) || !err[0])
			fail("origin_create: an unterminated or empty message", NULL);
		free(url);
		return 0;
	}
	memset(err, 'x', sizeof err);
	int ip = -1;
	rc = origin_check_url(or, url, &ip, err);
	if (!known(rc))
		fail("origin_check_url: an undocumented code", url);
	if (rc && (!memchr(err, 0, sizeof err) || !err[0]))
		fail("origin_check_url: an unterminated or empty message", url);
	if (!rc) {
		if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8))
			fail("a URL taken that is not http(s)", url);
		const char *auth = strstr(url, "://") + 3;
		size_t n = strcspn(auth, "/?#\\");
		if (memchr(auth, '@', n) || strchr(url, '#') || strchr(url, '\\'))
			fail("a URL taken with userinfo, a fragment or a backslash", url);
		if (odd_number_host(url))
			fail("a URL taken whose host is a number not in dotted decimal", url);
		if (ip != 0 && ip != 1)
			fail("explicit_ip not set", url);
	}
	origin_destroy(or);
	free(url);
	return 0;
}
