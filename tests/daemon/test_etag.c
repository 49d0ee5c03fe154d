/* Render ETags (daemon/etag): equal for equivalent requests (parameter order, 0.5 and 0.50 and
 * 5e-1, a default given or not, -0 and 0, a preset's keys in another order), different when
 * anything that changes the answer's bytes changes (each parameter, the kernel, the image, the
 * format, bits, quality, the engine), and the engine's digest covers its executable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/etag.h"

static const unsigned char ENGINE[32] = {1, 2, 3};
static const unsigned char IMAGE[32] = {9, 8, 7};

/* The tag of op with a query "a=1&b=2" parsed through the request table. */
static void tag_of(unsigned op, const char *query, const uint64_t *kernel, int format, int bits,
                   int quality, const unsigned char *engine, const unsigned char *image,
                   char out[ETAG_LEN])
{
	struct request r;
	request_init(&r, op);
	char q[512], err[REQUEST_ERR_LEN];
	snprintf(q, sizeof q, "%s", query);
	for (char *save = NULL, *it = strtok_r(q, "&", &save); it; it = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(it, '=');
		*eq = 0;
		if (request_set(&r, it, eq + 1, REQUEST_SRC_QUERY, err))
			fail_msg("%s", err);
	}
	assert_int_equal(request_finish(&r, 0, err), 0);
	struct etag_render in = {engine, image, kernel, &r, format, bits, quality};
	assert_int_equal(etag_render_tag(&in, out), 0);
	assert_int_equal(strlen(out), ETAG_LEN - 1);
	assert_true(out[0] == '"' && out[ETAG_LEN - 2] == '"');
}

#define TAG(op, q, out) tag_of(op, q, NULL, IMAGE_FORMAT_PNG, 8, 90, ENGINE, IMAGE, out)

static void test_equivalent(void **state)
{
	(void)state;
	char a[ETAG_LEN], b[ETAG_LEN];
	const char *same[][2] = {
		{"threshold=0.5&intensity=2", "intensity=2&threshold=0.50"},
		{"threshold=0.5", "threshold=5e-1"},
		{"threshold=1", ""},                        /* the default, given or not */
		{"threshold=0", "threshold=-0"},
		{"kernel_preset=gaussian:sigma=2", "kernel_preset=gaussian:sigma=2.0"},
		{"kernel_preset=glare:streaks=6,rotation=10", "kernel_preset=glare:rotation=10,streaks=6"},
		{"kernel_preset=aperture", ""},             /* the default kernel */
		{"format=png", ""},                         /* the format is the resolved one */
	};
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		TAG(REQUEST_BLOOM, same[i][0], a);
		TAG(REQUEST_BLOOM, same[i][1], b);
		printf("'%s' %s == '%s' %s\n", same[i][0], a, same[i][1], b);
		assert_string_equal(a, b);
	}
}

static void test_different(void **state)
{
	(void)state;
	const char *q[] = {
		"", "threshold=0.6", "knee=0.1", "clamp_max=10", "intensity=3", "composite=mix",
		"mix=0.25&composite=mix", "kernel_scale=0.5", "kernel_center=1,2", "kernel_center=uv:0.5,0.25",
		"normalize=none", "precision=fp16", "technique=global", "kernel_preset=gaussian:sigma=2",
		"kernel_preset=gaussian:sigma=3", "kernel_preset=glare", "kernel_preset=aperture:blades=5",
	};
	size_t n = sizeof q / sizeof q[0];
	char (*tags)[ETAG_LEN] = calloc(n + 8, ETAG_LEN);
	for (size_t i = 0; i < n; i++)
		TAG(REQUEST_BLOOM, q[i], tags[i]);
	uint64_t k1[2] = {1, 2}, k2[2] = {1, 3};
	unsigned char e2[32] = {1, 2, 4}, i2[32] = {9, 8, 6};
	tag_of(REQUEST_BLOOM, "", k1, IMAGE_FORMAT_PNG, 8, 90, ENGINE, IMAGE, tags[n]);
	tag_of(REQUEST_BLOOM, "", k2, IMAGE_FORMAT_PNG, 8, 90, ENGINE, IMAGE, tags[n + 1]);
	tag_of(REQUEST_BLOOM, "", NULL, IMAGE_FORMAT_JPEG, 8, 90, ENGINE, IMAGE, tags[n + 2]);
	tag_of(REQUEST_BLOOM, "", NULL, IMAGE_FORMAT_PNG, 16, 90, ENGINE, IMAGE, tags[n + 3]);
	tag_of(REQUEST_BLOOM, "", NULL, IMAGE_FORMAT_PNG, 8, 80, ENGINE, IMAGE, tags[n + 4]);
	tag_of(REQUEST_BLOOM, "", NULL, IMAGE_FORMAT_PNG, 8, 90, e2, IMAGE, tags[n + 5]);
	tag_of(REQUEST_BLOOM, "", NULL, IMAGE_FORMAT_PNG, 8, 90, ENGINE, i2, tags[n + 6]);
	tag_of(REQUEST_CONVOLVE, "", NULL, IMAGE_FORMAT_PNG, 8, 90, ENGINE, IMAGE, tags[n + 7]);
	for (size_t i = 0; i < n + 8; i++)
		for (size_t j = i + 1; j < n + 8; j++) {
			if (!strcmp(tags[i], tags[j]))
				printf("same tag for %zu and %zu: %s\n", i, j, tags[i]);
			assert_string_not_equal(tags[i], tags[j]);
		}
	/* convolve's own parameter */
	char a[ETAG_LEN], b[ETAG_LEN];
	TAG(REQUEST_CONVOLVE, "method=fft", a);
	TAG(REQUEST_CONVOLVE, "method=spatial", b);
	assert_string_not_equal(a, b);
	/* a named kernel: its digest decides, the preset does not matter */
	tag_of(REQUEST_BLOOM, "kernel=a", k1, IMAGE_FORMAT_PNG, 8, 90, ENGINE, IMAGE, a);
	tag_of(REQUEST_BLOOM, "kernel=b", k1, IMAGE_FORMAT_PNG, 8, 90, ENGINE, IMAGE, b);
	assert_string_equal(a, b);
	free(tags);
}

static void test_engine(void **state)
{
	(void)state;
	char path[] = "/tmp/fftbloom-etag-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "build one", 9), 9);
	close(fd);
	unsigned char a[32], b[32], c[32], d[32];
	assert_int_equal(etag_engine(path, "gpu X", a), 0);
	assert_int_equal(etag_engine(path, "gpu Y", b), 0);
	FILE *f = fopen(path, "w");
	fputs("build two", f);
	fclose(f);
	assert_int_equal(etag_engine(path, "gpu X", c), 0);
	assert_memory_not_equal(a, b, 32);
	assert_memory_not_equal(a, c, 32);
	unlink(path);
	assert_int_equal(etag_engine(path, "gpu X", d), -1); /* unreadable: the facts alone */
	assert_memory_not_equal(a, d, 32);
	assert_int_equal(etag_engine(NULL, "gpu X", c), 0);
	assert_memory_equal(c, d, 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equivalent),
		cmocka_unit_test(test_different),
		cmocka_unit_test(test_engine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
