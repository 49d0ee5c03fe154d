/* libFuzzer target for a request's query string: the input is split as libmicrohttpd splits a
 * URL's arguments ('&' between pairs, the first '=' between key and value, '+' as a space,
 * lenient %XX decoding, a C string each, so %00 ends it) and each pair is applied as the daemon
 * applies it (request_set from REQUEST_SRC_QUERY, api/request.h), for the operation the
 * input's length picks, then request_finish. Whatever is accepted or refused, every code is a
 * documented one, every message is terminated, and every value stays within its row's bounds
 * and choices. */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/request.h"

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

struct qctx {
	struct request r;
	char err[REQUEST_ERR_LEN];
};

/* The daemon's query callback: request_set from the query. */
static int apply_param(const char *key, const char *value, void *ctx)
{
	struct qctx *q = ctx;
	int rc = request_set(&q->r, key, value ? value : "", REQUEST_SRC_QUERY, q->err);
	if (rc && rc != REQUEST_E_UNKNOWN && rc != REQUEST_E_OP && rc != REQUEST_E_TWICE &&
	    rc != REQUEST_E_VALUE && rc != REQUEST_E_CONFLICT)
		fail("request_set returned an undocumented code", q->err);
	if (rc && !memchr(q->err, 0, sizeof q->err))
		fail("an error message is not terminated", NULL);
	return rc;
}

static int choice_count(const struct opt_def *d)
{
	int n = 0;
	size_t l;
	while (opts_choice(d, n, &l))
		n++;
	return n;
}

/* Every row given holds a value of its type within its bounds or choices. */
static void check_params(const struct request *p)
{
	for (size_t i = 0; i < request_table_len; i++) {
		const struct opt_def *d = &request_table[i].o;
		if (request_table[i].parse || !p->src[i])
			continue; /* parsed into fields of their own (checked below), or the default */
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
		case OPT_ENUM:
		case OPT_NAMES: {
			int v = OPT_INT_AT(p, d);
			if (v < 0 || v >= choice_count(d))
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
	static const unsigned ops[] = {REQUEST_BLOOM, REQUEST_CONVOLVE, REQUEST_CONV2D,
	                               REQUEST_CONV2D_T};
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct qctx *q = calloc(1, sizeof *q);
	if (!q)
		abort();
	request_init(&q->r, ops[size % 4]);
	int rc = query_each(text, apply_param, q);
	free(text);
	check_params(&q->r);
	if (q->r.format < OUT_AUTO || q->r.format > OUT_TIFF32 || q->r.quality < 0 ||
	    q->r.quality > 100)
		fail("format or quality out of range", NULL);
	if (!memchr(q->r.kernel, 0, sizeof q->r.kernel))
		fail("kernel= is not terminated", NULL);
	const struct kernel_center *c = &q->r.p.center;
	if (c->mode == KERNEL_CENTER_UV ? !(c->x >= 0 && c->x <= 1 && c->y >= 0 && c->y <= 1) :
	    c->mode == KERNEL_CENTER_PIXEL ? !(c->x >= 0 && c->y >= 0 && isfinite(c->x) &&
	                                       isfinite(c->y)) :
	    c->mode != KERNEL_CENTER_DEFAULT)
		fail("an accepted centre is out of range", NULL);
	if (!rc) {
		rc = request_finish(&q->r, (int)(size % 3 == 0), q->err);
		if (rc && rc != REQUEST_E_CONFLICT)
			fail("request_finish returned an undocumented code", q->err);
	}
	free(q);
	return 0;
}
