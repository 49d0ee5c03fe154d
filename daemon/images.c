/* The stored source images; see images.h. */
#include "daemon/images.h"

#include <dirent.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "daemon/apiutil.h"

struct images {
	pthread_mutex_t lock;
	struct image_entry **e; /* sorted by name */
	int n, max;
	unsigned long long bytes, max_bytes;
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

int images_create(int max_entries, unsigned long long max_bytes, struct images **out)
{
	struct images *s = calloc(1, sizeof *s);
	if (!s)
		return IMAGES_E_NOMEM;
	s->max = max_entries;
	s->max_bytes = max_bytes;
	s->e = calloc(max_entries > 0 ? (size_t)max_entries : 1, sizeof *s->e);
	if (!s->e) {
		free(s);
		return IMAGES_E_NOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return 0;
}

static void entry_free(struct image_entry *e)
{
	free(e->data);
	free(e);
}

void images_destroy(struct images *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++)
		entry_free(s->e[i]);
	free(s->e);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Index of name, or -(insertion point) - 1. Caller holds the lock. */
static int find(const struct images *s, const char *name)
{
	int lo = 0, hi = s->n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(s->e[mid]->name, name);
		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -lo - 1;
}

/* Drops one reference; frees at zero. Caller holds the lock. */
static void unref(struct image_entry *e)
{
	if (--e->refs == 0)
		entry_free(e);
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
	snprintf(e->name, sizeof e->name, "%s", name);
	e->data = data;
	e->len = len;
	e->facts = *facts;
	for (int i = 0; i < 32; i++)
		snprintf(e->digest_hex + 2 * i, 3, "%02x", e->digest[i]);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	e->created = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
	e->refs = 1; /* the store's own */
	return e;
}

/* Puts e at name's place (replacing, or inserting at the insertion point i < 0). Caller holds
 * the lock and checked the limits. */
static void place(struct images *s, int i, struct image_entry *e)
{
	if (i >= 0) {
		s->bytes -= s->e[i]->len;
		unref(s->e[i]);
		s->e[i] = e;
	} else {
		i = -i - 1;
		memmove(&s->e[i + 1], &s->e[i], (size_t)(s->n - i) * sizeof *s->e);
		s->e[i] = e;
		s->n++;
	}
	s->bytes += e->len;
}

/* Removes entry i. Caller holds the lock. */
static void remove_at(struct images *s, int i)
{
	s->bytes -= s->e[i]->len;
	unref(s->e[i]);
	memmove(&s->e[i], &s->e[i + 1], (size_t)(s->n - i - 1) * sizeof *s->e);
	s->n--;
}

int images_put(struct images *s, const char *name, unsigned char *data, size_t len,
               const struct image_facts *facts, int *replaced, struct image_entry **held)
{
	*replaced = 0;
	if (held)
		*held = NULL;
	if (!api_valid_name(name)) {
		free(data);
		return IMAGES_E_NAME;
	}
	if (len > s->max_bytes) {
		free(data);
		return IMAGES_E_TOO_LARGE;
	}
	struct image_entry *e = entry_new(name, data, len, facts);
	if (!e)
		return IMAGES_E_NOMEM;
	pthread_mutex_lock(&s->lock);
	int i = find(s, name);
	unsigned long long old = i >= 0 ? s->e[i]->len : 0;
	int rc = 0;
	if (s->bytes - old + len > s->max_bytes)
		rc = IMAGES_E_BYTES;
	else if (i < 0 && s->n >= s->max)
		rc = IMAGES_E_FULL;
	if (!rc) {
		*replaced = i >= 0;
		place(s, i, e);
		if (held) {
			e->refs++;
			*held = e;
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (rc)
		entry_free(e);
	return rc;
}

struct image_entry *images_get(struct images *s, const char *name)
{
	struct image_entry *e = NULL;
	pthread_mutex_lock(&s->lock);
	int i = find(s, name);
	if (i >= 0) {
		e = s->e[i];
		e->refs++;
	}
	pthread_mutex_unlock(&s->lock);
	return e;
}

void images_release(struct images *s, struct image_entry *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&s->lock);
	unref(e);
	pthread_mutex_unlock(&s->lock);
}

int images_delete(struct images *s, const char *name)
{
	pthread_mutex_lock(&s->lock);
	int i = find(s, name);
	if (i >= 0)
		remove_at(s, i);
	pthread_mutex_unlock(&s->lock);
	return i >= 0 ? 0 : IMAGES_E_NOTFOUND;
}

void images_each(struct images *s, void (*fn)(const struct image_entry *e, void *ctx), void *ctx)
{
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->n; i++)
		fn(s->e[i], ctx);
	pthread_mutex_unlock(&s->lock);
}

json_t *images_entry_json(const struct image_entry *e)
{
	char when[32] = "";
	time_t t = (time_t)e->created;
	struct tm tm;
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{s:s,s:i,s:i,s:i,s:s,s:i,s:s,s:I,s:s}", "name", e->name, "width",
	                 e->facts.width, "height", e->facts.height, "channels",
	                 e->facts.info.channels, "format", image_format_name(e->facts.info.format),
	                 "bits", e->facts.info.bits, "digest", e->digest_hex, "bytes",
	                 (json_int_t)e->len, "created", when);
}

void images_totals(struct images *s, size_t *count, unsigned long long *bytes, int *max_count,
                   unsigned long long *max_bytes)
{
	pthread_mutex_lock(&s->lock);
	*count = (size_t)s->n;
	*bytes = s->bytes;
	*max_count = s->max;
	*max_bytes = s->max_bytes;
	pthread_mutex_unlock(&s->lock);
}

/* Reads a whole file of at most max bytes into a malloc'd buffer. 0, or IMAGES_E_TOO_LARGE,
 * IMAGES_E_DIR (unreadable), IMAGES_E_NOMEM. */
static int read_file(const char *path, unsigned long long max, unsigned char **out, size_t *len,
                     double *mtime)
{
	*out = NULL;
	*len = 0;
	*mtime = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return IMAGES_E_DIR;
	struct stat st;
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return IMAGES_E_DIR;
	}
	if ((unsigned long long)st.st_size > max) {
		fclose(f);
		return IMAGES_E_TOO_LARGE;
	}
	*mtime = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9;
	size_t n = (size_t)st.st_size;
	unsigned char *b = malloc(n ? n : 1);
	if (!b) {
		fclose(f);
		return IMAGES_E_NOMEM;
	}
	size_t got = fread(b, 1, n, f);
	fclose(f);
	if (got != n) {
		free(b);
		return IMAGES_E_DIR;
	}
	*out = b;
	*len = n;
	return 0;
}

struct dir_file {
	char name[65];
	unsigned char *data;
	size_t len;
	double mtime;              /* the file's modification time, CLOCK_REALTIME seconds */
	struct image_facts facts;
	struct image_entry *e;
};

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct dir_file *)a)->name, ((const struct dir_file *)b)->name);
}

int images_load_dir(struct images *s, const char *dir, const struct image_limits *lim,
                    int *loaded, int *removed, char err[IMAGES_ERR_LEN])
{
	*loaded = *removed = 0;
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, IMAGES_ERR_LEN, "image-dir: cannot open '%.400s'", dir);
		return IMAGES_E_DIR;
	}
	struct dir_file *files = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *dot = strrchr(de->d_name, '.');
		if (de->d_name[0] == '.' || !dot ||
		    image_format_from_name(dot + 1) == IMAGE_FORMAT_UNKNOWN)
			continue;
		char name[256], path[4096];
		snprintf(name, sizeof name, "%.*s", (int)(dot - de->d_name), de->d_name);
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (!api_valid_name(name)) {
			snprintf(err, IMAGES_ERR_LEN, "image-dir: %.200s: '%.64s' is not an image name "
			         "(1-64 of A-Z a-z 0-9 . _ -, not starting with '.')", path, name);
			rc = IMAGES_E_NAME;
			goto out;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			struct dir_file *nf = realloc(files, cap * sizeof *files);
			if (!nf) {
				rc = IMAGES_E_NOMEM;
				goto out;
			}
			files = nf;
		}
		struct dir_file *f = &files[n];
		memset(f, 0, sizeof *f);
		snprintf(f->name, sizeof f->name, "%.64s", name);
		n++;
		rc = read_file(path, s->max_bytes, &f->data, &f->len, &f->mtime);
		if (rc) {
			if (rc == IMAGES_E_TOO_LARGE)
				snprintf(err, IMAGES_ERR_LEN, "image-dir: %.300s: larger than the whole "
				         "--image-memory of %llu bytes", path, s->max_bytes);
			else
				snprintf(err, IMAGES_ERR_LEN, "image-dir: %.300s: cannot read it%s", path,
				         rc == IMAGES_E_NOMEM ? " (out of memory)" : "");
			goto out;
		}
		struct image img;
		char ierr[IMAGE_ERR_LEN];
		int irc = image_decode(f->data, f->len, lim, &img, &f->facts.info, ierr);
		if (irc) {
			snprintf(err, IMAGES_ERR_LEN, "image-dir: %.200s: %.250s", path, ierr);
			rc = IMAGES_E_DIR;
			goto out;
		}
		f->facts.width = img.width;
		f->facts.height = img.height;
		image_free(&img);
	}
	qsort(files, n, sizeof *files, cmp_file);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(files[i].name, files[i - 1].name)) {
			snprintf(err, IMAGES_ERR_LEN, "image-dir: two files name the image '%s'",
			         files[i].name);
			rc = IMAGES_E_DIR;
			goto out;
		}
	for (size_t i = 0; i < n; i++) {
		files[i].e = entry_new(files[i].name, files[i].data, files[i].len, &files[i].facts);
		files[i].data = NULL; /* the entry's now, or freed */
		if (!files[i].e) {
			rc = IMAGES_E_NOMEM;
			goto out;
		}
	}
	pthread_mutex_lock(&s->lock);
	/* a file does not replace an upload (PUT) of its name made since the file was written:
	 * the newer of the two is the image */
	for (size_t i = 0; i < n; i++) {
		int at = find(s, files[i].name);
		if (at >= 0 && !s->e[at]->from_dir && s->e[at]->created >= files[i].mtime) {
			entry_free(files[i].e);
			files[i].e = NULL;
		}
	}
	/* the store as it would be: entries not from the folder and not replaced by a file, plus
	 * the files that apply */
	unsigned long long bytes = 0;
	long count = 0;
	for (int i = 0; i < s->n; i++) {
		struct dir_file key, *f;
		snprintf(key.name, sizeof key.name, "%s", s->e[i]->name);
		f = n ? bsearch(&key, files, n, sizeof *files, cmp_file) : NULL;
		if (!s->e[i]->from_dir && (!f || !f->e)) {
			bytes += s->e[i]->len;
			count++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (!files[i].e)
			continue;
		bytes += files[i].len;
		count++;
	}
	if (bytes > s->max_bytes || count > s->max) {
		pthread_mutex_unlock(&s->lock);
		snprintf(err, IMAGES_ERR_LEN, "image-dir: %s: the store would hold %ld images of %llu "
		         "bytes; --max-images is %d and --image-memory %llu bytes", dir, count, bytes,
		         s->max, s->max_bytes);
		rc = bytes > s->max_bytes ? IMAGES_E_BYTES : IMAGES_E_FULL;
		goto out;
	}
	for (int i = 0; i < s->n;) { /* entries from files that are gone: first, to make room */
		struct dir_file key;
		snprintf(key.name, sizeof key.name, "%s", s->e[i]->name);
		if (s->e[i]->from_dir && !(n && bsearch(&key, files, n, sizeof *files, cmp_file))) {
			remove_at(s, i);
			(*removed)++;
		} else {
			i++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (!files[i].e)
			continue;
		files[i].e->from_dir = 1;
		place(s, find(s, files[i].name), files[i].e);
		files[i].e = NULL;
		(*loaded)++;
	}
	pthread_mutex_unlock(&s->lock);
out:
	for (size_t i = 0; i < n; i++) {
		free(files[i].data);
		if (files[i].e)
			entry_free(files[i].e);
	}
	free(files);
	closedir(d);
	return rc;
}
