/* The checked size helpers (core/checked.h) at their edges: products and sums just below,
 * at and just past 2^64, the factors of issue 35's hostile transposed convolution (whose output
 * bytes are exactly 2^64, which a plain multiply wraps to 0), zero factors; and tensor_count /
 * tensor_bytes built on them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>

#include "core/checked.h"
#include "codec/tensor.h"

static void test_mul(void **state)
{
	(void)state;
	size_t r;
	assert_int_equal(checked_mul_size(0, SIZE_MAX, &r), 0);
	assert_true(r == 0);
	assert_int_equal(checked_mul_size(1, SIZE_MAX, &r), 0);
	assert_true(r == SIZE_MAX);
	assert_int_equal(checked_mul_size(SIZE_MAX / 3, 3, &r), 0); /* 2^64 - 1 = 3 x 0x5555... */
	assert_true(r == SIZE_MAX);
	assert_int_equal(checked_mul_size(SIZE_MAX / 3 + 1, 3, &r), -1);
	assert_true(r == SIZE_MAX); /* saturated, never the wrapped 2 */
	assert_int_equal(checked_mul_size((size_t)1 << 32, (size_t)1 << 32, &r), -1);
	assert_true(r == SIZE_MAX); /* 2^64: a plain multiply gives 0 */
	assert_int_equal(checked_mul_size((size_t)1 << 32, ((size_t)1 << 32) - 1, &r), 0);
	assert_true(r == ((size_t)1 << 32) * (((size_t)1 << 32) - 1));
	unsigned long long u;
	assert_int_equal(checked_mul_ull(1ull << 63, 2, &u), -1);
	assert_true(u == ~0ull);
	assert_int_equal(checked_mul_ull(1ull << 62, 2, &u), 0);
	assert_true(u == 1ull << 63);
}

static void test_add(void **state)
{
	(void)state;
	size_t r;
	assert_int_equal(checked_add_size(SIZE_MAX - 1, 1, &r), 0);
	assert_true(r == SIZE_MAX);
	assert_int_equal(checked_add_size(SIZE_MAX, 1, &r), -1);
	assert_true(r == SIZE_MAX);
	assert_int_equal(checked_add_size(0, 0, &r), 0);
	assert_true(r == 0);
	unsigned long long u;
	assert_int_equal(checked_add_ull(~0ull, 1, &u), -1);
	assert_true(u == ~0ull);
	assert_int_equal(checked_add_ull(~0ull - 5, 5, &u), 0);
	assert_true(u == ~0ull);
}

static void test_product(void **state)
{
	(void)state;
	size_t r;
	/* issue 35: the output (32768, 32768, 65536, 65536) of float32 is 2^64 bytes */
	const size_t hostile[4] = {32768, 32768, 65536, 65536};
	assert_int_equal(checked_product_size(hostile, 4, 4, &r), -1);
	assert_true(r == SIZE_MAX);
	assert_int_equal(checked_product_size(hostile, 4, 1, &r), 0); /* 2^62 elements: no wrap */
	assert_true(r == (size_t)1 << 62);
	/* batch 1: 2^49 bytes, no overflow (the budget refuses it) */
	const size_t one[4] = {1, 32768, 65536, 65536};
	assert_int_equal(checked_product_size(one, 4, 4, &r), 0);
	assert_true(r == (size_t)1 << 49);
	/* a zero factor anywhere, even after an overflow, is an empty product */
	const size_t z[4] = {SIZE_MAX, SIZE_MAX, 0, 7};
	assert_int_equal(checked_product_size(z, 4, 4, &r), 0);
	assert_true(r == 0);
	const size_t big[3] = {SIZE_MAX / 2, 2, 1};
	assert_int_equal(checked_product_size(big, 3, 1, &r), 0);
	assert_true(r == SIZE_MAX - 1);
	assert_int_equal(checked_product_size(big, 3, 2, &r), -1);
	assert_int_equal(checked_product_size(NULL, 0, 9, &r), 0);
	assert_true(r == 9);
}

static void test_tensor(void **state)
{
	(void)state;
	struct tensor t = {4, {32768, 32768, 65536, 65536}, NULL};
	size_t b = 0;
	assert_int_equal(tensor_bytes(&t, &b), TENSOR_E_TOO_LARGE);
	assert_true(b == SIZE_MAX);
	assert_true(tensor_count(&t) == (size_t)1 << 62);
	t.shape[1] = 65536; /* 2^63 elements: the count itself still fits, its bytes do not */
	assert_int_equal(tensor_bytes(&t, &b), TENSOR_E_TOO_LARGE);
	t.shape[0] = 65536; /* 2^64 elements: the count overflows: 0, never a wrapped count */
	assert_true(tensor_count(&t) == 0);
	struct tensor s = {3, {3, 5, 7, 1}, NULL};
	assert_int_equal(tensor_bytes(&s, &b), 0);
	assert_true(b == 3 * 5 * 7 * 4);
	assert_true(tensor_count(&s) == 105);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mul),
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_product),
		cmocka_unit_test(test_tensor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
