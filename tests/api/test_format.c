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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_titles),
		cmocka_unit_test(test_docs_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
