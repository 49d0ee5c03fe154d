/* Frame sequence patterns and frame lists; see sequence.h. */
#include "cli/sequence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *seq_strerror(int code)
{
	switch (code) {
	case SEQ_OK: return "ok";
	case SEQ_E_NONE: return "no frame field in the name";
	case SEQ_E_SYNTAX: return "malformed pattern or frame list";
	case SEQ_E_TOO_MANY: return "too many frames";
	case SEQ_E_NOMEM: return "out of memory";
	case SEQ_E_SPACE: return "name too long";
	}
	return "unknown error";
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int seq_pattern_parse(const char *name, struct seq_pattern *p, char err[SEQ_ERR_LEN])
{
	memset(p, 0, sizeof *p);
	p->text = name;
	const char *hash = strrchr(name, '#');
	if (hash) {
		const char *start = hash;
		while (start > name && start[-1] == '#')
			start--;
		p->prefix_len = (size_t)(start - name);
		p->field_len = (size_t)(hash - start) + 1;
		p->width = (int)p->field_len;
		return 0;
	}
	const char *field = NULL;
	for (const char *c = strchr(name, '%'); c; c = strchr(c + 1, '%')) {
		const char *d = c + 1;
		int width = 1;
		if (*d == '0' && is_digit(d[1]) && d[1] != '0') {
			width = d[1] - '0';
			d += 2;
		}
		if (*d != 'd' || field) {
			snprintf(err, SEQ_ERR_LEN, "%.200s: '%%' at byte %zu is not the one frame field "
			         "(%%d or %%0Nd)", name, (size_t)(c - name));
			return SEQ_E_SYNTAX;
		}
		field = c;
		p->prefix_len = (size_t)(c - name);
		p->field_len = (size_t)(d - c) + 1;
		p->width = width;
		c = d;
	}
	return field ? 0 : SEQ_E_NONE;
}

int seq_format(const struct seq_pattern *p, long frame, char *out, size_t len)
{
	if (frame < 0 || frame > SEQ_MAX_FRAME)
		return SEQ_E_SYNTAX;
	const char *suffix = p->text + p->prefix_len + p->field_len;
	int w = snprintf(out, len, "%.*s%0*ld%s", (int)p->prefix_len, p->text, p->width, frame,
	                 suffix);
	return w < 0 || (size_t)w >= len ? SEQ_E_SPACE : 0;
}

int seq_match(const struct seq_pattern *p, const char *name, long *frame)
{
	const char *suffix = p->text + p->prefix_len + p->field_len;
	size_t nlen = strlen(name), slen = strlen(suffix);
	if (nlen < p->prefix_len + slen || strncmp(name, p->text, p->prefix_len) ||
	    strcmp(name + nlen - slen, suffix))
		return 0;
	const char *d = name + p->prefix_len;
	size_t digits = nlen - slen - p->prefix_len;
	if (digits == 0 || digits > 18)
		return 0;
	for (size_t i = 0; i < digits; i++)
		if (!is_digit(d[i]))
			return 0;
	/* exactly the width, or wider without a leading zero */
	if (digits < (size_t)p->width || (digits > (size_t)p->width && d[0] == '0'))
		return 0;
	long long v = 0;
	for (size_t i = 0; i < digits; i++)
		v = v * 10 + (d[i] - '0');
	if (v > SEQ_MAX_FRAME)
		return 0;
	*frame = (long)v;
	return 1;
}

/* A frame number at *s (digits only), advancing *s. 0, or SEQ_E_SYNTAX / SEQ_E_TOO_MANY. */
static int number(const char **s, long *v, const char *all, char err[SEQ_ERR_LEN])
{
	const char *c = *s;
	if (!is_digit(*c)) {
		snprintf(err, SEQ_ERR_LEN, "frames '%.100s': a number expected at byte %zu", all,
		         (size_t)(c - all));
		return SEQ_E_SYNTAX;
	}
	long x = 0;
	for (; is_digit(*c); c++) {
		x = x * 10 + (*c - '0');
		if (x > SEQ_MAX_FRAME) {
			snprintf(err, SEQ_ERR_LEN, "frames '%.100s': a frame above %ld", all,
			         SEQ_MAX_FRAME);
			return SEQ_E_TOO_MANY;
		}
	}
	*v = x;
	*s = c;
	return 0;
}

/* One item "N", "A-B" or "A-BxS" at *s into first, last, step. */
static int item(const char **s, long *first, long *last, long *step, const char *all,
                char err[SEQ_ERR_LEN])
{
	int rc = number(s, first, all, err);
	*last = *first;
	*step = 1;
	if (!rc && **s == '-') {
		(*s)++;
		rc = number(s, last, all, err);
		if (!rc && **s == 'x') {
			(*s)++;
			rc = number(s, step, all, err);
			if (!rc && *step < 1) {
				snprintf(err, SEQ_ERR_LEN, "frames '%.100s': a step of 0", all);
				rc = SEQ_E_SYNTAX;
			}
		}
		if (!rc && *last < *first) {
			snprintf(err, SEQ_ERR_LEN, "frames '%.100s': the range %ld-%ld runs backwards",
			         all, *first, *last);
			rc = SEQ_E_SYNTAX;
		}
	}
	if (!rc && **s && **s != ',') {
		snprintf(err, SEQ_ERR_LEN, "frames '%.100s': unexpected '%c' at byte %zu (items are "
		         "N, A-B or A-BxSTEP, separated by commas)", all, **s, (size_t)(*s - all));
		rc = SEQ_E_SYNTAX;
	}
	return rc;
}

int seq_frames_parse(const char *s, long **frames, size_t *n, char err[SEQ_ERR_LEN])
{
	*frames = NULL;
	*n = 0;
	/* first pass counts, second fills */
	size_t count = 0;
	for (const char *c = s;;) {
		long a, b, step;
		int rc = item(&c, &a, &b, &step, s, err);
		if (rc)
			return rc;
		count += (size_t)((b - a) / step) + 1;
		if (count > SEQ_MAX_FRAMES) {
			snprintf(err, SEQ_ERR_LEN, "frames '%.100s': more than %d frames", s,
			         SEQ_MAX_FRAMES);
			return SEQ_E_TOO_MANY;
		}
		if (!*c)
			break;
		c++; /* ',' */
	}
	long *f = malloc(count * sizeof *f);
	if (!f) {
		snprintf(err, SEQ_ERR_LEN, "frames: out of memory");
		return SEQ_E_NOMEM;
	}
	size_t k = 0;
	for (const char *c = s;;) {
		long a, b, step;
		item(&c, &a, &b, &step, s, err);
		for (long v = a; v <= b; v += step)
			f[k++] = v;
		if (!*c)
			break;
		c++;
	}
	*frames = f;
	*n = k;
	return 0;
}
