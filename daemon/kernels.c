/* Named kernel registry; see kernels.h. */
#include "daemon/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/apiutil.h"
#include "gles/bloom.h"

struct kernels {
	struct registry *reg;
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

static void entry_free(struct reg_entry *r)
{
	struct kernel_entry *e = (struct kernel_entry *)r;
	image_free(&e->img);
	free(e);
}

int kernels_create(int max_entries, unsigned long long max_bytes, struct kernels **out)
{
	struct kernels *k = calloc(1, sizeof *k);
	if (!k)
		return KERNELS_E_NOMEM;
	int rc = registry_create(max_entries, max_bytes, entry_free, &k->reg);
	if (rc) {
		free(k);
		return rc;
	}
	*out = k;
	return 0;
}

void kernels_destroy(struct kernels *k)
{
	if (!k)
		return;
	registry_destroy(k->reg);
	free(k);
}

unsigned long long kernels_bytes_of(const struct image *img)
{
	return (unsigned long long)img->width * img->height * img->channels * sizeof(float);
}

/* A new entry taking img's pixels (img is emptied; on failure freed), or NULL. */
static struct kernel_entry *entry_new(const char *name, struct image *img,
                                      const struct image_info *info)
{
	struct kernel_entry *e = calloc(1, sizeof *e);
	if (!e) {
		image_free(img);
		return NULL;
	}
	e->img = *img;
	memset(img, 0, sizeof *img);
	e->info = *info;
	bloom_kernel_digest(&e->img, e->digest);
	registry_entry_init(&e->reg, name, kernels_bytes_of(&e->img));
	return e;
}

int kernels_put(struct kernels *k, const char *name, struct image *img,
                const struct image_info *info, int *replaced, struct kernel_entry **held)
{
	*replaced = 0;
	if (held)
		*held = NULL;
	if (!api_valid_name(name)) { /* before the digest */
		image_free(img);
		return KERNELS_E_NAME;
	}
	struct kernel_entry *e = entry_new(name, img, info);
	if (!e)
		return KERNELS_E_NOMEM;
	return registry_put(k->reg, &e->reg, replaced, (struct reg_entry **)held);
}

struct kernel_entry *kernels_get(struct kernels *k, const char *name)
{
	return (struct kernel_entry *)registry_get(k->reg, name);
}

void kernels_release(struct kernels *k, struct kernel_entry *e)
{
	registry_release(k->reg, e ? &e->reg : NULL);
}

int kernels_delete(struct kernels *k, const char *name)
{
	return registry_delete(k->reg, name);
}

struct each_ctx {
	void (*fn)(const struct kernel_entry *e, void *ctx);
	void *ctx;
};

static void each_one(const struct reg_entry *r, void *ctx)
{
	struct each_ctx *c = ctx;
	c->fn((const struct kernel_entry *)r, c->ctx);
}

void kernels_each(struct kernels *k, void (*fn)(const struct kernel_entry *e, void *ctx), void *ctx)
{
	struct each_ctx c = {fn, ctx};
	registry_each(k->reg, each_one, &c);
}

void kernels_totals(struct kernels *k, size_t *count, size_t *bytes)
{
	unsigned long long b;
	registry_totals(k->reg, count, &b, NULL, NULL);
	*bytes = (size_t)b;
}

int kernels_load_dir(struct kernels *k, const char *dir, const struct image_limits *lim,
                     int *loaded, int *removed, char err[KERNELS_ERR_LEN])
{
	*loaded = *removed = 0;
	struct reg_file *files;
	size_t n;
	int rc = registry_scan_dir(dir, "kernel-dir", &files, &n, err);
	if (rc)
		return rc;
	struct reg_entry **entries = calloc(n ? n : 1, sizeof *entries);
	if (!entries) {
		free(files);
		return KERNELS_E_NOMEM;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		struct image img;
		struct image_info info;
		char ierr[IMAGE_ERR_LEN];
		if (image_read_file(files[i].path, lim, &img, &info, ierr)) {
			snprintf(err, KERNELS_ERR_LEN, "kernel-dir: %.200s: %.250s", files[i].path, ierr);
			rc = KERNELS_E_DIR;
			break;
		}
		struct kernel_entry *e = entry_new(files[i].name, &img, &info);
		entries[i] = e ? &e->reg : NULL;
		rc = e ? 0 : KERNELS_E_NOMEM;
	}
	if (!rc) {
		long count;
		unsigned long long bytes;
		int max_n;
		unsigned long long max_bytes;
		registry_totals(k->reg, NULL, NULL, &max_n, &max_bytes);
		rc = registry_swap_dir(k->reg, files, entries, n, loaded, removed, &count, &bytes);
		if (rc)
			snprintf(err, KERNELS_ERR_LEN, "kernel-dir: %s: the registry would hold %ld "
			         "kernels of %llu bytes; --max-kernels is %d and --kernel-memory %llu "
			         "bytes", dir, count, bytes, max_n, max_bytes);
	} else {
		for (size_t i = 0; i < n; i++)
			if (entries[i])
				entry_free(entries[i]);
	}
	free(entries);
	free(files);
	return rc;
}
