/* The request table and the answer's format: format=, Accept with q-values (browsers' headers,
 * --auto-avif, 406 when nothing made is acceptable) and the input's family; every way a parameter comes in (query, form field, params JSON, flag) with the rules
 * they share: unknown names, parameters the operation does not take, a parameter given twice,
 * the built-in kernels' keys, kernel centres, conflicting kernels; the table's defaults; every
 * row at its documented bounds and one step past them, generated from the table, and the same
 * bounds and choices in /openapi.json. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/format.h"
#include "api/kernel_preset.h"
#include "api/openapi.h"
#include "api/request.h"

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
}

static const struct image_info in_jpeg = {.format = IMAGE_FORMAT_JPEG, .bits = 8, .channels = 3, .float_format = 0, .orientation = 1, .width = 64, .height = 48},
                                in_png8 = {.format = IMAGE_FORMAT_PNG, .bits = 8, .channels = 4, .float_format = 0, .orientation = 1, .width = 64, .height = 48},
                                in_png16 = {.format = IMAGE_FORMAT_PNG, .bits = 16, .channels = 3, .float_format = 0, .orientation = 1, .width = 64, .height = 48},
                                in_exr = {.format = IMAGE_FORMAT_EXR, .bits = 16, .channels = 4, .float_format = 1, .orientation = 1, .width = 64, .height = 48},
                                in_pfm = {.format = IMAGE_FORMAT_PFM, .bits = 32, .channels = 3, .float_format = 1, .orientation = 1, .width = 64, .height = 48},
                                in_webp = {.format = IMAGE_FORMAT_WEBP, .bits = 8, .channels = 4, .float_format = 0, .orientation = 1, .width = 64, .height = 48},
                                in_avif8 = {.format = IMAGE_FORMAT_AVIF, .bits = 8, .channels = 3, .float_format = 0, .orientation = 1, .width = 64, .height = 48},
                                in_avif10 = {.format = IMAGE_FORMAT_AVIF, .bits = 10, .channels = 3, .float_format = 0, .orientation = 1, .width = 64, .height = 48},
                                in_avif12 = {.format = IMAGE_FORMAT_AVIF, .bits = 12, .channels = 4, .float_format = 0, .orientation = 1, .width = 64, .height = 48},
                                in_wide_jpeg = {.format = IMAGE_FORMAT_JPEG, .bits = 8, .channels = 3, .float_format = 0, .orientation = 1, .width = 20000, .height = 300},
                                in_tall_png = {.format = IMAGE_FORMAT_PNG, .bits = 8, .channels = 3, .float_format = 0, .orientation = 1, .width = 100, .height = 70000};

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

/* Bloom's look by the input's kind: 8-bit inputs (1 is white) get threshold 0.8, knee 0.2,
 * intensity 20; float and 16-bit inputs keep threshold 1's scene-referred meaning; a value
 * given keeps its value; convolve has none of these rows; /openapi.json shows both. */
static void test_input_defaults(void **state)
{
	(void)state;
	assert_int_equal(request_input_kind(&in_jpeg), REQUEST_INPUT_8BIT);
	assert_int_equal(request_input_kind(&in_png8), REQUEST_INPUT_8BIT);
	assert_int_equal(request_input_kind(&in_webp), REQUEST_INPUT_8BIT);
	assert_int_equal(request_input_kind(&in_avif8), REQUEST_INPUT_8BIT);
	assert_int_equal(request_input_kind(&in_png16), REQUEST_INPUT_HDR);
	assert_int_equal(request_input_kind(&in_avif10), REQUEST_INPUT_HDR);
	assert_int_equal(request_input_kind(&in_exr), REQUEST_INPUT_HDR);
	assert_int_equal(request_input_kind(&in_pfm), REQUEST_INPUT_HDR);
	struct request r;
	request_init(&r, REQUEST_BLOOM);
	request_resolve_input(&r, REQUEST_INPUT_8BIT);
	assert_true(r.p.threshold == 0.8 && r.p.knee == 0.2 && r.p.intensity == 20);
	request_resolve_input(&r, REQUEST_INPUT_HDR); /* a batch's next frame */
	assert_true(r.p.threshold == 1 && r.p.knee == 0.5 && r.p.intensity == 1);
	char err[REQUEST_ERR_LEN];
	request_init(&r, REQUEST_BLOOM);
	assert_int_equal(request_set(&r, "intensity", "3", REQUEST_SRC_QUERY, err), 0);
	request_resolve_input(&r, REQUEST_INPUT_8BIT);
	assert_true(r.p.threshold == 0.8 && r.p.intensity == 3);
	request_init(&r, REQUEST_CONVOLVE);
	struct request c = r;
	request_resolve_input(&r, REQUEST_INPUT_8BIT);
	assert_memory_equal(&r, &c, sizeof r);
	json_t *doc = openapi_document("test", 0, 0);
	json_t *ps = json_object_get(json_object_get(json_object_get(json_object_get(
		doc, "paths"), "/v1/bloom"), "post"), "parameters");
	size_t i;
	json_t *p;
	int seen = 0;
	json_array_foreach(ps, i, p) {
		if (strcmp(json_string_value(json_object_get(p, "name")), "threshold"))
			continue;
		json_t *sc = json_object_get(p, "schema");
		assert_null(json_object_get(sc, "default"));
		assert_true(json_number_value(json_object_get(sc, "x-default-8bit")) == 0.8);
		assert_true(json_number_value(json_object_get(sc, "x-default-hdr")) == 1);
		assert_non_null(strstr(json_string_value(json_object_get(p, "description")),
		                       "0.8 for an 8-bit input, 1 for a float or 16-bit one"));
		seen = 1;
	}
	assert_true(seen);
	json_decref(doc);
	json_t *d = request_input_defaults_json();
	assert_true(json_number_value(json_object_get(json_object_get(d, "8bit"), "intensity")) == 20);
	assert_true(json_number_value(json_object_get(json_object_get(d, "hdr"), "threshold")) == 1);
	json_decref(d);
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
	expect(&r, "threshold", "0.5", REQUEST_SRC_QUERY, REQUEST_E_TWICE,
	       "threshold given twice in the query string");
	expect(&r, "threshold", "0.5", REQUEST_SRC_FORM, REQUEST_E_TWICE,
	       "in the query string and in the form fields");
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
	expect(&r, "exr_compression", "dwaa", REQUEST_SRC_QUERY, REQUEST_E_VALUE,
	       "zip|none|rle|zips|piz");
	expect(&r, "exr_compression", "piz", REQUEST_SRC_QUERY, 0, NULL);
	assert_int_equal(r.exr_compression, IMAGE_EXR_PIZ);
	assert_int_equal(r.quality, 77);

	request_init(&r, REQUEST_CONVOLVE);
	expect(&r, "threshold", "0.5", REQUEST_SRC_QUERY, REQUEST_E_OP, "convolve does not take it");
	expect(&r, "intensity", "2", REQUEST_SRC_FORM, REQUEST_E_OP, "only bloom does");
	expect(&r, "nosuch", "1", REQUEST_SRC_QUERY, REQUEST_E_UNKNOWN, "kernel_scale");
	char err[REQUEST_ERR_LEN];
	request_set(&r, "nosuch", "1", REQUEST_SRC_QUERY, err);
	assert_null(strstr(err, "threshold")); /* convolve's list names convolve's parameters */
}

/* Numbers are decimal in every source: hex, inf, nan and padded text are refused with a message
 * naming the parameter, for a double, an int, a preset's key and kernel_center alike. */
static void test_decimal_numbers(void **state)
{
	(void)state;
	static const int srcs[] = {REQUEST_SRC_QUERY, REQUEST_SRC_FORM, REQUEST_SRC_JSON,
	                           REQUEST_SRC_FLAG};
	static const char *const bad[] = {"0x10", "0X1p4", "inf", "-inf", "nan", "infinity", " 16",
	                                  "16 ", "1e", "e3", ".", "1..2", ""};
	for (size_t s = 0; s < sizeof srcs / sizeof srcs[0]; s++)
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			struct request r;
			request_init(&r, REQUEST_BLOOM);
			expect(&r, "intensity", bad[i], srcs[s], REQUEST_E_VALUE, "intensity: '");
			expect(&r, "quality", bad[i], srcs[s], REQUEST_E_VALUE, "quality: '");
			assert_true(r.p.intensity == 1.0);
		}
	static const char *const good[] = {"16", "+16", "16.", ".5", "1.5e1", "2E-1", "0"};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		struct request r;
		request_init(&r, REQUEST_BLOOM);
		expect(&r, "intensity", good[i], REQUEST_SRC_QUERY, 0, NULL);
		assert_true(r.p.intensity == strtod(good[i], NULL));
	}
	struct request r;
	request_init(&r, REQUEST_BLOOM);
	expect(&r, "intensity", "0x10", REQUEST_SRC_QUERY, REQUEST_E_VALUE,
	       "intensity: '0x10' is not a decimal number");
	expect(&r, "quality", "0x50", REQUEST_SRC_QUERY, REQUEST_E_VALUE, "quality: '0x50'");
	expect(&r, "kernel_preset", "gaussian:sigma=0x2", REQUEST_SRC_QUERY, REQUEST_E_VALUE,
	       "sigma=0x2 is not a number");
	expect(&r, "kernel_preset", "gaussian:sigma=inf", REQUEST_SRC_QUERY, REQUEST_E_VALUE,
	       "sigma=inf is not a number");
	expect(&r, "kernel_center", "0x1,2", REQUEST_SRC_QUERY, REQUEST_E_VALUE, "kernel_center");
	expect(&r, "kernel_center", "1, 2", REQUEST_SRC_QUERY, REQUEST_E_VALUE, "kernel_center");
	expect(&r, "kernel_center", "1.5,2e1", REQUEST_SRC_QUERY, 0, NULL);
	assert_true(r.p.center.x == 1.5 && r.p.center.y == 20);
}

/* mix is composite=mix's: alone it is refused, not ignored. */
static void test_mix_needs_composite(void **state)
{
	(void)state;
	struct request r;
	char err[REQUEST_ERR_LEN];
	request_init(&r, REQUEST_BLOOM);
	expect(&r, "mix", "0.3", REQUEST_SRC_QUERY, 0, NULL);
	assert_int_equal(request_finish(&r, 0, err), REQUEST_E_CONFLICT);
	printf("%s\n", err);
	assert_non_null(strstr(err, "mix is for composite=mix"));
	expect(&r, "composite", "add", REQUEST_SRC_QUERY, 0, NULL);
	assert_int_equal(request_finish(&r, 0, err), REQUEST_E_CONFLICT);
	request_init(&r, REQUEST_BLOOM);
	expect(&r, "mix", "0.3", REQUEST_SRC_FLAG, 0, NULL);
	expect(&r, "composite", "mix", REQUEST_SRC_FLAG, 0, NULL);
	assert_int_equal(request_finish(&r, 0, err), 0);
	assert_true(r.p.mix == 0.3);
	request_init(&r, REQUEST_BLOOM);
	expect(&r, "composite", "mix", REQUEST_SRC_QUERY, 0, NULL);
	assert_int_equal(request_finish(&r, 0, err), 0); /* composite=mix alone: mix's default */
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

/* ---- Boundaries generated from the table ----
 * Every row of request_table is checked at its documented bounds: min and max accepted (and
 * stored), one step past each refused with REQUEST_E_VALUE (HTTP 400) and a message naming the
 * bounds; every choice of a choice row accepted, a non-choice refused. The loop walks the table,
 * so a new row is covered at once; the bounds it expects are written below, apart from the
 * table, so that a row missing here fails and so does a bound widened or narrowed there (mix
 * taken to [0, 2] accepts 1.0000000000000002, which this refuses). */
enum bound_kind {
	B_NUM = 1, /* OPT_DOUBLE: [lo, hi] */
	B_INT,     /* OPT_INT: [lo, hi] */
	B_ENUM,    /* OPT_NAMES: the engine's names */
	B_STR,     /* OPT_STRING: longest accepted length hi */
	B_PAIR,    /* "N" or "H,W", integers in [lo, hi], into conv_params fields h and w */
	B_SHAPE,   /* "H,W" only, integers in [lo, hi] */
	B_CENTER,  /* "X,Y" pixels in [0, lo], or "uv:U,V" in [0, 1] */
	B_FORMAT,  /* choices (format_parse) */
	B_PRESET,  /* the built-in kernels' keys: preset_bounds below */
	B_BOOL,    /* OPT_BOOL: 0/1/true/false/yes/no/on/off, nothing else */
};

struct bound {
	const char *name;
	unsigned ops;
	enum bound_kind kind;
	double lo, hi;
	const char *choices;
	size_t h, w; /* B_PAIR, B_SHAPE: offsetof(struct conv_params, ...) */
};

#define BC_OPS (REQUEST_BLOOM | REQUEST_CONVOLVE)
#define CT_OPS (REQUEST_CONV2D | REQUEST_CONV2D_T)
#define CP(f) offsetof(struct conv_params, f)
static const struct bound bounds[] = {
	{"kernel", BC_OPS, B_STR, 0, 64, NULL, 0, 0},
	{"kernel-preset", BC_OPS, B_PRESET, 0, 0, NULL, 0, 0},
	{"threshold", REQUEST_BLOOM, B_NUM, 0, 65504, NULL, 0, 0},
	{"knee", REQUEST_BLOOM, B_NUM, 0, 65504, NULL, 0, 0},
	{"clamp-max", REQUEST_BLOOM, B_NUM, 1e-6, 3.4e38, NULL, 0, 0},
	{"intensity", REQUEST_BLOOM, B_NUM, 0, 1000, NULL, 0, 0},
	{"composite", REQUEST_BLOOM, B_ENUM, 0, 0, "add|mix", 0, 0},
	{"mix", REQUEST_BLOOM, B_NUM, 0, 1, NULL, 0, 0},
	{"kernel-scale", BC_OPS, B_NUM, 0, 8, NULL, 0, 0},
	{"kernel-center", BC_OPS, B_CENTER, 1e6, 0, NULL, 0, 0},
	{"normalize", BC_OPS, B_ENUM, 0, 0, "luminance|none", 0, 0},
	{"precision", BC_OPS, B_ENUM, 0, 0, "fp32|fp16", 0, 0},
	{"technique", BC_OPS, B_ENUM, 0, 0, "auto|shared|global|blocked", 0, 0},
	{"method", REQUEST_CONVOLVE, B_ENUM, 0, 0, "auto|fft|spatial", 0, 0},
	{"format", BC_OPS, B_FORMAT, 0, 0,
	 "jpeg|png|png16|exr|hdr|pfm|webp|avif|avif10|avif12|tiff|tiff16|tiff16f|tiff32", 0, 0},
	{"quality", BC_OPS, B_INT, 1, 100, NULL, 0, 0},
	{"exr-compression", BC_OPS, B_ENUM, 0, 0, "zip|none|rle|zips|piz", 0, 0},
	{"tiff-compression", BC_OPS, B_ENUM, 0, 0, "deflate|none|lzw", 0, 0},
	{"keep-profile", BC_OPS, B_BOOL, 0, 1, NULL, 0, 0},
	{"padding", CT_OPS, B_PAIR, 0, 65535, NULL, CP(pad_h), CP(pad_w)},
	{"stride", CT_OPS, B_PAIR, 1, 65535, NULL, CP(stride_h), CP(stride_w)},
	{"dilation", CT_OPS, B_PAIR, 1, 65535, NULL, CP(dil_h), CP(dil_w)},
	{"groups", CT_OPS, B_INT, 1, 65536, NULL, 0, 0},
	{"precision", REQUEST_CONV2D, B_INT, 0, 3, NULL, 0, 0},
	{"algorithm", REQUEST_CONV2D, B_ENUM, 0, 0, "auto|batch4|interp|planes4|shared|gemm|winograd", 0, 0},
	{"output-padding", REQUEST_CONV2D_T, B_PAIR, 0, 65535, NULL, CP(out_pad_h), CP(out_pad_w)},
	{"method", REQUEST_CONV2D_T, B_ENUM, 0, 0, "auto|zero-insert|overlap-add|subkernel", 0, 0},
	{"padding-mode", REQUEST_CONV2D_T, B_ENUM, 0, 0, "torch|tf_same|tf_valid", 0, 0},
	{"output-shape", REQUEST_CONV2D_T, B_SHAPE, 1, 1 << 20, NULL, CP(out_h), CP(out_w)},
	{"conv-algorithm", REQUEST_CONV2D_T, B_ENUM, 0, 0, "auto|batch4|interp|planes4|shared|gemm|winograd", 0, 0},
	{"width", BC_OPS, B_INT, 1, 16384, NULL, 0, 0},
	{"height", BC_OPS, B_INT, 1, 16384, NULL, 0, 0},
	{"fit", BC_OPS, B_ENUM, 0, 0, "cover|contain|fill|inside|outside", 0, 0},
	{"dpr", BC_OPS, B_NUM, 1, 4, NULL, 0, 0},
	{"resize", BC_OPS, B_ENUM, 0, 0, "before|after", 0, 0},
};

/* The built-in kernels' keys and their documented bounds (integer keys step by 1). */
static const struct preset_bound {
	const char *kind, *key;
	int integer;
	double lo, hi;
} preset_bounds[] = {
	{"gaussian", "size", 1, 1, 4095},    {"gaussian", "sigma", 0, 0.1, 1000},
	{"glare", "size", 1, 1, 4095},       {"glare", "core", 0, 0.1, 1000},
	{"glare", "halo", 0, 0.1, 2000},     {"glare", "halo_gain", 0, 0, 100},
	{"glare", "streaks", 1, 0, 32},      {"glare", "length", 0, 0, 1},
	{"glare", "rotation", 0, -360, 360}, {"aperture", "size", 1, 1, 4095},
	{"aperture", "rotation", 0, -360, 360}, {"aperture", "blades", 1, 0, 32},
	{"aperture", "radius", 0, 0.01, 0.45},
};

/* Sets name=value on a fresh request of op; returns request_set's code, the message in err. */
static int set_one(struct request *r, unsigned op, const char *name, const char *value,
                   char err[REQUEST_ERR_LEN])
{
	request_init(r, op);
	err[0] = 0;
	return request_set(r, name, value, REQUEST_SRC_QUERY, err);
}

static void must_take(unsigned op, const char *name, const char *value, struct request *r)
{
	char err[REQUEST_ERR_LEN];
	int rc = set_one(r, op, name, value, err);
	if (rc)
		fail_msg("%s=%s: refused (%d): %s", name, value, rc, err);
}

/* Refused with REQUEST_E_VALUE; the message names the parameter and holds need (if not NULL). */
static void must_refuse(unsigned op, const char *name, const char *value, const char *need)
{
	struct request r;
	char err[REQUEST_ERR_LEN], api[64];
	int rc = set_one(&r, op, name, value, err);
	if (rc != REQUEST_E_VALUE)
		fail_msg("%s=%s: %d, not refused as a bad value (%s)", name, value, rc, err);
	snprintf(api, sizeof api, "%s", name);
	for (char *c = api; *c; c++)
		if (*c == '-')
			*c = '_';
	if (!strstr(err, api) || (need && !strstr(err, need)))
		fail_msg("%s=%s: message '%s' lacks '%s' or '%s'", name, value, err, api,
		         need ? need : "");
}

/* A bound as the messages print it: an integer without decimals, else %g. */
static void bound_text(double v, char *buf, size_t len)
{
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%g", v);
}

/* The next double past v towards dir; from 0 the smallest normal one (strtod refuses a
 * subnormal number as out of range, which would not test the bound). */
static double past(double v, double dir)
{
	return v == 0 ? copysign(DBL_MIN, dir) : nextafter(v, dir);
}

/* A boolean row takes the words for 0 and 1 and refuses any other value. */
static void check_bool(const struct request_param *d, unsigned op)
{
	static const char *words[2][4] = {{"0", "false", "no", "off"}, {"1", "true", "yes", "on"}};
	struct request r;
	for (int v = 0; v < 2; v++)
		for (int k = 0; k < 4; k++) {
			must_take(op, d->o.name, words[v][k], &r);
			if (OPT_INT_AT(&r, &d->o) != v)
				fail_msg("%s=%s stored %d", d->o.name, words[v][k], OPT_INT_AT(&r, &d->o));
		}
	must_refuse(op, d->o.name, "2", "boolean");
	must_refuse(op, d->o.name, "maybe", "boolean");
	printf("%-16s boolean: 0/1/true/false/yes/no/on/off taken, 2 and maybe refused\n",
	       d->o.name);
}

static void check_numeric(const struct request_param *d, const struct bound *b, unsigned op)
{
	struct request r;
	char lo[64], hi[64], below[64], above[64], range[160], blo[32], bhi[32];
	int integer = b->kind == B_INT;
	if (integer) {
		snprintf(lo, sizeof lo, "%.0f", b->lo);
		snprintf(hi, sizeof hi, "%.0f", b->hi);
		snprintf(below, sizeof below, "%.0f", b->lo - 1);
		snprintf(above, sizeof above, "%.0f", b->hi + 1);
	} else {
		snprintf(lo, sizeof lo, "%.17g", b->lo);
		snprintf(hi, sizeof hi, "%.17g", b->hi);
		snprintf(below, sizeof below, "%.17g", past(b->lo, -INFINITY));
		snprintf(above, sizeof above, "%.17g", past(b->hi, INFINITY));
	}
	bound_text(b->lo, blo, sizeof blo);
	bound_text(b->hi, bhi, sizeof bhi);
	snprintf(range, sizeof range, "out of bounds [%s, %s]", blo, bhi);
	const char *ends[2] = {lo, hi};
	const double want[2] = {b->lo, b->hi};
	for (int k = 0; k < 2; k++) {
		must_take(op, d->o.name, ends[k], &r);
		double got = integer ? OPT_INT_AT(&r, &d->o) : OPT_DOUBLE_AT(&r, &d->o);
		if (got != want[k])
			fail_msg("%s=%s stored %.17g", d->o.name, ends[k], got);
	}
	must_refuse(op, d->o.name, below, range);
	must_refuse(op, d->o.name, above, range);
	printf("%-16s %-9s [%s, %s]: %s and %s refused\n", d->o.name, integer ? "integer" : "number",
	       lo, hi, below, above);
}

/* Each choice of "a|b|c" accepted and stored as its index, and one that is not refused. */
static void check_choices(const struct request_param *d, const struct bound *b, unsigned op)
{
	struct request r;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", b->choices);
	int i = 0;
	for (char *save = NULL, *c = strtok_r(buf, "|", &save); c; c = strtok_r(NULL, "|", &save), i++) {
		must_take(op, d->o.name, c, &r);
		if (b->kind == B_ENUM && OPT_INT_AT(&r, &d->o) != i)
			fail_msg("%s=%s stored %d, not %d", d->o.name, c, OPT_INT_AT(&r, &d->o), i);
		if (b->kind == B_FORMAT && r.format != format_parse(c))
			fail_msg("format=%s stored %d", c, r.format);
	}
	if (b->kind == B_ENUM) { /* the table offers exactly these */
		char choices[256];
		opts_choices(&d->o, choices, sizeof choices);
		if (strcmp(choices, b->choices))
			fail_msg("%s: choices '%s' in the table, '%s' documented", d->o.name, choices,
			         b->choices);
	} else {
		if (strcmp(FORMAT_CHOICES, b->choices))
			fail_msg("format: choices '%s', '%s' documented", FORMAT_CHOICES, b->choices);
	}
	must_refuse(op, d->o.name, "no-such-choice", b->choices);
	printf("%-16s choices %s; no-such-choice refused\n", d->o.name, b->choices);
}

static void check_string(const struct request_param *d, const struct bound *b, unsigned op)
{
	struct request r;
	char s[OPT_STR_MAX + 2];
	size_t n = (size_t)b->hi;
	memset(s, 'k', n);
	s[n] = 0;
	must_take(op, d->o.name, s, &r);
	assert_string_equal(OPT_STR_AT(&r, &d->o), s);
	s[n] = 'k';
	s[n + 1] = 0;
	must_refuse(op, d->o.name, s, NULL);
	printf("%-16s %zu characters taken, %zu refused\n", d->o.name, n, n + 1);
}

static int conv_field(const struct request *r, size_t off)
{
	return *(const int *)((const char *)&r->c + off);
}

/* "N" and "H,W" at the bounds (each side alone past them refused); B_SHAPE takes "H,W" only. */
static void check_pair(const struct request_param *d, const struct bound *b, unsigned op)
{
	struct request r;
	long lo = (long)b->lo, hi = (long)b->hi;
	char v[64], range[96];
	snprintf(range, sizeof range, "out of bounds [%ld, %ld]", lo, hi);
	const long ok[][2] = {{lo, lo}, {hi, hi}, {lo, hi}, {hi, lo}};
	for (size_t i = 0; i < 4; i++) {
		snprintf(v, sizeof v, "%ld,%ld", ok[i][0], ok[i][1]);
		must_take(op, d->o.name, v, &r);
		if (conv_field(&r, b->h) != ok[i][0] || conv_field(&r, b->w) != ok[i][1])
			fail_msg("%s=%s stored %d,%d", d->o.name, v, conv_field(&r, b->h),
			         conv_field(&r, b->w));
	}
	const long bad[][2] = {{lo - 1, lo}, {lo, lo - 1}, {hi + 1, hi}, {hi, hi + 1}};
	for (size_t i = 0; i < 4; i++) {
		snprintf(v, sizeof v, "%ld,%ld", bad[i][0], bad[i][1]);
		/* below 0 is not a number this parser reads: refused without the bounds */
		must_refuse(op, d->o.name, v, bad[i][0] < 0 || bad[i][1] < 0 ? NULL : range);
	}
	if (b->kind == B_PAIR) {
		const long one[] = {lo, hi};
		for (size_t i = 0; i < 2; i++) {
			snprintf(v, sizeof v, "%ld", one[i]);
			must_take(op, d->o.name, v, &r);
			if (conv_field(&r, b->h) != one[i] || conv_field(&r, b->w) != one[i])
				fail_msg("%s=%s stored %d,%d", d->o.name, v, conv_field(&r, b->h),
				         conv_field(&r, b->w));
		}
		snprintf(v, sizeof v, "%ld", hi + 1);
		must_refuse(op, d->o.name, v, range);
		if (lo > 0) {
			snprintf(v, sizeof v, "%ld", lo - 1);
			must_refuse(op, d->o.name, v, range);
		}
	} else {
		snprintf(v, sizeof v, "%ld", lo);
		must_refuse(op, d->o.name, v, "H,W");
	}
	printf("%-16s pairs in [%ld, %ld]; each side past them refused\n", d->o.name, lo, hi);
}

/* Pixels in [0, b->lo] and uv in [0, 1], each coordinate past its bounds alone. */
static void check_center(const struct request_param *d, const struct bound *b, unsigned op)
{
	struct request r;
	char v[128];
	const double ends[2][2] = {{0, b->lo}, {0, 1}};
	for (int uv = 0; uv < 2; uv++) {
		const char *pre = uv ? "uv:" : "";
		double lo = ends[uv][0], hi = ends[uv][1];
		const double ok[][2] = {{lo, lo}, {hi, hi}, {lo, hi}, {hi, lo}};
		for (size_t i = 0; i < 4; i++) {
			snprintf(v, sizeof v, "%s%.17g,%.17g", pre, ok[i][0], ok[i][1]);
			must_take(op, d->o.name, v, &r);
			if (r.p.center.mode != (uv ? KERNEL_CENTER_UV : KERNEL_CENTER_PIXEL) ||
			    r.p.center.x != ok[i][0] || r.p.center.y != ok[i][1])
				fail_msg("%s=%s stored %d %g,%g", d->o.name, v, r.p.center.mode, r.p.center.x,
				         r.p.center.y);
		}
		double below = past(lo, -INFINITY), above = past(hi, INFINITY);
		const double bad[][2] = {{below, lo}, {lo, below}, {above, hi}, {hi, above}};
		for (size_t i = 0; i < 4; i++) {
			snprintf(v, sizeof v, "%s%.17g,%.17g", pre, bad[i][0], bad[i][1]);
			must_refuse(op, d->o.name, v, uv ? "[0, 1]" : "[0, 1e6]");
		}
	}
	printf("%-16s pixels in [0, %g], uv in [0, 1]; each coordinate past them refused\n",
	       d->o.name, b->lo);
}

/* Each key the kernels list (kernel_preset_keys) at its documented bounds, and one step past. */
static void check_preset(const struct request_param *d, const struct bound *b, unsigned op)
{
	(void)b;
	static const char *kinds[] = {"gaussian", "glare", "aperture"};
	size_t seen = 0;
	for (int kind = KERNEL_GAUSSIAN; kind <= KERNEL_APERTURE; kind++) {
		char keys[512];
		kernel_preset_keys(kind, keys, sizeof keys);
		for (char *p = keys; *p;) { /* "size=1..4095, sigma=0.1..1000 (default 8), ..." */
			char key[32];
			size_t n = strcspn(p, "=");
			assert_true(n < sizeof key && p[n] == '=');
			memcpy(key, p, n);
			key[n] = 0;
			const struct preset_bound *pb = NULL;
			for (size_t i = 0; i < sizeof preset_bounds / sizeof preset_bounds[0]; i++)
				if (!strcmp(preset_bounds[i].kind, kinds[kind - 1]) &&
				    !strcmp(preset_bounds[i].key, key))
					pb = &preset_bounds[i];
			if (!pb)
				fail_msg("kernel_preset %s: key '%s' has no documented bounds here",
				         kinds[kind - 1], key);
			seen++;
			char v[128];
			struct request r;
			const double ok[2] = {pb->lo, pb->hi};
			for (int k = 0; k < 2; k++) {
				snprintf(v, sizeof v, "%s:%s=%.17g", kinds[kind - 1], key, ok[k]);
				must_take(op, d->o.name, v, &r);
			}
			double below = pb->integer ? pb->lo - 1 : past(pb->lo, -INFINITY);
			double above = pb->integer ? pb->hi + 1 : past(pb->hi, INFINITY);
			snprintf(v, sizeof v, "%s:%s=%.17g", kinds[kind - 1], key, below);
			must_refuse(op, d->o.name, v, "out of bounds");
			snprintf(v, sizeof v, "%s:%s=%.17g", kinds[kind - 1], key, above);
			must_refuse(op, d->o.name, v, "out of bounds");
			p = strstr(p, ", ");
			p = p ? p + 2 : keys + strlen(keys);
		}
	}
	/* every documented key is one the kernels have */
	assert_int_equal(seen, sizeof preset_bounds / sizeof preset_bounds[0]);
	printf("%-16s %zu keys at their bounds; one step past each refused\n", d->o.name, seen);
}

static void test_table_bounds(void **state)
{
	(void)state;
	size_t nb = sizeof bounds / sizeof bounds[0];
	int used[sizeof bounds / sizeof bounds[0]] = {0};
	for (size_t i = 0; i < request_table_len; i++) {
		const struct request_param *d = &request_table[i];
		const struct bound *b = NULL;
		for (size_t k = 0; k < nb && !b; k++)
			if (!strcmp(bounds[k].name, d->o.name) && bounds[k].ops == d->ops) {
				b = &bounds[k];
				used[k] = 1;
			}
		if (!b)
			fail_msg("row %s (ops %u) has no documented bounds in this test: add them", d->o.name,
			         d->ops);
		/* the kind the table declares is the kind documented */
		int want_type = b->kind == B_NUM ? OPT_DOUBLE : b->kind == B_INT ? OPT_INT
		                : b->kind == B_ENUM ? OPT_NAMES : b->kind == B_BOOL ? OPT_BOOL
		                : OPT_STRING;
		assert_int_equal(d->o.type, want_type);
		assert_int_equal(d->parse != NULL, b->kind >= B_PAIR && b->kind != B_BOOL);
		/* every operation that takes the row */
		for (unsigned op = REQUEST_BLOOM; op <= REQUEST_CONV2D_T; op <<= 1) {
			if (!(d->ops & op))
				continue;
			switch (b->kind) {
			case B_NUM:
			case B_INT: check_numeric(d, b, op); break;
			case B_ENUM:
			case B_FORMAT: check_choices(d, b, op); break;
			case B_STR: check_string(d, b, op); break;
			case B_PAIR:
			case B_SHAPE: check_pair(d, b, op); break;
			case B_CENTER: check_center(d, b, op); break;
			case B_PRESET: check_preset(d, b, op); break;
			case B_BOOL: check_bool(d, op); break;
			}
		}
	}
	for (size_t k = 0; k < nb; k++)
		if (!used[k])
			fail_msg("documented row %s (ops %u) is not in the table", bounds[k].name,
			         bounds[k].ops);
}

/* The OpenAPI document shows each operation's parameters with the documented bounds and
 * choices (what a client reads is what the parser takes), and no parameter the list lacks. */
static void test_openapi_bounds(void **state)
{
	(void)state;
	static const struct {
		const char *path, *method;
		unsigned op;
	} ops[] = {
		{"/v1/bloom", "post", REQUEST_BLOOM},      {"/v1/convolve", "post", REQUEST_CONVOLVE},
		{"/v1/conv2d", "post", REQUEST_CONV2D},    {"/v1/conv2d_transpose", "post", REQUEST_CONV2D_T},
		{"/v1/bloom/{name}", "get", REQUEST_BLOOM}, {"/v1/convolve/{name}", "get", REQUEST_CONVOLVE},
	};
	json_t *doc = openapi_document("test", 0, 0);
	assert_non_null(doc);
	size_t nb = sizeof bounds / sizeof bounds[0], checked = 0;
	for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
		json_t *params = json_object_get(
			json_object_get(json_object_get(json_object_get(doc, "paths"), ops[o].path),
			                ops[o].method), "parameters");
		if (!json_is_array(params))
			fail_msg("%s %s: no parameters", ops[o].method, ops[o].path);
		/* every documented parameter of the operation is there, with its bounds */
		for (size_t k = 0; k < nb; k++) {
			const struct bound *b = &bounds[k];
			if (!(b->ops & ops[o].op))
				continue;
			char api[64];
			snprintf(api, sizeof api, "%s", b->name);
			for (char *c = api; *c; c++)
				if (*c == '-')
					*c = '_';
			json_t *schema = NULL;
			size_t i;
			json_t *p;
			json_array_foreach(params, i, p)
				if (!strcmp(json_string_value(json_object_get(p, "name")), api) &&
				    !strcmp(json_string_value(json_object_get(p, "in")), "query"))
					schema = json_object_get(p, "schema");
			if (!schema)
				fail_msg("%s: no query parameter %s", ops[o].path, api);
			if (b->kind == B_NUM || b->kind == B_INT) {
				double lo = json_number_value(json_object_get(schema, "minimum"));
				double hi = json_number_value(json_object_get(schema, "maximum"));
				if (!json_object_get(schema, "minimum") || lo != b->lo || hi != b->hi)
					fail_msg("%s %s: [%.17g, %.17g] in the document, [%.17g, %.17g] documented",
					         ops[o].path, api, lo, hi, b->lo, b->hi);
			} else if (b->kind == B_ENUM || b->kind == B_FORMAT) {
				char buf[256] = "";
				size_t used = 0, e;
				json_t *v;
				json_array_foreach(json_object_get(schema, "enum"), e, v)
					used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s",
					                         used ? "|" : "", json_string_value(v));
				if (strcmp(buf, b->choices))
					fail_msg("%s %s: enum %s in the document, %s documented", ops[o].path, api,
					         buf, b->choices);
			} else if (b->kind == B_STR) {
				assert_int_equal(json_integer_value(json_object_get(schema, "maxLength")),
				                 (json_int_t)b->hi);
			} else if (b->kind == B_BOOL) {
				assert_string_equal(json_string_value(json_object_get(schema, "type")),
				                    "boolean");
			}
			checked++;
		}
		/* and nothing else but the signature */
		size_t i;
		json_t *p;
		json_array_foreach(params, i, p) {
			const char *name = json_string_value(json_object_get(p, "name"));
			if (strcmp(json_string_value(json_object_get(p, "in")), "query") ||
			    !strcmp(name, "sig") || !strcmp(name, "exp"))
				continue;
			const struct request_param *d = request_find(name, ops[o].op);
			int found = 0;
			for (size_t k = 0; k < nb && d; k++)
				found |= !strcmp(bounds[k].name, d->o.name) && (bounds[k].ops & ops[o].op);
			if (!found)
				fail_msg("%s: query parameter %s is not documented here", ops[o].path, name);
		}
	}
	printf("%zu parameters of %zu operations as documented in /openapi.json\n", checked,
	       sizeof ops / sizeof ops[0]);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_parse), cmocka_unit_test(test_accept),
		cmocka_unit_test(test_accept_browsers),
		cmocka_unit_test(test_resolve),      cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_input_defaults),
		cmocka_unit_test(test_rules),        cmocka_unit_test(test_presets),
		cmocka_unit_test(test_decimal_numbers), cmocka_unit_test(test_mix_needs_composite),
		cmocka_unit_test(test_center_and_conflicts), cmocka_unit_test(test_json),
		cmocka_unit_test(test_help),         cmocka_unit_test(test_conv),
		cmocka_unit_test(test_table_bounds), cmocka_unit_test(test_openapi_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
