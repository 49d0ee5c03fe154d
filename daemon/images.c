/* The stored source images; see images.h. */
#include "daemon/images.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/apiutil.h"

struct images {
	struct registry *reg;
};

const char *images_strerror(int code)
{
	switch (code) {
	case IMAGES_OK: return "ok";
	case IMAGES_E_NAME: return "invalid image name (1-64 of A-Z a-z 0-9 . _ -)";
	case IMAGES_E_FULL: return "image store full";
	case IMAGES_E_NOTFOUND: return "no such image";
	case IMAGES_E_NOMEM: return "out of memory";
	case IMAGES_E_DIR: return "image folder unreadable";
	case IMAGES_E_BYTES: return "image memory full";
	case IMAGES_E_TOO_LARGE: return "image larger than the image memory";
	}
	return "unknown error";
}

static void entry_free(struct reg_entry *r)
{
	struct image_entry *e = (struct image_entry *)r;
	free(e->data);
	free(e);
}

int images_create(int max_entries, unsigned long long max_bytes, struct images **out)
{
	struct images *s = calloc(1, sizeof *s);
	if (!s)
		return IMAGES_E_NOMEM;
	int rc = registry_create(max_entries, max_bytes, entry_free, &s->reg);
	if (rc) {
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void images_destroy(struct images *s)
{
	if (!s)
		return;
	registry_destroy(s->reg);
	free(s);
}

/* A new entry holding data (ownership moves in even on failure: then freed), or NULL. */
static struct image_entry *entry_new(const char *name, unsigned char *data, size_t len,
                                     const struct image_facts *facts)
{
	struct image_entry *e = calloc(1, sizeof *e);
	if (!e || gnutls_hash_fast(GNUTLS_DIG_SHA256, data, len, e->digest)) {
		free(e);
		free(data);
		return NULL;
	}
	registry_entry_init(&e->reg, name, len);
	e->data = data;
	e->len = len;
	e->facts = *facts;
	for (int i = 0; i < 32; i++)
		snprintf(e->digest_hex + 2 * i, 3, "%02x", e->digest[i]);
	return e;
}

int images_put(struct images *s, const char *name, unsigned char *data, size_t len,
               const struct image_facts *facts, int *replaced, struct image_entry **held)
{
	*replaced = 0;
	if (held)
		*held = NULL;
	if (!api_valid_name(name)) { /* before hashing the bytes */
		free(data);
		return IMAGES_E_NAME;
	}
	struct image_entry *e = entry_new(name, data, len, facts);
	if (!e)
		return IMAGES_E_NOMEM;
	return registry_put(s->reg, &e->reg, replaced, (struct reg_entry **)held);
}

struct image_entry *images_get(struct images *s, const char *name)
{
	return (struct image_entry *)registry_get(s->reg, name);
}

void images_release(struct images *s, struct image_entry *e)
{
	registry_release(s->reg, e ? &e->reg : NULL);
}

int images_delete(struct images *s, const char *name)
{
	return registry_delete(s->reg, name);
}

struct each_ctx {
	void (*fn)(const struct image_entry *e, void *ctx);
	void *ctx;
};

static void each_one(const struct reg_entry *r, void *ctx)
{
	struct each_ctx *c = ctx;
	c->fn((const struct image_entry *)r, c->ctx);
}

void images_each(struct images *s, void (*fn)(const struct image_entry *e, void *ctx), void *ctx)
{
	struct each_ctx c = {fn, ctx};
	registry_each(s->reg, each_one, &c);
}

json_t *images_entry_json(const struct image_entry *e)
{
	char when[32] = "";
	time_t t = (time_t)e->reg.created;
	struct tm tm;
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{s:s,s:i,s:i,s:i,s:s,s:i,s:s,s:I,s:s}", "name", e->reg.name, "width",
	                 e->facts.width, "height", e->facts.height, "channels",
	                 e->facts.info.channels, "format", image_format_name(e->facts.info.format),
	                 "bits", e->facts.info.bits, "digest", e->digest_hex, "bytes",
	                 (json_int_t)e->len, "created", when);
}

void images_totals(struct images *s, size_t *count, unsigned long long *bytes, int *max_count,
                   unsigned long long *max_bytes)
{
	registry_totals(s->reg, count, bytes, max_count, max_bytes);
}

/* Reads a whole file of size bytes into a malloc'd buffer: 0, IMAGES_E_DIR or IMAGES_E_NOMEM. */
static int read_file(const char *path, long long size, unsigned char **out)
{
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return IMAGES_E_DIR;
	size_t n = (size_t)size;
	unsigned char *b = malloc(n ? n : 1);
	if (!b) {
		fclose(f);
		return IMAGES_E_NOMEM;
	}
	size_t got = fread(b, 1, n, f);
	int more = fgetc(f) != EOF;
	fclose(f);
	if (got != n || more) { /* changed while it was read */
		free(b);
		return IMAGES_E_DIR;
	}
	*out = b;
	return 0;
}

/* The entry of a folder's file: read whole, decoded within lim for its facts (the check). */
static int load_file(const struct reg_file *f, unsigned long long max_bytes,
                     const struct image_limits *lim, struct image_entry **out,
                     char err[IMAGES_ERR_LEN])
{
	*out = NULL;
	if ((unsigned long long)f->size > max_bytes) {
		snprintf(err, IMAGES_ERR_LEN, "image-dir: %.300s: larger than the whole "
		         "--image-memory of %llu bytes", f->path, max_bytes);
		return IMAGES_E_TOO_LARGE;
	}
	unsigned char *data;
	int rc = read_file(f->path, f->size, &data);
	if (rc) {
		snprintf(err, IMAGES_ERR_LEN, "image-dir: %.300s: cannot read it%s", f->path,
		         rc == IMAGES_E_NOMEM ? " (out of memory)" : "");
		return rc;
	}
	struct image img;
	struct image_facts facts;
	memset(&facts, 0, sizeof facts);
	char ierr[IMAGE_ERR_LEN];
	if (image_decode(data, (size_t)f->size, lim, &img, &facts.info, ierr)) {
		snprintf(err, IMAGES_ERR_LEN, "image-dir: %.200s: %.250s", f->path, ierr);
		free(data);
		return IMAGES_E_DIR;
	}
	facts.width = img.width;
	facts.height = img.height;
	image_free(&img);
	*out = entry_new(f->name, data, (size_t)f->size, &facts);
	return *out ? 0 : IMAGES_E_NOMEM;
}

int images_load_dir(struct images *s, const char *dir, const struct image_limits *lim,
                    int *loaded, int *removed, char err[IMAGES_ERR_LEN])
{
	*loaded = *removed = 0;
	struct reg_file *files;
	size_t n;
	int rc = registry_scan_dir(dir, "image-dir", &files, &n, err);
	if (rc)
		return rc;
	struct reg_entry **entries = calloc(n ? n : 1, sizeof *entries);
	if (!entries) {
		free(files);
		return IMAGES_E_NOMEM;
	}
	int max_n;
	unsigned long long max_bytes;
	registry_totals(s->reg, NULL, NULL, &max_n, &max_bytes);
	for (size_t i = 0; i < n && !rc; i++) {
		struct image_entry *e;
		rc = load_file(&files[i], max_bytes, lim, &e, err);
		entries[i] = e ? &e->reg : NULL;
	}
	if (!rc) {
		long count;
		unsigned long long bytes;
		rc = registry_swap_dir(s->reg, files, entries, n, loaded, removed, &count, &bytes);
		if (rc)
			snprintf(err, IMAGES_ERR_LEN, "image-dir: %s: the store would hold %ld images of "
			         "%llu bytes; --max-images is %d and --image-memory %llu bytes", dir, count,
			         bytes, max_n, max_bytes);
	} else {
		for (size_t i = 0; i < n; i++)
			if (entries[i])
				entry_free(entries[i]);
	}
	free(entries);
	free(files);
	return rc;
}
