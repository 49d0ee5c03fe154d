/* fftbloom bench's bloom suite (bench/bench_main.c runs it): the bloom's row transforms three ways
 * (bloom.rows.*), and the bloom itself, whole calls and its stages back to back, alone or
 * alternated frame by frame with a second configuration (--ab). */
#include <GLES3/gl31.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_json.h"
#include "bench/bench_util.h"
#include "bench/bench_internal.h"
#include "core/log.h"
#include "gles/bloom.h"
#include "gles/fft.h"
#include "gles/gpu_timer.h"
#include "api/request.h"

/* The bloom's row transforms on its padded buffer (w x h image, k x k kernel centred at k / 2,
 * padded as the bloom pads, fft_conv_frame_size), three ways, to measure two of its choices:
 * over the image's h rows of vec4 (the two packed complex planes an element, as the bloom runs),
 * over every padded row (no all-padding rows skipped), and over the h rows as two vec2 planes,
 * one pass each (no packing two planes an invocation). Forward and inverse, with the wisdom. */
int bench_rows(struct run_ctx *r, const struct workload *wl)
{
	const struct bench_cli *c = r->c;
	struct cli_gpu *g = r->g;
	struct gpu_timer *t = r->t;
	int w = wl->w, h = wl->h, k = wl->kw;
	int pw, ph;
	fft_conv_frame_size(w, h, k, k, k / 2, k / 2, &pw, &ph);
	struct fft_opts o4 = {.components = 4, .wisdom = g->wisdom, .probe = c->bc.rows_probe}, o2 = o4;
	o2.components = 2;
	struct fft_axis *a4 = NULL, *a2 = NULL;
	char err[FFT_ERR_LEN];
	if (fft_axis_create(g->pc, g->info, pw, 0, (size_t)pw * ph, ph, &o4, &log_process_sink, &a4, err) ||
	    fft_axis_create(g->pc, g->info, pw, 0, (size_t)pw * ph, ph, &o2, &log_process_sink, &a2, err)) {
		fprintf(stderr, "%s: %s\n", wl->id, err);
		fft_axis_destroy(a4);
		return -1;
	}
	size_t floats = (size_t)pw * ph * 4;
	float *data = malloc(floats * sizeof *data);
	GLuint b4[SETS], b2[SETS];
	glGenBuffers(SETS, b4);
	glGenBuffers(SETS, b2);
	for (int s = 0; s < SETS; s++) {
		for (size_t i = 0; i < floats; i++)
			data[i] = bench_frand();
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, b4[s]);
		glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(floats * 4), data, GL_DYNAMIC_COPY);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, b2[s]); /* two vec2 planes, one after the other */
		glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(floats * 4), data, GL_DYNAMIC_COPY);
	}
	free(data);
	double *ms[3];
	for (int m = 0; m < 3; m++)
		ms[m] = malloc((size_t)c->runs * sizeof(double));
	for (int i = 0; i < c->warmup + c->runs; i++) {
		double d[3][GPU_STAGE_COUNT];
		int s = i % SETS, bad = 0;
		size_t plane = (size_t)pw * ph; /* the second vec2 plane's offset, in vec2 elements */
		for (int m = 0; m < 3; m++) { /* each way in a sequence of its own */
			gpu_timer_start(t);
			for (int inv = 0; inv < 2; inv++) { /* forward then inverse: the data stays bounded */
				if (m == 0) {
					fft_axis_execute(a4, b4[s], 0, (size_t)pw, 1, h, inv);
				} else if (m == 1) {
					fft_axis_execute(a4, b4[s], 0, (size_t)pw, 1, ph, inv);
				} else {
					fft_axis_execute(a2, b2[s], 0, (size_t)pw, 1, h, inv);
					fft_axis_execute(a2, b2[s], plane, (size_t)pw, 1, h, inv);
				}
				gpu_timer_mark(t, inv ? GPU_STAGE_IROWS : GPU_STAGE_ROWS);
			}
			bad |= gpu_timer_read(t, d[m]);
		}
		if (bad) {
			i--;
			continue;
		}
		if (i >= c->warmup)
			for (int m = 0; m < 3; m++)
				ms[m][i - c->warmup] = d[m][GPU_STAGE_ROWS] + d[m][GPU_STAGE_IROWS];
	}
	double med[3];
	for (int m = 0; m < 3; m++) {
		med[m] = bench_median(ms[m], c->runs);
		free(ms[m]);
	}
	char variant[64], padded[32];
	bench_line_variant(r, wl, variant, sizeof variant);
	snprintf(padded, sizeof padded, "%dx%d", pw, ph);
	struct bench_line l;
	bench_line_begin(&l, stdout, &r->meta, wl->id, "fftbloom", variant);
	bench_metric(&l, "ms", med[0]);
	bench_metric(&l, "all_rows_ms", med[1]);
	bench_metric(&l, "two_planes_ms", med[2]);
	bench_detail_str(&l, "padded", padded);
	bench_detail_num(&l, "image_rows", h);
	bench_detail_num(&l, "padded_rows", ph);
	bench_common_detail(&l, r, wl);
	bench_line_end(&l, &r->meta);
	fprintf(stderr, "%-22s %5dx%-5d rows forward + inverse: the %d image rows vec4 %.3f ms, all %d "
	        "rows %.3f ms, image rows as two vec2 planes %.3f ms\n", wl->id, pw, ph, h, med[0], ph,
	        med[1], med[2]);
	glDeleteBuffers(SETS, b4);
	glDeleteBuffers(SETS, b2);
	fft_axis_destroy(a4);
	fft_axis_destroy(a2);
	return 0;
}

/* Whether the bloom's GPU stages (prefilter to composite) include `stage`: with fused columns
 * the fused column pass (and the transposes around it, transposed); else the column transforms,
 * the multiply and the inverse column transforms; the prefilter and the composite unless the
 * rows ran them. */
static int bloom_stage_runs(int stage, const struct bloom_stats *st)
{
	int fused = st->fused;
	switch (stage) {
	case GPU_STAGE_PREFILTER:
	case GPU_STAGE_COMPOSITE:
		return !st->ends_in_rows;
	case GPU_STAGE_COLS:
	case GPU_STAGE_MULTIPLY:
	case GPU_STAGE_ICOLS:
		return !fused;
	case GPU_STAGE_TRANSPOSE:
	case GPU_STAGE_TRANSPOSE_BACK:
		return fused == BLOOM_FUSED_TRANSPOSED;
	case GPU_STAGE_FUSED_COLS:
		return fused != 0;
	default:
		return 1;
	}
}

/* One configuration of a bloom workload: its context, its last stats and its runs' figures. */
enum { B_TOT, B_WALL, B_PREP, B_RB, B_UP, B_INCALL, B_NV };
struct bloom_side {
	struct run_ctx r; /* r.c: its options */
	struct bloom_ctx *b;
	struct bloom_stats st;
	double *v[B_NV], *st_ms[GPU_STAGE_COUNT];
};

static void side_line(struct bloom_side *sd, const struct workload *wl, const char *partner,
                      int tiles_x, int tiles_y)
{
	const struct run_ctx *r = &sd->r;
	const struct bloom_stats *st = &sd->st;
	int n = r->c->runs;
	double m[GPU_STAGE_COUNT], med[B_NV];
	for (int s = 0; s < GPU_STAGE_COUNT; s++)
		m[s] = bench_median(sd->st_ms[s], n);
	for (int s = 0; s < B_NV; s++)
		med[s] = bench_median(sd->v[s], n);
	char variant[64];
	struct bench_line l;
	bench_frame_begin(&l, r, wl, variant, sizeof variant);
	bench_metric(&l, "ms", med[B_TOT]);
	bench_metric(&l, "call_ms", med[B_WALL]);
	bench_metric(&l, "upload_ms", med[B_UP]);
	bench_metric(&l, "readback_ms", med[B_RB]);
	bench_metric(&l, "gpu_in_call_ms", med[B_INCALL]);
	bench_frame_sizes(&l, wl->w, wl->h, wl->kw, wl->kh, st->padded_w, st->padded_h);
	bench_detail_str(&l, "kernel_type", wl->gray ? "gray" : "colour");
	char tiles[32];
	snprintf(tiles, sizeof tiles, "%dx%d", tiles_x, tiles_y);
	bench_detail_str(&l, "tiles", tiles);
	bench_detail_str(&l, "ms_is", tiles_x * tiles_y > 1 ? "tiles_in_calls" : "back_to_back");
	if (partner)
		bench_detail_str(&l, "alternated_with", partner);
	bench_detail_num(&l, "frame_bytes", (double)r->g->frame_bytes);
	bench_detail_str(&l, "precision", wl->precision ? "fp16" : "fp32");
	bench_detail_str(&l, "fused", !st->fused ? "false" : st->fused == BLOOM_FUSED_IN_PLACE
	                                  ? "in_place" : "transposed");
	bench_detail_str(&l, "ends_in_rows", st->ends_in_rows ? "true" : "false");
	bench_detail_str(&l, "column_pairs", st->column_pairs ? "true" : "false");
	static const char *const multiply[] = {"pass", "shared", "registers", "shuffles"};
	bench_detail_str(&l, "column_multiply", multiply[st->column_multiply]);
	bench_detail_num(&l, "row_pitch", st->row_pitch);
	bench_detail_num(&l, "tile_columns", st->tile_columns);
	bench_detail_num(&l, "row_threads", st->row_threads);
	bench_detail_str(&l, "stages_timer", bench_timer_name(st->timed));
	bench_detail_num(&l, "prepare_ms", med[B_PREP]);
	bench_detail_open(&l, "stages_ms"); /* by gpu_stage_names, the ones this path runs */
	for (int s = GPU_STAGE_PREFILTER; s <= GPU_STAGE_COMPOSITE; s++)
		if (bloom_stage_runs(s, st))
			bench_detail_num(&l, gpu_stage_names[s], m[s]);
	bench_detail_close(&l);
	bench_common_detail(&l, r, wl);
	bench_line_end(&l, &r->meta);
	fprintf(stderr, "%-26s %-16s %5dx%-5d k %4dx%-4d -> %5dx%-5d  GPU %8.3f ms (", wl->id,
	        variant, wl->w, wl->h, wl->kw, wl->kh, st->padded_w, st->padded_h, med[B_TOT]);
	for (int s = GPU_STAGE_PREFILTER, first = 1; s <= GPU_STAGE_COMPOSITE; s++)
		if (bloom_stage_runs(s, st)) {
			fprintf(stderr, "%s%s %.3f", first ? "" : " ", gpu_stage_names[s], m[s]);
			first = 0;
		}
	fprintf(stderr, ")\n");
	fprintf(stderr, "      whole call %.3f ms on the host clock: prepare %.3f, upload %.3f, "
	        "read back %.3f; GPU stages inside the call %.3f ms\n", med[B_WALL], med[B_PREP],
	        med[B_UP], med[B_RB], med[B_INCALL]);
}

/* A bloom workload, kernel spectrum cached: whole calls (host clock: upload, read-back), then
 * the GPU stages back to back, timed by bloom_run's own timer, after up to BENCH_B2B_WARM_S of
 * them untimed. Inside whole calls the GPU idles while the host moves the frame, and the driver
 * lowers its clocks (on the H200: 2160p stages 1.1 ms back to back, 2-5 ms inside calls); both
 * figures are in the line. With --ab, a second
 * configuration runs frame by frame alternately with the first (each frame, each back-to-back
 * run), so both meet the same clocks; a line each. */
int bench_bloom(struct run_ctx *r, const struct workload *wl)
{
	const struct bench_cli *c = r->c;
	int w = wl->w, h = wl->h, kw = wl->kw, kh = wl->kh, gray = wl->gray;
	char err[BLOOM_ERR_LEN];
	struct bloom_side sides[2];
	int nsides = r->ab ? 2 : 1, rc = 0, n = c->runs;
	memset(sides, 0, sizeof sides);
	for (int k = 0; k < nsides; k++) {
		sides[k].r = *r;
		sides[k].r.c = k ? r->ab : c;
		for (int s = 0; s < B_NV; s++)
			sides[k].v[s] = malloc((size_t)n * sizeof(double));
		for (int s = 0; s < GPU_STAGE_COUNT; s++)
			sides[k].st_ms[s] = malloc((size_t)n * sizeof(double));
		if (!(sides[k].b = bench_bloom_ctx(&sides[k].r, wl)))
			rc = -1;
	}
	/* frames of 16M pixels and more: one image (4 GiB of floats at 16384x16384) */
	int sets = (size_t)w * h >= (16u << 20) ? 1 : SETS;
	struct image img[SETS], k;
	for (int s = 0; s < sets; s++) {
		image_alloc(&img[s], w, h, 4);
		for (size_t i = 0; i < (size_t)w * h * 4; i++)
			img[s].pixels[i] = 2.0f * fabsf(bench_frand());
	}
	image_alloc(&k, kw, kh, 3);
	for (size_t i = 0; i < (size_t)kw * kh * 3; i += 3) {
		float v = fabsf(bench_frand());
		k.pixels[i] = v;
		k.pixels[i + 1] = gray ? v : fabsf(bench_frand());
		k.pixels[i + 2] = gray ? v : fabsf(bench_frand());
	}
	struct request req;
	request_init(&req, REQUEST_BLOOM);
	struct bloom_params p = req.p;
	p.technique = wl->technique;
	p.precision = wl->precision;
	struct bloom_kernel kr = {&k, {0, 0}};
	bloom_kernel_digest(&k, kr.digest);
	for (int i = 0; i < c->warmup + n && !rc; i++)
		for (int s = 0; s < nsides && !rc; s++) {
			struct bloom_side *sd = &sides[s];
			struct bloom_stats *st = &sd->st;
			struct image out;
			rc = bloom_run(sd->b, BLOOM_OP_BLOOM, &img[i % sets], &kr, &p, BLOOM_TIME_STAGES,
			               &out, st, err);
			image_free(&out);
			if (i == 0)
				bench_idle_work(sd->b);
			if (i >= c->warmup && !rc) {
				int j = i - c->warmup;
				sd->v[B_INCALL][j] = st->gpu_ms;
				sd->v[B_WALL][j] = st->wall_ms;
				sd->v[B_PREP][j] = st->prepare_ms;
				sd->v[B_RB][j] = st->readback_ms;
				sd->v[B_UP][j] = st->stage_ms[GPU_STAGE_UPLOAD];
				sd->v[B_TOT][j] = st->gpu_ms; /* a tiled frame's: every tile's stages, in calls */
				for (int g = 0; g < GPU_STAGE_COUNT; g++)
					sd->st_ms[g][j] = st->stage_ms[g];
			}
		}
	/* back to back: one plan's stages again, so not for a tiled frame (its tiles' plan is
	 * rerun for the last tile only) */
	int tiles_x = sides[0].st.tiles_x > 0 ? sides[0].st.tiles_x : 1;
	int tiles_y = sides[0].st.tiles_y > 0 ? sides[0].st.tiles_y : 1;
	/* the whole calls left the GPU idle most of the time, and the driver's clocks with it: the
	 * stages run back to back untimed first, as long as --warm-seconds asks (at most
	 * BENCH_B2B_WARM_S), so that the timed runs do not meet the clocks on their way up */
	double warm_s = c->warm_seconds < BENCH_B2B_WARM_S ? c->warm_seconds : BENCH_B2B_WARM_S;
	for (double t0 = bench_now_s(); !rc && tiles_x * tiles_y == 1 && bench_now_s() - t0 < warm_s;)
		for (int s = 0; s < nsides && !rc; s++)
			rc = bloom_rerun_stages(sides[s].b, &sides[s].st, err);
	for (int i = 0; i < c->warmup + n && !rc && tiles_x * tiles_y == 1; i++)
		for (int s = 0; s < nsides && !rc; s++) {
			struct bloom_side *sd = &sides[s];
			rc = bloom_rerun_stages(sd->b, &sd->st, err);
			if (i >= c->warmup && !rc) {
				int j = i - c->warmup;
				sd->v[B_TOT][j] = sd->st.gpu_ms;
				for (int g = 0; g < GPU_STAGE_COUNT; g++)
					sd->st_ms[g][j] = sd->st.stage_ms[g];
			}
		}
	if (rc) {
		if (sides[0].b && (nsides == 1 || sides[1].b))
			fprintf(stderr, "%s %s: %s\n", wl->id, wl->variant, err);
	} else {
		char vn[2][64];
		for (int s = 0; s < nsides; s++)
			bench_line_variant(&sides[s].r, wl, vn[s], sizeof vn[s]);
		if (nsides > 1 && !strcmp(vn[0], vn[1])) { /* options the variant does not name */
			sides[1].r.ab_b = 1;
			bench_line_variant(&sides[1].r, wl, vn[1], sizeof vn[1]);
		}
		for (int s = 0; s < nsides; s++)
			side_line(&sides[s], wl, nsides > 1 ? vn[1 - s] : NULL, tiles_x, tiles_y);
	}
	for (int s = 0; s < sets; s++)
		image_free(&img[s]);
	image_free(&k);
	for (int k2 = 0; k2 < nsides; k2++) {
		for (int s = 0; s < B_NV; s++)
			free(sides[k2].v[s]);
		for (int s = 0; s < GPU_STAGE_COUNT; s++)
			free(sides[k2].st_ms[s]);
		bloom_ctx_destroy(sides[k2].b);
	}
	return rc;
}
