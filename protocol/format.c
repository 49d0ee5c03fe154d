/* Output formats; see format.h. */
#include "protocol/format.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int format_parse(const char *s)
{
	static const struct {
		const char *name;
		int out;
	} names[] = {{"jpeg", OUT_JPEG}, {"jpg", OUT_JPEG}, {"png", OUT_PNG},
	             {"png16", OUT_PNG16}, {"exr", OUT_EXR}, {"hdr", OUT_HDR},
	             {"pfm", OUT_PFM}};
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
	{"image/jpeg", OUT_JPEG},         {"image/jpg", OUT_JPEG},
	{"image/png", OUT_PNG},           {"image/x-exr", OUT_EXR},
	{"image/exr", OUT_EXR},           {"image/aces", OUT_EXR},
	{"image/vnd.radiance", OUT_HDR},  {"image/x-hdr", OUT_HDR},
	{"image/x-portable-floatmap", OUT_PFM}, {"image/x-pfm", OUT_PFM},
};

int format_from_accept(const char *accept, int *png_from_accept)
{
	*png_from_accept = 0;
	if (!accept)
		return OUT_AUTO;
	int best = OUT_AUTO;
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
				*png_from_accept = best == OUT_PNG;
			}
		/* a wildcard at a higher q than any specific type means "anything": follow the input */
		if (((tl == 3 && !strncmp(t, "*/*", 3)) || (tl == 7 && !strncasecmp(t, "image/*", 7))) &&
		    q > best_q) {
			best = OUT_AUTO;
			best_q = q;
			*png_from_accept = 0;
		}
		p += seg;
		if (*p == ',')
			p++;
	}
	return best;
}

void format_resolve(int out, int png_from_accept, const struct image_info *in,
                    enum image_format *fmt, int *bits)
{
	*bits = 0;
	switch (out) {
	case OUT_JPEG: *fmt = IMAGE_FORMAT_JPEG; return;
	case OUT_PNG:
		*fmt = IMAGE_FORMAT_PNG;
		*bits = png_from_accept && in->format == IMAGE_FORMAT_PNG && in->bits == 16 ? 16 : 8;
		return;
	case OUT_PNG16: *fmt = IMAGE_FORMAT_PNG; *bits = 16; return;
	case OUT_EXR: *fmt = IMAGE_FORMAT_EXR; return;
	case OUT_HDR: *fmt = IMAGE_FORMAT_HDR; return;
	case OUT_PFM: *fmt = IMAGE_FORMAT_PFM; return;
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

const char *format_content_type(enum image_format f)
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
