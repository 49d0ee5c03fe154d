/* The embedded web page: every file under web/ is served byte for byte at /web/NAME with its
 * Content-Type and a stable ETag, / is index.html, nothing else is found, and If-None-Match
 * lists are matched as GET does (weak comparison). Run from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/web.h"

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	unsigned char *b = malloc(cap);
	size_t got;
	while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			unsigned char *t = realloc(b, cap *= 2);
			if (!t) {
				free(b);
				b = NULL;
			}
			b = t;
		}
	}
	fclose(f);
	*len = n;
	return b;
}

/* Every file of web/ on disk is embedded, identical, and every embedded file is one of them. */
static void test_files_match_disk(void **state)
{
	(void)state;
	DIR *d = opendir("web");
	assert_non_null(d);
	size_t on_disk = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[512], url[512];
		snprintf(path, sizeof path, "web/%s", e->d_name);
		snprintf(url, sizeof url, "/web/%s", e->d_name);
		size_t dlen;
		unsigned char *disk = read_all(path, &dlen);
		assert_non_null(disk);
		const unsigned char *data = NULL;
		size_t len = 0;
		const char *ctype = NULL, *etag = NULL;
		assert_int_equal(web_find(url, &data, &len, &ctype, &etag), WEB_OK);
		printf("     %s: %zu bytes, %s, ETag %s\n", url, len, ctype, etag);
		assert_int_equal(len, dlen);
		assert_memory_equal(data, disk, len);
		assert_int_equal(data[len], 0);
		assert_int_equal(strlen(etag), 18); /* "16 hex digits" */
		assert_int_equal(etag[0], '"');
		assert_int_equal(etag[17], '"');
		free(disk);
		on_disk++;
	}
	closedir(d);
	size_t n;
	web_files_all(&n);
	assert_int_equal(n, on_disk);
	assert_true(n >= 3);
}

static void test_find(void **state)
{
	(void)state;
	const unsigned char *a, *b;
	size_t la, lb;
	const char *ct, *ea, *eb;
	assert_int_equal(web_find("/", &a, &la, &ct, &ea), WEB_OK);
	assert_string_equal(ct, "text/html; charset=utf-8");
	assert_int_equal(web_find("/web/index.html", &b, &lb, NULL, &eb), WEB_OK);
	assert_ptr_equal(a, b);
	assert_string_equal(ea, eb);
	assert_int_equal(web_find("/web/app.js", NULL, NULL, &ct, NULL), WEB_OK);
	assert_string_equal(ct, "text/javascript; charset=utf-8");
	assert_int_equal(web_find("/web/style.css", NULL, NULL, &ct, NULL), WEB_OK);
	assert_string_equal(ct, "text/css; charset=utf-8");
	/* not found, outputs untouched */
	const char *untouched = "x";
	const char *paths[] = {"", "/web/", "/web", "/index.html", "/web/../web/app.js",
	                       "/web/app.js/", "/web/APP.JS", "/web/app.js?x", "//", "/v1/bloom"};
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		ct = untouched;
		assert_int_equal(web_find(paths[i], NULL, NULL, &ct, NULL), WEB_E_NOT_FOUND);
		assert_ptr_equal(ct, untouched);
	}
	assert_int_equal(web_find(NULL, NULL, NULL, NULL, NULL), WEB_E_NOT_FOUND);
	assert_string_equal(web_strerror(WEB_E_NOT_FOUND), "no such file in the web page");
}

static void test_content_type(void **state)
{
	(void)state;
	assert_string_equal(web_content_type("/web/a.svg"), "image/svg+xml");
	assert_string_equal(web_content_type("/web/a.PNG"), "image/png");
	assert_string_equal(web_content_type("/web/a.json"), "application/json");
	assert_string_equal(web_content_type("/web/README"), "application/octet-stream");
	assert_string_equal(web_content_type("/we.b/README"), "application/octet-stream");
	assert_string_equal(web_content_type("/web/a.html.bak"), "application/octet-stream");
}

static void test_etag_match(void **state)
{
	(void)state;
	const char *t = "\"0123456789abcdef\"";
	assert_true(web_etag_match("\"0123456789abcdef\"", t));
	assert_true(web_etag_match("W/\"0123456789abcdef\"", t));
	assert_true(web_etag_match("\"x\", \"0123456789abcdef\"", t));
	assert_true(web_etag_match("\"x\",W/\"0123456789abcdef\" ,\"y\"", t));
	assert_true(web_etag_match("*", t));
	assert_false(web_etag_match("\"0123456789abcde\"", t));
	assert_false(web_etag_match("\"0123456789abcdef0\"", t));
	assert_false(web_etag_match("0123456789abcdef", t)); /* unquoted is not the tag */
	assert_false(web_etag_match("\"x\", \"y\"", t));
	assert_false(web_etag_match("\"0123456789abcdef", t)); /* unterminated */
	assert_false(web_etag_match("", t));
	assert_false(web_etag_match(NULL, t));
	assert_false(web_etag_match("\"a,b\"", "\"a\""));
	/* a weak tag (renders) compares weakly with the weak or strong form sent back */
	const char *w = "W/\"0123456789abcdef\"";
	assert_true(web_etag_match("W/\"0123456789abcdef\"", w));
	assert_true(web_etag_match("\"0123456789abcdef\"", w));
	assert_true(web_etag_match("\"x\", W/\"0123456789abcdef\"", w));
	assert_false(web_etag_match("W/\"0123456789abcde0\"", w));
	assert_false(web_etag_match("W/W/\"0123456789abcdef\"", w));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files_match_disk), cmocka_unit_test(test_find),
		cmocka_unit_test(test_content_type), cmocka_unit_test(test_etag_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
