/* Signed URLs for the GET render routes (imgproxy's scheme, carried in the query), so that a page
 * can put a render URL in <img src> while nobody else can make the daemon render: the query holds
 * sig = base64url(HMAC-SHA256(key, canonical)), unpadded, where canonical is the URL's path, then,
 * when the query has parameters besides sig, '?' and those parameters as NAME=VALUE items (each
 * name and value percent-encoded: every byte but A-Z a-z 0-9 - . _ ~ as %XX with upper-case hex),
 * sorted as byte strings and joined with '&'. Names and values are taken decoded (%XX a byte, '+'
 * a space, as libmicrohttpd decodes them), so any encoding of the same parameters verifies.
 * A URL may carry exp=, Unix seconds after which it is refused; it is one of the parameters the
 * signature covers, so it cannot be added, moved or removed. Pure code over GnuTLS's HMAC: the
 * daemon verifies, `fftbloom sign-url` signs. */
#ifndef FFTBLOOM_URLSIGN_H
#define FFTBLOOM_URLSIGN_H

#include <stddef.h>

#define URLSIGN_SIG_LEN 43     /* base64url of 32 bytes, unpadded */
#define URLSIGN_KEY_MIN 16     /* bytes of key at least */
#define URLSIGN_MAX_PARAMS 64  /* query parameters of a signed URL at most */
#define URLSIGN_ERR_LEN 256
/* Seconds past exp a URL still verifies: the signer's clock and the daemon's may differ. */
#define URLSIGN_EXP_SKEW 30

enum urlsign_error {
	URLSIGN_OK = 0,
	URLSIGN_E_ARG = -1,     /* a bad URL, key or parameter count */
	URLSIGN_E_NOMEM = -2,
	URLSIGN_E_CRYPTO = -3,  /* GnuTLS refused the HMAC */
	URLSIGN_E_MISSING = -4, /* no sig parameter */
	URLSIGN_E_BAD = -5,     /* a sig that does not match, or sig given twice */
	URLSIGN_E_KEY = -6,     /* the key file cannot be read, or holds fewer than URLSIGN_KEY_MIN bytes */
	URLSIGN_E_EXPIRED = -7, /* exp is more than URLSIGN_EXP_SKEW seconds past */
	URLSIGN_E_NO_EXP = -8,  /* exp required and absent */
	URLSIGN_E_EXP = -9,     /* exp not Unix seconds (a decimal integer), or given twice */
};

/* One query parameter as decoded. value NULL (a parameter without '=') counts as "". */
struct urlsign_param {
	const char *name;
	const char *value;
};

/* The string a signature covers for path and params (those named "sig" are left out), into a
 * malloc'd *out. Returns 0, URLSIGN_E_ARG (more than URLSIGN_MAX_PARAMS) or URLSIGN_E_NOMEM. */
int urlsign_canonical(const char *path, const struct urlsign_param *p, size_t n, char **out);

/* base64url (RFC 4648 section 5) of n bytes, without padding, NUL-terminated: out holds
 * (4 * n + 2) / 3 + 1 bytes. */
void urlsign_base64url(const unsigned char *in, size_t n, char *out);

/* HMAC-SHA256 (RFC 2104) of msg under key into mac. Returns 0 or URLSIGN_E_CRYPTO. */
int urlsign_hmac(const void *key, size_t key_len, const void *msg, size_t msg_len,
                 unsigned char mac[32]);

/* The signature of path and params (sig excluded) as base64url. Returns 0 or a negative code. */
int urlsign_sign(const void *key, size_t key_len, const char *path, const struct urlsign_param *p,
                 size_t n, char sig[URLSIGN_SIG_LEN + 1]);

/* A request's signature check: 0 when params hold exactly one sig and it is the signature of path
 * and the other params (compared in constant time); URLSIGN_E_MISSING when there is none,
 * URLSIGN_E_BAD when it differs or is given twice, other negative codes on failure. */
int urlsign_verify(const void *key, size_t key_len, const char *path,
                   const struct urlsign_param *p, size_t n);

/* The expiry rule of a signed URL's params (verified before) at now, Unix seconds: 0 when
 * params have no exp and require is 0, or exp + URLSIGN_EXP_SKEW >= now; URLSIGN_E_EXPIRED
 * past it, URLSIGN_E_NO_EXP without exp when require is set, URLSIGN_E_EXP for an exp that is
 * not one decimal integer. */
int urlsign_check_expiry(const struct urlsign_param *p, size_t n, long long now, int require);

/* Signs a URL given as text: "/v1/bloom/NAME?threshold=0.5", or with a scheme and host. Its path
 * and query are decoded as the server decodes them; exp > 0 adds exp=EXP to the parameters.
 * *out (malloc'd) is the scheme and host as given, then the canonical string and "&sig=..."
 * ("?sig=..." without parameters): the URL a server verifies, in one spelling. Returns 0, or
 * URLSIGN_E_ARG with the reason in err (no path; a fragment; a sig already there; exp there
 * when exp > 0; too many parameters). */
int urlsign_sign_url(const void *key, size_t key_len, const char *url, long long exp, char **out,
                     char err[URLSIGN_ERR_LEN]);

/* Reads a key file: its bytes less trailing whitespace (spaces, tabs, CR, LF), at least
 * URLSIGN_KEY_MIN of them, into a malloc'd *key. Returns 0 or URLSIGN_E_KEY with err. */
int urlsign_read_key(const char *path, unsigned char **key, size_t *len, char err[URLSIGN_ERR_LEN]);

const char *urlsign_strerror(int code);

/* Compares a presented secret (a signature, an API key) with the expected one in time that
 * depends only on the expected one's length, not on where they differ. 1 when equal; an empty
 * expected secret never matches. */
int urlsign_equal(const char *given, size_t given_len, const char *expected, size_t expected_len);

#endif
