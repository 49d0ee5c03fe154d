/* The operation table (api/operation.h): rows complete and consistent with the request
 * table and the job kinds, the Allow lists and method bits, and docs/operations.md made from
 * it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/testutil.h"

#include "api/operation.h"
#include "api/request.h"

static void test_rows(void **state)
{
	(void)state;
	for (int op = OP_NONE + 1; op < OP_COUNT; op++) {
		const struct operation *o = &operations[op];
		assert_non_null(o->path);
		assert_non_null(o->label);
		assert_true(o->methods);
		assert_true(o->path[0] == '/');
		/* a named route's path is a prefix ending in '/' */
		assert_int_equal(!!o->named, o->path[strlen(o->path) - 1] == '/' && o->path[1]);
		for (int i = 0; i < OP_METHODS; i++)
			if (o->methods & (1u << i) && o->doc_path)
				assert_non_null(o->summary[i]); /* OpenAPI and the docs need its words */
		if (o->request) { /* one request_op bit, and a job of the same operation */
			assert_true((o->request & (o->request - 1)) == 0);
			assert_true(o->job >= 0 && o->job < JOB_KINDS);
			assert_int_equal(o->input, operation_job_input(o->job));
		}
		if (o->input == OP_IN_TENSORS)
			assert_non_null(o->parts_doc);
		for (int p = OP_NONE + 1; p < op; p++) /* no two rows of one path or label */
			assert_false(!strcmp(operations[p].path, o->path) ||
			             !strcmp(operations[p].label, o->label));
	}
	for (int k = 0; k < JOB_KINDS; k++)
		assert_true(operation_job_input(k) != OP_IN_NONE);
}

static void test_methods(void **state)
{
	(void)state;
	char allow[64];
	operation_allow(OP_BLOOM, allow); /* GET: ?src=URL, an origin's image */
	assert_string_equal(allow, "GET, HEAD, POST, OPTIONS");
	operation_allow(OP_CONV2D, allow);
	assert_string_equal(allow, "POST, OPTIONS");
	assert_int_equal(operation_signed_path("/v1/bloom"), OP_BLOOM);
	assert_int_equal(operation_signed_path("/v1/convolve"), OP_CONVOLVE);
	assert_int_equal(operation_signed_path("/v1/bloom/x"), OP_BLOOM_GET);
	assert_int_equal(operation_signed_path("/v1/conv2d"), OP_NONE);
	assert_int_equal(operation_signed_path("/v1/bloomx"), OP_NONE);
	operation_allow(OP_KERNEL, allow);
	assert_string_equal(allow, "GET, HEAD, PUT, DELETE, OPTIONS");
	operation_allow(OP_INFO, allow);
	assert_string_equal(allow, "GET, HEAD, OPTIONS");
	operation_allow(OP_NONE, allow);
	assert_string_equal(allow, "");
	assert_int_equal(operation_method_bit("HEAD"), OP_M_GET);
	assert_int_equal(operation_method_bit("DELETE"), OP_M_DELETE);
	assert_int_equal(operation_method_bit("OPTIONS"), 0);
	assert_int_equal(operation_method_bit("PATCH"), 0);
}

/* docs/operations.md ends with the list as --print-operations writes it (the tests run from
 * the repository's root). */
static void test_docs_match(void **state)
{
	(void)state;
	int same = tu_doc_ends_with("docs/operations.md", operations_markdown, "--print-operations");
	if (same < 0)
		skip(); /* not run from the repository's root */
	assert_true(same);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_methods),
		cmocka_unit_test(test_docs_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
