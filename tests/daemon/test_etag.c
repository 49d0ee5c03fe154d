/* Render ETags (daemon/etag): equal for equivalent requests (parameter order, 0.5 and 0.50 and
 * 5e-1, a default given or not, -0 and 0, a preset's keys in another order), different when
 * anything that changes the answer's bytes changes (each parameter, the kernel, the image, the
 * format, bits, quality, the engine), each field varied alone from one base (one ulp, one unit,
 * one byte), and the engine's digest covers its executable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
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
	struct etag_render in = {engine, image, kernel, &r, format, bits, quality, NULL};
	assert_int_equal(etag_render_tag(&in, out), 0);
	assert_int_equal(strlen(out), ETAG_LEN - 1);
	assert_true(!strncmp(out, "W/\"", 3) && out[ETAG_LEN - 2] == '"');
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

/* Every field the tag covers, varied alone from one base: a double by one ulp, an int by one,
 * one byte of a digest; each of these tags differs from the base's and from every other. A field
 * dropped from the hash (the kernel centre's y, say) leaves its variant equal to the base. */
struct field {
	const char *name;
	size_t offset; /* in struct request */
	int is_double;
};

#define PF(f) offsetof(struct request, p) + offsetof(struct bloom_params, f)
#define KF(f) PF(preset) + offsetof(struct kernel_preset, f)
static const struct field fields[] = {
	{"op", offsetof(struct request, op), 0},
	{"threshold", PF(threshold), 1},
	{"knee", PF(knee), 1},
	{"clamp_max", PF(clamp_max), 1},
	{"intensity", PF(intensity), 1},
	{"mix", PF(mix), 1},
	{"kernel_scale", PF(kernel_scale), 1},
	{"composite", PF(composite), 0},
	{"normalize", PF(normalize), 0},
	{"precision", PF(precision), 0},
	{"technique", PF(technique), 0},
	{"method", PF(method), 0},
	{"center.mode", PF(center) + offsetof(struct kernel_center, mode), 0},
	{"center.x", PF(center) + offsetof(struct kernel_center, x), 1},
	{"center.y", PF(center) + offsetof(struct kernel_center, y), 1},
	{"preset.kind", KF(kind), 0},
	{"preset.size", KF(size), 0},
	{"preset.sigma", KF(sigma), 1},
	{"preset.core", KF(core), 1},
	{"preset.halo", KF(halo), 1},
	{"preset.halo_gain", KF(halo_gain), 1},
	{"preset.streaks", KF(streaks), 0},
	{"preset.length", KF(length), 1},
	{"preset.rotation", KF(rotation), 1},
	{"preset.blades", KF(blades), 0},
	{"preset.radius", KF(radius), 1},
};

/* The base: a bloom whose every field holds a value of its own (a glare preset with every key,
 * and the aperture's keys set as well, so that no field is 0 and a changed one is seen). */
static void base_request(struct request *r)
{
	request_init(r, REQUEST_BLOOM);
	char err[REQUEST_ERR_LEN];
	const char *q[][2] = {
		{"threshold", "0.75"}, {"knee", "0.25"}, {"clamp_max", "100"}, {"intensity", "1.5"},
		{"composite", "mix"}, {"mix", "0.375"}, {"kernel_scale", "0.5"},
		{"kernel_center", "3.5,4.25"}, {"normalize", "luminance"}, {"precision", "fp16"},
		{"technique", "shared"},
		{"kernel_preset", "glare:size=31,core=2,halo=9,halo_gain=0.5,streaks=6,length=0.75,"
		                  "rotation=15"},
	};
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
		if (request_set(r, q[i][0], q[i][1], REQUEST_SRC_QUERY, err))
			fail_msg("%s", err);
	r->p.preset.sigma = 2.5; /* fields glare does not use: hashed all the same */
	r->p.preset.blades = 5;
	r->p.preset.radius = 0.3;
	r->p.method = 1;
}

static void tag_req(const struct request *r, const uint64_t *kernel, int format, int bits,
                    int quality, const unsigned char *engine, const unsigned char *image,
                    char out[ETAG_LEN])
{
	struct etag_render in = {engine, image, kernel, r, format, bits, quality, NULL};
	assert_int_equal(etag_render_tag(&in, out), 0);
}

static void test_each_field_alone(void **state)
{
	(void)state;
	size_t nf = sizeof fields / sizeof fields[0];
	size_t n = nf + 12, used = 0;
	char (*tags)[ETAG_LEN] = calloc(n, ETAG_LEN);
	const char **names = calloc(n, sizeof *names);
	struct request base, r;
	base_request(&base);
	char base_tag[ETAG_LEN], again[ETAG_LEN];
	tag_req(&base, NULL, IMAGE_FORMAT_JPEG, 8, 90, ENGINE, IMAGE, base_tag);
	r = base;
	tag_req(&r, NULL, IMAGE_FORMAT_JPEG, 8, 90, ENGINE, IMAGE, again);
	assert_string_equal(base_tag, again); /* the same request, the same tag */
	for (size_t i = 0; i < nf; i++) {
		r = base;
		char *p = (char *)&r + fields[i].offset;
		if (fields[i].is_double) {
			double v;
			memcpy(&v, p, sizeof v);
			assert_true(v != 0); /* the base gives every field a value of its own */
			v = nextafter(v, INFINITY);
			memcpy(p, &v, sizeof v);
		} else {
			int v;
			memcpy(&v, p, sizeof v);
			v += 1;
			memcpy(p, &v, sizeof v);
		}
		tag_req(&r, NULL, IMAGE_FORMAT_JPEG, 8, 90, ENGINE, IMAGE, tags[used]);
		names[used++] = fields[i].name;
	}
	/* the kernel: a named one's digest words each alone, then the engine's and the image's
	 * digests (first and last byte), the answer's format, bits and quality */
	uint64_t k[2] = {0x1111, 0x2222}, k0[2] = {0x1112, 0x2222}, k1[2] = {0x1111, 0x2223};
	char named[ETAG_LEN];
	tag_req(&base, k, IMAGE_FORMAT_JPEG, 8, 90, ENGINE, IMAGE, named);
	tag_req(&base, k0, IMAGE_FORMAT_JPEG, 8, 90, ENGINE, IMAGE, tags[used]);
	names[used++] = "kernel digest word 0";
	tag_req(&base, k1, IMAGE_FORMAT_JPEG, 8, 90, ENGINE, IMAGE, tags[used]);
	names[used++] = "kernel digest word 1";
	unsigned char e[4][32];
	for (int i = 0; i < 4; i++)
		memcpy(e[i], i < 2 ? ENGINE : IMAGE, 32);
	e[0][0] ^= 1;
	e[1][31] ^= 1;
	e[2][0] ^= 1;
	e[3][31] ^= 1;
	tag_req(&base, NULL, IMAGE_FORMAT_JPEG, 8, 90, e[0], IMAGE, tags[used]);
	names[used++] = "engine byte 0";
	tag_req(&base, NULL, IMAGE_FORMAT_JPEG, 8, 90, e[1], IMAGE, tags[used]);
	names[used++] = "engine byte 31";
	tag_req(&base, NULL, IMAGE_FORMAT_JPEG, 8, 90, ENGINE, e[2], tags[used]);
	names[used++] = "image byte 0";
	tag_req(&base, NULL, IMAGE_FORMAT_JPEG, 8, 90, ENGINE, e[3], tags[used]);
	names[used++] = "image byte 31";
	tag_req(&base, NULL, IMAGE_FORMAT_PNG, 8, 90, ENGINE, IMAGE, tags[used]);
	names[used++] = "format";
	tag_req(&base, NULL, IMAGE_FORMAT_JPEG, 9, 90, ENGINE, IMAGE, tags[used]);
	names[used++] = "bits";
	tag_req(&base, NULL, IMAGE_FORMAT_JPEG, 8, 91, ENGINE, IMAGE, tags[used]);
	names[used++] = "quality";
	assert_true(used <= n);
	int same = 0;
	for (size_t i = 0; i < used; i++) {
		if (!strcmp(tags[i], base_tag)) {
			printf("%s varied alone: the same tag as the base %s\n", names[i], base_tag);
			same++;
		}
		for (size_t j = i + 1; j < used; j++)
			if (!strcmp(tags[i], tags[j])) {
				printf("%s and %s: the same tag %s\n", names[i], names[j], tags[i]);
				same++;
			}
	}
	/* the named kernel's tag differs from the preset's, and its words' variants from it */
	assert_string_not_equal(named, base_tag);
	assert_string_not_equal(named, tags[nf]);
	assert_string_not_equal(named, tags[nf + 1]);
	printf("%zu fields varied alone from the base: %d tags equal\n", used, same);
	assert_int_equal(same, 0);
	free(tags);
	free(names);
}

/* An origin's render (accept set: the format not resolved yet): the Accept header's preferences
 * change the tag, each q and named position alone; equal preferences give equal tags; the
 * digest's first half is the tag; with accept NULL the tag is what it was. */
static void test_accept(void **state)
{
	(void)state;
	struct request r;
	request_init(&r, REQUEST_BLOOM);
	struct format_accept a, b;
	memset(&a, 0, sizeof a);
	a.given = 1;
	for (int i = 0; i < IMAGE_FORMAT_COUNT; i++)
		a.q[i] = 1000;
	struct etag_render in = {ENGINE, IMAGE, NULL, &r, 0, 0, 90, &a};
	char t0[ETAG_LEN], t1[ETAG_LEN], plain[ETAG_LEN];
	unsigned char d[32];
	assert_int_equal(etag_render_tag(&in, t0), 0);
	assert_int_equal(etag_render_digest(&in, d), 0);
	char hex[33];
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	assert_memory_equal(t0 + 3, hex, 32);
	b = a;
	in.accept = &b;
	assert_int_equal(etag_render_tag(&in, t1), 0);
	assert_string_equal(t0, t1);
	for (int i = 0; i < IMAGE_FORMAT_COUNT; i++) {
		b = a;
		b.q[i] = 999;
		assert_int_equal(etag_render_tag(&in, t1), 0);
		assert_string_not_equal(t0, t1);
		b = a;
		b.named[i] = 1;
		assert_int_equal(etag_render_tag(&in, t1), 0);
		assert_string_not_equal(t0, t1);
	}
	b = a;
	b.prefer_avif = 1;
	assert_int_equal(etag_render_tag(&in, t1), 0);
	assert_string_not_equal(t0, t1);
	b = a;
	b.given = 0;
	assert_int_equal(etag_render_tag(&in, t1), 0);
	assert_string_not_equal(t0, t1);
	in.accept = NULL;
	assert_int_equal(etag_render_tag(&in, plain), 0);
	assert_string_not_equal(t0, plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equivalent),
		cmocka_unit_test(test_different),
		cmocka_unit_test(test_each_field_alone),
		cmocka_unit_test(test_engine),
		cmocka_unit_test(test_accept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
