/* JPEG frames decoded to their quantised DCT coefficients (codec/image.h, yuv_image.coefs):
 * libjpeg's entropy decoding alone (jpeg_read_coefficients), the dequantisation, inverse DCT
 * and level shift left to whoever makes the planes (the GPU; yuv_coefs_to_planes on the CPU).
 * For a single-scan file the coefficient controller's virtual arrays are served from a ring of
 * one iMCU row per component (jpeglib.h's replaceable memory-manager methods), and each row is
 * packed into the frame's memory as soon as the decoder has moved past it, while it is in the
 * cache; a multi-scan file (progressive, or one scan a component) is decoded into libjpeg's own
 * arrays and packed after. The packing: a DC word and 64 bytes of 8-bit AC a block, and an
 * 8-byte record for each AC coefficient past 8 bits (a few blocks' at quality 90, more at 95:
 * the low frequencies of strong gradients), after the rest. A frame with more than two such
 * coefficients a block in a component (noise at quality 100; decoding stops there), or a
 * progressive file that leaves coefficients unrefined (which libjpeg's decoder smooths across
 * blocks), is decoded to planes instead. */
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <jerror.h>
#include <jpeglib.h>

#include "codec/image_codec.h"

#define SCAN_LIMIT 500 /* progressive scans, as TurboJPEG's TJFLAG_LIMITSCANS */

struct ring { /* one component's rows of blocks in single-scan decoding */
	JBLOCKARRAY rows;  /* maxaccess rows of bpr blocks */
	JDIMENSION bpr, nrows, maxaccess, start;
	int filled;        /* rows[] holds decoded rows from `start` */
};

struct cdec {
	struct jpeg_decompress_struct ci; /* first: the methods get it as their j_common_ptr */
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	char msg[JMSG_LENGTH_MAX];
	int warned;        /* a warning that leaves the picture incomplete */
	int truncated;     /* ... because the data ended early */
	struct jpeg_progress_mgr progress;
	struct ring ring[3];
	int nring;
	jvirt_barray_ptr (*request)(j_common_ptr, int, boolean, JDIMENSION, JDIMENSION, JDIMENSION);
	JBLOCKARRAY (*access)(j_common_ptr, jvirt_barray_ptr, JDIMENSION, JDIMENSION, boolean);
	struct yuv_image *out;
	unsigned char *ovf[3]; /* each component's overflow records, until they go after the rest */
	int ovf_have[3], ovf_cap[3];
	int full;          /* a component's wide coefficients passed their room: planes instead */
	int nomem;         /* no memory to stage the records */
};

static void cerr_exit(j_common_ptr c)
{
	struct cdec *d = (struct cdec *)c;
	(*c->err->format_message)(c, d->msg);
	longjmp(d->jb, 1);
}

/* As image_jpeg.c's decode_failure: a warning fails the frame unless it is about stray bytes
 * between segments or the JFIF version (libjpeg would go on, padding with gray). */
static void cerr_emit(j_common_ptr c, int level)
{
	struct cdec *d = (struct cdec *)c;
	int code = c->err->msg_code;
	if (level >= 0 || code == JWRN_EXTRANEOUS_DATA || code == JWRN_JFIF_MAJOR || d->warned)
		return;
	d->warned = 1;
	d->truncated = code == JWRN_JPEG_EOF;
	(*c->err->format_message)(c, d->msg);
}

static void scan_limit(j_common_ptr c)
{
	struct jpeg_decompress_struct *ci = (struct jpeg_decompress_struct *)c;
	if (ci->is_decompressor && ci->input_scan_number > SCAN_LIMIT) {
		struct cdec *d = (struct cdec *)c;
		snprintf(d->msg, sizeof d->msg, "more than %d scans", SCAN_LIMIT);
		longjmp(d->jb, 1);
	}
}

/* Block b's 64 coefficients (natural order) into component c's DC word and AC bytes, and a
 * record for each AC coefficient past 8 bits (past the component's room: planes instead). */
static void pack_block(struct cdec *d, int c, size_t b, const JCOEF *k)
{
	struct yuv_image *y = d->out;
	struct yuv_coefs *cf = &y->cf[c];
	uint32_t dc = (uint16_t)k[0];
	int8_t *ac = (int8_t *)(y->data + cf->ac) + b * 64;
	int wide;
	/* the AC bytes saturated (a wide coefficient's byte is replaced by its record) */
#if defined(__SSE2__)
	__m128i v[8], lo, hi;
	for (int i = 0; i < 8; i++)
		v[i] = _mm_loadu_si128((const __m128i *)(k + 8 * i));
	v[0] = _mm_insert_epi16(v[0], 0, 0); /* the DC has its word */
	lo = hi = v[0];
	for (int i = 1; i < 8; i++) {
		lo = _mm_min_epi16(lo, v[i]);
		hi = _mm_max_epi16(hi, v[i]);
	}
	__m128i out = _mm_or_si128(_mm_cmplt_epi16(lo, _mm_set1_epi16(-128)),
	                           _mm_cmpgt_epi16(hi, _mm_set1_epi16(127)));
	wide = _mm_movemask_epi8(out) != 0;
	for (int i = 0; i < 4; i++)
		_mm_storeu_si128((__m128i *)(ac + 16 * i), _mm_packs_epi16(v[2 * i], v[2 * i + 1]));
#else
	wide = 0;
	ac[0] = 0;
	for (int i = 1; i < 64; i++) {
		wide |= k[i] < -128 || k[i] > 127;
		ac[i] = (int8_t)(k[i] < -128 ? -128 : k[i] > 127 ? 127 : k[i]);
	}
#endif
	if (wide) { /* a record for each coefficient past 8 bits */
		for (int i = 1; i < 64; i++) {
			if (k[i] >= -128 && k[i] <= 127)
				continue;
			if (cf->novf == d->ovf_cap[c]) { /* past the room: planes instead, at once */
				d->full = 1;
				longjmp(d->jb, 1);
			}
			if (cf->novf == d->ovf_have[c]) {
				int n = d->ovf_have[c] ? 2 * d->ovf_have[c] : 256;
				n = n < d->ovf_cap[c] ? n : d->ovf_cap[c];
				unsigned char *m = realloc(d->ovf[c], (size_t)n * YUV_COEF_OVF_BYTES);
				if (!m) {
					d->nomem = 1;
					longjmp(d->jb, 1);
				}
				d->ovf[c] = m;
				d->ovf_have[c] = n;
			}
			uint32_t r[2] = {(uint32_t)b, (uint32_t)i | (uint32_t)(uint16_t)k[i] << 16};
			memcpy(d->ovf[c] + (size_t)cf->novf++ * YUV_COEF_OVF_BYTES, r, 8);
		}
		dc |= 1u << 16;
	}
	memcpy(y->data + cf->dc + b * 4, &dc, 4);
}

/* Rows [from, from + n) of component c's blocks (rows[i] is row from + i), as far as it has
 * rows. */
static void pack_rows(struct cdec *d, int c, JBLOCKARRAY rows, JDIMENSION from, JDIMENSION n)
{
	const struct yuv_coefs *cf = &d->out->cf[c];
	for (JDIMENSION i = 0; i < n && from + i < (JDIMENSION)cf->bh; i++)
		for (int x = 0; x < cf->bw; x++)
			pack_block(d, c, (size_t)(from + i) * cf->bw + x, rows[i][x]);
}

static jvirt_barray_ptr ring_request(j_common_ptr c, int pool, boolean pre_zero, JDIMENSION bpr,
                                     JDIMENSION nrows, JDIMENSION maxaccess)
{
	struct cdec *d = (struct cdec *)c;
	if (d->nring == 3)
		return d->request(c, pool, pre_zero, bpr, nrows, maxaccess);
	struct ring *r = &d->ring[d->nring++];
	r->bpr = bpr, r->nrows = nrows, r->maxaccess = maxaccess;
	r->rows = (*c->mem->alloc_barray)(c, JPOOL_IMAGE, bpr, maxaccess);
	r->filled = 0;
	return (jvirt_barray_ptr)r;
}

static JBLOCKARRAY ring_access(j_common_ptr c, jvirt_barray_ptr p, JDIMENSION start,
                               JDIMENSION n, boolean writable)
{
	struct cdec *d = (struct cdec *)c;
	int k = 0;
	while (k < d->nring && p != (jvirt_barray_ptr)&d->ring[k])
		k++;
	if (k == d->nring)
		return d->access(c, p, start, n, writable);
	struct ring *r = &d->ring[k];
	if (n > r->maxaccess || start < (r->filled ? r->start : 0))
		ERREXIT(c, JERR_BAD_VIRTUAL_ACCESS); /* a single scan goes forward only */
	if (!r->filled || start != r->start) {
		if (r->filled)
			pack_rows(d, k, r->rows, r->start, r->maxaccess);
		for (JDIMENSION i = 0; i < r->maxaccess; i++)
			memset(r->rows[i], 0, (size_t)r->bpr * sizeof(JBLOCK));
		r->start = start;
		r->filled = 1;
	}
	return r->rows;
}

/* The coefficient layout of y (planes laid out already): DC words, AC records, the quantisation
 * tables, then room for the components' wide coefficients' records (two a block of each),
 * which go there, one component after another, once decoded; sets y->bytes to the room it all
 * needs. */
static void coef_layout(struct cdec *d, struct yuv_image *y, const struct jpeg_decompress_struct *ci)
{
	size_t at = 0;
	int n = ci->num_components;
	for (int c = 0; c < n; c++) {
		const jpeg_component_info *cp = &ci->comp_info[c];
		/* the coefficient controller's arrays: whole MCUs of each component */
		y->cf[c].bw = (int)((cp->width_in_blocks + cp->h_samp_factor - 1) / cp->h_samp_factor *
		                    cp->h_samp_factor);
		y->cf[c].bh = (int)((cp->height_in_blocks + cp->v_samp_factor - 1) / cp->v_samp_factor *
		                    cp->v_samp_factor);
		y->cf[c].dc = at;
		at += (size_t)y->cf[c].bw * y->cf[c].bh * 4;
	}
	for (int c = 0; c < n; c++) {
		y->cf[c].ac = at;
		at += (size_t)y->cf[c].bw * y->cf[c].bh * 64;
	}
	for (int c = 0; c < n; c++) {
		y->cf[c].quant = at;
		at += 128;
	}
	for (int c = 0; c < n; c++) {
		d->ovf_cap[c] = 2 * y->cf[c].bw * y->cf[c].bh;
		y->cf[c].ovf = at;
		at += (size_t)d->ovf_cap[c] * YUV_COEF_OVF_BYTES;
	}
	y->bytes = at;
}

/* d's error manager: errors back to d->jb, warnings kept (cerr_emit). */
static void errors_init(struct cdec *d)
{
	d->ci.err = jpeg_std_error(&d->pub);
	d->pub.error_exit = cerr_exit;
	d->pub.emit_message = cerr_emit;
}

/* After a longjmp to d->jb, or with a warning kept: the error, its message in err. */
static int failure(struct cdec *d, char *err)
{
	int rc = d->truncated || (d->msg[0] && strstr(d->msg, "Premature end")) ? IMAGE_E_TRUNCATED
	                                                                        : IMAGE_E_CORRUPT;
	return image_fail(err, rc, rc == IMAGE_E_TRUNCATED && d->warned ? "jpeg: image data "
	                  "truncated: %s" : "jpeg: %s", d->msg[0] ? d->msg : "decoding failed");
}

/* A decoder of buf in d with its header read (errors to d->jb, which the caller has set). */
static void open_decoder(struct cdec *d, const unsigned char *buf, size_t len)
{
	jpeg_create_decompress(&d->ci);
	d->progress.progress_monitor = scan_limit;
	d->ci.progress = &d->progress;
	jpeg_mem_src(&d->ci, buf, (unsigned long)len);
	jpeg_read_header(&d->ci, TRUE);
}

int image_jpeg_coefs(const unsigned char *buf, size_t len, int w, int h, int gray, int sx, int sy,
                     const struct yuv_memory *mem, struct yuv_image *out, char *err)
{
	/* volatile: read after a longjmp */
	struct cdec *volatile d = calloc(1, sizeof *d);
	if (!d)
		return image_fail(err, IMAGE_E_NOMEM, "jpeg: out of memory");
	int rc = yuv_image_layout(out, w, h, gray, sx, sy);
	if (rc) {
		free(d);
		return image_fail(err, rc, "jpeg: %dx%d planes", w, h);
	}
	out->coefs = 1;
	out->planes_bytes = out->bytes;
	d->out = out;
	struct jpeg_decompress_struct *ci = &d->ci;
	errors_init(d);
	if (setjmp(d->jb)) {
		if (d->full) /* past the room for wide coefficients: planes instead */
			rc = 1;
		else if (d->nomem)
			rc = image_fail(err, IMAGE_E_NOMEM, "jpeg: out of memory for the coefficients");
		else
			rc = failure(d, err);
		goto done;
	}
	open_decoder(d, buf, len);
	int n = ci->num_components;
	/* what the planes carry (checked by the caller through TurboJPEG's header) and what this
	 * packing assumes */
	if (n != (gray ? 1 : 3) || ci->data_precision != 8 ||
	    ci->comp_info[0].h_samp_factor != (gray ? 1 : sx) ||
	    ci->comp_info[0].v_samp_factor != (gray ? 1 : sy) ||
	    (!gray && (ci->comp_info[1].h_samp_factor != 1 || ci->comp_info[1].v_samp_factor != 1 ||
	               ci->comp_info[2].h_samp_factor != 1 || ci->comp_info[2].v_samp_factor != 1))) {
		rc = 1; /* planes instead */
		goto done;
	}
	coef_layout(d, out, ci);
	void *owner = NULL;
	out->data = mem && mem->alloc ? mem->alloc(mem->ctx, out->bytes, &owner) : NULL;
	if (out->data) {
		out->release = mem->release;
		out->owner = owner;
	} else if (!(out->data = malloc(out->bytes))) {
		rc = image_fail(err, IMAGE_E_NOMEM, "jpeg: cannot allocate %dx%d coefficients", w, h);
		goto done;
	}
	int single = !jpeg_has_multiple_scans(ci);
	if (single) {
		d->request = ci->mem->request_virt_barray;
		d->access = ci->mem->access_virt_barray;
		ci->mem->request_virt_barray = ring_request;
		ci->mem->access_virt_barray = ring_access;
	}
	jvirt_barray_ptr *arrays = jpeg_read_coefficients(ci);
	for (int c = 0; c < n; c++) {
		if (single) { /* the last rows still in the ring */
			if (c < d->nring && d->ring[c].filled)
				pack_rows(d, c, d->ring[c].rows, d->ring[c].start, d->ring[c].maxaccess);
			continue;
		}
		for (int r = 0; r < out->cf[c].bh; r++) {
			JBLOCKARRAY row = (*ci->mem->access_virt_barray)((j_common_ptr)ci, arrays[c],
			                                                 (JDIMENSION)r, 1, FALSE);
			pack_rows(d, c, row, (JDIMENSION)r, 1);
		}
	}
	if (single && d->nring != n)
		ERREXIT(ci, JERR_BAD_VIRTUAL_ACCESS);
	for (int c = 0; c < n; c++) {
		const JQUANT_TBL *q = ci->comp_info[c].quant_table;
		if (!q)
			ERREXIT1(ci, JERR_NO_QUANT_TABLE, ci->comp_info[c].quant_tbl_no);
		uint16_t t[64];
		for (int i = 0; i < 64; i++)
			t[i] = q->quantval[i];
		memcpy(out->data + out->cf[c].quant, t, 128);
	}
	/* planes where libjpeg's decoder would smooth: a progressive file's coefficient left
	 * unrefined (coef_bits not 0: its last scan's Al, -1 never scanned; read before
	 * jpeg_finish_decompress frees it) */
	int smooth = 0;
	for (int c = 0; !smooth && ci->progressive_mode && ci->coef_bits && c < n; c++)
		for (int k = 0; k < DCTSIZE2; k++)
			smooth |= ci->coef_bits[c][k] != 0;
	jpeg_finish_decompress(ci);
	if (d->warned) {
		rc = failure(d, err);
		goto done;
	}
	rc = smooth;
	/* the records after the rest, and the bytes up to the last */
	for (int c = 0, at = 0; !rc && c < n; c++) {
		size_t bytes = (size_t)out->cf[c].novf * YUV_COEF_OVF_BYTES;
		out->cf[c].ovf = out->cf[0].ovf + (size_t)at * YUV_COEF_OVF_BYTES;
		if (bytes)
			memcpy(out->data + out->cf[c].ovf, d->ovf[c], bytes);
		at += out->cf[c].novf;
		out->coef_bytes = out->cf[c].ovf + bytes;
	}
done:
	jpeg_destroy_decompress(ci);
	if (rc)
		yuv_image_free(out);
	for (int c = 0; c < 3; c++)
		free(d->ovf[c]);
	free(d);
	return rc;
}

int image_jpeg_scans_check(const unsigned char *buf, size_t len, char *err)
{
	struct cdec *volatile d = calloc(1, sizeof *d);
	if (!d)
		return image_fail(err, IMAGE_E_NOMEM, "jpeg: out of memory");
	struct jpeg_decompress_struct *ci = &d->ci;
	errors_init(d);
	int rc = 0;
	if (setjmp(d->jb)) {
		rc = failure(d, err);
		goto done;
	}
	open_decoder(d, buf, len);
	jpeg_read_coefficients(ci);
	jpeg_finish_decompress(ci);
	if (d->warned)
		rc = failure(d, err);
done:
	jpeg_destroy_decompress(ci);
	free(d);
	return rc;
}

/* The inverse DCT's basis, c[i][f] = C(f)/2 cos((2i + 1) f pi / 16), C(0) = 1/sqrt(2). The
 * GPU's pass (gles/shaders/jpeg_idct.comp) computes the same sums in the same order (a compiler
 * may fuse their multiplies and adds otherwise: a sample 1 apart at most). */
static void basis(float c[8][8])
{
	for (int i = 0; i < 8; i++)
		for (int f = 0; f < 8; f++)
			c[i][f] = (float)((f ? 0.5 : 0.35355339059327373) *
			                  cos((2 * i + 1) * f * 3.14159265358979323846 / 16));
}

int yuv_coefs_to_planes(const struct yuv_image *in, struct yuv_image *out)
{
	memset(out, 0, sizeof *out);
	if (!in->coefs || in->scan || !in->data)
		return IMAGE_E_ARG;
	int rc = yuv_image_alloc(out, in->width, in->height, in->gray, in->sub_x, in->sub_y);
	if (rc)
		return rc;
	out->orientation = in->orientation;
	float c[8][8];
	basis(c);
	for (int p = 0; p < (in->gray ? 1 : 3); p++) {
		const struct yuv_coefs *cf = &in->cf[p];
		uint16_t q[64];
		memcpy(q, in->data + cf->quant, 128);
		for (int by = 0; by < cf->bh && by * 8 < out->ph[p]; by++)
			for (int bx = 0; bx < cf->bw && bx * 8 < out->pw[p]; bx++) {
				size_t b = (size_t)by * cf->bw + bx;
				uint32_t dc;
				memcpy(&dc, in->data + cf->dc + b * 4, 4);
				int16_t k[64];
				const int8_t *ac = (const int8_t *)(in->data + cf->ac) + b * 64;
				for (int i = 1; i < 64; i++)
					k[i] = ac[i];
				k[0] = (int16_t)(uint16_t)dc;
				if (dc >> 16) { /* its wide coefficients' records: the first at lo */
					int lo = 0, hi = cf->novf, n = 0;
					while (lo < hi) {
						int mid = lo + (hi - lo) / 2;
						uint32_t idx;
						memcpy(&idx, in->data + cf->ovf + (size_t)mid * YUV_COEF_OVF_BYTES, 4);
						if (idx < b)
							lo = mid + 1;
						else
							hi = mid;
					}
					for (uint32_t r[2]; lo < cf->novf; lo++, n++) {
						memcpy(r, in->data + cf->ovf + (size_t)lo * YUV_COEF_OVF_BYTES, 8);
						if (r[0] != b)
							break;
						k[(r[1] & 0xffffu) & 63u] = (int16_t)(uint16_t)(r[1] >> 16);
					}
					if (!n) {
						yuv_image_free(out);
						return IMAGE_E_CORRUPT;
					}
				}
				float f[64], t[64];
				for (int i = 0; i < 64; i++)
					f[i] = (float)k[i] * (float)q[i];
				for (int v = 0; v < 8; v++) /* rows: t[v][x] = sum_u c[x][u] f[v][u] */
					for (int x = 0; x < 8; x++) {
						float s = 0;
						for (int u = 0; u < 8; u++)
							s += c[x][u] * f[v * 8 + u];
						t[v * 8 + x] = s;
					}
				for (int yy = 0; yy < 8; yy++) /* columns: sum_v c[yy][v] t[v][x] */
					for (int x = 0; x < 8; x++) {
						float s = 0;
						for (int v = 0; v < 8; v++)
							s += c[yy][v] * t[v * 8 + x];
						int sy = by * 8 + yy, sx = bx * 8 + x;
						if (sy >= out->ph[p] || sx >= out->pw[p])
							continue;
						float r = floorf(s + 128.5f);
						out->data[out->offset[p] + (size_t)sy * out->stride[p] + sx] =
						    (unsigned char)(r < 0 ? 0 : r > 255 ? 255 : r);
					}
			}
	}
	return 0;
}
