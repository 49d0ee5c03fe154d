/* FFT wisdom: for each transform shape, which technique and work-group shape measured fastest on
 * this driver, remembered in memory and in a small text file per renderer and driver, so that a
 * shape is measured once. Wisdom measured on known GPUs is shipped in the binary (gles/wisdom/,
 * embedded at build time) and used where the renderer matches. Shapes no wisdom holds get the
 * built-in rule (fft_plan_rule) and, as the measure mode says, are measured at once, queued for
 * measuring in idle time (fft_tuner, gles/fft.h), or never measured.
 *
 * Not thread-safe: one per GL thread. The file is appended with one line per entry. */
#ifndef FFTBLOOM_WISDOM_H
#define FFTBLOOM_WISDOM_H

#include <stddef.h>

#include "core/log.h"

#define FFT_WISDOM_SOURCE_LEN 768

struct fft_wisdom_key {
	int n, components, adjacent, half;
	int count_log2; /* batch size, rounded to a power of two */
	int io;         /* 0: the plain transform; 1: rows run with their caller's loads and stores
	                   (fft_io: a bloom's prefilter and composite), measured by that caller
	                   (bloom_rows_tune_step), never queued here */
};

/* What was measured fastest for a key: the fft_opts fields technique, threads, signals and
 * split. */
struct fft_wisdom_choice {
	int technique, threads, signals, split;
};

/* What happens to a shape that no wisdom holds (fft_axis_create). */
enum fft_wisdom_measure {
	FFT_WISDOM_MEASURE_NEVER = 0, /* the built-in rule, nothing queued */
	FFT_WISDOM_MEASURE_NOW,       /* its candidates are measured before the axis is built */
	FFT_WISDOM_MEASURE_IDLE,      /* the built-in rule at once; the shape is queued
	                                 (fft_wisdom_pending) for fft_tuner_step */
};

/* A queued shape: its key and what its axis was built for, so that the tuner builds the
 * candidates alike. */
struct fft_wisdom_pending {
	struct fft_wisdom_key k;
	size_t capacity;
	int max_count, norm_forward, pad_from;
};

struct fft_wisdom;

/* The shipped wisdom: every line of the .txt files in gles/wisdom/, NUL-terminated. */
extern const char fft_wisdom_shipped[];

/* path "" keeps the wisdom in memory only. driver: "RENDERER / VERSION"; lines of other drivers
 * in the file are ignored. shipped: wisdom lines (fft_wisdom_shipped) or NULL: those whose
 * renderer is this driver's are used, whatever their version (the exact version's lines win over
 * other versions'), and the file's lines win over the shipped ones. The measure mode starts as
 * FFT_WISDOM_MEASURE_NOW. Returns 0 or -1 (out of memory); an unreadable file is an empty one. */
int fft_wisdom_create(const char *path, const char *driver, const char *shipped,
                      const struct log_sink *log, struct fft_wisdom **out);
void fft_wisdom_destroy(struct fft_wisdom *w); /* NULL-safe */

void fft_wisdom_set_measure(struct fft_wisdom *w, int mode); /* enum fft_wisdom_measure */
int fft_wisdom_measure(const struct fft_wisdom *w);

/* Where the choices come from, for logs and /v1/info: e.g. "file /x/fft-wisdom (3 shapes) +
 * shipped for NVIDIA H200/PCIe/SSE2 (40 shapes) + built-in rules". */
const char *fft_wisdom_source(const struct fft_wisdom *w);

/* 0 and the choice when known, -1 when not. */
int fft_wisdom_get(const struct fft_wisdom *w, const struct fft_wisdom_key *k,
                   struct fft_wisdom_choice *out);
/* Remembers a choice, appends it to the file, takes the key off the queue and counts a new
 * generation. A line reads
 *   driver|n|components|adjacent|half|0|count_log2|technique|threads|ms|signals|0|0|split|io
 * (the zeros: twiddle table, largest radix and composite radices, switches that measured slower
 * and left; lines with any of them set were measured with them and are ignored on reading, and a
 * line without the last fields, written before they existed, reads them as zeros). */
void fft_wisdom_put(struct fft_wisdom *w, const struct fft_wisdom_key *k,
                    const struct fft_wisdom_choice *c, double ms);
int fft_wisdom_count(const struct fft_wisdom *w);

/* Queues a shape for measuring (once per key; a known key is not queued). 0, or -1 out of
 * memory. */
int fft_wisdom_want(struct fft_wisdom *w, const struct fft_wisdom_pending *p);
/* Takes the oldest queued shape off the queue into *out: 0, or -1 when none is queued. */
int fft_wisdom_next_pending(struct fft_wisdom *w, struct fft_wisdom_pending *out);
int fft_wisdom_pending_count(const struct fft_wisdom *w);
/* Counts each put: a plan built from the built-in rule while a shape was queued is out of date
 * once this has moved (bloom_ctx_refresh). */
unsigned long long fft_wisdom_generation(const struct fft_wisdom *w);

#endif
