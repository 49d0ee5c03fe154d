/* FFT wisdom: for each transform shape, which technique and work-group shape measured fastest on
 * this driver, remembered in memory and in a small text file per renderer and driver, so that a
 * shape is measured once (fft_axis_create with fft_opts.wisdom does the measuring).
 *
 * Not thread-safe: one per GL thread. The file is appended with one line per entry. */
#ifndef FFTBLOOM_WISDOM_H
#define FFTBLOOM_WISDOM_H

#include "gles/gles_log.h"

struct fft_wisdom_key {
	int n, components, adjacent, half, twiddles;
	int count_log2; /* batch size, rounded to a power of two */
	int max_radix;  /* fft_opts.max_radix, 0 for the default 8 */
	int composite;  /* fft_opts.composite */
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
/* Remembers a choice (and appends it to the file: signals, max_radix and composite go after the
 * time, so that lines written before they existed read as 0, the defaults, and older readers
 * ignore them). */
void fft_wisdom_put(struct fft_wisdom *w, const struct fft_wisdom_key *k,
                    const struct fft_wisdom_choice *c, double ms);
int fft_wisdom_count(const struct fft_wisdom *w);

#endif
