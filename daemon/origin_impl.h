/* What origin.c (fetches, threads) and origin_url.c (URL, allow list and address checks) share:
 * the module's state and its URL parts. Internal to daemon/origin*.c. */
#ifndef FFTBLOOM_DAEMON_ORIGIN_IMPL_H
#define FFTBLOOM_DAEMON_ORIGIN_IMPL_H

#include <pthread.h>

#include "daemon/origin.h"

struct allow_entry {
	char scheme[8];   /* "http" or "https" */
	char host[256];   /* as libcurl normalises it: lower case, IPv6 in brackets */
	long port;
	char prefix[1024];
	int ip;           /* host is an IP literal: the address is named explicitly */
};

struct task {
	const char *url;
	origin_decide_fn decide;
	void *ctx;
	struct origin_result *res;
	char *err;
	int rc;
	int done;
	struct task *next;
};

struct origin {
	struct origin_opts o;
	char ca_file[4096]; /* o.ca_file's copy; "": the system's store */
	struct allow_entry allow[ORIGIN_MAX_ENTRIES];
	int nallow;
	pthread_mutex_t mu;
	pthread_cond_t work_cv, done_cv;
	struct task *head, *tail;
	int waiting, running, stop;
	pthread_t *threads;
	int nthreads;
	struct origin_stats st;
};

/* The parts of a URL as libcurl reads it, after this module's own checks of the text. */
struct url_parts {
	char scheme[8];
	char host[256];
	long port;
	char path[1024];
	char url[2048]; /* libcurl's normalised URL: what is fetched */
};

/* Checks url as written and reads it as libcurl does into p; ORIGIN_E_URL with why in err. */
int origin_parse_url(const char *url, struct url_parts *p, char err[ORIGIN_ERR_LEN]);
/* 1 when host (as libcurl normalises it: IPv6 in brackets) is an IP literal. */
int origin_host_is_ip(const char *host);
/* The allow entry naming p, or NULL. */
const struct allow_entry *origin_allow_match(const struct origin *o, const struct url_parts *p);
/* Fills o's allow list from --origin-allow's text; ORIGIN_E_URL with the entry in err. */
int origin_parse_allow(struct origin *o, const char *list, char err[ORIGIN_ERR_LEN]);

#endif
