/* The stored source images: images uploaded with PUT /v1/images/NAME or loaded from --image-dir,
 * decoded once to check them and then kept as they came (encoded), with their facts and the
 * SHA-256 of their bytes, for GET /v1/bloom/NAME and /v1/convolve/NAME to render. Encoded, not
 * decoded: a photo's JPEG is 10-50 times smaller than its float pixels, every render decodes on a
 * codec thread anyway (a JPEG straight to the planes the GPU converts), and the decoded size is
 * reserved against --memory-budget only while a render runs. Entries are reference counted: a
 * render holds its image while its job runs, so DELETE or a replacing PUT never frees bytes in
 * use. Bounded by count and by encoded bytes. A registry (registry.h). Thread-safe. */
#ifndef FFTBLOOM_DAEMON_IMAGES_H
#define FFTBLOOM_DAEMON_IMAGES_H

#include <jansson.h>
#include <stddef.h>

#include "daemon/registry.h"
#include "codec/image.h"

#define IMAGES_ERR_LEN REGISTRY_ERR_LEN

enum images_error {
	IMAGES_OK = REGISTRY_OK,
	IMAGES_E_NAME = REGISTRY_E_NAME,           /* not 1-64 of [A-Za-z0-9._-], or starting with '.' */
	IMAGES_E_FULL = REGISTRY_E_FULL,           /* --max-images reached */
	IMAGES_E_NOTFOUND = REGISTRY_E_NOTFOUND,
	IMAGES_E_NOMEM = REGISTRY_E_NOMEM,
	IMAGES_E_DIR = REGISTRY_E_DIR,             /* --image-dir unreadable, or a file in it failed */
	IMAGES_E_BYTES = REGISTRY_E_BYTES,         /* --image-memory would be passed with the others */
	IMAGES_E_TOO_LARGE = REGISTRY_E_TOO_LARGE, /* the image alone is larger than --image-memory */
};

/* The facts of a checked image: as decoded (the EXIF orientation applied). */
struct image_facts {
	int width, height;
	struct image_info info;
};

struct image_entry {
	struct reg_entry reg;      /* name, bytes (= len), created, from_dir, refs */
	unsigned char *data;       /* the encoded bytes as uploaded */
	size_t len;
	struct image_facts facts;
	unsigned char digest[32];  /* SHA-256 of data */
	char digest_hex[65];
};

struct images;

/* At most max_entries images holding max_bytes of encoded bytes together. */
int images_create(int max_entries, unsigned long long max_bytes, struct images **out);
void images_destroy(struct images *s); /* NULL-safe; entries still referenced are freed too */

/* Registers len bytes at data (malloc'd; ownership moves in, and on failure they are freed)
 * under name, replacing an entry of that name (whose bytes then no longer count). *replaced says
 * whether one existed; with held, *held is the new entry, referenced (images_release it), so
 * that what is said of it is this upload's even if a DELETE or PUT of the name follows at once.
 * Returns 0 or a negative images_error: IMAGES_E_FULL (count), IMAGES_E_BYTES (bytes with the
 * others), IMAGES_E_TOO_LARGE (bytes alone). */
int images_put(struct images *s, const char *name, unsigned char *data, size_t len,
               const struct image_facts *facts, int *replaced, struct image_entry **held);

/* A referenced entry (release with images_release), or NULL. */
struct image_entry *images_get(struct images *s, const char *name);
void images_release(struct images *s, struct image_entry *e); /* NULL-safe */

int images_delete(struct images *s, const char *name); /* 0 or IMAGES_E_NOTFOUND */

/* Calls fn for each entry, sorted by name, under the lock (fn must not call back in). */
void images_each(struct images *s, void (*fn)(const struct image_entry *e, void *ctx), void *ctx);

void images_totals(struct images *s, size_t *count, unsigned long long *bytes, int *max_count,
                   unsigned long long *max_bytes);

/* Registers every regular file of dir whose extension names an image format, under its file
 * name without the extension, replacing an entry of that name unless that entry was uploaded
 * (images_put) since the file was last modified (the newer one is kept); then removes the
 * entries an earlier call registered from a file that is gone. Every file is read and decoded (within lim)
 * and the limits are checked for the whole result before anything changes: on a failure (its
 * message names the file or the limit) the store is left as it was. */
int images_load_dir(struct images *s, const char *dir, const struct image_limits *lim,
                    int *loaded, int *removed, char err[IMAGES_ERR_LEN]);

/* An entry's facts as the API shows them: {"name", "width", "height", "channels", "format",
 * "bits", "digest" (SHA-256, hex), "bytes", "created" (RFC 3339, UTC)}; NULL when out of
 * memory. */
json_t *images_entry_json(const struct image_entry *e);

const char *images_strerror(int code);

#endif
