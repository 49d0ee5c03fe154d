/* libFuzzer target for the HTTP API's header and list parsers (daemon/apiutil.h): the input's
 * first line and the rest are two strings a and b. a goes through every parser (Accept and format= from api/format.h,
 * names, --warm-sizes, --gpus); (a, b) and (b, a) through the CORS origin match and the key
 * comparison. Results are checked against their contracts and, for names, origins and keys,
 * against plain reference versions written here. */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/apiutil.h"
#include "api/format.h"
#include "core/urlsign.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why, const char *s)
{
	fprintf(stderr, "fuzz_apiutil: %s: '%.200s'\n", why, s);
	abort();
}

/* 1..64 of [A-Za-z0-9._-], not starting with '.' */
static int ref_valid_name(const char *s)
{
	size_t l = strlen(s);
	if (l < 1 || l > 64 || s[0] == '.')
		return 0;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == l;
}

/* origin equals one of list's entries (split at commas and spaces), or an entry is "*" */
static int ref_origin_allowed(const char *list, const char *origin)
{
	char *copy = strdup(list), *save = NULL;
	int found = 0;
	if (!copy)
		abort();
	for (char *t = strtok_r(copy, ", ", &save); t && !found; t = strtok_r(NULL, ", ", &save))
		found = !strcmp(t, "*") || (*origin && !strcmp(t, origin));
	free(copy);
	return found;
}

static void check_accept(const char *a)
{
	struct format_accept acc;
	int rc = format_from_accept(a, (int)(strlen(a) % 2), &acc);
	if (rc != 0 && rc != FORMAT_E_NONE)
		fail("format_from_accept returned an undocumented code", a);
	for (int i = 0; i < IMAGE_FORMAT_COUNT; i++)
		if (acc.q[i] > 1000 || (!acc.given && acc.q[i]))
			fail("format_from_accept gave a q outside 0-1000, or one without a header", a);
	if (rc == FORMAT_E_NONE) {
		if (!acc.given)
			fail("format_from_accept refused without a header", a);
		for (int i = 0; i < IMAGE_FORMAT_COUNT; i++)
			if (acc.q[i])
				fail("format_from_accept refused a header that accepts a format", a);
	}
	int f = format_parse(a);
	if (f != -1 && (f <= OUT_AUTO || f > OUT_TIFF32))
		fail("format_parse gave an impossible answer", a);
}

static void check_lists(const char *a)
{
	int wh[16][2], n = -1;
	char err[API_ERR_LEN];
	if (!api_parse_sizes(a, 4096, wh, 16, &n, err)) {
		if (n < 0 || n > 16 || (!*a) != (n == 0))
			fail("api_parse_sizes: count out of range", a);
		for (int i = 0; i < n; i++)
			if (wh[i][0] < 1 || wh[i][0] > 4096 || wh[i][1] < 1 || wh[i][1] > 4096)
				fail("api_parse_sizes: a side out of 1..4096", a);
	} else if (!memchr(err, 0, sizeof err)) {
		fail("api_parse_sizes: message not terminated", a);
	}
	int list[8];
	n = -1;
	if (!api_parse_gpus(a, 3, list, 8, &n, err)) {
		if (n < 1 || n > 8)
			fail("api_parse_gpus: count out of range", a);
		for (int i = 0; i < n; i++) {
			if (list[i] < 0 || list[i] > 63)
				fail("api_parse_gpus: an index out of 0..63", a);
		}
	} else if (n != 0 || !memchr(err, 0, sizeof err)) {
		fail("api_parse_gpus: a refusal left a count or an unterminated message", a);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	char *a = buf, *b = strchr(buf, '\n');
	if (b)
		*b++ = 0;
	else
		b = buf + strlen(buf); /* "" */
	check_accept(a);
	check_lists(a);
	if (api_valid_name(a) != ref_valid_name(a))
		fail("api_valid_name disagrees with the reference", a);
	if (api_origin_allowed(a, b) != ref_origin_allowed(a, b))
		fail("api_origin_allowed disagrees with the reference", a);
	if (api_origin_allowed(b, a) != ref_origin_allowed(b, a))
		fail("api_origin_allowed disagrees with the reference", b);
	if (api_origin_allowed(a, NULL))
		fail("api_origin_allowed allows a missing origin", a);
	size_t al = strlen(a), bl = strlen(b);
	if (urlsign_equal(a, al, b, bl) != (al == bl && bl > 0 && !memcmp(a, b, al)))
		fail("urlsign_equal disagrees with memcmp", a);
	free(buf);
	return 0;
}
