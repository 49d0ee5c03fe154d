/* Rendered answers on disk, by cache key, least recently used out; see result_cache.h. */
#include "daemon/result_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"

#define MAGIC "fftbloom result 2\n" /* then content type, lost, body length, SHA-256 lines */
#define TMP_PREFIX ".tmp-"
#define TMP_STALE_S 3600 /* a temporary file this old was left by a writer that died */
#define LOW_WATER 0.9    /* eviction frees down to this part of the bound */

struct result_cache {
	char dir[4096];
	unsigned long long max_bytes;
	pthread_mutex_t mu;
	unsigned long long bytes;   /* of the answers, as last counted (guarded by mu) */
	size_t entries;
	unsigned long long hits, misses, stores, evictions;
};

struct file_row {
	char name[RESULT_CACHE_KEY_LEN + 1];
	unsigned long long bytes;
	struct timespec used;
};

static int valid_key(const char *k)
{
	size_t n = strlen(k);
	if (n != RESULT_CACHE_KEY_LEN)
		return 0;
	return strspn(k, "0123456789abcdef") == n;
}

static int older(const void *a, const void *b)
{
	const struct file_row *x = a, *y = b;
	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Counts the folder's answers (removing stale temporary files) and, with evict, removes the
 * least recently used until the bytes are at most `target`. Called with mu held. */
static int rescan(struct result_cache *c, int evict, unsigned long long target)
{
	DIR *d = opendir(c->dir);
	if (!d)
		return -1;
	struct file_row *rows = NULL;
	size_t n = 0, cap = 0;
	unsigned long long total = 0;
	struct dirent *de;
	time_t now = time(NULL);
	while ((de = readdir(d))) {
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (!strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX))) {
			if (now - st.st_mtime > TMP_STALE_S)
				unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (!valid_key(de->d_name))
			continue; /* not ours: neither counted nor removed */
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct file_row *r = realloc(rows, nc * sizeof *r);
			if (!r)
				break;
			rows = r;
			cap = nc;
		}
		snprintf(rows[n].name, sizeof rows[n].name, "%.64s", de->d_name);
		rows[n].bytes = (unsigned long long)st.st_size;
		rows[n].used = st.st_mtim;
		total += rows[n].bytes;
		n++;
	}
	if (evict && total > target) {
		qsort(rows, n, sizeof *rows, older);
		for (size_t i = 0; i < n && total > target; i++) {
			int r = unlinkat(dirfd(d), rows[i].name, 0);
			if (r && errno != ENOENT)
				continue;
			if (!r) /* else another process removed it first */
				c->evictions++;
			total -= rows[i].bytes;
			n--;
		}
	}
	closedir(d);
	free(rows);
	c->bytes = total;
	c->entries = n;
	return 0;
}

int result_cache_open(const char *dir, unsigned long long max_bytes, struct result_cache **out,
                      char err[RESULT_CACHE_ERR_LEN])
{
	*out = NULL;
	if (strlen(dir) >= sizeof ((struct result_cache *)0)->dir) {
		snprintf(err, RESULT_CACHE_ERR_LEN, "result-cache: the path is too long");
		return -1;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, RESULT_CACHE_ERR_LEN, "result-cache: cannot make %.300s: %s", dir,
		         strerror(errno));
		return -1;
	}
	struct result_cache *c = calloc(1, sizeof *c);
	if (!c) {
		snprintf(err, RESULT_CACHE_ERR_LEN, "out of memory");
		return -1;
	}
	snprintf(c->dir, sizeof c->dir, "%s", dir);
	c->max_bytes = max_bytes;
	pthread_mutex_init(&c->mu, NULL);
	if (access(dir, R_OK | W_OK | X_OK) ||
	    rescan(c, 1, (unsigned long long)(max_bytes * LOW_WATER))) {
		snprintf(err, RESULT_CACHE_ERR_LEN, "result-cache: %.300s is not a folder this "
		         "process can read and write", dir);
		result_cache_close(c);
		return -1;
	}
	*out = c;
	return 0;
}

void result_cache_close(struct result_cache *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* One line of the header into out (its newline dropped); the rest after it. */
static const unsigned char *line(const unsigned char *p, const unsigned char *end, char *out,
                                 size_t cap)
{
	const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl || (size_t)(nl - p) >= cap)
		return NULL;
	memcpy(out, p, (size_t)(nl - p));
	out[nl - p] = 0;
	return nl + 1;
}

static void hex_of(const unsigned char *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = 0;
}

/* The body's SHA-256 as 64 hex digits into out (65 bytes); -1 when it cannot be computed. */
static int digest_hex(const unsigned char *body, size_t len, char out[65])
{
	unsigned char d[32];
	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, body, len, d))
		return -1;
	hex_of(d, sizeof d, out);
	return 0;
}

/* Reads an entry's whole file buf[0, n) into meta and the body's place; NULL with why in
 * *why when it is not a whole entry of this format (damaged, cut, or an older format). */
static const unsigned char *entry_body(const unsigned char *buf, size_t n,
                                       struct result_meta *meta, size_t *len, const char **why)
{
	const unsigned char *p = buf, *end = buf + n;
	char length[24], digest[72], want[65];
	*why = "no header of this format";
	if (n < strlen(MAGIC) || memcmp(buf, MAGIC, strlen(MAGIC)))
		return NULL;
	p += strlen(MAGIC);
	if (!(p = line(p, end, meta->content_type, sizeof meta->content_type)) ||
	    !(p = line(p, end, meta->lost, sizeof meta->lost)) ||
	    !(p = line(p, end, length, sizeof length)) || !(p = line(p, end, digest, sizeof digest)) ||
	    !meta->content_type[0])
		return NULL;
	char *e;
	errno = 0;
	unsigned long long want_len = strtoull(length, &e, 10);
	*why = "a length other than its body's";
	if (errno || e == length || *e || want_len != (unsigned long long)(end - p))
		return NULL;
	*why = "a digest other than its body's";
	if (digest_hex(p, (size_t)(end - p), want) || strcmp(want, digest))
		return NULL;
	*len = (size_t)(end - p);
	return p;
}

/* Removes a damaged entry, unless another writer has replaced it since it was read (then
 * that answer stays). Called without mu. */
static void drop_damaged(struct result_cache *c, const char *path, const struct stat *read_st,
                         const char *why)
{
	struct stat now;
	if (stat(path, &now) || now.st_ino != read_st->st_ino || now.st_dev != read_st->st_dev)
		return;
	log_msg(LOG_WARN, "result-cache: %s is damaged (%s): removed, rendered again", path, why);
	if (unlink(path))
		return;
	pthread_mutex_lock(&c->mu);
	rescan(c, 0, 0); /* the bytes counted for it were its size when whole: counted again */
	pthread_mutex_unlock(&c->mu);
}

int result_cache_get(struct result_cache *c, const char *key, unsigned char **body, size_t *len,
                     struct result_meta *meta)
{
	*body = NULL;
	*len = 0;
	if (!valid_key(key))
		return 0;
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", c->dir, key);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	unsigned char *buf = NULL;
	size_t n = 0;
	int ok = 0;
	const char *why = NULL; /* set: the file is there but not a whole entry */
	if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    (unsigned long long)st.st_size <= c->max_bytes) {
		n = (size_t)st.st_size;
		buf = malloc(n ? n : 1);
		size_t got = 0;
		while (buf && got < n) {
			ssize_t r = read(fd, buf + got, n - got);
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		memset(meta, 0, sizeof *meta);
		const unsigned char *p = NULL;
		if (buf && got == n)
			p = entry_body(buf, n, meta, len, &why);
		if (p) {
			memmove(buf, p, *len);
			*body = buf;
			buf = NULL;
			ok = 1;
			why = NULL;
			futimens(fd, NULL); /* used now: the least recently used go first */
		} else {
			*len = 0;
		}
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	if (why)
		drop_damaged(c, path, &st, why);
	pthread_mutex_lock(&c->mu);
	if (ok)
		c->hits++;
	else
		c->misses++;
	pthread_mutex_unlock(&c->mu);
	return ok;
}

int result_cache_put(struct result_cache *c, const char *key, const unsigned char *body,
                     size_t len, const struct result_meta *meta)
{
	if (!valid_key(key) || strchr(meta->content_type, '\n') || strchr(meta->lost, '\n'))
		return -1;
	char head[400], digest[65];
	if (digest_hex(body, len, digest))
		return -1;
	int hl = snprintf(head, sizeof head, "%s%s\n%s\n%zu\n%s\n", MAGIC, meta->content_type,
	                  meta->lost, len, digest);
	if (hl < 0 || (size_t)hl >= sizeof head)
		return -1;
	unsigned long long total = (unsigned long long)hl + len;
	if (total > c->max_bytes)
		return 0; /* alone larger than the bound: not kept */
	char tmp[4300], path[4200];
	/* the temporary name unique in the process across handles (two handles on one folder
	 * share it), and across processes by the pid */
	static atomic_ullong tmp_seq;
	unsigned long long seq = atomic_fetch_add(&tmp_seq, 1) + 1;
	snprintf(tmp, sizeof tmp, "%s/" TMP_PREFIX "%ld-%llu-%s", c->dir, (long)getpid(), seq, key);
	snprintf(path, sizeof path, "%s/%s", c->dir, key);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_msg(LOG_WARN, "result-cache: cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	int bad = 0;
	const unsigned char *parts[2] = {(const unsigned char *)head, body};
	size_t lens[2] = {(size_t)hl, len};
	for (int i = 0; i < 2 && !bad; i++)
		for (size_t off = 0; off < lens[i] && !bad;) {
			ssize_t w = write(fd, parts[i] + off, lens[i] - off);
			if (w <= 0)
				bad = 1;
			else
				off += (size_t)w;
		}
	if (close(fd))
		bad = 1;
	struct stat old;
	int replaced = !stat(path, &old);
	if (bad || rename(tmp, path)) {
		log_msg(LOG_WARN, "result-cache: cannot store %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	pthread_mutex_lock(&c->mu);
	c->stores++;
	if (replaced) {
		c->bytes -= (unsigned long long)old.st_size < c->bytes ? (unsigned long long)old.st_size
		                                                      : c->bytes;
		c->entries -= c->entries > 0;
	}
	c->bytes += total;
	c->entries++;
	if (c->bytes > c->max_bytes)
		rescan(c, 1, (unsigned long long)(c->max_bytes * LOW_WATER));
	pthread_mutex_unlock(&c->mu);
	return 0;
}

void result_cache_stats(struct result_cache *c, struct result_cache_stats *s)
{
	memset(s, 0, sizeof *s);
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	s->hits = c->hits;
	s->misses = c->misses;
	s->stores = c->stores;
	s->evictions = c->evictions;
	s->bytes = c->bytes;
	s->max_bytes = c->max_bytes;
	s->entries = c->entries;
	pthread_mutex_unlock(&c->mu);
}
