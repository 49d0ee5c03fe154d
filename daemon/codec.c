/* The codec threads: decoding (each image's decoded size reserved against --memory-budget from
 * its header), kernel PUTs, encoding; see jobs_impl.h. */
#include "daemon/jobs_impl.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/apiutil.h"
#include "api/engine_errors.h"
#include "daemon/images.h"
#include "daemon/jobs_impl.h"
#include "codec/icc.h"
#include "core/log.h"
#include "core/parallel.h"
#include "gles/egl.h"
#include "gles/program.h"
#include "gles/wisdom.h"
#include "gles/resample.h"
#include "core/checked.h"
#include "core/clock.h"

/* Decoded bytes a pixel reserves: the image in and the result (float RGBA each, or JPEG planes
 * in and out), or a kernel; JPEG coefficients: coefs_bytes. */
enum { COST_FLOAT = 32, COST_PLANES = 8, COST_KERNEL = 16 };

/* What a w x h JPEG frame's coefficients may hold at most: its blocks in whole MCUs under the
 * subsampling that makes the most (4:4:4, 4:2:2, 4:4:0 or 4:2:0: a narrow frame's MCUs are
 * mostly padding), each with its room of 84 bytes, 16 of records staged while decoding and 128
 * of a progressive file's whole-image arrays; and the planes out. */
static unsigned long long coefs_bytes(unsigned long long w, unsigned long long h)
{
	unsigned long long w8 = (w + 7) / 8, h8 = (h + 7) / 8, w16 = (w + 15) / 16, h16 = (h + 15) / 16;
	unsigned long long blocks = 3 * w8 * h8;
	blocks = 4 * w16 * h8 > blocks ? 4 * w16 * h8 : blocks;
	blocks = 4 * w8 * h16 > blocks ? 4 * w8 * h16 : blocks;
	blocks = 6 * w16 * h16 > blocks ? 6 * w16 * h16 : blocks;
	return blocks * (84 + 16 + 128) + 3 * w * h;
}

/* Reserves `want` bytes for what j's slot (0 or 1) holds against --memory-budget, replacing
 * what the slot reserved before: 0, IMAGE_E_TOO_LARGE (more than the whole budget) or
 * IMAGE_E_BUSY (the requests in progress hold too much of it), with a message about `what`. */
static int reserve(struct jobs *J, struct job *j, int slot, unsigned long long want,
                   const char *what, char *err, size_t errlen)
{
	unsigned long long budget = J->cfg.memory_budget;
	if (want > budget) {
		snprintf(err, errlen, "%s needs %llu MiB, more than the whole --memory-budget of %llu "
		         "MiB", what, want >> 20, budget >> 20);
		return IMAGE_E_TOO_LARGE;
	}
	pthread_mutex_lock(&J->lock);
	unsigned long long others = J->mem_used - j->reserved[slot], total;
	if (checked_add_ull(others, want, &total) || total > budget) {
		pthread_mutex_unlock(&J->lock);
		snprintf(err, errlen, "%s needs %llu MiB; the requests in progress hold %llu of the "
		         "%llu MiB --memory-budget", what, want >> 20, others >> 20, budget >> 20);
		return IMAGE_E_BUSY;
	}
	J->mem_used = others + want;
	j->reserved[slot] = want;
	pthread_mutex_unlock(&J->lock);
	return 0;
}

/* A sized answer's geometry for a w x h input (gles/resample.h), checked against the image
 * limits before a pixel is decoded: 0 with the bytes its canvas and result take in *bytes,
 * or IMAGE_E_TOO_LARGE with j->output_refused set. */
static int admit_output(struct jobs *J, struct job *j, unsigned long long w, unsigned long long h,
                        unsigned long long *bytes, char *err)
{
	const struct request *r = &j->req;
	struct resample_geom g;
	int rc = w > RESAMPLE_MAX_SIDE * 64ull || h > RESAMPLE_MAX_SIDE * 64ull
	         ? RESAMPLE_E_TOO_LARGE
	         : resample_fit((int)w, (int)h, r->width, r->height, r->dpr, r->fit, &g);
	char lerr[IMAGE_ERR_LEN];
	if (!rc && image_check_limits(&J->lim, (unsigned long long)g.out_w,
	                              (unsigned long long)g.out_h, "answer", lerr)) {
		snprintf(err, IMAGE_ERR_LEN, "the sized answer (%dx%d for width=%d height=%d dpr=%g "
		         "fit=%s) is past the server's limits: %.120s", g.out_w, g.out_h, r->width,
		         r->height, r->dpr, resample_fit_names[r->fit], lerr);
		j->output_refused = 1;
		return IMAGE_E_TOO_LARGE;
	}
	if (rc) {
		snprintf(err, IMAGE_ERR_LEN, "the sized answer for a %llux%llu image with width=%d "
		         "height=%d dpr=%g fit=%s would have a side above %d", w, h, r->width,
		         r->height, r->dpr, resample_fit_names[r->fit], RESAMPLE_MAX_SIDE);
		j->output_refused = 1;
		return IMAGE_E_TOO_LARGE;
	}
	*bytes = (unsigned long long)g.out_w * (unsigned long long)g.out_h * COST_FLOAT;
	return 0;
}

/* image_limits.admit: reserves w x h pixels of the job's image or kernel (and a sized
 * answer's). */
static int admit_image(void *ctx, unsigned long long w, unsigned long long h, char *err)
{
	struct job_admit *a = ctx;
	int cost = a->which == 1 ? COST_KERNEL : a->which == 2 ? COST_PLANES : COST_FLOAT;
	char what[96];
	snprintf(what, sizeof what, "%s of %llux%llu", a->which == 1 ? "the kernel" : "the image",
	         w, h);
	unsigned long long want;
	if (a->which == 3)
		want = coefs_bytes(w, h);
	else if (checked_mul_ull(w, h, &want) ||
	         checked_mul_ull(want, (unsigned long long)cost, &want))
		want = ~0ull; /* more than any budget: refused 413 */
	if (a->which != 1 && request_sized(&a->j->req)) {
		unsigned long long out;
		int rc = admit_output(a->J, a->j, w, h, &out, err);
		if (rc)
			return rc;
		if (checked_add_ull(want, out, &want))
			want = ~0ull;
	}
	return reserve(a->J, a->j, a->which == 1, want, what, err, IMAGE_ERR_LEN);
}

/* Limits for decoding j's image (which 0: float, 2: JPEG planes, 3: JPEG coefficients) or
 * kernel (1), with the admission hook. */
static struct image_limits job_limits(struct jobs *J, struct job *j, int which)
{
	struct image_limits l = which == 1 ? J->klim : J->lim;
	j->admit[which == 1] = (struct job_admit){J, j, which};
	l.admit = admit_image;
	l.admit_ctx = &j->admit[which == 1];
	return l;
}

/* Fails j for an image_error from decoding what (its row: engine_errors_image). */
static void decode_error(struct job *j, int rc, const char *what, const char *msg)
{
	if (j->output_refused) {
		set_error(j, API_E_OUTPUT_TOO_LARGE, "%s", msg);
		return;
	}
	set_error(j, engine_errors_image(rc), "%s: %s%s", what, msg,
	          rc == IMAGE_E_BUSY ? "; retry later" : "");
}

/* A PUT's answer in j: o (taken; NULL where it could not be made) as indented JSON and a
 * newline (none where there is no room for it), 200 for a name replaced, 201 for a new one.
 * Returns 0, or -1 with j untouched where the text could not be made. */
static int put_answer(struct job *j, json_t *o, int replaced)
{
	char *s = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
	json_decref(o);
	char *t = s ? realloc(s, strlen(s) + 2) : NULL;
	if (t)
		strcat(s = t, "\n");
	if (!s)
		return -1;
	j->status = replaced ? 200 : 201;
	j->body = (unsigned char *)s;
	j->body_len = strlen(s);
	j->content_type = "application/json";
	return 0;
}

static void kernel_put_answer(struct jobs *J, struct job *j)
{
	struct image_info info = j->info;
	int w = j->in.width, h = j->in.height, c = j->in.channels;
	int replaced = 0;
	struct kernel_entry *e = NULL;
	int rc = kernels_put(J->kernels, j->put_name, &j->in, &info, &replaced, &e);
	if (rc == KERNELS_E_FULL) {
		set_error(j, API_E_KERNEL_REGISTRY_FULL, "%d kernels are registered already "
		          "(--max-kernels); DELETE one first", J->cfg.max_kernels);
		return;
	}
	unsigned long long kb = (unsigned long long)w * h * c * sizeof(float);
	if (rc == KERNELS_E_TOO_LARGE) {
		set_error(j, API_E_KERNEL_TOO_LARGE, "the %dx%d kernel takes %llu KiB, more than the "
		          "whole --kernel-memory of %llu KiB", w, h, kb >> 10,
		          J->cfg.kernel_memory >> 10);
		return;
	}
	if (rc == KERNELS_E_BYTES) {
		size_t nk, held;
		kernels_totals(J->kernels, &nk, &held);
		set_error(j, API_E_KERNEL_MEMORY_FULL, "the %dx%d kernel takes %llu KiB; the %zu "
		          "kernels registered hold %zu of the %llu KiB --kernel-memory; DELETE one "
		          "first", w, h, kb >> 10, nk, held >> 10, J->cfg.kernel_memory >> 10);
		return;
	}
	if (rc) {
		set_error(j, rc == KERNELS_E_NAME ? API_E_KERNEL_NAME_REJECTED : API_E_KERNEL_REJECTED, "%s",
		          kernels_strerror(rc));
		return;
	}
	char digest[40] = "";
	if (e)
		snprintf(digest, sizeof digest, "%016llx%016llx", (unsigned long long)e->digest[0],
		         (unsigned long long)e->digest[1]);
	kernels_release(J->kernels, e);
	if (J->stored && J->stored(J->stored_ctx, JOBS_STORED_KERNEL, j->put_name, j->image,
	                           j->image_len)) {
		set_error(j, API_E_INTERNAL, "the kernel could not be written to the workers' shared "
		          "store folder (full?): the other workers, and a successor taking this GPU "
		          "over, keep what they had under this name");
		return;
	}
	json_t *o = json_pack("{s:s,s:i,s:i,s:i,s:s,s:s,s:b}", "name", j->put_name, "width", w,
	                      "height", h, "channels", c, "format", image_format_name(info.format),
	                      "digest", digest, "replaced", replaced);
	if (put_answer(j, o, replaced))
		set_error(j, API_E_ANSWER_NOMEM, "out of memory");
}

/* A stored image's PUT once its image decoded (the check): its facts from the decoding, its
 * bytes copied into the store as they came. */
static void image_put_answer(struct jobs *J, struct job *j)
{
	struct image_facts f;
	memset(&f, 0, sizeof f);
	f.info = j->info;
	if (j->yin.data) { /* planes are as stored: orientations 5-8 turn the image */
		int turned = j->yin.orientation >= 5;
		f.width = turned ? j->yin.height : j->yin.width;
		f.height = turned ? j->yin.width : j->yin.height;
	} else {
		f.width = j->in.width;
		f.height = j->in.height;
	}
	unsigned char *copy = malloc(j->image_len);
	if (!copy) {
		set_error(j, API_E_OUT_OF_MEMORY, "out of memory storing the image");
		return;
	}
	memcpy(copy, j->image, j->image_len);
	int replaced = 0;
	struct image_entry *e = NULL;
	int rc = images_put(j->store, j->put_name, copy, j->image_len, &f, &replaced, &e);
	size_t n;
	unsigned long long held, max_bytes;
	int max_n;
	images_totals(j->store, &n, &held, &max_n, &max_bytes);
	if (rc == IMAGES_E_FULL) {
		set_error(j, API_E_IMAGE_STORE_FULL, "%d images are stored already (--max-images); "
		          "DELETE one first", max_n);
		return;
	}
	if (rc == IMAGES_E_TOO_LARGE) {
		set_error(j, API_E_IMAGE_TOO_LARGE, "the image's %zu bytes are more than the whole "
		          "--image-memory of %llu bytes", j->image_len, max_bytes);
		return;
	}
	if (rc == IMAGES_E_BYTES) {
		set_error(j, API_E_IMAGE_MEMORY_FULL, "the image takes %zu KiB; the %zu images stored "
		          "hold %llu of the %llu KiB --image-memory; DELETE one first",
		          j->image_len >> 10, n, held >> 10, max_bytes >> 10);
		return;
	}
	if (rc) {
		set_error(j, rc == IMAGES_E_NAME ? API_E_BAD_IMAGE_NAME : API_E_OUT_OF_MEMORY, "%s",
		          images_strerror(rc));
		return;
	}
	json_t *o = images_entry_json(e);
	images_release(j->store, e);
	if (J->stored && J->stored(J->stored_ctx, JOBS_STORED_IMAGE, j->put_name, j->image,
	                           j->image_len)) {
		json_decref(o);
		set_error(j, API_E_INTERNAL, "the image could not be written to the workers' shared "
		          "store folder (full?): the other workers, and a successor taking this GPU "
		          "over, keep what they had under this name");
		return;
	}
	if (o)
		json_object_set_new(o, "replaced", json_boolean(replaced));
	if (put_answer(j, o, replaced)) /* stored; only its description is lost */
		set_error(j, API_E_ANSWER_NOMEM, "the image is stored, but its description could "
		          "not be made");
}

/* yuv_memory.alloc and image_memory.alloc: a frame's planes (or a float frame's RGBA pixels)
 * go into an upload buffer lent by the context of the one GPU thread that will run the job;
 * NULL (malloc'd, copied in by the GPU thread) when it lends none now, or none large enough is
 * free. */
static void *upload_alloc(void *ctx, size_t bytes, void **owner)
{
	struct job_upload *u = ctx;
	struct gpu *g = &u->J->gpus[0];
	void *m = NULL;
	*owner = u;
	pthread_mutex_lock(&u->J->lock);
	if (g->uploads && (u->slot = bloom_upload_take(g->uploads, bytes))) {
		u->gen = g->upload_gen;
		g->uploads_taken++;
		atomic_fetch_add(&g->uploads_out, 1);
		m = bloom_upload_map(u->slot);
	}
	pthread_mutex_unlock(&u->J->lock);
	return m;
}

/* yuv_memory.release and image_memory.release: the buffer back to its context (whose destroy waits for it). Takes no
 * lock: J->lock may be held (uploads_withdraw during a rebuild) or not. */
static void upload_release(void *owner)
{
	struct job_upload *u = owner;
	bloom_upload_return(u->slot);
	u->slot = NULL;
	atomic_fetch_sub(&u->J->gpus[0].uploads_out, 1);
}

static void decode_tensors(struct jobs *J, struct job *j);

/* 1 when j's frame is of a format image_decode_into writes into lent memory (PFM, EXR). */
static int float_lendable(const struct job *j)
{
	enum image_format f = image_sniff(j->image, j->image_len);
	return f == IMAGE_FORMAT_PFM || f == IMAGE_FORMAT_EXR;
}

/* j's JPEG frame for the GPU into j->yin: its coefficients (--jpeg-gpu-idct) or its planes, in
 * mem (NULL: memory of its own). */
static int decode_jpeg_frame(struct jobs *J, struct job *j, const struct yuv_memory *mem,
                             char err[IMAGE_ERR_LEN])
{
	struct image_limits lim = job_limits(J, j, J->cfg.jpeg_gpu_idct ? 3 : 2);
	return (!J->cfg.jpeg_gpu_idct ? image_decode_jpeg_yuv_into
	        : J->cfg.jpeg_gpu_entropy_decode ? image_decode_jpeg_scan_into
	                                         : image_decode_jpeg_coefs_into)(
	    j->image, j->image_len, &lim, mem, &j->yin, &j->info, err);
}

int codec_redecode_jpeg(struct jobs *J, struct job *j)
{
	char err[IMAGE_ERR_LEN];
	struct image_limits lim = J->lim; /* admitted already, for the coefficients' room */
	yuv_image_free(&j->yin);
	int rc = image_decode_jpeg_coefs_into(j->image, j->image_len, &lim, NULL, &j->yin, &j->info,
	                                      err);
	if (rc) {
		decode_error(j, rc, "image", err);
		return -1;
	}
	return 0;
}

/* The one rule for NaN and infinity in a request's inputs (docs/http-api.md): refused with 422
 * input_not_finite, the count in the message. 0, or -1 with the job's error set. */
static int refuse_nonfinite(struct job *j, size_t bad, const char *what)
{
	if (!bad)
		return 0;
	set_error(j, API_E_INPUT_NOT_FINITE, "the %s has %zu NaN or infinite samples; every "
	          "operation refuses them (replace them, e.g. with 0, before sending)", what, bad);
	return -1;
}

static void do_decode(struct jobs *J, struct job *j)
{
	double t0 = clock_s();
	char err[IMAGE_ERR_LEN];
	int rc = IMAGE_E_UNSUPPORTED;
	int tensors = operation_job_input(j->kind) == OP_IN_TENSORS;
	if (tensors) {
		decode_tensors(J, j);
		rc = j->status ? -1 : 0;
	}
	/* JPEG frames stay as planes for the GPU to convert, unless they carry what planes cannot */
	struct image_limits lim;
	/* a frame for the FFT on the GPU: decoded where the GPU thread's context reads it */
	int gpu_frame = !tensors && j->kind != JOB_KERNEL_PUT &&
	                !(j->kind == JOB_CONVOLVE && j->req.p.method != CONVOLVE_FFT) &&
	                !request_sized(&j->req); /* a sized frame is resampled as floats */
	int lend = gpu_frame && J->lease_uploads && is_gpu_kind(j);
	j->upload.J = J;
	if (gpu_frame && J->cfg.jpeg_planes &&
	    image_sniff(j->image, j->image_len) == IMAGE_FORMAT_JPEG) {
		struct yuv_memory mem = {upload_alloc, upload_release, &j->upload};
		rc = decode_jpeg_frame(J, j, lend && J->cfg.jpeg_upload_lease ? &mem : NULL, err);
	}
	/* float frames (--float-upload-lease): PFM and EXR pixels as RGBA in a lent buffer */
	int lend_float = lend && J->cfg.float_upload_lease && float_lendable(j);
	if (rc == IMAGE_E_UNSUPPORTED) {
		lim = job_limits(J, j, j->kind == JOB_KERNEL_PUT ? 1 : 0);
		struct image_memory fmem = {upload_alloc, upload_release, &j->upload};
		rc = image_decode_colour(j->image, j->image_len, &lim, lend_float ? &fmem : NULL,
		                         &j->in, &j->info, &j->colour, err);
		if (!rc && j->info.colour_note[0])
			log_msg(LOG_WARN, "%s", j->info.colour_note);
	}
	if (tensors) {
	} else if (rc) {
		decode_error(j, rc, j->kind == JOB_KERNEL_PUT ? "kernel" : "image", err);
	} else if (!j->info.float_format || /* only float formats hold NaN and infinity */
	           /* lent pixels are not read back: the decoder counted them as it wrote */
	           !(rc = refuse_nonfinite(j, j->in.release ? j->info.nonfinite
	                                                    : image_nonfinite(&j->in),
	                                   j->kind == JOB_KERNEL_PUT ? "kernel" : "image"))) {
		request_resolve_input(&j->req, request_input_kind(&j->info));
	}
	if (!tensors && !rc && j->kernel_data) {
		struct image_info ki;
		lim = job_limits(J, j, 1);
		rc = image_decode(j->kernel_data, j->kernel_len, &lim, &j->kimg, &ki, err);
		if (rc)
			decode_error(j, rc, "kernel", err);
		else if (ki.float_format)
			rc = refuse_nonfinite(j, image_nonfinite(&j->kimg), "kernel");
	}
	double t1 = clock_s();
	j->decode_s = t1 - t0;
	j->deadline += j->decode_s; /* the deadline counts waiting, not the job's own decoding */
	if (j->kind == JOB_KERNEL_PUT || j->kind == JOB_IMAGE_PUT) { /* its queue place was for
	                                                              * the decoding */
		if (!rc && j->kind == JOB_KERNEL_PUT)
			kernel_put_answer(J, j);
		else if (!rc)
			image_put_answer(J, j);
		finish(J, j);
		return;
	}
	pthread_mutex_lock(&J->lock);
	if (!rc && j->upload.slot && j->upload.gen != J->gpus[0].upload_gen) {
		/* the context that lent the planes' buffer is going (a GPU reset): the buffer goes
		 * back to it unread (mapped for writing only) and the frame is decoded again into
		 * planes of its own */
		pthread_mutex_unlock(&J->lock);
		int planes = j->yin.data != NULL;
		yuv_image_free(&j->yin);
		image_free(&j->in);
		lim = job_limits(J, j, 0);
		image_colour_free(&j->colour);
		rc = planes ? decode_jpeg_frame(J, j, NULL, err)
		            : image_decode_colour(j->image, j->image_len, &lim, NULL, &j->in,
		                                  &j->info, &j->colour, err);
		j->decode_s += clock_s() - t1;
		if (rc)
			decode_error(j, rc, "image", err);
		pthread_mutex_lock(&J->lock);
	}
	if (!rc && !j->upload.slot && lend && J->gpus[0].uploads &&
	    ((j->yin.data && J->cfg.jpeg_upload_lease) || (j->in.pixels && lend_float)))
		/* decoded into memory of its own: no buffer was free and large enough; the context
		 * makes one for the next frames (a decode that failed asks for none) */
		bloom_upload_want(J->gpus[0].uploads, j->yin.data ? j->yin.bytes
		                  : (size_t)j->in.width * (size_t)j->in.height * 16);
	if (!rc && t1 > j->deadline) {
		set_error(j, API_E_DEADLINE_EXCEEDED, "the job waited longer than the %g s deadline",
		          J->cfg.deadline);
		metrics_drop(J->metrics, METRICS_DROP_DEADLINE);
		rc = -1;
	}
	if (rc) {
		pthread_mutex_unlock(&J->lock);
		finish(J, j);
		return;
	}
	j->t_queued = clock_s();
	fifo_push(&J->gpuq, j);
	pthread_cond_signal(&J->gpu_cv);
	pthread_mutex_unlock(&J->lock);
}

/* A convolution's tensors: decoded (their bytes reserved first: float32 takes at most what
 * its NPY data takes), described for the engine (shapes checked), the output reserved and
 * allocated. Then on to a GPU thread. */
static void decode_tensors(struct jobs *J, struct job *j)
{
	static const char *what[3] = {"input", "weight", "bias"};
	static const int ranks[3][2] = {{3, 4}, {4, 4}, {1, 1}};
	struct tensor *t[3] = {&j->tx, &j->tw, &j->tb};
	char err[JOBS_ERR_LEN];
	unsigned long long in_bytes = 0;
	for (int i = 0; i < 3; i++)
		checked_add_ull(in_bytes, j->npy_len[i], &in_bytes); /* saturates: then 413 */
	int rc = reserve(J, j, 0, in_bytes, "the tensors", err, sizeof err);
	for (int i = 0; !rc && i < 3; i++) {
		if (!j->npy[i])
			continue;
		char terr[TENSOR_ERR_LEN];
		int trc = tensor_decode(j->npy[i], j->npy_len[i], (size_t)J->cfg.memory_budget,
		                        ranks[i][0], ranks[i][1], what[i], t[i], terr);
		if (trc) {
			set_error(j, engine_errors_tensor(trc), "%s", terr);
			return;
		}
		if (refuse_nonfinite(j, tensor_nonfinite(t[i]), what[i]))
			return;
	}
	if (rc) {
		set_error(j, rc == IMAGE_E_BUSY ? API_E_MEMORY_BUDGET : API_E_TENSOR_TOO_LARGE, "%s%s",
		          err, rc == IMAGE_E_BUSY ? "; retry later" : "");
		return;
	}
	char serr[CONV_SHAPE_ERR_LEN];
	long bias = j->tb.data ? (long)j->tb.shape[0] : -1;
	int bad = j->kind == JOB_CONV2D
	          ? conv2d_describe(j->tx.ndim, j->tx.shape, j->tw.shape, bias, &j->req.c, &j->sc,
	                            &j->ty.ndim, j->ty.shape, serr)
	          : deconv_describe(j->tx.ndim, j->tx.shape, j->tw.shape, bias, &j->req.c, &j->dc,
	                            &j->ty.ndim, j->ty.shape, serr);
	if (bad) {
		set_error(j, API_E_INVALID_SHAPE, "%s", serr);
		return;
	}
	/* checked: a shape whose bytes pass 2^64 (a 32768x32768x65536x65536 output) would wrap to
	 * a reservation of 0 bytes and a GPU loop without end; it is more than any budget */
	size_t bytes;
	if (tensor_bytes(&j->ty, &bytes)) {
		set_error(j, API_E_TENSOR_TOO_LARGE, "the output (%zu, %zu, %zu, %zu) has more bytes "
		          "than 64 bits count, more than the whole --memory-budget of %llu MiB",
		          j->ty.shape[0], j->ty.shape[1], j->ty.shape[2], j->ty.shape[3],
		          J->cfg.memory_budget >> 20);
		return;
	}
	if ((rc = reserve(J, j, 1, bytes, "the output", err, sizeof err))) {
		set_error(j, rc == IMAGE_E_BUSY ? API_E_MEMORY_BUDGET : API_E_TENSOR_TOO_LARGE, "%s", err);
		return;
	}
	if (!(j->ty.data = malloc(bytes)))
		set_error(j, API_E_OUT_OF_MEMORY, "the output: out of memory");
}

static void do_encode(struct jobs *J, struct job *j)
{
	double t0 = clock_s();
	if (j->ty.data) { /* a convolution's output tensor */
		char terr[TENSOR_ERR_LEN];
		int rc = tensor_encode(&j->ty, &j->body, &j->body_len, terr);
		j->encode_s = clock_s() - t0;
		if (rc) {
			j->body = NULL;
			j->body_len = 0;
			set_error(j, API_E_ENCODE_FAILED, "encoding NPY: %s", terr);
		} else {
			j->status = 200;
			j->content_type = "application/x-npy";
		}
		finish(J, j);
		return;
	}
	enum image_format fmt;
	struct image_encode_opts eo;
	memset(&eo, 0, sizeof eo);
	format_resolve(j->req.format, &j->accept, &j->info, &fmt, &eo.bits);
	eo.quality = j->req.quality ? j->req.quality : api_default_quality(&J->cfg, fmt);
	eo.subsampling = J->cfg.jpeg_subsampling ? 420 : 444;
	eo.speed = J->cfg.avif_speed;
	eo.exr_compression = j->req.exr_compression;
	eo.tiff_compression = j->req.tiff_compression;
	eo.half = format_half(j->req.format, fmt, &j->info);
	eo.colour = j->req.keep_profile ? &j->colour : NULL;
	char err[IMAGE_ERR_LEN], cnote[IMAGE_COLOUR_NOTE_LEN] = "";
	eo.colour_note = cnote;
	int rc;
	if (j->yresult.data) { /* planes made on the GPU (sRGB); lost came with them */
		rc = image_encode_jpeg_yuv(&j->yresult, eo.quality, &j->body, &j->body_len, err);
		const struct image_colour *s = icc_srgb();
		if (!rc && s->icc &&
		    (rc = image_jpeg_add_icc(&j->body, &j->body_len, s->icc, s->icc_len)))
			snprintf(err, sizeof err, "jpeg: cannot add the sRGB profile");
	} else
		rc = image_encode(&j->result, fmt, &eo, &j->body, &j->body_len, &j->lost, err);
	if (!rc && cnote[0])
		log_msg(LOG_WARN, "%s", cnote);
	j->lost = format_lost_reported(j->lost, j->kind == JOB_BLOOM, &j->info, fmt, eo.bits);
	j->encode_s = clock_s() - t0;
	if (rc) {
		j->body = NULL;
		j->body_len = 0;
		/* a size the format cannot hold is the request's (format=webp past 16383 a side) */
		set_error(j, rc == IMAGE_E_TOO_LARGE ? API_E_TOO_LARGE_FOR_FORMAT : API_E_ENCODE_FAILED,
		          "encoding %s: %s",
		          image_format_name(fmt), err);
	} else {
		j->status = 200;
		j->content_type = format_content_type(fmt);
	}
	finish(J, j);
}

/* On the CPU engine a codec thread at work counts as a busy core (par_hold), so that the
 * engine's FFT helpers take only the cores the codec threads leave: one pool of cores. */
static void codec_hold(struct jobs *J, int hold)
{
	if (J->cfg.gpu.engine == ENGINE_CHOICE_CPU)
		hold ? par_hold() : par_release();
}

void *codec_main(void *arg)
{
	struct jobs *J = arg;
	pthread_mutex_lock(&J->lock);
	for (;;) {
		struct job *j;
		if ((j = fifo_pop(&J->encode))) { /* finishing work first frees memory first */
			pthread_mutex_unlock(&J->lock);
			codec_hold(J, 1);
			do_encode(J, j);
			codec_hold(J, 0);
			pthread_mutex_lock(&J->lock);
		} else if ((j = fifo_pop(&J->decode))) {
			pthread_mutex_unlock(&J->lock);
			codec_hold(J, 1);
			do_decode(J, j);
			codec_hold(J, 0);
			pthread_mutex_lock(&J->lock);
		} else if (J->stop && J->in_flight == 0) {
			break;
		} else {
			pthread_cond_wait(&J->codec_cv, &J->lock);
		}
	}
	pthread_mutex_unlock(&J->lock);
	return NULL;
}
