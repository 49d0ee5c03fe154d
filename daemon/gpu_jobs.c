/* A GPU thread's jobs on the GPU, by kind (operation.h's job kinds): a frame (the direct
 * convolution when it wins, else the FFT path, its result left in flight or taken), or a tensor
 * job and its engine call; failures answered through the error table. See jobs_impl.h. */
#include "daemon/jobs_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/apiutil.h"
#include "api/engine_errors.h"
#include "daemon/gpu_cancel.h"
#include "core/log.h"
#include "gles/engine.h"
#include "gles/resample.h"
#include "core/clock.h"

#define GPU_SLOW_JOB_MS 20.0 /* a bloom job holding the GPU thread this long is logged (debug) */

/* The engine calls of the tensor jobs: 0 or a spatial_* code (deconv's are the same) with
 * err. */
static int tensor_conv2d(struct engine *e, struct job *j, char *err)
{
	if (engine_want(e, ENGINE_SPATIAL, err))
		return SPATIAL_E_GPU;
	struct spatial_stats st;
	int rc = spatial_conv2d(engine_spatial(e), &j->sc, j->tx.data, j->tw.data, j->tb.data,
	                        j->ty.data, &st, err);
	j->gpu_copy_s = (st.upload_ms + st.download_ms) * 1e-3;
	return rc;
}

static int tensor_conv2d_t(struct engine *e, struct job *j, char *err)
{
	if (engine_want(e, ENGINE_DECONV, err))
		return SPATIAL_E_GPU;
	struct deconv_stats st;
	int rc = deconv_run(engine_deconv(e), &j->dc, j->tx.data, j->tw.data, j->tb.data,
	                    j->ty.data, &st, err);
	j->gpu_copy_s = (st.upload_ms + st.download_ms) * 1e-3;
	return rc;
}

static void run_tensor(struct gpu *g, struct engine *e, struct job *j);
static void run_frame(struct gpu *g, struct engine *e, struct job *j);

/* How the GPU thread runs each kind of job (operation.h's job kinds): a frame (bloom, convolve)
 * or a tensor job and its engine call. Kinds without a row never reach the GPU queue. */
static const struct {
	void (*run)(struct gpu *g, struct engine *e, struct job *j);
	int (*tensor)(struct engine *e, struct job *j, char *err);
} gpu_jobs[JOB_KINDS] = {
	[JOB_BLOOM] = {run_frame, NULL},
	[JOB_CONVOLVE] = {run_frame, NULL},
	[JOB_CONV2D] = {run_tensor, tensor_conv2d},
	[JOB_CONV2D_T] = {run_tensor, tensor_conv2d_t},
};

/* A tensor job (its tensors decoded and described by a codec thread): its engine call, then
 * the answer to a failure. */
static void run_tensor(struct gpu *g, struct engine *e, struct job *j)
{
	static __thread char err[ENGINE_ERR_LEN];
	err[0] = 0;
	int rc = gpu_jobs[j->kind].tensor(e, j, err);
	const char *what = operation_job_label(j->kind);
	if (rc == SPATIAL_E_CANCELLED) {
		gpu_cancelled(g, j, what);
		tensor_free(&j->ty);
	} else if (rc) {
		set_error(j, engine_errors_spatial(rc), "%s", err[0] ? err : spatial_strerror(rc));
		if (j->status >= 500)
			log_msg(LOG_ERROR, "gpu %d: %s failed: %s", g->id, what, j->message);
		tensor_free(&j->ty);
	}
	tensor_free(&j->tx);
	tensor_free(&j->tw);
	tensor_free(&j->tb);
	j->gpu = g->id;
}

static int image_finite(const struct image *img);

/* A convolve job the direct path may run (a float frame): the method by the model, then the
 * direct convolution when it wins. 1 when it ran the job (or failed it), 0 for the FFT path. */
static int run_direct(struct gpu *g, struct engine *e, const struct bloom_kernel *bk,
                      struct job *j)
{
	struct bloom_ctx *b = engine_bloom(e);
	static __thread char err[ENGINE_ERR_LEN];
	err[0] = 0;
	const struct bloom_params *p = &j->req.p;
	if (j->kind != JOB_CONVOLVE || p->method == CONVOLVE_FFT || !j->in.pixels)
		return 0;
	struct image gen = {0};
	const struct image *k = bk->img;
	char berr[BLOOM_ERR_LEN];
	int rc = 0, method = CONVOLVE_FFT;
	if (!k && !(rc = bloom_kernel_preset(b, &p->preset, &gen, berr)))
		k = &gen;
	if (rc)
		snprintf(err, CONVOLVE_ERR_LEN, "%.500s", berr);
	if (!rc)
		rc = engine_want(e, ENGINE_SPATIAL, err) ? BLOOM_E_GPU : 0;
	struct spatial_ctx *sp = engine_spatial(e);
	if (!rc)
		rc = convolve_choose(b, sp, &g->model, p->method, j->in.width, j->in.height,
		                     k->width, k->height, p, &method, NULL, NULL, err);
	if (!rc && method == CONVOLVE_SPATIAL) {
		double t0 = clock_s();
		struct spatial_stats sst;
		memset(&sst, 0, sizeof sst);
		rc = convolve_spatial(sp, &j->in, k, p, &j->result, &sst, err);
		j->gpu_wait_s = clock_s() - t0;
		j->tiles_x = sst.tiles_x, j->tiles_y = sst.tiles_y;
		if (rc == BLOOM_E_TOO_LARGE && p->method == CONVOLVE_AUTO) {
			method = CONVOLVE_FFT; /* beyond the direct path's limits (a kernel past the
			                          uniform-block limit): the FFT path runs it */
			rc = 0;
		}
	}
	image_free(&gen);
	if (!rc && method == CONVOLVE_FFT)
		return 0;
	if (rc == BLOOM_E_CANCELLED) {
		image_free(&j->result);
		gpu_cancelled(g, j, "a direct convolution");
	} else if (rc) {
		set_error(j, engine_errors_bloom(rc), "%s", err);
	} else if (!image_finite(&j->result)) {
		image_free(&j->result);
		set_error(j, API_E_RESULT_NOT_FINITE, "samples of the result are not finite: float32 "
		          "overflowed in the convolution (an image or kernel value near 3.4e38, or "
		          "infinite); scale the image or kernel down");
	}
	j->method = method;
	image_free(&j->in);
	image_free(&j->kimg);
	j->gpu = g->id;
	return 1;
}

/* 1 when every sample of img is finite. */
static int image_finite(const struct image *img)
{
	size_t n = (size_t)img->width * img->height * img->channels;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(img->pixels[i]))
			return 0;
	return 1;
}

/* Remembers the shape of a frame that ran on its own plan or borrowed another's (the newest
 * first, JOBS_SHAPES at most): what a successor process builds (jobs_gpu_status.shapes). */
static void note_shape(struct gpu *g, int w, int h, const struct bloom_stats *st,
                       const struct image *k, const struct bloom_params *p)
{
	struct jobs_shape s;
	memset(&s, 0, sizeof s);
	s.w = w, s.h = h, s.kw = k ? k->width : 0, s.kh = k ? k->height : 0;
	s.pw = st->borrowed ? st->own_w : st->padded_w;
	s.ph = st->borrowed ? st->own_h : st->padded_h;
	s.gray = st->gray_kernel;
	s.p = *p;
	pthread_mutex_lock(&g->J->lock);
	int i = 0;
	for (; i < g->nshapes; i++) {
		const struct jobs_shape *o = &g->shapes[i];
		if (o->w == s.w && o->h == s.h && o->pw == s.pw && o->ph == s.ph && o->kw == s.kw &&
		    o->kh == s.kh && o->gray == s.gray &&
		    o->p.technique == p->technique && o->p.precision == p->precision &&
		    o->p.kernel_scale == p->kernel_scale && o->p.preset.kind == p->preset.kind &&
		    o->p.preset.size == p->preset.size && o->p.center.mode == p->center.mode && o->p.center.x == p->center.x &&
		    o->p.center.y == p->center.y)
			break;
	}
	if (i == g->nshapes && g->nshapes < JOBS_SHAPES)
		g->nshapes++;
	if (i == g->nshapes)
		i--; /* full: the oldest goes */
	memmove(&g->shapes[1], &g->shapes[0], sizeof s * (size_t)i);
	g->shapes[0] = s;
	pthread_mutex_unlock(&g->J->lock);
}

static void gpu_run(struct gpu *g, struct bloom_ctx *b, struct job *j)
{
	struct jobs *J = g->J;
	struct bloom_kernel bk;
	memset(&bk, 0, sizeof bk);
	if (j->named) {
		bk.img = &j->named->img;
		memcpy(bk.digest, j->named->digest, sizeof bk.digest);
	} else if (j->kimg.pixels) {
		bk.img = &j->kimg;
	}
	struct bloom_stats st;
	memset(&st, 0, sizeof st);
	static __thread char err[BLOOM_ERR_LEN];
	err[0] = 0;
	int op = j->kind == JOB_CONVOLVE ? BLOOM_OP_CONVOLVE : BLOOM_OP_BLOOM;
	/* a JPEG answer comes back from the GPU as planes */
	enum image_format fmt;
	int bits;
	format_resolve(j->req.format, &j->accept, &j->info, &fmt, &bits);
	/* planes or pixels decoded into an upload buffer of this context are read there; pixels
	 * there are RGBA, the frame's own channels the result's */
	struct bloom_frame f = {j->yin.data ? NULL : &j->in, j->yin.data ? &j->yin : NULL,
	                        j->upload.slot, j->in.release ? j->info.channels : 0};
	struct bloom_result res;
	memset(&res, 0, sizeof res);
	/* a result resized after the bloom comes back as floats, at once */
	int plain = request_sized(&j->req) && j->req.resize == RESAMPLE_AFTER;
	/* (an answer in the input's profile is converted on the CPU) */
	res.want_yuv = J->cfg.jpeg_planes && fmt == IMAGE_FORMAT_JPEG && !plain &&
	               !(j->req.keep_profile && !j->colour.srgb && j->colour.name[0]);
	res.sub_x = res.sub_y = J->cfg.jpeg_subsampling ? 2 : 1;
	res.lend = J->cfg.lend_planes;
	/* the quality the codec thread encodes at (do_encode) */
	if (res.want_yuv && J->cfg.jpeg_gpu_dct) {
		res.dct_quality = j->req.quality ? j->req.quality : api_default_quality(&J->cfg, fmt);
		res.entropy = J->cfg.jpeg_gpu_entropy;
	}
	int known = 1, rc = 0;
	unsigned long long key = 0;
	if (J->cfg.new_sizes_per_minute > 0)
		rc = bloom_plan_known(b, &f, &bk, &j->req.p, &known, &key, err);
	if (!rc && !known) {
		pthread_mutex_lock(&J->lock);
		double wait = charge_new_size(J, j->client, key, clock_s());
		pthread_mutex_unlock(&J->lock);
		if (wait > 0) {
			set_error(j, API_E_TOO_MANY_NEW_SIZES, "this client sent %d images of sizes the GPU "
			          "had not planned within a minute (--new-sizes-per-minute); each compiles "
			          "programs. Retry in %.0f s, or send sizes seen before", J->cfg.new_sizes_per_minute,
			          ceil(wait));
			j->retry_after = (int)ceil(wait);
			image_free(&j->in);
			yuv_image_free(&j->yin);
			image_free(&j->kimg);
			j->gpu = g->id;
			return;
		}
	}
	if (!rc)
		rc = bloom_run_frame(b, op, &f, &bk, &j->req.p,
		                     J->cfg.gpu_depth > 1 && !plain ? BLOOM_DEFER : 0, &res, &st, err);
	if (rc == BLOOM_E_ENTROPY && f.yuv && f.yuv->scan) {
		/* a scan the GPU's entropy decoder flagged (or one in tiles): libjpeg decodes the
		 * frame, so the answer is its (the same image, or the same error) */
		log_msg(LOG_DEBUG, "gpu %d: %s; libjpeg decodes the frame", g->id, err);
		if (codec_redecode_jpeg(J, j)) {
			image_free(&j->in);
			image_free(&j->kimg);
			j->gpu = g->id;
			return;
		}
		f.yuv = &j->yin;
		f.upload = NULL;
		err[0] = 0;
		memset(&st, 0, sizeof st);
		rc = bloom_run_frame(b, op, &f, &bk, &j->req.p, J->cfg.gpu_depth > 1 ? BLOOM_DEFER : 0,
		                     &res, &st, err);
	}
	j->entropy_gpu = !rc && f.yuv && f.yuv->scan;
	if (st.wall_ms > GPU_SLOW_JOB_MS)
		log_msg(LOG_DEBUG, "gpu %d: a %dx%d job held the thread %.1f ms (setup %.1f, prepare "
		        "%.1f, copy %.1f, wait %.1f, read-back %.1f)", g->id, f.img ? f.img->width :
		        f.yuv->width, f.img ? f.img->height : f.yuv->height, st.wall_ms, st.setup_ms,
		        st.prepare_ms, st.copy_ms, st.wait_ms, st.readback_ms);
	j->tiles_x = st.tiles_x, j->tiles_y = st.tiles_y;
	/* the GPU made its planes from the coefficients (in tiles the CPU does): counted when the
	 * job finishes well */
	j->coef_in = !rc && f.yuv && f.yuv->coefs && st.tiles_x * st.tiles_y <= 1;
	j->borrowed_w = !rc && st.borrowed ? st.padded_w : 0;
	j->borrowed_h = !rc && st.borrowed ? st.padded_h : 0;
	j->gpu_copy_s = st.copy_ms * 1e-3;
	j->gpu_wait_s = st.wait_ms * 1e-3;
	j->gpu_setup_s = st.setup_ms * 1e-3;
	if (!rc && (st.borrowed || st.tiles_x * st.tiles_y <= 1)) /* a plan of its own size */
		note_shape(g, f.img ? f.img->width : f.yuv->width, f.img ? f.img->height : f.yuv->height,
		           &st, bk.img, &j->req.p);
	image_free(&j->in);
	yuv_image_free(&j->yin);
	image_free(&j->kimg);
	j->gpu = g->id;
	if (!rc && res.pending)
		j->flight = res; /* gpu_job_complete takes it */
	else
		gpu_job_take(g, j, rc, &res, err);
}

/* A result from the GPU into the job: its planes or image, or the failure, or the refusal of
 * a result that came out non-finite. */
void gpu_job_take(struct gpu *g, struct job *j, int rc, struct bloom_result *res,
                  const char *err)
{
	j->lease = res->lease;
	j->result = res->img;
	j->yresult = res->yuv;
	j->lost = res->lost;
	if (rc == BLOOM_E_CANCELLED) {
		gpu_cancelled(g, j, "a frame in tiles");
		gpu_job_drop(j);
	} else if (rc) {
		set_error(j, engine_errors_bloom(rc), "%s", err[0] ? err : bloom_strerror(rc));
		if (j->status >= 500)
			log_msg(LOG_ERROR, "gpu %d: bloom_run failed: %s", g->id, j->message);
	} else if (res->nonfinite) {
		set_error(j, API_E_RESULT_NOT_FINITE, "%llu samples of the result are not finite: "
		          "float32 overflowed in the convolution (an image or kernel value near 3.4e38, "
		          "or infinite); scale the image or kernel down", res->nonfinite);
		gpu_job_drop(j);
	}
}

/* A frame left in flight by gpu_run: waits for the GPU, then takes its result. */
void gpu_job_complete(struct gpu *g, struct job *j)
{
	static __thread char err[BLOOM_ERR_LEN];
	err[0] = 0;
	double wait_ms = 0;
	int rc = bloom_result_finish(&j->flight, &wait_ms, err);
	j->gpu_wait_s += wait_ms * 1e-3;
	gpu_job_take(g, j, rc, &j->flight, err);
	memset(&j->flight, 0, sizeof j->flight);
}

/* A job's results dropped (lent planes given back) for an error set after they were made. */
void gpu_job_drop(struct job *j)
{
	if (j->lease) {
		j->yresult.data = NULL;
		bloom_lease_return(j->lease);
		j->lease = NULL;
	}
	image_free(&j->result);
	yuv_image_free(&j->yresult);
	tensor_free(&j->ty);
}

void job_resize_failed(struct gpu *g, struct job *j, int rc, const char *err)
{
	set_error(j, engine_errors_resample(rc), "%s", err[0] ? err : resample_strerror(rc));
	if (j->status >= 500)
		log_msg(LOG_ERROR, "worker %d: resize failed: %s", g->id, j->message);
	image_free(&j->in);
	image_free(&j->kimg);
	gpu_job_drop(j);
	j->gpu = g->id;
}

/* *img resized by geo on the GPU in place: 0, or a resample_error with err. */
static int resize_image(struct engine *e, struct image *img, const struct resample_geom *geo,
                        char err[RESAMPLE_ERR_LEN])
{
	char eerr[ENGINE_ERR_LEN];
	if (engine_want(e, ENGINE_RESAMPLE, eerr)) {
		snprintf(err, RESAMPLE_ERR_LEN, "%.200s", eerr);
		return RESAMPLE_E_GPU;
	}
	struct image out;
	int rc = resample_run(engine_resample(e), img, geo, &out, err);
	if (!rc) {
		image_free(img);
		*img = out;
	}
	return rc;
}

int job_sized_geom(const struct job *j, struct resample_geom *geo, int *sized)
{
	const struct request *r = &j->req;
	int rc = 0;
	*sized = request_sized(r);
	if (*sized) {
		rc = resample_fit(j->in.width, j->in.height, r->width, r->height, r->dpr, r->fit, geo);
		*sized = !rc && !resample_is_identity(geo, j->in.width, j->in.height);
	}
	return rc;
}

void job_scale_kernel(struct job *j, const struct resample_geom *geo)
{
	struct bloom_params *p = &j->req.p;
	const struct image *k = j->named ? &j->named->img : j->kimg.pixels ? &j->kimg : NULL;
	int kw = k ? k->width : p->preset.size, kh = k ? k->height : p->preset.size;
	if (resample_scale(geo) != 1.0 || p->kernel_scale > 0)
		p->kernel_scale = resample_kernel_scale(p->kernel_scale, kw, kh, j->in.width,
		                                        j->in.height, geo);
}

/* A bloom or convolve frame: the direct convolution when it wins, else the FFT path; a sized
 * one resized before (its input) or after (its result). */
static void run_frame(struct gpu *g, struct engine *e, struct job *j)
{
	struct bloom_kernel bk = {j->named ? &j->named->img : j->kimg.pixels ? &j->kimg : NULL,
	                          {0, 0}};
	static __thread char err[RESAMPLE_ERR_LEN];
	err[0] = 0;
	struct resample_geom geo;
	int sized, rc = job_sized_geom(j, &geo, &sized);
	if (!rc && sized && j->req.resize == RESAMPLE_BEFORE) {
		job_scale_kernel(j, &geo);
		rc = resize_image(e, &j->in, &geo, err);
	}
	if (rc) {
		job_resize_failed(g, j, rc, err);
		return;
	}
	if (!run_direct(g, e, &bk, j))
		gpu_run(g, engine_bloom(e), j);
	if (sized && j->req.resize == RESAMPLE_AFTER && !j->status && j->result.pixels &&
	    (rc = resize_image(e, &j->result, &geo, err)))
		job_resize_failed(g, j, rc, err);
}

void gpu_job_run(struct gpu *g, struct engine *e, struct job *j)
{
	gpu_jobs[j->kind].run(g, e, j);
}
