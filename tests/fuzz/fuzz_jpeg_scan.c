/* libFuzzer target for the GPU entropy decoder's input: a byte string that sniffs as JPEG goes
 * through image_decode_jpeg_scan_into (small limits). A scan it takes must be laid out within
 * its room (tables, segments ascending and ending at the bytes' end, chunks counted, each
 * component's blocks whole MCUs), and a CPU model of jpeg_huffdec.comp's rules (each segment
 * decoded from its start with the layout's lookup tables, maxcode and symbols; flagged on an
 * invalid code, a coefficient index past 63, blocks that end past the segment's bits) must agree
 * with libjpeg: where the model does not flag, image_decode_jpeg_coefs_into accepts the file
 * and its coefficients are the model's, bit for bit. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why)
{
	fprintf(stderr, "fuzz_jpeg_scan: %s\n", why);
	abort();
}

struct model {
	const uint32_t *w; /* the data as words */
	const struct yuv_image *y;
	size_t nwords;     /* the bytes' words, with the two zero ones */
};

static uint32_t word(const struct model *m, size_t i)
{
	return i < m->nwords ? m->w[m->y->sc.bytes / 4 + i] : 0;
}

static uint32_t peek16(const struct model *m, uint32_t pos)
{
	uint32_t w = pos >> 5, o = pos & 31, hi = word(m, w), lo = word(m, w + 1);
	uint32_t v = o ? hi << o | lo >> (32 - o) : hi;
	return v >> 16;
}

/* symbol | length << 8, 0 for an invalid code: as jpeg_huffdec.comp's huff */
static uint32_t huff(const struct model *m, int t, uint32_t pos)
{
	const uint32_t *tab = m->w + m->y->sc.tables / 4 + (size_t)t * YUV_SCAN_TABLE_WORDS;
	uint32_t v = peek16(m, pos), e = tab[v >> 7];
	if (e)
		return e;
	for (int l = 10; l <= 16; l++) {
		int32_t code = (int32_t)(v >> (16 - l));
		if (code <= (int32_t)tab[512 + l]) {
			int idx = code + (int32_t)tab[529 + l];
			idx = idx < 0 ? 0 : idx > 255 ? 255 : idx;
			return tab[546 + idx] | (uint32_t)l << 8;
		}
	}
	return 0;
}

static int extend(uint32_t v, uint32_t s)
{
	return v < (1u << (s - 1)) ? (int)v - (int)((1u << s) - 1) : (int)v;
}

/* The scan decoded sequentially into k (per component, 64 int32 a block): 0, or 1 flagged. */
static int model_decode(const struct model *m, int32_t *k[3])
{
	const struct yuv_scan *sc = &m->y->sc;
	const uint32_t *seg = m->w + sc->segs / 4;
	long mcus = (long)sc->mcux * sc->mcuy;
	for (int s = 0; s < sc->nseg; s++) {
		uint32_t pos = seg[s], end = seg[s + 1];
		int32_t pred[3] = {0, 0, 0};
		long first = (long)s * sc->ri, n = mcus - first < sc->ri ? mcus - first : sc->ri;
		for (long mcu = first; mcu < first + n; mcu++)
			for (int u = 0; u < sc->nblk; u++) {
				int c = sc->bcomp[u];
				long mx = mcu % sc->mcux, my = mcu / sc->mcux;
				long bx = mx * sc->hs[c] + sc->bx[u], by = my * sc->vs[c] + sc->by[u];
				int32_t *b = k[c] + (by * m->y->cf[c].bw + bx) * 64;
				uint32_t e = huff(m, sc->dctab[c], pos);
				if (!e)
					return 1;
				pos += e >> 8;
				uint32_t t = e & 15;
				int d = t ? extend(peek16(m, pos) >> (16 - t), t) : 0;
				pos += t;
				pred[c] = (int32_t)((uint32_t)pred[c] + (uint32_t)d); /* wraps as the GPU's */
				b[0] = (int16_t)pred[c];
				for (uint32_t z = 1; z < 64;) {
					e = huff(m, sc->actab[c], pos);
					if (!e)
						return 1;
					pos += e >> 8;
					uint32_t r = (e >> 4) & 15;
					t = e & 15;
					if (t) {
						z += r;
						if (z > 63)
							return 1;
						b[image_jpeg_natural[z]] = extend(peek16(m, pos) >> (16 - t), t);
						pos += t;
						z++;
					} else if (r == 15) {
						z += 16;
					} else {
						break;
					}
				}
			}
		if (pos > end)
			return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (image_sniff(data, size) != IMAGE_FORMAT_JPEG)
		return 0;
	struct image_limits lim = {.max_width = 2048, .max_height = 2048, .max_pixels = 1u << 20};
	struct yuv_image y, co;
	char err[IMAGE_ERR_LEN];
	if (image_decode_jpeg_scan_into(data, size, &lim, NULL, &y, NULL, err))
		return 0;
	if (!y.scan) { /* libjpeg's coefficients or planes: fuzz_jpeg_yuv's */
		yuv_image_free(&y);
		return 0;
	}
	const struct yuv_scan *sc = &y.sc;
	int nc = y.gray ? 1 : 3;
	size_t words = (sc->nbytes + 3) / 4 + 2;
	if (!y.coefs || sc->tables % 4 || sc->segs % 4 || sc->bytes % 4 ||
	    sc->segs < sc->tables + 8 * YUV_SCAN_TABLE_WORDS * 4 ||
	    sc->bytes < sc->segs + (size_t)(2 * sc->nseg + 2) * 4 ||
	    sc->bytes + words * 4 > y.bytes || y.coef_bytes != sc->bytes + words * 4 ||
	    sc->nseg < 1 || sc->ri < 1 || sc->nblk != (y.gray ? 1 : y.sub_x * y.sub_y + 2) ||
	    (long)sc->ri * (sc->nseg - 1) >= (long)sc->mcux * sc->mcuy ||
	    (long)sc->ri * sc->nseg < (long)sc->mcux * sc->mcuy)
		fail("the scan's layout breaks its invariants");
	const uint32_t *w = (const uint32_t *)(const void *)y.data;
	const uint32_t *seg = w + sc->segs / 4;
	uint32_t chunks = 0;
	for (int s = 0; s < sc->nseg; s++) {
		if (seg[s] > seg[s + 1] || seg[s] % 8 || seg[sc->nseg + 1 + s] != chunks)
			fail("segments out of order or chunks miscounted");
		uint32_t bits = seg[s + 1] - seg[s];
		chunks += bits ? (bits + (uint32_t)sc->chunk_bits - 1) / (uint32_t)sc->chunk_bits : 1;
	}
	if (sc->chunk_bits != YUV_SCAN_CHUNK_BITS || seg[sc->nseg] != sc->nbytes * 8 || seg[2 * sc->nseg + 1] != chunks ||
	    (int)chunks != sc->nchunks)
		fail("the segments do not end at the bytes' end");
	for (int c = 0; c < nc; c++)
		if (y.cf[c].bw != sc->mcux * sc->hs[c] || y.cf[c].bh != sc->mcuy * sc->vs[c] ||
		    y.cf[c].quant % 4 || y.cf[c].quant + 128 > sc->bytes)
			fail("a component's blocks are not whole MCUs");
	int32_t *k[3] = {NULL, NULL, NULL};
	for (int c = 0; c < nc; c++)
		if (!(k[c] = calloc((size_t)y.cf[c].bw * y.cf[c].bh * 64, 4)))
			fail("out of memory");
	struct model m = {w, &y, words};
	int flagged = model_decode(&m, k);
	if (!flagged) {
		if (image_decode_jpeg_coefs_into(data, size, &lim, NULL, &co, NULL, err))
			fail("the model decoded what libjpeg refuses");
		for (int c = 0; co.coefs && c < nc; c++) { /* planes instead: noise at quality 100 */
			const struct yuv_coefs *cf = &co.cf[c];
			if (cf->bw != y.cf[c].bw || cf->bh != y.cf[c].bh ||
			    memcmp(co.data + cf->quant, y.data + y.cf[c].quant, 128))
				fail("libjpeg's blocks or tables differ");
			size_t nb = (size_t)cf->bw * cf->bh;
			int r = 0;
			for (size_t b = 0; b < nb; b++) {
				int32_t dcw;
				memcpy(&dcw, co.data + cf->dc + b * 4, 4);
				if ((int16_t)dcw != k[c][b * 64])
					fail("a DC coefficient differs from libjpeg's");
				for (int i = 1; i < 64; i++) {
					int v = (int8_t)co.data[cf->ac + b * 64 + i];
					uint32_t rec[2];
					if (r < cf->novf) {
						memcpy(rec, co.data + cf->ovf + (size_t)r * 8, 8);
						if (rec[0] == b && (rec[1] & 0xffff) == (uint32_t)i) {
							v = (int16_t)(rec[1] >> 16);
							r++;
						}
					}
					if (v != k[c][b * 64 + i])
						fail("an AC coefficient differs from libjpeg's");
				}
			}
		}
		yuv_image_free(&co);
	}
	for (int c = 0; c < nc; c++)
		free(k[c]);
	yuv_image_free(&y);
	return 0;
}
