/* Output formats and content negotiation; see format.h. */
#include "api/format.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int format_parse(const char *s)
{
	static const struct {
		const char *name;
		int out;
	} names[] = {{"jpeg", OUT_JPEG}, {"jpg", OUT_JPEG}, {"png", OUT_PNG},
	             {"png16", OUT_PNG16}, {"exr", OUT_EXR}, {"hdr", OUT_HDR},
	             {"pfm", OUT_PFM}, {"webp", OUT_WEBP}, {"avif", OUT_AVIF},
	             {"avif10", OUT_AVIF10}, {"avif12", OUT_AVIF12}, {"tiff", OUT_TIFF},
	             {"tif", OUT_TIFF}, {"tiff16", OUT_TIFF16}, {"tiff16f", OUT_TIFF16F},
	             {"tiff32", OUT_TIFF32}};
	if (!s)
		return -1;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].out;
	return -1;
}

/* The media types formats answer to come from the codec's format table (its first one is what
 * answers carry); a format is negotiable when the codec writes it. */
static const struct image_format_desc *row(size_t i)
{
	size_t n;
	return &image_formats(&n)[i];
}

static size_t nformats(void)
{
	size_t n;
	image_formats(&n);
	return n;
}

static int is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* A qvalue in thousandths (lenient: "1", "0.5", ".2", "1.000"; more than three decimals are
 * cut); -1 when malformed or above 1. */
static int parse_q(const char *s, size_t n)
{
	size_t i = 0;
	int ip = 0, frac = 0, scale = 100, digits = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9') {
		if (ip < 10)
			ip = ip * 10 + (s[i] - '0');
		i++;
		digits++;
	}
	if (i < n && s[i] == '.') {
		i++;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			frac += (s[i] - '0') * scale;
			scale /= 10;
			i++;
			digits++;
		}
	}
	if (i != n || !digits || ip > 1 || (ip == 1 && frac > 0))
		return -1;
	return ip * 1000 + frac;
}

/* One media range [t, t + n): its specificity for format i (3 own type, 2 image wildcard, 1
 * full wildcard, 0 no match) */
static int match(const char *t, size_t n, size_t i)
{
	if ((n == 3 && !memcmp(t, "*/*", 3)) || (n == 1 && t[0] == '*'))
		return 1;
	if (n == 7 && !strncasecmp(t, "image/*", 7))
		return 2;
	const char *const *types = row(i)->media_types;
	for (int k = 0; types[k]; k++)
		if (strlen(types[k]) == n && !strncasecmp(t, types[k], n))
			return 3;
	return 0;
}

int format_from_accept(const char *accept, int prefer_avif, struct format_accept *a)
{
	memset(a, 0, sizeof *a);
	a->prefer_avif = prefer_avif;
	const char *p = accept ? accept : "";
	while (is_ows(*p))
		p++;
	if (!*p)
		return 0; /* no header, or a blank one: anything */
	a->given = 1;
	int spec[IMAGE_FORMAT_COUNT] = {0};
	unsigned pos = 0;
	while (*p) {
		/* one element, up to a comma outside a quoted string */
		const char *e = p;
		int quoted = 0;
		while (*e && (quoted || *e != ',')) {
			if (*e == '"')
				quoted = !quoted;
			else if (*e == '\\' && quoted && e[1])
				e++;
			e++;
		}
		const char *t = p;
		while (t < e && is_ows(*t))
			t++;
		size_t tn = 0;
		while (t + tn < e && t[tn] != ';' && !is_ows(t[tn]))
			tn++;
		int q = tn ? 1000 : -1;
		/* parameters: only q is read; a malformed q drops the range */
		for (const char *s = t + tn; q >= 0 && s < e;) {
			const char *semi = memchr(s, ';', (size_t)(e - s));
			if (!semi)
				break;
			s = semi + 1;
			while (s < e && is_ows(*s))
				s++;
			const char *end = s;
			while (end < e && *end != ';')
				end++;
			const char *ve = end;
			while (ve > s && is_ows(ve[-1]))
				ve--;
			if (ve - s >= 2 && (s[0] == 'q' || s[0] == 'Q') && s[1] == '=')
				q = parse_q(s + 2, (size_t)(ve - s - 2));
			s = end;
		}
		if (q >= 0) {
			pos++;
			for (size_t i = 0; i < nformats(); i++) {
				if (!row(i)->write)
					continue;
				int m = match(t, tn, i), f = row(i)->format;
				if (!m || m < spec[f])
					continue;
				if (m > spec[f] || q > a->q[f])
					a->q[f] = (unsigned short)q;
				spec[f] = m;
				if (m == 3 && !a->named[f])
					a->named[f] = (unsigned short)(pos < 65535 ? pos : 65535);
			}
		}
		p = *e ? e + 1 : e;
	}
	for (size_t i = 0; i < nformats(); i++)
		if (a->q[row(i)->format])
			return 0;
	return FORMAT_E_NONE;
}

/* The input's family: what an answer is when nothing says otherwise. */
static enum image_format family(const struct image_info *in)
{
	switch (in->format) {
	case IMAGE_FORMAT_JPEG:
	case IMAGE_FORMAT_PNG:
	case IMAGE_FORMAT_WEBP:
	case IMAGE_FORMAT_AVIF:
	case IMAGE_FORMAT_TIFF: return in->format;
	case IMAGE_FORMAT_HEIC: return IMAGE_FORMAT_JPEG; /* a photograph; no HEIC is written */
	default: return IMAGE_FORMAT_EXR;
	}
}

/* Where f stands among acceptable formats of equal q and namedness: lower is better. Named:
 * AVIF (when preferred), WebP, the input's family, then the header's order. Matched by a
 * wildcard only: the input's family, then a fixed order. */
static unsigned rank(const struct format_accept *a, enum image_format f, enum image_format fam)
{
	static const enum image_format fixed[] = {IMAGE_FORMAT_PNG, IMAGE_FORMAT_JPEG,
	                                          IMAGE_FORMAT_EXR, IMAGE_FORMAT_HDR,
	                                          IMAGE_FORMAT_PFM, IMAGE_FORMAT_WEBP,
	                                          IMAGE_FORMAT_AVIF, IMAGE_FORMAT_TIFF};
	if (a->named[f]) {
		if (f == IMAGE_FORMAT_AVIF && a->prefer_avif)
			return 0;
		if (f == IMAGE_FORMAT_WEBP)
			return 1;
		return f == fam ? 2 : 10u + a->named[f];
	}
	if (f == fam)
		return 2;
	for (unsigned i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (fixed[i] == f)
			return 3 + i;
	return 0xffffffu;
}

/* Better than the best so far: AVIF (unless preferred, or the input's family) only when
 * nothing else is acceptable, then higher q, then named, then rank. */
static int better(const struct format_accept *a, enum image_format f, enum image_format best,
                  enum image_format fam)
{
	if (best == IMAGE_FORMAT_UNKNOWN)
		return 1;
	int held = !a->prefer_avif && fam != IMAGE_FORMAT_AVIF; /* AVIF held back */
	int fa = held && f == IMAGE_FORMAT_AVIF, ba = held && best == IMAGE_FORMAT_AVIF;
	if (fa != ba)
		return ba;
	if (a->q[f] != a->q[best])
		return a->q[f] > a->q[best];
	if (!a->named[f] != !a->named[best])
		return a->named[f] != 0;
	return rank(a, f, fam) < rank(a, best, fam);
}

/* Whether an answer of the input's size fits the format's largest side (size unknown: yes). */
static int fits(enum image_format f, const struct image_info *in)
{
	int side = in->width > in->height ? in->width : in->height;
	return f == IMAGE_FORMAT_WEBP ? side <= 16383
	       : f == IMAGE_FORMAT_JPEG ? side <= 65535
	       : f == IMAGE_FORMAT_AVIF ? side <= 65536 : 1;
}

void format_resolve(int out, const struct format_accept *a, const struct image_info *in,
                    enum image_format *fmt, int *bits)
{
	*bits = 0;
	switch (out) {
	case OUT_JPEG: *fmt = IMAGE_FORMAT_JPEG; return;
	case OUT_PNG: *fmt = IMAGE_FORMAT_PNG; *bits = 8; return;
	case OUT_PNG16: *fmt = IMAGE_FORMAT_PNG; *bits = 16; return;
	case OUT_EXR: *fmt = IMAGE_FORMAT_EXR; return;
	case OUT_HDR: *fmt = IMAGE_FORMAT_HDR; return;
	case OUT_PFM: *fmt = IMAGE_FORMAT_PFM; return;
	case OUT_WEBP: *fmt = IMAGE_FORMAT_WEBP; return;
	case OUT_AVIF: *fmt = IMAGE_FORMAT_AVIF; *bits = 8; return;
	case OUT_AVIF10: *fmt = IMAGE_FORMAT_AVIF; *bits = 10; return;
	case OUT_AVIF12: *fmt = IMAGE_FORMAT_AVIF; *bits = 12; return;
	case OUT_TIFF: *fmt = IMAGE_FORMAT_TIFF; *bits = 8; return;
	case OUT_TIFF16:
	case OUT_TIFF16F: *fmt = IMAGE_FORMAT_TIFF; *bits = 16; return;
	case OUT_TIFF32: *fmt = IMAGE_FORMAT_TIFF; *bits = 32; return;
	}
	enum image_format fam = family(in), best = IMAGE_FORMAT_UNKNOWN;
	if (a && a->given) {
		for (size_t i = 0; i < nformats(); i++) {
			enum image_format f = row(i)->format;
			if (row(i)->write && a->q[f] && fits(f, in) && better(a, f, best, fam))
				best = f;
		}
	}
	/* nothing acceptable that fits (the caller answers 406 when nothing is acceptable): the
	 * family */
	*fmt = best != IMAGE_FORMAT_UNKNOWN ? best : fam;
	*bits = format_bits(*fmt, in);
}

int format_bits(enum image_format fmt, const struct image_info *in)
{
	int deep = in->float_format || in->bits > 8;
	if (fmt == IMAGE_FORMAT_PNG)
		return in->format == IMAGE_FORMAT_PNG && in->bits == 16 ? 16 : 8;
	if (fmt == IMAGE_FORMAT_AVIF)
		return in->format == IMAGE_FORMAT_AVIF && in->bits == 12 ? 12 : deep ? 10 : 8;
	if (fmt == IMAGE_FORMAT_TIFF)
		return format_half(OUT_AUTO, fmt, in) ? 16 : in->float_format ? 32 : in->bits > 8 ? 16
		                                                                               : 8;
	return 0;
}

int format_half(int out, enum image_format fmt, const struct image_info *in)
{
	if (out == OUT_TIFF16F)
		return 1;
	return out == OUT_AUTO && fmt == IMAGE_FORMAT_TIFF && in && in->format == IMAGE_FORMAT_TIFF &&
	       in->float_format && in->bits == 16;
}

/* The bits a sample of an integer format keeps (0: a float format). */
static int integer_bits(enum image_format f, int bits)
{
	switch (f) {
	case IMAGE_FORMAT_JPEG:
	case IMAGE_FORMAT_WEBP: return 8;
	case IMAGE_FORMAT_PNG:
	case IMAGE_FORMAT_AVIF: return bits ? bits : 8;
	case IMAGE_FORMAT_TIFF: return bits == 32 ? 0 : bits ? bits : 8; /* 16: half's 11 bits are
	                                                                   counted as 16 */
	default: return 0;
	}
}

unsigned format_lost_reported(unsigned lost, int bloom, const struct image_info *in,
                              enum image_format out, int bits)
{
	if (bloom)
		lost &= ~(unsigned)IMAGE_LOST_RANGE;
	int keeps = integer_bits(out, bits);
	if (in && !in->float_format && keeps && keeps >= in->bits)
		lost &= ~(unsigned)IMAGE_LOST_PRECISION;
	return lost;
}

const char *format_content_type(enum image_format f)
{
	const struct image_format_desc *d = image_format_desc(f);
	return d ? d->media_types[0] : "application/octet-stream";
}

const char *format_depths(const unsigned char *bits, char *buf, size_t len)
{
	size_t o = 0;
	int n = 0;
	while (n < 4 && bits[n])
		n++;
	buf[0] = 0;
	for (int i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%u", !i ? "" : i + 1 == n ? " or " : ", ",
		                      bits[i]);
	return n ? buf : "-";
}

void format_markdown(FILE *f)
{
	fprintf(f, "| format | media types | extensions | known by its first bytes | read | "
	        "written | bits read | bits written (default first) | samples | alpha |\n"
	        "|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < nformats(); i++) {
		const struct image_format_desc *d = row(i);
		char rb[32], wb[32];
		fprintf(f, "| %s (`%s`) | ", d->title, d->name);
		for (int k = 0; d->media_types[k]; k++)
			fprintf(f, "%s`%s`", k ? ", " : "", d->media_types[k]);
		fprintf(f, " | ");
		for (int k = 0; d->extensions[k]; k++)
			fprintf(f, "%s`.%s`", k ? ", " : "", d->extensions[k]);
		fprintf(f, " | %s | %s | %s | %s | %s | %s | %s |\n", d->magic, d->read ? "yes" : "no",
		        d->write ? "yes" : "no", format_depths(d->read_bits, rb, sizeof rb),
		        d->write ? format_depths(d->write_bits, wb, sizeof wb) : "-",
		        d->float_samples == 2 ? "integer or float" : d->float_samples ? "float"
		                                                                      : "integer",
		        d->alpha ? "yes" : "no");
	}
}
