/* The error table (api/errors.h): every row a code, an error status and a meaning, no
 * (code, status) twice, lookups by code, and docs/errors.md made from it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/testutil.h"

#include "api/engine_errors.h"
#include "api/errors.h"
#include "codec/npy.h"
#include "codec/tensor.h"
#include "gles/spatial.h"

static void test_rows(void **state)
{
	(void)state;
	assert_int_equal(api_errors[API_E_NONE].status, 0);
	for (int e = API_E_NONE + 1; e < API_E_COUNT; e++) {
		const struct api_error_def *d = &api_errors[e];
		assert_non_null(d->code);
		assert_non_null(d->text);
		assert_true(d->text[0]);
		assert_true(strspn(d->code, "abcdefghijklmnopqrstuvwxyz_") == strlen(d->code));
		assert_true(d->status >= 400 && d->status <= 599);
		for (int f = API_E_NONE + 1; f < e; f++)
			assert_false(!strcmp(api_errors[f].code, d->code) &&
			             api_errors[f].status == d->status);
		assert_int_equal(api_error_find(d->code, d->status), e);
		assert_ptr_equal(api_error(e), d);
	}
	assert_ptr_equal(api_error(-1), &api_errors[API_E_NONE]);
	assert_ptr_equal(api_error(API_E_COUNT), &api_errors[API_E_NONE]);
	assert_int_equal(api_error_find("no_such_code", 0), API_E_NONE);
	assert_int_equal(api_error_find("out_of_memory", 500), API_E_ANSWER_NOMEM);
	assert_int_equal(api_error_find("out_of_memory", 503), API_E_OUT_OF_MEMORY);
}

/* docs/errors.md ends with the table as --print-errors writes it (the tests run from the
 * repository's root). */
static void test_docs_match(void **state)
{
	(void)state;
	int same = tu_doc_ends_with("docs/errors.md", api_errors_markdown, "--print-errors");
	if (same < 0)
		skip(); /* not run from the repository's root */
	assert_true(same);
}

/* The CLI's exit statuses: 2 for the rows that say the command as written cannot work, 1 for
 * the others; a shape the algorithm cannot take is invalid_shape, over HTTP and in the CLI. */
static void test_exit_status(void **state)
{
	(void)state;
	assert_int_equal(api_error_exit_status(API_E_NONE), 0);
	assert_int_equal(api_error_exit_status(API_E_BAD_PARAMETER), 2);
	assert_int_equal(api_error_exit_status(API_E_INVALID_SHAPE), 2);
	assert_int_equal(api_error_exit_status(API_E_INVALID_REQUEST), 2);
	assert_int_equal(api_error_exit_status(API_E_TOO_LARGE_FOR_GPU), 2);
	assert_int_equal(api_error_exit_status(API_E_TENSOR_CORRUPT), 1);
	assert_int_equal(api_error_exit_status(API_E_IMAGE_CORRUPT), 1);
	assert_int_equal(api_error_exit_status(API_E_GPU_ERROR), 1);
	assert_int_equal(api_error_exit_status(API_E_QUEUE_FULL), 1);
	assert_int_equal(api_error_exit_status(API_E_UNAUTHORIZED), 1);
	for (int e = API_E_NONE + 1; e < API_E_COUNT; e++) {
		int x = api_error_exit_status(e);
		assert_true(x == 1 || x == 2);
		if (api_errors[e].status >= 500) /* the server's failures are never usage */
			assert_int_equal(x, 1);
	}
	assert_int_equal(engine_errors_spatial(SPATIAL_E_UNSUPPORTED), API_E_INVALID_SHAPE);
	assert_int_equal(engine_errors_spatial(SPATIAL_E_ARG), API_E_INVALID_REQUEST);
	assert_int_equal(engine_errors_tensor(TENSOR_E_SHAPE), API_E_INVALID_SHAPE);
	assert_int_equal(engine_errors_tensor(TENSOR_E_CORRUPT), API_E_TENSOR_CORRUPT);
	assert_int_equal(engine_errors_npy(NPY_E_CORRUPT), API_E_TENSOR_CORRUPT);
	assert_int_equal(engine_errors_npy(NPY_E_UNSUPPORTED), API_E_INVALID_SHAPE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_docs_match),
		cmocka_unit_test(test_exit_status),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
