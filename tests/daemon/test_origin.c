/* The origin fetcher's checks without a network (daemon/origin): which addresses are refused
 * (v4, v6, v4-mapped, NAT64, 6to4, each range's edges), which URLs are refused before any
 * connection (schemes, userinfo, fragments, numeric host forms, encoded dots, the allow list's
 * scheme, host, port and prefix), the allow list's own parsing; and the result cache
 * (daemon/result_cache): stored answers read back byte for byte, least recently used evicted
 * first within the bound, the index rebuilt from the folder, two handles (as two processes)
 * sharing one folder, writers on several threads, and damaged files (cut, changed, of an older
 * format) read as misses and removed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/origin.h"
#include "daemon/result_cache.h"

static const char *refused(const char *text)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	if (strchr(text, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, text, &a->sin6_addr), 1);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, text, &a->sin_addr), 1);
	}
	return origin_address_refused((struct sockaddr *)&ss);
}

static void expect_addr(const char *text, const char *why)
{
	const char *got = refused(text);
	if (why ? !got || strcmp(got, why) : got != NULL)
		fail_msg("%s: '%s', expected '%s'", text, got ? got : "(allowed)", why ? why : "(allowed)");
}

static void test_addresses(void **state)
{
	(void)state;
	expect_addr("127.0.0.1", "loopback");
	expect_addr("127.255.255.254", "loopback");
	expect_addr("0.0.0.0", "unspecified");
	expect_addr("10.1.2.3", "private");
	expect_addr("172.16.0.1", "private");
	expect_addr("172.31.255.255", "private");
	expect_addr("172.32.0.1", NULL);
	expect_addr("172.15.255.255", NULL);
	expect_addr("192.168.1.1", "private");
	expect_addr("100.64.0.1", "private");
	expect_addr("100.128.0.1", NULL);
	expect_addr("169.254.169.254", "link-local");
	expect_addr("224.0.0.1", "multicast");
	expect_addr("239.255.255.255", "multicast");
	expect_addr("255.255.255.255", "reserved");
	expect_addr("240.0.0.1", "reserved");
	expect_addr("192.0.2.1", "reserved");
	expect_addr("198.18.0.1", "reserved");
	expect_addr("8.8.8.8", NULL);
	expect_addr("93.184.216.34", NULL);
	expect_addr("::", "unspecified");
	expect_addr("::1", "loopback");
	expect_addr("::ffff:127.0.0.1", "loopback");
	expect_addr("::ffff:10.0.0.1", "private");
	expect_addr("::ffff:8.8.8.8", NULL);
	expect_addr("::127.0.0.1", "loopback");  /* v4-compatible */
	expect_addr("::8.8.8.8", "reserved");
	expect_addr("64:ff9b::a9fe:a9fe", "link-local"); /* NAT64 of 169.254.169.254 */
	expect_addr("2002:7f00:1::1", "loopback"); /* 6to4 of 127.0.0.1 */
	expect_addr("fc00::1", "private");
	expect_addr("fd12:3456::1", "private");
	expect_addr("fe80::1", "link-local");
	expect_addr("febf::1", "link-local");
	expect_addr("fec0::1", "private");
	expect_addr("ff02::1", "multicast");
	expect_addr("2001:db8::1", "reserved");
	expect_addr("2606:4700:4700::1111", NULL);
	expect_addr("2a00:1450:4001::1", NULL);
}

static struct origin *make(const char *allow)
{
	struct origin_opts o = {.allow = allow, .connect_timeout = 1, .timeout = 2,
	                        .max_bytes = 1 << 20, .concurrency = 1, .queue = 1};
	struct origin *or = NULL;
	char err[ORIGIN_ERR_LEN];
	int rc = origin_create(&o, &or, err);
	if (rc)
		fail_msg("origin_create(%s): %d %s", allow, rc, err);
	return or;
}

static void expect_url(struct origin *o, const char *url, int code, int explicit_ip)
{
	char err[ORIGIN_ERR_LEN] = "";
	int ip = -1;
	int rc = origin_check_url(o, url, &ip, err);
	printf("%-50s -> %d %s\n", url, rc, err);
	if (rc != code)
		fail_msg("%s: %d (%s), expected %d", url, rc, err, code);
	if (!rc && ip != explicit_ip)
		fail_msg("%s: explicit_ip %d, expected %d", url, ip, explicit_ip);
	if (rc && !err[0])
		fail_msg("%s: refused without a message", url);
}

static void test_urls(void **state)
{
	(void)state;
	struct origin *off = make("");
	assert_false(origin_enabled(off));
	expect_url(off, "http://example.com/a.png", ORIGIN_E_OFF, 0);
	origin_destroy(off);

	struct origin *o = make("https://img.example.com/photos/, http://127.0.0.1:8081/img/ "
	                        "http://[::1]:8082/");
	assert_true(origin_enabled(o));
	expect_url(o, "https://img.example.com/photos/a.jpg", 0, 0);
	expect_url(o, "https://IMG.example.com/photos/a.jpg?w=1", 0, 0);
	expect_url(o, "https://img.example.com:443/photos/a.jpg", 0, 0);
	expect_url(o, "http://img.example.com/photos/a.jpg", ORIGIN_E_NOT_ALLOWED, 0);
	expect_url(o, "https://img.example.com:8443/photos/a.jpg", ORIGIN_E_NOT_ALLOWED, 0);
	expect_url(o, "https://img.example.com/other/a.jpg", ORIGIN_E_NOT_ALLOWED, 0);
	expect_url(o, "https://img.example.com/photos/../secret", ORIGIN_E_NOT_ALLOWED, 0);
	expect_url(o, "https://img.example.com/photos/%2e%2e/secret", ORIGIN_E_URL, 0);
	expect_url(o, "https://img.example.com/photos/..%2Fsecret", ORIGIN_E_URL, 0);
	expect_url(o, "https://img.example.com.evil.net/photos/a.jpg", ORIGIN_E_NOT_ALLOWED, 0);
	expect_url(o, "http://127.0.0.1:8081/img/a.png", 0, 1);
	expect_url(o, "http://127.0.0.1:8081/secret", ORIGIN_E_NOT_ALLOWED, 0);
	expect_url(o, "http://[::1]:8082/a.png", 0, 1);
	/* userinfo and fragment tricks, numbers in other forms, other schemes */
	expect_url(o, "http://img.example.com@127.0.0.1:8081/img/a.png", ORIGIN_E_URL, 0);
	expect_url(o, "https://img.example.com/photos/a.jpg@evil.net", 0, 0); /* a path */
	expect_url(o, "http://127.0.0.1#@img.example.com/photos/", ORIGIN_E_URL, 0);
	expect_url(o, "http://2130706433:8081/img/a.png", ORIGIN_E_URL, 0);
	expect_url(o, "http://0177.0.0.1:8081/img/a.png", ORIGIN_E_URL, 0);
	expect_url(o, "http://0x7f.1:8081/img/a.png", ORIGIN_E_URL, 0);
	expect_url(o, "http://0x7f000001:8081/img/a.png", ORIGIN_E_URL, 0);
	expect_url(o, "http://127.1:8081/img/a.png", ORIGIN_E_URL, 0);
	expect_url(o, "http://127.0.0.1.:8081/img/a.png", ORIGIN_E_URL, 0);
	expect_url(o, "http://[::ffff:127.0.0.1]:8081/img/a.png", ORIGIN_E_NOT_ALLOWED, 0);
	expect_url(o, "http://[0:0:0:0:0:0:0:1]:8082/a.png", 0, 1); /* the same address as [::1] */
	expect_url(o, "http://localhost:8081/img/a.png", ORIGIN_E_NOT_ALLOWED, 0);
	expect_url(o, "file:///etc/passwd", ORIGIN_E_URL, 0);
	expect_url(o, "gopher://127.0.0.1:8081/img/", ORIGIN_E_URL, 0);
	expect_url(o, "dict://127.0.0.1:8081/img/", ORIGIN_E_URL, 0);
	expect_url(o, "ftp://img.example.com/photos/a.jpg", ORIGIN_E_URL, 0);
	expect_url(o, "//img.example.com/photos/a.jpg", ORIGIN_E_URL, 0);
	expect_url(o, "https:\\\\img.example.com\\photos\\a.jpg", ORIGIN_E_URL, 0);
	expect_url(o, "http:///img/a.png", ORIGIN_E_URL, 0);
	origin_destroy(o);
}

static void test_allow_list(void **state)
{
	(void)state;
	static const char *bad[] = {"ftp://a.example/", "http://user@a.example/",
	                            "http://a.example/?q=1", "a.example/img/", "http://0x7f.1/",
	                            "http://a.example/#x"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct origin_opts opts = {.allow = bad[i], .connect_timeout = 1, .timeout = 1,
		                           .max_bytes = 1024, .concurrency = 1, .queue = 0};
		struct origin *o = NULL;
		char err[ORIGIN_ERR_LEN] = "";
		int rc = origin_create(&opts, &o, err);
		printf("--origin-allow %s -> %d %s\n", bad[i], rc, err);
		assert_int_equal(rc, ORIGIN_E_URL);
		assert_null(o);
		assert_non_null(strstr(err, "origin-allow"));
	}
}

/* ---- result cache ---- */

static char dir[256];

static int setup_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/fftbloom-rc-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	(void)state;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char p[600];
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		if (de->d_name[0] != '.' || strlen(de->d_name) > 2)
			unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	return 0;
}

static void key_of(int i, char key[RESULT_CACHE_KEY_LEN + 1])
{
	for (int k = 0; k < RESULT_CACHE_KEY_LEN; k++)
		key[k] = "0123456789abcdef"[(i * 7 + k * 13 + (k == 0 ? i : 0)) & 15];
	snprintf(key + RESULT_CACHE_KEY_LEN - 8, 9, "%08x", (unsigned)i);
}

static unsigned char *payload(int i, size_t n)
{
	unsigned char *b = malloc(n);
	unsigned s = 2166136261u ^ (unsigned)i;
	for (size_t k = 0; k < n; k++) {
		s = s * 16777619u + 12345u;
		b[k] = (unsigned char)(s >> 24);
	}
	return b;
}

static void put(struct result_cache *c, int i, size_t n)
{
	char key[RESULT_CACHE_KEY_LEN + 1];
	key_of(i, key);
	unsigned char *b = payload(i, n);
	struct result_meta m = {"image/png", ""};
	snprintf(m.lost, sizeof m.lost, "%s", i % 2 ? "range" : "");
	assert_int_equal(result_cache_put(c, key, b, n, &m), 0);
	free(b);
}

/* 1 when entry i reads back as written. */
static int has(struct result_cache *c, int i, size_t n)
{
	char key[RESULT_CACHE_KEY_LEN + 1];
	key_of(i, key);
	unsigned char *body;
	size_t len;
	struct result_meta m;
	if (!result_cache_get(c, key, &body, &len, &m))
		return 0;
	unsigned char *want = payload(i, n);
	assert_int_equal(len, n);
	assert_memory_equal(body, want, n);
	assert_string_equal(m.content_type, "image/png");
	assert_string_equal(m.lost, i % 2 ? "range" : "");
	free(want);
	free(body);
	return 1;
}

static void touch_age(int i, int seconds_ago)
{
	char key[RESULT_CACHE_KEY_LEN + 1], p[600];
	key_of(i, key);
	snprintf(p, sizeof p, "%s/%s", dir, key);
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= seconds_ago;
	t[1] = t[0];
	assert_int_equal(utimensat(AT_FDCWD, p, t, 0), 0);
}

static void test_cache_roundtrip_and_lru(void **state)
{
	(void)state;
	struct result_cache *c;
	char err[RESULT_CACHE_ERR_LEN];
	const size_t n = 100000;
	/* room for 10 answers of n bytes (and their headers, about 110 bytes each), not 11 */
	assert_int_equal(result_cache_open(dir, 10 * n + 1500, &c, err), 0);
	for (int i = 0; i < 10; i++) {
		put(c, i, n);
		touch_age(i, 100 - i); /* 0 the least recently used */
	}
	for (int i = 0; i < 10; i++)
		assert_true(has(c, i, n));
	/* the reads above made every one recently used, in order 0..9: age them again, with 3
	 * used last */
	for (int i = 0; i < 10; i++)
		touch_age(i, 100 - i);
	touch_age(3, 0);
	put(c, 10, n); /* past the bound: evicts down to 90%: the two least recently used, 0, 1 */
	struct result_cache_stats st;
	result_cache_stats(c, &st);
	printf("after the 11th: %zu entries, %llu bytes, %llu evictions\n", st.entries, st.bytes,
	       st.evictions);
	assert_true(st.bytes <= 10 * n + 1500);
	assert_int_equal(st.evictions, 2);
	assert_false(has(c, 0, n));
	assert_false(has(c, 1, n));
	for (int i = 2; i <= 10; i++)
		assert_true(has(c, i, n));
	/* an answer alone larger than the bound is not kept */
	put(c, 11, 11 * n);
	assert_false(has(c, 11, 11 * n));
	/* a malformed key is never a file */
	unsigned char *body;
	size_t len;
	struct result_meta m;
	assert_int_equal(result_cache_get(c, "../../etc/passwd", &body, &len, &m), 0);
	result_cache_close(c);

	/* reopened (a restart): the index is rebuilt from the folder */
	assert_int_equal(result_cache_open(dir, 10 * n + 1500, &c, err), 0);
	result_cache_stats(c, &st);
	assert_int_equal(st.entries, 9);
	for (int i = 2; i <= 10; i++)
		assert_true(has(c, i, n));
	result_cache_close(c);
	/* reopened with a smaller bound: evicted down to it at once */
	assert_int_equal(result_cache_open(dir, 4 * n + 1500, &c, err), 0);
	result_cache_stats(c, &st);
	printf("reopened at 4 answers' bytes: %zu entries, %llu bytes\n", st.entries, st.bytes);
	assert_true(st.bytes <= 4 * n + 1500);
	result_cache_close(c);
}

/* The path of entry i's file into p. */
static void entry_path(int i, char *p, size_t cap)
{
	char key[RESULT_CACHE_KEY_LEN + 1];
	key_of(i, key);
	snprintf(p, cap, "%s/%s", dir, key);
}

static void test_cache_damaged(void **state)
{
	(void)state;
	/* a damaged file is a miss and is removed: cut to any length (in the body, at the header's
	 * end, inside the header, empty), a body byte changed (the length still right), an older
	 * format's file; the key is then stored and read again as usual */
	struct result_cache *c;
	char err[RESULT_CACHE_ERR_LEN], p[600];
	const size_t n = 3001;
	assert_int_equal(result_cache_open(dir, 1 << 22, &c, err), 0);
	put(c, 1, n);
	entry_path(1, p, sizeof p);
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	off_t whole = st.st_size, head = whole - (off_t)n;
	printf("entry: %lld bytes, header %lld\n", (long long)whole, (long long)head);
	const off_t cuts[] = {whole - 1, whole / 2 + head, head, head - 1, 10, 0};
	for (size_t k = 0; k < sizeof cuts / sizeof *cuts; k++) {
		put(c, 1, n);
		assert_true(has(c, 1, n));
		assert_int_equal(truncate(p, cuts[k]), 0);
		assert_false(has(c, 1, n));
		assert_int_equal(access(p, F_OK), -1); /* removed */
	}
	put(c, 1, n);
	int fd = open(p, O_RDWR);
	assert_true(fd >= 0);
	unsigned char byte;
	assert_int_equal(pread(fd, &byte, 1, head + 77), 1);
	byte ^= 0x20;
	assert_int_equal(pwrite(fd, &byte, 1, head + 77), 1);
	close(fd);
	assert_false(has(c, 1, n));
	assert_int_equal(access(p, F_OK), -1);
	FILE *f = fopen(p, "w"); /* version 1: no length, no digest */
	assert_non_null(f);
	fputs("fftbloom result 1\nimage/png\nrange\nshort", f);
	fclose(f);
	assert_false(has(c, 1, n));
	assert_int_equal(access(p, F_OK), -1);
	put(c, 1, n);
	assert_true(has(c, 1, n));
	struct result_cache_stats s;
	result_cache_stats(c, &s);
	printf("after: %zu entries, %llu bytes, %llu hits, %llu misses\n", s.entries, s.bytes,
	       s.hits, s.misses);
	assert_int_equal(s.entries, 1);
	assert_int_equal(s.bytes, (unsigned long long)whole);
	assert_int_equal(s.misses, 8);
	result_cache_close(c);
}

struct writer {
	struct result_cache *c;
	int first;
};

static void *write_many(void *arg)
{
	struct writer *w = arg;
	for (int i = 0; i < 40; i++)
		put(w->c, w->first + (i % 20), 5000 + (size_t)(w->first + i % 20));
	return NULL;
}

static void test_cache_shared(void **state)
{
	(void)state;
	/* two handles on one folder, as two daemon processes, each with two writer threads
	 * writing the same keys: every read sees a whole answer */
	struct result_cache *a, *b;
	char err[RESULT_CACHE_ERR_LEN];
	assert_int_equal(result_cache_open(dir, 1 << 22, &a, err), 0);
	assert_int_equal(result_cache_open(dir, 1 << 22, &b, err), 0);
	pthread_t t[4];
	struct writer w[4] = {{a, 100}, {a, 100}, {b, 100}, {b, 110}};
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, write_many, &w[i]), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int i = 100; i < 130; i++) {
		assert_true(has(a, i, 5000 + (size_t)i));
		assert_true(has(b, i, 5000 + (size_t)i));
	}
	/* no temporary file is left */
	DIR *d = opendir(dir);
	struct dirent *de;
	int tmp = 0;
	while ((de = readdir(d)))
		tmp += !strncmp(de->d_name, ".tmp-", 5);
	closedir(d);
	assert_int_equal(tmp, 0);
	result_cache_close(a);
	result_cache_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_allow_list),
		cmocka_unit_test_setup_teardown(test_cache_roundtrip_and_lru, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_cache_shared, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_cache_damaged, setup_dir, teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
