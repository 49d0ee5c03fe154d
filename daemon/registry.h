/* A named, reference-counted, bounded registry: what the stored images (images.h) and the named
 * kernels (kernels.h) have in common. Entries are sorted by name, bounded by count and by the
 * bytes they declare, and reference counted: a job holds its entry while it runs, so a DELETE or
 * a replacing PUT never frees what is in use. A folder (--image-dir, --kernel-dir) is scanned and
 * swapped in whole or not at all. Thread-safe: one lock per registry. */
#ifndef FFTBLOOM_DAEMON_REGISTRY_H
#define FFTBLOOM_DAEMON_REGISTRY_H

#include <stddef.h>

#define REGISTRY_ERR_LEN 512

enum registry_error {
	REGISTRY_OK = 0,
	REGISTRY_E_NAME = -1,      /* not 1-64 of [A-Za-z0-9._-], or starting with '.' */
	REGISTRY_E_FULL = -2,      /* the count bound reached */
	REGISTRY_E_NOTFOUND = -3,
	REGISTRY_E_NOMEM = -4,
	REGISTRY_E_DIR = -5,       /* the folder unreadable, or a file in it failed */
	REGISTRY_E_BYTES = -6,     /* the byte bound would be passed with the entries held now */
	REGISTRY_E_TOO_LARGE = -7, /* the entry alone is larger than the byte bound */
};

/* The first member of every entry type. */
struct reg_entry {
	char name[65];
	unsigned long long bytes;  /* what it counts against the byte bound */
	double created;            /* CLOCK_REALTIME seconds: when it was registered */
	double written;            /* from a folder: the file's modification time; else created */
	int from_dir;              /* registered from the folder (registry_swap_dir) */
	int refs;                  /* guarded by the registry's lock */
};

struct registry;

/* At most max_entries entries declaring max_bytes together; free_entry frees an entry whose
 * last reference went. */
int registry_create(int max_entries, unsigned long long max_bytes,
                    void (*free_entry)(struct reg_entry *e), struct registry **out);
void registry_destroy(struct registry *r); /* NULL-safe; entries still referenced are freed */

/* Fills the common fields of a new entry: name, bytes, created = written = now, one reference
 * (the registry's own, once it is put). */
void registry_entry_init(struct reg_entry *e, const char *name, unsigned long long bytes);

/* Registers e (made by the caller, initialised with registry_entry_init; ownership moves in, and
 * on failure it is freed) under its name, replacing an entry of that name (whose bytes then no
 * longer count). *replaced says whether one existed; with held, *held is e, referenced
 * (registry_release it), so that what is said of it is this upload's even if a DELETE or PUT of
 * the name follows at once. Returns 0 or REGISTRY_E_NAME, _FULL, _BYTES, _TOO_LARGE. */
int registry_put(struct registry *r, struct reg_entry *e, int *replaced, struct reg_entry **held);

/* A referenced entry (registry_release it), or NULL. */
struct reg_entry *registry_get(struct registry *r, const char *name);
void registry_release(struct registry *r, struct reg_entry *e); /* NULL-safe */

int registry_delete(struct registry *r, const char *name); /* 0 or REGISTRY_E_NOTFOUND */

/* Calls fn for each entry, sorted by name, under the lock (fn must not call back in). */
void registry_each(struct registry *r, void (*fn)(const struct reg_entry *e, void *ctx),
                   void *ctx);

void registry_totals(struct registry *r, size_t *count, unsigned long long *bytes,
                     int *max_count, unsigned long long *max_bytes);

/* A file of a folder that names an entry. */
struct reg_file {
	char name[65];     /* the file name without its extension */
	char path[4096];
	double mtime;      /* CLOCK_REALTIME seconds */
	long long size;
};

/* The regular files of dir whose extension names an image format (not starting with '.'),
 * sorted by name: 0 with *files (free it) and *n, or REGISTRY_E_DIR (unreadable, two files of
 * one name), _NAME (a file whose name is no entry name), _NOMEM, with a message naming the file
 * and `what` ("image-dir", "kernel-dir"). */
int registry_scan_dir(const char *dir, const char *what, struct reg_file **files, size_t *n,
                      char err[REGISTRY_ERR_LEN]);

/* Swaps a folder's entries in (entries[i] made from files[i], every one initialised and owned
 * by the call, from_dir and written set here): each replaces the entry of its name unless that
 * one was put (an upload) after the file was written, in which case the newer upload stays and
 * the file's entry is dropped; the entries an earlier swap registered from files that are gone
 * are removed. The bounds are checked for the whole result first: on REGISTRY_E_BYTES or _FULL
 * (counts in *count, *bytes) nothing changes. *loaded and *removed count what changed. */
int registry_swap_dir(struct registry *r, const struct reg_file *files, struct reg_entry **entries,
                      size_t n, int *loaded, int *removed, long *count, unsigned long long *bytes);

#endif
