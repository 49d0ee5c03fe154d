/* fftbloom sign-url: signs a GET render URL of fftbloomd (--url-signing-key-file) so that a page
 * can use it in <img src>: appends sig=, the HMAC-SHA256 of the path and the sorted query under
 * the key (core/urlsign.h has the scheme; the README shows it in Python). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "core/urlsign.h"
#include "core/opts.h"

struct sign_opts {
	char key_file[OPT_STR_MAX];
};

static const struct opt_def sign_table[] = {
	{"key-file", OPT_STRING, 0, 0, "", NULL,
	 "file holding the key (the daemon's --url-signing-key-file: its bytes less trailing "
	 "whitespace)", "FFTBLOOM_URL_SIGNING_KEY_FILE", offsetof(struct sign_opts, key_file)},
};
#define SIGN_TABLE_LEN (sizeof sign_table / sizeof sign_table[0])

static const char usage[] =
	"usage: fftbloom sign-url --key-file KEY URL...\n"
	"Prints each URL (/v1/bloom/NAME?PARAMS or /v1/convolve/NAME?PARAMS, optionally after\n"
	"http://HOST) with sig= appended: base64url(HMAC-SHA256(key, path + '?' + the\n"
	"parameters, percent-encoded and sorted)). Quote the URL in a shell ('&').\n"
	"Exit status 0 ok, 1 failure, 2 usage.\n";

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
	for (int i = 1; i <= npos; i++) {
		char *out;
		int src = urlsign_sign_url(key, key_len, argv[i], &out, err);
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
