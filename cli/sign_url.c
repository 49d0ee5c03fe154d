/* fftbloom sign-url: signs a GET render URL of fftbloomd (--url-signing-key-file) so that a page
 * can use it in <img src>: prints it in canonical form with sig=, the HMAC-SHA256 of the path and
 * the sorted query under the key, and optionally exp= (core/urlsign.h has the scheme;
 * docs/http-api.md shows it in Python). Only the routes the daemon checks a signature on
 * (api/operation.h operation_signed) are signed. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "core/urlsign.h"
#include "core/opts.h"
#include "api/operation.h"

struct sign_opts {
	char key_file[OPT_STR_MAX];
	int expires_in;
};

static const struct opt_def sign_table[] = {
	{"key-file", OPT_STRING, 0, 0, "", NULL,
	 "file holding the key (the daemon's --url-signing-key-file: its bytes less trailing "
	 "whitespace)", "FFTBLOOM_URL_SIGNING_KEY_FILE", offsetof(struct sign_opts, key_file)},
	{"expires-in", OPT_INT, 0, 315360000, "0", NULL,
	 "add exp= (Unix seconds): the URL is refused this many seconds from now (and 30 s of clock "
	 "skew); 0: no expiry", NULL, offsetof(struct sign_opts, expires_in)},
};
#define SIGN_TABLE_LEN (sizeof sign_table / sizeof sign_table[0])

static const char usage[] =
	"usage: fftbloom sign-url --key-file KEY [--expires-in SECONDS] URL...\n"
	"Prints each URL (GET /v1/bloom/NAME?PARAMS or /v1/convolve/NAME?PARAMS, optionally after\n"
	"http://HOST; other routes take no signature) signed, in canonical form: path + '?' + the\n"
	"parameters percent-encoded and sorted, then sig=base64url(HMAC-SHA256(key, that)).\n"
	"Quote the URL in a shell ('&'). Exit status 0 ok, 1 failure, 2 usage.\n";

int cli_sign_url(int argc, char **argv)
{
	struct sign_opts so;
	int npos;
	int pr = cli_parse("sign-url", usage, sign_table, SIGN_TABLE_LEN, &so, sizeof so, NULL, NULL,
	                   argc, argv, &npos);
	if (pr)
		return pr == 1 ? 0 : pr;
	if (!npos || !so.key_file[0]) {
		fprintf(stderr, "fftbloom sign-url: %s\n", npos ? "no --key-file" : "no URL");
		cli_usage(stderr, usage, sign_table, SIGN_TABLE_LEN);
		return 2;
	}
	unsigned char *key;
	size_t key_len;
	char err[URLSIGN_ERR_LEN];
	if (urlsign_read_key(so.key_file, &key, &key_len, err)) {
		fprintf(stderr, "fftbloom sign-url: %s\n", err);
		return 1;
	}
	int rc = 0;
	long long exp = so.expires_in ? (long long)time(NULL) + so.expires_in : 0;
	for (int i = 1; i <= npos; i++) {
		/* the path as the daemon routes it: after any scheme and host, before the query */
		const char *url = argv[i], *path = url, *scheme = strstr(url, "://");
		if (scheme && scheme < url + strcspn(url, "/?#"))
			path = scheme + 3 + strcspn(scheme + 3, "/");
		char route[256];
		snprintf(route, sizeof route, "%.*s", (int)strcspn(path, "?#"), path);
		int op = operation_signed_path(route);
		const char *query = strchr(path, '?');
		if ((op == OP_BLOOM || op == OP_CONVOLVE) &&
		    !(query && (!strncmp(query + 1, "src=", 4) || strstr(query, "&src="))))
			op = OP_NONE; /* their GET renders an origin's image: src= is what is signed */
		if (op == OP_NONE) {
			fprintf(stderr, "fftbloom sign-url: %s takes no signature: only GET /v1/bloom/NAME "
			        "and /v1/convolve/NAME (a stored image's render) and /v1/bloom?src=URL "
			        "and /v1/convolve?src=URL (an origin's) are checked against one "
			        "(other routes need the API key)\n", route[0] ? route : url);
			rc = 2;
			break;
		}
		char *out;
		int src = urlsign_sign_url(key, key_len, url, exp, &out, err);
		if (src) {
			fprintf(stderr, "fftbloom sign-url: %s\n", src == URLSIGN_E_ARG ? err :
			        urlsign_strerror(src));
			rc = src == URLSIGN_E_ARG ? 2 : 1;
			break;
		}
		printf("%s\n", out);
		free(out);
	}
	free(key);
	return rc;
}
