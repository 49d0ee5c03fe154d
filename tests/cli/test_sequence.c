/* Tests for cli/sequence: '#' and printf patterns found, formatted and matched (padding, wider
 * numbers, names that only look alike), and frame lists with ranges, steps, repeats and every
 * kind of malformed text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/sequence.h"

static void test_pattern_hash(void **state)
{
	(void)state;
	struct seq_pattern p;
	char err[SEQ_ERR_LEN], name[64];
	assert_int_equal(seq_pattern_parse("frames/shot.####.exr", &p, err), 0);
	assert_int_equal(p.width, 4);
	assert_int_equal(p.prefix_len, 12);
	assert_int_equal(p.field_len, 4);
	assert_int_equal(seq_format(&p, 7, name, sizeof name), 0);
	assert_string_equal(name, "frames/shot.0007.exr");
	assert_int_equal(seq_format(&p, 1001, name, sizeof name), 0);
	assert_string_equal(name, "frames/shot.1001.exr");
	assert_int_equal(seq_format(&p, 123456, name, sizeof name), 0);
	assert_string_equal(name, "frames/shot.123456.exr"); /* wider keeps its digits */
	assert_int_equal(seq_format(&p, 0, name, sizeof name), 0);
	assert_string_equal(name, "frames/shot.0000.exr");
	assert_int_equal(seq_format(&p, -1, name, sizeof name), SEQ_E_SYNTAX);
	assert_int_equal(seq_format(&p, SEQ_MAX_FRAME + 1, name, sizeof name), SEQ_E_SYNTAX);
	assert_int_equal(seq_format(&p, 7, name, 20), SEQ_E_SPACE); /* 20 bytes + NUL needed */
	assert_int_equal(seq_format(&p, 7, name, 21), 0);

	/* the last run of '#' is the field; earlier ones and '%' are literal */
	assert_int_equal(seq_pattern_parse("a#b/x_##_%d.#.png", &p, err), 0);
	assert_int_equal(p.width, 1);
	assert_int_equal(seq_format(&p, 42, name, sizeof name), 0);
	assert_string_equal(name, "a#b/x_##_%d.42.png");
	assert_int_equal(seq_pattern_parse("#", &p, err), 0);
	assert_int_equal(seq_format(&p, 3, name, sizeof name), 0);
	assert_string_equal(name, "3");
}

static void test_pattern_printf(void **state)
{
	(void)state;
	struct seq_pattern p;
	char err[SEQ_ERR_LEN], name[64];
	assert_int_equal(seq_pattern_parse("out/shot.%04d.exr", &p, err), 0);
	assert_int_equal(p.width, 4);
	assert_int_equal(p.field_len, 4);
	assert_int_equal(seq_format(&p, 42, name, sizeof name), 0);
	assert_string_equal(name, "out/shot.0042.exr");
	assert_int_equal(seq_pattern_parse("f%d.png", &p, err), 0);
	assert_int_equal(p.width, 1);
	assert_int_equal(seq_format(&p, 5, name, sizeof name), 0);
	assert_string_equal(name, "f5.png");
	assert_int_equal(seq_pattern_parse("%9d", &p, err), SEQ_E_SYNTAX); /* no 0: not padding */
	assert_int_equal(seq_pattern_parse("a%s.png", &p, err), SEQ_E_SYNTAX);
	assert_non_null(strstr(err, "a%s.png"));
	assert_int_equal(seq_pattern_parse("a%d_%d.png", &p, err), SEQ_E_SYNTAX);
	assert_int_equal(seq_pattern_parse("100%%_%d.png", &p, err), SEQ_E_SYNTAX);
	assert_int_equal(seq_pattern_parse("a%00d.png", &p, err), SEQ_E_SYNTAX);
	assert_int_equal(seq_pattern_parse("trailing%", &p, err), SEQ_E_SYNTAX);
	assert_int_equal(seq_pattern_parse("plain.exr", &p, err), SEQ_E_NONE);
	assert_int_equal(seq_pattern_parse("", &p, err), SEQ_E_NONE);
}

static void test_match(void **state)
{
	(void)state;
	struct seq_pattern p;
	char err[SEQ_ERR_LEN];
	long f = -1;
	assert_int_equal(seq_pattern_parse("shot.####.exr", &p, err), 0);
	assert_int_equal(seq_match(&p, "shot.0042.exr", &f), 1);
	assert_int_equal(f, 42);
	assert_int_equal(seq_match(&p, "shot.12345.exr", &f), 1); /* wider, no leading zero */
	assert_int_equal(f, 12345);
	f = -1;
	assert_int_equal(seq_match(&p, "shot.01234.exr", &f), 0); /* wider with a leading zero */
	assert_int_equal(seq_match(&p, "shot.042.exr", &f), 0);   /* narrower */
	assert_int_equal(seq_match(&p, "shot.00a2.exr", &f), 0);
	assert_int_equal(seq_match(&p, "shot..exr", &f), 0);
	assert_int_equal(seq_match(&p, "shot.0042.exr.bak", &f), 0);
	assert_int_equal(seq_match(&p, "shot.0042.png", &f), 0);
	assert_int_equal(seq_match(&p, "shof.0042.exr", &f), 0);
	assert_int_equal(seq_match(&p, "shot.exr", &f), 0);
	assert_int_equal(seq_match(&p, "shot.-042.exr", &f), 0);
	assert_int_equal(seq_match(&p, "shot.1234567890.exr", &f), 0); /* above SEQ_MAX_FRAME */
	assert_int_equal(f, -1);
	assert_int_equal(seq_pattern_parse("f%d.png", &p, err), 0);
	assert_int_equal(seq_match(&p, "f0.png", &f), 1);
	assert_int_equal(f, 0);
	assert_int_equal(seq_match(&p, "f17.png", &f), 1);
	assert_int_equal(f, 17);
	assert_int_equal(seq_match(&p, "f017.png", &f), 0);
	/* what seq_format writes, seq_match reads back */
	assert_int_equal(seq_pattern_parse("x.##.y", &p, err), 0);
	for (long v = 0; v < 2000; v += 7) {
		char name[32];
		assert_int_equal(seq_format(&p, v, name, sizeof name), 0);
		assert_int_equal(seq_match(&p, name, &f), 1);
		assert_int_equal(f, v);
	}
}

static void expect_frames(const char *s, const long *want, size_t n)
{
	long *f;
	size_t got;
	char err[SEQ_ERR_LEN];
	int rc = seq_frames_parse(s, &f, &got, err);
	if (rc)
		fprintf(stderr, "%s: %s\n", s, err);
	assert_int_equal(rc, 0);
	assert_int_equal(got, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(f[i], want[i]);
	free(f);
}

static void expect_bad(const char *s, int code)
{
	long *f = (long *)1;
	size_t n = 7;
	char err[SEQ_ERR_LEN] = "";
	assert_int_equal(seq_frames_parse(s, &f, &n, err), code);
	assert_null(f);
	assert_int_equal(n, 0);
	assert_true(err[0] != 0);
}

static void test_frames(void **state)
{
	(void)state;
	expect_frames("5", (long[]){5}, 1);
	expect_frames("0", (long[]){0}, 1);
	expect_frames("1001-1004", (long[]){1001, 1002, 1003, 1004}, 4);
	expect_frames("1-3,20-21", (long[]){1, 2, 3, 20, 21}, 5);
	expect_frames("1-10x3", (long[]){1, 4, 7, 10}, 4);
	expect_frames("1-11x3", (long[]){1, 4, 7, 10}, 4);
	expect_frames("7-7x5", (long[]){7}, 1);
	expect_frames("9,2,9", (long[]){9, 2, 9}, 3); /* the list's order, repeats kept */
	expect_frames("1-2,5,8-12x2", (long[]){1, 2, 5, 8, 10, 12}, 6);
	long *f;
	size_t n;
	char err[SEQ_ERR_LEN];
	assert_int_equal(seq_frames_parse("1001-1100", &f, &n, err), 0);
	assert_int_equal(n, 100);
	assert_int_equal(f[0], 1001);
	assert_int_equal(f[99], 1100);
	free(f);
	assert_int_equal(seq_frames_parse("0-999999", &f, &n, err), 0);
	assert_int_equal(n, SEQ_MAX_FRAMES);
	free(f);

	expect_bad("", SEQ_E_SYNTAX);
	expect_bad(",", SEQ_E_SYNTAX);
	expect_bad("1,", SEQ_E_SYNTAX);
	expect_bad(",1", SEQ_E_SYNTAX);
	expect_bad("1-", SEQ_E_SYNTAX);
	expect_bad("-5", SEQ_E_SYNTAX);
	expect_bad("10-1", SEQ_E_SYNTAX);
	expect_bad("1-10x0", SEQ_E_SYNTAX);
	expect_bad("1-10x", SEQ_E_SYNTAX);
	expect_bad("1x2", SEQ_E_SYNTAX);
	expect_bad("1 - 3", SEQ_E_SYNTAX);
	expect_bad("1-3;5", SEQ_E_SYNTAX);
	expect_bad("a", SEQ_E_SYNTAX);
	expect_bad("1..3", SEQ_E_SYNTAX);
	expect_bad("1000000000", SEQ_E_TOO_MANY);
	expect_bad("0-1000000", SEQ_E_TOO_MANY);
	expect_bad("0-600000,0-600000", SEQ_E_TOO_MANY);
	assert_int_equal(seq_frames_parse("1-3;5", &f, &n, err), SEQ_E_SYNTAX);
	assert_non_null(strstr(err, "';'"));
	assert_string_equal(seq_strerror(SEQ_E_NONE), "no frame field in the name");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pattern_hash),
		cmocka_unit_test(test_pattern_printf),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_frames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
