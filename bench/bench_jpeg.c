/* fftbloom bench's "jpeg" suite: a JPEG answer's GPU side as fftbloomd runs it. A frame's decoded
 * planes (4:2:0, a smooth picture with grain, as a camera's) go in, the bloom runs with a gray
 * kernel, and the answer comes out as planes, quantised coefficients or the coded scan, in a
 * buffer lent as the daemon's codec threads get it. Per run, GPU stage times from the timer:
 * the upload (planes in, unpacked), the bloom's stages, the answer made (planes, or the DCT and
 * quantisation), its entropy coding, the download (moved to the mapped buffer); and the bytes
 * that cross the bus back. Median of runs after warm-up. With --jpeg-in coefs the frame goes in
 * as fftbloomd's codec threads decode it by default: its quantised DCT coefficients (the planes
 * encoded at quality 90 and decoded so), the upload then including the GPU's inverse DCT. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "bench/bench_internal.h"
#include "core/log.h"
#include "gles/bloom.h"
#include "api/request.h"

int bench_picture_planes(int w, int h, int sub, struct yuv_image *y)
{
	if (yuv_image_alloc(y, w, h, 0, sub, sub))
		return -1;
	for (int p = 0; p < 3; p++)
		for (int j = 0; j < y->ph[p]; j++)
			for (int i = 0; i < y->pw[p]; i++) {
				double v = p == 0 ? 128 + 70 * sin(i / 41.0) * cos(j / 29.0) + 12 * bench_frand()
				                  : 128 + 25 * sin((i + 3 * p) / 23.0) + 4 * bench_frand();
				y->data[y->offset[p] + (size_t)j * y->stride[p] + i] =
					(unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
			}
	return 0;
}

int bench_jpeg(struct run_ctx *r, const struct workload *wl)
{
	const struct bench_cli *c = r->c;
	char err[BLOOM_ERR_LEN];
	struct bloom_ctx *b = bench_bloom_ctx(r, wl);
	if (!b)
		return -1;
	struct yuv_image in;
	struct image k;
	if (bench_picture_planes(wl->w, wl->h, 2, &in) || image_alloc(&k, wl->kw, wl->kh, 1)) {
		fprintf(stderr, "%s: out of memory\n", wl->id);
		bloom_ctx_destroy(b);
		return -1;
	}
	if (!strcmp(c->jpeg_in, "coefs")) { /* the planes' own JPEG, decoded to its coefficients */
		unsigned char *jpeg = NULL;
		size_t len = 0;
		struct yuv_image co;
		char ierr[IMAGE_ERR_LEN];
		int irc = image_encode_jpeg_yuv(&in, 90, &jpeg, &len, ierr);
		if (!irc)
			irc = image_decode_jpeg_coefs_into(jpeg, len, NULL, NULL, &co, NULL, ierr);
		free(jpeg);
		yuv_image_free(&in);
		if (irc || !co.coefs) {
			fprintf(stderr, "%s: the frame's coefficients: %s\n", wl->id, irc ? ierr : "none");
			if (!irc)
				yuv_image_free(&co);
			image_free(&k);
			bloom_ctx_destroy(b);
			return -1;
		}
		in = co;
	}
	for (int j = 0; j < wl->kh; j++) /* a gaussian of sigma a sixth of the kernel */
		for (int i = 0; i < wl->kw; i++) {
			double dx = (i - wl->kw / 2) / (wl->kw / 6.0), dy = (j - wl->kh / 2) / (wl->kh / 6.0);
			k.pixels[(size_t)j * wl->kw + i] = (float)exp(-(dx * dx + dy * dy) / 2);
		}
	struct request req;
	request_init(&req, REQUEST_BLOOM);
	struct bloom_kernel kr = {&k, {0, 0}};
	bloom_kernel_digest(&k, kr.digest);
	struct bloom_frame f = {NULL, &in, NULL, 0};
	int n = c->runs, rc = 0;
	enum { TOT, UP, STAGES, ANSWER, ENTROPY, DOWN, WALL, OUT, NV };
	double *v[NV];
	for (int s = 0; s < NV; s++)
		v[s] = malloc((size_t)n * sizeof(double));
	struct bloom_stats st = {0};
	for (int i = 0; i < c->warmup + n && !rc; i++) {
		struct bloom_result res;
		memset(&res, 0, sizeof res);
		res.want_yuv = 1;
		res.sub_x = res.sub_y = wl->gray ? 2 : 1;
		res.dct_quality = wl->technique ? 90 : 0;
		res.entropy = wl->technique == 2;
		res.lend = 1;
		rc = bloom_run_frame(b, BLOOM_OP_BLOOM, &f, &kr, &req.p, BLOOM_TIME_STAGES, &res, &st,
		                     err);
		if (i == 0 && !rc)
			bench_idle_work(b);
		if (!rc && i >= c->warmup) {
			int j = i - c->warmup;
			double stages = 0;
			for (int s = GPU_STAGE_PREFILTER; s <= GPU_STAGE_COMPOSITE; s++)
				stages += st.stage_ms[s];
			v[ANSWER][j] = st.stage_ms[GPU_STAGE_ANSWER];
			v[ENTROPY][j] = st.stage_ms[GPU_STAGE_ENTROPY];
			v[TOT][j] = st.stage_ms[GPU_STAGE_UPLOAD] + stages + st.stage_ms[GPU_STAGE_ANSWER] +
			            st.stage_ms[GPU_STAGE_ENTROPY] + st.stage_ms[GPU_STAGE_DOWNLOAD];
			v[UP][j] = st.stage_ms[GPU_STAGE_UPLOAD];
			v[STAGES][j] = stages;
			v[DOWN][j] = st.stage_ms[GPU_STAGE_DOWNLOAD];
			v[WALL][j] = st.wall_ms;
			v[OUT][j] = (double)(res.yuv.coded ? res.yuv.coded : res.yuv.bytes);
		}
		if (!rc && res.lease) {
			res.yuv.data = NULL;
			bloom_lease_return(res.lease);
		}
		yuv_image_free(&res.yuv);
	}
	if (rc) {
		fprintf(stderr, "%s %s: %s\n", wl->id, wl->variant, err);
	} else {
		double m[NV];
		char variant[64];
		struct bench_line l;
		bench_frame_medians(&l, r, wl, variant, sizeof variant, v, NV, n, m); /* ms: m[TOT] */
		bench_metric(&l, "upload_ms", m[UP]);
		bench_metric(&l, "stages_ms", m[STAGES]);
		bench_metric(&l, "answer_ms", m[ANSWER]);
		if (wl->technique == 2) /* only the scan answer is entropy coded on the GPU */
			bench_metric(&l, "entropy_ms", m[ENTROPY]);
		bench_metric(&l, "download_ms", m[DOWN]);
		bench_metric(&l, "call_ms", m[WALL]);
		bench_metric(&l, "out_bytes", m[OUT]);
		bench_frame_sizes(&l, wl->w, wl->h, wl->kw, wl->kh, st.padded_w, st.padded_h);
		bench_detail_str(&l, "answer", wl->technique == 2 ? "scan" : wl->technique ? "coefficients"
		                                                                          : "planes");
		bench_detail_str(&l, "subsampling", wl->gray ? "420" : "444");
		bench_detail_str(&l, "stages_timer", bench_timer_name(st.timed));
		bench_common_detail(&l, r, wl);
		bench_line_end(&l, &r->meta);
		fprintf(stderr, "%-26s %-16s %5dx%-5d k %3dx%-3d  GPU %.3f ms: upload %.3f, stages %.3f, "
		        "answer %.3f, entropy %.3f, download %.3f; %.0f bytes back; call %.3f ms\n",
		        wl->id, variant, wl->w, wl->h, wl->kw, wl->kh, m[TOT], m[UP], m[STAGES],
		        m[ANSWER], m[ENTROPY], m[DOWN], m[OUT], m[WALL]);
	}
	for (int s = 0; s < NV; s++)
		free(v[s]);
	yuv_image_free(&in);
	image_free(&k);
	bloom_ctx_destroy(b);
	return rc;
}
