/* The HTTP API's pure helpers: --gpus and --warm-sizes lists, CORS origins, names, constant-time
 * key comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "daemon/apiutil.h"
#include "core/urlsign.h"

static void test_gpus(void **state)
{
	(void)state;
	int l[16], n;
	char err[API_ERR_LEN];
	assert_int_equal(api_parse_gpus("0", 0, l, 16, &n, err), 0);
	assert_true(n == 1 && l[0] == 0);
	assert_int_equal(api_parse_gpus("2,0,5", 0, l, 16, &n, err), 0);
	assert_true(n == 3 && l[0] == 2 && l[1] == 0 && l[2] == 5);
	assert_int_equal(api_parse_gpus("all", 3, l, 16, &n, err), 0);
	assert_true(n == 3 && l[2] == 2);
	assert_int_equal(api_parse_gpus("all", 0, l, 16, &n, err), 0); /* software fallback */
	assert_int_equal(n, 1);
	const char *bad[] = {"", "a", "0,", ",0", "0,,1", "-1", "64", "1 2", "0x1"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = api_parse_gpus(bad[i], 4, l, 16, &n, err);
		printf("'%s' -> %d: %s\n", bad[i], rc, err);
		assert_int_equal(rc, -1);
		assert_int_equal(n, 0);
	}
	assert_int_equal(api_parse_gpus("0,1,2", 0, l, 2, &n, err), -1); /* more than max */
	/* a device listed twice: two workers on it (the worker mechanism on one device) */
	assert_int_equal(api_parse_gpus("0,0", 0, l, 16, &n, err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(l[0], 0);
	assert_int_equal(l[1], 0);
}

static void test_sizes(void **state)
{
	(void)state;
	int wh[4][2], n;
	char err[API_ERR_LEN];
	assert_int_equal(api_parse_sizes("", 100, wh, 4, &n, err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(api_parse_sizes("1920x1080,3840X2160", 16384, wh, 4, &n, err), 0);
	assert_true(n == 2 && wh[0][0] == 1920 && wh[0][1] == 1080 && wh[1][0] == 3840);
	assert_int_equal(api_parse_sizes("1x1", 1, wh, 4, &n, err), 0);
	const char *bad[] = {"x", "10x", "x10", "10*10", "0x5", "5x0", "101x5", "5x101", "5,5", "1x1,", "1x1;2x2"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = api_parse_sizes(bad[i], 100, wh, 4, &n, err);
		printf("'%s' -> %d: %s\n", bad[i], rc, err);
		assert_int_equal(rc, -1);
	}
	assert_int_equal(api_parse_sizes("1x1,2x2,3x3", 100, wh, 2, &n, err), -1);
}

static void test_origins_names(void **state)
{
	(void)state;
	assert_true(api_origin_allowed("https://a.example, https://b.example", "https://b.example"));
	assert_false(api_origin_allowed("https://a.example", "https://a.example.evil"));
	assert_false(api_origin_allowed("https://a.example", "https://a.exampl"));
	assert_false(api_origin_allowed("", "https://a.example"));
	assert_false(api_origin_allowed("*", NULL));
	assert_true(api_origin_allowed("*", "http://anything"));
	assert_true(api_valid_name("aperture_6-blades.v2"));
	assert_false(api_valid_name(""));
	assert_false(api_valid_name(".hidden"));
	assert_false(api_valid_name("a/b"));
	assert_false(api_valid_name("a b"));
	char l65[66];
	memset(l65, 'a', 65);
	l65[65] = 0;
	assert_false(api_valid_name(l65));
	l65[64] = 0;
	assert_true(api_valid_name(l65));
}

static void test_key_equal(void **state)
{
	(void)state;
	const char *k = "s3cret-KEY";
	size_t kl = strlen(k);
	assert_true(urlsign_equal("s3cret-KEY", kl, k, kl));
	assert_false(urlsign_equal("s3cret-KEX", kl, k, kl));
	assert_false(urlsign_equal("t3cret-KEY", kl, k, kl));
	assert_false(urlsign_equal("s3cret-KE", kl - 1, k, kl));
	assert_false(urlsign_equal("s3cret-KEYs3cret-KEY", 2 * kl, k, kl)); /* repeats do not pass */
	assert_false(urlsign_equal("", 0, k, kl));
	assert_false(urlsign_equal("", 0, "", 0)); /* an empty expected key never matches */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpus),
		cmocka_unit_test(test_sizes),        cmocka_unit_test(test_origins_names),
		cmocka_unit_test(test_key_equal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
