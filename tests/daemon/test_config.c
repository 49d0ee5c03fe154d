/* The option table: defaults, bounds, environment override, flags, bad values named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/config.h"

static void test_defaults(void **state)
{
	(void)state;
	struct config c;
	char err[OPT_ERR_LEN];
	char *argv[] = {"fftbloomd", NULL};
	unsetenv("FFTBLOOM_DEVICE");
	unsetenv("FFTBLOOM_PLATFORM");
	assert_int_equal(config_load(&c, 1, argv, 1, NULL, err), 0);
	assert_int_equal(c.gpu.platform, 0);
	assert_int_equal(c.gpu.device, 0);
	assert_int_equal(c.log_level, 2);
	assert_string_equal(c.gpu.shader_dir, "");
}

static void test_flags_and_env(void **state)
{
	(void)state;
	struct config c;
	char err[OPT_ERR_LEN];
	setenv("FFTBLOOM_DEVICE", "3", 1);
	setenv("FFTBLOOM_PLATFORM", "surfaceless", 1);
	char a0[] = "x", a1[] = "--device", a2[] = "5", a3[] = "pos", a4[] = "--log-format=json",
	     a5[] = "--gl-debug";
	char *argv[] = {a0, a1, a2, a3, a4, a5, NULL};
	int npos = -1;
	assert_int_equal(config_load(&c, 6, argv, 1, &npos, err), 0);
	assert_int_equal(c.gpu.device, 5);        /* the flag beats the environment */
	assert_int_equal(c.gpu.platform, 2);      /* the environment beats the default */
	assert_int_equal(c.log_format, 1);
	assert_int_equal(c.gpu.gl_debug, 1);
	assert_int_equal(npos, 1);
	assert_string_equal(argv[1], "pos");
	unsetenv("FFTBLOOM_DEVICE");
	unsetenv("FFTBLOOM_PLATFORM");
}

static void expect_fail(const char *flag, const char *val, int code, const char *needle)
{
	struct config c;
	char err[OPT_ERR_LEN] = "";
	char a1[64], a2[64];
	snprintf(a1, sizeof a1, "%s", flag);
	snprintf(a2, sizeof a2, "%s", val);
	char *argv[] = {"x", a1, a2, NULL};
	int rc = config_load(&c, 3, argv, 1, NULL, err);
	printf("%s %s -> %d: %s\n", flag, val, rc, err);
	assert_int_equal(rc, code);
	assert_non_null(strstr(err, needle));
}

static void test_bad_values_rejected(void **state)
{
	(void)state;
	expect_fail("--device", "64", OPT_E_BOUNDS, "device: '64' is out of bounds [0, 63]");
	expect_fail("--device", "-1", OPT_E_BOUNDS, "[0, 63]");
	expect_fail("--device", "2x", OPT_E_VALUE, "not an integer");
	expect_fail("--platform", "vulkan", OPT_E_BOUNDS, "auto|device|surfaceless");
	expect_fail("--no-such", "1", OPT_E_UNKNOWN, "--no-such");
	expect_fail("--gl-debug=maybe", "", OPT_E_VALUE, "not a boolean");
	struct config c;
	char err[OPT_ERR_LEN];
	char *argv[] = {"x", "--device", NULL};
	assert_int_equal(config_load(&c, 2, argv, 1, NULL, err), OPT_E_MISSING);
	setenv("FFTBLOOM_DEVICE", "99", 1);
	char *argv2[] = {"x", NULL};
	assert_int_equal(config_load(&c, 1, argv2, 1, NULL, err), OPT_E_BOUNDS);
	printf("env: %s\n", err);
	assert_non_null(strstr(err, "FFTBLOOM_DEVICE"));
	unsetenv("FFTBLOOM_DEVICE");
}

struct all_types {
	int i, b, e;
	double d;
	unsigned long long s;
	char str[OPT_STR_MAX];
};

static const struct opt_def types_table[] = {
	{"int-v", OPT_INT, -5, 5, "1", NULL, "", NULL, offsetof(struct all_types, i)},
	{"bool-v", OPT_BOOL, 0, 1, "true", NULL, "", NULL, offsetof(struct all_types, b)},
	{"enum-v", OPT_ENUM, 0, 0, "b", "a|b|c", "", NULL, offsetof(struct all_types, e)},
	{"num-v", OPT_DOUBLE, 0, 1, "0.5", NULL, "", NULL, offsetof(struct all_types, d)},
	{"size-v", OPT_SIZE, 1, 1 << 30, "64M", NULL, "", NULL, offsetof(struct all_types, s)},
	{"str-v", OPT_STRING, 0, 8, "abc", NULL, "", NULL, offsetof(struct all_types, str)},
};

static void test_every_type(void **state)
{
	(void)state;
	struct all_types v;
	char err[OPT_ERR_LEN], buf[64];
	size_t n = sizeof types_table / sizeof types_table[0];
	assert_int_equal(opts_defaults(types_table, n, &v, err), 0);
	assert_int_equal(v.i, 1);
	assert_int_equal(v.b, 1);
	assert_int_equal(v.e, 1);
	assert_true(v.d == 0.5);
	assert_true(v.s == 64ull << 20);
	assert_string_equal(v.str, "abc");
	/* '_' matches '-' (query strings and JSON keys) */
	assert_int_equal(opts_set_named(types_table, n, &v, "num_v", "1", err), 0);
	assert_true(v.d == 1.0);
	assert_int_equal(opts_set_named(types_table, n, &v, "num_v", "1.0001", err), OPT_E_BOUNDS);
	assert_int_equal(opts_set_named(types_table, n, &v, "num_v", "nan", err), OPT_E_VALUE);
	assert_int_equal(opts_set_named(types_table, n, &v, "size_v", "2G", err), OPT_E_BOUNDS);
	assert_int_equal(opts_set_named(types_table, n, &v, "size_v", "1k", err), 0);
	assert_true(v.s == 1024);
	assert_int_equal(opts_set_named(types_table, n, &v, "size_v", "-1", err), OPT_E_VALUE);
	assert_int_equal(opts_set_named(types_table, n, &v, "str_v", "123456789", err), OPT_E_BOUNDS);
	assert_int_equal(opts_set_named(types_table, n, &v, "enum_v", "c", err), 0);
	opts_format(opts_find(types_table, n, "enum-v"), &v, buf, sizeof buf);
	assert_string_equal(buf, "c");
	assert_true(v.d == 1.0); /* failed sets left the value as it was */
}

static void test_help_lists_everything(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	opts_print_help(f, config_table, config_table_len);
	fclose(f);
	for (size_t i = 0; i < config_table_len; i++) {
		assert_non_null(strstr(buf, config_table[i].name));
		if (config_table[i].env)
			assert_non_null(strstr(buf, config_table[i].env));
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_flags_and_env),
		cmocka_unit_test(test_bad_values_rejected),
		cmocka_unit_test(test_every_type),
		cmocka_unit_test(test_help_lists_everything),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
