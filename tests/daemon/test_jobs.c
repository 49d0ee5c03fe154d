/* The job pipeline without HTTP: JPEG blooms through the codec and GPU threads (llvmpipe where
 * there is no GPU), answered as JPEG from planes lent by the GPU thread. Each done() poisons its
 * job at once, as the server may free it from then on, so a read of a job after its done() shows
 * up (a crash, or a sanitizer report); the lent planes must all come back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/apiutil.h"
#include "core/config.h"
#include "daemon/jobs.h"
#include "daemon/kernels.h"
#include "core/log.h"
#include "daemon/metrics.h"
#include "codec/image.h"

#define NJOBS 24

/* Under LeakSanitizer (make sanitize): report leaks but do not fail on them. Mesa's driver loses
 * 128 bytes a GPU thread that made a context current and exits, and unloads itself at
 * eglTerminate, so the stacks end in "<unknown module>" and no suppression can name them; the
 * HTTP test runs the daemon under the sanitizer and fails on any leak with a stack in our code. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "exitcode=0";
}

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_done, g_jpeg;

static void on_done(struct job *j, void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&g_mu);
	if (j->status == 200 && j->body_len > 2 && j->body[0] == 0xff && j->body[1] == 0xd8)
		g_jpeg++;
	else
		printf("job: status %d %s %s\n", j->status, j->code, j->message);
	free(j->body);
	memset(j, 0xa5, sizeof *j); /* the job is the submitter's again: nothing may read it now */
	g_done++;
	pthread_cond_signal(&g_cv);
	pthread_mutex_unlock(&g_mu);
}

/* A random w x h JPEG (quality 90), malloc'd. */
static unsigned char *random_jpeg(int w, int h, unsigned seed, size_t *len)
{
	struct image img;
	assert_int_equal(image_alloc(&img, w, h, 3), 0);
	for (size_t i = 0; i < (size_t)w * h * 3; i++) {
		seed = seed * 1103515245u + 12345u;
		img.pixels[i] = (float)((seed >> 8) & 0xffff) / 65535.0f * 1.5f;
	}
	struct image_encode_opts eo;
	memset(&eo, 0, sizeof eo);
	eo.quality = 90;
	unsigned char *buf = NULL;
	unsigned lost = 0;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_JPEG, &eo, &buf, len, &lost, err), 0);
	image_free(&img);
	return buf;
}

/* The pipeline of the options in argv (argv[0] a name) over ndev GPU threads on device 0, with
 * its kernel store and metrics; cfg gets the configuration. */
static struct jobs *make_jobs(int argc, char **argv, int ndev, struct config *cfg,
                              struct kernels **k, struct metrics **m)
{
	char err[JOBS_ERR_LEN];
	assert_int_equal(config_load(cfg, argc, argv, 1, NULL, err), 0);
	assert_int_equal(kernels_create(4, 1ull << 30, k), 0);
	assert_int_equal(metrics_create(m), 0);
	int devices[] = {0, 0};
	struct jobs *J;
	assert_true(ndev >= 1 && ndev <= 2);
	if (jobs_create(cfg, devices, ndev, NULL, 0, *k, *m, &J, err))
		fail_msg("jobs_create: %s", err);
	return J;
}

/* Queues a JPEG bloom of jpeg (answered as JPEG; preset: a kernel_preset, or NULL for the
 * default) as job j. */
static void start_jpeg_job(struct jobs *J, struct job *j, const unsigned char *jpeg, size_t len,
                           const char *preset, int internal)
{
	memset(j, 0, sizeof *j);
	j->kind = JOB_BLOOM;
	j->image = jpeg;
	j->image_len = len;
	j->internal = internal;
	request_init(&j->req, REQUEST_BLOOM);
	char rerr[REQUEST_ERR_LEN];
	if (preset)
		assert_int_equal(request_set(&j->req, "kernel_preset", preset, REQUEST_SRC_QUERY, rerr),
		                 0);
	assert_int_equal(request_set(&j->req, "format", "jpeg", REQUEST_SRC_QUERY, rerr), 0);
	j->client_fd = -1;
	j->done = on_done;
	assert_int_equal(jobs_reserve(J, JOB_BLOOM), 0);
	jobs_start(J, j);
}

/* Waits until n jobs are done and counted out (a job is, with its lent planes, just after its
 * done()). */
static void wait_jobs(struct jobs *J, int n)
{
	pthread_mutex_lock(&g_mu);
	while (g_done < n)
		pthread_cond_wait(&g_cv, &g_mu);
	pthread_mutex_unlock(&g_mu);
	for (int t = 0; t < 10000 && jobs_in_flight(J) > 0; t++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	assert_int_equal(jobs_in_flight(J), 0);
}

static void test_lent_planes_and_poisoned_jobs(void **state)
{
	(void)state;
	log_setup(LOG_WARN, 0);
	struct config cfg;
	/* two GPU threads (contexts) on device 0, three codec threads; a deadline far beyond the
	 * first job's program compiles on a loaded llvmpipe under the sanitizers (this test counts
	 * lent planes, tests/daemon/hostile_test.py tests deadlines); every size on its own plan,
	 * as a frame borrowing a plan in tiles answers a float image, not lent planes
	 * (tests/daemon/fast_test.py tests borrowing) */
	char a0[] = "test", a1[] = "--gpu-threads=2", a2[] = "--codec-threads=3",
	     a3[] = "--deadline=3600", a4[] = "--borrow-plans=false";
	char *argv[] = {a0, a1, a2, a3, a4, NULL};
	struct kernels *k;
	struct metrics *m;
	struct jobs *J = make_jobs(5, argv, 2, &cfg, &k, &m);
	assert_true(cfg.lend_planes && cfg.jpeg_planes);
	static struct job jobs[NJOBS];
	unsigned char *jpeg[NJOBS];
	for (int i = 0; i < NJOBS; i++) {
		size_t len;
		jpeg[i] = random_jpeg(40 + i % 3 * 16, 24 + i % 4 * 8, 7u + (unsigned)i, &len);
		start_jpeg_job(J, &jobs[i], jpeg[i], len, "gaussian:sigma=2", 0);
	}
	wait_jobs(J, NJOBS);
	struct jobs_status st;
	jobs_status(J, &st);
	int lent = 0, total = 0;
	for (int i = 0; i < st.ngpus; i++) {
		lent += st.gpu[i].planes_lent;
		total += (int)st.gpu[i].planes_lent_total;
	}
	printf("%d of %d JPEG answers; planes lent %d in all, %d still out\n", g_jpeg, NJOBS, total,
	       lent);
	assert_int_equal(g_jpeg, NJOBS);
	assert_int_equal(lent, 0);
	assert_int_equal(total, NJOBS); /* llvmpipe has GL_EXT_buffer_storage: every one lent */
	/* frames' planes into upload buffers only where one GPU thread serves the jobs: with two,
	 * a job's is not known while it decodes */
	for (int i = 0; i < st.ngpus; i++) {
		assert_int_equal(st.gpu[i].uploads_taken, 0);
		assert_int_equal(st.gpu[i].caches.uploads_lent, 0);
		assert_true(st.gpu[i].caches.uploads_copied > 0 || st.gpu[i].jobs == 0);
	}
	jobs_destroy(J);
	metrics_destroy(m);
	kernels_destroy(k);
	for (int i = 0; i < NJOBS; i++)
		free(jpeg[i]);
}

/* The daemon's own frames (a successor's warm frames: internal, then jobs_discount) leave every
 * counter a request moves as it was: the GPU thread's (jobs, lent planes, cache hits and
 * misses) and the stage histograms; the requests after them are counted as ever. */
static unsigned long long gpu_stage_count(struct metrics *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	metrics_write(m, f);
	fclose(f);
	const char *key = "fftbloom_stage_seconds_count{stage=\"gpu\"} ";
	const char *at = strstr(buf, key);
	assert_non_null(at);
	unsigned long long n = strtoull(at + strlen(key), NULL, 10);
	free(buf);
	return n;
}

static void run_batch(struct jobs *J, struct job *jobs, unsigned char **jpeg, int n, int internal,
                      unsigned seed)
{
	pthread_mutex_lock(&g_mu);
	g_done = g_jpeg = 0;
	pthread_mutex_unlock(&g_mu);
	for (int i = 0; i < n; i++) {
		size_t len;
		jpeg[i] = random_jpeg(48 + i % 2 * 16, 32, seed + (unsigned)i, &len);
		start_jpeg_job(J, &jobs[i], jpeg[i], len, NULL, internal);
	}
	wait_jobs(J, n);
	assert_int_equal(g_jpeg, n);
	for (int i = 0; i < n; i++)
		free(jpeg[i]);
}

static void test_discount(void **state)
{
	(void)state;
	log_setup(LOG_WARN, 0);
	struct config cfg;
	char a0[] = "test", a1[] = "--deadline=3600", a2[] = "--borrow-plans=false";
	char *argv[] = {a0, a1, a2, NULL};
	struct kernels *k;
	struct metrics *m;
	struct jobs *J = make_jobs(3, argv, 1, &cfg, &k, &m);
	static struct job jobs[4];
	unsigned char *jpeg[4];
	struct jobs_status *before = malloc(sizeof *before), *st = malloc(sizeof *st);
	assert_non_null(before);
	assert_non_null(st);
	jobs_status(J, before);
	run_batch(J, jobs, jpeg, 3, 1, 11u); /* the daemon's own: two sizes, three frames */
	jobs_status(J, st);
	assert_int_equal(st->gpu[0].jobs - before->gpu[0].jobs, 3); /* counted until discounted */
	assert_int_equal(gpu_stage_count(m), 0);                     /* never observed */
	jobs_discount(J, before);
	jobs_status(J, st);
	const struct jobs_gpu_status *a = &before->gpu[0], *b = &st->gpu[0];
	printf("after the daemon's own frames: jobs %llu, lent %llu, plan hits %llu, misses %llu, "
	       "kernel misses %llu (before: %llu %llu %llu %llu %llu)\n", b->jobs,
	       b->planes_lent_total, b->caches.plan_hits, b->caches.plan_misses,
	       b->caches.kernel_misses, a->jobs, a->planes_lent_total, a->caches.plan_hits,
	       a->caches.plan_misses, a->caches.kernel_misses);
	assert_int_equal(b->jobs, a->jobs);
	assert_int_equal(b->planes_lent_total, a->planes_lent_total);
	assert_int_equal(b->caches.plan_hits, a->caches.plan_hits);
	assert_int_equal(b->caches.plan_misses, a->caches.plan_misses);
	assert_int_equal(b->caches.kernel_misses, a->caches.kernel_misses);
	assert_true(b->busy_s == a->busy_s);
	assert_true(b->programs.count > a->programs.count); /* what they built stays built */
	run_batch(J, jobs, jpeg, 4, 0, 23u); /* requests: counted */
	jobs_status(J, st);
	assert_int_equal(st->gpu[0].jobs, a->jobs + 4);
	assert_int_equal(st->gpu[0].planes_lent_total, a->planes_lent_total + 4);
	assert_int_equal(st->gpu[0].caches.plan_hits + st->gpu[0].caches.plan_misses,
	                 a->caches.plan_hits + a->caches.plan_misses + 4);
	assert_int_equal(gpu_stage_count(m), 4);
	free(before);
	free(st);
	jobs_destroy(J);
	metrics_destroy(m);
	kernels_destroy(k);
}

/* A full queue, by construction rather than by timing: with one codec thread held inside the
 * done() of a first job (the test opens the gate), the jobs admitted after it wait in the decode
 * queue whatever the GPU's speed. queue-size of them are admitted; the next admission is
 * refused JOBS_E_FULL (the HTTP layer's 503 queue_full) and takes no place; once the gate
 * opens the queue drains, and every place comes back. */
#define FULL_Q 4

static pthread_mutex_t f_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t f_cv = PTHREAD_COND_INITIALIZER;
static int f_in_gate, f_open, f_done, f_status[2 * FULL_Q + 1];

static void gate_done(struct job *j, void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&f_mu);
	f_status[0] = j->status;
	f_in_gate = 1;
	pthread_cond_broadcast(&f_cv);
	while (!f_open)
		pthread_cond_wait(&f_cv, &f_mu);
	f_done++;
	pthread_cond_broadcast(&f_cv);
	pthread_mutex_unlock(&f_mu);
}

static void full_done(struct job *j, void *ctx)
{
	pthread_mutex_lock(&f_mu);
	f_status[(int)(size_t)ctx] = j->status;
	f_done++;
	pthread_cond_broadcast(&f_cv);
	pthread_mutex_unlock(&f_mu);
}

static void wait_done(int n)
{
	pthread_mutex_lock(&f_mu);
	while (f_done < n)
		pthread_cond_wait(&f_cv, &f_mu);
	pthread_mutex_unlock(&f_mu);
}

/* Bytes no decoder takes: the job is answered from its codec thread, no GPU involved. */
static const unsigned char not_an_image[] = "not an image, only bytes";

static void start_one(struct jobs *J, struct job *j, void (*done)(struct job *, void *),
                      int idx)
{
	memset(j, 0, sizeof *j);
	j->kind = JOB_BLOOM;
	j->image = not_an_image;
	j->image_len = sizeof not_an_image - 1;
	request_init(&j->req, REQUEST_BLOOM);
	j->client_fd = -1;
	j->done = done;
	j->done_ctx = (void *)(size_t)idx;
	jobs_start(J, j);
}

static void test_queue_full(void **state)
{
	(void)state;
	log_setup(LOG_WARN, 0);
	struct config cfg;
	char a0[] = "test", a1[] = "--codec-threads=1", a2[] = "--deadline=3600", a3[] =
	     "--queue-size=4";
	char *argv[] = {a0, a1, a2, a3, NULL};
	struct kernels *k;
	struct metrics *m;
	struct jobs *J = make_jobs(4, argv, 1, &cfg, &k, &m);
	assert_int_equal(cfg.queue_size, FULL_Q);
	static struct job jobs[2 * FULL_Q + 1];
	/* ready first (the GPU thread warmed), so that not ready later says why: the queue */
	char why[256];
	for (int t = 0; t < 120000 && !jobs_ready(J, why, sizeof why); t++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	assert_int_equal(jobs_ready(J, why, sizeof why), 1);
	/* the gate: the one codec thread answers it and stays in its done() */
	assert_int_equal(jobs_reserve(J, JOB_BLOOM), 0);
	start_one(J, &jobs[0], gate_done, 0);
	pthread_mutex_lock(&f_mu);
	while (!f_in_gate)
		pthread_cond_wait(&f_cv, &f_mu);
	pthread_mutex_unlock(&f_mu);
	struct jobs_status st;
	jobs_status(J, &st);
	assert_int_equal(st.queued, 0); /* the gate's place came back before its done() */
	/* queue-size jobs admitted, each waiting for the held codec thread */
	for (int i = 1; i <= FULL_Q; i++) {
		assert_int_equal(jobs_reserve(J, JOB_BLOOM), 0);
		start_one(J, &jobs[i], full_done, i);
	}
	jobs_status(J, &st);
	printf("queue: %d of %d waiting, %d in flight\n", st.queued, st.queue_size, st.in_flight);
	assert_int_equal(st.queued, FULL_Q);
	assert_int_equal(st.queue_size, FULL_Q);
	/* the next admission is refused, of every kind, and takes no place */
	static const int kinds[] = {JOB_BLOOM, JOB_CONVOLVE, JOB_KERNEL_PUT, JOB_CONV2D,
	                            JOB_CONV2D_T, JOB_IMAGE_PUT};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		assert_int_equal(jobs_reserve(J, kinds[i]), JOBS_E_FULL);
	jobs_status(J, &st);
	assert_int_equal(st.queued, FULL_Q);
	assert_int_equal(st.in_flight, FULL_Q + 1);
	assert_int_equal(jobs_ready(J, why, sizeof why), 0); /* past the high-water mark too */
	printf("ready: %s\n", why);
	assert_non_null(strstr(why, "high-water"));
	/* the gate opens: the queue drains */
	pthread_mutex_lock(&f_mu);
	f_open = 1;
	pthread_cond_broadcast(&f_cv);
	pthread_mutex_unlock(&f_mu);
	wait_done(FULL_Q + 1);
	for (int t = 0; t < 10000 && jobs_in_flight(J) > 0; t++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	assert_int_equal(jobs_in_flight(J), 0);
	jobs_status(J, &st);
	assert_int_equal(st.queued, 0);
	for (int i = 0; i <= FULL_Q; i++) {
		printf("job %d: %d\n", i, f_status[i]);
		assert_int_equal(f_status[i], 415); /* answered: not an image */
	}
	/* every place came back: queue-size more are admitted, and then no more */
	for (int i = FULL_Q + 1; i <= 2 * FULL_Q; i++)
		assert_int_equal(jobs_reserve(J, JOB_BLOOM), 0);
	assert_int_equal(jobs_reserve(J, JOB_BLOOM), JOBS_E_FULL);
	for (int i = FULL_Q + 1; i <= 2 * FULL_Q; i++)
		start_one(J, &jobs[i], full_done, i);
	wait_done(2 * FULL_Q + 1);
	for (int t = 0; t < 10000 && jobs_in_flight(J) > 0; t++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	assert_int_equal(jobs_in_flight(J), 0);
	jobs_destroy(J);
	metrics_destroy(m);
	kernels_destroy(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lent_planes_and_poisoned_jobs),
		cmocka_unit_test(test_queue_full),
		cmocka_unit_test(test_discount),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
