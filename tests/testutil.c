/* Test helpers; see testutil.h. */
#include "tests/testutil.h"

#include <math.h>
#include <setjmp.h>
#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/request.h"

#include "gles/egl.h"

static uint64_t g_state = 0x9E3779B97F4A7C15ull;

void tu_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[1024];
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' &&
		    snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
			remove(path);
	if (d)
		closedir(d);
	rmdir(dir);
}

void tu_seed(uint64_t seed)
{
	g_state = seed ? seed : 0x9E3779B97F4A7C15ull;
}

uint64_t tu_seed_from_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t s = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
	tu_seed(s);
	printf("random seed %llu\n", (unsigned long long)s);
	return s;
}

void tu_test_filter(void)
{
	const char *f = getenv("TEST_FILTER");
	if (f && *f)
		cmocka_set_test_filter(f);
}

static uint64_t next(void)
{
	/* xorshift64* */
	g_state ^= g_state >> 12;
	g_state ^= g_state << 25;
	g_state ^= g_state >> 27;
	return g_state * 2685821657736338717ull;
}

double tu_uniform(void)
{
	return (next() >> 11) * (1.0 / 9007199254740992.0);
}

double tu_sym(void)
{
	return 2.0 * tu_uniform() - 1.0;
}

void tu_fill_f32(float *x, size_t n, float lo, float hi)
{
	for (size_t i = 0; i < n; i++)
		x[i] = lo + (hi - lo) * (float)tu_uniform();
}

double tu_rel_l2_f32(const float *a, const double *ref, size_t n)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)a[i] - ref[i];
		num += d * d;
		den += ref[i] * ref[i];
	}
	if (den == 0)
		return num == 0 ? 0 : INFINITY;
	return sqrt(num / den);
}

double tu_max_abs_f32(const float *a, const double *ref, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)a[i] - ref[i]);
		if (!(d <= m))
			m = d; /* NaN propagates */
	}
	return m;
}

double tu_rms(const double *ref, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += ref[i] * ref[i];
	return n ? sqrt(s / (double)n) : 0;
}

int tu_report(const char *name, double rel, double rel_tol, double maxabs, double abs_tol)
{
	int ok = rel <= rel_tol && maxabs <= abs_tol; /* NaN fails */
	printf("%-40s rel_l2 %.3e (tol %.1e)  max_abs %.3e (tol %.2e) %s\n", name, rel, rel_tol,
	       maxabs, abs_tol, ok ? "ok" : "FAIL");
	return ok;
}

int tu_check(const char *name, const float *a, const double *ref, size_t n, double rel_tol)
{
	return tu_report(name, tu_rel_l2_f32(a, ref, n), rel_tol, tu_max_abs_f32(a, ref, n),
	                 10 * rel_tol * tu_rms(ref, n));
}

static void tlog(void *ctx, int level, const char *msg)
{
	(void)ctx;
	if (level <= LOG_WARN)
		fprintf(stderr, "gl: %s\n", msg);
}

struct egl_ctx *tu_gl_context(void)
{
	static struct egl_ctx *ctx;
	static int tried;
	static const struct log_sink sink = {tlog, NULL};
	if (tried)
		return ctx;
	tried = 1;
	struct egl_opts o = {EGLP_AUTO, 0, 0, 0};
	char err[EGL_ERR_LEN];
	if (egl_ctx_create(&o, &sink, &ctx, err)) {
		fprintf(stderr, "no GL context: %s\n", err);
		ctx = NULL;
	} else {
		printf("GL context: %s (%s platform)\n", egl_ctx_info(ctx)->renderer,
		       egl_ctx_info(ctx)->platform);
	}
	return ctx;
}

void tu_params(struct bloom_params *p, int op)
{
	struct request r;
	request_init(&r, op == BLOOM_OP_CONVOLVE ? REQUEST_CONVOLVE : REQUEST_BLOOM);
	*p = r.p;
}

void tu_param(struct bloom_params *p, int op, const char *name, const char *value)
{
	struct request r;
	request_init(&r, op == BLOOM_OP_CONVOLVE ? REQUEST_CONVOLVE : REQUEST_BLOOM);
	r.p = *p;
	char err[REQUEST_ERR_LEN];
	if (request_set(&r, name, value, REQUEST_SRC_QUERY, err)) {
		fprintf(stderr, "tu_param %s=%s: %s\n", name, value, err);
		abort();
	}
	*p = r.p;
}

int tu_doc_ends_with(const char *path, void (*write)(FILE *), const char *print_option)
{
	char *made = NULL;
	size_t made_len = 0;
	FILE *m = open_memstream(&made, &made_len);
	if (!m)
		return 0;
	write(m);
	fclose(m);
	FILE *f = fopen(path, "rb");
	if (!f) {
		free(made);
		return -1;
	}
	static char doc[1 << 16];
	size_t n = fread(doc, 1, sizeof doc - 1, f);
	fclose(f);
	int same = n >= made_len && !memcmp(doc + n - made_len, made, made_len);
	if (!same)
		fprintf(stderr, "%s differs from its table: run build/fftbloomd %s and put its output "
		        "at the file's end (make docs)\n", path, print_option);
	free(made);
	return same;
}
