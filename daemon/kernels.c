/* Named kernel registry; see kernels.h. */
#include "daemon/kernels.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/apiutil.h"
#include "gles/bloom.h"

struct kernels {
	pthread_mutex_t lock;
	struct kernel_entry **e; /* sorted by name */
	int n, max;
	unsigned long long bytes, max_bytes;
};

const char *kernels_strerror(int code)
{
	switch (code) {
	case KERNELS_OK: return "ok";
	case KERNELS_E_NAME: return "invalid kernel name (1-64 of A-Z a-z 0-9 . _ -)";
	case KERNELS_E_FULL: return "kernel registry full";
	case KERNELS_E_NOTFOUND: return "no such kernel";
	case KERNELS_E_NOMEM: return "out of memory";
	case KERNELS_E_DIR: return "kernel folder unreadable";
	case KERNELS_E_BYTES: return "kernel memory full";
	case KERNELS_E_TOO_LARGE: return "kernel larger than the kernel memory";
	}
	return "unknown error";
}

int kernels_create(int max_entries, unsigned long long max_bytes, struct kernels **out)
{
	struct kernels *k = calloc(1, sizeof *k);
	if (!k)
		return KERNELS_E_NOMEM;
	k->max = max_entries;
	k->max_bytes = max_bytes;
	k->e = calloc(max_entries > 0 ? (size_t)max_entries : 1, sizeof *k->e);
	if (!k->e) {
		free(k);
		return KERNELS_E_NOMEM;
	}
	pthread_mutex_init(&k->lock, NULL);
	*out = k;
	return 0;
}

static void entry_free(struct kernel_entry *e)
{
	image_free(&e->img);
	free(e);
}

void kernels_destroy(struct kernels *k)
{
	if (!k)
		return;
	for (int i = 0; i < k->n; i++)
		entry_free(k->e[i]);
	free(k->e);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

/* Index of name, or -(insertion point) - 1. Caller holds the lock. */
static int find(const struct kernels *k, const char *name)
{
	int lo = 0, hi = k->n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(k->e[mid]->name, name);
		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -lo - 1;
}

unsigned long long kernels_bytes_of(const struct image *img)
{
	return (unsigned long long)img->width * img->height * img->channels * sizeof(float);
}

/* Drops one reference; frees at zero. Caller holds the lock. */
static void unref(struct kernel_entry *e)
{
	if (--e->refs == 0)
		entry_free(e);
}

int kernels_put(struct kernels *k, const char *name, struct image *img,
                const struct image_info *info, int *replaced, struct kernel_entry **held)
{
	*replaced = 0;
	if (held)
		*held = NULL;
	if (!api_valid_name(name)) {
		image_free(img);
		return KERNELS_E_NAME;
	}
	struct kernel_entry *e = calloc(1, sizeof *e);
	if (!e) {
		image_free(img);
		return KERNELS_E_NOMEM;
	}
	snprintf(e->name, sizeof e->name, "%s", name);
	e->img = *img;
	memset(img, 0, sizeof *img);
	e->info = *info;
	bloom_kernel_digest(&e->img, e->digest);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	e->created = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
	e->refs = 1; /* the registry's own */
	unsigned long long nb = kernels_bytes_of(&e->img);
	if (nb > k->max_bytes) {
		entry_free(e);
		return KERNELS_E_TOO_LARGE;
	}
	pthread_mutex_lock(&k->lock);
	int i = find(k, name);
	unsigned long long old = i >= 0 ? kernels_bytes_of(&k->e[i]->img) : 0;
	if (k->bytes - old + nb > k->max_bytes) {
		pthread_mutex_unlock(&k->lock);
		entry_free(e);
		return KERNELS_E_BYTES;
	}
	if (i >= 0) {
		unref(k->e[i]);
		k->e[i] = e;
		*replaced = 1;
		k->bytes += nb - old;
	} else if (k->n >= k->max) {
		pthread_mutex_unlock(&k->lock);
		entry_free(e);
		return KERNELS_E_FULL;
	} else {
		k->bytes += nb;
		i = -i - 1;
		memmove(&k->e[i + 1], &k->e[i], (size_t)(k->n - i) * sizeof *k->e);
		k->e[i] = e;
		k->n++;
	}
	if (held) {
		e->refs++;
		*held = e;
	}
	pthread_mutex_unlock(&k->lock);
	return 0;
}

struct kernel_entry *kernels_get(struct kernels *k, const char *name)
{
	struct kernel_entry *e = NULL;
	pthread_mutex_lock(&k->lock);
	int i = find(k, name);
	if (i >= 0) {
		e = k->e[i];
		e->refs++;
	}
	pthread_mutex_unlock(&k->lock);
	return e;
}

void kernels_release(struct kernels *k, struct kernel_entry *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&k->lock);
	unref(e);
	pthread_mutex_unlock(&k->lock);
}

int kernels_delete(struct kernels *k, const char *name)
{
	pthread_mutex_lock(&k->lock);
	int i = find(k, name);
	if (i < 0) {
		pthread_mutex_unlock(&k->lock);
		return KERNELS_E_NOTFOUND;
	}
	k->bytes -= kernels_bytes_of(&k->e[i]->img);
	unref(k->e[i]);
	memmove(&k->e[i], &k->e[i + 1], (size_t)(k->n - i - 1) * sizeof *k->e);
	k->n--;
	pthread_mutex_unlock(&k->lock);
	return 0;
}

void kernels_each(struct kernels *k, void (*fn)(const struct kernel_entry *e, void *ctx), void *ctx)
{
	pthread_mutex_lock(&k->lock);
	for (int i = 0; i < k->n; i++)
		fn(k->e[i], ctx);
	pthread_mutex_unlock(&k->lock);
}

void kernels_totals(struct kernels *k, size_t *count, size_t *bytes)
{
	pthread_mutex_lock(&k->lock);
	*count = (size_t)k->n;
	*bytes = (size_t)k->bytes;
	pthread_mutex_unlock(&k->lock);
}

int kernels_load_dir(struct kernels *k, const char *dir, const struct image_limits *lim,
                     int *loaded, int *removed, char err[KERNELS_ERR_LEN])
{
	*loaded = *removed = 0;
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, KERNELS_ERR_LEN, "kernel-dir: cannot open '%.400s'", dir);
		return KERNELS_E_DIR;
	}
	struct file {
		char name[65];
		struct image img;
		struct image_info info;
	} *files = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *dot = strrchr(de->d_name, '.');
		if (de->d_name[0] == '.' || !dot || image_format_from_name(dot + 1) == IMAGE_FORMAT_UNKNOWN)
			continue;
		char name[256], path[4096];
		snprintf(name, sizeof name, "%.*s", (int)(dot - de->d_name), de->d_name);
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (!api_valid_name(name)) {
			snprintf(err, KERNELS_ERR_LEN, "kernel-dir: %.200s: '%.64s' is not a kernel name "
			         "(1-64 of A-Z a-z 0-9 . _ -)", path, name);
			rc = KERNELS_E_NAME;
			goto out;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			struct file *nf = realloc(files, cap * sizeof *files);
			if (!nf) {
				rc = KERNELS_E_NOMEM;
				goto out;
			}
			files = nf;
		}
		struct file *f = &files[n];
		memset(f, 0, sizeof *f);
		snprintf(f->name, sizeof f->name, "%.64s", name);
		char ierr[IMAGE_ERR_LEN];
		if (image_read_file(path, lim, &f->img, &f->info, ierr)) {
			snprintf(err, KERNELS_ERR_LEN, "kernel-dir: %.200s: %.250s", path, ierr);
			rc = KERNELS_E_DIR;
			goto out;
		}
		n++;
	}
	for (size_t i = 0; i < n; i++) { /* in order of name, as the files were sorted before */
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(files[j].name, files[i].name) < 0) {
				struct file t = files[i];
				files[i] = files[j];
				files[j] = t;
			}
		if (i && !strcmp(files[i].name, files[i - 1].name)) {
			snprintf(err, KERNELS_ERR_LEN, "kernel-dir: two files name the kernel '%s'",
			         files[i].name);
			rc = KERNELS_E_DIR;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int replaced;
		int r = kernels_put(k, files[i].name, &files[i].img, &files[i].info, &replaced, NULL);
		if (r) {
			snprintf(err, KERNELS_ERR_LEN, "kernel-dir: %s: %s", files[i].name,
			         kernels_strerror(r));
			rc = r;
			goto out;
		}
		pthread_mutex_lock(&k->lock);
		int at = find(k, files[i].name);
		if (at >= 0)
			k->e[at]->from_dir = 1;
		pthread_mutex_unlock(&k->lock);
		(*loaded)++;
	}
	pthread_mutex_lock(&k->lock); /* entries from files that are gone */
	for (int i = 0; i < k->n;) {
		int keep = !k->e[i]->from_dir;
		for (size_t f = 0; !keep && f < n; f++)
			keep = !strcmp(files[f].name, k->e[i]->name);
		if (keep) {
			i++;
			continue;
		}
		k->bytes -= kernels_bytes_of(&k->e[i]->img);
		unref(k->e[i]);
		memmove(&k->e[i], &k->e[i + 1], (size_t)(k->n - i - 1) * sizeof *k->e);
		k->n--;
		(*removed)++;
	}
	pthread_mutex_unlock(&k->lock);
out:
	for (size_t i = 0; i < n; i++)
		image_free(&files[i].img);
	free(files);
	closedir(d);
	return rc;
}
