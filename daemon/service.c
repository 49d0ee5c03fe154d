/* The region and the store folder the workers of several GPUs share; see service.h. */
#include "daemon/service.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"

struct slot {
	atomic_uint seq;              /* odd while the worker writes what follows */
	int device;
	atomic_int pid;               /* written by the supervisor */
	atomic_ullong restarts;       /* written by the supervisor */
	atomic_ullong takeovers;      /* written by the supervisor: times this slot's worker took
	                                 over from its pair's (alternates) */
	atomic_int retire;            /* written by the supervisor before it stops a worker whose
	                                 successor serves */
	atomic_int quick;             /* written by the supervisor before it restarts a serving
	                                 worker that faulted: it serves once warm */
	int published, ready;
	int serving;                  /* its server takes connections (0: building its plans) */
	int nhanded;                  /* written by the supervisor before the fork */
	struct jobs_shape handed[JOBS_SHAPES];
	char why[160];
	double beat;                  /* clock_s() (CLOCK_MONOTONIC, one clock for all processes) */
	struct jobs_status status;
	struct service_conns conns;
};

struct region {
	atomic_ullong store_gen;      /* moved on by each PUT or DELETE a worker stored */
	int n;
	atomic_int active[SERVICE_MAX_WORKERS]; /* alternates: the slot serving device d (written by
	                                           the supervisor) */
};

/* A file of the store folder as this worker last applied it. */
struct applied {
	char name[65];
	ino_t ino;
	long long mtime_ns, size;
};

struct service {
	unsigned char *map;
	size_t map_len, slot_len, slot0;
	int n, self;
	int alternates;               /* service_set_alternates (set before any fork) */
	char dir[256];                /* the store folder: dir/kernels, dir/images */
	/* this process's own view of the store (not shared) */
	pthread_mutex_t sync_lock;
	atomic_ullong seen;           /* the generation last synced (0: none yet) */
	struct applied *done[2];
	size_t ndone[2], capdone[2];
	unsigned tmp_count;
};

static const char *kind_dir[2] = {"kernels", "images"};

static struct region *region(struct service *s)
{
	return (struct region *)s->map;
}

static struct slot *slot(struct service *s, int i)
{
	return (struct slot *)(s->map + s->slot0 + (size_t)i * s->slot_len);
}

static void *slot_metrics(struct service *s, int i)
{
	size_t off = (sizeof(struct slot) + 63) & ~(size_t)63;
	return (unsigned char *)slot(s, i) + off;
}

int service_create(int n, const int *devices, const char *runtime_dir, struct service **out,
                   char err[SERVICE_ERR_LEN])
{
	*out = NULL;
	if (n < 1 || n > SERVICE_MAX_WORKERS) {
		snprintf(err, SERVICE_ERR_LEN, "%d workers: 1 to %d", n, SERVICE_MAX_WORKERS);
		return -1;
	}
	struct service *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, SERVICE_ERR_LEN, "out of memory");
		return -1;
	}
	s->n = n;
	s->self = -1;
	s->slot0 = (sizeof(struct region) + 63) & ~(size_t)63;
	s->slot_len = (((sizeof(struct slot) + 63) & ~(size_t)63) + metrics_size() + 63) &
	              ~(size_t)63;
	s->map_len = s->slot0 + (size_t)n * s->slot_len;
	s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s->map == MAP_FAILED) {
		snprintf(err, SERVICE_ERR_LEN, "shared memory for %d workers: %s", n, strerror(errno));
		free(s);
		return -1;
	}
	region(s)->n = n;
	atomic_init(&region(s)->store_gen, 1);
	for (int i = 0; i < n; i++) {
		slot(s, i)->device = devices[i];
		metrics_place(slot_metrics(s, i), 1);
	}
	pthread_mutex_init(&s->sync_lock, NULL);
	const char *base = runtime_dir && runtime_dir[0] ? runtime_dir : NULL;
	if (!base)
		base = access("/dev/shm", W_OK) ? (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp")
		                                 : "/dev/shm";
	snprintf(s->dir, sizeof s->dir, "%.200s/fftbloomd-store-XXXXXX", base);
	if (!mkdtemp(s->dir)) { /* mode 0700 */
		snprintf(err, SERVICE_ERR_LEN, "the store folder under %.200s: %s", base,
		         strerror(errno));
		munmap(s->map, s->map_len);
		free(s);
		return -1;
	}
	for (int k = 0; k < 2; k++) {
		char p[300];
		snprintf(p, sizeof p, "%s/%s", s->dir, kind_dir[k]);
		if (mkdir(p, 0700)) {
			snprintf(err, SERVICE_ERR_LEN, "%.280s: %s", p, strerror(errno));
			s->self = -1;
			service_destroy(s);
			return -1;
		}
	}
	*out = s;
	return 0;
}

/* Removes the files of dir/sub, then the folder. */
static void remove_dir(const char *dir, const char *sub)
{
	char p[300];
	snprintf(p, sizeof p, "%s/%s", dir, sub);
	DIR *d = opendir(p);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(p);
}

void service_destroy(struct service *s)
{
	if (!s)
		return;
	if (s->self < 0 && s->dir[0]) {
		for (int k = 0; k < 2; k++)
			remove_dir(s->dir, kind_dir[k]);
		rmdir(s->dir);
	}
	munmap(s->map, s->map_len);
	for (int k = 0; k < 2; k++)
		free(s->done[k]);
	pthread_mutex_destroy(&s->sync_lock);
	free(s);
}

int service_workers(const struct service *s)
{
	return s->n;
}

int service_device(struct service *s, int i)
{
	return slot(s, i)->device;
}

void service_attach(struct service *s, int worker)
{
	s->self = worker;
	atomic_store(&s->seen, 0);
	for (int k = 0; k < 2; k++)
		s->ndone[k] = 0;
}

int service_self(const struct service *s)
{
	return s->self;
}

struct metrics *service_metrics(struct service *s, int i)
{
	return metrics_place(slot_metrics(s, i), 0);
}

void service_set_alternates(struct service *s)
{
	s->alternates = s->n / 2;
	for (int d = 0; d < s->alternates; d++)
		atomic_store(&region(s)->active[d], d);
}

void service_set_active(struct service *s, int i)
{
	if (s->alternates)
		atomic_store(&region(s)->active[i % s->alternates], i);
}

void service_set_quick(struct service *s, int i, int quick)
{
	atomic_store(&slot(s, i)->quick, quick);
}

int service_quick(struct service *s)
{
	return s->self >= 0 && atomic_load(&slot(s, s->self)->quick);
}

void service_retire(struct service *s, int i)
{
	atomic_store(&slot(s, i)->retire, 1);
}

int service_retiring(struct service *s)
{
	return s->self >= 0 && atomic_load(&slot(s, s->self)->retire);
}

int service_alternates(const struct service *s)
{
	return s->alternates;
}

int service_listed(struct service *s, int i)
{
	if (!s->alternates)
		return 1;
	int self_speaks = s->self >= 0 && !atomic_load(&slot(s, s->self)->retire);
	if (self_speaks && i % s->alternates == s->self % s->alternates)
		return i == s->self; /* the worker answering serves its device (the active one, or
		                        its successor the moment before the supervisor says so) */
	return i != s->self && atomic_load(&region(s)->active[i % s->alternates]) == i;
}

int service_gpu_label(const struct service *s, int i)
{
	return s->alternates ? i % s->alternates : i;
}

void service_hand(struct service *s, int to, int from)
{
	struct service_worker *w = malloc(sizeof *w);
	struct slot *sl = slot(s, to);
	sl->nhanded = 0;
	if (!w)
		return;
	if (!service_read(s, from, w)) { /* torn: nothing handed rather than garbage */
		free(w);
		return;
	}
	int n = 0;
	for (int g = 0; g < w->status.ngpus; g++)
		for (int k = 0; k < w->status.gpu[g].nshapes && k < JOBS_SHAPES && n < JOBS_SHAPES; k++)
			sl->handed[n++] = w->status.gpu[g].shapes[k];
	sl->nhanded = n;
	free(w);
}

int service_handed(struct service *s, struct jobs_shape *out)
{
	if (s->self < 0)
		return 0;
	struct slot *sl = slot(s, s->self);
	int n = sl->nhanded < 0 ? 0 : sl->nhanded > JOBS_SHAPES ? JOBS_SHAPES : sl->nhanded;
	memcpy(out, sl->handed, sizeof out[0] * (size_t)n);
	return n;
}

void service_publish(struct service *s, struct jobs *jobs, const struct service_conns *conns,
                     int quiescing, int serving)
{
	if (s->self < 0)
		return;
	struct slot *sl = slot(s, s->self);
	static struct jobs_status st; /* one publisher: the worker's main thread */
	jobs_status(jobs, &st);
	char why[160] = "";
	int ready = !quiescing && serving && jobs_ready(jobs, why, sizeof why);
	if (quiescing)
		snprintf(why, sizeof why, "shutting down");
	else if (!serving)
		snprintf(why, sizeof why, "building its plans before it serves");
	atomic_fetch_add_explicit(&sl->seq, 1, memory_order_acq_rel);
	atomic_thread_fence(memory_order_release);
	sl->status = st;
	sl->conns = *conns;
	sl->ready = ready;
	sl->serving = serving;
	memcpy(sl->why, why, sizeof why);
	sl->published = 1;
	sl->beat = clock_s();
	atomic_thread_fence(memory_order_release);
	atomic_fetch_add_explicit(&sl->seq, 1, memory_order_release);
}

int service_read(struct service *s, int i, struct service_worker *w)
{
	struct slot *sl = slot(s, i);
	/* a worker killed while it wrote leaves seq odd: after SERVICE_READ_WAIT_S its last words
	 * are taken as they are (torn, and said so) */
	int consistent = 0;
	double give_up = 0;
	for (int tries = 0;; tries++) {
		unsigned a = atomic_load_explicit(&sl->seq, memory_order_acquire);
		int last = 0;
		if (a & 1) {
			if (tries < 1000)
				continue;
			double now = clock_s();
			if (!give_up)
				give_up = now + SERVICE_READ_WAIT_S;
			if (now < give_up) {
				sched_yield();
				continue;
			}
			last = 1;
		}
		w->status = sl->status;
		w->conns = sl->conns;
		w->ready = sl->ready;
		w->serving = sl->serving;
		memcpy(w->why, sl->why, sizeof w->why);
		w->published = sl->published;
		w->beat_age = clock_s() - sl->beat;
		atomic_thread_fence(memory_order_acquire);
		if (last)
			break;
		if (atomic_load_explicit(&sl->seq, memory_order_relaxed) == a) {
			consistent = 1;
			break;
		}
	}
	w->why[sizeof w->why - 1] = 0;
	if (w->status.ngpus < 0 || w->status.ngpus > JOBS_MAX_GPUS)
		w->status.ngpus = 0;
	w->device = sl->device;
	w->pid = atomic_load(&sl->pid);
	w->restarts = atomic_load(&sl->restarts);
	w->takeovers = atomic_load(&sl->takeovers);
	for (int j = s->alternates ? i % s->alternates : i; s->alternates && j < s->n;
	     j += s->alternates)
		if (j != i) /* a GPU's restarts, whichever slot its worker ran in */
			w->restarts += atomic_load(&slot(s, j)->restarts);
	if (!w->published) {
		w->ready = 0;
		snprintf(w->why, sizeof w->why, "%s", w->pid ? "starting" : "not running");
	} else if (!w->pid) {
		w->ready = 0;
		snprintf(w->why, sizeof w->why, "not running");
	} else if (w->beat_age > SERVICE_STALE_S) {
		w->ready = 0;
		snprintf(w->why, sizeof w->why, "no heartbeat for %.1f s", w->beat_age);
	}
	return consistent;
}

void service_started(struct service *s, int i, pid_t pid)
{
	struct slot *sl = slot(s, i);
	/* a worker killed while it wrote left seq odd: even again before the next one writes */
	if (atomic_load(&sl->seq) & 1)
		atomic_fetch_add(&sl->seq, 1);
	atomic_fetch_add(&sl->seq, 1);
	sl->published = 0;
	sl->ready = 0;
	sl->serving = 0;
	atomic_store(&sl->retire, 0);
	atomic_fetch_add(&sl->seq, 1);
	atomic_store(&sl->pid, pid);
}

void service_ended(struct service *s, int i)
{
	atomic_store(&slot(s, i)->pid, 0);
}

void service_count_takeover(struct service *s, int i)
{
	atomic_fetch_add(&slot(s, i)->takeovers, 1);
}

void service_count_restart(struct service *s, int i)
{
	atomic_fetch_add(&slot(s, i)->restarts, 1);
}

/* The record of name among kind's applied files, added if absent; NULL when out of memory. */
static struct applied *applied_of(struct service *s, int kind, const char *name)
{
	for (size_t i = 0; i < s->ndone[kind]; i++)
		if (!strcmp(s->done[kind][i].name, name))
			return &s->done[kind][i];
	if (s->ndone[kind] == s->capdone[kind]) {
		size_t cap = s->capdone[kind] ? s->capdone[kind] * 2 : 32;
		struct applied *a = realloc(s->done[kind], cap * sizeof *a);
		if (!a)
			return NULL;
		s->done[kind] = a;
		s->capdone[kind] = cap;
	}
	struct applied *a = &s->done[kind][s->ndone[kind]++];
	memset(a, 0, sizeof *a);
	snprintf(a->name, sizeof a->name, "%s", name);
	return a;
}

static void note(struct applied *a, const struct stat *st)
{
	a->ino = st->st_ino;
	a->mtime_ns = (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
	a->size = (long long)st->st_size;
}

static int same(const struct applied *a, const struct stat *st)
{
	return a->ino == st->st_ino && a->size == (long long)st->st_size &&
	       a->mtime_ns == (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

/* Writes bytes as kind's file name (a temporary file renamed over it) and notes it applied. */
static int store_write(struct service *s, int kind, const char *name, const void *bytes,
                       size_t len)
{
	char tmp[400], path[400];
	pthread_mutex_lock(&s->sync_lock);
	snprintf(tmp, sizeof tmp, "%s/%s/.tmp-%d-%u", s->dir, kind_dir[kind], (int)getpid(),
	         s->tmp_count++);
	snprintf(path, sizeof path, "%s/%s/%s", s->dir, kind_dir[kind], name);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int rc = fd < 0 ? -1 : 0;
	for (size_t off = 0; !rc && off < len;) {
		ssize_t w = write(fd, (const unsigned char *)bytes + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			rc = -1;
		else
			off += (size_t)w;
	}
	struct stat st;
	if (fd >= 0 && (close(fd) || rc))
		rc = -1;
	if (!rc && rename(tmp, path))
		rc = -1;
	if (rc) {
		log_msg(LOG_ERROR, "the shared store: writing %s: %s", path, strerror(errno));
		unlink(tmp);
	} else if (!stat(path, &st)) {
		struct applied *a = applied_of(s, kind, name);
		if (a)
			note(a, &st);
	}
	atomic_fetch_add(&region(s)->store_gen, 1);
	pthread_mutex_unlock(&s->sync_lock);
	return rc;
}

int service_store_put(struct service *s, int kind, const char *name, const void *bytes,
                      size_t len)
{
	if (!len)
		return -1;
	return store_write(s, kind, name, bytes, len);
}

int service_store_delete(struct service *s, int kind, const char *name)
{
	return store_write(s, kind, name, "", 0);
}

/* Reads a whole file (fd open) of size bytes; NULL on a failure. */
static unsigned char *read_all(int fd, size_t size)
{
	unsigned char *b = malloc(size ? size : 1);
	for (size_t off = 0; b && off < size;) {
		ssize_t r = read(fd, b + off, size - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(b);
			return NULL;
		}
		off += (size_t)r;
	}
	return b;
}

/* Applies one file of the folder, open as fd with st its fstat: a tombstone deletes, a body is
 * decoded and put. */
static void apply(struct service *s, int kind, int fd, const char *name, const struct stat *st,
                  struct kernels *k, struct images *im, const struct image_limits *klim,
                  const struct image_limits *ilim)
{
	if (!st->st_size) {
		if (kind == JOBS_STORED_KERNEL)
			kernels_delete(k, name);
		else
			images_delete(im, name);
		return;
	}
	unsigned char *data = read_all(fd, (size_t)st->st_size);
	if (!data) {
		log_msg(LOG_ERROR, "the shared store: cannot read %s/%s/%s", s->dir, kind_dir[kind],
		        name);
		return;
	}
	size_t len = (size_t)st->st_size;
	struct image img;
	struct image_info info;
	char ierr[IMAGE_ERR_LEN];
	int rc;
	if (image_decode(data, len, kind == JOBS_STORED_KERNEL ? klim : ilim, &img, &info, ierr)) {
		log_msg(LOG_ERROR, "the shared store: %s %s: %s", kind_dir[kind], name, ierr);
		free(data);
		return;
	}
	if (kind == JOBS_STORED_KERNEL) {
		free(data);
		int replaced;
		rc = kernels_put(k, name, &img, &info, &replaced, NULL);
	} else {
		struct image_facts f;
		memset(&f, 0, sizeof f);
		f.info = info;
		f.width = img.width;
		f.height = img.height;
		image_free(&img);
		int replaced;
		rc = images_put(im, name, data, len, &f, &replaced, NULL);
	}
	if (rc)
		log_msg(LOG_ERROR, "the shared store: %s %s not taken here (%d)", kind_dir[kind], name,
		        rc);
}

void service_store_sync(struct service *s, struct kernels *k, struct images *im,
                        const struct image_limits *klim, const struct image_limits *ilim)
{
	unsigned long long gen = atomic_load(&region(s)->store_gen);
	/* the common case, without the lock: nothing stored since this worker last looked */
	if (atomic_load_explicit(&s->seen, memory_order_acquire) == gen)
		return;
	pthread_mutex_lock(&s->sync_lock);
	if (atomic_load_explicit(&s->seen, memory_order_relaxed) == gen) {
		pthread_mutex_unlock(&s->sync_lock);
		return;
	}
	for (int kind = 0; kind < 2; kind++) {
		char p[300];
		snprintf(p, sizeof p, "%s/%s", s->dir, kind_dir[kind]);
		DIR *d = opendir(p);
		if (!d) {
			log_msg(LOG_ERROR, "the shared store: %s: %s", p, strerror(errno));
			continue;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			/* stat the open file, not the name: a PUT may rename another file over the
			 * name between the two, and its bytes must go with its own size */
			struct stat st;
			if (e->d_name[0] == '.' || strlen(e->d_name) > 64)
				continue;
			int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
			if (fd < 0)
				continue;
			struct applied *a = NULL;
			if (!fstat(fd, &st) && S_ISREG(st.st_mode))
				a = applied_of(s, kind, e->d_name);
			if (a && !same(a, &st)) {
				apply(s, kind, fd, e->d_name, &st, k, im, klim, ilim);
				note(a, &st);
			}
			close(fd);
		}
		closedir(d);
	}
	/* said only once applied: a request that sees it finds the names; what moved the
	 * generation after the load above is synced by the next call */
	atomic_store_explicit(&s->seen, gen, memory_order_release);
	pthread_mutex_unlock(&s->sync_lock);
}
