/* The GPU routes: POST /v1/bloom and /v1/convolve (a raw image or multipart parts, parameters
 * through the request table), POST /v1/conv2d and /v1/conv2d_transpose (NPY tensors in
 * multipart parts), and the job behind them and kernel PUTs; see http.h. */
#include "daemon/apiutil.h"
#include "daemon/http.h"

#include <stdio.h>
#include <string.h>

#include "daemon/multipart.h"
#include "gles/convolve.h"
#include "api/request.h"

static enum MHD_Result answer_job(struct req *r);

/* ---- parameters ---- */

struct query_ctx {
	struct request *req;
	int skip_sig;
	char *err;
	int failed;
	unsigned seen; /* the skipped keys met so far (bit i: skipped[i]) */
};

/* The keys a GET render reads itself (a signature's, an origin's image): not request
 * parameters, but refused twice as those are, since which one counts would be a guess. */
static const char *const skipped[] = {"sig", "exp", "src"};

static enum MHD_Result query_iter(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
	(void)kind;
	struct query_ctx *qc = cls;
	if (qc->failed)
		return MHD_NO;
	for (unsigned i = 0; i < sizeof skipped / sizeof *skipped; i++) {
		if (strcmp(key, skipped[i]) || qc->skip_sig < (i < 2 ? 1 : 2))
			continue; /* src: skipped (2) for an origin's render only */
		if (qc->seen & 1u << i) {
			snprintf(qc->err, REQUEST_ERR_LEN, "%s given twice in the query string", key);
			qc->failed = 1;
			return MHD_NO;
		}
		qc->seen |= 1u << i;
		return MHD_YES;
	}
	if (request_set(qc->req, key, value, REQUEST_SRC_QUERY, qc->err)) {
		qc->failed = 1;
		return MHD_NO;
	}
	return MHD_YES;
}

int job_from_query(struct req *r, int skip_sig, enum MHD_Result *ret)
{
	struct job *j = &r->job;
	j->kind = operations[r->route].job;
	request_init(&j->req, operations[r->route].request);
	char err[REQUEST_ERR_LEN] = "";
	struct query_ctx qc = {&j->req, skip_sig, err, 0, 0};
	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_iter, &qc);
	if (!qc.failed)
		return 0;
	*ret = respond_error(r, API_E_BAD_PARAMETER, "%s", err);
	return 1;
}

int job_accept(struct req *r, enum MHD_Result *ret)
{
	struct job *j = &r->job;
	const char *accept = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                                 MHD_HTTP_HEADER_ACCEPT);
	if (!format_from_accept(accept, r->S->cfg.auto_avif, &j->accept) ||
	    request_given(&j->req, "format"))
		return 0;
	*ret = not_acceptable(r, accept);
	return 1;
}

int job_named_kernel(struct req *r, enum MHD_Result *ret)
{
	struct job *j = &r->job;
	if (!j->req.kernel[0])
		return 0;
	j->named = kernels_get(r->S->o.kernels, j->req.kernel);
	if (j->named)
		return 0;
	*ret = respond_error(r, API_E_UNKNOWN_KERNEL, "kernel: no kernel named '%s' (register it "
	                     "with PUT /v1/kernels/%s)", j->req.kernel, j->req.kernel);
	return 1;
}

/* ---- routes ---- */

static void on_job_done(struct job *j, void *ctx)
{
	struct req *r = ctx;
	(void)j;
	pthread_mutex_lock(&r->done_mu);
	r->job_done = 1;
	pthread_cond_signal(&r->done_cv);
	pthread_mutex_unlock(&r->done_mu);
}

/* Admits the job, starts it and waits for its answer in this connection's thread; or answers
 * 503. The connection's thread waits rather than suspending the connection: libmicrohttpd
 * (0.9.75) reads a resumed connection before answering it, and takes the end of a request
 * whose client half-closed after sending it (HTTP allows that) as an abort, losing the answer;
 * a thread that never returns to the library until it answers never makes that read. */
enum MHD_Result start_job(struct req *r)
{
	struct server *S = r->S;
	int rc = jobs_reserve(S->o.jobs, r->job.kind);
	if (rc == JOBS_E_FULL) {
		kernels_release(S->o.kernels, r->job.named);
		r->job.named = NULL;
		char msg[128];
		snprintf(msg, sizeof msg, "the queue is full (%d jobs wait for a GPU); retry later",
		         S->cfg.queue_size);
		return respond_busy(r, API_E_QUEUE_FULL, msg);
	}
	if (rc) {
		kernels_release(S->o.kernels, r->job.named);
		r->job.named = NULL;
		return respond_busy(r, API_E_SHUTTING_DOWN, "the server is shutting down");
	}
	r->job.client_fd = client_fd(r->conn);
	snprintf(r->job.client, sizeof r->job.client, "%s", r->client);
	r->job.done = on_job_done;
	r->job.done_ctx = r;
	r->started = 1;
	set_phase(S, r->tcp, CONN_BUSY);
	jobs_start(S->o.jobs, &r->job);
	pthread_mutex_lock(&r->done_mu);
	while (!r->job_done)
		pthread_cond_wait(&r->done_cv, &r->done_mu);
	pthread_mutex_unlock(&r->done_mu);
	return answer_job(r);
}

int sniffed(const unsigned char *p, size_t len)
{
	const struct image_format_desc *d = image_format_desc(image_sniff(p, len));
	return d && d->read;
}

enum MHD_Result respond_not_image(struct req *r, const char *what)
{
	char titles[200];
	return respond_error(r, API_E_UNSUPPORTED_MEDIA_TYPE, "%s: not a %s image (by its first "
	                     "bytes)", what, image_format_titles(titles, sizeof titles, 0, "or"));
}

/* 406 for an Accept header that allows none of the formats made, listing them (also as the
 * error's "formats" array). */
enum MHD_Result not_acceptable(struct req *r, const char *accept)
{
	char list[256] = "";
	json_t *types = json_array();
	size_t n;
	const struct image_format_desc *fm = image_formats(&n);
	for (size_t i = 0; i < n; i++) {
		if (!fm[i].write)
			continue;
		const char *t = fm[i].media_types[0];
		json_array_append_new(types, json_string(t));
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "", t);
	}
	char msg[640];
	snprintf(msg, sizeof msg, "Accept: '%.200s' allows none of the image types this server "
	         "makes: %s (format= chooses one whatever Accept says)", accept, list);
	api_utf8_clean(msg);
	const struct api_error_def *e = api_error(API_E_NOT_ACCEPTABLE);
	json_t *o = json_pack("{s:{s:i,s:s,s:s,s:o}}", "error", "status", e->status, "code",
	                      e->code, "message", msg, "formats", types);
	snprintf(r->code, sizeof r->code, "%s", e->code);
	const char *extra[] = {"Vary", "Accept", NULL};
	return respond_json(r, e->status, o, extra);
}

/* The boundary of r's multipart/form-data body, from its Content-Type: 0, MULTIPART_E_NOT for
 * another type, or MULTIPART_E_BOUNDARY (multipart_boundary). */
static int body_boundary(struct req *r, char boundary[MULTIPART_BOUNDARY_MAX + 1])
{
	const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                             MHD_HTTP_HEADER_CONTENT_TYPE);
	return multipart_boundary(ct, boundary);
}

/* A multipart form field as a parameter's text: the part's bytes, which must be short text. */
static int form_field(struct request *req, const struct multipart_part *part,
                      char err[REQUEST_ERR_LEN])
{
	char text[OPT_STR_MAX];
	if (part->len >= sizeof text || memchr(part->data, 0, part->len)) {
		snprintf(err, REQUEST_ERR_LEN, "%.64s: a form field's value must be text shorter than "
		         "%zu bytes", part->name, sizeof text);
		return REQUEST_E_VALUE;
	}
	memcpy(text, part->data, part->len);
	text[part->len] = 0;
	return request_set(req, part->name, text, REQUEST_SRC_FORM, err);
}

enum MHD_Result route_image(struct req *r)
{
	struct job *j = &r->job;
	enum MHD_Result ret;
	if (operation_method_bit(r->method) == OP_M_GET)
		return route_render_src(r);
	if (job_from_query(r, 0, &ret))
		return ret;
	char boundary[MULTIPART_BOUNDARY_MAX + 1];
	int mrc = body_boundary(r, boundary);
	if (mrc == MULTIPART_E_BOUNDARY)
		return respond_error(r, API_E_BAD_MULTIPART, "multipart/form-data without a valid "
		                     "boundary parameter");
	if (!r->len)
		return respond_error(r, API_E_EMPTY_BODY, "the request has no body: send an image "
		                     "(raw, or as the multipart part 'image')");
	char err[REQUEST_ERR_LEN];
	if (mrc == 0) {
		/* parts: image (or file, what an HTML form's file input is often named), kernel,
		 * params (a JSON object), and any parameter as a form field of its own */
		struct multipart_part parts[MAX_PARTS];
		size_t n;
		char merr[MULTIPART_ERR_LEN];
		if (multipart_parse(r->body, r->len, boundary, parts, MAX_PARTS, &n, merr))
			return respond_error(r, API_E_BAD_MULTIPART, "%s", merr);
		const struct multipart_part *img = NULL, *ker = NULL, *par = NULL;
		for (size_t i = 0; i < n; i++) {
			const struct multipart_part *p = &parts[i];
			if (!strcmp(p->name, "image") || !strcmp(p->name, "file")) {
				if (img)
					return respond_error(r, API_E_BAD_MULTIPART, "both 'image' and 'file' "
					                     "parts: send the image once");
				img = p;
			} else if (!strcmp(p->name, "kernel") && (p->filename[0] || sniffed(p->data, p->len))) {
				ker = p; /* an image part; a short text field named kernel is kernel=NAME */
			} else if (!strcmp(p->name, "params")) {
				par = p;
			} else if (!request_find(p->name, j->req.op)) {
				return respond_error(r, API_E_BAD_MULTIPART, "unknown multipart part '%.64s' "
				                     "(expected image or file, kernel, params, or a parameter)",
				                     p->name);
			} else if (form_field(&j->req, p, err)) {
				return respond_error(r, API_E_BAD_PARAMETER, "%s", err);
			}
		}
		if (!img)
			return respond_error(r, API_E_MISSING_IMAGE, "multipart body without an 'image' "
			                     "part");
		if (!img->len)
			return respond_error(r, API_E_EMPTY_BODY, "the 'image' part is empty");
		if (par && request_set_json(&j->req, par->data, par->len, err))
			return respond_error(r, API_E_BAD_PARAMETER, "%s", err);
		j->image = img->data;
		j->image_len = img->len;
		if (ker) {
			if (!ker->len)
				return respond_error(r, API_E_EMPTY_BODY, "the 'kernel' part is empty");
			if (!sniffed(ker->data, ker->len))
				return respond_not_image(r, "kernel");
			j->kernel_data = ker->data;
			j->kernel_len = ker->len;
		}
	} else {
		j->image = r->body;
		j->image_len = r->len;
	}
	if (request_finish(&j->req, j->kernel_data != NULL, err))
		return respond_error(r, API_E_BAD_PARAMETER, "%s", err);
	if (job_accept(r, &ret))
		return ret;
	if (!sniffed(j->image, j->image_len))
		return respond_not_image(r, "image");
	if (job_named_kernel(r, &ret))
		return ret;
	return start_job(r);
}

/* An answer for a finished job. */
static enum MHD_Result answer_job(struct req *r)
{
	struct job *j = &r->job;
	if (j->dropped) {
		r->status = 499;
		return MHD_NO; /* the client has gone: close */
	}
	if (j->status >= 400 || !j->body) {
		if (j->status == 503)
			return respond_busy(r, j->error, j->message);
		if (j->status == 429) {
			char ra[16];
			snprintf(ra, sizeof ra, "%d", j->retry_after > 0 ? j->retry_after : 1);
			const char *extra[] = {"Retry-After", ra, NULL};
			return respond_error_x(r, j->error, extra, "%s", j->message);
		}
		return respond_error(r, j->error ? j->error : API_E_INTERNAL, "%s",
		                     j->message[0] ? j->message : "no result");
	}
	unsigned char *body = j->body;
	j->body = NULL;
	char lost[64] = "";
	if (j->lost & IMAGE_LOST_ALPHA)
		strcat(lost, "alpha,");
	if (j->lost & IMAGE_LOST_RANGE)
		strcat(lost, "range,");
	if (j->lost & IMAGE_LOST_NEGATIVE)
		strcat(lost, "negative,");
	if (j->lost & IMAGE_LOST_PRECISION)
		strcat(lost, "precision,");
	if (*lost)
		lost[strlen(lost) - 1] = 0;
	char gpu[16];
	/* with several GPUs, the service's numbering: the workers' GPU threads in worker order */
	int base = r->S->o.service ? service_self(r->S->o.service) * r->S->cfg.gpu_threads : 0;
	snprintf(gpu, sizeof gpu, "%d", base + j->gpu);
	const char *extra[23] = {NULL};
	int e = 0;
	if (!request_given(&j->req, "format")) { /* the format followed Accept, or could have */
		extra[e++] = "Vary";
		extra[e++] = "Accept";
	}
	if (*lost) {
		extra[e++] = "X-Image-Lost";
		extra[e++] = lost;
	}
	if (j->gpu >= 0) {
		extra[e++] = "X-Gpu";
		extra[e++] = gpu;
	}
	if (j->kind == JOB_CONVOLVE) { /* which path computed it (method=auto chooses) */
		extra[e++] = "X-Convolve-Method";
		extra[e++] = j->method == CONVOLVE_SPATIAL ? "spatial" : "fft";
	}
	char tiles[32];
	if (j->tiles_x * j->tiles_y > 1) { /* the frame ran in overlap-save tiles */
		snprintf(tiles, sizeof tiles, "%dx%d", j->tiles_x, j->tiles_y);
		extra[e++] = "X-Tiles";
		extra[e++] = tiles;
	}
	char borrowed[32];
	if (j->borrowed_w) { /* ran on another size's plan while its own is built */
		snprintf(borrowed, sizeof borrowed, "%dx%d", j->borrowed_w, j->borrowed_h);
		extra[e++] = "X-Borrowed-Plan";
		extra[e++] = borrowed;
	}
	e = store_answer_headers(r, j, extra, e); /* Location; a GET render's ETag and caching */
	if (r->cache_key[0] && j->status == 200) { /* --result-cache: kept for the next miss */
		struct result_meta meta;
		memset(&meta, 0, sizeof meta);
		snprintf(meta.content_type, sizeof meta.content_type, "%s", j->content_type);
		snprintf(meta.lost, sizeof meta.lost, "%s", lost);
		result_cache_put(r->S->o.results, r->cache_key, body, j->body_len, &meta);
	}
	return respond(r, j->status, j->content_type, body, j->body_len, 1, extra);
}

/* POST /v1/conv2d, /v1/conv2d_transpose: multipart parts input, weight, optional bias (NPY),
 * params (JSON) or parameters as form fields, and parameters in the query; the answer is the
 * output as an NPY. */
enum MHD_Result route_tensor(struct req *r)
{
	struct job *j = &r->job;
	enum MHD_Result ret;
	if (job_from_query(r, 0, &ret))
		return ret;
	char boundary[MULTIPART_BOUNDARY_MAX + 1];
	int mrc = body_boundary(r, boundary);
	if (mrc)
		return respond_error(r, mrc == MULTIPART_E_BOUNDARY ? API_E_BAD_MULTIPART :
		                     API_E_UNSUPPORTED_MEDIA_TYPE,
		                     "send multipart/form-data with the parts input, weight, optional "
		                     "bias (NPY files) and params (JSON)");
	struct multipart_part parts[MAX_PARTS];
	size_t n;
	char merr[MULTIPART_ERR_LEN], err[REQUEST_ERR_LEN];
	if (multipart_parse(r->body, r->len, boundary, parts, MAX_PARTS, &n, merr))
		return respond_error(r, API_E_BAD_MULTIPART, "%s", merr);
	static const char *names[3] = {"input", "weight", "bias"};
	const struct multipart_part *par = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct multipart_part *p = &parts[i];
		int k = -1;
		for (int m = 0; m < 3; m++)
			if (!strcmp(p->name, names[m]))
				k = m;
		if (k >= 0) {
			if (!p->len)
				return respond_error(r, API_E_EMPTY_BODY, "the '%s' part is empty", names[k]);
			j->npy[k] = p->data;
			j->npy_len[k] = p->len;
		} else if (!strcmp(p->name, "params")) {
			par = p;
		} else if (!request_find(p->name, j->req.op)) {
			return respond_error(r, API_E_BAD_MULTIPART, "unknown multipart part '%.64s' "
			                     "(expected input, weight, bias, params, or a parameter)",
			                     p->name);
		} else if (form_field(&j->req, p, err)) {
			return respond_error(r, API_E_BAD_PARAMETER, "%s", err);
		}
	}
	if (!j->npy[0] || !j->npy[1])
		return respond_error(r, API_E_MISSING_TENSOR, "the parts input and weight (NPY) are "
		                     "required");
	if (par && request_set_json(&j->req, par->data, par->len, err))
		return respond_error(r, API_E_BAD_PARAMETER, "%s", err);
	if (request_finish(&j->req, 0, err))
		return respond_error(r, API_E_BAD_PARAMETER, "%s", err);
	return start_job(r);
}
