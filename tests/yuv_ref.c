/* See yuv_ref.h. Written from the JFIF and sRGB formulas, not from the code under test. */
#include "tests/yuv_ref.h"

#include <math.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

static double srgb_decode(double v)
{
	return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

static double srgb_encode(double l)
{
	return l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1 / 2.4) - 0.055;
}

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static double sample(const struct yuv_image *y, int p, int x, int yy)
{
	x = clampi(x, 0, y->pw[p] - 1);
	yy = clampi(yy, 0, y->ph[p] - 1);
	return y->data[y->offset[p] + (size_t)yy * y->stride[p] + x];
}

/* chroma at luma pixel (x, y): chroma sample i covers luma sub*i .. sub*i+sub-1, centred at
 * sub*i + (sub-1)/2; bilinear between the two nearest samples (3/4, 1/4 when sub is 2) */
static double chroma(const struct yuv_image *y, int p, int x, int yy)
{
	/* libjpeg (jdsample.c) replicates instead when a horizontally halved plane is at most 2
	 * samples wide */
	if (y->sub_x == 2 && y->pw[1] <= 2)
		return sample(y, p, x / y->sub_x, yy / y->sub_y);
	double u = (x + 0.5) / y->sub_x - 0.5, v = (yy + 0.5) / y->sub_y - 0.5;
	int u0 = (int)floor(u), v0 = (int)floor(v);
	double fu = u - u0, fv = v - v0;
	return (1 - fv) * ((1 - fu) * sample(y, p, u0, v0) + fu * sample(y, p, u0 + 1, v0)) +
	       fv * ((1 - fu) * sample(y, p, u0, v0 + 1) + fu * sample(y, p, u0 + 1, v0 + 1));
}

int yuv_ref_to_image(const struct yuv_image *y, struct image *out)
{
	int o = y->orientation, w = y->width, h = y->height;
	int ow = o >= 5 ? h : w, oh = o >= 5 ? w : h, ch = y->gray ? 1 : 3;
	int rc = image_alloc(out, ow, oh, ch);
	if (rc)
		return rc;
	for (int oy = 0; oy < oh; oy++)
		for (int ox = 0; ox < ow; ox++) {
			int sx, sy;
			switch (o) {
			case 2: sx = w - 1 - ox; sy = oy; break;
			case 3: sx = w - 1 - ox; sy = h - 1 - oy; break;
			case 4: sx = ox; sy = h - 1 - oy; break;
			case 5: sx = oy; sy = ox; break;
			case 6: sx = oy; sy = h - 1 - ox; break;
			case 7: sx = w - 1 - oy; sy = h - 1 - ox; break;
			case 8: sx = w - 1 - oy; sy = ox; break;
			default: sx = ox; sy = oy; break;
			}
			float *d = out->pixels + ((size_t)oy * ow + ox) * ch;
			double Y = sample(y, 0, sx, sy);
			if (y->gray) {
				d[0] = (float)srgb_decode(Y / 255);
				continue;
			}
			double cb = chroma(y, 1, sx, sy) - 128, cr = chroma(y, 2, sx, sy) - 128;
			double rgb[3] = { Y + 1.402 * cr, Y - 0.344136286 * cb - 0.714136286 * cr,
					  Y + 1.772 * cb };
			for (int c = 0; c < 3; c++)
				d[c] = (float)srgb_decode(fmin(fmax(rgb[c], 0), 255) / 255);
		}
	return 0;
}

static const unsigned char bayer[8][8] = {
	{ 0, 32, 8, 40, 2, 34, 10, 42 },  { 48, 16, 56, 24, 50, 18, 58, 26 },
	{ 12, 44, 4, 36, 14, 46, 6, 38 }, { 60, 28, 52, 20, 62, 30, 54, 22 },
	{ 3, 35, 11, 43, 1, 33, 9, 41 },  { 51, 19, 59, 27, 49, 17, 57, 25 },
	{ 15, 47, 7, 39, 13, 45, 5, 37 }, { 63, 31, 55, 23, 61, 29, 53, 21 },
};

static int code8(double v, int x, int y, int dither, unsigned *lost)
{
	if (!(v >= 0)) { /* negative or NaN; a loss past IMAGE_CLIP_TOL */
		if (!(v >= -IMAGE_CLIP_TOL))
			*lost |= v < 0 ? IMAGE_LOST_NEGATIVE : IMAGE_LOST_RANGE;
		v = 0;
	} else if (v > 1) {
		if (v > 1 + IMAGE_CLIP_TOL)
			*lost |= IMAGE_LOST_RANGE;
		v = 1;
	}
	double off = dither ? (bayer[y & 7][x & 7] + 0.5) / 64 : 0.5;
	int c = (int)floor(srgb_encode(v) * 255 + off);
	return clampi(c, 0, 255);
}

int yuv_ref_from_image(const struct image *img, int gray, int sub_x, int sub_y, int dither,
                       struct yuv_image *out, unsigned *lost)
{
	int w = img->width, h = img->height, ch = img->channels;
	int rc = yuv_image_alloc(out, w, h, gray, sub_x, sub_y);
	if (rc)
		return rc;
	size_t n = (size_t)w * h;
	double *ycc = malloc(n * 3 * sizeof *ycc);
	if (!ycc) {
		yuv_image_free(out);
		return IMAGE_E_NOMEM;
	}
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			const float *s = img->pixels + ((size_t)y * w + x) * ch;
			double *d = ycc + ((size_t)y * w + x) * 3;
			if (gray) {
				d[0] = code8(s[0], x, y, dither, lost);
				continue;
			}
			double r = code8(s[0], x, y, dither, lost), g = code8(s[ch >= 3 ? 1 : 0], x, y, dither, lost),
			       b = code8(s[ch >= 3 ? 2 : 0], x, y, dither, lost);
			d[0] = 0.299 * r + 0.587 * g + 0.114 * b;
			d[1] = -0.168735892 * r - 0.331264108 * g + 0.5 * b + 128;
			d[2] = 0.5 * r - 0.418687589 * g - 0.081312411 * b + 128;
		}
	for (int p = 0; p < (gray ? 1 : 3); p++)
		for (int j = 0; j < out->ph[p]; j++)
			for (int i = 0; i < out->pw[p]; i++) {
				int sx = p ? out->sub_x : 1, sy = p ? out->sub_y : 1;
				double acc = 0;
				for (int b = 0; b < sy; b++)
					for (int a = 0; a < sx; a++) {
						int x = clampi(i * sx + a, 0, w - 1), y = clampi(j * sy + b, 0, h - 1);
						acc += ycc[((size_t)y * w + x) * 3 + p];
					}
				int v = (int)floor(acc / (sx * sy) + 0.5);
				out->data[out->offset[p] + (size_t)j * out->stride[p] + i] =
					(unsigned char)clampi(v, 0, 255);
			}
	free(ycc);
	return 0;
}

int yuv_ref_add_exif(const unsigned char *jpeg, size_t len, int o, unsigned char **out,
                     size_t *out_len)
{
	static const unsigned char head[] = {
		0xff, 0xe1, 0x00, 0x22, 'E', 'x', 'i', 'f', 0, 0,  /* APP1, length 34 */
		'I', 'I', 0x2a, 0x00, 0x08, 0x00, 0x00, 0x00,       /* TIFF, IFD at 8 */
		0x01, 0x00,                                          /* one entry */
		0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00,     /* 0x0112 SHORT x1 */
		0x00, 0x00, 0x00, 0x00,                              /* value (set below) */
		0x00, 0x00, 0x00, 0x00,                              /* no next IFD */
	};
	if (len < 4 || jpeg[0] != 0xff || jpeg[1] != 0xd8)
		return -1;
	unsigned char *b = malloc(len + sizeof head);
	if (!b)
		return -1;
	memcpy(b, jpeg, 2);
	memcpy(b + 2, head, sizeof head);
	b[2 + 28] = (unsigned char)o;
	memcpy(b + 2 + sizeof head, jpeg + 2, len - 2);
	*out = b;
	*out_len = len + sizeof head;
	return 0;
}

/* ITU T.81 Annex K tables K.1 (luminance) and K.2 (chrominance), natural order, and the IJG
 * quality scaling (50: the tables; 100: all 1; clamped to 1-255 for baseline). */
static const int annex_k[2][64] = {
	{16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
	 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
	 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
	 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99},
	{17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99,
	 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99,
	 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
	 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99},
};

int yuv_ref_quant(int quality, int chroma, int i)
{
	int scale = quality < 50 ? 5000 / quality : 200 - 2 * quality;
	return clampi((annex_k[chroma != 0][i] * scale + 50) / 100, 1, 255);
}

int yuv_ref_dct(const struct yuv_image *planes, int quality, struct yuv_image *out)
{
	const struct yuv_image *y = planes;
	int rc = yuv_image_layout_dct(out, y->width, y->height, y->gray, y->sub_x, y->sub_y, quality);
	if (rc)
		return rc;
	if (!(out->data = malloc(out->bytes)))
		return IMAGE_E_NOMEM;
	double basis[8][8];
	for (int u = 0; u < 8; u++)
		for (int x = 0; x < 8; x++)
			basis[u][x] = (u ? 1 : sqrt(0.5)) / 2 * cos((2 * x + 1) * u * M_PI / 16);
	for (int p = 0; p < (y->gray ? 1 : 3); p++)
		for (int by = 0; by < out->ph[p]; by++)
			for (int bx = 0; bx < out->pw[p]; bx++) {
				double f[8][8];
				for (int j = 0; j < 8; j++)
					for (int i = 0; i < 8; i++) {
						/* past the plane: its edge sample (the planes' padding repeats the image's) */
						int sx = clampi(bx * 8 + i, 0, y->pw[p] - 1);
						int sy = clampi(by * 8 + j, 0, y->ph[p] - 1);
						f[j][i] = y->data[y->offset[p] + (size_t)sy * y->stride[p] + sx] - 128.0;
					}
				short *blk = (short *)(void *)(out->data + out->offset[p] +
				                               (size_t)by * out->stride[p]) + (size_t)bx * 64;
				for (int v = 0; v < 8; v++)
					for (int u = 0; u < 8; u++) {
						double F = 0;
						for (int j = 0; j < 8; j++)
							for (int i = 0; i < 8; i++)
								F += basis[u][i] * basis[v][j] * f[j][i];
						double q = F / yuv_ref_quant(quality, p, v * 8 + u);
						blk[v * 8 + u] = (short)(q < 0 ? -floor(-q + 0.5) : floor(q + 0.5));
					}
			}
	return 0;
}

int yuv_ref_jpeg_rows(const struct yuv_image *coef, unsigned char **out, size_t *out_len)
{
	const struct yuv_image *y = coef;
	struct jpeg_compress_struct ci;
	struct jpeg_error_mgr jerr;
	ci.err = jpeg_std_error(&jerr);
	jpeg_create_compress(&ci);
	ci.image_width = (JDIMENSION)y->width;
	ci.image_height = (JDIMENSION)y->height;
	ci.input_components = y->gray ? 1 : 3;
	ci.in_color_space = y->gray ? JCS_GRAYSCALE : JCS_YCbCr;
	jpeg_set_defaults(&ci);
	if (!y->gray) {
		ci.comp_info[0].h_samp_factor = y->sub_x;
		ci.comp_info[0].v_samp_factor = y->sub_y;
		for (int c = 1; c < 3; c++)
			ci.comp_info[c].h_samp_factor = ci.comp_info[c].v_samp_factor = 1;
	}
	jpeg_set_quality(&ci, y->dct_quality, TRUE);
	ci.restart_in_rows = 1;
	unsigned char *mem = NULL;
	unsigned long mlen = 0;
	jpeg_mem_dest(&ci, &mem, &mlen);
	int nc = y->gray ? 1 : 3;
	jvirt_barray_ptr arr[3];
	for (int c = 0; c < nc; c++)
		arr[c] = (*ci.mem->request_virt_barray)((j_common_ptr)&ci, JPOOL_IMAGE, TRUE,
		                                         (JDIMENSION)y->pw[c], (JDIMENSION)y->ph[c],
		                                         (JDIMENSION)(c ? 1 : y->sub_y));
	jpeg_write_coefficients(&ci, arr);
	for (int c = 0; c < nc; c++)
		for (int r = 0; r < y->ph[c]; r++) {
			JBLOCKARRAY row = (*ci.mem->access_virt_barray)((j_common_ptr)&ci, arr[c],
			                                                (JDIMENSION)r, 1, TRUE);
			memcpy(row[0], y->data + y->offset[c] + (size_t)r * y->stride[c],
			       (size_t)y->pw[c] * sizeof(JBLOCK));
		}
	jpeg_finish_compress(&ci);
	jpeg_destroy_compress(&ci);
	*out = mem;
	*out_len = mlen;
	return mem ? 0 : -1;
}
