/* fftbloom bench: GPU time per run and per stage from GL timer queries (glFinish-bracketed wall
 * time where the driver has none), median of many runs after warm-up on random data, several
 * input sets rotated. One JSON object per line on stdout; a short table on stderr. */
#include <GLES3/gl31.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_util.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "protocol/request.h"
#include "daemon/log.h"
#include "gles/bloom.h"
#include "gles/fft.h"
#include "gles/gpu_timer.h"

#define SETS 3

struct bench_cli {
	struct gpu_config gpu;
	int runs, warmup, quick, repeat, reuse, finish, verbose;
	double warm_seconds;
	char only[OPT_STR_MAX];
};

static const struct opt_def own_table[] = {
	{"runs", OPT_INT, 3, 10000, "50", NULL, "timed runs per workload", NULL,
	 offsetof(struct bench_cli, runs)},
	{"warmup", OPT_INT, 0, 1000, "5", NULL, "untimed runs first", NULL,
	 offsetof(struct bench_cli, warmup)},
	{"quick", OPT_BOOL, 0, 1, "false", NULL, "small sizes only (for llvmpipe)", NULL,
	 offsetof(struct bench_cli, quick)},
	{"warm-seconds", OPT_DOUBLE, 0, 600, "3", NULL,
	 "keep the GPU busy this long before measuring, so its clocks have ramped up", NULL,
	 offsetof(struct bench_cli, warm_seconds)},
	{"only", OPT_STRING, 0, 0, "", NULL,
	 "run only the workloads whose kind (fft, rows, bloom) or label (\"fft 1080x1920 auto\", "
	 "\"1080p k256 fp16\") contains this; =LABEL: that label alone", NULL,
	 offsetof(struct bench_cli, only)},
	{"reuse", OPT_BOOL, 0, 1, "false", NULL,
	 "keep each bloom workload's context (plans, buffers) across --repeat rounds", NULL,
	 offsetof(struct bench_cli, reuse)},
	{"finish", OPT_BOOL, 0, 1, "false", NULL,
	 "glFinish after destroying a workload's context (GL object churn experiments)", NULL,
	 offsetof(struct bench_cli, finish)},
	{"repeat", OPT_INT, 1, 100, "1", NULL,
	 "run the whole list this many times in turn (A/B comparisons: clock drift spreads evenly)",
	 NULL, offsetof(struct bench_cli, repeat)},
	{"verbose", OPT_BOOL, 0, 1, "false", NULL,
	 "log at debug level on stderr: the FFT wisdom's measurement of every candidate shape", NULL,
	 offsetof(struct bench_cli, verbose)},
};

static unsigned long long g_rng = 88172645463325252ull;
static float frand(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return (float)((g_rng >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1;
}

/* Sustained GPU load (FFTs of a 2048x2048 buffer) for `seconds`: the first workloads measured
 * otherwise run while the GPU's clocks are still ramping up (seen on the H200: the same
 * workload 2-4x slower at the start of a process than a minute into it). */
static void warm_gpu(struct cli_gpu *g, double seconds)
{
	struct fft_opts o = {.technique = FFT_TECH_AUTO, .components = 2};
	struct fft *f;
	char err[FFT_ERR_LEN];
	if (seconds <= 0 || fft_create(g->pc, g->info, 2048, 2048, FFT_BOTH, &o, NULL, &f, err))
		return;
	size_t n = (size_t)2048 * 2048 * 2;
	float *data = malloc(n * sizeof *data);
	GLuint buf;
	glGenBuffers(1, &buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
	if (data)
		for (size_t i = 0; i < n; i++)
			data[i] = frand();
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(n * 4), data, GL_DYNAMIC_COPY);
	free(data);
	double t0 = bench_now_s();
	int runs = 0;
	while (bench_now_s() - t0 < seconds) {
		for (int i = 0; i < 10; i++) {
			fft_execute(f, buf, 0);
			fft_execute(f, buf, 1);
		}
		glFinish();
		runs += 10;
	}
	fprintf(stderr, "warm-up: %d forward+inverse 2048x2048 transforms in %.1f s\n", runs,
	        bench_now_s() - t0);
	glDeleteBuffers(1, &buf);
	fft_destroy(f);
}

static const char *tech_names[] = {"auto", "shared", "global", "blocked"};

/* --reuse: each bloom workload's context, by label, kept across rounds */
static struct {
	char label[64];
	struct bloom_ctx *b;
} kept[32];

/* --only: empty (all), a kind ("fft", "bloom"), a part of a label, or "=LABEL" exactly. */
static int selected(const struct bench_cli *c, const char *kind, const char *label)
{
	if (!c->only[0])
		return 1;
	if (c->only[0] == '=')
		return !strcmp(label, c->only + 1);
	return strstr(kind, c->only) || strstr(label, c->only);
}

/* A shared-technique plan's exchanges between passes, one letter each: m (shared memory), p
 * (shared memory at the padded index); "-" for the global technique. */
static const char *exchanges(const struct fft_plan *p, char *buf, size_t len)
{
	size_t k = 0;
	for (int i = 0; p->shared && i + 1 < p->npasses && k + 1 < len; i++)
		buf[k++] = p->pass[i].pad ? 'p' : 'm';
	if (!k && len > 1)
		buf[k++] = '-';
	buf[k] = 0;
	return buf;
}

/* One FFT workload: forward and inverse 2D complex float32 transforms of h x w, timed apart;
 * then, in runs of their own, the forward's rows and columns apart (a timer mark between the
 * axes costs a few microseconds, so the whole forward is timed without one). */
static int bench_fft(struct cli_gpu *g, struct gpu_timer *t, const struct bench_cli *c, int h,
                     int w, int technique)
{
	char label[64]; /* "fft HxW TECHNIQUE", matched by --only */
	snprintf(label, sizeof label, "fft %dx%d %s", h, w, tech_names[technique]);
	if (!selected(c, "fft", label))
		return 0;
	struct fft_opts o = {.technique = technique, .components = 2, .wisdom = g->wisdom};
	struct fft *f;
	char err[FFT_ERR_LEN];
	if (fft_create(g->pc, g->info, w, h, FFT_BOTH, &o, &log_gles_sink, &f, err)) {
		fprintf(stderr, "%s: %s\n", label, err);
		return -1;
	}
	size_t n = (size_t)w * h * 2;
	float *data = malloc(n * sizeof *data);
	GLuint bufs[SETS];
	glGenBuffers(SETS, bufs);
	for (int s = 0; s < SETS; s++) {
		for (size_t i = 0; i < n; i++)
			data[i] = frand();
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, bufs[s]);
		glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(n * 4), data, GL_DYNAMIC_COPY);
	}
	free(data);
	double *fwd = malloc((size_t)c->runs * sizeof *fwd), *inv = malloc((size_t)c->runs * sizeof *inv),
	       *fr = malloc((size_t)c->runs * sizeof *fr), *fc = malloc((size_t)c->runs * sizeof *fc);
	for (int split = 0; split < 2; split++) /* the whole forward and inverse; the axes apart */
		for (int i = 0; i < c->warmup + c->runs; i++) {
			GLuint b = bufs[i % SETS];
			double ms[GPU_STAGE_COUNT];
			gpu_timer_start(t);
			if (split) {
				fft_axis_execute(fft_rows(f), b, 0, (size_t)w, 1, h, 0);
				gpu_timer_mark(t, GPU_STAGE_ROWS);
				fft_axis_execute(fft_cols(f), b, 0, 1, (size_t)w, w, 0);
				gpu_timer_mark(t, GPU_STAGE_COLS);
			} else {
				fft_execute(f, b, 0); /* the forward whole: rows and columns */
				gpu_timer_mark(t, GPU_STAGE_ROWS);
			}
			fft_execute(f, b, 1); /* back again: the data stays bounded */
			gpu_timer_mark(t, GPU_STAGE_IROWS);
			if (gpu_timer_read(t, ms) < 0) {
				i--; /* disjoint: run again */
				continue;
			}
			if (i < c->warmup)
				continue;
			int k = i - c->warmup;
			if (split) {
				fr[k] = ms[GPU_STAGE_ROWS];
				fc[k] = ms[GPU_STAGE_COLS];
			} else {
				fwd[k] = ms[GPU_STAGE_ROWS];
				inv[k] = ms[GPU_STAGE_IROWS];
			}
		}
	const struct fft_plan *pr = fft_axis_plan(fft_rows(f)), *pc = fft_axis_plan(fft_cols(f));
	double mf = bench_median(fwd, c->runs), mi = bench_median(inv, c->runs),
	       mr = bench_median(fr, c->runs), mc = bench_median(fc, c->runs);
	char xr[32], xc[32];
	int csweeps = pc->blocked ? pc->nsweeps : pc->shared ? 1 : pc->npasses;
	printf("{\"workload\":\"fft\",\"label\":\"%s\",\"size\":\"%dx%d\",\"technique\":\"%s\","
	       "\"rows\":\"%s\",\"cols\":\"%s\",\"forward_ms\":%.4f,"
	       "\"forward_rows_ms\":%.4f,\"forward_cols_ms\":%.4f,\"inverse_ms\":%.4f,"
	       "\"forward_min_ms\":%.4f,\"runs\":%d,\"timer\":\"%s\","
	       "\"rows_exchanges\":\"%s\",\"cols_exchanges\":\"%s\","
	       "\"cols_dispatches\":%d,\"cols_signals\":%d,"
	       "\"rows_passes\":%d,\"cols_passes\":%d}\n",
	       label, h, w, tech_names[technique], fft_plan_kind(pr),
	       fft_plan_kind(pc), mf, mr, mc, mi, fwd[0], c->runs,
	       gpu_timer_kind(t) == GPU_TIMING_QUERIES ? "gl_timestamp" : "glfinish_wall", exchanges(pr, xr, sizeof xr),
	       exchanges(pc, xc, sizeof xc), csweeps, pc->signals, pr->npasses, pc->npasses);
	fprintf(stderr, "%-38s rows %-7s cols %-7s (%d dispatches, %d signals a group)  "
	        "forward %8.3f ms (rows %.3f cols %.3f)  inverse %8.3f ms\n", label, fft_plan_kind(pr),
	        fft_plan_kind(pc), csweeps, pc->signals, mf, mr, mc, mi);
	fflush(stdout);
	free(fwd), free(inv), free(fr), free(fc);
	glDeleteBuffers(SETS, bufs);
	fft_destroy(f);
	return 0;
}

/* The bloom's row transforms on its padded buffer (w x h image, k x k kernel, padded to
 * fft_good_size), three ways, to measure two of its choices: over the image's h rows of vec4
 * (the two packed complex planes a element, as the bloom runs), over every padded row (no
 * all-padding rows skipped), and over the h rows as two vec2 planes, one pass each (no
 * packing two planes a invocation). Forward and inverse, with the wisdom. */
static int bench_rows(struct cli_gpu *g, struct gpu_timer *t, const struct bench_cli *c, int w,
                      int h, int k, const char *label)
{
	if (!selected(c, "rows", label))
		return 0;
	int pw = fft_good_size(w + k - 1), ph = fft_good_size(h + k - 1);
	struct fft_opts o4 = {.components = 4, .wisdom = g->wisdom}, o2 = o4;
	o2.components = 2;
	struct fft_axis *a4, *a2;
	char err[FFT_ERR_LEN];
	if (fft_axis_create(g->pc, g->info, pw, 0, (size_t)pw * ph, ph, &o4, &log_gles_sink, &a4, err) ||
	    fft_axis_create(g->pc, g->info, pw, 0, (size_t)pw * ph, ph, &o2, &log_gles_sink, &a2, err)) {
		fprintf(stderr, "%s: %s\n", label, err);
		return -1;
	}
	size_t floats = (size_t)pw * ph * 4;
	float *data = malloc(floats * sizeof *data);
	GLuint b4[SETS], b2[SETS];
	glGenBuffers(SETS, b4);
	glGenBuffers(SETS, b2);
	for (int s = 0; s < SETS; s++) {
		for (size_t i = 0; i < floats; i++)
			data[i] = frand();
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
	printf("{\"workload\":\"rows\",\"label\":\"%s\",\"padded\":\"%dx%d\",\"rows\":%d,"
	       "\"image_rows_vec4_ms\":%.4f,\"all_rows_vec4_ms\":%.4f,\"image_rows_two_vec2_ms\":%.4f,"
	       "\"runs\":%d}\n", label, pw, ph, h, med[0], med[1], med[2], c->runs);
	fprintf(stderr, "%-22s %5dx%-5d rows forward + inverse: the %d image rows vec4 %.3f ms, all %d "
	        "rows %.3f ms, image rows as two vec2 planes %.3f ms\n", label, pw, ph, h, med[0], ph,
	        med[1], med[2]);
	fflush(stdout);
	glDeleteBuffers(SETS, b4);
	glDeleteBuffers(SETS, b2);
	fft_axis_destroy(a4);
	fft_axis_destroy(a2);
	return 0;
}

/* One bloom workload, kernel spectrum cached: GPU stages timed by bloom_run's own timer. */
static int bench_bloom(struct cli_gpu *g, const struct bench_cli *c, int w, int h, int kw,
                       int kh, int gray, int pad, int technique, int precision, const char *label)
{
	if (!selected(c, "bloom", label))
		return 0;
	struct bloom_ctx *b;
	char err[BLOOM_ERR_LEN];
	struct bloom_ctx_opts bo = {.wisdom = g->wisdom};
	b = NULL;
	int slot = -1;
	for (int i = 0; c->reuse && i < 32 && slot < 0; i++)
		if (!kept[i].b || !strcmp(kept[i].label, label))
			slot = i;
	if (slot >= 0 && kept[slot].b)
		b = kept[slot].b;
	else if (bloom_ctx_create(g->pc, g->info, &bo, &log_gles_sink, &b, err)) {
		fprintf(stderr, "bloom: %s\n", err);
		return -1;
	}
	struct image img[SETS], k;
	for (int s = 0; s < SETS; s++) {
		image_alloc(&img[s], w, h, 4);
		for (size_t i = 0; i < (size_t)w * h * 4; i++)
			img[s].pixels[i] = 2.0f * fabsf(frand());
	}
	image_alloc(&k, kw, kh, 3);
	for (size_t i = 0; i < (size_t)kw * kh * 3; i += 3) {
		float v = fabsf(frand());
		k.pixels[i] = v;
		k.pixels[i + 1] = gray ? v : fabsf(frand());
		k.pixels[i + 2] = gray ? v : fabsf(frand());
	}
	struct request req;
	request_init(&req, REQUEST_BLOOM);
	struct bloom_params p = req.p;
	(void)pad;
	p.technique = technique;
	p.precision = precision;
	struct bloom_kernel kr = {&k, {0, 0}};
	bloom_kernel_digest(&k, kr.digest);
	int n = c->runs;
	double *tot = malloc((size_t)n * sizeof *tot), *st_ms[7], *wall = malloc((size_t)n * sizeof *wall),
	       *prep = malloc((size_t)n * sizeof *prep), *rb = malloc((size_t)n * sizeof *rb),
	       *up = malloc((size_t)n * sizeof *up);
	for (int s = 0; s < 7; s++)
		st_ms[s] = malloc((size_t)n * sizeof(double));
	struct bloom_stats st = {0};
	double *incall = malloc((size_t)n * sizeof *incall);
	int rc = !incall;
	/* whole calls (host clock: upload, read-back), then the GPU stages back to back: inside
	 * whole calls the GPU idles while the host moves the frame, and the driver lowers its
	 * clocks (seen on the H200: 2160p stages 1.3 ms back to back, 2-5 ms inside calls) */
	for (int i = 0; i < c->warmup + n && !rc; i++) {
		struct image out;
		rc = bloom_run(b, BLOOM_OP_BLOOM, &img[i % SETS], &kr, &p, BLOOM_TIME_STAGES, &out, &st, err);
		image_free(&out);
		if (i >= c->warmup && !rc) {
			int j = i - c->warmup;
			incall[j] = st.gpu_ms;
			wall[j] = st.wall_ms;
			prep[j] = st.prepare_ms;
			rb[j] = st.readback_ms;
			up[j] = st.stage_ms[GPU_STAGE_UPLOAD];
		}
	}
	for (int i = 0; i < c->warmup + n && !rc; i++) {
		rc = bloom_rerun_stages(b, &st, err);
		if (i >= c->warmup && !rc) {
			int j = i - c->warmup;
			tot[j] = st.gpu_ms;
			/* by position in the JSON fields below: cols, multiply, icols name the fused
			 * path's transpose, fused columns and transpose back */
			const double *sm = st.stage_ms;
			double v[7] = {sm[GPU_STAGE_PREFILTER], sm[GPU_STAGE_ROWS],
			               sm[GPU_STAGE_COLS] + sm[GPU_STAGE_TRANSPOSE],
			               sm[GPU_STAGE_MULTIPLY] + sm[GPU_STAGE_FUSED_COLS],
			               sm[GPU_STAGE_ICOLS] + sm[GPU_STAGE_TRANSPOSE_BACK],
			               sm[GPU_STAGE_IROWS], sm[GPU_STAGE_COMPOSITE]};
			for (int s = 0; s < 7; s++)
				st_ms[s][j] = v[s];
		}
	}
	if (rc) {
		fprintf(stderr, "bloom %s: %s\n", label, err);
	} else {
		double m[7];
		for (int s = 0; s < 7; s++)
			m[s] = bench_median(st_ms[s], n);
		double mt = bench_median(tot, n), mw = bench_median(wall, n), mp = bench_median(prep, n), mr = bench_median(rb, n),
		       mu = bench_median(up, n), mc = bench_median(incall, n);
		printf("{\"workload\":\"bloom\",\"label\":\"%s\",\"image\":\"%dx%d\",\"kernel\":\"%dx%d\","
		       "\"kernel_type\":\"%s\",\"pad\":\"%s\",\"technique\":\"%s\",\"precision\":\"%s\","
		       "\"padded\":\"%dx%d\","
		       "\"gpu_ms\":%.4f,\"prefilter_ms\":%.4f,\"rows_ms\":%.4f,\"cols_ms\":%.4f,"
		       "\"multiply_ms\":%.4f,\"inverse_cols_ms\":%.4f,\"inverse_rows_ms\":%.4f,"
		       "\"composite_ms\":%.4f,\"fused\":%s,\"wall_ms\":%.4f,\"prepare_ms\":%.4f,"
		       "\"upload_ms\":%.4f,\"readback_ms\":%.4f,\"gpu_ms_in_call\":%.4f,\"runs\":%d,\"timed\":%s}\n",
		       label, w, h, kw, kh, gray ? "gray" : "colour", pad ? "pow2" : "good",
		       tech_names[technique], precision ? "fp16" : "fp32", st.padded_w, st.padded_h, mt, m[0], m[1], m[2], m[3], m[4],
		       m[5], m[6], st.fused ? "true" : "false", mw, mp, mu, mr, mc, n,
		       st.timed == GPU_TIMING_QUERIES ? "true" : "false");
		fprintf(stderr, "bloom %-22s %5dx%-5d k %4dx%-4d %-6s pad %-4s -> %5dx%-5d  GPU %8.3f ms "
		        "(pre %.3f rows %.3f %s %.3f %s %.3f %s %.3f irows %.3f comp %.3f)\n",
		        label, w, h, kw, kh, gray ? "gray" : "colour", pad ? "pow2" : "good", st.padded_w,
		        st.padded_h, mt, m[0], m[1], st.fused ? "T" : "cols", m[2],
		        st.fused ? "fused" : "mul", m[3], st.fused ? "T" : "icols", m[4], m[5], m[6]);
		fprintf(stderr, "      whole call %.3f ms on the host clock: prepare %.3f, upload %.3f, "
		        "read back %.3f; GPU stages inside the call %.3f ms\n", mw, mp, mu, mr, mc);
		fflush(stdout);
	}
	for (int s = 0; s < SETS; s++)
		image_free(&img[s]);
	image_free(&k);
	free(tot), free(wall), free(prep), free(rb), free(up), free(incall);
	for (int s = 0; s < 7; s++)
		free(st_ms[s]);
	if (slot >= 0) {
		snprintf(kept[slot].label, sizeof kept[slot].label, "%s", label);
		kept[slot].b = b;
	} else {
		bloom_ctx_destroy(b);
		if (c->finish)
			glFinish();
	}
	return rc;
}

int cli_bench(int argc, char **argv)
{
	struct opt_def t[CLI_MAX_OPTS];
	size_t n = 0;
	cli_opts_add(t, &n, own_table, sizeof own_table / sizeof own_table[0], 0);
	cli_opts_add(t, &n, gpu_config_table, gpu_config_table_len, offsetof(struct bench_cli, gpu));
	struct bench_cli c;
	int npos;
	int pr = cli_parse("bench", "usage: fftbloom bench [options]\nFFT and bloom workloads; JSON "
	                   "lines on stdout, a table on stderr.\n", t, n, &c, sizeof c, NULL, NULL,
	                   argc, argv, &npos);
	if (pr)
		return pr == 1 ? 0 : pr;
	log_setup(c.verbose ? LOG_DEBUG : LOG_WARN, 0);
	/* as fftbloomd does: frames' buffers stay in the heap between runs instead of being mapped
	 * and faulted in afresh each time */
	mallopt(M_MMAP_THRESHOLD, 512 << 20);
	mallopt(M_TRIM_THRESHOLD, 1024 << 20);
	struct cli_gpu g;
	if (cli_gpu_open(&c.gpu, &g))
		return 1;
	struct gpu_timer *tm;
	gpu_timer_create(g.info, &tm);
	fprintf(stderr, "renderer: %s (%s)\n", g.info->renderer, g.info->version);
	warm_gpu(&g, c.warm_seconds);
	printf("{\"workload\":\"device\",\"renderer\":\"%s\",\"version\":\"%s\"}\n",
	       g.info->renderer, g.info->version);
	static const int full[][2] = {{1024, 1024}, {1080, 1920}, {2048, 2048}, {4096, 4096}, {1350, 2187}};
	static const int quick[][2] = {{256, 256}, {270, 480}, {512, 512}};
	const int (*sizes)[2] = c.quick ? quick : full;
	int nsizes = c.quick ? 3 : 5;
	for (int rep = 0; rep < c.repeat; rep++) {
	for (int i = 0; i < nsizes; i++) {
			int h = sizes[i][0], w = sizes[i][1];
			bench_fft(&g, tm, &c, h, w, FFT_TECH_AUTO);
			bench_fft(&g, tm, &c, h, w, FFT_TECH_GLOBAL);
			bench_fft(&g, tm, &c, h, w, FFT_TECH_BLOCKED);
		}
	{ /* --only matches the labels */
		if (c.quick) {
			bench_rows(&g, tm, &c, 480, 270, 64, "rows 480x270 k64");
			bench_bloom(&g, &c, 480, 270, 64, 64, 0, 0, 0, 0, "480x270 k64");
			bench_bloom(&g, &c, 480, 270, 64, 64, 1, 0, 0, 0, "480x270 k64 gray");
			bench_bloom(&g, &c, 480, 270, 64, 64, 0, 0, 0, 1, "480x270 k64 fp16");
		} else {
			bench_rows(&g, tm, &c, 1920, 1080, 256, "rows 1080p k256");
			bench_rows(&g, tm, &c, 3840, 2160, 512, "rows 2160p k512");
			bench_bloom(&g, &c, 1920, 1080, 256, 256, 0, 0, 0, 0, "1080p k256");
			bench_bloom(&g, &c, 1920, 1080, 256, 256, 1, 0, 0, 0, "1080p k256 gray");
			bench_bloom(&g, &c, 1920, 1080, 256, 256, 0, 0, 2, 0, "1080p k256 global");
			bench_bloom(&g, &c, 1920, 1080, 256, 256, 0, 0, 0, 1, "1080p k256 fp16");
			bench_bloom(&g, &c, 1920, 1080, 1920, 1080, 0, 0, 0, 0, "1080p full-frame");
			bench_bloom(&g, &c, 3840, 2160, 512, 512, 0, 0, 0, 0, "2160p k512");
			bench_bloom(&g, &c, 3840, 2160, 512, 512, 1, 0, 0, 0, "2160p k512 gray");
			bench_bloom(&g, &c, 3840, 2160, 512, 512, 0, 0, 0, 1, "2160p k512 fp16");
		}
	}
	}
	for (int i = 0; i < 32; i++)
		bloom_ctx_destroy(kept[i].b);
	gpu_timer_destroy(tm);
	cli_gpu_close(&g);
	return 0;
}
