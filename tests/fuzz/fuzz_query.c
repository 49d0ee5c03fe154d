/* libFuzzer target for a request's query string: the input is split as libmicrohttpd splits a
 * URL's arguments ('&' between pairs, the first '=' between key and value, '+' as a space,
 * lenient %XX decoding, a C string each, so %00 ends it) and each pair is applied as the daemon
 * applies it (format=, quality=, else opts_set_named on bloom_params_table), then
 * bloom_params_center. Whatever is accepted or refused, every value must stay within its row's
 * bounds and choices. */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/apiutil.h"
#include "protocol/bloom_params.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why, const char *detail)
{
	fprintf(stderr, "fuzz_query: %s%s%s\n", why, detail ? ": " : "", detail ? detail : "");
	abort();
}

/* '+' to ' ', then %XX with two hex digits to its byte; anything else kept (as MHD_unescape_plus
 * and MHD_http_unescape do). In place; the result is a C string. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++, w++) {
		if (*r == '+') {
			*w = ' ';
		} else if (*r == '%' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2])) {
			char hex[3] = {r[1], r[2], 0};
			*w = (char)strtol(hex, NULL, 16);
			r += 2;
		} else {
			*w = *r;
		}
	}
	*w = 0;
}

/* Calls f(key, value, ctx) for each pair of q (modified); value NULL for a key without '='.
 * Stops at the first nonzero return and returns it. */
static int query_each(char *q, int (*f)(const char *, const char *, void *), void *ctx)
{
	while (q && *q) {
		char *amp = strchr(q, '&');
		if (amp)
			*amp++ = 0;
		char *eq = strchr(q, '=');
		if (eq)
			*eq++ = 0;
		unescape(q);
		if (eq)
			unescape(eq);
		int rc = f(q, eq, ctx);
		if (rc)
			return rc;
		q = amp;
	}
	return 0;
}

struct request {
	struct bloom_params p;
	int out, quality;
	char err[OPT_ERR_LEN];
};

/* The daemon's apply_param (server.c): format and quality, then the parameter table. */
static int apply_param(const char *key, const char *value, void *ctx)
{
	struct request *r = ctx;
	if (!value)
		value = "";
	if (!strcmp(key, "format")) {
		int f = api_format_parse(value);
		if (f < 0)
			return -1;
		r->out = f;
		return 0;
	}
	if (!strcmp(key, "quality")) {
		char *e;
		long q = strtol(value, &e, 10);
		if (e == value || *e || q < 1 || q > 100)
			return -1;
		r->quality = (int)q;
		return 0;
	}
	int rc = opts_set_named(bloom_params_table, bloom_params_table_len, &r->p, key, value, r->err);
	if (rc && rc != OPT_E_UNKNOWN && rc != OPT_E_VALUE && rc != OPT_E_BOUNDS)
		fail("opts_set_named returned an undocumented code", r->err);
	if (rc && !memchr(r->err, 0, sizeof r->err))
		fail("an error message is not terminated", NULL);
	return rc;
}

static int choice_count(const char *choices)
{
	int n = 1;
	for (const char *c = choices; *c; c++)
		n += *c == '|';
	return n;
}

/* Every row of the table holds a value of its type within its bounds or choices. */
static void check_params(const struct bloom_params *p)
{
	for (size_t i = 0; i < bloom_params_table_len; i++) {
		const struct opt_def *d = &bloom_params_table[i];
		switch (d->type) {
		case OPT_DOUBLE: {
			double v = OPT_DOUBLE_AT(p, d);
			if (!isfinite(v) || v < d->min || v > d->max)
				fail("a number is out of its bounds", d->name);
			break;
		}
		case OPT_INT: {
			int v = OPT_INT_AT(p, d);
			if (v < d->min || v > d->max)
				fail("an integer is out of its bounds", d->name);
			break;
		}
		case OPT_ENUM: {
			int v = OPT_INT_AT(p, d);
			if (v < 0 || v >= choice_count(d->choices))
				fail("a choice is out of range", d->name);
			break;
		}
		case OPT_STRING: {
			const char *s = OPT_STR_AT(p, d);
			const char *z = memchr(s, 0, OPT_STR_MAX);
			size_t maxlen = d->max > 0 ? (size_t)d->max : OPT_STR_MAX - 1;
			if (!z || (size_t)(z - s) > maxlen)
				fail("a string is unterminated or too long", d->name);
			break;
		}
		default:
			break;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *q = malloc(size + 1);
	if (!q)
		return 0;
	memcpy(q, data, size);
	q[size] = 0;
	struct request r;
	memset(&r, 0, sizeof r);
	if (bloom_params_defaults(&r.p, size % 2 ? BLOOM_OP_CONVOLVE : BLOOM_OP_BLOOM))
		fail("the table's defaults do not parse", NULL);
	r.quality = 90;
	int rc = query_each(q, apply_param, &r);
	free(q);
	check_params(&r.p);
	if (r.out < API_OUT_AUTO || r.out > API_OUT_PFM || r.quality < 1 || r.quality > 100)
		fail("format or quality out of range", NULL);
	if (rc)
		return 0;
	int mode;
	double x, y;
	char err[OPT_ERR_LEN];
	if (bloom_params_center(&r.p, &mode, &x, &y, err)) {
		if (mode != BLOOM_CENTER_DEFAULT && mode != BLOOM_CENTER_PIXEL && mode != BLOOM_CENTER_UV)
			fail("a refused centre left a bad mode", NULL);
		return 0;
	}
	if (mode == BLOOM_CENTER_DEFAULT ? r.p.kernel_center[0] || x || y :
	    mode == BLOOM_CENTER_UV ? !(x >= 0 && x <= 1 && y >= 0 && y <= 1) :
	    mode == BLOOM_CENTER_PIXEL ? !(x >= 0 && y >= 0 && isfinite(x) && isfinite(y)) : 1)
		fail("an accepted centre is out of range", r.p.kernel_center);
	return 0;
}
