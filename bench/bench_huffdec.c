/* fftbloom bench's JPEG entropy decoding workloads (jpeg.huffdec.*): a frame of a smooth picture
 * with grain (as a camera's), encoded by libjpeg at the workload's quality and sampling (no
 * restart markers, libjpeg's standard tables), its scan decoded on the GPU (gles/jpeg_huffdec.h)
 * with GPU timer marks by stage (the first decode, the sync rounds, the prefix sums, the
 * writing), against libjpeg's entropy decoding of the same frame on this host's CPU
 * (image_decode_jpeg_coefs_into, what fftbloomd's codec thread does without
 * --jpeg-gpu-entropy-decode) and the header parse and scan copy that the codec thread does with
 * it. Medians of runs after warm-up. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_internal.h"
#include "bench/bench_util.h"
#include "core/clock.h"
#include "gles/gl_util.h"
#include "gles/jpeg_huffdec.h"

int bench_huffdec(struct run_ctx *r, const struct workload *wl)
{
	const struct bench_cli *c = r->c;
	char err[BLOOM_ERR_LEN], ierr[IMAGE_ERR_LEN];
	struct yuv_image pl, y;
	unsigned char *jpeg = NULL;
	size_t len = 0;
	if (bench_picture_planes(wl->w, wl->h, wl->gray ? 2 : 1, &pl) ||
	    image_encode_jpeg_yuv(&pl, wl->technique, &jpeg, &len, ierr)) {
		fprintf(stderr, "%s: no frame\n", wl->id);
		yuv_image_free(&pl);
		return -1;
	}
	yuv_image_free(&pl);
	if (image_decode_jpeg_scan_into(jpeg, len, NULL, NULL, &y, NULL, ierr) || !y.scan) {
		fprintf(stderr, "%s: the scan not taken: %s\n", wl->id, ierr);
		free(jpeg);
		return -1;
	}
	if (wl->kw && image_jpeg_scan_chunks(&y, wl->kw)) { /* a variant's chunks */
		fprintf(stderr, "%s: chunks of %d bits refused\n", wl->id, wl->kw);
		yuv_image_free(&y);
		free(jpeg);
		return -1;
	}
	struct jpeg_huffdec *h = NULL;
	GLuint buf = gl_buf_new(y.coef_bytes, y.data, GL_STATIC_DRAW, NULL);
	int n = c->runs, rc = !buf || jpeg_huffdec_create(r->g->pc, &h);
	enum { TOT, DEC, SYNC, WRITE, SCAN, CALL, LIBJPEG, PREP, NV };
	double *v[NV];
	for (int s = 0; s < NV; s++)
		v[s] = calloc((size_t)n, sizeof(double));
	for (int i = 0; i < c->warmup + n && !rc; i++) {
		GLuint cb;
		struct yuv_image cy;
		glFinish();
		double t0 = clock_ms();
		gpu_timer_start(r->t);
		rc = jpeg_huffdec_run(h, &y, buf, &cb, &cy, r->t, err);
		double t1 = clock_ms();
		double ms[GPU_STAGE_COUNT];
		if (rc || gpu_timer_read(r->t, ms))
			break;
		/* the codec thread's part with it, and libjpeg's decode without it */
		struct yuv_image a, b;
		double t2 = clock_ms();
		int arc = image_decode_jpeg_scan_into(jpeg, len, NULL, NULL, &a, NULL, ierr);
		double t3 = clock_ms();
		int brc = image_decode_jpeg_coefs_into(jpeg, len, NULL, NULL, &b, NULL, ierr);
		double t4 = clock_ms();
		yuv_image_free(&a);
		yuv_image_free(&b);
		if (arc || brc) {
			snprintf(err, sizeof err, "the frame did not decode on the CPU: %s", ierr);
			rc = -1;
		}
		if (i >= c->warmup) {
			int j = i - c->warmup;
			v[DEC][j] = ms[GPU_STAGE_HUFF_DECODE];
			v[SYNC][j] = ms[GPU_STAGE_HUFF_SYNC];
			v[WRITE][j] = ms[GPU_STAGE_HUFF_WRITE];
			v[SCAN][j] = ms[GPU_STAGE_HUFF_SCAN];
			v[TOT][j] = v[DEC][j] + v[SYNC][j] + v[WRITE][j] + v[SCAN][j];
			v[CALL][j] = t1 - t0;
			v[PREP][j] = t3 - t2;
			v[LIBJPEG][j] = t4 - t3;
		}
	}
	if (rc) {
		fprintf(stderr, "%s: %s\n", wl->id, rc == JPEG_HUFFDEC_FLAGGED || rc < 0 ? err : "no "
		        "GPU buffer or decoder");
	} else {
		double m[NV];
		char variant[64];
		struct bench_line l;
		bench_frame_medians(&l, r, wl, variant, sizeof variant, v, NV, n, m); /* ms: m[TOT] */
		bench_metric(&l, "decode_ms", m[DEC]);
		bench_metric(&l, "sync_ms", m[SYNC]);
		bench_metric(&l, "write_ms", m[WRITE]);
		bench_metric(&l, "scan_ms", m[SCAN]);
		bench_metric(&l, "call_ms", m[CALL]);
		bench_metric(&l, "cpu_libjpeg_ms", m[LIBJPEG]);
		bench_metric(&l, "cpu_scan_prepare_ms", m[PREP]);
		bench_metric(&l, "scan_bytes", (double)y.sc.nbytes);
		char s[32];
		snprintf(s, sizeof s, "%dx%d", wl->w, wl->h);
		bench_detail_str(&l, "image", s);
		bench_detail_num(&l, "quality", wl->technique);
		bench_detail_str(&l, "subsampling", wl->gray ? "420" : "444");
		bench_detail_num(&l, "chunks", y.sc.nchunks);
		bench_detail_num(&l, "chunk_bits", y.sc.chunk_bits);
		bench_common_detail(&l, r, wl);
		bench_line_end(&l, &r->meta);
		fprintf(stderr, "%-28s %-9s %5dx%-5d q%d %s  GPU %.3f ms (decode %.3f, sync %.3f, scan "
		        "%.3f, write %.3f), call %.3f ms; CPU: libjpeg %.3f ms, scan prepare "
		        "%.3f ms; %zu bytes, %d chunks\n", wl->id, variant, wl->w, wl->h, wl->technique,
		        wl->gray ? "420" : "444", m[TOT], m[DEC], m[SYNC], m[SCAN], m[WRITE],
		        m[CALL], m[LIBJPEG], m[PREP], y.sc.nbytes, y.sc.nchunks);
	}
	for (int s = 0; s < NV; s++)
		free(v[s]);
	jpeg_huffdec_destroy(h);
	if (buf)
		glDeleteBuffers(1, &buf);
	yuv_image_free(&y);
	free(jpeg);
	return rc ? -1 : 0;
}
