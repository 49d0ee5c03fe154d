/* A baseline JPEG made ready for entropy decoding on the GPU (codec/image.h, struct yuv_scan):
 * its markers parsed (SOF, DHT, DQT, DRI, SOS), its Huffman tables derived as libjpeg's jdhuff.c
 * derives them, and its scan copied with the stuffed zero bytes and restart markers taken out
 * (a memchr pass that checks the markers and counts, then one that copies). Anything it does not
 * take goes back to the caller (1) for libjpeg before any memory is taken. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/image_codec.h"

struct jtab { /* a Huffman table as DHT gives it */
	int defined;
	unsigned char bits[17]; /* codes of each length 1-16 */
	unsigned char vals[256];
	int nvals;
};

struct jhdr {
	int w, h, ncomp, id[3], hs[3], vs[3], tq[3];
	int have_quant[4];
	uint16_t quant[4][64]; /* natural order */
	struct jtab tab[8];    /* DC 0-3, AC 4-7 */
	int ri;
	int td[3], ta[3];      /* the scan's tables of each frame component */
	size_t scan_at;        /* the first byte after SOS */
};

static unsigned be16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* The markers up to the first SOS into *hd: 0, or 1 for what is not taken. */
static int parse_headers(const unsigned char *b, size_t len, struct jhdr *hd)
{
	memset(hd, 0, sizeof *hd);
	if (len < 4 || b[0] != 0xFF || b[1] != 0xD8)
		return 1;
	size_t i = 2;
	int sof = 0;
	for (;;) {
		if (i >= len || b[i] != 0xFF)
			return 1; /* stray bytes between segments: libjpeg warns, decides */
		while (i < len && b[i] == 0xFF)
			i++;
		if (i >= len)
			return 1;
		int m = b[i++];
		if (m == 0xD8 || m == 0xD9 || (m >= 0xD0 && m <= 0xD7) || m == 0x01)
			return 1; /* no segment expected here */
		if (i + 2 > len)
			return 1;
		size_t sl = be16(b + i);
		if (sl < 2 || i + sl > len)
			return 1;
		const unsigned char *s = b + i + 2;
		size_t n = sl - 2;
		i += sl;
		if (m == 0xC0 || m == 0xC1) { /* baseline or extended sequential, Huffman */
			if (sof || n < 6 || s[0] != 8)
				return 1;
			sof = 1;
			hd->h = (int)be16(s + 1), hd->w = (int)be16(s + 3), hd->ncomp = s[5];
			if (hd->w < 1 || hd->h < 1 || (hd->ncomp != 1 && hd->ncomp != 3) ||
			    n != 6 + 3 * (size_t)hd->ncomp)
				return 1;
			for (int c = 0; c < hd->ncomp; c++) {
				hd->id[c] = s[6 + 3 * c];
				hd->hs[c] = s[7 + 3 * c] >> 4, hd->vs[c] = s[7 + 3 * c] & 15;
				hd->tq[c] = s[8 + 3 * c];
				if (hd->tq[c] > 3)
					return 1;
				for (int k = 0; k < c; k++)
					if (hd->id[k] == hd->id[c])
						return 1;
			}
		} else if (m >= 0xC2 && m <= 0xCF && m != 0xC4 && m != 0xC8) {
			return 1; /* progressive, lossless, hierarchical, arithmetic */
		} else if (m == 0xDB) { /* DQT */
			size_t k = 0;
			while (k < n) {
				int pq = s[k] >> 4, tq = s[k] & 15;
				size_t need = 1 + (pq ? 128 : 64);
				if (pq > 1 || tq > 3 || k + need > n)
					return 1;
				for (int z = 0; z < 64; z++)
					hd->quant[tq][image_jpeg_natural[z]] =
						(uint16_t)(pq ? be16(s + k + 1 + 2 * z) : s[k + 1 + z]);
				hd->have_quant[tq] = 1;
				k += need;
			}
		} else if (m == 0xC4) { /* DHT */
			size_t k = 0;
			while (k < n) {
				if (k + 17 > n)
					return 1;
				int tc = s[k] >> 4, th = s[k] & 15, count = 0;
				if (tc > 1 || th > 3)
					return 1;
				struct jtab *t = &hd->tab[tc * 4 + th];
				t->bits[0] = 0;
				for (int l = 1; l <= 16; l++)
					count += t->bits[l] = s[k + l];
				if (count > 256 || k + 17 + (size_t)count > n)
					return 1;
				memcpy(t->vals, s + k + 17, (size_t)count);
				t->nvals = count;
				t->defined = 1;
				k += 17 + (size_t)count;
			}
		} else if (m == 0xDD) { /* DRI */
			if (n != 2)
				return 1;
			hd->ri = (int)be16(s);
		} else if (m == 0xDA) { /* SOS: one scan of every component, in the frame's order */
			if (!sof || n < 1 || s[0] != hd->ncomp || n != 4 + 2 * (size_t)hd->ncomp)
				return 1;
			for (int c = 0; c < hd->ncomp; c++) {
				if (s[1 + 2 * c] != hd->id[c])
					return 1;
				hd->td[c] = s[2 + 2 * c] >> 4, hd->ta[c] = s[2 + 2 * c] & 15;
				if (hd->td[c] > 3 || hd->ta[c] > 3)
					return 1;
			}
			const unsigned char *e = s + 1 + 2 * hd->ncomp;
			if (e[0] != 0 || e[1] != 63 || e[2] != 0)
				return 1; /* not sequential: libjpeg warns */
			hd->scan_at = i;
			return 0;
		} else if (m == 0xDC || m == 0xDE || m == 0xDF) {
			return 1; /* DNL, DHP, EXP */
		}
		/* APPn, COM and the rest: skipped (the orientation is read elsewhere) */
	}
}

/* Table t derived into w (YUV_SCAN_TABLE_WORDS words) as jdhuff.c's jpeg_make_d_derived_tbl:
 * 0, or 1 where libjpeg refuses it. */
static int derive(const struct jtab *t, int dc, uint32_t *w)
{
	int huffsize[257], p = 0;
	unsigned huffcode[257];
	for (int l = 1; l <= 16; l++)
		for (int i = 0; i < t->bits[l]; i++)
			huffsize[p++] = l;
	huffsize[p] = 0;
	int numsymbols = p;
	unsigned code = 0;
	int si = huffsize[0];
	p = 0;
	while (huffsize[p]) {
		while (huffsize[p] == si)
			huffcode[p++] = code++;
		if (code >= (1u << si))
			return 1;
		code <<= 1;
		si++;
	}
	int32_t maxcode[18], valoffset[17];
	p = 0;
	for (int l = 1; l <= 16; l++) {
		if (t->bits[l]) {
			valoffset[l] = p - (int32_t)huffcode[p];
			p += t->bits[l];
			maxcode[l] = (int32_t)huffcode[p - 1];
		} else {
			valoffset[l] = 0;
			maxcode[l] = -1;
		}
	}
	maxcode[0] = -1, valoffset[0] = 0;
	if (dc)
		for (int i = 0; i < numsymbols; i++)
			if (t->vals[i] > 15)
				return 1;
	/* the lookup table: each 9-bit prefix decoded as libjpeg's loop over lengths would */
	for (unsigned v = 0; v < (1u << YUV_SCAN_LUT_BITS); v++) {
		uint32_t e = 0;
		for (int l = 1; l <= YUV_SCAN_LUT_BITS; l++) {
			int32_t c = (int32_t)(v >> (YUV_SCAN_LUT_BITS - l));
			if (c <= maxcode[l]) {
				int idx = c + valoffset[l];
				e = (uint32_t)l << 8 | (idx >= 0 && idx < 256 ? t->vals[idx] : 0);
				break;
			}
		}
		w[v] = e;
	}
	for (int l = 0; l <= 16; l++) {
		w[512 + l] = (uint32_t)maxcode[l];
		w[529 + l] = (uint32_t)valoffset[l];
	}
	for (int i = 0; i < 256; i++)
		w[546 + i] = t->vals[i];
	return 0;
}

/* The entropy-coded bytes from at up to EOI unstuffed into out (or only counted when out is
 * NULL), each restart segment's first byte into seg (nseg of them expected): the count, or
 * (size_t)-1 for a scan it does not take. */
static size_t unstuff(const unsigned char *b, size_t len, size_t at, unsigned char *out,
                      uint32_t *seg, int nseg, int ri)
{
	size_t o = 0;
	int s = 1;
	if (seg)
		seg[0] = 0;
	for (;;) {
		const unsigned char *f = memchr(b + at, 0xFF, len - at);
		if (!f)
			return (size_t)-1; /* no EOI */
		size_t p = (size_t)(f - b);
		if (out)
			memcpy(out + o, b + at, p - at);
		o += p - at;
		size_t q = p + 1;
		while (q < len && b[q] == 0xFF)
			q++;
		if (q >= len)
			return (size_t)-1;
		int c = b[q];
		at = q + 1;
		if (c == 0) {
			if (out)
				out[o] = 0xFF;
			o++;
		} else if (c >= 0xD0 && c <= 0xD7) {
			if (!ri || s >= nseg || c != 0xD0 + (s - 1) % 8)
				return (size_t)-1; /* out of sequence: libjpeg resynchronises */
			if (seg)
				seg[s] = (uint32_t)o * 8;
			s++;
		} else if (c == 0xD9) {
			return s == nseg ? o : (size_t)-1;
		} else {
			return (size_t)-1; /* another marker inside the scan */
		}
	}
}

int image_jpeg_scan_chunks(struct yuv_image *y, int chunk_bits)
{
	if (!y->scan || !y->data || chunk_bits < 64 || chunk_bits > 65536 || chunk_bits % 32)
		return IMAGE_E_ARG;
	struct yuv_scan *sc = &y->sc;
	uint32_t *seg = (uint32_t *)(void *)(y->data + sc->segs), chunks = 0, cb = (uint32_t)chunk_bits;
	for (int s = 0; s < sc->nseg; s++) { /* each segment's bits cut (at least one chunk) */
		seg[sc->nseg + 1 + s] = chunks;
		uint32_t bits = seg[s + 1] - seg[s];
		chunks += bits ? (bits + cb - 1) / cb : 1;
	}
	seg[2 * sc->nseg + 1] = chunks;
	sc->nchunks = (int)chunks;
	sc->chunk_bits = chunk_bits;
	return 0;
}

int image_jpeg_scan_prepare(const unsigned char *buf, size_t len, int w, int h, int gray, int sx,
			    int sy, const struct yuv_memory *mem, struct yuv_image *out,
			    char err[IMAGE_ERR_LEN])
{
	struct jhdr hd;
	memset(out, 0, sizeof *out);
	if (parse_headers(buf, len, &hd) || hd.w != w || hd.h != h || hd.ncomp != (gray ? 1 : 3))
		return 1;
	if (gray ? hd.hs[0] != 1 || hd.vs[0] != 1
	         : hd.hs[0] != sx || hd.vs[0] != sy || hd.hs[1] != 1 || hd.vs[1] != 1 ||
	           hd.hs[2] != 1 || hd.vs[2] != 1)
		return 1;
	for (int c = 0; c < hd.ncomp; c++)
		if (!hd.have_quant[hd.tq[c]] || !hd.tab[hd.td[c]].defined || !hd.tab[4 + hd.ta[c]].defined)
			return 1; /* missing tables: libjpeg decides (standard tables, or an error) */
	int rc = yuv_image_layout(out, w, h, gray, sx, sy);
	if (rc) {
		memset(out, 0, sizeof *out);
		return image_fail(err, rc, "jpeg: %dx%d planes", w, h);
	}
	struct yuv_scan *sc = &out->sc;
	int hmax = gray ? 1 : sx, vmax = gray ? 1 : sy;
	sc->mcux = (w + 8 * hmax - 1) / (8 * hmax);
	sc->mcuy = (h + 8 * vmax - 1) / (8 * vmax);
	long long mcus = (long long)sc->mcux * sc->mcuy;
	sc->ri = hd.ri && hd.ri < mcus ? hd.ri : (int)mcus;
	if (mcus > (1ll << 30) / YUV_SCAN_MCU_BLOCKS) {
		memset(out, 0, sizeof *out);
		return image_fail(err, IMAGE_E_TOO_LARGE, "jpeg: %dx%d: too many blocks", w, h);
	}
	sc->nseg = (int)((mcus + sc->ri - 1) / sc->ri);
	int nb = 0;
	for (int c = 0; c < hd.ncomp; c++) {
		sc->hs[c] = (unsigned char)hd.hs[c], sc->vs[c] = (unsigned char)hd.vs[c];
		sc->dctab[c] = (unsigned char)hd.td[c], sc->actab[c] = (unsigned char)(4 + hd.ta[c]);
		for (int y = 0; y < hd.vs[c]; y++)
			for (int x = 0; x < hd.hs[c]; x++, nb++)
				sc->bcomp[nb] = (unsigned char)c, sc->bx[nb] = (unsigned char)x,
				sc->by[nb] = (unsigned char)y;
		out->cf[c].bw = sc->mcux * hd.hs[c];
		out->cf[c].bh = sc->mcuy * hd.vs[c];
	}
	sc->nblk = nb;
	/* the layout: tables, segments, quantisation tables, bytes (at most the file's) */
	/* everything that may refuse the file before memory is taken (a lent buffer is taken
	 * once a frame): the tables derived, the scan's markers checked and its bytes counted */
	uint32_t *tw = calloc(8 * YUV_SCAN_TABLE_WORDS, 4);
	if (!tw) {
		memset(out, 0, sizeof *out);
		return image_fail(err, IMAGE_E_NOMEM, "jpeg: out of memory");
	}
	for (int c = 0; c < hd.ncomp; c++) {
		int t[2] = {sc->dctab[c], sc->actab[c]};
		for (int k = 0; k < 2; k++)
			if (derive(&hd.tab[t[k]], k == 0, tw + (size_t)t[k] * YUV_SCAN_TABLE_WORDS)) {
				free(tw);
				memset(out, 0, sizeof *out);
				return 1;
			}
	}
	size_t scan_max = unstuff(buf, len, hd.scan_at, NULL, NULL, sc->nseg, hd.ri);
	if (scan_max == (size_t)-1) {
		free(tw);
		memset(out, 0, sizeof *out);
		return 1;
	}
	sc->tables = 0;
	sc->segs = 8 * YUV_SCAN_TABLE_WORDS * 4;
	size_t at = sc->segs + (size_t)(sc->nseg + 1) * 8;
	for (int c = 0; c < hd.ncomp; c++, at += 128)
		out->cf[c].quant = at;
	sc->bytes = at;
	if (scan_max > ((size_t)1 << 31) - at - 16) {
		free(tw);
		memset(out, 0, sizeof *out);
		return image_fail(err, IMAGE_E_TOO_LARGE, "jpeg: a scan of %zu bytes", scan_max);
	}
	size_t room = at + (scan_max + 3) / 4 * 4 + 8;
	out->coefs = 1;
	out->scan = 1;
	out->planes_bytes = out->bytes;
	void *owner = NULL;
	out->data = mem && mem->alloc ? mem->alloc(mem->ctx, room, &owner) : NULL;
	if (out->data) {
		out->release = mem->release;
		out->owner = owner;
	} else if (!(out->data = malloc(room))) {
		free(tw);
		memset(out, 0, sizeof *out);
		return image_fail(err, IMAGE_E_NOMEM, "jpeg: cannot allocate a %zu-byte scan", room);
	}
	out->bytes = room;
	unsigned char *d = out->data;
	memcpy(d + sc->tables, tw, 8 * YUV_SCAN_TABLE_WORDS * 4);
	free(tw);
	for (int c = 0; c < hd.ncomp; c++)
		memcpy(d + out->cf[c].quant, hd.quant[hd.tq[c]], 128);
	uint32_t *seg = (uint32_t *)(void *)(d + sc->segs);
	size_t n = unstuff(buf, len, hd.scan_at, d + sc->bytes, seg, sc->nseg, hd.ri);
	sc->nbytes = n; /* as counted */
	seg[sc->nseg] = (uint32_t)(n * 8);
	image_jpeg_scan_chunks(out, YUV_SCAN_CHUNK_BITS);
	/* bytes to big-endian words, two zero words after */
	unsigned char *p = d + sc->bytes;
	size_t words = (n + 3) / 4;
	memset(p + n, 0, words * 4 - n + 8);
	for (size_t i = 0; i < words; i++) {
		uint32_t v = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		             (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
		memcpy(p + 4 * i, &v, 4);
	}
	out->coef_bytes = sc->bytes + words * 4 + 8;
	return 0;
}
