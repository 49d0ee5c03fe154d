/* FFT wisdom: for each transform shape, which technique and work-group shape measured fastest on
 * this driver, remembered in memory and in a small text file per renderer and driver, so that a
 * shape is measured once (fft_axis_create with fft_opts.wisdom does the measuring).
 *
 * Not thread-safe: one per GL thread. The file is appended with one line per entry. */
#ifndef FFTBLOOM_WISDOM_H
#define FFTBLOOM_WISDOM_H

#include "gles/gles_log.h"

struct fft_wisdom_key {
	int n, components, adjacent, half;
	int count_log2; /* batch size, rounded to a power of two */
};

/* What was measured fastest for a key: the fft_opts fields technique, threads and signals. */
struct fft_wisdom_choice {
	int technique, threads, signals;
};

struct fft_wisdom;

/* path "" keeps the wisdom in memory only. driver: renderer and version; lines of other drivers
 * in the file are ignored. Returns 0 or -1 (out of memory); an unreadable file is an empty one. */
int fft_wisdom_create(const char *path, const char *driver, const struct gles_log *log,
                      struct fft_wisdom **out);
void fft_wisdom_destroy(struct fft_wisdom *w); /* NULL-safe */

/* 0 and the choice when known, -1 when not. */
int fft_wisdom_get(const struct fft_wisdom *w, const struct fft_wisdom_key *k,
                   struct fft_wisdom_choice *out);
/* Remembers a choice and appends it to the file. A line reads
 *   driver|n|components|adjacent|half|0|count_log2|technique|threads|ms|signals|0|0
 * (the zeros: twiddle table, largest radix and composite radices, switches that measured slower
 * and left; lines with any of them set were measured with them and are ignored on reading, and a
 * line without the last three fields, written before they existed, reads as zeros). */
void fft_wisdom_put(struct fft_wisdom *w, const struct fft_wisdom_key *k,
                    const struct fft_wisdom_choice *c, double ms);
int fft_wisdom_count(const struct fft_wisdom *w);

#endif
