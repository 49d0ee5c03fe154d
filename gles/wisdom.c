/* FFT wisdom store; see wisdom.h. */
#include "gles/wisdom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/wisdom_shipped.h" /* generated in the build folder by tools/wisdom2h.sh */

const char fft_wisdom_shipped[] = WISDOM_SHIPPED_TEXT;

struct entry {
	struct fft_wisdom_key k;
	struct fft_wisdom_choice c;
};

struct fft_wisdom {
	char path[512], driver[256];
	struct log_sink log;
	struct entry *e;
	int n, cap;
	struct fft_wisdom_pending *q; /* shapes queued for measuring, oldest first */
	int nq, capq;
	int measure;
	unsigned long long generation;
	char source[FFT_WISDOM_SOURCE_LEN];
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

/* One line's driver, key and choice: 1 when it parses and was measured without the switches
 * that left. */
static int parse_line(const char *line, char drv[256], struct fft_wisdom_key *k,
                      struct fft_wisdom_choice *c)
{
	int table = 0, max_radix = 0, composite = 0;
	double ms;
	memset(k, 0, sizeof *k);
	memset(c, 0, sizeof *c);
	return sscanf(line, "%255[^|]|%d|%d|%d|%d|%d|%d|%d|%d|%lf|%d|%d|%d|%d|%d", drv, &k->n,
	              &k->components, &k->adjacent, &k->half, &table, &k->count_log2,
	              &c->technique, &c->threads, &ms, &c->signals, &max_radix, &composite,
	              &c->split, &k->io) >= 10 &&
	       !table && !max_radix && !composite && c->split >= 0 && c->split <= 2 &&
	       (k->io == 0 || (k->io == 1 && !k->adjacent));
}

/* The renderer part of "RENDERER / VERSION" (all of it without the separator): its length. */
static size_t renderer_len(const char *driver)
{
	const char *sep = strstr(driver, " / ");
	return sep ? (size_t)(sep - driver) : strlen(driver);
}

/* Adds the shipped lines of this driver's renderer: pass 0 the other versions', pass 1 the
 * exact driver's (so that they win). Returns the shapes added. */
static int add_shipped(struct fft_wisdom *w, const char *text, int pass)
{
	size_t rl = renderer_len(w->driver);
	int added = 0;
	for (const char *s = text; s && *s;) {
		const char *end = strchr(s, '\n');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		char line[512], drv[256];
		struct fft_wisdom_key k;
		struct fft_wisdom_choice c;
		if (len < sizeof line) {
			memcpy(line, s, len);
			line[len] = 0;
			if (parse_line(line, drv, &k, &c) && renderer_len(drv) == rl &&
			    !strncmp(drv, w->driver, rl) && (strcmp(drv, w->driver) == 0) == pass &&
			    !add(w, &k, &c))
				added++;
		}
		s += len + (end ? 1 : 0);
	}
	return added;
}

int fft_wisdom_create(const char *path, const char *driver, const char *shipped,
                      const struct log_sink *log, struct fft_wisdom **out)
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
	w->measure = FFT_WISDOM_MEASURE_NOW;
	int nshipped = add_shipped(w, shipped, 0);
	nshipped += add_shipped(w, shipped, 1);
	int nfile = 0;
	FILE *f = w->path[0] ? fopen(w->path, "r") : NULL;
	if (f) {
		char line[512], drv[256];
		while (fgets(line, sizeof line, f)) {
			struct fft_wisdom_key k;
			struct fft_wisdom_choice c;
			if (parse_line(line, drv, &k, &c) && !strcmp(drv, w->driver) && !add(w, &k, &c))
				nfile++;
		}
		fclose(f);
		log_sinkf(&w->log, LOG_INFO, "FFT wisdom: %d shapes from %s", nfile, w->path);
	}
	size_t at = 0;
	if (w->path[0])
		at += (size_t)snprintf(w->source, sizeof w->source, "file %.500s (%d shapes) + ",
		                       w->path, nfile);
	if (nshipped)
		at += (size_t)snprintf(w->source + at, sizeof w->source - at,
		                       "shipped for %.*s (%d shapes) + ", (int)renderer_len(w->driver),
		                       w->driver, nshipped);
	snprintf(w->source + at, sizeof w->source - at, "built-in rules");
	*out = w;
	return 0;
}

void fft_wisdom_destroy(struct fft_wisdom *w)
{
	if (!w)
		return;
	free(w->e);
	free(w->q);
	free(w);
}

void fft_wisdom_set_measure(struct fft_wisdom *w, int mode)
{
	w->measure = mode;
}

int fft_wisdom_measure(const struct fft_wisdom *w)
{
	return w->measure;
}

const char *fft_wisdom_source(const struct fft_wisdom *w)
{
	return w->source;
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

static void unqueue(struct fft_wisdom *w, const struct fft_wisdom_key *k)
{
	for (int i = 0; i < w->nq; i++)
		if (!memcmp(&w->q[i].k, k, sizeof *k)) {
			memmove(&w->q[i], &w->q[i + 1], (size_t)(w->nq - i - 1) * sizeof *w->q);
			w->nq--;
			return;
		}
}

void fft_wisdom_put(struct fft_wisdom *w, const struct fft_wisdom_key *k,
                    const struct fft_wisdom_choice *c, double ms)
{
	add(w, k, c);
	unqueue(w, k);
	w->generation++;
	if (!w->path[0])
		return;
	FILE *f = fopen(w->path, "a");
	if (!f) {
		log_sinkf(&w->log, LOG_WARN, "FFT wisdom: cannot append to %s", w->path);
		return;
	}
	fprintf(f, "%s|%d|%d|%d|%d|0|%d|%d|%d|%.5f|%d|0|0|%d|%d\n", w->driver, k->n,
	        k->components, k->adjacent, k->half, k->count_log2, c->technique, c->threads, ms,
	        c->signals, c->split, k->io);
	fclose(f);
}

int fft_wisdom_count(const struct fft_wisdom *w)
{
	return w->n;
}

int fft_wisdom_want(struct fft_wisdom *w, const struct fft_wisdom_pending *p)
{
	struct fft_wisdom_choice c;
	if (!fft_wisdom_get(w, &p->k, &c))
		return 0;
	for (int i = 0; i < w->nq; i++)
		if (!memcmp(&w->q[i].k, &p->k, sizeof p->k))
			return 0;
	if (w->nq == w->capq) {
		int cap = w->capq ? 2 * w->capq : 16;
		struct fft_wisdom_pending *nq = realloc(w->q, (size_t)cap * sizeof *nq);
		if (!nq)
			return -1;
		w->q = nq;
		w->capq = cap;
	}
	w->q[w->nq++] = *p;
	return 0;
}

int fft_wisdom_next_pending(struct fft_wisdom *w, struct fft_wisdom_pending *out)
{
	if (!w->nq)
		return -1;
	*out = w->q[0];
	memmove(&w->q[0], &w->q[1], (size_t)(w->nq - 1) * sizeof *w->q);
	w->nq--;
	return 0;
}

int fft_wisdom_pending_count(const struct fft_wisdom *w)
{
	return w->nq;
}

unsigned long long fft_wisdom_generation(const struct fft_wisdom *w)
{
	return w->generation;
}
