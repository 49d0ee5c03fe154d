/* fftbloom bench's "fft" suite: 2D complex float32 FFTs, forward and inverse whole and the
 * forward's axes apart, with the product's choices, a technique forced, or each axis in a shape
 * of its own (--fft-rows, --fft-cols). */
#include <GLES3/gl31.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_json.h"
#include "bench/bench_util.h"
#include "bench/bench_internal.h"
#include "cli/common.h"
#include "core/log.h"
#include "gles/fft.h"
#include "gles/gpu_timer.h"

int bench_fft_shape(const char *text, struct fft_opts *o)
{
	if (!text[0])
		return 0;
	static const int techs[] = {FFT_TECH_AUTO, FFT_TECH_SHARED, FFT_TECH_GLOBAL, FFT_TECH_BLOCKED};
	size_t len = strcspn(text, ":");
	int t = -1, v[3] = {0, 0, 0};
	for (int i = 0; i < 4; i++)
		if (strlen(fft_technique_name(techs[i])) == len &&
		    !strncmp(text, fft_technique_name(techs[i]), len))
			t = techs[i];
	const char *q = text + len;
	for (int i = 0; i < 3 && *q == ':'; i++) {
		char *end;
		long x = strtol(q + 1, &end, 10);
		if (end == q + 1 || x < 0 || x > 1024)
			return -1;
		v[i] = (int)x;
		q = end;
	}
	if (t < 0 || *q || v[2] > 1)
		return -1;
	o->technique = t;
	o->threads = v[0];
	o->signals = v[1];
	o->split = v[2];
	return 0;
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

/* An FFT workload: forward and inverse 2D complex float32 transforms of h x w, timed apart; then,
 * in runs of their own, the forward's rows and columns apart (a timer mark between the axes
 * costs a few microseconds, so the whole forward is timed without one). */
int bench_fft(struct run_ctx *r, const struct workload *wl)
{
	const struct bench_cli *c = r->c;
	struct cli_gpu *g = r->g;
	struct gpu_timer *t = r->t;
	int w = wl->w, h = wl->h;
	struct fft_opts o = {.technique = wl->technique, .components = 2, .wisdom = g->wisdom,
	                     .probe = c->probe, .threads = c->fft_threads};
	struct fft *f = NULL, *fcols = NULL;
	char err[FFT_ERR_LEN];
	if (c->fft_rows[0] || c->fft_cols[0]) { /* the axes in shapes of their own */
		struct fft_opts orow = o, ocol = o;
		bench_fft_shape(c->fft_rows, &orow);
		bench_fft_shape(c->fft_cols, &ocol);
		if (fft_create(g->pc, g->info, w, h, FFT_ROWS, &orow, &log_process_sink, &f, err) ||
		    fft_create(g->pc, g->info, w, h, FFT_COLS, &ocol, &log_process_sink, &fcols, err)) {
			fprintf(stderr, "%s %s: %s\n", wl->id, wl->variant, err);
			fft_destroy(f);
			return -1;
		}
	} else if (fft_create(g->pc, g->info, w, h, FFT_BOTH, &o, &log_process_sink, &f, err)) {
		fprintf(stderr, "%s %s: %s\n", wl->id, wl->variant, err);
		return -1;
	}
	struct fft_axis *arows = fft_rows(f), *acols = fcols ? fft_cols(fcols) : fft_cols(f);
	size_t n = (size_t)w * h * 2;
	float *data = malloc(n * sizeof *data);
	GLuint bufs[SETS];
	glGenBuffers(SETS, bufs);
	for (int s = 0; s < SETS; s++) {
		for (size_t i = 0; i < n; i++)
			data[i] = bench_frand();
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
				fft_axis_execute(arows, b, 0, (size_t)w, 1, h, 0);
				gpu_timer_mark(t, GPU_STAGE_ROWS);
				fft_axis_execute(acols, b, 0, 1, (size_t)w, w, 0);
				gpu_timer_mark(t, GPU_STAGE_COLS);
			} else {
				fft_execute(f, b, 0); /* the forward whole: rows and columns */
				if (fcols)
					fft_execute(fcols, b, 0);
				gpu_timer_mark(t, GPU_STAGE_ROWS);
			}
			fft_execute(f, b, 1); /* back again: the data stays bounded */
			if (fcols)
				fft_execute(fcols, b, 1);
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
	const struct fft_plan *pr = fft_axis_plan(arows), *pc = fft_axis_plan(acols);
	/* the shapes of what runs: for Bluestein its one-dispatch form's or the inner transform's */
	const struct fft_plan *runr = fft_axis_run_plan(arows), *runc = fft_axis_run_plan(acols);
	double mf = bench_median(fwd, c->runs), mi = bench_median(inv, c->runs),
	       mr = bench_median(fr, c->runs), mc = bench_median(fc, c->runs);
	int csweeps = pc->bluestein ? fft_axis_bluestein_form(acols)
	            : pc->blocked ? pc->nsweeps : pc->shared ? 1 : pc->npasses;
	/* one read and one write of the complex64 buffer: the rate as if the transform were a copy */
	double bytes = 2.0 * 8.0 * (double)w * h;
	char variant[160], size[32], xr[32], xc[32];
	bench_line_variant(r, wl, variant, sizeof variant);
	snprintf(size, sizeof size, "%dx%d", h, w);
	struct bench_line l;
	bench_line_begin(&l, stdout, &r->meta, wl->id, "fftbloom", variant);
	bench_metric(&l, "ms", mf);
	bench_metric(&l, "gb_s", bytes / (mf * 1e-3) / 1e9);
	bench_metric(&l, "rows_ms", mr);
	bench_metric(&l, "cols_ms", mc);
	bench_metric(&l, "inverse_ms", mi);
	bench_detail_str(&l, "size", size);
	bench_detail_num(&l, "min_ms", fwd[0]);
	bench_detail_str(&l, "rows", fft_plan_kind(pr));
	bench_detail_str(&l, "cols", fft_plan_kind(pc));
	bench_detail_num(&l, "rows_passes", runr->npasses);
	bench_detail_num(&l, "cols_passes", runc->npasses);
	bench_detail_num(&l, "cols_dispatches", csweeps);
	bench_detail_num(&l, "cols_signals", runc->signals);
	bench_detail_str(&l, "rows_exchanges", exchanges(runr, xr, sizeof xr));
	bench_detail_str(&l, "cols_exchanges", exchanges(runc, xc, sizeof xc));
	bench_common_detail(&l, r, wl);
	bench_line_end(&l, &r->meta);
	fprintf(stderr, "%-22s %-16s rows %-7s cols %-7s (%d dispatches, %d signals a group)  "
	        "forward %8.3f ms (rows %.3f cols %.3f)  inverse %8.3f ms\n", wl->id, variant,
	        fft_plan_kind(pr), fft_plan_kind(pc), csweeps, runc->signals, mf, mr, mc, mi);
	free(fwd), free(inv), free(fr), free(fc);
	glDeleteBuffers(SETS, bufs);
	fft_destroy(f);
	fft_destroy(fcols);
	return 0;
}
