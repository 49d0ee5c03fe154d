/* FFT wisdom store; see wisdom.h. */
#include "gles/wisdom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	struct fft_wisdom_key k;
	struct fft_wisdom_choice c;
};

struct fft_wisdom {
	char path[512], driver[256];
	struct gles_log log;
	struct entry *e;
	int n, cap;
};

static int add(struct fft_wisdom *w, const struct fft_wisdom_key *k,
               const struct fft_wisdom_choice *c)
{
	for (int i = 0; i < w->n; i++)
		if (!memcmp(&w->e[i].k, k, sizeof *k)) {
			w->e[i].c = *c;
			return 0;
		}
	if (w->n == w->cap) {
		int cap = w->cap ? 2 * w->cap : 32;
		struct entry *ne = realloc(w->e, (size_t)cap * sizeof *ne);
		if (!ne)
			return -1;
		w->e = ne;
		w->cap = cap;
	}
	w->e[w->n].k = *k;
	w->e[w->n].c = *c;
	w->n++;
	return 0;
}

int fft_wisdom_create(const char *path, const char *driver, const struct gles_log *log,
                      struct fft_wisdom **out)
{
	struct fft_wisdom *w = calloc(1, sizeof *w);
	if (!w)
		return -1;
	snprintf(w->path, sizeof w->path, "%s", path ? path : "");
	snprintf(w->driver, sizeof w->driver, "%s", driver ? driver : "");
	for (char *c = w->driver; *c; c++)
		if (*c == '|' || *c == '\n')
			*c = '/';
	if (log)
		w->log = *log;
	FILE *f = w->path[0] ? fopen(w->path, "r") : NULL;
	if (f) {
		char line[512], drv[256];
		while (fgets(line, sizeof line, f)) {
			struct fft_wisdom_key k;
			struct fft_wisdom_choice c = {0, 0, 0};
			int table = 0, max_radix = 0, composite = 0;
			double ms;
			memset(&k, 0, sizeof k);
			if (sscanf(line, "%255[^|]|%d|%d|%d|%d|%d|%d|%d|%d|%lf|%d|%d|%d", drv, &k.n,
			           &k.components, &k.adjacent, &k.half, &table, &k.count_log2,
			           &c.technique, &c.threads, &ms, &c.signals, &max_radix,
			           &composite) >= 10 &&
			    !strcmp(drv, w->driver) && !table && !max_radix && !composite)
				add(w, &k, &c);
		}
		fclose(f);
		gles_logf(&w->log, GLES_LOG_INFO, "FFT wisdom: %d shapes from %s", w->n, w->path);
	}
	*out = w;
	return 0;
}

void fft_wisdom_destroy(struct fft_wisdom *w)
{
	if (!w)
		return;
	free(w->e);
	free(w);
}

int fft_wisdom_get(const struct fft_wisdom *w, const struct fft_wisdom_key *k,
                   struct fft_wisdom_choice *out)
{
	for (int i = 0; i < w->n; i++)
		if (!memcmp(&w->e[i].k, k, sizeof *k)) {
			*out = w->e[i].c;
			return 0;
		}
	return -1;
}

void fft_wisdom_put(struct fft_wisdom *w, const struct fft_wisdom_key *k,
                    const struct fft_wisdom_choice *c, double ms)
{
	add(w, k, c);
	if (!w->path[0])
		return;
	FILE *f = fopen(w->path, "a");
	if (!f) {
		gles_logf(&w->log, GLES_LOG_WARN, "FFT wisdom: cannot append to %s", w->path);
		return;
	}
	fprintf(f, "%s|%d|%d|%d|%d|0|%d|%d|%d|%.5f|%d|0|0\n", w->driver, k->n, k->components,
	        k->adjacent, k->half, k->count_log2, c->technique, c->threads, ms, c->signals);
	fclose(f);
}

int fft_wisdom_count(const struct fft_wisdom *w)
{
	return w->n;
}
