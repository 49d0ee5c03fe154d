/* The named kernel registry: kernel images uploaded with PUT /v1/kernels/NAME or loaded from
 * --kernel-dir, decoded once and held with their digest so every GPU's spectrum cache recognises
 * them. Entries are reference counted: a job holds its kernel while it runs, so DELETE or a
 * replacing PUT never frees pixels in use. A registry (registry.h). Thread-safe. */
#ifndef FFTBLOOM_DAEMON_KERNELS_H
#define FFTBLOOM_DAEMON_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/registry.h"
#include "codec/image.h"

#define KERNELS_ERR_LEN REGISTRY_ERR_LEN

enum kernels_error {
	KERNELS_OK = REGISTRY_OK,
	KERNELS_E_NAME = REGISTRY_E_NAME,           /* not 1-64 of [A-Za-z0-9._-] */
	KERNELS_E_FULL = REGISTRY_E_FULL,           /* --max-kernels reached */
	KERNELS_E_NOTFOUND = REGISTRY_E_NOTFOUND,
	KERNELS_E_NOMEM = REGISTRY_E_NOMEM,
	KERNELS_E_DIR = REGISTRY_E_DIR,             /* --kernel-dir unreadable, or a file failed */
	KERNELS_E_BYTES = REGISTRY_E_BYTES,         /* --kernel-memory passed with the others */
	KERNELS_E_TOO_LARGE = REGISTRY_E_TOO_LARGE, /* alone larger than --kernel-memory */
};

struct kernel_entry {
	struct reg_entry reg;  /* name, bytes (its float samples), created, from_dir, refs */
	struct image img;      /* linear float, as decoded */
	struct image_info info;
	uint64_t digest[2];    /* bloom_kernel_digest of img */
};

struct kernels;

/* At most max_entries kernels holding max_bytes of pixels (float samples) together. */
int kernels_create(int max_entries, unsigned long long max_bytes, struct kernels **out);
void kernels_destroy(struct kernels *k); /* NULL-safe; entries still referenced are freed too */

/* Registers img (ownership moves in; on failure it is freed) under name, replacing an entry of
 * that name (whose bytes then no longer count). *replaced says whether one existed; with held,
 * *held is the new entry, referenced (kernels_release it), whatever a concurrent DELETE or PUT
 * of the name does next. Returns 0 or a negative kernels_error: KERNELS_E_FULL (count),
 * KERNELS_E_BYTES (bytes with the others), KERNELS_E_TOO_LARGE (bytes alone). */
int kernels_put(struct kernels *k, const char *name, struct image *img,
                const struct image_info *info, int *replaced, struct kernel_entry **held);

/* A referenced entry (release with kernels_release), or NULL. */
struct kernel_entry *kernels_get(struct kernels *k, const char *name);
void kernels_release(struct kernels *k, struct kernel_entry *e); /* NULL-safe */

int kernels_delete(struct kernels *k, const char *name);

/* Calls fn for each entry, sorted by name, under the lock (fn must not call back in). */
void kernels_each(struct kernels *k, void (*fn)(const struct kernel_entry *e, void *ctx), void *ctx);

void kernels_totals(struct kernels *k, size_t *count, size_t *bytes);

/* Bytes an image takes in the registry. */
unsigned long long kernels_bytes_of(const struct image *img);

/* Registers every regular file of dir whose extension names an image format, under its file
 * name without the extension, replacing an entry of that name unless that entry was uploaded
 * (kernels_put) since the file was last modified (the newer one is kept); then removes the
 * entries an earlier call registered from a file that is gone. Every file is decoded and the
 * limits are checked for the whole result before anything changes: on a failure (its message
 * names the file or the limit) the registry is left as it was. */
int kernels_load_dir(struct kernels *k, const char *dir, const struct image_limits *lim,
                     int *loaded, int *removed, char err[KERNELS_ERR_LEN]);

const char *kernels_strerror(int code);

#endif
