/* HEIC (HEIF with HEVC) through libheif (Debian 12: 1.15, decoding with libde265): the primary
 * image, 8, 10 or 12 bits, with alpha (premultiplied alpha made straight), its rotation, mirror
 * and crop applied by libheif; monochrome files come as RGB (libheif 1.15 cannot tell them before
 * decoding). Read as sRGB whatever
 * the file's transfer says, except that PQ and HLG (HDR) files are refused, as AVIF's are. Read
 * only: no HEIC is written. */
#include <libheif/heif.h>
#include <stdlib.h>
#include <string.h>

#include "codec/colour.h"
#include "codec/image_codec.h"

/* libheif 1.15 decodes a derived image (a grid, an overlay, an alpha plane) by decoding its
 * inputs, recursively and without a bound: a file whose 'dimg' or 'auxl' references form a
 * cycle overflows the stack (found by the fuzz target heic, 940 bytes), and a long chain can.
 * So the references are read here first, from the container's boxes, and a cycle or a chain
 * deeper than HEIC_DERIVE_DEPTH is refused before libheif sees the file. */
#define HEIC_DERIVE_DEPTH 8   /* grids of grids: 2 in any file seen */
#define HEIC_EDGES_MAX 4096   /* references read; more: refused */

static uint64_t be(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* The next box in [*at, end): 1 with its type and body [*body, *bend), 0 at the end, -1 when
 * malformed, -2 when it runs past end. */
static int box_next(const unsigned char *b, size_t *at, size_t end, uint32_t *type,
                    size_t *body, size_t *bend)
{
	if (*at >= end)
		return 0;
	if (end - *at < 8)
		return -1;
	uint64_t size = be(b + *at, 4), hdr = 8;
	*type = (uint32_t)be(b + *at + 4, 4);
	if (size == 1) {
		if (end - *at < 16)
			return -1;
		size = be(b + *at + 8, 8);
		hdr = 16;
	} else if (size == 0) {
		size = end - *at;
	}
	if (size < hdr)
		return -1;
	if (size > end - *at)
		return -2;
	*body = *at + (size_t)hdr;
	*bend = *at + (size_t)size;
	*at = *bend;
	return 1;
}

#define FOURCC(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

struct heic_edge {
	uint32_t from, to; /* decoding `from` decodes `to` */
};

/* The decode dependencies of iref's body [at, end) (version v) into e: dimg (an image to its
 * inputs) and auxl (an image to its alpha or depth plane, reversed). Each reference is read as
 * libheif 1.15 reads it (its header, then the IDs, whatever its size says); one whose size is
 * not what it holds, or that runs past the box, is malformed: -1 (the file is refused, as
 * what libheif would make of it is unknown); -2 past HEIC_EDGES_MAX references. */
static int iref_edges(const unsigned char *b, size_t at, size_t end, int v, struct heic_edge *e,
                      size_t *n)
{
	size_t w = v ? 4 : 2;
	while (at < end) {
		if (end - at < 8 + w + 2)
			return -1;
		uint64_t size = be(b + at, 4);
		uint32_t type = (uint32_t)be(b + at + 4, 4);
		uint32_t from = (uint32_t)be(b + at + 8, (int)w);
		size_t count = (size_t)be(b + at + 8 + w, 2), p = at + 8 + w + 2;
		if (count > (end - p) / w || size != 8 + w + 2 + count * w)
			return -1;
		for (size_t i = 0; i < count; i++, p += w) {
			if (type != FOURCC('d', 'i', 'm', 'g') && type != FOURCC('a', 'u', 'x', 'l'))
				continue;
			if (*n >= HEIC_EDGES_MAX)
				return -2;
			uint32_t to = (uint32_t)be(b + p, (int)w);
			e[*n].from = type == FOURCC('a', 'u', 'x', 'l') ? to : from;
			e[*n].to = type == FOURCC('a', 'u', 'x', 'l') ? from : to;
			(*n)++;
		}
		at = p;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static size_t node_of(const uint32_t *ids, size_t n, uint32_t id)
{
	const uint32_t *p = bsearch(&id, ids, n, sizeof *ids, cmp_u32);
	return (size_t)(p - ids);
}

/* 0 when the file's derived images decode in a bounded number of steps (or it has no
 * references this can read: libheif judges the rest), else IMAGE_E_CORRUPT (a cycle, a chain
 * too deep, too many references) or IMAGE_E_NOMEM, with err. */
static int heic_check_derivations(const unsigned char *b, size_t len, char *err)
{
	uint32_t type;
	size_t at = 0, body, bend, meta = 0, meta_end = 0;
	int r;
	/* the boxes up to meta's and meta's up to iref must hold together: what libheif would
	 * read of them otherwise is not known here */
	while ((r = box_next(b, &at, len, &type, &body, &bend)) == 1)
		if (type == FOURCC('m', 'e', 't', 'a') && bend - body >= 4) {
			meta = body + 4; /* a FullBox */
			meta_end = bend;
			break;
		}
	size_t iref = 0, iref_end = 0;
	at = meta;
	while (r == 1 && (r = box_next(b, &at, meta_end, &type, &body, &bend)) == 1)
		if (type == FOURCC('i', 'r', 'e', 'f') && bend - body >= 4) {
			iref = body;
			iref_end = bend;
			break;
		}
	if (r < 0)
		return image_fail(err, r == -2 ? IMAGE_E_TRUNCATED : IMAGE_E_CORRUPT,
		                  "heic: %s", r == -2 ? "a box runs past the end of the file"
		                                      : "a box of a bad size");
	if (!iref)
		return 0;
	struct heic_edge *e = malloc(HEIC_EDGES_MAX * sizeof *e);
	uint32_t *ids = malloc(2 * HEIC_EDGES_MAX * sizeof *ids);
	unsigned *indeg = calloc(2 * HEIC_EDGES_MAX, sizeof *indeg);
	unsigned *depth = calloc(2 * HEIC_EDGES_MAX, sizeof *depth);
	size_t *queue = malloc(2 * HEIC_EDGES_MAX * sizeof *queue);
	size_t n = 0, nodes = 0, head = 0, tail = 0;
	int rc = 0;
	if (!e || !ids || !indeg || !depth || !queue) {
		rc = image_fail(err, IMAGE_E_NOMEM, "heic: out of memory reading references");
		goto done;
	}
	if ((r = iref_edges(b, iref + 4, iref_end, b[iref], e, &n)) < 0) {
		rc = r == -2 ? image_fail(err, IMAGE_E_CORRUPT, "heic: more than %d image references",
		                          HEIC_EDGES_MAX)
		             : image_fail(err, IMAGE_E_CORRUPT, "heic: a malformed item reference");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		ids[nodes++] = e[i].from;
		ids[nodes++] = e[i].to;
	}
	qsort(ids, nodes, sizeof *ids, cmp_u32);
	size_t u = 0;
	for (size_t i = 0; i < nodes; i++)
		if (!u || ids[i] != ids[u - 1])
			ids[u++] = ids[i];
	nodes = u;
	for (size_t i = 0; i < n; i++)
		indeg[node_of(ids, nodes, e[i].to)]++;
	for (size_t i = 0; i < nodes; i++)
		if (!indeg[i])
			queue[tail++] = i;
	/* Kahn's order: what is left has a cycle; depth[] is the longest chain to a node */
	while (head < tail) {
		size_t k = queue[head++];
		for (size_t i = 0; i < n; i++) {
			if (e[i].from != ids[k])
				continue;
			size_t t = node_of(ids, nodes, e[i].to);
			if (depth[t] < depth[k] + 1)
				depth[t] = depth[k] + 1;
			if (!--indeg[t])
				queue[tail++] = t;
		}
	}
	if (tail < nodes) {
		rc = image_fail(err, IMAGE_E_CORRUPT,
		                "heic: its derived images refer to themselves (a reference cycle)");
		goto done;
	}
	for (size_t i = 0; i < nodes; i++)
		if (depth[i] > HEIC_DERIVE_DEPTH) {
			rc = image_fail(err, IMAGE_E_CORRUPT,
			                "heic: derived images %u deep (at most %d are read)", depth[i],
			                HEIC_DERIVE_DEPTH);
			goto done;
		}
done:
	free(e);
	free(ids);
	free(indeg);
	free(depth);
	free(queue);
	return rc;
}

/* libheif 1.15 reports a declared size above its limit (a side past
 * heif_context_set_maximum_image_size_limit, too many items or tiles) as a memory allocation
 * error with the subcode Security_limit_exceeded, before it allocates anything: that is the
 * file's size, too large (413), not memory running out (503, retried for ever). */
static int heic_error(struct heif_error e, const char *what, char *err)
{
	int code = e.subcode == heif_suberror_Security_limit_exceeded ? IMAGE_E_TOO_LARGE
	           : e.code == heif_error_Memory_allocation_error ? IMAGE_E_NOMEM
	           : e.subcode == heif_suberror_End_of_data     ? IMAGE_E_TRUNCATED
	           : e.code == heif_error_Unsupported_feature || e.code == heif_error_Unsupported_filetype
	               ? IMAGE_E_UNSUPPORTED
	               : IMAGE_E_CORRUPT;
	const char *m = e.message ? e.message : "failed";
	int n = (int)strnlen(m, 200);
	while (n && (m[n - 1] == '\n' || m[n - 1] == ' '))
		n--; /* libheif ends some messages with a newline */
	return image_fail(err, code, "heic: %s: %s%.*s%s", what,
	                  code == IMAGE_E_TOO_LARGE ? "past the size limits (libheif: " : "", n, m,
	                  code == IMAGE_E_TOO_LARGE ? ")" : "");
}

/* The file's nclx transfer, when it has one: HDR transfers are refused. */
static int check_transfer(const struct heif_image_handle *h, char *err)
{
	struct heif_color_profile_nclx *nclx = NULL;
	struct heif_error e = heif_image_handle_get_nclx_color_profile(h, &nclx);
	if (e.code != heif_error_Ok || !nclx)
		return 0;
	enum heif_transfer_characteristics tc = nclx->transfer_characteristics;
	heif_nclx_color_profile_free(nclx);
	if (tc == heif_transfer_characteristic_ITU_R_BT_2100_0_PQ ||
	    tc == heif_transfer_characteristic_ITU_R_BT_2100_0_HLG)
		return image_fail(err, IMAGE_E_UNSUPPORTED, "heic: %s (HDR) transfer is not supported",
		                  tc == heif_transfer_characteristic_ITU_R_BT_2100_0_HLG ? "HLG" : "PQ");
	return 0;
}

/* The file's colour description for image_decode (codec/image_codec.h): its ICC profile, else
 * its nclx code points (libheif has applied the matrix). */
static void heic_colour(const struct heif_image_handle *h, struct image_info *info)
{
	size_t n = heif_image_handle_get_raw_color_profile_size(h);
	if (n) {
		void *icc = malloc(n);
		if (icc && heif_image_handle_get_raw_color_profile(h, icc).code == heif_error_Ok)
			image_colour_set_icc(info, icc, n);
		free(icc);
		return;
	}
	struct heif_color_profile_nclx *nclx = NULL;
	if (heif_image_handle_get_nclx_color_profile(h, &nclx).code == heif_error_Ok && nclx) {
		image_colour_set_cicp(info, nclx->color_primaries, nclx->transfer_characteristics,
		                      nclx->matrix_coefficients, nclx->full_range_flag);
		heif_nclx_color_profile_free(nclx);
	}
}

int image_decode_heic(const unsigned char *buf, size_t len, const struct image_limits *lim,
                      struct image *out, struct image_info *info, char *err)
{
	struct heif_context *ctx = heif_context_alloc();
	struct heif_image_handle *h = NULL;
	struct heif_image *im = NULL;
	struct heif_decoding_options *dopt = NULL;
	float *table = NULL;
	int rc;
	if (!ctx)
		return image_fail(err, IMAGE_E_NOMEM, "heic: cannot create a decoder");
	unsigned long long mw = lim->max_width ? lim->max_width : IMAGE_DEFAULT_MAX_WIDTH;
	unsigned long long mh = lim->max_height ? lim->max_height : IMAGE_DEFAULT_MAX_HEIGHT;
	unsigned long long side = mw > mh ? mw : mh;
	/* libheif's own limit, a side, checked as it parses (grids included) */
	heif_context_set_maximum_image_size_limit(ctx, side > 0x7fffffff ? 0x7fffffff : (int)side);
	heif_context_set_max_decoding_threads(ctx, 0); /* a server decodes a request a thread */
	if ((rc = heic_check_derivations(buf, len, err)))
		goto done;
	struct heif_error e = heif_context_read_from_memory_without_copy(ctx, buf, len, NULL);
	if (e.code != heif_error_Ok) {
		rc = heic_error(e, "header", err);
		goto done;
	}
	e = heif_context_get_primary_image_handle(ctx, &h);
	if (e.code != heif_error_Ok) {
		rc = heic_error(e, "primary image", err);
		goto done;
	}
	/* the size with the transformations applied, before anything is decoded */
	int w = heif_image_handle_get_width(h), ht = heif_image_handle_get_height(h);
	if ((rc = image_check_limits(lim, w > 0 ? (unsigned)w : 0, ht > 0 ? (unsigned)ht : 0, "heic",
	                             err)))
		goto done;
	if ((rc = check_transfer(h, err)))
		goto done;
	heic_colour(h, info);
	int alpha = heif_image_handle_has_alpha_channel(h) != 0;
	int premul = alpha && heif_image_handle_is_premultiplied_alpha(h);
	int deep = heif_image_handle_get_luma_bits_per_pixel(h) > 8;
	enum heif_chroma chroma = deep ? (alpha ? heif_chroma_interleaved_RRGGBBAA_LE
	                                        : heif_chroma_interleaved_RRGGBB_LE)
	                               : (alpha ? heif_chroma_interleaved_RGBA
	                                        : heif_chroma_interleaved_RGB);
	if (!(dopt = heif_decoding_options_alloc())) {
		rc = image_fail(err, IMAGE_E_NOMEM, "heic: cannot allocate options");
		goto done;
	}
	dopt->ignore_transformations = 0; /* rotation, mirror and crop applied */
	dopt->convert_hdr_to_8bit = 0;
	e = heif_decode_image(h, &im, heif_colorspace_RGB, chroma, dopt);
	if (e.code != heif_error_Ok) {
		rc = heic_error(e, "image data", err);
		goto done;
	}
	int iw = heif_image_get_width(im, heif_channel_interleaved);
	int ih = heif_image_get_height(im, heif_channel_interleaved);
	int bits = heif_image_get_bits_per_pixel_range(im, heif_channel_interleaved);
	/* the decoded size is the one converted: checked again (the hook sees the latest size) */
	if ((rc = image_check_limits(lim, iw > 0 ? (unsigned)iw : 0, ih > 0 ? (unsigned)ih : 0,
	                             "heic", err)))
		goto done;
	if (bits < 8 || bits > 16 || (bits > 8) != deep) {
		rc = image_fail(err, IMAGE_E_UNSUPPORTED, "heic: %d bits per sample", bits);
		goto done;
	}
	int stride = 0;
	const uint8_t *p = heif_image_get_plane_readonly(im, heif_channel_interleaved, &stride);
	int sch = 3 + alpha, ch = sch, colour = 3;
	size_t bps = deep ? 2 : 1;
	if (!p || stride < 0 || (size_t)stride < (size_t)iw * (size_t)sch * bps) {
		rc = image_fail(err, IMAGE_E_CORRUPT, "heic: no decoded pixels");
		goto done;
	}
	unsigned maxv = (1u << bits) - 1;
	const float *t = colour_srgb8_table();
	if (deep) { /* the sRGB decode of each code */
		if (!(table = malloc(((size_t)maxv + 1) * sizeof *table))) {
			rc = image_fail(err, IMAGE_E_NOMEM, "heic: cannot allocate a table");
			goto done;
		}
		for (unsigned v = 0; v <= maxv; v++)
			table[v] = (float)srgb_to_linear_d((double)v / maxv);
		t = table;
	}
	if ((rc = image_alloc(out, iw, ih, ch))) {
		rc = image_fail(err, rc, "heic: cannot allocate %dx%d pixels", iw, ih);
		goto done;
	}
	float *d = out->pixels;
	for (int y = 0; y < ih; y++) {
		const uint8_t *row = p + (size_t)y * (size_t)stride;
		for (int x = 0; x < iw; x++, d += ch) {
			unsigned s[4];
			for (int c = 0; c < sch; c++) {
				if (deep) {
					s[c] = (unsigned)row[((size_t)x * sch + c) * 2] |
					       (unsigned)row[((size_t)x * sch + c) * 2 + 1] << 8;
					if (s[c] > maxv)
						s[c] = maxv;
				} else {
					s[c] = row[(size_t)x * sch + c];
				}
			}
			unsigned a = alpha ? s[3] : maxv;
			for (int c = 0; c < colour; c++) {
				if (!premul || a == maxv)
					d[c] = t[s[c]];
				else
					d[c] = a ? srgb_to_linear(s[c] >= a ? 1.0f : (float)s[c] / (float)a)
					         : 0;
			}
			if (alpha)
				d[ch - 1] = (float)a / (float)maxv;
		}
	}
	info->bits = bits;
	info->channels = ch;
	rc = 0;
done:
	if (rc)
		image_free(out);
	free(table);
	heif_decoding_options_free(dopt);
	heif_image_release(im);
	heif_image_handle_release(h);
	heif_context_free(ctx);
	return rc;
}
