/* FFT plans cached by (size, axes, options): created on first use, least recently used out
 * (gles/fft.h, fft_cache_*). */
#include "gles/fft.h"

#include <stdlib.h>
#include <string.h>

struct cached_fft {
	int width, height, axes;
	struct fft_opts opts; /* wisdom set to NULL: not part of the key */
	struct fft *f;
	unsigned long long last_use;
};

struct fft_cache {
	struct program_cache *pc;
	const struct egl_info *info;
	struct log_sink log;
	struct cached_fft *e;
	int n, max;
	unsigned long long tick, hits, misses;
};

int fft_cache_create(struct program_cache *pc, const struct egl_info *info,
                     const struct log_sink *log, int max_plans, struct fft_cache **out)
{
	struct fft_cache *c = calloc(1, sizeof *c);
	if (!c)
		return FFT_E_NOMEM;
	c->max = max_plans > 0 ? max_plans : 8;
	c->e = calloc((size_t)c->max, sizeof *c->e);
	if (!c->e) {
		free(c);
		return FFT_E_NOMEM;
	}
	c->pc = pc;
	c->info = info;
	if (log)
		c->log = *log;
	*out = c;
	return 0;
}

void fft_cache_destroy(struct fft_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++)
		fft_destroy(c->e[i].f);
	free(c->e);
	free(c);
}

int fft_cache_get(struct fft_cache *c, int width, int height, int axes, const struct fft_opts *o,
                  struct fft **out, char err[FFT_ERR_LEN])
{
	struct fft_opts key = *o;
	key.wisdom = NULL;
	c->tick++;
	for (int i = 0; i < c->n; i++) {
		struct cached_fft *e = &c->e[i];
		if (e->width == width && e->height == height && e->axes == axes &&
		    !memcmp(&e->opts, &key, sizeof key)) {
			e->last_use = c->tick;
			c->hits++;
			*out = e->f;
			return 0;
		}
	}
	c->misses++;
	struct fft *f;
	int rc = fft_create(c->pc, c->info, width, height, axes, o, &c->log, &f, err);
	if (rc)
		return rc;
	int slot = c->n;
	if (c->n == c->max) { /* replace the least recently used */
		slot = 0;
		for (int i = 1; i < c->n; i++)
			if (c->e[i].last_use < c->e[slot].last_use)
				slot = i;
		fft_destroy(c->e[slot].f);
	} else {
		c->n++;
	}
	struct cached_fft *e = &c->e[slot];
	memset(e, 0, sizeof *e);
	e->width = width;
	e->height = height;
	e->axes = axes;
	e->opts = key;
	e->f = f;
	e->last_use = c->tick;
	*out = f;
	return 0;
}

void fft_cache_stats(const struct fft_cache *c, unsigned long long *hits,
                     unsigned long long *misses, int *plans)
{
	*hits = c->hits;
	*misses = c->misses;
	*plans = c->n;
}
