/* JPEG as quantised DCT coefficients through libjpeg's coefficient API: what is left of an
 * encode when the colour conversion, downsampling, forward DCT and quantisation were done
 * elsewhere (the GPU) is the entropy coding, jpeg_write_coefficients. libjpeg reads the caller's
 * blocks in place: its memory manager's access_virt_barray method (a documented replaceable
 * method, jpeglib.h's struct jpeg_memory_mgr) is wrapped to serve the caller's arrays. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>
#include <turbojpeg.h>

#include "codec/image_codec.h"

int yuv_image_layout_dct(struct yuv_image *y, int w, int h, int gray, int sub_x, int sub_y,
                         int quality)
{
	if (quality < 1 || quality > 100) {
		memset(y, 0, sizeof *y);
		return IMAGE_E_ARG;
	}
	int rc = yuv_image_frame(y, w, h, gray, sub_x, sub_y);
	if (rc)
		return rc;
	sub_x = y->sub_x, sub_y = y->sub_y;
	int mx = (w + 8 * sub_x - 1) / (8 * sub_x), my = (h + 8 * sub_y - 1) / (8 * sub_y);
	size_t at = 0;
	for (int p = 0; p < (gray ? 1 : 3); p++) {
		y->pw[p] = p ? mx : mx * sub_x;
		y->ph[p] = p ? my : my * sub_y;
		y->stride[p] = y->pw[p] * 128;
		y->offset[p] = at;
		at += (size_t)y->stride[p] * (size_t)y->ph[p];
	}
	y->dct_quality = quality;
	y->bytes = at;
	return 0;
}

/* libjpeg's errors: the message kept, control back to the caller's setjmp; warnings dropped
 * (a corrupt-data warning on decode is not a failure: libjpeg goes on as it can). */
struct jerr {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	char msg[JMSG_LENGTH_MAX];
};

static void jerr_exit(j_common_ptr c)
{
	struct jerr *e = (struct jerr *)c->err;
	(*c->err->format_message)(c, e->msg);
	longjmp(e->jb, 1);
}

static void jerr_emit(j_common_ptr c, int level)
{
	(void)c;
	(void)level;
}

static struct jpeg_error_mgr *jerr_init(struct jerr *e)
{
	memset(e, 0, sizeof *e);
	jpeg_std_error(&e->pub);
	e->pub.error_exit = jerr_exit;
	e->pub.emit_message = jerr_emit;
	return &e->pub;
}

/* An encoder's parameters for w x h, gray or YCbCr subsampled sub_x x sub_y, at quality. */
static void set_params(struct jpeg_compress_struct *ci, int w, int h, int gray, int sub_x,
                       int sub_y, int quality)
{
	ci->image_width = (JDIMENSION)w;
	ci->image_height = (JDIMENSION)h;
	ci->input_components = gray ? 1 : 3;
	ci->in_color_space = gray ? JCS_GRAYSCALE : JCS_YCbCr;
	jpeg_set_defaults(ci);
	if (!gray) {
		ci->comp_info[0].h_samp_factor = sub_x;
		ci->comp_info[0].v_samp_factor = sub_y;
		for (int c = 1; c < 3; c++)
			ci->comp_info[c].h_samp_factor = ci->comp_info[c].v_samp_factor = 1;
	}
	jpeg_set_quality(ci, quality, TRUE);
}

/* A Huffman table's codes by symbol (the derivation of the JPEG standard's Annex C, as libjpeg's
 * jpeg_make_c_derived_tbl), into codes[0..n). */
static void huff_codes(const JHUFF_TBL *t, uint32_t *codes, int n)
{
	memset(codes, 0, (size_t)n * sizeof *codes);
	unsigned code = 0;
	int p = 0;
	for (int len = 1; len <= 16; len++, code <<= 1)
		for (int i = 0; i < t->bits[len]; i++, p++, code++)
			if (t->huffval[p] < n)
				codes[t->huffval[p]] = code | (uint32_t)len << 16;
}

/* The tables libjpeg's encoder takes by default at quality: quantisation (luma, chroma; NULL:
 * not wanted) and Huffman codes (NULL: not wanted). 0 or IMAGE_E_NOMEM. */
static int default_tables(int quality, unsigned short luma[64], unsigned short chroma[64],
                          uint32_t *codes)
{
	struct jpeg_compress_struct ci;
	struct jerr e;
	ci.err = jerr_init(&e);
	if (setjmp(e.jb)) {
		jpeg_destroy_compress(&ci);
		return IMAGE_E_NOMEM;
	}
	jpeg_create_compress(&ci);
	set_params(&ci, 8, 8, 0, 1, 1, quality);
	for (int i = 0; luma && i < 64; i++) {
		luma[i] = ci.quant_tbl_ptrs[0]->quantval[i];
		chroma[i] = ci.quant_tbl_ptrs[1]->quantval[i];
	}
	if (codes) {
		huff_codes(ci.dc_huff_tbl_ptrs[0], codes, 16);
		huff_codes(ci.dc_huff_tbl_ptrs[1], codes + 16, 16);
		huff_codes(ci.ac_huff_tbl_ptrs[0], codes + 32, 256);
		huff_codes(ci.ac_huff_tbl_ptrs[1], codes + 288, 256);
	}
	jpeg_destroy_compress(&ci);
	return 0;
}

int image_jpeg_quant_tables(int quality, unsigned short luma[64], unsigned short chroma[64])
{
	if (quality < 1 || quality > 100)
		return IMAGE_E_ARG;
	return default_tables(quality, luma, chroma, NULL);
}

int image_jpeg_huff_codes(uint32_t codes[IMAGE_JPEG_HUFF_CODES])
{
	return default_tables(90, NULL, NULL, codes); /* the standard tables at any quality */
}

const unsigned char image_jpeg_natural[64] = {
	0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
	41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
	30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

struct out {
	unsigned char *p;
	size_t n;
};

static void put1(struct out *o, unsigned v) { o->p[o->n++] = (unsigned char)v; }
static void put2(struct out *o, unsigned v) { put1(o, v >> 8), put1(o, v & 0xff); }

static void put_dht(struct out *o, const JHUFF_TBL *t, unsigned index)
{
	unsigned n = 0;
	for (int i = 1; i <= 16; i++)
		n += t->bits[i];
	put2(o, 0xffc4), put2(o, 2 + 1 + 16 + n), put1(o, index);
	for (int i = 1; i <= 16; i++)
		put1(o, t->bits[i]);
	for (unsigned i = 0; i < n; i++)
		put1(o, t->huffval[i]);
}

/* The JPEG around an already coded scan (y->coded bytes at y->data): the markers libjpeg writes
 * before it for these parameters with restart_in_rows = 1 (jcmarker.c: SOI, JFIF APP0, DQT per
 * table, SOF0, DHT per table in the scan's order, DRI, SOS), the scan, EOI. */
static int encode_coded(const struct yuv_image *y, int quality, unsigned char **out,
                        size_t *out_len, char err[IMAGE_ERR_LEN])
{
	struct jpeg_compress_struct ci;
	struct jerr e;
	ci.err = jerr_init(&e);
	if (setjmp(e.jb)) {
		jpeg_destroy_compress(&ci);
		return image_fail(err, IMAGE_E_NOMEM, "jpeg: %s", e.msg);
	}
	jpeg_create_compress(&ci);
	set_params(&ci, y->width, y->height, y->gray, y->sub_x, y->sub_y, quality);
	int nc = ci.num_components, mcux = y->pw[y->gray ? 0 : 1]; /* MCUs a row: the DRI */
	size_t cap = y->coded + 1024;
	struct out o = {malloc(cap), 0};
	if (!o.p) {
		jpeg_destroy_compress(&ci);
		return image_fail(err, IMAGE_E_NOMEM, "jpeg: out of memory");
	}
	put2(&o, 0xffd8);
	put2(&o, 0xffe0), put2(&o, 16);
	put1(&o, 'J'), put1(&o, 'F'), put1(&o, 'I'), put1(&o, 'F'), put1(&o, 0);
	put1(&o, ci.JFIF_major_version), put1(&o, ci.JFIF_minor_version);
	put1(&o, ci.density_unit), put2(&o, ci.X_density), put2(&o, ci.Y_density);
	put1(&o, 0), put1(&o, 0);
	for (int t = 0; t < (nc > 1 ? 2 : 1); t++) { /* baseline: 8-bit entries (set_params) */
		const JQUANT_TBL *q = ci.quant_tbl_ptrs[t];
		put2(&o, 0xffdb), put2(&o, 67), put1(&o, (unsigned)t);
		for (int i = 0; i < 64; i++)
			put1(&o, q->quantval[image_jpeg_natural[i]]);
	}
	put2(&o, 0xffc0), put2(&o, (unsigned)(3 * nc + 8)), put1(&o, 8);
	put2(&o, (unsigned)y->height), put2(&o, (unsigned)y->width), put1(&o, (unsigned)nc);
	for (int c = 0; c < nc; c++) {
		const jpeg_component_info *ct = &ci.comp_info[c];
		put1(&o, (unsigned)ct->component_id);
		put1(&o, (unsigned)(ct->h_samp_factor << 4 | ct->v_samp_factor));
		put1(&o, (unsigned)ct->quant_tbl_no);
	}
	for (int t = 0; t < (nc > 1 ? 2 : 1); t++) {
		put_dht(&o, ci.dc_huff_tbl_ptrs[t], (unsigned)t);
		put_dht(&o, ci.ac_huff_tbl_ptrs[t], 0x10u | (unsigned)t);
	}
	put2(&o, 0xffdd), put2(&o, 4), put2(&o, (unsigned)mcux);
	put2(&o, 0xffda), put2(&o, (unsigned)(2 * nc + 6)), put1(&o, (unsigned)nc);
	for (int c = 0; c < nc; c++) {
		const jpeg_component_info *ct = &ci.comp_info[c];
		put1(&o, (unsigned)ct->component_id);
		put1(&o, (unsigned)(ct->dc_tbl_no << 4 | ct->ac_tbl_no));
	}
	put1(&o, 0), put1(&o, 63), put1(&o, 0);
	jpeg_destroy_compress(&ci);
	memcpy(o.p + o.n, y->data, y->coded);
	o.n += y->coded;
	put2(&o, 0xffd9);
	*out = o.p;
	*out_len = o.n;
	return 0;
}

int image_jpeg_scan(const unsigned char *jpeg, size_t len, size_t *at, size_t *n)
{
	size_t i = 2;
	if (len < 4 || jpeg[0] != 0xff || jpeg[1] != 0xd8 || jpeg[len - 2] != 0xff ||
	    jpeg[len - 1] != 0xd9)
		return IMAGE_E_CORRUPT;
	while (i + 4 <= len && jpeg[i] == 0xff) {
		size_t seg = (size_t)jpeg[i + 2] << 8 | jpeg[i + 3];
		int sos = jpeg[i + 1] == 0xda;
		i += 2 + seg;
		if (sos) {
			if (i > len - 2)
				return IMAGE_E_CORRUPT;
			*at = i;
			*n = len - 2 - i;
			return 0;
		}
	}
	return IMAGE_E_CORRUPT;
}

/* The caller's coefficient arrays behind libjpeg's virtual-array handles: a handle is the address
 * of a comp entry; access_virt_barray returns row pointers into the caller's memory and leaves
 * libjpeg's own arrays to the method it wrapped. */
struct coef_arrays {
	JBLOCKARRAY (*access)(j_common_ptr, jvirt_barray_ptr, JDIMENSION, JDIMENSION, boolean);
	struct coef_comp {
		JBLOCKROW *rows;
		JDIMENSION nrows;
	} comp[3];
	int ncomp;
};

static JBLOCKARRAY coef_access(j_common_ptr c, jvirt_barray_ptr ptr, JDIMENSION start,
                               JDIMENSION num, boolean writable)
{
	struct coef_arrays *a = c->client_data;
	for (int i = 0; i < a->ncomp; i++)
		if (ptr == (jvirt_barray_ptr)(void *)&a->comp[i]) {
			if (start > a->comp[i].nrows || num > a->comp[i].nrows - start)
				ERREXIT(c, JERR_BAD_VIRTUAL_ACCESS);
			return a->comp[i].rows + start;
		}
	return a->access(c, ptr, start, num, writable);
}

/* Row pointers of y's components into a (rows in one allocation); 0 or IMAGE_E_NOMEM. */
static int coef_rows(const struct yuv_image *y, struct coef_arrays *a)
{
	memset(a, 0, sizeof *a);
	a->ncomp = y->gray ? 1 : 3;
	size_t n = 0;
	for (int p = 0; p < a->ncomp; p++)
		n += (size_t)y->ph[p];
	JBLOCKROW *rows = malloc(n * sizeof *rows);
	if (!rows)
		return IMAGE_E_NOMEM;
	for (int p = 0; p < a->ncomp; p++) {
		a->comp[p].rows = rows;
		a->comp[p].nrows = (JDIMENSION)y->ph[p];
		for (int r = 0; r < y->ph[p]; r++)
			*rows++ = (JBLOCKROW)(void *)(y->data + y->offset[p] + (size_t)r * y->stride[p]);
	}
	return 0;
}

int image_encode_jpeg_dct(const struct yuv_image *y, int quality, unsigned char **out,
                          size_t *out_len, char err[IMAGE_ERR_LEN])
{
	if (quality != y->dct_quality)
		return image_fail(err, IMAGE_E_ARG, "jpeg: coefficients quantised at quality %d, not %d",
		                  y->dct_quality, quality);
	struct yuv_image want;
	int rc = yuv_image_layout_dct(&want, y->width, y->height, y->gray, y->sub_x, y->sub_y,
	                              quality);
	if (rc || want.bytes != y->bytes || !y->data || y->coded > y->bytes)
		return image_fail(err, IMAGE_E_ARG, "jpeg: coefficients: not a %dx%d layout",
		                  y->width, y->height);
	if (y->coded && (y->width > JPEG_MAX_DIMENSION || y->height > JPEG_MAX_DIMENSION))
		return image_fail(err, IMAGE_E_TOO_LARGE, "jpeg: %dx%d is past JPEG's %d pixels a side",
		                  y->width, y->height, (int)JPEG_MAX_DIMENSION);
	if (y->coded)
		return encode_coded(y, quality, out, out_len, err);
	int subsamp = y->gray ? TJSAMP_GRAY : y->sub_x == 1 ? (y->sub_y == 1 ? TJSAMP_444 : TJSAMP_440)
	                                                    : (y->sub_y == 1 ? TJSAMP_422 : TJSAMP_420);
	/* the worst case, so libjpeg never grows the buffer (volatile: set before the setjmp,
	 * read after a longjmp) */
	unsigned long cap = tjBufSize(y->width, y->height, subsamp);
	unsigned char *volatile buf = cap != (unsigned long)-1 ? malloc(cap) : NULL;
	struct coef_arrays a;
	if (!buf || coef_rows(y, &a)) {
		free(buf);
		return image_fail(err, IMAGE_E_NOMEM, "jpeg: out of memory");
	}
	struct jpeg_compress_struct ci;
	struct jerr e;
	ci.err = jerr_init(&e);
	unsigned char *dst = buf;
	unsigned long len = cap;
	if (setjmp(e.jb)) {
		rc = image_fail(err, IMAGE_E_ARG, "jpeg: encoding: %s", e.msg);
		jpeg_destroy_compress(&ci);
		if (dst != buf)
			free(dst);
		free(buf);
		free(a.comp[0].rows);
		return rc;
	}
	jpeg_create_compress(&ci);
	set_params(&ci, y->width, y->height, y->gray, y->sub_x, y->sub_y, quality);
	jpeg_mem_dest(&ci, &dst, &len);
	a.access = ci.mem->access_virt_barray;
	ci.mem->access_virt_barray = coef_access;
	ci.client_data = &a;
	jvirt_barray_ptr arrays[3];
	for (int p = 0; p < a.ncomp; p++)
		arrays[p] = (jvirt_barray_ptr)(void *)&a.comp[p];
	jpeg_write_coefficients(&ci, arrays);
	jpeg_finish_compress(&ci);
	jpeg_destroy_compress(&ci);
	free(a.comp[0].rows);
	if (dst != buf) /* grown after all: libjpeg's copy is the answer */
		free(buf);
	*out = dst;
	*out_len = len;
	return 0;
}
