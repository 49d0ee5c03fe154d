/* The conv2d and conv2d-transpose parameter tables: defaults, pairs ("P" or "PH,PW") and their
 * bounds, enum names, messages that name the parameter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "protocol/conv_params.h"

static void test_pairs(void **state)
{
	(void)state;
	char err[OPT_ERR_LEN];
	int h = -1, w = -1;
	assert_int_equal(conv_pair_parse("padding", "3", 0, 10, &h, &w, err), 0);
	assert_true(h == 3 && w == 3);
	assert_int_equal(conv_pair_parse("padding", "2,5", 0, 10, &h, &w, err), 0);
	assert_true(h == 2 && w == 5);
	const char *bad[] = {"", ",", "1,", ",2", "1,2,3", "a", "1.5", " 1", "+1", "1 ,2", "0x3"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_not_equal(conv_pair_parse("padding", bad[i], 0, 10, &h, &w, err), 0);
		assert_non_null(strstr(err, "padding"));
	}
	assert_int_equal(conv_pair_parse("stride", "0", 1, 10, &h, &w, err), OPT_E_BOUNDS);
	printf("%s\n", err);
	assert_int_equal(conv_pair_parse("stride", "1,11", 1, 10, &h, &w, err), OPT_E_BOUNDS);
	assert_int_equal(conv_pair_parse("stride", "99999999999999", 1, 10, &h, &w, err), OPT_E_VALUE);
}

static void test_conv2d(void **state)
{
	(void)state;
	char err[OPT_ERR_LEN];
	struct conv2d_params p;
	struct conv_numbers n;
	memset(&p, 0, sizeof p);
	assert_int_equal(opts_defaults(conv2d_params_table, conv2d_params_table_len, &p, err), 0);
	assert_int_equal(conv2d_params_resolve(&p, &n, err), 0);
	assert_true(n.pad_h == 0 && n.pad_w == 0 && n.stride_h == 1 && n.stride_w == 1);
	assert_true(n.dil_h == 1 && n.groups == 1 && n.precision == 3 && n.algorithm == 0);
	const struct opt_def *t = conv2d_params_table;
	size_t len = conv2d_params_table_len;
	assert_int_equal(opts_set_named(t, len, &p, "padding", "1,2", err), 0);
	assert_int_equal(opts_set_named(t, len, &p, "stride", "3", err), 0);
	assert_int_equal(opts_set_named(t, len, &p, "algorithm", "interp", err), 0);
	assert_int_equal(opts_set_named(t, len, &p, "precision", "4", err), OPT_E_BOUNDS);
	printf("%s\n", err);
	assert_int_equal(opts_set_named(t, len, &p, "algorithm", "fast", err), OPT_E_BOUNDS);
	printf("%s\n", err);
	assert_int_equal(conv2d_params_resolve(&p, &n, err), 0);
	assert_true(n.pad_h == 1 && n.pad_w == 2 && n.stride_h == 3 && n.stride_w == 3);
	assert_int_equal(n.algorithm, 2);
	assert_int_equal(opts_set_named(t, len, &p, "stride", "0,1", err), 0); /* text in the table */
	assert_int_equal(conv2d_params_resolve(&p, &n, err), OPT_E_BOUNDS);
	assert_non_null(strstr(err, "stride"));
}

static void test_transpose(void **state)
{
	(void)state;
	char err[OPT_ERR_LEN];
	struct conv2d_transpose_params p;
	struct conv_numbers n;
	const struct opt_def *t = conv2d_transpose_params_table;
	size_t len = conv2d_transpose_params_table_len;
	memset(&p, 0, sizeof p);
	assert_int_equal(opts_defaults(t, len, &p, err), 0);
	assert_int_equal(conv2d_transpose_params_resolve(&p, &n, err), 0);
	assert_true(n.stride_h == 1 && n.pad_h == 0 && n.out_pad_h == 0 && n.out_h == 0);
	assert_int_equal(opts_set_named(t, len, &p, "method", "subkernel", err), 0);
	assert_int_equal(opts_set_named(t, len, &p, "padding_mode", "tf_same", err), 0);
	assert_int_equal(opts_set_named(t, len, &p, "output_shape", "9,12", err), 0);
	assert_int_equal(opts_set_named(t, len, &p, "output-padding", "1,0", err), 0);
	assert_int_equal(conv2d_transpose_params_resolve(&p, &n, err), 0);
	assert_true(n.method == 3 && n.padding_mode == 1 && n.out_h == 9 && n.out_w == 12);
	assert_true(n.out_pad_h == 1 && n.out_pad_w == 0);
	assert_int_equal(opts_set_named(t, len, &p, "output-shape", "9", err), 0);
	assert_int_equal(conv2d_transpose_params_resolve(&p, &n, err), OPT_E_VALUE);
	printf("%s\n", err);
	assert_int_equal(opts_set_named(t, len, &p, "output-shape", "9,9", err), 0);
	assert_int_equal(opts_set_named(t, len, &p, "padding-mode", "torch", err), 0);
	assert_int_equal(conv2d_transpose_params_resolve(&p, &n, err), OPT_E_VALUE);
	printf("%s\n", err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_conv2d),
		cmocka_unit_test(test_transpose),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
