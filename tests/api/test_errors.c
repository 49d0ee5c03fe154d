/* The error table (api/errors.h): every row a code, an error status and a meaning, no
 * (code, status) twice, lookups by code, and docs/errors.md made from it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/errors.h"

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
	char *made = NULL;
	size_t made_len = 0;
	FILE *m = open_memstream(&made, &made_len);
	assert_non_null(m);
	api_errors_markdown(m);
	fclose(m);
	FILE *f = fopen("docs/errors.md", "rb");
	if (!f) {
		free(made);
		skip(); /* not run from the repository's root */
	}
	static char doc[1 << 16];
	size_t n = fread(doc, 1, sizeof doc - 1, f);
	fclose(f);
	doc[n] = 0;
	int same = n >= made_len && !memcmp(doc + n - made_len, made, made_len);
	if (!same)
		fprintf(stderr, "docs/errors.md differs from the error table: run "
		        "build/fftbloomd --print-errors and put its output at the file's end\n");
	free(made);
	assert_true(same);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_docs_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
