/* The named, reference-counted, bounded registry; see registry.h. */
#include "daemon/registry.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "daemon/apiutil.h"
#include "codec/image.h"

struct registry {
	pthread_mutex_t lock;
	struct reg_entry **e; /* sorted by name */
	int n, max;
	unsigned long long bytes, max_bytes;
	void (*free_entry)(struct reg_entry *e);
};

int registry_create(int max_entries, unsigned long long max_bytes,
                    void (*free_entry)(struct reg_entry *e), struct registry **out)
{
	struct registry *r = calloc(1, sizeof *r);
	if (!r)
		return REGISTRY_E_NOMEM;
	r->max = max_entries;
	r->max_bytes = max_bytes;
	r->free_entry = free_entry;
	r->e = calloc(max_entries > 0 ? (size_t)max_entries : 1, sizeof *r->e);
	if (!r->e) {
		free(r);
		return REGISTRY_E_NOMEM;
	}
	pthread_mutex_init(&r->lock, NULL);
	*out = r;
	return 0;
}

void registry_destroy(struct registry *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n; i++)
		r->free_entry(r->e[i]);
	free(r->e);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

static double now_realtime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void registry_entry_init(struct reg_entry *e, const char *name, unsigned long long bytes)
{
	snprintf(e->name, sizeof e->name, "%s", name);
	e->bytes = bytes;
	e->created = e->written = now_realtime();
	e->from_dir = 0;
	e->refs = 1;
}

/* Index of name, or -(insertion point) - 1. Caller holds the lock. */
static int find(const struct registry *r, const char *name)
{
	int lo = 0, hi = r->n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(r->e[mid]->name, name);
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
static void unref(struct registry *r, struct reg_entry *e)
{
	if (--e->refs == 0)
		r->free_entry(e);
}

/* Puts e at its name's place i (replacing, or inserting at the insertion point i < 0). Caller
 * holds the lock and checked the bounds. */
static void place(struct registry *r, int i, struct reg_entry *e)
{
	if (i >= 0) {
		r->bytes -= r->e[i]->bytes;
		unref(r, r->e[i]);
		r->e[i] = e;
	} else {
		i = -i - 1;
		memmove(&r->e[i + 1], &r->e[i], (size_t)(r->n - i) * sizeof *r->e);
		r->e[i] = e;
		r->n++;
	}
	r->bytes += e->bytes;
}

/* Removes entry i. Caller holds the lock. */
static void remove_at(struct registry *r, int i)
{
	r->bytes -= r->e[i]->bytes;
	unref(r, r->e[i]);
	memmove(&r->e[i], &r->e[i + 1], (size_t)(r->n - i - 1) * sizeof *r->e);
	r->n--;
}

int registry_put(struct registry *r, struct reg_entry *e, int *replaced, struct reg_entry **held)
{
	*replaced = 0;
	if (held)
		*held = NULL;
	int rc = !api_valid_name(e->name) ? REGISTRY_E_NAME
	         : e->bytes > r->max_bytes ? REGISTRY_E_TOO_LARGE : 0;
	if (rc) {
		r->free_entry(e);
		return rc;
	}
	pthread_mutex_lock(&r->lock);
	int i = find(r, e->name);
	unsigned long long old = i >= 0 ? r->e[i]->bytes : 0;
	if (r->bytes - old + e->bytes > r->max_bytes)
		rc = REGISTRY_E_BYTES;
	else if (i < 0 && r->n >= r->max)
		rc = REGISTRY_E_FULL;
	if (!rc) {
		*replaced = i >= 0;
		place(r, i, e);
		if (held) {
			e->refs++;
			*held = e;
		}
	}
	pthread_mutex_unlock(&r->lock);
	if (rc)
		r->free_entry(e);
	return rc;
}

struct reg_entry *registry_get(struct registry *r, const char *name)
{
	struct reg_entry *e = NULL;
	pthread_mutex_lock(&r->lock);
	int i = find(r, name);
	if (i >= 0) {
		e = r->e[i];
		e->refs++;
	}
	pthread_mutex_unlock(&r->lock);
	return e;
}

void registry_release(struct registry *r, struct reg_entry *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&r->lock);
	unref(r, e);
	pthread_mutex_unlock(&r->lock);
}

int registry_delete(struct registry *r, const char *name)
{
	pthread_mutex_lock(&r->lock);
	int i = find(r, name);
	if (i >= 0)
		remove_at(r, i);
	pthread_mutex_unlock(&r->lock);
	return i >= 0 ? 0 : REGISTRY_E_NOTFOUND;
}

void registry_each(struct registry *r, void (*fn)(const struct reg_entry *e, void *ctx),
                   void *ctx)
{
	pthread_mutex_lock(&r->lock);
	for (int i = 0; i < r->n; i++)
		fn(r->e[i], ctx);
	pthread_mutex_unlock(&r->lock);
}

void registry_totals(struct registry *r, size_t *count, unsigned long long *bytes,
                     int *max_count, unsigned long long *max_bytes)
{
	pthread_mutex_lock(&r->lock);
	if (count)
		*count = (size_t)r->n;
	if (bytes)
		*bytes = r->bytes;
	if (max_count)
		*max_count = r->max;
	if (max_bytes)
		*max_bytes = r->max_bytes;
	pthread_mutex_unlock(&r->lock);
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct reg_file *)a)->name, ((const struct reg_file *)b)->name);
}

int registry_scan_dir(const char *dir, const char *what, struct reg_file **files, size_t *n,
                      char err[REGISTRY_ERR_LEN])
{
	*files = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, REGISTRY_ERR_LEN, "%s: cannot open '%.400s'", what, dir);
		return REGISTRY_E_DIR;
	}
	struct reg_file *fs = NULL;
	size_t cnt = 0, cap = 0;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *dot = strrchr(de->d_name, '.');
		if (de->d_name[0] == '.' || !dot ||
		    image_format_from_name(dot + 1) == IMAGE_FORMAT_UNKNOWN)
			continue;
		char name[256];
		snprintf(name, sizeof name, "%.*s", (int)(dot - de->d_name), de->d_name);
		if (!api_valid_name(name)) {
			snprintf(err, REGISTRY_ERR_LEN, "%.16s: %.150s/%.150s: '%.64s' is not a name "
			         "(1-64 of A-Z a-z 0-9 . _ -, not starting with '.')", what, dir,
			         de->d_name, name);
			rc = REGISTRY_E_NAME;
			break;
		}
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			struct reg_file *nf = realloc(fs, cap * sizeof *fs);
			if (!nf) {
				rc = REGISTRY_E_NOMEM;
				break;
			}
			fs = nf;
		}
		struct reg_file *f = &fs[cnt];
		memset(f, 0, sizeof *f);
		snprintf(f->name, sizeof f->name, "%.64s", name); /* api_valid_name: <= 64 */
		snprintf(f->path, sizeof f->path, "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(f->path, &st) || !S_ISREG(st.st_mode)) {
			snprintf(err, REGISTRY_ERR_LEN, "%s: %.300s: cannot read it", what, f->path);
			rc = REGISTRY_E_DIR;
			break;
		}
		f->mtime = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9;
		f->size = (long long)st.st_size;
		cnt++;
	}
	closedir(d);
	if (!rc && cnt) { /* an empty folder has no array to sort (fs NULL) */
		qsort(fs, cnt, sizeof *fs, cmp_file);
		for (size_t i = 1; i < cnt && !rc; i++)
			if (!strcmp(fs[i].name, fs[i - 1].name)) {
				snprintf(err, REGISTRY_ERR_LEN, "%s: two files name '%s'", what, fs[i].name);
				rc = REGISTRY_E_DIR;
			}
	}
	if (rc) {
		free(fs);
		return rc;
	}
	*files = fs;
	*n = cnt;
	return 0;
}

/* The folder's entry of name (files sorted), or -1. */
static long file_of(const struct reg_file *files, size_t n, const char *name)
{
	struct reg_file key;
	snprintf(key.name, sizeof key.name, "%s", name);
	const struct reg_file *f = n ? bsearch(&key, files, n, sizeof *files, cmp_file) : NULL;
	return f ? f - files : -1;
}

int registry_swap_dir(struct registry *r, const struct reg_file *files, struct reg_entry **entries,
                      size_t n, int *loaded, int *removed, long *count, unsigned long long *bytes)
{
	*loaded = *removed = 0;
	for (size_t i = 0; i < n; i++) {
		entries[i]->from_dir = 1;
		entries[i]->written = files[i].mtime;
	}
	pthread_mutex_lock(&r->lock);
	/* a file does not replace an upload of its name made since it was written */
	for (size_t i = 0; i < n; i++) {
		int at = find(r, files[i].name);
		if (at >= 0 && !r->e[at]->from_dir && r->e[at]->created >= files[i].mtime) {
			r->free_entry(entries[i]);
			entries[i] = NULL;
		}
	}
	/* the registry as it would be: entries not from the folder and not replaced by a file,
	 * plus the files' entries that apply */
	unsigned long long b = 0;
	long c = 0;
	for (int i = 0; i < r->n; i++) {
		long f = file_of(files, n, r->e[i]->name);
		if (!r->e[i]->from_dir && (f < 0 || !entries[f])) {
			b += r->e[i]->bytes;
			c++;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (entries[i]) {
			b += entries[i]->bytes;
			c++;
		}
	*count = c;
	*bytes = b;
	int rc = b > r->max_bytes ? REGISTRY_E_BYTES : c > r->max ? REGISTRY_E_FULL : 0;
	if (!rc) {
		for (int i = 0; i < r->n;) { /* entries from files that are gone: first, for room */
			if (r->e[i]->from_dir && file_of(files, n, r->e[i]->name) < 0) {
				remove_at(r, i);
				(*removed)++;
			} else {
				i++;
			}
		}
		for (size_t i = 0; i < n; i++) {
			if (!entries[i])
				continue;
			place(r, find(r, files[i].name), entries[i]);
			entries[i] = NULL;
			(*loaded)++;
		}
	}
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < n; i++)
		if (entries[i]) {
			r->free_entry(entries[i]);
			entries[i] = NULL;
		}
	return rc;
}
