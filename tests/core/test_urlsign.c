/* Signed render URLs (daemon/urlsign): HMAC-SHA256 through GnuTLS against RFC 4231's test
 * vectors, base64url against RFC 4648's, the canonical string, verification (a changed
 * parameter, path or signature fails; the parameters' order and encoding do not matter), signing
 * a URL as text, and key files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/urlsign.h"

static void hex(const unsigned char *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* RFC 4231 section 4: HMAC-SHA-256 test cases 1-7 (case 5 truncated to 128 bits). */
static void test_rfc4231(void **state)
{
	(void)state;
	unsigned char k1[20], k3[20], d3[50], k4[25], d4[50], k5[20], k6[131];
	memset(k1, 0x0b, sizeof k1);
	memset(k3, 0xaa, sizeof k3);
	memset(d3, 0xdd, sizeof d3);
	for (int i = 0; i < 25; i++)
		k4[i] = (unsigned char)(i + 1);
	memset(d4, 0xcd, sizeof d4);
	memset(k5, 0x0c, sizeof k5);
	memset(k6, 0xaa, sizeof k6);
	static const char d7[] = "This is a test using a larger than block-size key and a larger than "
	                         "block-size data. The key needs to be hashed before being used by "
	                         "the HMAC algorithm.";
	const struct {
		const void *key;
		size_t klen;
		const void *data;
		size_t dlen;
		const char *mac;
	} tc[] = {
		{k1, 20, "Hi There", 8,
		 "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
		{"Jefe", 4, "what do ya want for nothing?", 28,
		 "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{k3, 20, d3, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
		{k4, 25, d4, 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
		{k5, 20, "Test With Truncation", 20, "a3b6167473100ee06e0c796c2955552b"},
		{k6, 131, "Test Using Larger Than Block-Size Key - Hash Key First", 54,
		 "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
		{k6, 131, d7, strlen(d7),
		 "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
	};
	for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++) {
		unsigned char mac[32];
		char h[65];
		assert_int_equal(urlsign_hmac(tc[i].key, tc[i].klen, tc[i].data, tc[i].dlen, mac), 0);
		hex(mac, 32, h);
		printf("RFC 4231 case %zu: %s\n", i + 1, h);
		assert_memory_equal(h, tc[i].mac, strlen(tc[i].mac));
	}
}

/* RFC 4648 section 10's vectors, unpadded, and the two characters base64url changes. */
static void test_base64url(void **state)
{
	(void)state;
	const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	const char *want[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
	char out[16];
	for (size_t i = 0; i < 7; i++) {
		urlsign_base64url((const unsigned char *)in[i], strlen(in[i]), out);
		assert_string_equal(out, want[i]);
	}
	const unsigned char b[] = {0xfb, 0xff, 0xbf};
	urlsign_base64url(b, 3, out);
	assert_string_equal(out, "-_-_"); /* base64: "+/+/" */
	unsigned char mac[32];
	char sig[URLSIGN_SIG_LEN + 1];
	memset(mac, 0xff, sizeof mac);
	urlsign_base64url(mac, 32, sig);
	assert_int_equal(strlen(sig), URLSIGN_SIG_LEN);
}

static void test_canonical(void **state)
{
	(void)state;
	struct urlsign_param p[] = {
		{"threshold", "0.5"}, {"sig", "ignored"}, {"kernel_preset", "glare:streaks=6"},
		{"a b", "c+d/é"}, {"flag", NULL}, {"z~._-", ""},
	};
	char *s;
	assert_int_equal(urlsign_canonical("/v1/bloom/x", p, 6, &s), 0);
	printf("canonical: %s\n", s);
	assert_string_equal(s, "/v1/bloom/x?a%20b=c%2Bd%2F%C3%A9&flag=&kernel_preset=glare%3A"
	                       "streaks%3D6&threshold=0.5&z~._-=");
	free(s);
	/* order does not matter */
	struct urlsign_param q[] = {{"z~._-", ""}, {"flag", ""}, {"threshold", "0.5"},
	                            {"a b", "c+d/é"}, {"kernel_preset", "glare:streaks=6"}};
	char *t;
	assert_int_equal(urlsign_canonical("/v1/bloom/x", q, 5, &t), 0);
	assert_int_equal(urlsign_canonical("/v1/bloom/x", p, 6, &s), 0);
	assert_string_equal(s, t);
	free(s);
	free(t);
	/* sorted as NAME=VALUE byte strings: "a-b=" before "a=" ('-' < '=') */
	struct urlsign_param r[] = {{"a", "1"}, {"a-b", "2"}};
	assert_int_equal(urlsign_canonical("/p", r, 2, &s), 0);
	assert_string_equal(s, "/p?a-b=2&a=1");
	free(s);
	/* no parameters besides sig: the path alone */
	assert_int_equal(urlsign_canonical("/v1/convolve/y", p + 1, 1, &s), 0);
	assert_string_equal(s, "/v1/convolve/y");
	free(s);
	struct urlsign_param many[URLSIGN_MAX_PARAMS + 1];
	for (int i = 0; i <= URLSIGN_MAX_PARAMS; i++)
		many[i] = (struct urlsign_param){"a", "b"};
	assert_int_equal(urlsign_canonical("/p", many, URLSIGN_MAX_PARAMS + 1, &s), URLSIGN_E_ARG);
	assert_null(s);
}

static void test_verify(void **state)
{
	(void)state;
	const char key[] = "0123456789abcdef0123456789abcdef";
	struct urlsign_param p[4] = {{"threshold", "0.5"}, {"kernel", "star"}, {"sig", NULL}, {0}};
	char sig[URLSIGN_SIG_LEN + 1];
	assert_int_equal(urlsign_sign(key, 32, "/v1/bloom/img", p, 2, sig), 0);
	p[2].value = sig;
	assert_int_equal(urlsign_verify(key, 32, "/v1/bloom/img", p, 3), 0);
	assert_int_equal(urlsign_verify(key, 32, "/v1/bloom/img", p, 2), URLSIGN_E_MISSING);
	assert_int_equal(urlsign_verify(key, 32, "/v1/bloom/imh", p, 3), URLSIGN_E_BAD);
	assert_int_equal(urlsign_verify(key, 32, "/v1/convolve/img", p, 3), URLSIGN_E_BAD);
	assert_int_equal(urlsign_verify(key, 31, "/v1/bloom/img", p, 3), URLSIGN_E_BAD);
	p[0].value = "0.6";
	assert_int_equal(urlsign_verify(key, 32, "/v1/bloom/img", p, 3), URLSIGN_E_BAD);
	p[0].value = "0.5";
	p[3] = (struct urlsign_param){"sig", sig}; /* twice */
	assert_int_equal(urlsign_verify(key, 32, "/v1/bloom/img", p, 4), URLSIGN_E_BAD);
	char cut[URLSIGN_SIG_LEN + 1];
	memcpy(cut, sig, sizeof cut);
	cut[URLSIGN_SIG_LEN - 1] = 0; /* a prefix of the right signature */
	p[2].value = cut;
	assert_int_equal(urlsign_verify(key, 32, "/v1/bloom/img", p, 3), URLSIGN_E_BAD);
	cut[URLSIGN_SIG_LEN - 1] = sig[URLSIGN_SIG_LEN - 1] == 'A' ? 'B' : 'A';
	assert_int_equal(urlsign_verify(key, 32, "/v1/bloom/img", p, 3), URLSIGN_E_BAD);
	p[2].value = "";
	assert_int_equal(urlsign_verify(key, 32, "/v1/bloom/img", p, 3), URLSIGN_E_BAD);
}

/* Signing a URL as text: the signature covers the decoded parameters, so it equals the one of
 * the parameters as a server decodes them. */
static void test_sign_url(void **state)
{
	(void)state;
	const char key[] = "a key of twenty bytes";
	size_t kl = strlen(key);
	char err[URLSIGN_ERR_LEN], *out;
	assert_int_equal(urlsign_sign_url(key, kl, "/v1/bloom/img?kernel_preset=glare%3Astreaks%3D6"
	                                  "&threshold=0.5&x=a+b%2Bc%zz", 0, &out, err), 0);
	printf("signed: %s\n", out);
	struct urlsign_param p[] = {{"threshold", "0.5"}, {"kernel_preset", "glare:streaks=6"},
	                            {"x", "a b+c%zz"}};
	char sig[URLSIGN_SIG_LEN + 1];
	assert_int_equal(urlsign_sign(key, kl, "/v1/bloom/img", p, 3, sig), 0);
	const char *at = strstr(out, "&sig=");
	assert_non_null(at);
	assert_string_equal(at + 5, sig);
	/* printed in canonical form: sorted, every name and value encoded one way */
	char want0[200];
	snprintf(want0, sizeof want0, "/v1/bloom/img?kernel_preset=glare%%3Astreaks%%3D6&"
	         "threshold=0.5&x=a%%20b%%2Bc%%25zz&sig=%s", sig);
	assert_string_equal(out, want0);
	free(out);
	/* with scheme and host; a URL without a query gets ?sig= */
	assert_int_equal(urlsign_sign_url(key, kl, "https://cdn.example:8443/v1/convolve/a.b", 0, &out,
	                                  err), 0);
	assert_int_equal(urlsign_sign("a key of twenty bytes", kl, "/v1/convolve/a.b", NULL, 0, sig),
	                 0);
	char want[200];
	snprintf(want, sizeof want, "https://cdn.example:8443/v1/convolve/a.b?sig=%s", sig);
	assert_string_equal(out, want);
	free(out);
	/* a query that is only '?' */
	assert_int_equal(urlsign_sign_url(key, kl, "/v1/convolve/a.b?", 0, &out, err), 0);
	snprintf(want, sizeof want, "/v1/convolve/a.b?sig=%s", sig);
	assert_string_equal(out, want);
	free(out);
	const char *bad[] = {"v1/bloom/x", "http://host", "/v1/bloom/x?a=1&sig=abc",
	                     "/v1/bloom/x?a=1#frag"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(urlsign_sign_url(key, kl, bad[i], 0, &out, err), URLSIGN_E_ARG);
		printf("'%s': %s\n", bad[i], err);
		assert_null(out);
	}
}

/* exp: signed like any parameter, added by sign_url, checked with URLSIGN_EXP_SKEW s of skew. */
static void test_expiry(void **state)
{
	(void)state;
	const char key[] = "a key of twenty bytes";
	size_t kl = strlen(key);
	char err[URLSIGN_ERR_LEN], *out;
	assert_int_equal(urlsign_sign_url(key, kl, "http://h:1/v1/bloom/i?threshold=0.5", 1700000000,
	                                  &out, err), 0);
	printf("with exp: %s\n", out);
	struct urlsign_param p[] = {{"threshold", "0.5"}, {"exp", "1700000000"}, {"sig", NULL}};
	char sig[URLSIGN_SIG_LEN + 1], want[200];
	assert_int_equal(urlsign_sign(key, kl, "/v1/bloom/i", p, 2, sig), 0);
	snprintf(want, sizeof want, "http://h:1/v1/bloom/i?exp=1700000000&threshold=0.5&sig=%s", sig);
	assert_string_equal(out, want);
	free(out);
	p[2].value = sig;
	assert_int_equal(urlsign_verify(key, kl, "/v1/bloom/i", p, 3), 0);
	p[1].value = "1700000001"; /* exp moved: the signature no longer matches */
	assert_int_equal(urlsign_verify(key, kl, "/v1/bloom/i", p, 3), URLSIGN_E_BAD);
	/* an exp given already is refused when sign_url adds one */
	assert_int_equal(urlsign_sign_url(key, kl, "/v1/bloom/i?exp=5", 9, &out, err), URLSIGN_E_ARG);
	assert_null(out);
	assert_int_equal(urlsign_sign_url(key, kl, "/v1/bloom/i?exp=5", 0, &out, err), 0);
	free(out);
	/* the rule: exp + skew >= now */
	struct urlsign_param e[] = {{"a", "1"}, {"exp", "1000"}};
	assert_int_equal(urlsign_check_expiry(e, 2, 999, 0), 0);
	assert_int_equal(urlsign_check_expiry(e, 2, 1000 + URLSIGN_EXP_SKEW, 0), 0);
	assert_int_equal(urlsign_check_expiry(e, 2, 1000 + URLSIGN_EXP_SKEW + 1, 1), URLSIGN_E_EXPIRED);
	assert_int_equal(urlsign_check_expiry(e, 1, 5000, 0), 0);
	assert_int_equal(urlsign_check_expiry(e, 1, 5000, 1), URLSIGN_E_NO_EXP);
	const char *bad[] = {"", "-1", "+5", "1e3", "0x10", "12.5", " 1", "9999999999999999999"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		e[1].value = bad[i];
		assert_int_equal(urlsign_check_expiry(e, 2, 0, 0), URLSIGN_E_EXP);
	}
	struct urlsign_param twice[] = {{"exp", "2000"}, {"exp", "3000"}};
	assert_int_equal(urlsign_check_expiry(twice, 2, 0, 0), URLSIGN_E_EXP);
}

static void test_read_key(void **state)
{
	(void)state;
	char path[] = "/tmp/fftbloom-urlsign-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("0123456789abcdef\r\n \n", f);
	fclose(f);
	unsigned char *k;
	size_t n;
	char err[URLSIGN_ERR_LEN];
	assert_int_equal(urlsign_read_key(path, &k, &n, err), 0);
	assert_int_equal(n, 16);
	assert_memory_equal(k, "0123456789abcdef", 16);
	free(k);
	f = fopen(path, "w");
	fputs("short key\n", f);
	fclose(f);
	assert_int_equal(urlsign_read_key(path, &k, &n, err), URLSIGN_E_KEY);
	printf("%s\n", err);
	assert_null(k);
	unlink(path);
	assert_int_equal(urlsign_read_key(path, &k, &n, err), URLSIGN_E_KEY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc4231),   cmocka_unit_test(test_base64url),
		cmocka_unit_test(test_canonical), cmocka_unit_test(test_verify),
		cmocka_unit_test(test_sign_url),  cmocka_unit_test(test_read_key),
		cmocka_unit_test(test_expiry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
