/* The request table and the answer's format: format=, Accept with q-values (browsers' headers,
 * --auto-avif, 406 when nothing made is acceptable) and the input's family; every way a parameter comes in (query, form field, params JSON, flag) with the rules
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
	assert_int_equal(format_parse("WebP"), OUT_WEBP);
	assert_int_equal(format_parse("avif"), OUT_AVIF);
	assert_int_equal(format_parse("avif10"), OUT_AVIF10);
	assert_int_equal(format_parse("avif12"), OUT_AVIF12);
	assert_int_equal(format_parse("avif16"), -1);
	assert_int_equal(format_parse("gif"), -1);
	assert_int_equal(format_parse(""), -1);
	assert_int_equal(format_parse(NULL), -1);
	assert_string_equal(format_content_type(IMAGE_FORMAT_WEBP), "image/webp");
	assert_string_equal(format_content_type(IMAGE_FORMAT_AVIF), "image/avif");
	assert_string_equal(format_content_type(IMAGE_FORMAT_UNKNOWN), "application/octet-stream");
	/* what a 406 lists: every format's own type, once */
	const char *const *t = format_types();
	size_t n = 0;
	for (; t[n]; n++)
		assert_int_equal(format_parse(strchr(t[n], '/') + 1) >= 0 || strstr(t[n], "x-") ||
		                 strstr(t[n], "radiance"), 1);
	assert_int_equal(n, 7);
}

static const struct image_info in_jpeg = {IMAGE_FORMAT_JPEG, 8, 3, 0, 1, 64, 48},
                                in_png8 = {IMAGE_FORMAT_PNG, 8, 4, 0, 1, 64, 48},
                                in_png16 = {IMAGE_FORMAT_PNG, 16, 3, 0, 1, 64, 48},
                                in_exr = {IMAGE_FORMAT_EXR, 16, 4, 1, 1, 64, 48},
                                in_pfm = {IMAGE_FORMAT_PFM, 32, 3, 1, 1, 64, 48},
                                in_webp = {IMAGE_FORMAT_WEBP, 8, 4, 0, 1, 64, 48},
                                in_avif8 = {IMAGE_FORMAT_AVIF, 8, 3, 0, 1, 64, 48},
                                in_avif10 = {IMAGE_FORMAT_AVIF, 10, 3, 0, 1, 64, 48},
                                in_avif12 = {IMAGE_FORMAT_AVIF, 12, 4, 0, 1, 64, 48},
                                in_wide_jpeg = {IMAGE_FORMAT_JPEG, 8, 3, 0, 1, 20000, 300},
                                in_tall_png = {IMAGE_FORMAT_PNG, 8, 3, 0, 1, 100, 70000};

/* The format an answer gets for Accept (and --auto-avif) and the input, with no format=; -1
 * when the header allows nothing made (406). */
static int by_accept(const char *accept, int prefer_avif, const struct image_info *in, int *bits)
{
	struct format_accept a;
	enum image_format f;
	int b;
	if (format_from_accept(accept, prefer_avif, &a))
		return -1;
	format_resolve(OUT_AUTO, &a, in, &f, bits ? bits : &b);
	return (int)f;
}

/* Browsers' Accept for images (what an <img> fetches), as sent by Chrome 120+, Firefox 128+
 * and Safari 17, and for a page (Chrome): WebP for all, AVIF instead with --auto-avif. */
static void test_accept_browsers(void **state)
{
	(void)state;
	static const char *img[] = {
		"image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8",
		"image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5",
		"image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,"
		"image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5",
		"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
		"image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
	};
	const struct image_info *ins[] = {&in_jpeg, &in_png8, &in_png16, &in_exr, &in_webp,
	                                  &in_avif10};
	for (size_t i = 0; i < sizeof img / sizeof img[0]; i++)
		for (size_t k = 0; k < sizeof ins / sizeof ins[0]; k++) {
			int bits;
			assert_int_equal(by_accept(img[i], 0, ins[k], &bits), IMAGE_FORMAT_WEBP);
			assert_int_equal(by_accept(img[i], 1, ins[k], &bits), IMAGE_FORMAT_AVIF);
			/* an input of more than 8 bits: 10-bit AVIF */
			assert_int_equal(bits, ins[k]->bits > 8 || ins[k]->float_format ? 10 : 8);
		}
	/* a browser without AVIF (Chrome 85-): WebP even with --auto-avif */
	assert_int_equal(by_accept("image/webp,image/apng,image/*,*/*;q=0.8", 1, &in_jpeg, NULL),
	                 IMAGE_FORMAT_WEBP);
	/* one without either (old Safari): the input's family */
	assert_int_equal(by_accept("image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5",
	                           1, &in_jpeg, NULL), IMAGE_FORMAT_PNG);
	assert_int_equal(by_accept("image/*,*/*;q=0.8", 1, &in_jpeg, NULL), IMAGE_FORMAT_JPEG);
	/* sizes a format cannot hold: WebP past 16383 a side, AVIF past 65536, JPEG past 65535 */
	assert_int_equal(by_accept(img[0], 0, &in_wide_jpeg, NULL), IMAGE_FORMAT_JPEG);
	assert_int_equal(by_accept(img[0], 1, &in_wide_jpeg, NULL), IMAGE_FORMAT_AVIF);
	assert_int_equal(by_accept(img[0], 1, &in_tall_png, NULL), IMAGE_FORMAT_PNG);
	assert_int_equal(by_accept("image/webp", 0, &in_wide_jpeg, NULL), IMAGE_FORMAT_JPEG);
	assert_int_equal(by_accept("image/jpeg, image/webp;q=0.5, image/png;q=0.1", 0, &in_tall_png,
	                           NULL), IMAGE_FORMAT_PNG);
}

static void test_accept(void **state)
{
	(void)state;
	int bits;
	/* no header, a blank one, or wildcards: the input's family */
	assert_int_equal(by_accept(NULL, 1, &in_jpeg, NULL), IMAGE_FORMAT_JPEG);
	assert_int_equal(by_accept(" \t", 1, &in_jpeg, NULL), IMAGE_FORMAT_JPEG);
	assert_int_equal(by_accept("*/*", 1, &in_jpeg, NULL), IMAGE_FORMAT_JPEG);
	assert_int_equal(by_accept("image/*", 1, &in_exr, NULL), IMAGE_FORMAT_EXR);
	assert_int_equal(by_accept("*", 1, &in_pfm, NULL), IMAGE_FORMAT_EXR);
	assert_int_equal(by_accept("*/*", 0, &in_png16, &bits), IMAGE_FORMAT_PNG);
	assert_int_equal(bits, 16);
	assert_int_equal(by_accept(NULL, 0, &in_webp, NULL), IMAGE_FORMAT_WEBP);
	assert_int_equal(by_accept(NULL, 0, &in_avif8, &bits), IMAGE_FORMAT_AVIF);
	assert_int_equal(bits, 8);
	assert_int_equal(by_accept("image/*", 0, &in_avif10, &bits), IMAGE_FORMAT_AVIF);
	assert_int_equal(bits, 10);
	assert_int_equal(by_accept("*/*", 0, &in_avif12, &bits), IMAGE_FORMAT_AVIF);
	assert_int_equal(bits, 12);
	/* a named type: depth follows the input for PNG */
	assert_int_equal(by_accept("image/png", 0, &in_png16, &bits), IMAGE_FORMAT_PNG);
	assert_int_equal(bits, 16);
	assert_int_equal(by_accept("image/png", 0, &in_jpeg, &bits), IMAGE_FORMAT_PNG);
	assert_int_equal(bits, 8);
	assert_int_equal(by_accept("image/png", 0, &in_exr, &bits), IMAGE_FORMAT_PNG);
	assert_int_equal(bits, 8);
	/* highest q wins; a named type beats a wildcard at the same q, not at a higher one */
	assert_int_equal(by_accept("image/webp;q=0.4, image/jpeg;q=0.5, image/x-exr;q=0.8", 1,
	                           &in_jpeg, NULL), IMAGE_FORMAT_EXR);
	assert_int_equal(by_accept("image/png;q=0.2, */*;q=0.9", 0, &in_jpeg, NULL),
	                 IMAGE_FORMAT_JPEG);
	assert_int_equal(by_accept("image/png, */*;q=0.9", 0, &in_jpeg, NULL), IMAGE_FORMAT_PNG);
	assert_int_equal(by_accept("*/*, image/png", 0, &in_jpeg, NULL), IMAGE_FORMAT_PNG);
	assert_int_equal(by_accept("IMAGE/VND.RADIANCE ; q=1", 0, &in_jpeg, NULL),
	                 IMAGE_FORMAT_HDR);
	assert_int_equal(by_accept("image/x-hdr", 0, &in_jpeg, NULL), IMAGE_FORMAT_HDR);
	assert_int_equal(by_accept("image/jpg", 0, &in_exr, NULL), IMAGE_FORMAT_JPEG);
	/* equal q among named types: WebP, then the input's family, then the header's order */
	assert_int_equal(by_accept("image/png, image/webp", 0, &in_png8, NULL), IMAGE_FORMAT_WEBP);
	assert_int_equal(by_accept("image/x-portable-floatmap, image/jpeg", 0, &in_jpeg, NULL),
	                 IMAGE_FORMAT_JPEG);
	assert_int_equal(by_accept("image/x-portable-floatmap, image/jpeg", 0, &in_exr, NULL),
	                 IMAGE_FORMAT_PFM);
	assert_int_equal(by_accept("image/jpeg, image/x-portable-floatmap", 0, &in_exr, NULL),
	                 IMAGE_FORMAT_JPEG);
	/* the most specific range sets a format's q */
	assert_int_equal(by_accept("*/*, image/jpeg;q=0", 0, &in_jpeg, NULL), IMAGE_FORMAT_PNG);
	assert_int_equal(by_accept("image/*;q=0.1, image/png;q=0.5, */*", 0, &in_jpeg, NULL),
	                 IMAGE_FORMAT_PNG);
	/* AVIF without --auto-avif: only when nothing else is acceptable */
	assert_int_equal(by_accept("image/avif", 0, &in_jpeg, &bits), IMAGE_FORMAT_AVIF);
	assert_int_equal(bits, 8);
	assert_int_equal(by_accept("image/avif, image/png;q=0.1", 0, &in_jpeg, NULL),
	                 IMAGE_FORMAT_PNG);
	assert_int_equal(by_accept("image/avif, image/png;q=0.1", 1, &in_jpeg, NULL),
	                 IMAGE_FORMAT_AVIF);
	assert_int_equal(by_accept("image/avif;q=0.5, image/webp;q=0.6", 1, &in_jpeg, NULL),
	                 IMAGE_FORMAT_WEBP);
	/* parameters, quoted commas, lenient q, malformed q drops its range */
	assert_int_equal(by_accept("image/png; level=1; q=0.5, image/jpeg;q=0.4", 0, &in_jpeg,
	                           NULL), IMAGE_FORMAT_PNG);
	assert_int_equal(by_accept("image/png;x=\"a,image/jpeg\";q=0.3, image/jpeg;q=0.2", 0,
	                           &in_jpeg, NULL), IMAGE_FORMAT_PNG);
	assert_int_equal(by_accept("text/html, image/gif, image/x-exr, *; q=.2, */*; q=.2", 0,
	                           &in_jpeg, NULL), IMAGE_FORMAT_EXR); /* Java's default */
	assert_int_equal(by_accept("image/png;q=2, image/jpeg;q=0.1", 0, &in_exr, NULL),
	                 IMAGE_FORMAT_JPEG);
	assert_int_equal(by_accept("image/png;q=1.5, image/jpeg;q=0.1", 0, &in_exr, NULL),
	                 IMAGE_FORMAT_JPEG);
	assert_int_equal(by_accept("image/png;q=1.000, image/jpeg", 0, &in_exr, NULL),
	                 IMAGE_FORMAT_PNG);
	assert_int_equal(by_accept(",, image/png ,", 0, &in_exr, NULL), IMAGE_FORMAT_PNG);
	/* nothing made is acceptable: 406 */
	static const char *none[] = {
		"image/gif", "image/*;q=0", "*/*;q=0", "text/html, application/xhtml+xml",
		"application/json", "image/jpeg;q=0", "image/png;q=abc", "image/png;q=-1",
		"image/webp;q=0, image/avif;q=0.000, image/*;q=0", ",", "garbage",
	};
	for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
		struct format_accept a;
		if (format_from_accept(none[i], 1, &a) != FORMAT_E_NONE)
			fail_msg("Accept '%s' should allow nothing made", none[i]);
		assert_int_equal(a.given, 1);
	}
	assert_int_equal(by_accept("image/gif, */*;q=0.01", 0, &in_jpeg, NULL), IMAGE_FORMAT_JPEG);
}

static void test_resolve(void **state)
{
	(void)state;
	enum image_format f;
	int bits;
	struct format_accept gif, png;
	assert_int_equal(format_from_accept("image/gif", 0, &gif), FORMAT_E_NONE);
	assert_int_equal(format_from_accept("image/png", 0, &png), 0);
	/* format= is taken whatever Accept says */
	format_resolve(OUT_PNG, &png, &in_png16, &f, &bits); /* format=png: 8 bits */
	assert_true(f == IMAGE_FORMAT_PNG && bits == 8);
	format_resolve(OUT_PNG16, &gif, &in_jpeg, &f, &bits);
	assert_true(f == IMAGE_FORMAT_PNG && bits == 16);
	format_resolve(OUT_JPEG, &png, &in_exr, &f, &bits);
	assert_int_equal(f, IMAGE_FORMAT_JPEG);
	format_resolve(OUT_WEBP, NULL, &in_exr, &f, &bits);
	assert_true(f == IMAGE_FORMAT_WEBP && bits == 0);
	format_resolve(OUT_AVIF, &png, &in_png16, &f, &bits); /* format=avif: 8 bits */
	assert_true(f == IMAGE_FORMAT_AVIF && bits == 8);
	format_resolve(OUT_AVIF10, NULL, &in_jpeg, &f, &bits);
	assert_true(f == IMAGE_FORMAT_AVIF && bits == 10);
	format_resolve(OUT_AVIF12, NULL, &in_jpeg, &f, &bits);
	assert_true(f == IMAGE_FORMAT_AVIF && bits == 12);
	/* no Accept: the input's family */
	format_resolve(OUT_AUTO, NULL, &in_jpeg, &f, &bits);
	assert_int_equal(f, IMAGE_FORMAT_JPEG);
	format_resolve(OUT_AUTO, NULL, &in_png8, &f, &bits);
	assert_true(f == IMAGE_FORMAT_PNG && bits == 8);
	format_resolve(OUT_AUTO, NULL, &in_png16, &f, &bits);
	assert_true(f == IMAGE_FORMAT_PNG && bits == 16);
	format_resolve(OUT_AUTO, NULL, &in_exr, &f, &bits);
	assert_int_equal(f, IMAGE_FORMAT_EXR);
	format_resolve(OUT_AUTO, NULL, &in_pfm, &f, &bits);
	assert_int_equal(f, IMAGE_FORMAT_EXR);
	assert_string_equal(format_content_type(IMAGE_FORMAT_EXR), "image/x-exr");
	/* the bits an output of a given format keeps (the CLI's outputs by extension) */
	assert_int_equal(format_bits(IMAGE_FORMAT_PNG, &in_png16), 16);
	assert_int_equal(format_bits(IMAGE_FORMAT_PNG, &in_png8), 8);
	assert_int_equal(format_bits(IMAGE_FORMAT_PNG, &in_exr), 8);
	assert_int_equal(format_bits(IMAGE_FORMAT_PNG, &in_avif12), 8);
	assert_int_equal(format_bits(IMAGE_FORMAT_AVIF, &in_png16), 10);
	assert_int_equal(format_bits(IMAGE_FORMAT_AVIF, &in_pfm), 10);
	assert_int_equal(format_bits(IMAGE_FORMAT_AVIF, &in_avif12), 12);
	assert_int_equal(format_bits(IMAGE_FORMAT_AVIF, &in_jpeg), 8);
	assert_int_equal(format_bits(IMAGE_FORMAT_EXR, &in_png16), 0);
	assert_int_equal(format_bits(IMAGE_FORMAT_JPEG, &in_png16), 0);
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
		cmocka_unit_test(test_accept_browsers),
		cmocka_unit_test(test_resolve),      cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_rules),        cmocka_unit_test(test_presets),
		cmocka_unit_test(test_center_and_conflicts), cmocka_unit_test(test_json),
		cmocka_unit_test(test_help),         cmocka_unit_test(test_conv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
