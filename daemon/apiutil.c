/* The HTTP API's pure helpers; see apiutil.h. */
#include "daemon/apiutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int api_parse_gpus(const char *s, int device_count, int *list, int max, int *n,
                   char err[API_ERR_LEN])
{
	*n = 0;
	if (!strcmp(s, "all")) {
		int c = device_count > 0 ? device_count : 1;
		if (c > max)
			c = max;
		for (int i = 0; i < c; i++)
			list[i] = i;
		*n = c;
		return 0;
	}
	const char *p = s;
	for (;;) {
		char *e;
		if (!isdigit((unsigned char)*p))
			goto bad;
		long v = strtol(p, &e, 10);
		if (v > 63)
			goto bad;
		if (*n >= max) {
			snprintf(err, API_ERR_LEN, "gpus: more than %d devices", max);
			*n = 0;
			return -1;
		}
		list[(*n)++] = (int)v;
		if (!*e)
			return 0;
		if (*e != ',')
			goto bad;
		p = e + 1;
	}
bad:
	snprintf(err, API_ERR_LEN, "gpus: '%.64s' is not 'all' or a list of device indices 0-63 like 0,1",
	         s);
	*n = 0;
	return -1;
}

int api_parse_sizes(const char *s, int max_side, int (*wh)[2], int max, int *n,
                    char err[API_ERR_LEN])
{
	*n = 0;
	const char *p = s;
	while (*p) {
		char *e;
		if (!isdigit((unsigned char)*p))
			goto bad;
		long w = strtol(p, &e, 10);
		if (*e != 'x' && *e != 'X')
			goto bad;
		p = e + 1;
		if (!isdigit((unsigned char)*p))
			goto bad;
		long h = strtol(p, &e, 10);
		if (w < 1 || h < 1 || w > max_side || h > max_side) {
			snprintf(err, API_ERR_LEN, "%ldx%ld is outside 1..%d per side", w, h,
			         max_side);
			return -1;
		}
		if (*n >= max) {
			snprintf(err, API_ERR_LEN, "more than %d sizes", max);
			return -1;
		}
		wh[*n][0] = (int)w;
		wh[*n][1] = (int)h;
		(*n)++;
		if (*e == ',' && e[1])
			e++;
		else if (*e)
			goto bad;
		p = e;
	}
	return 0;
bad:
	snprintf(err, API_ERR_LEN, "'%.64s' is not WxH[,WxH...]", s);
	*n = 0;
	return -1;
}

int api_origin_allowed(const char *list, const char *origin)
{
	if (!origin || !*list)
		return 0;
	size_t ol = strlen(origin);
	const char *p = list;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		const char *e = p;
		while (*e && *e != ',' && *e != ' ')
			e++;
		size_t l = (size_t)(e - p);
		if ((l == 1 && *p == '*') || (l == ol && l && !strncmp(p, origin, l)))
			return 1;
		p = e;
	}
	return 0;
}

int api_valid_name(const char *s)
{
	size_t l = strlen(s);
	if (l < 1 || l > 64 || s[0] == '.')
		return 0;
	for (size_t i = 0; i < l; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
			return 0;
	return 1;
}

/* The length of the well-formed UTF-8 sequence at p (1-4), or 0 when it is not one. */
static int utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!n)
		return 0;
	unsigned lo = 0x80, hi = 0xbf; /* the second byte's range (RFC 3629's table) */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void api_utf8_clean(char *s)
{
	unsigned char *p = (unsigned char *)s;
	while (*p) {
		int n = utf8_len(p);
		if (n) {
			p += n;
		} else {
			*p++ = '?';
		}
	}
}

int api_default_quality(const struct config *c, int fmt)
{
	return fmt == IMAGE_FORMAT_WEBP ? c->webp_quality
	       : fmt == IMAGE_FORMAT_AVIF ? c->avif_quality : c->jpeg_quality;
}
