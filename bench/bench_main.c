/* fftbloom-bench (run as `fftbloom bench`): the GPU suites of the benchmark harness
 * (bench/README.md): "fft" (2D FFTs: bench/bench_fft.c), "bloom" (the bloom and its row
 * transforms: bench/bench_bloom.c) and "jpeg" (bench/bench_jpeg.c), each workload under a
 * stable ID; a program of its own, so that the product CLI carries no benchmark code. This file
 * holds main, the options, the
 * selection and the lines' common fields. GPU time per run and per stage from GL timer
 * queries (glFinish-bracketed wall time where the driver has none), median of many runs after
 * warm-up on random data, several input sets rotated. One result line (bench/bench_json.h) per
 * workload on stdout; a short table on stderr. */
#include <GLES3/gl31.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_json.h"
#include "bench/bench_util.h"
#include "cli/common.h"
#include "core/log.h"
#include "gles/bloom.h"
#include "gles/fft.h"
#include "gles/gpu_timer.h"
#include "bench/bench_internal.h"



static const struct opt_def own_table[] = {
	{"suite", OPT_STRING, 0, 0, "fft,bloom", NULL,
	 "suites to run, comma-separated: fft, bloom, jpeg (a JPEG answer's GPU side; all: the "
	 "three), big (frames of 33 to 268 megapixels, tiled past the buffer limits or "
	 "--gpu-frame-memory; only when named)", NULL,
	 offsetof(struct bench_cli, suite)},
	{"only", OPT_STRING, 0, 0, "", NULL,
	 "workload IDs to run, comma-separated: an ID, its prefix up to a dot (fft.2d.1024x1024), or "
	 "a pattern (fft.2d.*.fwd); empty: every workload of the suites", NULL,
	 offsetof(struct bench_cli, only)},
	{"variant", OPT_STRING, 0, 0, "", NULL,
	 "run only this variant of each workload (default, global, blocked); empty: every variant",
	 NULL, offsetof(struct bench_cli, variant)},
	{"list", OPT_BOOL, 0, 1, "false", NULL,
	 "print the selected workloads as \"ID VARIANT HxW OLD-LABEL\" lines (HxW: the size of their "
	 "2D transforms, padded for the bloom; OLD-LABEL: its --only label before the harness) and "
	 "exit (no GPU needed)", NULL,
	 offsetof(struct bench_cli, list)},
	{"quick", OPT_BOOL, 0, 1, "false", NULL, "the small workloads (sized for llvmpipe)", NULL,
	 offsetof(struct bench_cli, quick)},
	{"runs", OPT_INT, 3, 10000, "50", NULL, "timed runs per workload", NULL,
	 offsetof(struct bench_cli, runs)},
	{"warmup", OPT_INT, 0, 1000, "5", NULL, "untimed runs first", NULL,
	 offsetof(struct bench_cli, warmup)},
	{"warm-seconds", OPT_DOUBLE, 0, 600, "3", NULL,
	 "keep the GPU busy this long before measuring, so its clocks have ramped up; and each bloom "
	 "workload's stages run back to back untimed as long (at most 1 s) before the timed ones",
	 NULL,
	 offsetof(struct bench_cli, warm_seconds)},
	{"repeat", OPT_INT, 1, 100, "1", NULL,
	 "run the whole list this many times in turn (A/B comparisons: clock drift spreads evenly); "
	 "each line's detail.round says which", NULL, offsetof(struct bench_cli, repeat)},
	{"machine", OPT_STRING, 0, 0, "", NULL,
	 "the machine's name in each line (the harness's results folder); empty: from the renderer "
	 "(llvmpipe, h200, ...)", NULL, offsetof(struct bench_cli, machine)},
	{"fft-probe", OPT_INT, 0, FFT_PROBE_COUNT - 1, "0", NULL,
	 "the fft suite's shared-memory programs with a part left out, to time it (wrong results): "
	 "1 only the loads and stores, 2 no butterflies, 3 twiddles without sin and cos, 4 no "
	 "barriers, 5 twiddles as powers of one sin and cos; 0 the transform", NULL,
	 offsetof(struct bench_cli, probe)},
	{"fft-threads", OPT_INT, 0, 1024, "0", NULL,
	 "the fft suite's invocations per signal, over the rules and the wisdom; 0: theirs", NULL,
	 offsetof(struct bench_cli, fft_threads)},
	{"fft-rows", OPT_STRING, 0, 0, "", NULL,
	 "the fft suite's row transforms in this shape, over the rules and the wisdom: "
	 "TECHNIQUE[:THREADS[:SIGNALS[:SPLIT]]] (shared, global, blocked; invocations a signal, "
	 "signals a work group, 1 to exchange in two float rounds; 0: the plan's); empty: theirs",
	 NULL, offsetof(struct bench_cli, fft_rows)},
	{"fft-cols", OPT_STRING, 0, 0, "", NULL,
	 "the fft suite's column transforms in this shape, as --fft-rows", NULL,
	 offsetof(struct bench_cli, fft_cols)},
	{"fft-size", OPT_STRING, 0, 0, "", NULL,
	 "run one 2D FFT workload of this size instead of the suites: HxW (h rows of w), its ID "
	 "fft.2d.HxW.fwd, variant default (shapes of other lengths than the suite's)", NULL,
	 offsetof(struct bench_cli, fft_size)},
	{"jpeg-in", OPT_STRING, 0, 0, "planes", NULL,
	 "the jpeg suite's frame in: planes (decoded on the CPU) or coefs (its quantised DCT "
	 "coefficients, the inverse DCT on the GPU: fftbloomd's --jpeg-gpu-idct, its default)", NULL,
	 offsetof(struct bench_cli, jpeg_in)},
	{"fused-layout", OPT_STRING, 0, 0, "auto", NULL,
	 "the bloom and jpeg suites' fused column pass: auto (the product's), in_place (columns read "
	 "with a row's stride) or transposed (a transposed copy, a pass before and after)", NULL,
	 offsetof(struct bench_cli, bc.fused_layout)},
	{"column-pairs", OPT_BOOL, 0, 1, "true", NULL,
	 "the bloom and jpeg suites' row spectra in the pair order where the fused columns run in "
	 "place with the ends in the rows (the product's rule); false: the natural order", NULL,
	 offsetof(struct bench_cli, bc.column_pairs)},
	{"even-pitch", OPT_BOOL, 0, 1, "true", NULL,
	 "the bloom and jpeg suites' row spectra one element wider apart where the padded width is "
	 "odd, the ends are in the rows and the columns fused in place (the product's rule); false: "
	 "the padded width", NULL,
	 offsetof(struct bench_cli, bc.even_pitch)},
	{"spectrum-tiles", OPT_INT, 0, 64, "0", NULL,
	 "the bloom and jpeg suites' row spectra in tiles of this many columns (2, 4, 8, 16, 32, "
	 "64) where the ends are in the rows and the columns fused in place; 0: the product's rule, "
	 "1: rows a pitch apart", NULL,
	 offsetof(struct bench_cli, bc.spectrum_tiles)},
	{"conv-threads", OPT_INT, 0, 512, "0", NULL,
	 "the bloom and jpeg suites' fused column pass: invocations a column; 0: the rule", NULL,
	 offsetof(struct bench_cli, bc.conv_threads)},
	{"conv-split", OPT_BOOL, 0, 1, "false", NULL,
	 "the bloom and jpeg suites' fused column pass exchanges vec4 in two vec2 rounds at every "
	 "length (the rule: past 1024)", NULL,
	 offsetof(struct bench_cli, bc.conv_split)},
	{"conv-probe", OPT_INT, 0, FFT_PROBE_COUNT - 1, "0", NULL,
	 "the bloom and jpeg suites' fused column pass with a part left out, to time it (wrong "
	 "results), as --fft-probe: 1 only the loads and stores, 2 no butterflies, 3 twiddles "
	 "without sin and cos, 4 no barriers, 5 twiddles as powers of one sin and cos (the form "
	 "that multiplies in shared memory)", NULL,
	 offsetof(struct bench_cli, bc.conv_probe)},
	{"conv-pad", OPT_BOOL, 0, 1, "false", NULL,
	 "the bloom and jpeg suites' fused column pass pads its exchanges against bank conflicts at "
	 "every length (a gray kernel's forward ones only; the rule: powers of two from 4096)", NULL,
	 offsetof(struct bench_cli, bc.conv_pad)},
	{"conv-mult-shared", OPT_BOOL, 0, 1, "false", NULL,
	 "the bloom and jpeg suites' fused column pass multiplies the kernel's spectrum in "
	 "shared memory between the forward and inverse passes (the rule: in registers)", NULL,
	 offsetof(struct bench_cli, bc.conv_mult_shared)},
	{"rows-probe", OPT_INT, 0, FFT_PROBE_COUNT - 1, "0", NULL,
	 "the bloom and jpeg suites' row transforms (with their ends where the rows take them; "
	 "bloom.rows.*: the plain transforms) with a part left out, as --conv-probe", NULL,
	 offsetof(struct bench_cli, bc.rows_probe)},
	{"rows-split", OPT_INT, 0, 2, "0", NULL,
	 "the bloom and jpeg suites' row transforms exchange vec4 in exactly so many rounds at every "
	 "length: 1 two vec2 rounds, 2 four float rounds (the rule past 1024); 0: the rule", NULL,
	 offsetof(struct bench_cli, bc.rows_split)},
	{"ends-in-rows", OPT_STRING, 0, 0, "auto", NULL,
	 "the bloom and jpeg suites' prefilter and composite in the row transforms' loads and "
	 "stores: auto (the product's rule), on (wherever they can), off (passes of their own)",
	 NULL, offsetof(struct bench_cli, bc.ends_in_rows)},
	{"ab", OPT_STRING, 0, 0, "", NULL,
	 "the bloom suite's frame workloads also under these bloom context options, given as one "
	 "argument split at spaces (e.g. '--even-pitch=false --rows-split 1', or '--fft-wisdom "
	 "builtin': the built-in FFT rules alone), alternately with the others frame by frame so "
	 "that both meet the same clocks; a line each", NULL,
	 offsetof(struct bench_cli, ab)},
	{"verbose", OPT_BOOL, 0, 1, "false", NULL,
	 "log at debug level on stderr: the FFT wisdom's measurement of every candidate shape", NULL,
	 offsetof(struct bench_cli, verbose)},
};

static int selected(const struct bench_cli *c, const struct workload *wl)
{
	int suite = bench_list_matches(c->suite, wl->suite) || (!strcmp(c->suite, "all") &&
	                                                         strcmp(wl->suite, "big"));
	return suite && wl->quick == c->quick && bench_list_matches(c->only, wl->id) &&
	       (!c->variant[0] || !strcmp(c->variant, wl->variant));
}

/* ---- measuring ---- */

static unsigned long long g_rng = 88172645463325252ull;
float bench_frand(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return (float)((g_rng >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1;
}

/* Sustained GPU load (FFTs of a 2048x2048 buffer) for `seconds`: the first workloads measured
 * otherwise run while the GPU's clocks are still ramping up (the H200's GL driver sets them from
 * the load of the last moments: bench/RESULTS.md, "Run-to-run variation"). */
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
			data[i] = bench_frand();
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

int bench_builtin(const struct bench_cli *c)
{
	return !strcmp(c->gpu.fft_wisdom, "builtin");
}

/* Appends the formatted text to buf (len bytes, *k of them used) when `when`; a text past
 * the end is cut there (snprintf's), and nothing more is appended after it. */
static void variant_add(char *buf, size_t len, int *k, int when, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void variant_add(char *buf, size_t len, int *k, int when, const char *fmt, ...)
{
	if (!when || *k < 0 || (size_t)*k >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	*k += vsnprintf(buf + *k, len - (size_t)*k, fmt, ap);
	va_end(ap);
}

/* The variant as the line names it: with a wisdom file named, "+wisdom" after it; with the
 * built-in rules alone (--fft-wisdom builtin), "+builtin"; by default (the cache directory's
 * wisdom, the shipped wisdom and the rules, nothing measured) as it is. */
void bench_line_variant(const struct run_ctx *r, const struct workload *wl, char *buf, size_t len)
{
	const struct cachedir_paths *p = &r->g->paths;
	const struct bench_cli *c = r->c;
	int fft = wl->kind == WL_FFT;
	int k = snprintf(buf, len, "%s%s", wl->variant,
	                 bench_builtin(c) || p->no_wisdom ? "+builtin"
	                 : p->named_wisdom                 ? "+wisdom"
	                                                   : "");
	variant_add(buf, len, &k, fft && c->probe, "+probe%d", c->probe);
	variant_add(buf, len, &k, fft && c->fft_threads, "+t%d", c->fft_threads);
	variant_add(buf, len, &k, fft && c->fft_rows[0], "+rows=%s", c->fft_rows);
	variant_add(buf, len, &k, fft && c->fft_cols[0], "+cols=%s", c->fft_cols);
	variant_add(buf, len, &k, !fft && strcmp(c->bc.fused_layout, "auto"), "+%s", c->bc.fused_layout);
	variant_add(buf, len, &k, !fft && strcmp(c->bc.ends_in_rows, "auto"), "+ends_%s",
	            c->bc.ends_in_rows);
	variant_add(buf, len, &k, !fft && !c->bc.column_pairs, "+nopairs");
	variant_add(buf, len, &k, !fft && !c->bc.even_pitch, "+oddpitch");
	variant_add(buf, len, &k, !fft && c->bc.spectrum_tiles, "+tiles%d", c->bc.spectrum_tiles);
	variant_add(buf, len, &k, !fft && c->bc.conv_threads, "+ct%d", c->bc.conv_threads);
	variant_add(buf, len, &k, !fft && c->bc.conv_split, "+split");
	variant_add(buf, len, &k, !fft && c->bc.conv_probe, "+cprobe%d", c->bc.conv_probe);
	variant_add(buf, len, &k, !fft && c->bc.conv_pad, "+cpad");
	variant_add(buf, len, &k, !fft && c->bc.conv_mult_shared, "+mshared");
	variant_add(buf, len, &k, !fft && c->bc.rows_probe, "+rprobe%d", c->bc.rows_probe);
	variant_add(buf, len, &k, !fft && c->bc.rows_split, "+rsplit%s", c->bc.rows_split > 1 ? "2" : "");
	variant_add(buf, len, &k, wl->kind == WL_JPEG && !strcmp(c->jpeg_in, "coefs"), "+coefs");
	variant_add(buf, len, &k, r->ab_b, "+b");
}

int bench_fused_layout(const struct bench_cli *c)
{
	static const char *const names[] = {"auto", "transposed", "in_place"};
	for (int i = 0; i < 3; i++)
		if (!strcmp(c->bc.fused_layout, names[i]))
			return i; /* enum bloom_fused's order */
	return -1;
}

struct bloom_ctx *bench_bloom_ctx(const struct run_ctx *r, const struct workload *wl)
{
	const struct bench_cli *c = r->c;
	struct bloom_ctx_opts bo = {.wisdom = bench_builtin(c) ? NULL : r->g->wisdom,
	                            .frame_bytes = r->g->frame_bytes,
	                            .fused_layout = bench_fused_layout(c),
	                            .ends_in_rows = bench_ends_in_rows(c),
	                            .column_pairs = c->bc.column_pairs ? 0 : -1,
	                            .even_pitch = c->bc.even_pitch ? 0 : -1,
	                            .spectrum_tiles = c->bc.spectrum_tiles,
	                            .conv_threads = c->bc.conv_threads, .conv_split = c->bc.conv_split,
	                            .conv_probe = c->bc.conv_probe, .rows_probe = c->bc.rows_probe,
	                            .conv_pad = c->bc.conv_pad,
	                            .conv_mult_shared = c->bc.conv_mult_shared,
	                            .rows_split = c->bc.rows_split};
	struct bloom_ctx *b;
	char err[BLOOM_ERR_LEN];
	if (bloom_ctx_create(r->g->pc, r->g->info, &bo, &log_process_sink, &b, err)) {
		fprintf(stderr, "%s: %s\n", wl->id, err);
		return NULL;
	}
	return b;
}

void bench_idle_work(struct bloom_ctx *b)
{
	for (int steps = 0; steps < 1000 && bloom_build_wanted(b, 0); steps++) {
	}
}

int bench_ends_in_rows(const struct bench_cli *c)
{
	return !strcmp(c->bc.ends_in_rows, "auto") ? 0 : !strcmp(c->bc.ends_in_rows, "on") ? 1
	       : !strcmp(c->bc.ends_in_rows, "off") ? -1 : 2;
}

/* How a time was taken (enum gpu_timing), as the lines name it. */
const char *bench_timer_name(int timing)
{
	return timing == GPU_TIMING_QUERIES ? "gl_timestamp" : timing == GPU_TIMING_WALL ? "glfinish_wall"
	                                                                               : "none";
}

void bench_frame_medians(struct bench_line *l, const struct run_ctx *r, const struct workload *wl,
                         char *variant, size_t len, double *const *v, int nv, int n, double *m)
{
	for (int s = 0; s < nv; s++)
		m[s] = bench_median(v[s], n);
	bench_frame_begin(l, r, wl, variant, len);
	bench_metric(l, "ms", m[0]);
}

void bench_frame_begin(struct bench_line *l, const struct run_ctx *r, const struct workload *wl,
                       char *variant, size_t len)
{
	bench_line_variant(r, wl, variant, len);
	bench_line_begin(l, stdout, &r->meta, wl->id, "fftbloom", variant);
}

void bench_frame_sizes(struct bench_line *l, int w, int h, int kw, int kh, int pw, int ph)
{
	char s[32];
	snprintf(s, sizeof s, "%dx%d", w, h);
	bench_detail_str(l, "image", s);
	snprintf(s, sizeof s, "%dx%d", kw, kh);
	bench_detail_str(l, "kernel", s);
	snprintf(s, sizeof s, "%dx%d", pw, ph);
	bench_detail_str(l, "padded", s);
}

/* The detail fields every fftbloom line carries. */
void bench_common_detail(struct bench_line *l, const struct run_ctx *r, const struct workload *wl)
{
	bench_detail_num(l, "runs", r->c->runs);
	bench_detail_num(l, "warmup", r->c->warmup);
	bench_detail_num(l, "round", r->round);
	bench_detail_str(l, "timer", bench_timer_name(gpu_timer_kind(r->t)));
	bench_detail_str(l, "wisdom", wl->kind != WL_FFT && bench_builtin(r->c)
	                                  ? "built-in rules" : engine_wisdom_source(r->g->engine));
	bench_detail_str(l, "old_label", wl->old_label);
}

int main(int argc, char **argv)
{
	struct opt_def t[CLI_MAX_OPTS];
	size_t n = 0;
	cli_opts_add(t, &n, own_table, sizeof own_table / sizeof own_table[0], 0);
	cli_opts_add(t, &n, gpu_config_table, gpu_config_table_len, offsetof(struct bench_cli, gpu));
	struct bench_cli c;
	int npos;
	int pr = cli_parse("bench", "usage: fftbloom bench [options]\nThe harness's GPU suites (fft, "
	                   "bloom; bench/README.md lists the workload IDs): one JSON line a workload "
	                   "on stdout, a table on stderr. bench/run.sh runs them, one workload a "
	                   "process, beside the peers.\n", t, n, &c, sizeof c, NULL, NULL, argc, argv,
	                   &npos);
	if (pr)
		return pr == 1 ? 0 : pr;
	if (!bench_list_matches(c.suite, "fft") && !bench_list_matches(c.suite, "bloom") &&
	    !bench_list_matches(c.suite, "big") && !bench_list_matches(c.suite, "jpeg") &&
	    strcmp(c.suite, "all")) {
		fprintf(stderr, "fftbloom bench: --suite takes fft, bloom, big, jpeg or all, not '%s'\n",
		        c.suite);
		return 2;
	}
	if (bench_fused_layout(&c) < 0) {
		fprintf(stderr, "fftbloom bench: --fused-layout takes auto, in_place or transposed, not "
		        "'%s'\n", c.bc.fused_layout);
		return 2;
	}
	if (c.bc.spectrum_tiles & (c.bc.spectrum_tiles - 1)) {
		fprintf(stderr, "fftbloom bench: --spectrum-tiles takes 0, 1, 2, 4, 8 or 16, not %d\n",
		        c.bc.spectrum_tiles);
		return 2;
	}
	struct fft_opts shape;
	if (bench_fft_shape(c.fft_rows, &shape) || bench_fft_shape(c.fft_cols, &shape)) {
		fprintf(stderr, "fftbloom bench: --fft-rows/--fft-cols: TECHNIQUE[:THREADS[:SIGNALS"
		        "[:SPLIT]]], e.g. shared:256:4:1\n");
		return 2;
	}
	if (strcmp(c.jpeg_in, "planes") && strcmp(c.jpeg_in, "coefs")) {
		fprintf(stderr, "fftbloom bench: --jpeg-in takes planes or coefs, not '%s'\n", c.jpeg_in);
		return 2;
	}
	if (bench_ends_in_rows(&c) == 2) {
		fprintf(stderr, "fftbloom bench: --ends-in-rows takes auto, on or off, not '%s'\n",
		        c.bc.ends_in_rows);
		return 2;
	}
	/* --ab: the same command line with its options after, read as a second configuration; only
	 * the bloom context's options may differ (the GPU, the runs and the selection are shared) */
	static struct bench_cli cab;
	const struct bench_cli *ab = NULL;
	if (c.ab[0]) {
		char abuf[OPT_STR_MAX], *av[CLI_MAX_OPTS * 2 + 64], *save = NULL;
		int ac = 0, full = argc >= (int)(sizeof av / sizeof av[0]) - 1;
		for (int i = 0; i < argc && !full; i++)
			av[ac++] = argv[i];
		snprintf(abuf, sizeof abuf, "%s", c.ab);
		for (char *tok = strtok_r(abuf, " \t\n", &save); tok && !full;
		     tok = strtok_r(NULL, " \t\n", &save)) {
			full = ac == (int)(sizeof av / sizeof av[0]) - 1;
			av[ac++] = tok;
		}
		av[ac] = NULL;
		int apos = 0, bad = full || cli_parse("bench", "", t, n, &cab, sizeof cab, NULL, NULL, ac,
		                                      av, &apos);
		if (!bad) {
			struct bench_cli same = cab; /* cab with the context's options put back: c */
			snprintf(same.ab, sizeof same.ab, "%s", c.ab);
			same.bc = c.bc;
			/* the wisdom: the built-in rules alone on the second side (the first side's
			 * wisdom is the engine's, which a bloom context takes or leaves) */
			if (bench_builtin(&cab) && !bench_builtin(&c))
				memcpy(same.gpu.fft_wisdom, c.gpu.fft_wisdom, sizeof c.gpu.fft_wisdom);
			bad = apos != npos || memcmp(&same, &c, sizeof c) || bench_fused_layout(&cab) < 0 ||
			      bench_ends_in_rows(&cab) == 2 ||
			      (cab.bc.spectrum_tiles & (cab.bc.spectrum_tiles - 1));
		}
		if (bad) {
			fprintf(stderr, "fftbloom bench: --ab '%s': only the bloom context's options, valid: "
			        "--fused-layout, --column-pairs, --even-pitch, --spectrum-tiles, "
			        "--conv-threads, --conv-split, --conv-probe, --conv-pad, --conv-mult-shared, "
			        "--rows-probe, --rows-split, --ends-in-rows, and --fft-wisdom "
			        "builtin\n", c.ab);
			return 2;
		}
		cab.ab[0] = 0;
		ab = &cab;
	}
	const struct workload *list = workloads;
	size_t nlist = nworkloads;
	struct workload custom;
	char custom_id[64];
	if (c.fft_size[0]) { /* one FFT workload of the size asked for */
		int h = 0, w = 0, k = 0;
		if (sscanf(c.fft_size, "%dx%d%n", &h, &w, &k) != 2 || c.fft_size[k] || h < 1 || w < 1 ||
		    h > 65536 || w > 65536) {
			fprintf(stderr, "fftbloom bench: --fft-size takes HxW, not '%s'\n", c.fft_size);
			return 2;
		}
		snprintf(custom_id, sizeof custom_id, "fft.2d.%dx%d.fwd", h, w);
		custom = (struct workload){"fft", custom_id, "default", c.quick, WL_FFT, w, h, 0, 0,
		                           FFT_TECH_AUTO, 0, 0, ""};
		snprintf(c.suite, sizeof c.suite, "fft");
		c.only[0] = c.variant[0] = 0;
		list = &custom;
		nlist = 1;
	}
	int nsel = 0;
	for (size_t i = 0; i < nlist; i++)
		if (selected(&c, &list[i])) {
			nsel++;
			if (c.list) { /* the size its 2D transforms run at, rows x columns */
				const struct workload *wl = &list[i];
				int th = wl->h, tw = wl->w;
				if (wl->kind != WL_FFT) {
					fft_conv_frame_size(wl->w, wl->h, wl->kw, wl->kh, wl->kw / 2,
					                    wl->kh / 2, &tw, &th);
				}
				printf("%s %s %dx%d %s\n", wl->id, wl->variant, th, tw, wl->old_label);
			}
		}
	if (!nsel) {
		fprintf(stderr, "fftbloom bench: no workload of suite '%s'%s matches --only '%s'%s%s\n",
		        c.suite, c.quick ? " (--quick)" : "", c.only, c.variant[0] ? " --variant " : "",
		        c.variant);
		return 2;
	}
	if (c.list)
		return 0;
	for (size_t i = 0; ab && i < nlist; i++)
		if (selected(&c, &list[i]) && list[i].kind != WL_BLOOM) {
			fprintf(stderr, "fftbloom bench: --ab alternates the bloom suite's frame workloads "
			        "only, not %s\n", list[i].id);
			return 2;
		}
	log_setup(c.verbose ? LOG_DEBUG : LOG_WARN, 0);
	/* as fftbloomd does: frames' buffers stay in the heap between runs instead of being mapped
	 * and faulted in afresh each time */
	mallopt(M_MMAP_THRESHOLD, 512 << 20);
	mallopt(M_TRIM_THRESHOLD, 1024 << 20);
	struct cli_gpu g;
	if (cli_gpu_open(&c.gpu, &g))
		return 1;
	struct run_ctx r = {.g = &g, .c = &c, .ab = ab};
	gpu_timer_create(g.info, &r.t);
	fprintf(stderr, "renderer: %s (%s)\n", g.info->renderer, g.info->version);
	warm_gpu(&g, c.warm_seconds);
	int rc = 0;
	for (int rep = 0; rep < c.repeat; rep++) {
		r.round = rep;
		for (size_t i = 0; i < nlist; i++) {
			const struct workload *wl = &list[i];
			if (!selected(&c, wl))
				continue;
			bench_meta_init(&r.meta, wl->suite, g.info->renderer, g.info->version,
			                "fftbloom bench", argc - 1, argv + 1);
			if (c.machine[0])
				snprintf(r.meta.machine, sizeof r.meta.machine, "%.63s", c.machine);
			int wrc = wl->kind == WL_FFT ? bench_fft(&r, wl)
			          : wl->kind == WL_ROWS ? bench_rows(&r, wl)
			          : wl->kind == WL_JPEG ? bench_jpeg(&r, wl)
			          : wl->kind == WL_HUFFDEC ? bench_huffdec(&r, wl)
			                                : bench_bloom(&r, wl);
			rc |= wrc != 0;
		}
	}
	gpu_timer_destroy(r.t);
	cli_gpu_close(&g);
	return rc;
}
