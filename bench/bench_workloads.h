/* fftbloom bench's workloads: their IDs are stable (bench/README.md lists them with what they
 * measure), and the --suite / --only lists that select them. */
#ifndef FFTBLOOM_BENCH_WORKLOADS_H
#define FFTBLOOM_BENCH_WORKLOADS_H

#include <stddef.h>

/* WL_JPEG: a JPEG frame's planes in and its answer out as fftbloomd makes it (technique: 0
 * planes, 1 quantised coefficients, 2 the coded scan; gray: 1 for 4:2:0 answers) */
/* WL_HUFFDEC: a JPEG frame's entropy decoding on the GPU against libjpeg's (technique: the
 * quality; gray: 1 for 4:2:0, else 4:4:4; kw: the chunks' bits, 0 for the default) */
enum wl_kind { WL_FFT, WL_ROWS, WL_BLOOM, WL_JPEG, WL_HUFFDEC };

struct workload {
	const char *suite;
	const char *id;
	const char *variant; /* "default": the product's choices; else what is forced */
	int quick;           /* 1: a --quick workload (llvmpipe sizes), 0: a full one */
	enum wl_kind kind;
	int w, h;            /* WL_FFT: the transform's width and height; else the image's */
	int kw, kh;          /* WL_ROWS, WL_BLOOM: the kernel's size */
	int technique;       /* enum fft_technique (the bloom's too); WL_JPEG: the answer */
	int gray, precision; /* WL_BLOOM: gray kernel, 1: fp16 spectra */
	const char *old_label; /* `fftbloom bench --only =LABEL` before the harness (runs 1-34) */
};

extern const struct workload workloads[];
extern const size_t nworkloads;
/* which of them a --suite / --only list names: bench_list_matches (bench/bench_json.h) */

#endif
