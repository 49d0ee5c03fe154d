/* Client mode of fftbloom bloom / convolve (see client.h): the flags become one multipart POST
 * (parts image, kernel, a form field per parameter, format from the output's extension), sent
 * with libcurl; the answer's bytes are the output file. */
#include "cli/client.h"

#include <ctype.h>
#include <errno.h>
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/common.h"
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
	case IMAGE_FORMAT_JPEG: return "jpeg";
	case IMAGE_FORMAT_HDR: return "hdr";
	case IMAGE_FORMAT_PFM: return "pfm";
	case IMAGE_FORMAT_WEBP: return "webp";
	default: break;
	}
	snprintf(msg, len, "%s: unknown output extension (.jpg .png .exr .hdr .pfm .webp .avif)",
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
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(msg, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	unsigned char chunk[65536];
	size_t got;
	int rc = 0;
	while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
		if (buf_add(b, chunk, got)) {
			snprintf(msg, len, "%s: out of memory", path);
			rc = -1;
			break;
		}
	if (!rc && ferror(f)) {
		snprintf(msg, len, "%s: read error", path);
		rc = -1;
	}
	fclose(f);
	return rc;
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

/* The daemon's JSON error as "STATUS code: message", else the status and the body's start. */
static void daemon_error(long status, const struct buf *body, char *msg, size_t len)
{
	json_t *o = body->len ? json_loadb((const char *)body->data, body->len, 0, NULL) : NULL;
	json_t *e = json_object_get(o, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *m = json_string_value(json_object_get(e, "message"));
	if (m)
		snprintf(msg, len, "%ld %s: %s", status, code ? code : "error", m);
	else { /* not fftbloomd's JSON (a proxy's page): the first line of it, printable */
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

static int write_out(const char *path, const struct buf *b, char *msg, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		snprintf(msg, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	int bad = b->len && fwrite(b->data, 1, b->len, f) != b->len;
	if (fclose(f) || bad) {
		snprintf(msg, len, "%s: write error", path);
		return -1;
	}
	return 0;
}

/* What one request sends. */
struct work {
	const char *in, *kfile, *format;
	struct buf img, ker;
	const struct params *p;
	unsigned op;
};

/* The multipart body: image, kernel (the CLI's kernel is a file, sent as the part, not as
 * kernel=NAME), a field per parameter with its API name, format. NULL when out of memory. */
static curl_mime *body(CURL *c, const struct work *w)
{
	curl_mime *mime = curl_mime_init(c);
	if (!mime)
		return NULL;
	curl_mimepart *part = curl_mime_addpart(mime);
	if (curl_mime_name(part, "image") || curl_mime_filename(part, w->in) ||
	    curl_mime_data(part, (const char *)w->img.data, w->img.len))
		goto fail;
	if (w->kfile) {
		part = curl_mime_addpart(mime);
		if (curl_mime_name(part, "kernel") || curl_mime_filename(part, w->kfile) ||
		    curl_mime_data(part, (const char *)w->ker.data, w->ker.len))
			goto fail;
	}
	for (int i = 0; i < w->p->count; i++) {
		if (!strcmp(w->p->name[i], "kernel"))
			continue;
		char api[64];
		request_api_name(request_find(w->p->name[i], w->op), api, sizeof api);
		part = curl_mime_addpart(mime);
		if (curl_mime_name(part, api) ||
		    curl_mime_data(part, w->p->value[i], CURL_ZERO_TERMINATED))
			goto fail;
	}
	part = curl_mime_addpart(mime);
	if (curl_mime_name(part, "format") || curl_mime_data(part, w->format, CURL_ZERO_TERMINATED))
		goto fail;
	return mime;
fail:
	curl_mime_free(mime);
	return NULL;
}

/* Sends the request (again after a busy answer's Retry-After); the exit status. */
static int send_work(const char *name, const struct client_config *cc, struct work *w,
                     const char *out, int quiet)
{
	char msg[1024], url[OPT_STR_MAX + 32];
	size_t sl = strlen(cc->server);
	while (sl && cc->server[sl - 1] == '/')
		sl--;
	snprintf(url, sizeof url, "%.*s/v1/%s", (int)sl, cc->server,
	         w->op == REQUEST_CONVOLVE ? "convolve" : "bloom");
	if (read_file(w->in, &w->img, msg, sizeof msg) ||
	    (w->kfile && read_file(w->kfile, &w->ker, msg, sizeof msg))) {
		fprintf(stderr, "fftbloom %s: %s%s\n", name, w->kfile && w->img.data ? "kernel " : "",
		        msg);
		return 1;
	}
	int rc = 1;
	CURL *c = curl_easy_init();
	curl_mime *mime = NULL;
	struct curl_slist *hdr = curl_slist_append(NULL, "Expect:"); /* no 100-continue wait */
	struct answer a = {0};
	if (!c || !hdr)
		goto fail_mem;
	if (cc->api_key[0]) {
		char auth[OPT_STR_MAX + 32];
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", cc->api_key);
		struct curl_slist *h = curl_slist_append(hdr, auth);
		if (!h)
			goto fail_mem;
		hdr = h;
	}
	long status = 0;
	for (int attempt = 0;; attempt++) {
		curl_mime_free(mime); /* a fresh body each time: a sent one is not rewound */
		if (!(mime = body(c, w)))
			goto fail_mem;
		status = post(c, url, mime, hdr, cc->timeout, &a, msg, sizeof msg);
		if (!status) {
			fprintf(stderr, "fftbloom %s: %s\n", name, msg);
			goto out;
		}
		if ((status != 503 && status != 429) || a.retry_after < 0 || attempt >= cc->retries)
			break;
		if (!quiet)
			fprintf(stderr, "fftbloom %s: %s answered %ld; trying again in %d s (%d of %d)\n",
			        name, url, status, a.retry_after, attempt + 1, cc->retries);
		struct timespec ts = {a.retry_after, 0};
		while (nanosleep(&ts, &ts))
			;
	}
	if (status != 200) {
		daemon_error(status, &a.body, msg, sizeof msg);
		fprintf(stderr, "fftbloom %s: %s answered %s\n", name, url, msg);
		goto out;
	}
	if (write_out(out, &a.body, msg, sizeof msg)) {
		fprintf(stderr, "fftbloom %s: %s\n", name, msg);
		goto out;
	}
	if (!quiet && (strstr(a.lost, "range") || strstr(a.lost, "negative")))
		fprintf(stderr, "fftbloom %s: warning: %s clipped values outside its range\n", name, out);
	if (!quiet) {
		char t[512];
		timing_text(a.timing, t, sizeof t);
		fprintf(stderr, "%s %s on %.*s:%s%s%s%s %s\n", name, w->in, (int)sl, cc->server,
		        a.tiles[0] ? " in " : "", a.tiles, a.tiles[0] ? " tiles," : "",
		        a.method[0] && !strcmp(a.method, "spatial") ? " direct (spatial) convolution," :
		        "", t[0] ? t : "(no Server-Timing)");
	}
	rc = 0;
	goto out;
fail_mem:
	fprintf(stderr, "fftbloom %s: out of memory building the request\n", name);
out:
	curl_slist_free_all(hdr);
	curl_mime_free(mime);
	curl_easy_cleanup(c);
	free(a.body.data);
	return rc;
}

int client_run(const char *name, unsigned op, const struct opt_def *t, size_t n, void *values,
               size_t size, int argc, char **argv)
{
	const struct opt_def *ds = opts_find(t, n, "server"), *dk = opts_find(t, n, "api-key"),
	                     *dr = opts_find(t, n, "retries"), *dt = opts_find(t, n, "server-timeout"),
	                     *dout = opts_find(t, n, "output"), *db = opts_find(t, n, "bits"),
	                     *dq = opts_find(t, n, "quiet");
	if (!ds || !dk || !dr || !dt || !dout || !db || !dq)
		return CLIENT_LOCAL;
	char **av = malloc(((size_t)argc + 1) * sizeof *av); /* argv stays for a local run */
	if (!av)
		return CLIENT_LOCAL;
	memcpy(av, argv, (size_t)argc * sizeof *av);
	av[argc] = NULL;
	int rc = CLIENT_LOCAL;
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
	cc.retries = OPT_INT_AT(values, dr);
	cc.timeout = OPT_DOUBLE_AT(values, dt);
	const char *out = OPT_STR_AT(values, dout);
	rc = 2;
	if (npos != 1 || !out[0]) {
		fprintf(stderr, "fftbloom %s: need one input image and -o OUTPUT (see --help)\n", name);
		goto out;
	}
	static const char *const local_only[] = {"--frames", "--io-threads", "--read-ahead",
	                                         "--progress"};
	for (int i = 1; i < argc; i++)
		for (size_t f = 0; f < sizeof local_only / sizeof local_only[0]; f++) {
			size_t l = strlen(local_only[f]);
			if (!strncmp(argv[i], local_only[f], l) && (!argv[i][l] || argv[i][l] == '=')) {
				fprintf(stderr, "fftbloom %s: %s is for local runs of several frames; --server "
				        "sends one frame\n", name, local_only[f]);
				goto out;
			}
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
	if (op == REQUEST_CONVOLVE && !param(&p, "kernel") && !param(&p, "kernel-preset")) {
		fprintf(stderr, "fftbloom convolve: --kernel FILE (or --kernel-preset) is required\n");
		goto out;
	}
	if (param(&p, "format")) {
		fprintf(stderr, "fftbloom %s: the output file's extension is its format (no "
		        "--format)\n", name);
		goto out;
	}
	char msg[256];
	const char *format = answer_format(out, OPT_INT_AT(values, db), msg, sizeof msg);
	if (!format) {
		fprintf(stderr, "fftbloom %s: %s\n", name, msg);
		goto out;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		fprintf(stderr, "fftbloom %s: libcurl failed to start\n", name);
		rc = 1;
		goto out;
	}
	struct work w = {.in = av[1], .kfile = param(&p, "kernel"), .format = format, .p = &p,
	                 .op = op};
	rc = send_work(name, &cc, &w, out, OPT_INT_AT(values, dq));
	free(w.img.data);
	free(w.ker.data);
	curl_global_cleanup();
out:
	free(av);
	return rc;
}
