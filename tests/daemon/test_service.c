/* What the worker processes of several GPUs share (daemon/service, daemon/metrics): metrics
 * stores in shared memory summed by /metrics across processes, a worker's slot as the
 * supervisor sets it, and the named store across processes: a kernel put by one process is
 * found by another after a sync, with its pixels; a DELETE's tombstone removes it; a file that
 * does not decode is skipped. Forks real processes; no GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/metrics.h"
#include "daemon/service.h"
#include "tests/testutil.h"

static void wait_child(pid_t pid)
{
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The value of the sample named exactly `series` in a /metrics text, or -1. */
static double sample(const char *text, const char *series)
{
	size_t n = strlen(series);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return -1;
}

static void test_metrics_sum_across_processes(void **state)
{
	(void)state;
	size_t sz = (metrics_size() + 63) & ~(size_t)63;
	unsigned char *mem = mmap(NULL, 2 * sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	                          -1, 0);
	assert_true(mem != MAP_FAILED);
	struct metrics *a = metrics_place(mem, 1), *b = metrics_place(mem + sz, 1);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) { /* another worker records in its own store */
		for (int i = 0; i < 5; i++)
			metrics_request(b, "bloom", 200);
		for (int i = 0; i < 3; i++)
			metrics_observe(b, METRICS_GPU, 0.003);
		metrics_drop(b, METRICS_DROP_QUEUE_FULL);
		_exit(0);
	}
	metrics_request(a, "bloom", 200);
	metrics_request(a, "bloom", 200);
	metrics_request(a, "kernels", 201);
	metrics_observe(a, METRICS_GPU, 0.2);
	wait_child(pid);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct metrics *all[2] = {a, b};
	metrics_write_sum(all, 2, f);
	fclose(f);
	double bloom = sample(text, "fftbloom_http_requests_total{route=\"bloom\",status=\"200\"}");
	double kern = sample(text, "fftbloom_http_requests_total{route=\"kernels\",status=\"201\"}");
	double count = sample(text, "fftbloom_stage_seconds_count{stage=\"gpu\"}");
	double le5ms = sample(text, "fftbloom_stage_seconds_bucket{stage=\"gpu\",le=\"0.005\"}");
	double full = sample(text, "fftbloom_jobs_dropped_total{reason=\"queue_full\"}");
	printf("summed: bloom %g (7), kernels %g (1), gpu count %g (4), <= 5 ms %g (3), "
	       "queue_full %g (1)\n", bloom, kern, count, le5ms, full);
	assert_true(bloom == 7 && kern == 1 && count == 4 && le5ms == 3 && full == 1);
	free(text);
	metrics_destroy(a); /* placed: nothing freed */
	munmap(mem, 2 * sz);
}

/* A 3x1 RGB PFM of the given floats (one row: no row order to mind). */
static size_t pfm(const float *px, unsigned char *out)
{
	int h = sprintf((char *)out, "PF\n3 1\n-1.0\n");
	memcpy(out + h, px, 9 * sizeof(float));
	return (size_t)h + 9 * sizeof(float);
}

static void test_store_across_processes(void **state)
{
	(void)state;
	char tmp[] = "/tmp/fftbloom-service-test-XXXXXX";
	assert_non_null(mkdtemp(tmp));
	int devices[2] = {0, 0};
	struct service *svc;
	char err[SERVICE_ERR_LEN];
	assert_int_equal(service_create(2, devices, tmp, &svc, err), 0);
	assert_int_equal(service_workers(svc), 2);
	assert_int_equal(service_device(svc, 1), 0);

	struct kernels *k;
	struct images *im;
	assert_int_equal(kernels_create(8, 1 << 20, &k), 0);
	assert_int_equal(images_create(8, 1 << 20, &im), 0);
	struct image_limits lim = {64, 64, 4096, NULL, NULL, 0};
	service_store_sync(svc, k, im, &lim, &lim); /* an empty folder */
	assert_null(kernels_get(k, "k"));

	float px[9];
	for (int i = 0; i < 9; i++)
		px[i] = (float)rand() / (float)RAND_MAX + 0.25f;
	unsigned char body[128];
	size_t n = pfm(px, body);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) { /* worker 1 stored a PUT */
		service_attach(svc, 1);
		_exit(service_store_put(svc, JOBS_STORED_KERNEL, "k", body, n) ? 1 : 0);
	}
	wait_child(pid);
	service_store_sync(svc, k, im, &lim, &lim);
	struct kernel_entry *e = kernels_get(k, "k");
	assert_non_null(e);
	assert_int_equal(e->img.width, 3);
	assert_int_equal(e->img.height, 1);
	assert_int_equal(e->img.channels, 3);
	assert_memory_equal(e->img.pixels, px, sizeof px);
	kernels_release(k, e);

	pid = fork();
	assert_true(pid >= 0);
	if (!pid) { /* worker 1: a file that does not decode, then the DELETE */
		service_attach(svc, 1);
		int rc = service_store_put(svc, JOBS_STORED_KERNEL, "junk", "not an image", 12);
		rc |= service_store_delete(svc, JOBS_STORED_KERNEL, "k");
		_exit(rc ? 1 : 0);
	}
	wait_child(pid);
	service_store_sync(svc, k, im, &lim, &lim);
	assert_null(kernels_get(k, "k"));
	assert_null(kernels_get(k, "junk"));

	/* the supervisor's side of a slot */
	struct service_worker *w = malloc(sizeof *w);
	service_started(svc, 1, 4242);
	service_read(svc, 1, w);
	assert_int_equal(w->pid, 4242);
	assert_false(w->published);
	assert_false(w->ready);
	assert_string_equal(w->why, "starting");
	service_count_restart(svc, 1);
	service_ended(svc, 1);
	service_read(svc, 1, w);
	assert_int_equal(w->pid, 0);
	assert_int_equal((int)w->restarts, 1);
	assert_string_equal(w->why, "not running");
	free(w);

	kernels_destroy(k);
	images_destroy(im);
	service_destroy(svc); /* removes its folder: tmp is empty again */
	assert_int_equal(rmdir(tmp), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_sum_across_processes),
		cmocka_unit_test(test_store_across_processes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
