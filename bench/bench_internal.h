/* fftbloom bench's parts shared between its files: the options, what every workload's line
 * needs, and the helpers that fill the lines' common fields (bench/bench_main.c). */
#ifndef FFTBLOOM_BENCH_INTERNAL_H
#define FFTBLOOM_BENCH_INTERNAL_H

#include "bench/bench_json.h"
#include "bench/bench_workloads.h"
#include "cli/common.h"
#include "gles/gpu_timer.h"

/* The bloom context's options (bench_bloom_ctx): the ones --ab's second side may change. */
struct bench_ctx_cli {
	int conv_threads, conv_split, conv_probe, rows_probe, conv_pad, conv_mult_shared;
	int rows_split, column_pairs, even_pitch, spectrum_tiles;
	char fused_layout[OPT_STR_MAX], ends_in_rows[OPT_STR_MAX];
};

struct bench_cli {
	struct gpu_config gpu;
	int runs, warmup, quick, repeat, verbose, list, probe, fft_threads;
	struct bench_ctx_cli bc;
	double warm_seconds;
	char suite[OPT_STR_MAX], only[OPT_STR_MAX], variant[OPT_STR_MAX], machine[OPT_STR_MAX];
	char jpeg_in[OPT_STR_MAX];
	char fft_rows[OPT_STR_MAX], fft_cols[OPT_STR_MAX], fft_size[OPT_STR_MAX], ab[OPT_STR_MAX];
};

/* What every workload's line needs besides its figures. */
struct run_ctx {
	struct cli_gpu *g;
	struct gpu_timer *t;
	const struct bench_cli *c;
	const struct bench_cli *ab; /* --ab's configuration, or NULL */
	int ab_b;                   /* 1: the line is --ab's, and its variant would not say so */
	struct bench_meta meta;
	int round;
};

float bench_frand(void); /* uniform in [-1, 1), one sequence for the whole run */
/* 1 when c asks for the built-in FFT rules alone (--fft-wisdom builtin): its bloom contexts
 * take no wisdom (--ab's second side may ask so when the first does not). */
int bench_builtin(const struct bench_cli *c);
/* The variant as the line names it (wisdom and probes appended). */
void bench_line_variant(const struct run_ctx *r, const struct workload *wl, char *buf, size_t len);
/* --fused-layout as enum bloom_fused, --ends-in-rows as bloom_ctx_opts.ends_in_rows (-1 when
 * not a name / 2 when not a name; checked when the options are read). */
int bench_fused_layout(const struct bench_cli *c);
int bench_ends_in_rows(const struct bench_cli *c);
/* --fft-rows / --fft-cols: TECHNIQUE[:THREADS[:SIGNALS[:SPLIT]]] into o's technique, threads,
 * signals and split; "" leaves o as it is. 0, or -1 when not such a shape. */
int bench_fft_shape(const char *text, struct fft_opts *o);
/* A bloom context under the options the suites share (wisdom, frame memory, the fused columns'
 * and rows' measuring options), or NULL with the workload's error printed. */
struct bloom_ctx *bench_bloom_ctx(const struct run_ctx *r, const struct workload *wl);
/* What fftbloomd's idle time does after a frame (bloom_build_wanted until it is done: plans
 * wanted, colour kernels' pair-order programs, rehearsals), at most 1000 steps: the runs after
 * the first measure what a daemon serves. */
void bench_idle_work(struct bloom_ctx *b);
/* How a time was taken (enum gpu_timing), as the lines name it. */
const char *bench_timer_name(int timing);
/* A frame workload's line begun under its variant (written to variant, len bytes), and its
 * image, kernel and padded sizes as details. */
void bench_frame_begin(struct bench_line *l, const struct run_ctx *r, const struct workload *wl,
                       char *variant, size_t len);
void bench_frame_sizes(struct bench_line *l, int w, int h, int kw, int kh, int pw, int ph);
/* A frame line begun as bench_frame_begin does, m[s] the median of v[s][0..n) for s < nv, and
 * the line's metric ms, m[0] (the whole frame's time). */
void bench_frame_medians(struct bench_line *l, const struct run_ctx *r, const struct workload *wl,
                         char *variant, size_t len, double *const *v, int nv, int n, double *m);
struct yuv_image;
/* The JPEG suites' frames: w x h planes of a smooth picture with grain, chroma subsampled by sub
 * both ways (1: 4:4:4, 2: 4:2:0). 0 or -1 (no memory). */
int bench_picture_planes(int w, int h, int sub, struct yuv_image *y);
/* The detail fields every fftbloom line carries. */
void bench_common_detail(struct bench_line *l, const struct run_ctx *r, const struct workload *wl);

#define SETS 3 /* input sets a workload rotates through */
/* Seconds of a bloom workload's stages run back to back untimed before the timed ones (at most;
 * --warm-seconds when less): the whole calls before them leave the GPU idle, and on the H200 the
 * GL driver's clocks follow the load of the last moments (bench/RESULTS.md) */
#define BENCH_B2B_WARM_S 1.0

/* The fft suite's workload (bench/bench_fft.c). */
int bench_fft(struct run_ctx *r, const struct workload *wl);

/* The bloom suite's row transforms (bloom.rows.*) and bloom workloads (bench/bench_bloom.c). */
int bench_rows(struct run_ctx *r, const struct workload *wl);
int bench_bloom(struct run_ctx *r, const struct workload *wl);

/* A JPEG answer's GPU side (bench/bench_jpeg.c). */
int bench_jpeg(struct run_ctx *r, const struct workload *wl);

/* A JPEG frame's entropy decoding on the GPU and by libjpeg (bench/bench_huffdec.c). */
int bench_huffdec(struct run_ctx *r, const struct workload *wl);

#endif
