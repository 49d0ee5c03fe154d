/* The GPU's JPEG entropy decoder (gles/jpeg_huffdec.h) against libjpeg-turbo's
 * jpeg_read_coefficients: a corpus cjpeg makes from fresh random pictures (every sampling the
 * daemon takes, restart intervals none / 1 MCU / several MCUs / 1 and several rows, qualities
 * 50-100, -optimize, sizes from 1x1 to a small bench-like 320x180) decodes to the same
 * coefficients bit for bit in the default chunks, and in 128-bit ones where their states settle
 * (else flagged); corrupt scans (bits flipped, bytes cut, restart markers dropped,
 * garbage after the scan) are flagged, or decode to exactly what libjpeg decodes cleanly:
 * never a different answer. Skipped without cjpeg (libjpeg-turbo-progs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <GLES3/gl31.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jerror.h>
#include <jpeglib.h>

#include "gles/egl.h"
#include "gles/gl_util.h"
#include "gles/jpeg_huffdec.h"
#include "tests/testutil.h"

static struct program_cache *g_pc;
static struct jpeg_huffdec *g_hd;

static int setup(void **state)
{
	(void)state;
	tu_seed_from_clock();
	if (!tu_gl_context() || program_cache_create("", NULL, &g_pc))
		return -1;
	return jpeg_huffdec_create(g_pc, &g_hd) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	jpeg_huffdec_destroy(g_hd);
	program_cache_destroy(g_pc);
	return 0;
}

/* libjpeg's coefficients: the reference */
struct ref {
	int ncomp, bw[3], bh[3];
	short *k[3]; /* 64 a block, natural order, blocks row by row */
};

struct rerr {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	int warned;
};

static void ref_exit(j_common_ptr c)
{
	longjmp(((struct rerr *)c->err)->jb, 1);
}

/* As codec/image_jpeg_coefs.c: a warning fails the frame but stray bytes between segments and
 * the JFIF version's */
static void ref_emit(j_common_ptr c, int level)
{
	int code = c->err->msg_code;
	if (level < 0 && code != JWRN_EXTRANEOUS_DATA && code != JWRN_JFIF_MAJOR)
		((struct rerr *)c->err)->warned = 1;
}

/* 0 with r filled, or -1 where libjpeg fails or warns */
static int ref_decode(const unsigned char *buf, size_t len, struct ref *r)
{
	struct jpeg_decompress_struct ci;
	struct rerr e;
	memset(r, 0, sizeof *r);
	ci.err = jpeg_std_error(&e.pub);
	e.pub.error_exit = ref_exit;
	e.pub.emit_message = ref_emit;
	e.warned = 0;
	if (setjmp(e.jb)) {
		jpeg_destroy_decompress(&ci);
		for (int c = 0; c < 3; c++)
			free(r->k[c]);
		return -1;
	}
	jpeg_create_decompress(&ci);
	jpeg_mem_src(&ci, buf, (unsigned long)len);
	jpeg_read_header(&ci, TRUE);
	jvirt_barray_ptr *a = jpeg_read_coefficients(&ci);
	r->ncomp = ci.num_components;
	for (int c = 0; c < r->ncomp && c < 3; c++) {
		jpeg_component_info *cp = &ci.comp_info[c];
		r->bw[c] = (int)((cp->width_in_blocks + cp->h_samp_factor - 1) / cp->h_samp_factor *
		                 cp->h_samp_factor);
		r->bh[c] = (int)((cp->height_in_blocks + cp->v_samp_factor - 1) / cp->v_samp_factor *
		                 cp->v_samp_factor);
		r->k[c] = malloc((size_t)r->bw[c] * r->bh[c] * 64 * sizeof(short));
		assert_non_null(r->k[c]);
		for (int y = 0; y < r->bh[c]; y++) {
			JBLOCKARRAY row = (*ci.mem->access_virt_barray)((j_common_ptr)&ci, a[c],
			                                                (JDIMENSION)y, 1, FALSE);
			for (int x = 0; x < r->bw[c]; x++)
				for (int i = 0; i < 64; i++)
					r->k[c][((size_t)y * r->bw[c] + x) * 64 + i] = row[0][x][i];
		}
	}
	jpeg_finish_decompress(&ci);
	jpeg_destroy_decompress(&ci);
	if (e.warned) {
		for (int c = 0; c < 3; c++)
			free(r->k[c]);
		return -1;
	}
	return 0;
}

static void ref_free(struct ref *r)
{
	for (int c = 0; c < 3; c++)
		free(r->k[c]);
}

static int have_cjpeg(void)
{
	return system("command -v cjpeg >/dev/null 2>&1") == 0;
}

/* A JPEG cjpeg makes of a w x h picture (a random gradient, random noise of amplitude `noise`
 * 0-255) with args; malloc'd, *len bytes. */
static unsigned char *make_jpeg(int w, int h, int gray, int noise, const char *args, size_t *len)
{
	char in[] = "/tmp/huffdec-XXXXXX";
	int fd = mkstemp(in);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	assert_non_null(f);
	int ch = gray ? 1 : 3;
	fprintf(f, "P%d\n%d %d\n255\n", gray ? 5 : 6, w, h);
	double g[3][3];
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < 3; i++)
			g[c][i] = tu_sym();
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			for (int c = 0; c < ch; c++) {
				double v = 128 + 100 * (g[c][0] * x / (w + 1.0) + g[c][1] * y / (h + 1.0)) +
				           noise * tu_sym();
				fputc(v < 0 ? 0 : v > 255 ? 255 : (int)v, f);
			}
	fclose(f);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "cjpeg %s %s %s", gray ? "-grayscale" : "", args, in);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t cap = 1 << 16, n = 0;
	unsigned char *out = malloc(cap);
	size_t got;
	while ((got = fread(out + n, 1, cap - n, p)) > 0) {
		n += got;
		if (n == cap)
			out = realloc(out, cap *= 2);
	}
	assert_int_equal(pclose(p), 0);
	unlink(in);
	*len = n;
	return out;
}

/* The GPU's decode of jpeg: 1 (scan not taken by the parser), 2 (flagged), or 0 with the
 * coefficients compared with r (which must have decoded) */
static int g_chunk_bits; /* 0: image_decode_jpeg_scan_into's chunks, else these */

static int gpu_decode(const unsigned char *jpeg, size_t len, const struct ref *r, int *mismatch)
{
	struct yuv_image y;
	char err[IMAGE_ERR_LEN];
	*mismatch = 0;
	int rc = image_decode_jpeg_scan_into(jpeg, len, NULL, NULL, &y, NULL, err);
	if (rc || !y.scan) {
		yuv_image_free(&y);
		return 1;
	}
	if (g_chunk_bits)
		assert_int_equal(image_jpeg_scan_chunks(&y, g_chunk_bits), 0);
	GLuint buf = gl_buf_new(y.coef_bytes, y.data, GL_STATIC_DRAW, NULL);
	assert_true(buf != 0);
	GLuint cb;
	struct yuv_image cy;
	char berr[BLOOM_ERR_LEN];
	rc = jpeg_huffdec_run(g_hd, &y, buf, &cb, &cy, NULL, berr);
	if (rc < 0)
		fail_msg("jpeg_huffdec_run: %s", berr);
	if (rc == JPEG_HUFFDEC_FLAGGED) {
		printf("  flagged: %s\n", berr);
		glDeleteBuffers(1, &buf);
		yuv_image_free(&y);
		return 2;
	}
	if (!r) { /* decoded what libjpeg refuses: the caller counts it */
		glDeleteBuffers(1, &buf);
		yuv_image_free(&y);
		*mismatch = 1;
		return 0;
	}
	size_t words = cy.cf[y.gray ? 0 : 2].ac / 4 +
	               (size_t)y.cf[y.gray ? 0 : 2].bw * y.cf[y.gray ? 0 : 2].bh * 64;
	glBindBuffer(GL_COPY_READ_BUFFER, cb);
	const int32_t *m = glMapBufferRange(GL_COPY_READ_BUFFER, 0, (GLsizeiptr)(words * 4),
	                                    GL_MAP_READ_BIT);
	assert_non_null(m);
	for (int c = 0; c < (y.gray ? 1 : 3); c++) {
		assert_int_equal(y.cf[c].bw, r->bw[c]);
		assert_int_equal(y.cf[c].bh, r->bh[c]);
		size_t n = (size_t)r->bw[c] * r->bh[c] * 64;
		const int32_t *g = m + cy.cf[c].ac / 4;
		for (size_t i = 0; i < n; i++)
			if (g[i] != r->k[c][i]) {
				if (!*mismatch)
					printf("  component %d block %zu index %zu: GPU %d, libjpeg %d\n", c,
					       i / 64, i % 64, g[i], r->k[c][i]);
				(*mismatch)++;
			}
	}
	glUnmapBuffer(GL_COPY_READ_BUFFER);
	glDeleteBuffers(1, &buf);
	yuv_image_free(&y);
	return 0;
}

/* The corpus: each decodes on the GPU (not flagged) to libjpeg's coefficients. */
static void test_corpus(void **state)
{
	(void)state;
	if (!have_cjpeg())
		skip();
	static const char *const samp[] = {"-sample 1x1", "-sample 2x1", "-sample 2x2",
	                                   "-sample 1x2", "gray"};
	static const char *const rst[] = {"", "-restart 1B", "-restart 3B", "-restart 1",
	                                  "-restart 2"};
	static const int sizes[][2] = {{1, 1}, {7, 3}, {17, 9}, {33, 31}, {64, 48}, {100, 75}};
	static const int quality[] = {50, 75, 90, 95, 100};
	int cases = 0, flagged = 0, bad = 0, small_flagged = 0;
	for (int s = 0; s < 5; s++)
		for (int r = 0; r < 5; r++)
			for (int z = 0; z < 2; z++) {
				int i = (s * 5 + r) * 2 + z;
				int w = sizes[(i + z) % 6][0], h = sizes[(i + z) % 6][1];
				int q = quality[i % 5], opt = (i / 3) % 2, noise = z ? 60 : 8;
				if (z && r == 0) /* the bench-like frame, once a sampling */
					w = 320, h = 180;
				char args[128];
				snprintf(args, sizeof args, "-quality %d %s %s %s", q, opt ? "-optimize" : "",
				         rst[r], s == 4 ? "" : samp[s]);
				size_t len;
				unsigned char *j = make_jpeg(w, h, s == 4, noise, args, &len);
				struct ref ref;
				assert_int_equal(ref_decode(j, len, &ref), 0);
				int mism, rc = gpu_decode(j, len, &ref, &mism);
				/* and in chunks of 128 bits: more chunks to synchronise */
				g_chunk_bits = 128;
				int mism2, rc2 = gpu_decode(j, len, &ref, &mism2);
				g_chunk_bits = 0;
				printf("%dx%d %s%s: %s; in 128-bit chunks %s\n", w, h, args,
				       s == 4 ? " -grayscale" : "",
				       rc == 1 ? "not taken" : rc == 2 ? "flagged" : mism ? "MISMATCH" : "same",
				       rc2 == 1 ? "not taken" : rc2 == 2 ? "flagged" : mism2 ? "MISMATCH" : "same");
				small_flagged += rc2 != 0;
				bad += rc2 == 0 && mism2;
				cases++;
				flagged += rc != 0;
				bad += rc == 0 && mism;
				ref_free(&ref);
				free(j);
			}
	/* chunks that small often do not resynchronise within one: the rounds may run out (flagged:
	 * libjpeg decodes), never a different answer */
	printf("%d frames: %d not decoded on the GPU (%d in 128-bit chunks), %d different\n", cases,
	       flagged, small_flagged, bad);
	assert_int_equal(bad, 0);
	assert_int_equal(flagged, 0);
}

/* Corrupt scans: flagged (libjpeg decides), or libjpeg decodes them cleanly to the same
 * coefficients. */
static void test_corrupt(void **state)
{
	(void)state;
	if (!have_cjpeg())
		skip();
	static const char *const args[] = {"-quality 85 -sample 2x2", "-quality 90 -restart 1",
	                                   "-quality 75 -restart 2B -sample 2x1"};
	int cases = 0, gpu = 0, bad = 0, ref_fail = 0;
	for (int a = 0; a < 3; a++) {
		size_t len;
		unsigned char *j = make_jpeg(48, 40, 0, 30, args[a], &len);
		size_t at, n;
		assert_int_equal(image_jpeg_scan(j, len, &at, &n), 0);
		unsigned char *c = malloc(len + 64);
		for (int t = 0; t < 24; t++) {
			size_t cl = len;
			memcpy(c, j, len);
			int kind = t % 6;
			size_t p = at + (size_t)(tu_uniform() * (double)n);
			if (kind == 0 || kind == 1) { /* bits flipped */
				c[p] ^= (unsigned char)(1u << (int)(tu_uniform() * 8));
				if (kind == 1)
					c[at + (size_t)(tu_uniform() * (double)n)] ^= 0x10;
			} else if (kind == 2) { /* cut, and the EOI after */
				cl = p;
				c[cl++] = 0xFF, c[cl++] = 0xD9;
			} else if (kind == 3) { /* bytes garbled: invalid codes likely */
				for (int i = 0; i < 4 && p + i < at + n; i++)
					c[p + i] = (unsigned char)(tu_uniform() * 255);
			} else if (kind == 4) { /* a restart marker dropped, or a byte cut */
				unsigned char *m = NULL;
				for (size_t i = at; i + 1 < at + n; i++)
					if (c[i] == 0xFF && c[i + 1] >= 0xD0 && c[i + 1] <= 0xD7) {
						m = c + i;
						break;
					}
				size_t q = m ? (size_t)(m - c) : p;
				size_t drop = m ? 2 : 1;
				memmove(c + q, c + q + drop, cl - q - drop);
				cl -= drop;
			} else { /* garbage after the scan, before EOI */
				cl = at + n;
				for (int i = 0; i < 5; i++)
					c[cl++] = (unsigned char)(tu_uniform() * 254);
				c[cl++] = 0xFF, c[cl++] = 0xD9;
			}
			struct ref ref;
			int rr = ref_decode(c, cl, &ref);
			int mism, rc = gpu_decode(c, cl, rr ? NULL : &ref, &mism);
			if (rc == 0 && rr) {
				printf("corrupt case %d (kind %d): the GPU decoded what libjpeg refuses\n", t,
				       kind);
				bad++;
			}
			bad += rc == 0 && !rr && mism;
			gpu += rc == 0;
			ref_fail += rr != 0;
			cases++;
			if (!rr)
				ref_free(&ref);
		}
		free(c);
		free(j);
	}
	printf("%d corrupt frames: libjpeg refused %d; the GPU decoded %d (the rest flagged or not "
	       "taken); %d different\n", cases, ref_fail, gpu, bad);
	assert_int_equal(bad, 0);
}

int main(void)
{
	tu_test_filter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_corrupt),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
