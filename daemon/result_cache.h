/* Rendered answers kept on disk (--result-cache DIR, --result-cache-bytes N) so that a GET render
 * a CDN misses is not rendered twice: one file per answer, named by its cache key (the digest of
 * everything its bytes depend on: the ETag's inputs), holding its content type and what the
 * encoder lost, then its bytes. Safe under concurrent writers, several daemon processes sharing
 * the folder included: a file is written under a temporary name and renamed into place, so a
 * reader sees a whole answer or none; the index (key, bytes, last use) is rebuilt from the
 * folder at start and whenever the bytes pass the bound, so files other processes wrote count;
 * eviction removes the least recently used (a hit updates the file's modification time, which
 * the processes share). Each file states its body's length and SHA-256, checked on every read:
 * a file that does not match (cut, damaged, an older format) is a miss, removed and logged at
 * warn. Thread-safe. */
#ifndef FFTBLOOM_DAEMON_RESULT_CACHE_H
#define FFTBLOOM_DAEMON_RESULT_CACHE_H

#include <stddef.h>

#define RESULT_CACHE_ERR_LEN 512
#define RESULT_CACHE_KEY_LEN 64 /* hex digits of a key */

struct result_cache;

/* The meta data kept with an answer. */
struct result_meta {
	char content_type[64];
	char lost[64]; /* X-Image-Lost's value, "" for none */
};

/* Opens (creating it if needed) the folder and indexes its files; max_bytes bounds the answers'
 * bytes together. Returns 0, or -1 with the reason in err. */
int result_cache_open(const char *dir, unsigned long long max_bytes, struct result_cache **out,
                      char err[RESULT_CACHE_ERR_LEN]);
void result_cache_close(struct result_cache *c); /* NULL-safe */

/* The answer stored under key (RESULT_CACHE_KEY_LEN lower-case hex digits): 1 with *body
 * (malloc'd, free it), *len and *meta; 0 when none or damaged (a miss; a damaged file is
 * removed). */
int result_cache_get(struct result_cache *c, const char *key, unsigned char **body, size_t *len,
                     struct result_meta *meta);

/* Stores an answer under key, then evicts the least recently used answers until the bytes fit
 * the bound. An answer alone larger than the bound is not stored. 0, or -1 (a write failed:
 * logged, nothing stored). */
int result_cache_put(struct result_cache *c, const char *key, const unsigned char *body,
                     size_t len, const struct result_meta *meta);

struct result_cache_stats {
	unsigned long long hits, misses, stores, evictions;
	unsigned long long bytes, max_bytes; /* as this process last counted them */
	size_t entries;
};
void result_cache_stats(struct result_cache *c, struct result_cache_stats *s);

#endif
