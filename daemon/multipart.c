/* multipart/form-data splitting; see multipart.h. */
#include "daemon/multipart.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *multipart_strerror(int code)
{
	switch (code) {
	case MULTIPART_OK: return "ok";
	case MULTIPART_E_NOT: return "not multipart/form-data";
	case MULTIPART_E_BOUNDARY: return "bad multipart boundary";
	case MULTIPART_E_SYNTAX: return "malformed multipart body";
	case MULTIPART_E_TOO_MANY: return "too many multipart parts";
	}
	return "unknown error";
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static int ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* Reads the value of parameter `key` (case-insensitive) from a "type; a=b; c="d"" list into out
 * (cut to len-1), as RFC 2045/2183 lay it out: parameters separated by ';' outside quotes, each
 * a token, '=' and a token or a quoted string with backslash escapes, so that a ';' or "name="
 * inside a quoted value (filename="x;name=y") is never taken for a parameter. Returns 1 if found,
 * 0 if not, -1 when the list is malformed: a quote left open, a parameter without '=', text
 * after a value before the next ';', the key given twice, or a NUL or control byte in the key's
 * value. */
static int header_param(const char *s, const char *end, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	int found = 0;
	/* the type ("form-data", "multipart/form-data") is a token: no quotes before the first ';' */
	const char *p = memchr(s, ';', (size_t)(end - s));
	while (p && p < end) {
		p++; /* past the ';' */
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		const char *name = p;
		while (p < end && *p != '=' && *p != ';' && *p != ' ' && *p != '\t' && *p != '"')
			p++;
		size_t nl = (size_t)(p - name);
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p == ';') {
			if (nl)
				return -1; /* a parameter without a value */
			continue; /* empty: ";;" or a ';' at the end */
		}
		if (*p != '=')
			return -1;
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		int match = nl == kl && !strncasecmp(name, key, kl);
		if (match && found)
			return -1; /* given twice: which one another parser takes is anyone's guess */
		size_t o = 0;
		if (p < end && *p == '"') {
			p++;
			while (p < end && *p != '"') {
				if (*p == '\\' && p + 1 < end)
					p++;
				if (match && ctl((unsigned char)*p))
					return -1;
				if (match && o + 1 < len)
					out[o++] = *p;
				p++;
			}
			if (p >= end)
				return -1; /* unterminated quote */
			p++;
		} else {
			while (p < end && *p != ';' && *p != ' ' && *p != '\t' && *p != '"') {
				if (match && ctl((unsigned char)*p))
					return -1;
				if (match && o + 1 < len)
					out[o++] = *p;
				p++;
			}
		}
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end && *p != ';')
			return -1; /* text after the value: name="a"b, or a quote inside a token */
		if (match) {
			out[o] = 0;
			found = 1;
		}
	}
	return found;
}

int multipart_boundary(const char *ct, char boundary[MULTIPART_BOUNDARY_MAX + 1])
{
	boundary[0] = 0;
	if (!ct)
		return MULTIPART_E_NOT;
	ct = skip_ws(ct);
	static const char type[] = "multipart/form-data";
	size_t tl = sizeof type - 1;
	if (strncasecmp(ct, type, tl) || (ct[tl] && ct[tl] != ';' && ct[tl] != ' ' && ct[tl] != '\t'))
		return MULTIPART_E_NOT;
	char b[MULTIPART_BOUNDARY_MAX + 2];
	if (header_param(ct, ct + strlen(ct), "boundary", b, sizeof b) != 1)
		return MULTIPART_E_BOUNDARY;
	size_t bl = strlen(b);
	if (bl < 1 || bl > MULTIPART_BOUNDARY_MAX || b[bl - 1] == ' ')
		return MULTIPART_E_BOUNDARY;
	for (size_t i = 0; i < bl; i++)
		if ((unsigned char)b[i] < 0x20 || (unsigned char)b[i] > 0x7e)
			return MULTIPART_E_BOUNDARY;
	memcpy(boundary, b, bl + 1);
	return 0;
}

/* Parses one part's header block [h, e) into part. Returns 0 or -1 on malformed headers. */
static int parse_headers(const char *h, const char *e, struct multipart_part *part)
{
	int disposition = 0;
	while (h < e) {
		const char *eol = h;
		while (eol + 1 < e && !(eol[0] == '\r' && eol[1] == '\n'))
			eol++;
		if (eol + 1 >= e)
			eol = e;
		const char *colon = memchr(h, ':', (size_t)(eol - h));
		if (!colon)
			return -1;
		size_t nl = (size_t)(colon - h);
		const char *v = colon + 1;
		while (v < eol && (*v == ' ' || *v == '\t'))
			v++;
		if (nl == 19 && !strncasecmp(h, "Content-Disposition", nl)) {
			if ((size_t)(eol - v) < 9 || strncasecmp(v, "form-data", 9) ||
			    (eol - v > 9 && v[9] != ';' && v[9] != ' ' && v[9] != '\t'))
				return -1;
			disposition = 1;
			if (header_param(v, eol, "name", part->name, sizeof part->name) < 0 ||
			    header_param(v, eol, "filename", part->filename, sizeof part->filename) < 0)
				return -1;
		} else if (nl == 12 && !strncasecmp(h, "Content-Type", nl)) {
			size_t vl = (size_t)(eol - v);
			if (vl >= sizeof part->content_type)
				vl = sizeof part->content_type - 1;
			memcpy(part->content_type, v, vl);
			part->content_type[vl] = 0;
		}
		h = eol + 2;
	}
	return disposition ? 0 : -1;
}

int multipart_parse(const void *body, size_t len, const char *boundary,
                    struct multipart_part *parts, size_t max, size_t *n,
                    char err[MULTIPART_ERR_LEN])
{
	static const char none[1];
	const char *b = body ? body : none; /* no body (NULL, 0): NULL + 0 is undefined in C */
	const char *end = b + (body ? len : 0);
	char delim[MULTIPART_BOUNDARY_MAX + 5];
	int dl = snprintf(delim, sizeof delim, "\r\n--%s", boundary);
	*n = 0;
	len = (size_t)(end - b);
	if (dl < 5 || (size_t)dl >= sizeof delim) {
		snprintf(err, MULTIPART_ERR_LEN, "multipart: bad boundary");
		return MULTIPART_E_BOUNDARY;
	}
	/* The first delimiter may open the body (without its CRLF) or follow a preamble. */
	const char *p;
	if (len >= (size_t)dl - 2 && !memcmp(b, delim + 2, (size_t)dl - 2))
		p = b + dl - 2;
	else {
		p = memmem(b, len, delim, (size_t)dl);
		if (!p) {
			snprintf(err, MULTIPART_ERR_LEN, "multipart: boundary '%s' not found in the body",
			         boundary);
			return MULTIPART_E_SYNTAX;
		}
		p += dl;
	}
	for (;;) {
		/* p is just after a delimiter: "--" closes, else padding and CRLF open a part */
		if (end - p >= 2 && p[0] == '-' && p[1] == '-')
			return 0;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p < 2 || p[0] != '\r' || p[1] != '\n') {
			snprintf(err, MULTIPART_ERR_LEN, "multipart: body ends before its closing boundary");
			return MULTIPART_E_SYNTAX;
		}
		p += 2;
		const char *hend = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
		const char *data;
		if (end - p >= 2 && p[0] == '\r' && p[1] == '\n') {
			hend = p; /* no headers at all */
			data = p + 2;
		} else {
			if (!hend || hend - p > MULTIPART_HEADERS_MAX) {
				snprintf(err, MULTIPART_ERR_LEN, "multipart: part %zu has no end of headers "
				         "within %d bytes", *n + 1, MULTIPART_HEADERS_MAX);
				return MULTIPART_E_SYNTAX;
			}
			data = hend + 4;
		}
		const char *next = memmem(data, (size_t)(end - data), delim, (size_t)dl);
		if (!next) {
			snprintf(err, MULTIPART_ERR_LEN, "multipart: part %zu is not closed by the boundary",
			         *n + 1);
			return MULTIPART_E_SYNTAX;
		}
		if (*n >= max) {
			snprintf(err, MULTIPART_ERR_LEN, "multipart: more than %zu parts (the limit: "
			         "one a parameter, plus the files and params)", max);
			return MULTIPART_E_TOO_MANY;
		}
		struct multipart_part *part = &parts[*n];
		memset(part, 0, sizeof *part);
		if (parse_headers(p, hend, part)) {
			snprintf(err, MULTIPART_ERR_LEN,
			         "multipart: part %zu lacks a valid Content-Disposition: form-data header "
			         "(parameters name=value or name=\"quoted\", each once, without control "
			         "bytes)", *n + 1);
			return MULTIPART_E_SYNTAX;
		}
		for (size_t i = 0; i < *n; i++)
			if (part->name[0] && !strcmp(parts[i].name, part->name)) {
				snprintf(err, MULTIPART_ERR_LEN, "multipart: the part '%s' is given twice",
				         part->name);
				return MULTIPART_E_SYNTAX;
			}
		part->data = (const unsigned char *)data;
		part->len = (size_t)(next - data);
		(*n)++;
		p = next + dl;
	}
}

const struct multipart_part *multipart_find(const struct multipart_part *parts, size_t n,
                                            const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(parts[i].name, name))
			return &parts[i];
	return NULL;
}
