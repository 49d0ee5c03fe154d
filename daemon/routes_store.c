/* Stored source images and the URLs that render them: PUT, GET, DELETE /v1/images/NAME and GET
 * /v1/images; GET /v1/bloom/NAME and /v1/convolve/NAME, which render a stored image with the
 * query's parameters as a job like a POST's, answered with a strong ETag (304 to a matching
 * If-None-Match before any GPU work), a Cache-Control a CDN can use and Vary: Accept where the
 * format follows Accept; optionally signed URLs (urlsign.h). See http.h. */
#include "daemon/apiutil.h"
#include "daemon/http.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "daemon/etag.h"
#include "core/urlsign.h"
#include "daemon/web.h"
#include "api/request.h"

/* The Cache-Control of an answer that needed the API key: a shared cache must not give it to
 * clients without one; the client's own cache may keep it and revalidate. */
#define CACHE_PRIVATE "private, no-cache"

/* ---- access ---- */

struct arg_list {
	struct urlsign_param p[URLSIGN_MAX_PARAMS];
	size_t n;
	int over; /* more than URLSIGN_MAX_PARAMS */
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
	(void)kind;
	struct arg_list *a = cls;
	if (a->n == URLSIGN_MAX_PARAMS) {
		a->over = 1;
		return MHD_NO;
	}
	a->p[a->n++] = (struct urlsign_param){key, value};
	return MHD_YES;
}

int store_access(struct req *r, int bearer, char *msg, size_t len)
{
	struct server *S = r->S;
	r->by_key = 0;
	if (S->o.sign_key) {
		if (bearer) {
			r->by_key = 1;
			return 0;
		}
		struct arg_list a;
		memset(&a, 0, sizeof a);
		MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, collect_arg, &a);
		int rc = a.over ? URLSIGN_E_BAD
		                : urlsign_verify(S->o.sign_key, S->o.sign_key_len, r->path, a.p, a.n);
		if (!rc)
			rc = urlsign_check_expiry(a.p, a.n, (long long)time(NULL),
			                          S->cfg.url_require_expiry);
		if (!rc)
			return 0;
		if (rc == URLSIGN_E_EXPIRED) {
			snprintf(msg, len, "this signed URL expired (exp is past by more than the %d s "
			         "allowed for clock skew): sign a new one", URLSIGN_EXP_SKEW);
			return API_E_URL_EXPIRED;
		}
		if (rc == URLSIGN_E_NO_EXP) {
			snprintf(msg, len, "this daemon takes signed URLs with an expiry only "
			         "(--url-require-expiry): sign one with exp= (fftbloom sign-url "
			         "--expires-in SECONDS)");
			return API_E_EXPIRY_REQUIRED;
		}
		if (rc == URLSIGN_E_EXP) {
			snprintf(msg, len, "exp: not Unix seconds (one decimal integer)");
			return API_E_BAD_PARAMETER;
		}
		if (rc == URLSIGN_E_MISSING)
			snprintf(msg, len, "%s needs a signed URL (a sig= parameter: see fftbloom sign-url) "
			         "or Authorization: Bearer <API key>", r->path);
		else
			snprintf(msg, len, "the signature does not match this path and query (sig = "
			         "base64url(HMAC-SHA256(key, path + '?' + the sorted, percent-encoded "
			         "parameters without sig)))%s", a.over ? "; too many parameters" : "");
		return rc == URLSIGN_E_MISSING ? API_E_SIGNATURE_REQUIRED : API_E_BAD_SIGNATURE;
	}
	if (S->o.api_key) {
		if (!bearer) {
			snprintf(msg, len, "%s requires Authorization: Bearer <API key>", r->path);
			return API_E_UNAUTHORIZED;
		}
		r->by_key = 1;
	}
	return 0;
}

/* ---- answers ---- */

/* A render's validators and caching rules at extra[e...]; returns the new e. */
static int render_headers(struct req *r, const char **extra, int e)
{
	extra[e++] = MHD_HTTP_HEADER_ETAG;
	extra[e++] = r->etag;
	extra[e++] = MHD_HTTP_HEADER_CACHE_CONTROL;
	extra[e++] = r->by_key ? CACHE_PRIVATE : r->S->cfg.cache_control;
	int has_vary = 0; /* answer_job names Accept already when format= is not given */
	for (int i = 0; i < e; i += 2)
		has_vary |= !strcasecmp(extra[i], MHD_HTTP_HEADER_VARY);
	if (r->vary_accept && !has_vary) {
		extra[e++] = MHD_HTTP_HEADER_VARY;
		extra[e++] = "Accept";
	}
	if (r->result_cache) {
		extra[e++] = "X-Result-Cache";
		extra[e++] = r->result_cache;
	}
	return e;
}

int store_answer_headers(struct req *r, const struct job *j, const char **extra, int e)
{
	if (j->status == 201 && (r->route == OP_KERNEL || r->route == OP_IMAGE)) {
		snprintf(r->location, sizeof r->location, "%s%s", r->route == OP_KERNEL ?
		         "/v1/kernels/" : "/v1/images/", r->name);
		extra[e++] = MHD_HTTP_HEADER_LOCATION;
		extra[e++] = r->location;
		return e;
	}
	if (r->etag[0])
		e = render_headers(r, extra, e);
	return e;
}

/* ---- --result-cache ---- */

/* Sets r->cache_key from a render's digest when there is a result cache. */
static void cache_key_of(struct req *r, const unsigned char d[32])
{
	if (!r->S->o.results)
		return;
	for (int i = 0; i < 32; i++)
		snprintf(r->cache_key + 2 * i, 3, "%02x", d[i]);
}

/* A stored answer for r->cache_key: 1 with it in *body (free it), or 0 (a miss, noted for
 * X-Result-Cache). */
static int cache_lookup(struct req *r, unsigned char **body, size_t *len,
                        struct result_meta *meta)
{
	if (!r->cache_key[0])
		return 0;
	int hit = result_cache_get(r->S->o.results, r->cache_key, body, len, meta);
	r->result_cache = hit ? "hit" : "miss";
	return hit;
}

/* The answer from the result cache: the stored bytes with the render's headers. */
static enum MHD_Result answer_cached(struct req *r, unsigned char *body, size_t len,
                                     const struct result_meta *meta)
{
	const char *extra[16] = {NULL};
	int e = 0;
	if (meta->lost[0]) {
		extra[e++] = "X-Image-Lost";
		extra[e++] = meta->lost;
	}
	render_headers(r, extra, e);
	r->cache_key[0] = 0; /* nothing to store again */
	return respond(r, 200, meta->content_type, body, len, 1, extra);
}

/* The 304 for a matching If-None-Match (no job), or 0 when it does not match. */
static int not_modified(struct req *r, const char *inm, enum MHD_Result *ret)
{
	if (!inm || !web_etag_match(inm, r->etag))
		return 0;
	const char *extra[10] = {NULL};
	render_headers(r, extra, 0);
	*ret = respond(r, 304, NULL, NULL, 0, 0, extra);
	return 1;
}

/* ---- /v1/images ---- */

static void list_one(const struct image_entry *e, void *ctx)
{
	json_array_append_new(ctx, images_entry_json(e));
}

enum MHD_Result route_images(struct req *r)
{
	json_t *a = json_array();
	images_each(r->S->o.images, list_one, a);
	return respond_json(r, 200, json_pack("{s:o}", "images", a), NULL);
}

enum MHD_Result route_image_store(struct req *r)
{
	struct server *S = r->S;
	if (!strcmp(r->method, "PUT")) {
		if (!r->len)
			return respond_error(r, API_E_EMPTY_BODY, "the request has no body: send the "
			                     "image");
		if (!sniffed(r->body, r->len))
			return respond_not_image(r, "image");
		if (r->len > S->cfg.image_memory)
			return respond_error(r, API_E_IMAGE_TOO_LARGE, "the image's %zu bytes are more "
			                     "than the whole --image-memory of %llu bytes", r->len,
			                     S->cfg.image_memory);
		r->job.kind = JOB_IMAGE_PUT;
		r->job.image = r->body;
		r->job.image_len = r->len;
		r->job.store = S->o.images;
		snprintf(r->job.put_name, sizeof r->job.put_name, "%s", r->name);
		return start_job(r);
	}
	if (!strcmp(r->method, "DELETE")) {
		if (images_delete(S->o.images, r->name))
			return respond_error(r, API_E_IMAGE_NOT_FOUND, "no image named '%s'", r->name);
		if (S->o.service && service_store_delete(S->o.service, JOBS_STORED_IMAGE, r->name))
			return respond_error(r, API_E_INTERNAL, "the DELETE could not be shared with the "
			                     "other GPUs' workers");
		return respond(r, 204, NULL, NULL, 0, 0, NULL);
	}
	struct image_entry *e = images_get(S->o.images, r->name);
	if (!e)
		return respond_error(r, API_E_IMAGE_NOT_FOUND, "no image named '%s'", r->name);
	json_t *o = images_entry_json(e);
	images_release(S->o.images, e);
	return respond_json(r, 200, o, NULL);
}

/* ---- GET /v1/bloom/NAME, /v1/convolve/NAME ---- */

/* A GET render's parameters from the query (skip: job_from_query's), the Accept header's
 * formats and Vary; 1 when it answered (*ret) a bad query or a 406. */
static int render_query(struct req *r, int skip, enum MHD_Result *ret)
{
	struct job *j = &r->job;
	if (job_from_query(r, skip, ret))
		return 1;
	if (!request_given(&j->req, "format"))
		r->vary_accept = 1;
	char err[REQUEST_ERR_LEN];
	if (request_finish(&j->req, 0, err)) {
		*ret = respond_error(r, API_E_BAD_PARAMETER, "%s", err);
		return 1;
	}
	return job_accept(r, ret);
}

enum MHD_Result route_render(struct req *r)
{
	struct server *S = r->S;
	struct job *j = &r->job;
	enum MHD_Result ret;
	if (render_query(r, 1, &ret)) /* sig: a signed URL's, verified before */
		return ret;
	r->stored = images_get(S->o.images, r->name);
	if (!r->stored)
		return respond_error(r, API_E_IMAGE_NOT_FOUND, "no image named '%s' (store one with "
		                     "PUT /v1/images/%s)", r->name, r->name);
	if (job_named_kernel(r, &ret))
		return ret;
	/* The answer's format as the encoder will resolve it: the stored image's facts are those
	 * its render decodes to (the same bytes, the same decoder). */
	enum image_format fmt;
	int bits;
	format_resolve(j->req.format, &j->accept, &r->stored->facts.info, &fmt, &bits);
	/* the defaults its kind of input takes, as the decode will resolve them: a query that
	 * spells them out shares the tag */
	request_resolve_input(&j->req, request_input_kind(&r->stored->facts.info));
	struct etag_render er = {
		.engine = S->engine, .image = r->stored->digest,
		.kernel = j->named ? j->named->digest : NULL, .req = &j->req, .format = (int)fmt,
		.bits = bits, .quality = j->req.quality ? j->req.quality : api_default_quality(&S->cfg, fmt),
	};
	unsigned char digest[32];
	if (etag_render_digest(&er, digest) || etag_render_tag(&er, r->etag)) {
		kernels_release(S->o.kernels, j->named);
		j->named = NULL;
		return respond_error(r, API_E_INTERNAL, "the answer's ETag could not be computed");
	}
	const char *inm = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                              MHD_HTTP_HEADER_IF_NONE_MATCH);
	cache_key_of(r, digest);
	unsigned char *cached;
	size_t clen;
	struct result_meta meta;
	int done = not_modified(r, inm, &ret); /* the client has these bytes: no job */
	if (!done && cache_lookup(r, &cached, &clen, &meta)) {
		done = 1;
		ret = answer_cached(r, cached, clen, &meta);
	}
	if (done) {
		kernels_release(S->o.kernels, j->named);
		j->named = NULL;
		return ret;
	}
	j->image = r->stored->data;
	j->image_len = r->stored->len;
	return start_job(r);
}

/* ---- GET /v1/bloom?src=URL, /v1/convolve?src=URL ---- */

/* What the fetch thread needs to decide, from the origin's validators alone, that the body is
 * not wanted: the render's inputs but the image, the client's If-None-Match, the cache. */
struct src_decide {
	struct req *r;
	struct etag_render er;
	const char *inm;
	int not_modified;       /* the client has this render */
	unsigned char *cached;  /* or the result cache has it */
	size_t cached_len;
	struct result_meta meta;
};

/* The render's ETag and cache key for an origin image's identity. */
static int src_tag(struct src_decide *d, const unsigned char identity[32])
{
	d->er.image = identity;
	unsigned char digest[32];
	if (etag_render_digest(&d->er, digest) || etag_render_tag(&d->er, d->r->etag))
		return -1;
	cache_key_of(d->r, digest);
	return 0;
}

/* origin_decide_fn, on the fetch thread: 1 when the client or the cache has this render. */
static int src_known(const unsigned char identity[32], void *ctx)
{
	struct src_decide *d = ctx;
	if (src_tag(d, identity))
		return 0;
	if (d->inm && web_etag_match(d->inm, d->r->etag))
		return d->not_modified = 1;
	if (cache_lookup(d->r, &d->cached, &d->cached_len, &d->meta))
		return 1;
	return 0;
}

static int origin_api_error(int rc, int http_status)
{
	switch (rc) {
	case ORIGIN_E_OFF: return API_E_ORIGIN_OFF;
	case ORIGIN_E_URL: return API_E_BAD_SRC;
	case ORIGIN_E_NOT_ALLOWED: return API_E_ORIGIN_NOT_ALLOWED;
	case ORIGIN_E_ADDRESS: return API_E_ORIGIN_ADDRESS;
	case ORIGIN_E_TIMEOUT: return API_E_ORIGIN_TIMEOUT;
	case ORIGIN_E_TOO_LARGE: return API_E_ORIGIN_TOO_LARGE;
	case ORIGIN_E_BUSY: return API_E_ORIGIN_BUSY;
	case ORIGIN_E_TLS: return API_E_ORIGIN_TLS;
	case ORIGIN_E_SHUTDOWN: return API_E_SHUTTING_DOWN;
	case ORIGIN_E_NOMEM: return API_E_OUT_OF_MEMORY;
	case ORIGIN_E_LOCATION: return API_E_ORIGIN_ERROR;
	case ORIGIN_E_STATUS:
		return http_status == 404 || http_status == 410 ? API_E_ORIGIN_NOT_FOUND
		                                                : API_E_ORIGIN_ERROR;
	default: return API_E_ORIGIN_ERROR;
	}
}

enum MHD_Result route_render_src(struct req *r)
{
	struct server *S = r->S;
	struct job *j = &r->job;
	enum MHD_Result ret;
	const char *src = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "src");
	if (!src || !*src)
		return respond_error(r, API_E_BAD_SRC, "GET %s needs src=URL (percent-encoded): the "
		                     "image to fetch from an --origin-allow origin (a stored image "
		                     "renders at %s/NAME)", r->path, r->path);
	if (render_query(r, 2, &ret)) /* sig: a signed URL's, verified before; src: above */
		return ret;
	char oerr[ORIGIN_ERR_LEN];
	int explicit_ip;
	int rc = origin_check_url(S->o.origin, src, &explicit_ip, oerr); /* before any work */
	if (rc)
		return respond_error(r, origin_api_error(rc, 0), "%s", oerr);
	if (job_named_kernel(r, &ret))
		return ret;
	/* The answer's format is not resolved before the image is decoded: the tag takes the
	 * request's format= and the Accept header's preferences, which with the image (named by
	 * its identity) decide it. Quality 0 follows the format's default, so all of them. */
	struct src_decide d = {
		.r = r, .inm = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
		                                           MHD_HTTP_HEADER_IF_NONE_MATCH),
		.er = {.engine = S->engine, .kernel = j->named ? j->named->digest : NULL,
		       .req = &j->req, .format = j->req.format, .bits = 0, .accept = &j->accept,
		       .quality = j->req.quality ? j->req.quality
		                                 : S->cfg.jpeg_quality + 101 * S->cfg.webp_quality +
		                                   101 * 101 * S->cfg.avif_quality},
	};
	struct origin_result res;
	double t0 = clock_s();
	rc = origin_fetch(S->o.origin, src, src_known, &d, &res, oerr);
	r->origin_s = clock_s() - t0;
	if (rc) {
		kernels_release(S->o.kernels, j->named);
		j->named = NULL;
		r->etag[0] = 0;
		if (rc == ORIGIN_E_BUSY)
			return respond_busy(r, API_E_ORIGIN_BUSY, oerr);
		return respond_error(r, origin_api_error(rc, res.http_status), "%s", oerr);
	}
	int done = 0;
	if (d.not_modified) {
		done = not_modified(r, d.inm, &ret);
	} else if (d.cached) {
		done = 1;
		ret = answer_cached(r, d.cached, d.cached_len, &d.meta);
	} else if (!res.by_validators) { /* the identity came with the bytes: decide now */
		if (src_tag(&d, res.identity)) {
			origin_result_free(&res);
			kernels_release(S->o.kernels, j->named);
			j->named = NULL;
			return respond_error(r, API_E_INTERNAL, "the answer's ETag could not be computed");
		}
		done = not_modified(r, d.inm, &ret);
		unsigned char *cached;
		size_t clen;
		struct result_meta meta;
		if (!done && cache_lookup(r, &cached, &clen, &meta)) {
			done = 1;
			ret = answer_cached(r, cached, clen, &meta);
		}
	}
	if (!done && !sniffed(res.data, res.len)) {
		done = 1;
		r->etag[0] = 0;
		ret = respond_error(r, API_E_ORIGIN_NOT_IMAGE, "src: %.300s is not an image this "
		                    "server reads (by its first bytes)", res.url);
	}
	if (done) {
		origin_result_free(&res);
		kernels_release(S->o.kernels, j->named);
		j->named = NULL;
		return ret;
	}
	/* the encoded bytes count against --memory-budget while the render holds them, as a
	 * POST's body does (released with r) */
	size_t n = res.len;
	int hrc = S->o.jobs ? jobs_memory_hold(S->o.jobs, n) : 0;
	if (hrc) {
		origin_result_free(&res);
		kernels_release(S->o.kernels, j->named);
		j->named = NULL;
		r->etag[0] = 0;
		if (hrc == JOBS_E_OVER_BUDGET)
			return respond_error(r, API_E_ORIGIN_TOO_LARGE, "src: the image's %zu bytes are "
			                     "more than the whole --memory-budget", n);
		return respond_busy(r, API_E_MEMORY_BUDGET, "the origin's image does not fit the "
		                    "--memory-budget that the requests in progress hold; retry later");
	}
	if (S->o.jobs)
		r->held += n;
	r->fetched = res.data; /* freed with r, after the job */
	j->image = res.data;
	j->image_len = res.len;
	return start_job(r);
}
