/* The request table and the answer's format: format=, Accept with q-values and the input's
 * family; every way a parameter comes in (query, form field, params JSON, flag) with the rules
 * they share: unknown names, parameters the operation does not take, a parameter given twice,
 * the built-in kernels' keys, kernel centres, conflicting kernels; the table's defaults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/format.h"
#include "protocol/kernel_preset.h"
#include "protocol/request.h"

static void test_format_parse(void **state)
{
	(void)state;
	assert_int_equal(format_parse("jpeg"), OUT_JPEG);
	assert_int_equal(format_parse("JPG"), OUT_JPEG);
	assert_int_equal(format_parse("png16"), OUT_PNG16);
	assert_int_equal(format_parse("pfm"), OUT_PFM);
	assert_int_equal(format_parse("gif"), -1);
	assert_int_equal(format_parse(""), -1);
	assert_int_equal(format_parse(NULL), -1);
}

static void test_accept(void **state)
{
	(void)state;
	int png;
	assert_int_equal(format_from_accept(NULL, &png), OUT_AUTO);
	assert_int_equal(format_from_accept("*/*", &png), OUT_AUTO);
	assert_int_equal(format_from_accept("image/png", &png), OUT_PNG);
	assert_int_equal(png, 1);
	assert_int_equal(format_from_accept("image/webp, image/jpeg;q=0.5, image/x-exr;q=0.8", &png),
	                 OUT_EXR);
	assert_int_equal(png, 0);
	assert_int_equal(format_from_accept("image/png;q=0.2, */*;q=0.9", &png), OUT_AUTO);
	assert_int_equal(format_from_accept("image/png, */*;q=0.9", &png), OUT_PNG);
	assert_int_equal(format_from_accept("text/html, application/xhtml+xml", &png), OUT_AUTO);
	assert_int_equal(format_from_accept("IMAGE/VND.RADIANCE ; q=1", &png), OUT_HDR);
	assert_int_equal(format_from_accept("image/jpeg;q=0", &png), OUT_AUTO); /* q=0: not */
	/* ties keep the first listed */
	assert_int_equal(format_from_accept("image/x-portable-floatmap, image/jpeg", &png),
	                 OUT_PFM);
}

static void test_resolve(void **state)
{
	(void)state;
	struct image_info jpeg = {IMAGE_FORMAT_JPEG, 8, 3, 0, 1}, png8 = {IMAGE_FORMAT_PNG, 8, 4, 0, 1},
	                  png16 = {IMAGE_FORMAT_PNG, 16, 3, 0, 1}, exr = {IMAGE_FORMAT_EXR, 16, 4, 1, 1},
	                  pfm = {IMAGE_FORMAT_PFM, 32, 3, 1, 1};
	enum image_format f;
	int bits;
	format_resolve(OUT_AUTO, 0, &jpeg, &f, &bits);
	assert_int_equal(f, IMAGE_FORMAT_JPEG);
	format_resolve(OUT_AUTO, 0, &png8, &f, &bits);
	assert_true(f == IMAGE_FORMAT_PNG && bits == 8);
	format_resolve(OUT_AUTO, 0, &png16, &f, &bits);
	assert_true(f == IMAGE_FORMAT_PNG && bits == 16);
	format_resolve(OUT_AUTO, 0, &exr, &f, &bits);
	assert_int_equal(f, IMAGE_FORMAT_EXR);
	format_resolve(OUT_AUTO, 0, &pfm, &f, &bits);
	assert_int_equal(f, IMAGE_FORMAT_EXR);
	format_resolve(OUT_PNG, 0, &png16, &f, &bits); /* format=png: 8 bits */
	assert_true(f == IMAGE_FORMAT_PNG && bits == 8);
	format_resolve(OUT_PNG, 1, &png16, &f, &bits); /* Accept: image/png keeps 16 */
	assert_true(f == IMAGE_FORMAT_PNG && bits == 16);
	format_resolve(OUT_PNG16, 0, &jpeg, &f, &bits);
	assert_true(f == IMAGE_FORMAT_PNG && bits == 16);
	format_resolve(OUT_JPEG, 0, &exr, &f, &bits);
	assert_int_equal(f, IMAGE_FORMAT_JPEG);
	assert_string_equal(format_content_type(IMAGE_FORMAT_EXR), "image/x-exr");
}

/* Every row's default parses (request_init does not report them), and the operation's own
 * defaults: bloom normalises by luminance, convolve not; the preset is the default aperture. */
static void test_defaults(void **state)
{
	(void)state;
	char err[OPT_ERR_LEN];
	struct request r;
	for (size_t i = 0; i < request_table_len; i++) {
		const struct request_param *d = &request_table[i];
		if (!d->parse && d->o.def) {
			int rc = opts_set(&d->o, &r, d->o.def, err);
			if (rc)
				fail_msg("%s: default '%s': %s", d->o.name, d->o.def, err);
		}
		assert_true(d->ops != 0);
		assert_non_null(d->o.help);
	}
	request_init(&r, REQUEST_BLOOM);
	assert_int_equal(r.p.normalize, BLOOM_NORMALIZE_LUMINANCE);
	assert_true(r.p.threshold == 1 && r.p.knee == 0.5 && r.p.intensity == 1);
	assert_int_equal(r.p.preset.kind, KERNEL_APERTURE);
	assert_int_equal(r.p.preset.blades, 6);
	assert_int_equal(r.format, OUT_AUTO);
	assert_int_equal(r.quality, 0);
	request_init(&r, REQUEST_CONVOLVE);
	assert_int_equal(r.p.normalize, BLOOM_NORMALIZE_NONE);
}

static void expect(struct request *r, const char *name, const char *value, int src, int want,
                   const char *text)
{
	char err[REQUEST_ERR_LEN] = "";
	int rc = request_set(r, name, value, src, err);
	printf("%s=%s: %s\n", name, value, rc ? err : "ok");
	assert_int_equal(rc, want);
	if (text && !strstr(err, text))
		fail_msg("'%s' lacks '%s'", err, text);
}

static void test_rules(void **state)
{
	(void)state;
	struct request r;
	request_init(&r, REQUEST_BLOOM);
	expect(&r, "threshold", "0.25", REQUEST_SRC_QUERY, 0, NULL);
	assert_true(r.p.threshold == 0.25);
	expect(&r, "threshold", "0.5", REQUEST_SRC_JSON, REQUEST_E_TWICE, "in the query string and in params");
	expect(&r, "threshold", "0.5", REQUEST_SRC_QUERY, REQUEST_E_TWICE, "threshold given twice");
	assert_true(r.p.threshold == 0.25);
	expect(&r, "kernel_scale", "9", REQUEST_SRC_QUERY, REQUEST_E_VALUE, "kernel_scale: '9' is out of bounds [0, 8]");
	expect(&r, "kernel-scale", "9", REQUEST_SRC_FLAG, REQUEST_E_VALUE, "kernel-scale: '9'");
	expect(&r, "kernel_scale", "0.5", REQUEST_SRC_FORM, 0, NULL);
	expect(&r, "nosuch", "1", REQUEST_SRC_QUERY, REQUEST_E_UNKNOWN, "unknown parameter 'nosuch'");
	expect(&r, "composite", "blend", REQUEST_SRC_QUERY, REQUEST_E_VALUE, "add|mix");
	expect(&r, "format", "gif", REQUEST_SRC_QUERY, REQUEST_E_VALUE, FORMAT_CHOICES);
	expect(&r, "format", "JPG", REQUEST_SRC_QUERY, 0, NULL);
	assert_int_equal(r.format, OUT_JPEG);
	expect(&r, "quality", "0", REQUEST_SRC_QUERY, REQUEST_E_VALUE, "[1, 100]");
	expect(&r, "quality", "77", REQUEST_SRC_QUERY, 0, NULL);
	assert_int_equal(r.quality, 77);

	request_init(&r, REQUEST_CONVOLVE);
	expect(&r, "threshold", "0.5", REQUEST_SRC_QUERY, REQUEST_E_OP, "convolve does not take it");
	expect(&r, "intensity", "2", REQUEST_SRC_FORM, REQUEST_E_OP, "only bloom does");
	expect(&r, "nosuch", "1", REQUEST_SRC_QUERY, REQUEST_E_UNKNOWN, "kernel_scale");
	char err[REQUEST_ERR_LEN];
	request_set(&r, "nosuch", "1", REQUEST_SRC_QUERY, err);
	assert_null(strstr(err, "threshold")); /* convolve's list names convolve's parameters */
}

static void test_presets(void **state)
{
	(void)state;
	struct request r;
	request_init(&r, REQUEST_BLOOM);
	expect(&r, "kernel_preset", "glare:streaks=6,rotation=15", REQUEST_SRC_QUERY, 0, NULL);
	assert_int_equal(r.p.preset.kind, KERNEL_GLARE);
	assert_int_equal(r.p.preset.streaks, 6);
	assert_true(r.p.preset.rotation == 15 && r.p.preset.core == 1.5);
	request_init(&r, REQUEST_BLOOM);
	expect(&r, "kernel_preset", "glare:blades=6", REQUEST_SRC_QUERY, REQUEST_E_VALUE,
	       "glare has no key 'blades' (its keys: size=");
	request_init(&r, REQUEST_BLOOM);
	expect(&r, "kernel_preset", "aperture:radius=0.9", REQUEST_SRC_QUERY, REQUEST_E_VALUE,
	       "[0.01, 0.45]");
	request_init(&r, REQUEST_BLOOM);
	expect(&r, "kernel_preset", "bokeh", REQUEST_SRC_QUERY, REQUEST_E_VALUE,
	       "gaussian, glare, aperture");
	request_init(&r, REQUEST_BLOOM);
	expect(&r, "kernel_preset", "gaussian:sigma=2.5", REQUEST_SRC_QUERY, 0, NULL);
	assert_int_equal(r.p.preset.size, 17); /* 2 * ceil(7.5) + 1 */
	/* the format of a preset parses back to the same preset */
	char buf[512];
	kernel_preset_format(&r.p.preset, buf, sizeof buf);
	struct kernel_preset back;
	char kerr[KERNEL_PRESET_ERR_LEN];
	assert_int_equal(kernel_preset_parse(buf, &back, kerr), 0);
	assert_memory_equal(&back, &r.p.preset, sizeof back);
	printf("%s\n", buf);
}

static void test_center_and_conflicts(void **state)
{
	(void)state;
	struct request r;
	request_init(&r, REQUEST_CONVOLVE);
	expect(&r, "kernel_center", "uv:0.25,1", REQUEST_SRC_QUERY, 0, NULL);
	assert_true(r.p.center.mode == KERNEL_CENTER_UV && r.p.center.x == 0.25 && r.p.center.y == 1);
	request_init(&r, REQUEST_CONVOLVE);
	expect(&r, "kernel_center", "3,4", REQUEST_SRC_QUERY, 0, NULL);
	assert_true(r.p.center.mode == KERNEL_CENTER_PIXEL && r.p.center.x == 3 && r.p.center.y == 4);
	const char *bad[] = {"3", "3,", "uv:2,0", "-1,4", "a,b", "3,4,5", "nan,1"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		request_init(&r, REQUEST_CONVOLVE);
		expect(&r, "kernel_center", bad[i], REQUEST_SRC_QUERY, REQUEST_E_VALUE, "kernel_center");
	}
	char err[REQUEST_ERR_LEN];
	request_init(&r, REQUEST_BLOOM);
	expect(&r, "kernel", "k", REQUEST_SRC_QUERY, 0, NULL);
	expect(&r, "kernel_preset", "gaussian", REQUEST_SRC_FORM, 0, NULL);
	assert_int_equal(request_finish(&r, 0, err), REQUEST_E_CONFLICT);
	request_init(&r, REQUEST_BLOOM);
	expect(&r, "kernel_preset", "gaussian", REQUEST_SRC_QUERY, 0, NULL);
	assert_int_equal(request_finish(&r, 1, err), REQUEST_E_CONFLICT);
	assert_non_null(strstr(err, "kernel_preset"));
	request_init(&r, REQUEST_BLOOM);
	assert_int_equal(request_finish(&r, 1, err), 0);
}

static void test_json(void **state)
{
	(void)state;
	struct request r;
	char err[REQUEST_ERR_LEN];
	request_init(&r, REQUEST_BLOOM);
	const char *ok = "{\"threshold\": 0.5, \"kernel_preset\": \"gaussian:sigma=3\", \"quality\": 80, "
	                 "\"composite\": \"mix\"}";
	assert_int_equal(request_set_json(&r, ok, strlen(ok), err), 0);
	assert_true(r.p.threshold == 0.5 && r.quality == 80 && r.p.composite == BLOOM_COMPOSITE_MIX);
	assert_int_equal(r.p.preset.kind, KERNEL_GAUSSIAN);
	const char *twice = "{\"knee\": 0.1, \"knee\": 0.2}";
	assert_int_equal(request_set_json(&r, twice, strlen(twice), err), REQUEST_E_JSON);
	const char *again = "{\"threshold\": 0.7}";
	assert_int_equal(request_set_json(&r, again, strlen(again), err), REQUEST_E_TWICE);
	const char *nested = "{\"knee\": [1]}";
	assert_int_equal(request_set_json(&r, nested, strlen(nested), err), REQUEST_E_JSON);
	const char *array = "[1, 2]";
	assert_int_equal(request_set_json(&r, array, strlen(array), err), REQUEST_E_JSON);
	const char *broken = "{\"knee\": ";
	assert_int_equal(request_set_json(&r, broken, strlen(broken), err), REQUEST_E_JSON);
	printf("%s\n", err);
}

static void test_help(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	request_print_help(f, REQUEST_CONVOLVE);
	fclose(f);
	assert_null(strstr(buf, "--threshold")); /* convolve's help lists convolve's parameters */
	assert_non_null(strstr(buf, "--kernel-center"));
	assert_non_null(strstr(buf, "glare: size="));  /* the presets' keys, as kernel --help */
	assert_non_null(strstr(buf, "blades=0..32"));
	free(buf);
}

/* conv2d and conv2d-transpose rows: pairs ("P" or "PH,PW") with their bounds, the defaults,
 * enum names, and the rows two operations share a name with (precision). */
static void test_conv(void **state)
{
	(void)state;
	struct request r;
	request_init(&r, REQUEST_CONV2D);
	assert_true(r.c.pad_h == 0 && r.c.pad_w == 0 && r.c.stride_h == 1 && r.c.stride_w == 1);
	assert_true(r.c.dil_h == 1 && r.c.groups == 1 && r.c.precision == 3 && r.c.algorithm == 0);
	expect(&r, "padding", "1,2", REQUEST_SRC_QUERY, 0, NULL);
	expect(&r, "stride", "3", REQUEST_SRC_QUERY, 0, NULL);
	expect(&r, "algorithm", "interp", REQUEST_SRC_QUERY, 0, NULL);
	assert_true(r.c.pad_h == 1 && r.c.pad_w == 2 && r.c.stride_h == 3 && r.c.stride_w == 3);
	assert_int_equal(r.c.algorithm, 2);
	expect(&r, "precision", "4", REQUEST_SRC_QUERY, REQUEST_E_VALUE, "[0, 3]");
	expect(&r, "precision", "fp16", REQUEST_SRC_QUERY, REQUEST_E_VALUE, "precision");
	expect(&r, "precision", "1", REQUEST_SRC_QUERY, 0, NULL);
	expect(&r, "threshold", "1", REQUEST_SRC_QUERY, REQUEST_E_OP, "only bloom does");
	expect(&r, "method", "subkernel", REQUEST_SRC_QUERY, REQUEST_E_OP, "conv2d_transpose");
	const char *bad[] = {"", ",", "1,", ",2", "1,2,3", "a", "1.5", " 1", "+1", "1 ,2", "0x3",
	                     "99999999999999", "-1"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		request_init(&r, REQUEST_CONV2D);
		expect(&r, "dilation", bad[i], REQUEST_SRC_QUERY, REQUEST_E_VALUE, "dilation");
	}
	request_init(&r, REQUEST_CONV2D);
	expect(&r, "stride", "0", REQUEST_SRC_QUERY, REQUEST_E_VALUE, "out of bounds [1, 65535]");
	request_init(&r, REQUEST_CONV2D);
	expect(&r, "stride", "1,70000", REQUEST_SRC_QUERY, REQUEST_E_VALUE, "out of bounds");

	char err[REQUEST_ERR_LEN];
	request_init(&r, REQUEST_CONV2D_T);
	assert_true(r.c.stride_h == 1 && r.c.out_pad_h == 0 && r.c.out_h == 0 && r.c.method == 0);
	expect(&r, "method", "subkernel", REQUEST_SRC_QUERY, 0, NULL);
	expect(&r, "padding_mode", "tf_same", REQUEST_SRC_QUERY, 0, NULL);
	expect(&r, "output_shape", "9,12", REQUEST_SRC_QUERY, 0, NULL);
	assert_true(r.c.method == 3 && r.c.padding_mode == 1 && r.c.out_h == 9 && r.c.out_w == 12);
	assert_int_equal(request_finish(&r, 0, err), 0);
	expect(&r, "output-padding", "1,0", REQUEST_SRC_FLAG, 0, NULL);
	assert_int_equal(request_finish(&r, 0, err), REQUEST_E_CONFLICT); /* TF computes padding */
	printf("%s\n", err);
	request_init(&r, REQUEST_CONV2D_T);
	expect(&r, "output_shape", "9", REQUEST_SRC_QUERY, REQUEST_E_VALUE, "is not H,W");
	expect(&r, "output_shape", "9,9", REQUEST_SRC_QUERY, 0, NULL);
	assert_int_equal(request_finish(&r, 0, err), REQUEST_E_CONFLICT); /* torch: no shape */
	printf("%s\n", err);
	expect(&r, "precision", "2", REQUEST_SRC_QUERY, REQUEST_E_OP, "conv2d");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_parse), cmocka_unit_test(test_accept),
		cmocka_unit_test(test_resolve),      cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_rules),        cmocka_unit_test(test_presets),
		cmocka_unit_test(test_center_and_conflicts), cmocka_unit_test(test_json),
		cmocka_unit_test(test_help),         cmocka_unit_test(test_conv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
