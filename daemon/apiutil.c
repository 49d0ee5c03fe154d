/* The HTTP API's pure helpers; see apiutil.h. */
#include "daemon/apiutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int api_format_parse(const char *s)
{
	static const struct {
		const char *name;
		int out;
	} names[] = {{"jpeg", API_OUT_JPEG}, {"jpg", API_OUT_JPEG}, {"png", API_OUT_PNG},
	             {"png16", API_OUT_PNG16}, {"exr", API_OUT_EXR}, {"hdr", API_OUT_HDR},
	             {"pfm", API_OUT_PFM}};
	if (!s)
		return -1;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].out;
	return -1;
}

static const struct {
	const char *type;
	int out;
} media[] = {
	{"image/jpeg", API_OUT_JPEG},         {"image/jpg", API_OUT_JPEG},
	{"image/png", API_OUT_PNG},           {"image/x-exr", API_OUT_EXR},
	{"image/exr", API_OUT_EXR},           {"image/aces", API_OUT_EXR},
	{"image/vnd.radiance", API_OUT_HDR},  {"image/x-hdr", API_OUT_HDR},
	{"image/x-portable-floatmap", API_OUT_PFM}, {"image/x-pfm", API_OUT_PFM},
};

int api_format_from_accept(const char *accept, int *png_from_accept)
{
	*png_from_accept = 0;
	if (!accept)
		return API_OUT_AUTO;
	int best = API_OUT_AUTO;
	double best_q = 0;
	const char *p = accept;
	while (*p) {
		size_t seg = strcspn(p, ","); /* one media range with its parameters: p[0..seg) */
		size_t lead = strspn(p, " \t");
		if (lead > seg)
			lead = seg;
		const char *t = p + lead;
		size_t rest = seg - lead;
		size_t tl = strcspn(t, ";,"); /* the type, up to its parameters */
		if (tl > rest)
			tl = rest;
		while (tl && (t[tl - 1] == ' ' || t[tl - 1] == '\t'))
			tl--;
		double q = 1;
		for (size_t i = tl; i + 2 < rest; i++)
			if (t[i] == ';') {
				size_t k = i + 1;
				while (k < rest && (t[k] == ' ' || t[k] == '\t'))
					k++;
				if (k + 1 < rest && (t[k] == 'q' || t[k] == 'Q') && t[k + 1] == '=')
					q = strtod(t + k + 2, NULL);
			}
		for (size_t i = 0; i < sizeof media / sizeof media[0]; i++)
			if (strlen(media[i].type) == tl && !strncasecmp(t, media[i].type, tl) && q > best_q) {
				best = media[i].out;
				best_q = q;
				*png_from_accept = best == API_OUT_PNG;
			}
		/* a wildcard at a higher q than any specific type means "anything": follow the input */
		if (((tl == 3 && !strncmp(t, "*/*", 3)) || (tl == 7 && !strncasecmp(t, "image/*", 7))) &&
		    q > best_q) {
			best = API_OUT_AUTO;
			best_q = q;
			*png_from_accept = 0;
		}
		p += seg;
		if (*p == ',')
			p++;
	}
	return best;
}

void api_format_resolve(int out, int png_from_accept, const struct image_info *in,
                        enum image_format *fmt, int *bits)
{
	*bits = 0;
	switch (out) {
	case API_OUT_JPEG: *fmt = IMAGE_FORMAT_JPEG; return;
	case API_OUT_PNG:
		*fmt = IMAGE_FORMAT_PNG;
		*bits = png_from_accept && in->format == IMAGE_FORMAT_PNG && in->bits == 16 ? 16 : 8;
		return;
	case API_OUT_PNG16: *fmt = IMAGE_FORMAT_PNG; *bits = 16; return;
	case API_OUT_EXR: *fmt = IMAGE_FORMAT_EXR; return;
	case API_OUT_HDR: *fmt = IMAGE_FORMAT_HDR; return;
	case API_OUT_PFM: *fmt = IMAGE_FORMAT_PFM; return;
	}
	if (in->format == IMAGE_FORMAT_JPEG) {
		*fmt = IMAGE_FORMAT_JPEG;
	} else if (in->format == IMAGE_FORMAT_PNG) {
		*fmt = IMAGE_FORMAT_PNG;
		*bits = in->bits == 16 ? 16 : 8;
	} else {
		*fmt = IMAGE_FORMAT_EXR;
	}
}

const char *api_content_type(enum image_format f)
{
	switch (f) {
	case IMAGE_FORMAT_JPEG: return "image/jpeg";
	case IMAGE_FORMAT_PNG: return "image/png";
	case IMAGE_FORMAT_EXR: return "image/x-exr";
	case IMAGE_FORMAT_HDR: return "image/vnd.radiance";
	case IMAGE_FORMAT_PFM: return "image/x-portable-floatmap";
	default: return "application/octet-stream";
	}
}

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
		for (int i = 0; i < *n; i++)
			if (list[i] == v) {
				snprintf(err, API_ERR_LEN, "gpus: device %ld listed twice", v);
				*n = 0;
				return -1;
			}
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
			snprintf(err, API_ERR_LEN, "warm-sizes: %ldx%ld is outside 1..%d per side", w, h,
			         max_side);
			return -1;
		}
		if (*n >= max) {
			snprintf(err, API_ERR_LEN, "warm-sizes: more than %d sizes", max);
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
	snprintf(err, API_ERR_LEN, "warm-sizes: '%.64s' is not WxH[,WxH...]", s);
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

int api_key_equal(const char *given, size_t given_len, const char *expected, size_t expected_len)
{
	/* Walk the expected key once; index the given one modulo its length so the work and the
	 * memory touched do not depend on the given key's content. */
	volatile unsigned char diff = (unsigned char)(given_len != expected_len);
	for (size_t i = 0; i < expected_len; i++) {
		unsigned char g = given_len ? (unsigned char)given[i % given_len] : 0;
		diff |= g ^ (unsigned char)expected[i];
	}
	return diff == 0 && expected_len > 0;
}
