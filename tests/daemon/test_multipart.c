/* multipart/form-data splitting: boundaries from Content-Type, binary parts with CR, LF and
 * dashes inside, preamble and epilogue, quoted names, and every malformed shape refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/multipart.h"
#include "tests/testutil.h"

static void test_boundary(void **state)
{
	(void)state;
	char b[MULTIPART_BOUNDARY_MAX + 1];
	assert_int_equal(multipart_boundary("multipart/form-data; boundary=abc", b), 0);
	assert_string_equal(b, "abc");
	assert_int_equal(multipart_boundary("Multipart/Form-Data;charset=x; BOUNDARY=\"a b;c\"", b), 0);
	assert_string_equal(b, "a b;c");
	assert_int_equal(multipart_boundary("multipart/form-data", b), MULTIPART_E_BOUNDARY);
	assert_int_equal(multipart_boundary("multipart/form-data; boundary=", b), MULTIPART_E_BOUNDARY);
	assert_int_equal(multipart_boundary("multipart/form-data; boundary=\"unterminated", b),
	                 MULTIPART_E_BOUNDARY);
	char longb[128] = "multipart/form-data; boundary=";
	memset(longb + strlen(longb), 'x', 71);
	assert_int_equal(multipart_boundary(longb, b), MULTIPART_E_BOUNDARY); /* 71 > 70 */
	longb[strlen(longb) - 1] = 0;
	assert_int_equal(multipart_boundary(longb, b), 0); /* 70 is fine */
	assert_int_equal(multipart_boundary("image/png", b), MULTIPART_E_NOT);
	assert_int_equal(multipart_boundary("multipart/form-datax; boundary=a", b), MULTIPART_E_NOT);
	assert_int_equal(multipart_boundary(NULL, b), MULTIPART_E_NOT);
}

/* Builds a body of n parts with random binary contents salted with CRLF, "--" and fragments of
 * the boundary itself; checks that parsing returns them unchanged. */
static void roundtrip(size_t n, int preamble)
{
	const char *bd = "XyZ--b0undary";
	unsigned char *data[4];
	size_t len[4];
	size_t cap = 1 << 16, used = 0;
	unsigned char *body = malloc(cap);
	assert_non_null(body);
	if (preamble)
		used += (size_t)sprintf((char *)body, "This is a preamble.\r\n");
	for (size_t i = 0; i < n; i++) {
		len[i] = (size_t)(tu_uniform() * 3000);
		data[i] = malloc(len[i] + 1);
		for (size_t k = 0; k < len[i]; k++)
			data[i][k] = (unsigned char)(tu_uniform() * 256);
		/* hostile fragments: a CRLF, a dash pair and the boundary without its CRLF-- prefix */
		if (len[i] > 40) {
			memcpy(data[i] + 3, "\r\n--", 4);
			memcpy(data[i] + 10, bd, strlen(bd));
			memcpy(data[i] + 30, "\r\n\r\n", 4);
		}
		used += (size_t)sprintf((char *)body + used,
		                        "--%s\r\nContent-Disposition: form-data; name=\"p%zu\"; "
		                        "filename=\"f%zu.bin\"\r\nContent-Type: image/x-test\r\n\r\n",
		                        bd, i, i);
		memcpy(body + used, data[i], len[i]);
		used += len[i];
		used += (size_t)sprintf((char *)body + used, "\r\n");
	}
	used += (size_t)sprintf((char *)body + used, "--%s--\r\nepilogue", bd);
	struct multipart_part parts[4];
	size_t got;
	char err[MULTIPART_ERR_LEN] = "";
	int rc = multipart_parse(body, used, bd, parts, 4, &got, err);
	if (rc)
		printf("parse: %s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(got, n);
	for (size_t i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "p%zu", i);
		const struct multipart_part *p = multipart_find(parts, got, name);
		assert_non_null(p);
		assert_int_equal(p->len, len[i]);
		assert_memory_equal(p->data, data[i], len[i]);
		assert_string_equal(p->content_type, "image/x-test");
		free(data[i]);
	}
	assert_null(multipart_find(parts, got, "nope"));
	free(body);
}

static void test_roundtrip(void **state)
{
	(void)state;
	tu_seed_from_clock();
	for (int rep = 0; rep < 20; rep++) {
		roundtrip(1, 0);
		roundtrip(3, rep & 1);
	}
}

static void test_empty_part_and_no_closing_crlf(void **state)
{
	(void)state;
	const char *b = "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n\r\n--b--";
	struct multipart_part p[2];
	size_t n;
	char err[MULTIPART_ERR_LEN];
	assert_int_equal(multipart_parse(b, strlen(b), "b", p, 2, &n, err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].len, 0);
	assert_string_equal(p[0].name, "a");
}

static void expect_bad(const char *body, size_t max, int code)
{
	struct multipart_part p[2];
	size_t n;
	char err[MULTIPART_ERR_LEN] = "";
	int rc = multipart_parse(body, strlen(body), "b", p, max, &n, err);
	printf("%-60.60s -> %d: %s\n", body, rc, err);
	assert_int_equal(rc, code);
	assert_true(err[0] != 0);
}

static void test_malformed(void **state)
{
	(void)state;
	expect_bad("", 2, MULTIPART_E_SYNTAX);
	{ /* no body at all, as a request without one has it (fuzz_http: NULL + 0 under UBSan) */
		struct multipart_part p[2];
		size_t n;
		char err[MULTIPART_ERR_LEN] = "";
		assert_int_equal(multipart_parse(NULL, 0, "b", p, 2, &n, err), MULTIPART_E_SYNTAX);
		assert_int_equal(n, 0);
	}
	expect_bad("no boundary here", 2, MULTIPART_E_SYNTAX);
	expect_bad("--b", 2, MULTIPART_E_SYNTAX);                 /* ends after the delimiter */
	expect_bad("--b\r\nContent-Disposition: form-data; name=a\r\n\r\ndata", 2,
	           MULTIPART_E_SYNTAX);                           /* never closed */
	expect_bad("--b\r\nContent-Disposition: form-data; name=a", 2, MULTIPART_E_SYNTAX);
	expect_bad("--b\r\nContent-Type: x\r\n\r\nd\r\n--b--", 2, MULTIPART_E_SYNTAX); /* no disposition */
	expect_bad("--b\r\nContent-Disposition: attachment; name=a\r\n\r\nd\r\n--b--", 2,
	           MULTIPART_E_SYNTAX);
	expect_bad("--b\r\nbroken header line\r\n\r\nd\r\n--b--", 2, MULTIPART_E_SYNTAX);
	expect_bad("--bXYZ\r\n", 2, MULTIPART_E_SYNTAX);          /* a longer boundary is not it */
	expect_bad("--b\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n"
	           "--b\r\nContent-Disposition: form-data; name=b\r\n\r\n2\r\n"
	           "--b\r\nContent-Disposition: form-data; name=c\r\n\r\n3\r\n--b--", 2,
	           MULTIPART_E_TOO_MANY);
}

/* Every prefix of a valid body is either refused or (when only the epilogue is cut) parsed. */
static void test_every_cut(void **state)
{
	(void)state;
	const char *b = "--b\r\nContent-Disposition: form-data; name=\"image\"; filename=\"x\"\r\n"
	                "Content-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\r\n--b\r\n"
	                "Content-Disposition: form-data; name=params\r\n\r\n{}\r\n--b--\r\n";
	size_t full = strlen(b);
	for (size_t cut = 0; cut < full; cut++) {
		struct multipart_part p[4];
		size_t n;
		char err[MULTIPART_ERR_LEN];
		int rc = multipart_parse(b, cut, "b", p, 4, &n, err);
		if (cut < full - 2)
			assert_int_not_equal(rc, 0);
	}
}

/* What leniency would let through: a part named twice, an open quote or a control byte in a
 * name, and a header block past MULTIPART_HEADERS_MAX. */
static void test_strict(void **state)
{
	(void)state;
	struct multipart_part parts[4];
	size_t n;
	char err[MULTIPART_ERR_LEN];
	const char *cases[] = {
		"--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
		"--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n2\r\n--b--\r\n",
		"--b\r\nContent-Disposition: form-data; name=\"a\r\n\r\n1\r\n--b--\r\n",
		"--b\r\nContent-Disposition: form-data; name=\"a\x1b[2J\"\r\n\r\n1\r\n--b--\r\n",
		"--b\r\nContent-Disposition: form-data; name=a\x7f\r\n\r\n1\r\n--b--\r\n",
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc = multipart_parse(cases[i], strlen(cases[i]), "b", parts, 4, &n, err);
		printf("case %zu: %s\n", i, rc ? err : "accepted");
		assert_int_equal(rc, MULTIPART_E_SYNTAX);
	}
	char nul[] = "--b\r\nContent-Disposition: form-data; name=\"aXb\"\r\n\r\n1\r\n--b--\r\n";
	*strchr(nul, 'X') = 0; /* a NUL inside the quoted name */
	assert_int_equal(multipart_parse(nul, sizeof nul - 1, "b", parts, 4, &n, err),
	                 MULTIPART_E_SYNTAX);
	size_t pad = MULTIPART_HEADERS_MAX + 10;
	char *big = malloc(pad + 200);
	assert_non_null(big);
	int l = sprintf(big, "--b\r\nX-Pad: ");
	memset(big + l, 'a', pad);
	sprintf(big + l + pad, "\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--\r\n");
	assert_int_equal(multipart_parse(big, strlen(big), "b", parts, 4, &n, err), MULTIPART_E_SYNTAX);
	printf("long headers: %s\n", err);
	/* the same part names, distinct: accepted */
	const char *ok = "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
	                 "--b\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n2\r\n--b--\r\n";
	assert_int_equal(multipart_parse(ok, strlen(ok), "b", parts, 4, &n, err), 0);
	assert_int_equal(n, 2);
	free(big);
}

/* Content-Disposition's parameters as RFC 2183 and 7578 lay them out: a ';' or "name=" inside a
 * quoted value belongs to that value (issue 35, item 11: filename="x;name=image;" was read as a
 * part named image), escapes are undone, and what another parser could read otherwise (the name
 * twice, text after a quoted value, a bare name) is refused. */
static void test_quoted_params(void **state)
{
	(void)state;
	struct multipart_part parts[2];
	size_t n;
	char err[MULTIPART_ERR_LEN];
	static const struct {
		const char *disp, *name, *filename;
	} ok[] = {
		{"form-data; filename=\"x;name=image;\"; name=\"params\"", "params", "x;name=image;"},
		{"form-data; filename=\"x; name=image\"; name=params", "params", "x; name=image"},
		{"form-data; filename=\"a\\\"; name=image; b=\\\"\"; name=\"p\"", "p",
		 "a\"; name=image; b=\""},
		{"form-data; name=\"a\\\\\"", "a\\", ""},
		{"form-data; name=\"a\\\"b\"", "a\"b", ""},
		{"form-data;name=\"p\";filename=\"f\"", "p", "f"},
		{"form-data; NAME = \"p\" ; FileName=f.png", "p", "f.png"},
		{"form-data; filename*=UTF-8''x.png; name=p", "p", ""},
		{"form-data; foo=\"name=image\"; name=p", "p", ""},
		{"form-data; ; name=p;", "p", ""},
		{"form-data", "", ""},
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		char body[512];
		int l = snprintf(body, sizeof body, "--b\r\nContent-Disposition: %s\r\n\r\n1\r\n--b--\r\n",
		                 ok[i].disp);
		int rc = multipart_parse(body, (size_t)l, "b", parts, 2, &n, err);
		printf("ok %zu: %s -> %s name '%s' filename '%s'\n", i, ok[i].disp, rc ? err : "accepted",
		       rc ? "" : parts[0].name, rc ? "" : parts[0].filename);
		assert_int_equal(rc, 0);
		assert_int_equal(n, 1);
		assert_string_equal(parts[0].name, ok[i].name);
		assert_string_equal(parts[0].filename, ok[i].filename);
		assert_null(multipart_find(parts, n, "image"));
	}
	static const char *bad[] = {
		"form-data; name=\"a\"; name=\"b\"",     /* twice */
		"form-data; name=\"image\"x; name=p",    /* text after a quoted value */
		"form-data; name=a\"b\"",                /* a quote inside a token */
		"form-data; filename=\"x;name=image;",   /* open quote to the end */
		"form-data; name",                       /* no value */
		"form-data; name:p",                     /* not name=value */
		"form-dataX; name=p",                    /* another type */
		"form-data; name=\"a\tb\"",              /* a control byte */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char body[512];
		int l = snprintf(body, sizeof body, "--b\r\nContent-Disposition: %s\r\n\r\n1\r\n--b--\r\n",
		                 bad[i]);
		int rc = multipart_parse(body, (size_t)l, "b", parts, 2, &n, err);
		printf("bad %zu: %s -> %s\n", i, bad[i], rc ? err : "accepted");
		assert_int_equal(rc, MULTIPART_E_SYNTAX);
	}
	char b[MULTIPART_BOUNDARY_MAX + 1];
	assert_int_equal(multipart_boundary("multipart/form-data; x=\"boundary=evil\"; boundary=good", b), 0);
	assert_string_equal(b, "good");
	assert_int_equal(multipart_boundary("multipart/form-data; x=\"boundary=evil\"", b),
	                 MULTIPART_E_BOUNDARY);
	assert_int_equal(multipart_boundary("multipart/form-data; boundary=a; boundary=b", b),
	                 MULTIPART_E_BOUNDARY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boundary),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_empty_part_and_no_closing_crlf),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_every_cut),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_quoted_params),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
