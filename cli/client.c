/* Client mode of fftbloom bloom / convolve (see client.h): the flags become one multipart POST
 * (parts image, kernel, a form field per parameter, format from the output's extension), sent
 * with libcurl; the answer's bytes are the output file. */
#include "cli/client.h"

#include <ctype.h>
#include <errno.h>
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/batch.h"
#include "cli/common.h"
#include "core/clock.h"
#include "api/errors.h"
#include "api/format.h"
#include "codec/image.h"
#include "api/request.h"

#define CC(f) offsetof(struct client_config, f)
#define CLIENT_RETRY_MAX_S 30 /* longest wait for one Retry-After */

const struct opt_def client_table[] = {
	{"server", OPT_STRING, 0, 0, "", NULL,
	 "run on this fftbloomd (http://HOST:PORT or https://...) instead of a local GPU: the same "
	 "flags become a POST /v1/bloom or /v1/convolve; no GPU or EGL is needed here",
	 "FFTBLOOM_SERVER", CC(server)},
	{"api-key", OPT_STRING, 0, 0, "", NULL,
	 "with --server: the daemon's API key (sent as Authorization: Bearer); prefer the variable, "
	 "which other users cannot read in the process list", "FFTBLOOM_API_KEY", CC(api_key)},
	{"retries", OPT_INT, 0, 10, "3", NULL,
	 "with --server: times a busy daemon's 503 or 429 is tried again after its Retry-After "
	 "(each wait at most 30 s)", "FFTBLOOM_RETRIES", CC(retries)},
	{"server-timeout", OPT_DOUBLE, 0, 86400, "600", NULL,
	 "with --server: seconds one attempt may take, connecting included (0: no limit)",
	 "FFTBLOOM_SERVER_TIMEOUT", CC(timeout)},
	{"in-flight", OPT_INT, 1, 64, "4", NULL,
	 "with --server and several frames: requests in flight at once", "FFTBLOOM_IN_FLIGHT",
	 CC(in_flight)},
	{"kernel-name", OPT_STRING, 0, 0, "", NULL,
	 "with --server: a kernel registered on the daemon (PUT /v1/kernels/NAME), sent as "
	 "kernel=NAME instead of --kernel FILE", NULL, CC(kernel_name)},
};
const size_t client_table_len = sizeof client_table / sizeof client_table[0];

/* The request parameters as given on the command line, in order. */
struct params {
	unsigned op;
	int count;
	const char *name[REQUEST_MAX_PARAMS * 2], *value[REQUEST_MAX_PARAMS * 2];
};

static int record(void *ctx, const char *name, const char *value, char err[OPT_ERR_LEN])
{
	struct params *p = ctx;
	if (!request_find(name, p->op))
		return OPT_E_UNKNOWN;
	if (!value && request_find(name, p->op)->o.type == OPT_BOOL)
		value = "1"; /* a bare boolean flag */
	if (!value) {
		snprintf(err, OPT_ERR_LEN, "--%.64s needs a value", name);
		return OPT_E_MISSING;
	}
	if (p->count == (int)(sizeof p->name / sizeof p->name[0])) {
		snprintf(err, OPT_ERR_LEN, "too many parameters");
		return OPT_E_VALUE;
	}
	p->name[p->count] = request_find(name, p->op)->o.name;
	p->value[p->count++] = value;
	return 0;
}

/* The value of the parameter named nm, or NULL. */
static const char *param(const struct params *p, const char *nm)
{
	for (int i = 0; i < p->count; i++)
		if (!strcmp(p->name[i], nm))
			return p->value[i];
	return NULL;
}

/* format= for the output file's extension and --bits (0: the format's default), or NULL with
 * a message. */
static const char *answer_format(const char *path, int bits, char *msg, size_t len)
{
	enum image_format f = image_format_from_name(path);
	switch (f) {
	case IMAGE_FORMAT_PNG:
		if (bits == 0 || bits == 8)
			return "png";
		if (bits == 16)
			return "png16";
		snprintf(msg, len, "--bits %d: PNG is 8 or 16", bits);
		return NULL;
	case IMAGE_FORMAT_AVIF:
		if (bits == 0 || bits == 8)
			return "avif";
		if (bits == 10)
			return "avif10";
		if (bits == 12)
			return "avif12";
		snprintf(msg, len, "--bits %d: AVIF is 8, 10 or 12", bits);
		return NULL;
	case IMAGE_FORMAT_EXR:
		if (bits == 0 || bits == 16)
			return "exr";
		snprintf(msg, len, "--bits %d: the daemon answers EXR as half float (16); a float32 "
		         "EXR needs a local run, or .pfm", bits);
		return NULL;
	case IMAGE_FORMAT_TIFF:
		if (bits == 0 || bits == 8)
			return "tiff";
		if (bits == 16)
			return "tiff16";
		if (bits == 32)
			return "tiff32";
		snprintf(msg, len, "--bits %d: TIFF is 8, 16 or 32 (float; --format tiff16f: half)",
		         bits);
		return NULL;
	case IMAGE_FORMAT_JPEG: return "jpeg";
	case IMAGE_FORMAT_HDR: return "hdr";
	case IMAGE_FORMAT_PFM: return "pfm";
	case IMAGE_FORMAT_WEBP: return "webp";
	default: break;
	}
	snprintf(msg, len, "%s: unknown output extension (.jpg .png .exr .hdr .pfm .webp .avif .tif)",
	         path);
	return NULL;
}

struct buf {
	unsigned char *data;
	size_t len, cap;
};

static int buf_add(struct buf *b, const void *p, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		while (cap < b->len + len + 1)
			cap *= 2;
		unsigned char *d = realloc(b->data, cap);
		if (!d)
			return -1;
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, len);
	b->len += len;
	b->data[b->len] = 0;
	return 0;
}

static int read_file(const char *path, struct buf *b, char *msg, size_t len)
{
	unsigned char *data;
	size_t n;
	if (cli_read_all(path, &data, &n, msg, len))
		return -1;
	free(b->data);
	b->data = data;
	b->len = b->cap = n;
	return 0;
}

/* What one attempt learnt from the answer's headers. */
struct answer {
	struct buf body;
	char timing[512];   /* Server-Timing */
	char lost[64];      /* X-Image-Lost */
	char tiles[32];     /* X-Tiles */
	char method[16];    /* X-Convolve-Method */
	int retry_after;    /* seconds; -1 when absent */
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct answer *a = ctx;
	return buf_add(&a->body, p, size * n) ? 0 : size * n;
}

/* Copies the value of header "name: value" in line (len bytes) into out when the name matches. */
static void header_value(const char *line, size_t len, const char *name, char *out, size_t olen)
{
	size_t nl = strlen(name);
	if (len <= nl || strncasecmp(line, name, nl) || line[nl] != ':')
		return;
	const char *v = line + nl + 1;
	const char *e = line + len;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
		e--;
	snprintf(out, olen, "%.*s", (int)(e - v), v);
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	struct answer *a = ctx;
	size_t len = size * n;
	if (len >= 5 && !strncmp(p, "HTTP/", 5)) { /* a new status line: a new header block */
		a->timing[0] = a->lost[0] = a->tiles[0] = a->method[0] = 0;
		a->retry_after = -1;
		return len;
	}
	char ra[32] = "";
	header_value(p, len, "Server-Timing", a->timing, sizeof a->timing);
	header_value(p, len, "X-Image-Lost", a->lost, sizeof a->lost);
	header_value(p, len, "X-Tiles", a->tiles, sizeof a->tiles);
	header_value(p, len, "X-Convolve-Method", a->method, sizeof a->method);
	header_value(p, len, "Retry-After", ra, sizeof ra);
	if (ra[0]) { /* delay-seconds; an HTTP-date counts as 1 s */
		char *end;
		long s = strtol(ra, &end, 10);
		a->retry_after = end != ra && !*end && s >= 0 ? (s > CLIENT_RETRY_MAX_S ?
		                 CLIENT_RETRY_MAX_S : (int)s) : 1;
	}
	return len;
}

/* The daemon's JSON error as "STATUS code: message", else the status and the body's start.
 * Returns the error table's row of the code (API_E_NONE for none known). */
static int daemon_error(long status, const struct buf *body, char *msg, size_t len)
{
	int row = API_E_NONE;
	json_t *o = body->len ? json_loadb((const char *)body->data, body->len, 0, NULL) : NULL;
	json_t *e = json_object_get(o, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *m = json_string_value(json_object_get(e, "message"));
	if (m) {
		snprintf(msg, len, "%ld %s: %s", status, code ? code : "error", m);
		row = code ? api_error_find(code, (int)status) : API_E_NONE;
	} else { /* not fftbloomd's JSON (a proxy's page): the first line of it, printable */
		char text[160];
		size_t k = 0;
		for (size_t i = 0; i < body->len && k + 1 < sizeof text; i++) {
			unsigned char c = body->data[i];
			if (c == '\n' && k)
				break;
			text[k++] = isprint(c) ? (char)c : ' ';
		}
		text[k] = 0;
		snprintf(msg, len, "%ld%s%s", status, k ? ": " : " (no body)", text);
	}
	json_decref(o);
	return row;
}

/* "decode 1.9, queue 0.1, gpu 12.3, ..., total 15.0 ms" from a Server-Timing value. */
static void timing_text(const char *st, char *out, size_t len)
{
	size_t used = 0;
	out[0] = 0;
	const char *p = st;
	while (*p && used + 1 < len) {
		while (*p == ' ' || *p == ',')
			p++;
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		const char *dur = memmem(p, l, ";dur=", 5);
		if (dur) {
			int k = snprintf(out + used, len - used, "%s%.*s %.*s", used ? ", " : "",
			                 (int)(dur - p), p, (int)(l - (size_t)(dur + 5 - p)), dur + 5);
			if (k > 0)
				used += (size_t)k < len - used ? (size_t)k : len - used - 1;
		}
		p += l;
	}
	if (used && used + 4 < len)
		snprintf(out + used, len - used, " ms");
}

/* One POST. Returns the HTTP status, or 0 after a transfer failure described in msg. */
static long post(CURL *c, const char *url, curl_mime *mime, struct curl_slist *hdr,
                 double timeout, struct answer *a, char *msg, size_t len)
{
	char cerr[CURL_ERROR_SIZE] = "";
	a->body.len = 0;
	a->timing[0] = a->lost[0] = a->tiles[0] = a->method[0] = 0;
	a->retry_after = -1;
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "fftbloom");
	CURLcode rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		snprintf(msg, len, "%s: %s", url, cerr[0] ? cerr : curl_easy_strerror(rc));
		return 0;
	}
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	return status;
}

/* What every request of a command shares. */
struct shared {
	const char *name;                /* the subcommand, for messages */
	const struct client_config *cc;
	const struct params *p;
	unsigned op;
	const char *kfile;               /* --kernel FILE, or NULL */
	struct buf ker;                  /* its bytes */
	const char *format;              /* format= */
	char url[OPT_STR_MAX + 32];
	int server_len;                  /* cc->server without trailing '/' */
	struct curl_slist *hdr;
	int quiet;
};

/* The multipart body: image, kernel (--kernel FILE as the part, --kernel-name as kernel=NAME),
 * a field per parameter with its API name, format. NULL when out of memory. */
static curl_mime *body(CURL *c, const struct shared *sh, const char *in, const struct buf *img)
{
	curl_mime *mime = curl_mime_init(c);
	if (!mime)
		return NULL;
	curl_mimepart *part = curl_mime_addpart(mime);
	if (curl_mime_name(part, "image") ||
	    curl_mime_filename(part, strcmp(in, "-") ? in : "stdin") ||
	    curl_mime_data(part, (const char *)img->data, img->len))
		goto fail;
	if (sh->kfile) {
		part = curl_mime_addpart(mime);
		if (curl_mime_name(part, "kernel") || curl_mime_filename(part, sh->kfile) ||
		    curl_mime_data(part, (const char *)sh->ker.data, sh->ker.len))
			goto fail;
	} else if (sh->cc->kernel_name[0]) {
		part = curl_mime_addpart(mime);
		if (curl_mime_name(part, "kernel") ||
		    curl_mime_data(part, sh->cc->kernel_name, CURL_ZERO_TERMINATED))
			goto fail;
	}
	for (int i = 0; i < sh->p->count; i++) {
		if (!strcmp(sh->p->name[i], "kernel") || !strcmp(sh->p->name[i], "format"))
			continue;
		char api[64];
		request_api_name(request_find(sh->p->name[i], sh->op), api, sizeof api);
		part = curl_mime_addpart(mime);
		if (curl_mime_name(part, api) ||
		    curl_mime_data(part, sh->p->value[i], CURL_ZERO_TERMINATED))
			goto fail;
	}
	part = curl_mime_addpart(mime);
	if (curl_mime_name(part, "format") || curl_mime_data(part, sh->format, CURL_ZERO_TERMINATED))
		goto fail;
	return mime;
fail:
	curl_mime_free(mime);
	return NULL;
}

/* One frame: reads in, posts it (again after a busy answer's Retry-After, said on stderr
 * unless quiet), writes the answer to out. Returns 0 with the answer's headers in *a, or the
 * exit status (the daemon's error by its row's rule, api_error_exit_status; 1 otherwise) with
 * the message in msg and *stage where it failed ("reading", "sending", "writing"). */
static int one(const struct shared *sh, CURL *c, const char *in, const char *out,
               struct answer *a, const char **stage, char *msg, size_t len)
{
	struct buf img = {0};
	curl_mime *mime = NULL;
	int rc = 1;
	*stage = "reading";
	if (read_file(in, &img, msg, len))
		return 1;
	*stage = "sending";
	long status = 0;
	for (int attempt = 0;; attempt++) {
		curl_mime_free(mime); /* a fresh body each time: a sent one is not rewound */
		if (!(mime = body(c, sh, in, &img))) {
			snprintf(msg, len, "out of memory building the request");
			goto out;
		}
		status = post(c, sh->url, mime, sh->hdr, sh->cc->timeout, a, msg, len);
		if (!status)
			goto out;
		if ((status != 503 && status != 429) || a->retry_after < 0 ||
		    attempt >= sh->cc->retries)
			break;
		if (!sh->quiet)
			fprintf(stderr, "fftbloom %s: %s answered %ld; trying again in %d s (%d of %d)\n",
			        sh->name, sh->url, status, a->retry_after, attempt + 1, sh->cc->retries);
		struct timespec ts = {a->retry_after, 0};
		while (nanosleep(&ts, &ts))
			;
	}
	if (status != 200) {
		char m[900];
		int e = daemon_error(status, &a->body, m, sizeof m);
		snprintf(msg, len, "%.300s answered %.880s", sh->url, m);
		rc = e == API_E_NONE ? 1 : api_error_exit_status(e);
		goto out;
	}
	*stage = "writing";
	if (cli_write_all(out, a->body.data, a->body.len, msg, len))
		goto out;
	rc = 0;
out:
	curl_mime_free(mime);
	free(img.data);
	return rc;
}

/* The answer's facts as the progress line's note: tiles, the method, the Server-Timing. */
static void answer_note(const struct answer *a, char *out, size_t len)
{
	char t[512];
	timing_text(a->timing, t, sizeof t);
	snprintf(out, len, "%s%s%s%s %s", a->tiles[0] ? " in " : "", a->tiles,
	         a->tiles[0] ? " tiles," : "",
	         a->method[0] && !strcmp(a->method, "spatial") ? " direct (spatial) convolution," : "",
	         t[0] ? t : "(no Server-Timing)");
}

static int clipped(const struct answer *a)
{
	return strstr(a->lost, "range") || strstr(a->lost, "negative");
}

/* One frame, with the one-line summary: the exit status. */
static int run_single(const struct shared *sh, const struct batch_job *j)
{
	CURL *c = curl_easy_init();
	struct answer a = {0};
	char msg[1200];
	const char *stage;
	int rc = 1;
	if (!c)
		fprintf(stderr, "fftbloom %s: out of memory\n", sh->name);
	else if ((rc = one(sh, c, j->in, j->out, &a, &stage, msg, sizeof msg)))
		fprintf(stderr, "fftbloom %s: %s\n", sh->name, msg);
	if (!rc && !sh->quiet && clipped(&a))
		fprintf(stderr, "fftbloom %s: warning: %s clipped values outside its range\n", sh->name,
		        strcmp(j->out, "-") ? j->out : "standard output");
	if (!rc && !sh->quiet) {
		char note[700];
		answer_note(&a, note, sizeof note);
		fprintf(stderr, "%s %s on %.*s:%s\n", sh->name, j->in, sh->server_len, sh->cc->server,
		        note);
	}
	curl_easy_cleanup(c);
	free(a.body.data);
	return rc;
}

/* Several frames: in_flight workers, each with its own connection, take the next frame until
 * none is left (or SIGINT); frames are reported as batch_report does for local runs. */
struct farm {
	const struct shared *sh;
	const struct batch_list *l;
	struct batch_report rp;
	pthread_mutex_t mu;
	size_t next;
};

static void *worker(void *arg)
{
	struct farm *f = arg;
	CURL *c = curl_easy_init();
	for (;;) {
		pthread_mutex_lock(&f->mu);
		size_t i = f->next;
		if (!c || batch_interrupted() || i >= f->l->n) {
			pthread_mutex_unlock(&f->mu);
			break;
		}
		f->next++;
		pthread_mutex_unlock(&f->mu);
		struct answer a = {0};
		char msg[1200], note[700] = "";
		const char *stage;
		double t = clock_ms();
		int rc = one(f->sh, c, f->l->jobs[i].in, f->l->jobs[i].out, &a, &stage, msg,
		             sizeof msg);
		if (!rc)
			answer_note(&a, note, sizeof note);
		pthread_mutex_lock(&f->mu);
		struct batch_result *r = &f->rp.r[i];
		r->gpu_ms = clock_ms() - t; /* the round trip: read, send, answer, write */
		if (rc) {
			r->failed = 1;
			r->stage = stage;
			r->err = strdup(msg);
		} else {
			r->note = strdup(note);
			r->lost = clipped(&a) ? IMAGE_LOST_RANGE : 0;
		}
		batch_report_frame(&f->rp, i);
		pthread_mutex_unlock(&f->mu);
		free(a.body.data);
	}
	curl_easy_cleanup(c);
	return NULL;
}

static int run_farm(const struct shared *sh, const struct batch_list *l,
                    const struct batch_opts *bo)
{
	struct farm f = {.sh = sh, .l = l};
	int n = sh->cc->in_flight > 0 ? sh->cc->in_flight : 1;
	pthread_t *th = calloc((size_t)n, sizeof *th);
	if (!th || batch_report_start(&f.rp, l, bo)) {
		fprintf(stderr, "fftbloom %s: out of memory\n", sh->name);
		free(th);
		return 1;
	}
	pthread_mutex_init(&f.mu, NULL);
	struct sigaction old_sa; /* SIGINT: no new frame is sent; those in flight finish */
	batch_sigint_catch(&old_sa);
	sigset_t block, old_mask;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	pthread_sigmask(SIG_BLOCK, &block, &old_mask);
	int started = 0;
	for (int k = 0; k < n; k++)
		if (!pthread_create(&th[started], NULL, worker, &f))
			started++;
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	if (!started)
		fprintf(stderr, "fftbloom %s: cannot start threads\n", sh->name);
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	sigaction(SIGINT, &old_sa, NULL);
	int status = batch_report_end(&f.rp, !started || f.next < l->n ? !batch_interrupted() : 0);
	pthread_mutex_destroy(&f.mu);
	free(th);
	return status;
}

int client_run(const char *name, unsigned op, const struct opt_def *t, size_t n, void *values,
               size_t size, int argc, char **argv)
{
	const struct opt_def *ds = opts_find(t, n, "server"), *dk = opts_find(t, n, "api-key"),
	                     *dr = opts_find(t, n, "retries"), *dt = opts_find(t, n, "server-timeout"),
	                     *dout = opts_find(t, n, "output"), *db = opts_find(t, n, "bits"),
	                     *dq = opts_find(t, n, "quiet"), *di = opts_find(t, n, "in-flight"),
	                     *dn = opts_find(t, n, "kernel-name"), *df = opts_find(t, n, "frames"),
	                     *dp = opts_find(t, n, "progress");
	if (!ds || !dk || !dr || !dt || !dout || !db || !dq || !di || !dn || !df || !dp)
		return CLIENT_LOCAL;
	char **av = malloc(((size_t)argc + 1) * sizeof *av); /* argv stays for a local run */
	if (!av)
		return CLIENT_LOCAL;
	memcpy(av, argv, (size_t)argc * sizeof *av);
	av[argc] = NULL;
	int rc = CLIENT_LOCAL;
	struct batch_list list = {0};
	struct shared sh = {.name = name, .op = op};
	if (cli_prepare_argv(argc, av))
		goto out; /* --help: the local parse prints it, these rows included */
	struct params p = {.op = op};
	char err[OPT_ERR_LEN];
	int npos = 0;
	memset(values, 0, size);
	int prc = opts_defaults(t, n, values, err);
	if (!prc)
		prc = opts_from_env(t, n, values, err);
	if (!prc)
		prc = opts_from_argv_other(t, n, values, argc, av, 1, &npos, record, &p, err);
	if (!OPT_STR_AT(values, ds)[0])
		goto out; /* no server (also when the flags are wrong: the local parse says so) */
	if (prc) {
		fprintf(stderr, "fftbloom %s: %s\n", name, err);
		rc = 2;
		goto out;
	}
	struct client_config cc;
	snprintf(cc.server, sizeof cc.server, "%s", OPT_STR_AT(values, ds));
	snprintf(cc.api_key, sizeof cc.api_key, "%s", OPT_STR_AT(values, dk));
	snprintf(cc.kernel_name, sizeof cc.kernel_name, "%s", OPT_STR_AT(values, dn));
	cc.retries = OPT_INT_AT(values, dr);
	cc.timeout = OPT_DOUBLE_AT(values, dt);
	cc.in_flight = OPT_INT_AT(values, di);
	const char *out = OPT_STR_AT(values, dout);
	rc = 2;
	if (npos < 1 || !out[0]) {
		fprintf(stderr, "fftbloom %s: need an input image (or several, or a sequence) and -o "
		        "OUTPUT (see --help)\n", name);
		goto out;
	}
	if (strncmp(cc.server, "http://", 7) && strncmp(cc.server, "https://", 8)) {
		fprintf(stderr, "fftbloom %s: --server '%s': not an http:// or https:// URL\n", name,
		        cc.server);
		goto out;
	}
	for (const char *k = cc.api_key; *k; k++)
		if ((unsigned char)*k < 0x20 || *k == 0x7f) {
			fprintf(stderr, "fftbloom %s: the API key holds a control character\n", name);
			goto out;
		}
	if (cc.kernel_name[0] && (param(&p, "kernel") || param(&p, "kernel-preset"))) {
		fprintf(stderr, "fftbloom %s: --kernel-name names the kernel: no --kernel or "
		        "--kernel-preset with it\n", name);
		goto out;
	}
	if (op == REQUEST_CONVOLVE && !param(&p, "kernel") && !param(&p, "kernel-preset") &&
	    !cc.kernel_name[0]) {
		fprintf(stderr, "fftbloom convolve: --kernel FILE (or --kernel-preset, or --kernel-name "
		        "with --server) is required\n");
		goto out;
	}
	char berr[BATCH_ERR_LEN];
	int lr = batch_list_make(av + 1, npos, out, OPT_STR_AT(values, df), &list, berr);
	int format = param(&p, "format") ? format_parse(param(&p, "format")) : OUT_AUTO;
	struct batch_opts bo = {.name = name, .format = format < 0 ? OUT_AUTO : format,
	                        .quiet = OPT_INT_AT(values, dq),
	                        .progress = OPT_INT_AT(values, dp) == 1   ? BATCH_PROGRESS_BAR
	                                    : OPT_INT_AT(values, dp) == 2 ? BATCH_PROGRESS_LINES
	                                                                  : BATCH_PROGRESS_AUTO};
	if (!lr && format < 0)
		snprintf(berr, sizeof berr, "--format %.100s: not one of %s", param(&p, "format"),
		         FORMAT_CHOICES), lr = -1;
	if (!lr && batch_check_formats(&list, &bo, berr))
		lr = -1;
	if (lr) {
		fprintf(stderr, "fftbloom %s: %s\n", name, berr);
		rc = lr < 0 ? 2 : 1;
		goto out;
	}
	if (batch_output_folders(&list, berr)) { /* the local batch's folder rule */
		fprintf(stderr, "fftbloom %s: %s\n", name, berr);
		rc = 1;
		goto out;
	}
	char msg[256];
	/* format=: --format as given, else the (first) output's extension and --bits */
	const char *fmt = param(&p, "format") ? param(&p, "format")
	                  : answer_format(list.jobs[0].out, OPT_INT_AT(values, db), msg, sizeof msg);
	if (!fmt) {
		fprintf(stderr, "fftbloom %s: %s\n", name, msg);
		goto out;
	}
	for (size_t i = 1; !param(&p, "format") && i < list.n; i++)
		if (image_format_from_name(list.jobs[i].out) != image_format_from_name(list.jobs[0].out)) {
			fprintf(stderr, "fftbloom %s: the outputs' extensions differ; --server sends one "
			        "format\n", name);
			goto out;
		}
	rc = 1;
	sh.cc = &cc;
	sh.p = &p;
	sh.kfile = param(&p, "kernel");
	sh.format = fmt;
	sh.quiet = OPT_INT_AT(values, dq);
	sh.server_len = (int)strlen(cc.server);
	while (sh.server_len && cc.server[sh.server_len - 1] == '/')
		sh.server_len--;
	snprintf(sh.url, sizeof sh.url, "%.*s/v1/%s", sh.server_len, cc.server,
	         op == REQUEST_CONVOLVE ? "convolve" : "bloom");
	if (sh.kfile && read_file(sh.kfile, &sh.ker, msg, sizeof msg)) {
		fprintf(stderr, "fftbloom %s: kernel %s\n", name, msg);
		goto out;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		fprintf(stderr, "fftbloom %s: libcurl failed to start\n", name);
		goto out;
	}
	sh.hdr = curl_slist_append(NULL, "Expect:"); /* no 100-continue wait */
	if (sh.hdr && cc.api_key[0]) {
		char auth[OPT_STR_MAX + 32];
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", cc.api_key);
		struct curl_slist *h = curl_slist_append(sh.hdr, auth);
		if (!h) {
			curl_slist_free_all(sh.hdr);
			sh.hdr = NULL;
		} else {
			sh.hdr = h;
		}
	}
	if (!sh.hdr)
		fprintf(stderr, "fftbloom %s: out of memory building the request\n", name);
	else
		rc = list.single && list.n == 1 ? run_single(&sh, &list.jobs[0])
		                                : run_farm(&sh, &list, &bo);
	curl_slist_free_all(sh.hdr);
	curl_global_cleanup();
out:
	free(sh.ker.data);
	batch_list_free(&list);
	free(av);
	return rc;
}
