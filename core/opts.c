/* Option-table parsing shared by the daemon's configuration, the CLI's flags and the request
 * parameters of the HTTP API: one parser, one set of error messages, one help format. */
#include "core/opts.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *opt_strerror(int code)
{
	switch (code) {
	case OPT_OK: return "ok";
	case OPT_E_UNKNOWN: return "unknown option";
	case OPT_E_VALUE: return "invalid value";
	case OPT_E_BOUNDS: return "value out of bounds";
	case OPT_E_MISSING: return "missing value";
	}
	return "unknown error";
}

static int name_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a == '_' ? '-' : *a, y = *b == '_' ? '-' : *b;
		if (x != y)
			return 0;
	}
	return *a == *b;
}

const struct opt_def *opts_find(const struct opt_def *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (name_eq(t[i].name, name))
			return &t[i];
	return NULL;
}

const char *opts_choice(const struct opt_def *d, int i, size_t *len)
{
	if (d->type == OPT_NAMES) {
		const char *const *names = (const char *const *)(const void *)d->choices;
		for (int k = 0; names && names[k]; k++)
			if (k == i) {
				*len = strlen(names[k]);
				return names[k];
			}
		return NULL;
	}
	if (d->type != OPT_ENUM)
		return NULL;
	const char *p = d->choices;
	for (int k = 0; p && *p; k++) {
		const char *e = strchr(p, '|');
		if (k == i) {
			*len = e ? (size_t)(e - p) : strlen(p);
			return p;
		}
		p = e ? e + 1 : NULL;
	}
	return NULL;
}

void opts_choices(const struct opt_def *d, char *buf, size_t len)
{
	size_t used = 0, l;
	const char *c;
	buf[0] = 0;
	for (int i = 0; (c = opts_choice(d, i, &l)) && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%.*s", i ? "|" : "", (int)l, c);
		if (n > 0)
			used += (size_t)n;
	}
}

/* Index of text among d's choices, or -1. */
static int choice_index(const struct opt_def *d, const char *text)
{
	size_t tl = strlen(text), l;
	const char *c;
	for (int i = 0; (c = opts_choice(d, i, &l)); i++)
		if (l == tl && strncmp(c, text, l) == 0)
			return i;
	return -1;
}

static void fmt_num(char *buf, size_t len, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%g", v);
}

static int bounds_error(const struct opt_def *d, const char *text, char err[OPT_ERR_LEN])
{
	char lo[32], hi[32];
	fmt_num(lo, sizeof lo, d->min);
	fmt_num(hi, sizeof hi, d->max);
	snprintf(err, OPT_ERR_LEN, "%s: '%s' is out of bounds [%s, %s]", d->name, text, lo, hi);
	return OPT_E_BOUNDS;
}

static size_t digits(const char *s)
{
	size_t n = 0;
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

int opts_decimal(const char *text, int integer)
{
	const char *p = text + (*text == '-' || *text == '+');
	size_t whole = digits(p), frac = 0;
	p += whole;
	if (!integer && *p == '.') {
		frac = digits(p + 1);
		p += 1 + frac;
	}
	if (!whole && !frac)
		return 0;
	if (!integer && (*p == 'e' || *p == 'E')) {
		p += 1 + (p[1] == '-' || p[1] == '+');
		size_t e = digits(p);
		if (!e)
			return 0;
		p += e;
	}
	return *p == 0;
}

int opts_set(const struct opt_def *d, void *values, const char *text, char err[OPT_ERR_LEN])
{
	char *end;
	if (!text)
		text = "";
	switch (d->type) {
	case OPT_INT: {
		errno = 0;
		long long v = strtoll(text, &end, 10);
		if (!opts_decimal(text, 1) || errno) {
			snprintf(err, OPT_ERR_LEN, "%s: '%s' is not an integer", d->name, text);
			return OPT_E_VALUE;
		}
		if ((double)v < d->min || (double)v > d->max)
			return bounds_error(d, text, err);
		OPT_INT_AT(values, d) = (int)v;
		return 0;
	}
	case OPT_DOUBLE: {
		errno = 0;
		double v = strtod(text, &end);
		if (!opts_decimal(text, 0) || errno || !isfinite(v)) {
			snprintf(err, OPT_ERR_LEN, "%s: '%s' is not a decimal number", d->name, text);
			return OPT_E_VALUE;
		}
		if (v < d->min || v > d->max)
			return bounds_error(d, text, err);
		OPT_DOUBLE_AT(values, d) = v;
		return 0;
	}
	case OPT_BOOL: {
		static const char *yes[] = {"1", "true", "yes", "on"}, *no[] = {"0", "false", "no", "off"};
		for (int i = 0; i < 4; i++) {
			if (strcasecmp(text, yes[i]) == 0) {
				OPT_INT_AT(values, d) = 1;
				return 0;
			}
			if (strcasecmp(text, no[i]) == 0) {
				OPT_INT_AT(values, d) = 0;
				return 0;
			}
		}
		snprintf(err, OPT_ERR_LEN, "%s: '%s' is not a boolean (true|false)", d->name, text);
		return OPT_E_VALUE;
	}
	case OPT_STRING: {
		size_t maxlen = d->max > 0 ? (size_t)d->max : OPT_STR_MAX - 1;
		if (maxlen > OPT_STR_MAX - 1)
			maxlen = OPT_STR_MAX - 1;
		if (strlen(text) > maxlen) {
			snprintf(err, OPT_ERR_LEN, "%s: value longer than %zu characters", d->name, maxlen);
			return OPT_E_BOUNDS;
		}
		memmove(OPT_STR_AT(values, d), text, strlen(text) + 1);
		return 0;
	}
	case OPT_ENUM:
	case OPT_NAMES: {
		int i = choice_index(d, text);
		if (i < 0) {
			char choices[160];
			opts_choices(d, choices, sizeof choices);
			snprintf(err, OPT_ERR_LEN, "%s: '%.64s' is not one of %s", d->name, text, choices);
			return OPT_E_BOUNDS;
		}
		OPT_INT_AT(values, d) = i;
		return 0;
	}
	case OPT_SIZE: {
		errno = 0;
		if (*text == '-') {
			snprintf(err, OPT_ERR_LEN, "%s: '%s' is negative", d->name, text);
			return OPT_E_VALUE;
		}
		unsigned long long v = strtoull(text, &end, 10);
		if (*text < '0' || *text > '9' || errno) {
			snprintf(err, OPT_ERR_LEN, "%s: '%s' is not a size", d->name, text);
			return OPT_E_VALUE;
		}
		unsigned long long mul = 1;
		if (*end == 'k' || *end == 'K')
			mul = 1ull << 10, end++;
		else if (*end == 'M')
			mul = 1ull << 20, end++;
		else if (*end == 'G')
			mul = 1ull << 30, end++;
		if (*end || (mul > 1 && v > ~0ull / mul)) {
			snprintf(err, OPT_ERR_LEN, "%s: '%s' is not a size (N, Nk, NM or NG)", d->name, text);
			return OPT_E_VALUE;
		}
		v *= mul;
		if ((double)v < d->min || (double)v > d->max)
			return bounds_error(d, text, err);
		OPT_SIZE_AT(values, d) = v;
		return 0;
	}
	}
	snprintf(err, OPT_ERR_LEN, "%s: bad option type", d->name);
	return OPT_E_VALUE;
}

int opts_set_named(const struct opt_def *t, size_t n, void *values, const char *name,
                   const char *text, char err[OPT_ERR_LEN])
{
	const struct opt_def *d = opts_find(t, n, name);
	if (!d) {
		snprintf(err, OPT_ERR_LEN, "unknown option '%.64s'", name);
		return OPT_E_UNKNOWN;
	}
	return opts_set(d, values, text, err);
}

int opts_defaults(const struct opt_def *t, size_t n, void *values, char err[OPT_ERR_LEN])
{
	for (size_t i = 0; i < n; i++) {
		const char *def = t[i].def;
		if (!def)
			def = t[i].type == OPT_STRING ? "" : "0";
		if (!t[i].def && (t[i].type == OPT_ENUM || t[i].type == OPT_NAMES))
			def = NULL;
		if (!def) { /* enum without default: first choice */
			OPT_INT_AT(values, &t[i]) = 0;
			continue;
		}
		int rc = opts_set(&t[i], values, def, err);
		if (rc)
			return rc;
	}
	return 0;
}

int opts_from_env(const struct opt_def *t, size_t n, void *values, char err[OPT_ERR_LEN])
{
	for (size_t i = 0; i < n; i++) {
		if (!t[i].env)
			continue;
		const char *v = getenv(t[i].env);
		if (!v)
			continue;
		int rc = opts_set(&t[i], values, v, err);
		if (rc) {
			size_t used = strlen(err);
			snprintf(err + used, OPT_ERR_LEN - used, " (from %s)", t[i].env);
			return rc;
		}
	}
	return 0;
}

int opts_from_argv(const struct opt_def *t, size_t n, void *values, int argc, char **argv,
                   int first, int *npos, char err[OPT_ERR_LEN])
{
	return opts_from_argv_other(t, n, values, argc, argv, first, npos, NULL, NULL, err);
}

int opts_from_argv_other(const struct opt_def *t, size_t n, void *values, int argc, char **argv,
                         int first, int *npos,
                         int (*other)(void *ctx, const char *name, const char *value,
                                      char err[OPT_ERR_LEN]),
                         void *ctx, char err[OPT_ERR_LEN])
{
	int pos = first;
	int only_pos = 0;
	for (int i = first; i < argc; i++) {
		char *a = argv[i];
		if (only_pos || a[0] != '-' || a[1] != '-') {
			argv[pos++] = a;
			continue;
		}
		if (a[2] == 0) {
			only_pos = 1;
			continue;
		}
		char name[128];
		const char *eq = strchr(a + 2, '=');
		size_t nl = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
		if (nl >= sizeof name) {
			snprintf(err, OPT_ERR_LEN, "unknown option '%.64s'", a);
			return OPT_E_UNKNOWN;
		}
		memcpy(name, a + 2, nl);
		name[nl] = 0;
		const struct opt_def *d = opts_find(t, n, name);
		if (!d && other) { /* the caller's own options: asked bare first (a flag takes it),
		                      then with the next argument where they need a value */
			int next = 0, rc = other(ctx, name, eq ? eq + 1 : NULL, err);
			if (rc == OPT_E_MISSING && !eq && i + 1 < argc) {
				rc = other(ctx, name, argv[i + 1], err);
				next = 1;
			}
			if (rc != OPT_E_UNKNOWN) {
				if (rc)
					return rc;
				i += next;
				continue;
			}
		}
		if (!d) {
			snprintf(err, OPT_ERR_LEN, "unknown option '--%.64s'", name);
			return OPT_E_UNKNOWN;
		}
		const char *val;
		if (eq)
			val = eq + 1;
		else if (d->type == OPT_BOOL)
			val = "1";
		else if (i + 1 < argc)
			val = argv[++i];
		else {
			snprintf(err, OPT_ERR_LEN, "--%s needs a value", d->name);
			return OPT_E_MISSING;
		}
		int rc = opts_set(d, values, val, err);
		if (rc)
			return rc;
	}
	if (npos)
		*npos = pos - first;
	return 0;
}

void opts_format(const struct opt_def *d, const void *values, char *buf, size_t len)
{
	void *v = (void *)values;
	switch (d->type) {
	case OPT_INT: snprintf(buf, len, "%d", OPT_INT_AT(v, d)); break;
	case OPT_DOUBLE: snprintf(buf, len, "%g", OPT_DOUBLE_AT(v, d)); break;
	case OPT_BOOL: snprintf(buf, len, "%s", OPT_INT_AT(v, d) ? "true" : "false"); break;
	case OPT_STRING: snprintf(buf, len, "%s", OPT_STR_AT(v, d)); break;
	case OPT_SIZE: snprintf(buf, len, "%llu", OPT_SIZE_AT(v, d)); break;
	case OPT_ENUM:
	case OPT_NAMES: {
		size_t l;
		const char *c = opts_choice(d, OPT_INT_AT(v, d), &l);
		if (c)
			snprintf(buf, len, "%.*s", (int)l, c);
		else
			snprintf(buf, len, "?");
		break;
	}
	default: snprintf(buf, len, "?");
	}
}

void opts_print_help(FILE *f, const struct opt_def *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct opt_def *d = &t[i];
		char lo[32], hi[32], kind[160];
		fmt_num(lo, sizeof lo, d->min);
		fmt_num(hi, sizeof hi, d->max);
		switch (d->type) {
		case OPT_INT: snprintf(kind, sizeof kind, "INT in [%s, %s]", lo, hi); break;
		case OPT_DOUBLE: snprintf(kind, sizeof kind, "NUM in [%s, %s]", lo, hi); break;
		case OPT_SIZE: snprintf(kind, sizeof kind, "SIZE in [%s, %s]", lo, hi); break;
		case OPT_BOOL: snprintf(kind, sizeof kind, "(flag)"); break;
		case OPT_STRING: snprintf(kind, sizeof kind, "TEXT"); break;
		case OPT_ENUM:
		case OPT_NAMES: opts_choices(d, kind, sizeof kind); break;
		}
		fprintf(f, "  --%-18s %s\n", d->name, kind);
		fprintf(f, "      %s", d->help ? d->help : "");
		if (d->def && *d->def)
			fprintf(f, " (default %s)", d->def);
		if (d->env)
			fprintf(f, " [env %s]", d->env);
		fputc('\n', f);
	}
}
