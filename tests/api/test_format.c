/* The format table (codec/image.h): each row consistent with sniffing, names, extensions, media
 * types and format= choices; the lists made from it; and docs/formats.md made from it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/testutil.h"

#include "api/format.h"

static void test_rows(void **state)
{
	(void)state;
	/* every format written is a format= choice, with a choice for each integer depth past its
	 * default (png16, avif10, avif12); its first media type is what answers carry; its names
	 * and extensions lead back to it */
	size_t n;
	const struct image_format_desc *fm = image_formats(&n);
	assert_int_equal(n, IMAGE_FORMAT_COUNT - 1);
	for (size_t i = 0; i < n; i++) {
		const struct image_format_desc *d = &fm[i];
		assert_ptr_equal(image_format_desc(d->format), d);
		assert_string_equal(image_format_name(d->format), d->name);
		assert_int_equal(image_format_from_name(d->name), d->format);
		assert_string_equal(format_content_type(d->format), d->media_types[0]);
		for (int k = 0; d->extensions[k]; k++)
			assert_int_equal(image_format_from_name(d->extensions[k]), d->format);
		assert_true(d->read_bits[0] && d->magic[0] && d->title[0]);
		if (!d->write)
			continue;
		assert_true(d->write_bits[0]);
		assert_true(format_parse(d->name) >= 0);
		for (int k = 1; d->float_samples != 1 && k < 4 && d->write_bits[k]; k++) {
			char choice[32];
			snprintf(choice, sizeof choice, "%s%u", d->name, d->write_bits[k]);
			assert_true(format_parse(choice) >= 0);
		}
	}
	assert_null(image_format_desc(IMAGE_FORMAT_UNKNOWN));
	assert_true(image_format_writes_bits(IMAGE_FORMAT_PNG, 16));
	assert_false(image_format_writes_bits(IMAGE_FORMAT_PNG, 32));
	assert_false(image_format_writes_bits(IMAGE_FORMAT_UNKNOWN, 8));
}

/* The formats' titles as the 415 messages list them, WebP and AVIF included; a short buffer
 * cuts the list. */
static void test_titles(void **state)
{
	(void)state;
	char titles[200];
	assert_string_equal(image_format_titles(titles, sizeof titles, 0, "or"),
	                    "JPEG, PNG, OpenEXR, Radiance HDR, PFM, WebP, AVIF, TIFF or HEIC");
	assert_string_equal(image_format_titles(titles, 12, 1, "and"), "JPEG, PNG, ");
	/* an unknown body's decode error names them too */
	char err[IMAGE_ERR_LEN];
	struct image img;
	assert_int_equal(image_decode("hello", 5, NULL, &img, NULL, err), IMAGE_E_UNSUPPORTED);
	assert_non_null(strstr(err, "TIFF and HEIC are supported"));
}

/* docs/formats.md ends with the table as --print-formats writes it (the tests run from the
 * repository's root). */
static void test_docs_match(void **state)
{
	(void)state;
	int same = tu_doc_ends_with("docs/formats.md", format_markdown, "--print-formats");
	if (same < 0)
		skip(); /* not run from the repository's root */
	assert_true(same);
}

/* TIFF and HEIC in the negotiation: format= names, the families (a TIFF of the input's depth,
 * half kept half; HEIC answered as JPEG), Accept: image/tiff, and what a browser gets. */
static void test_tiff_heic(void **state)
{
	(void)state;
	static const struct image_info t8 = {.format = IMAGE_FORMAT_TIFF, .bits = 8, .channels = 3},
	                               t16 = {.format = IMAGE_FORMAT_TIFF, .bits = 16, .channels = 3},
	                               th = {.format = IMAGE_FORMAT_TIFF, .bits = 16, .channels = 3,
	                                     .float_format = 1},
	                               t32 = {.format = IMAGE_FORMAT_TIFF, .bits = 32, .channels = 1,
	                                      .float_format = 1},
	                               heic = {.format = IMAGE_FORMAT_HEIC, .bits = 10, .channels = 3},
	                               png = {.format = IMAGE_FORMAT_PNG, .bits = 8, .channels = 3},
	                               exr = {.format = IMAGE_FORMAT_EXR, .bits = 16, .channels = 4,
	                                      .float_format = 1};
	enum image_format f;
	int bits;
	assert_int_equal(format_parse("TIFF"), OUT_TIFF);
	assert_int_equal(format_parse("tif"), OUT_TIFF);
	assert_int_equal(format_parse("tiff16f"), OUT_TIFF16F);
	assert_int_equal(format_parse("tiff64"), -1);
	assert_int_equal(format_parse("heic"), -1); /* not written */
	static const struct {
		int out;
		const struct image_info *in;
		enum image_format f;
		int bits, half;
	} cases[] = {
		{OUT_TIFF, &exr, IMAGE_FORMAT_TIFF, 8, 0},     {OUT_TIFF16, &t8, IMAGE_FORMAT_TIFF, 16, 0},
		{OUT_TIFF16F, &t8, IMAGE_FORMAT_TIFF, 16, 1},  {OUT_TIFF32, &png, IMAGE_FORMAT_TIFF, 32, 0},
		{OUT_AUTO, &t8, IMAGE_FORMAT_TIFF, 8, 0},      {OUT_AUTO, &t16, IMAGE_FORMAT_TIFF, 16, 0},
		{OUT_AUTO, &th, IMAGE_FORMAT_TIFF, 16, 1},     {OUT_AUTO, &t32, IMAGE_FORMAT_TIFF, 32, 0},
		{OUT_AUTO, &heic, IMAGE_FORMAT_JPEG, 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		format_resolve(cases[i].out, NULL, cases[i].in, &f, &bits);
		assert_int_equal(f, cases[i].f);
		assert_int_equal(bits, cases[i].bits);
		assert_int_equal(format_half(cases[i].out, f, cases[i].in), cases[i].half);
	}
	/* Accept: image/tiff gets TIFF of the input's depth; a browser's header (WebP named, no
	 * image/tiff) gets WebP, as for any input; the full wildcard keeps a TIFF input's family,
	 * and with image/tiff;q=0 leaves it (for PNG, the first of the wildcard's order) */
	struct format_accept a;
	assert_int_equal(format_from_accept("image/tiff", 0, &a), 0);
	format_resolve(OUT_AUTO, &a, &png, &f, &bits);
	assert_true(f == IMAGE_FORMAT_TIFF && bits == 8);
	format_resolve(OUT_AUTO, &a, &exr, &f, &bits);
	assert_true(f == IMAGE_FORMAT_TIFF && bits == 32 && !format_half(OUT_AUTO, f, &exr));
	assert_int_equal(format_from_accept("image/avif,image/webp,image/apng,*/*;q=0.8", 0, &a), 0);
	format_resolve(OUT_AUTO, &a, &t16, &f, &bits);
	assert_int_equal(f, IMAGE_FORMAT_WEBP);
	assert_int_equal(format_from_accept("*/*", 0, &a), 0);
	format_resolve(OUT_AUTO, &a, &t16, &f, &bits);
	assert_true(f == IMAGE_FORMAT_TIFF && bits == 16);
	format_resolve(OUT_AUTO, &a, &heic, &f, &bits);
	assert_int_equal(f, IMAGE_FORMAT_JPEG);
	assert_int_equal(format_from_accept("image/tiff;q=0, */*", 0, &a), 0);
	format_resolve(OUT_AUTO, &a, &t8, &f, &bits);
	assert_int_equal(f, IMAGE_FORMAT_PNG);
	assert_string_equal(format_content_type(IMAGE_FORMAT_TIFF), "image/tiff");
	assert_string_equal(format_content_type(IMAGE_FORMAT_HEIC), "image/heic");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_titles),
		cmocka_unit_test(test_docs_match),
		cmocka_unit_test(test_tiff_heic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
