/* fftbloom bloom / convolve --server URL: the same command run by a running fftbloomd instead of
 * a local GPU (POST /v1/bloom or /v1/convolve, multipart), so a render-farm node without a GPU
 * can use a shared one. Client mode opens no EGL context. */
#ifndef FFTBLOOM_CLI_CLIENT_H
#define FFTBLOOM_CLI_CLIENT_H

#include <stddef.h>

#include "core/opts.h"

/* The client's options; a command adds client_table to its own table (at the offset of its
 * struct client_config), so --help lists them and a local run accepts them. */
struct client_config {
	char server[OPT_STR_MAX];  /* fftbloomd's base URL (http:// or https://); empty: local GPU */
	char api_key[OPT_STR_MAX]; /* sent as Authorization: Bearer KEY */
	int retries;               /* 503 and 429 answers with Retry-After tried again this often */
	double timeout;            /* seconds one attempt may take (0: no limit) */
	int in_flight;             /* several frames: requests sent at once */
	char kernel_name[OPT_STR_MAX]; /* a kernel registered on the daemon (kernel=NAME) */
};

extern const struct opt_def client_table[];
extern const size_t client_table_len;

/* client_run's answer when no server is configured: the caller runs locally. */
#define CLIENT_LOCAL (-1)

/* Runs command name (op: REQUEST_BLOOM or REQUEST_CONVOLVE) on the server when --server or
 * FFTBLOOM_SERVER names one. t (n rows) is the command's option table over values (size bytes):
 * it must hold client_table's rows and "output", "bits", "quiet", "frames" and "progress"; the
 * request parameters (api/request.h) are the other flags. They are sent as given, so the
 * daemon checks them and its message is the one printed. The inputs are one image, several or
 * a sequence, as a local run's (cli/batch.h's lists, "-" included); several frames are sent
 * --in-flight at a time and reported as a local batch is (batch_report). argv is not changed.
 * Returns CLIENT_LOCAL without a server (and for --help), else the exit status: 0; for one
 * frame the daemon's error by its row's rule (api_error_exit_status: 2 for a bad parameter),
 * else 1 (the connection's failure naming the URL); several frames as batch_report_end; 2
 * usage. */
int client_run(const char *name, unsigned op, const struct opt_def *t, size_t n, void *values,
               size_t size, int argc, char **argv);

#endif
