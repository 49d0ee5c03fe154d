/* The GPU engine's constructor and accessors; see engine.h. */
#include "gles/engine.h"

#include "gles/fft.h"
#include "core/clock.h"

#include <stdio.h>
#include <stdlib.h>

struct engine {
	struct egl_ctx *egl;
	struct egl_ctx *compile_ctx; /* the program cache's compile thread's, or NULL */
	struct program_cache *pc;
	struct fft_wisdom *wisdom;
	struct fft_tuner *tuner;
	struct bloom_ctx *bloom;
	struct spatial_ctx *spatial;
	struct deconv_ctx *deconv;
	struct resample_ctx *resample;
	struct engine_opts opts;
	struct log_sink log;
	char driver[ENGINE_DRIVER_LEN];
	struct gles_cancel *cancel; /* engine_set_cancel's, given to each part as it is made */
};

const char *engine_strerror(int code)
{
	switch (code) {
	case ENGINE_OK: return "ok";
	case ENGINE_E_CONTEXT: return "no OpenGL ES 3.1 context";
	case ENGINE_E_NOMEM: return "out of memory";
	case ENGINE_E_PART: return "a GPU engine part failed to build";
	}
	return "unknown error";
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* The context, the program cache (with its binaries per driver) and the wisdom. */
static int make_base(struct engine *e, const struct engine_opts *o, const struct log_sink *log,
                     char err[ENGINE_ERR_LEN])
{
	struct egl_opts eo = {o->platform, o->device, o->gl_debug, o->keep_display};
	char eerr[EGL_ERR_LEN];
	if (egl_ctx_create(&eo, log, &e->egl, eerr)) {
		snprintf(err, ENGINE_ERR_LEN, "no OpenGL ES 3.1 context: %s", eerr);
		return ENGINE_E_CONTEXT;
	}
	const struct egl_info *i = egl_ctx_info(e->egl);
	snprintf(e->driver, sizeof e->driver, "%.255s / %.127s", i->renderer, i->version);
	int rc = program_cache_create(or_empty(o->shader_dir), log, &e->pc);
	if (rc) {
		snprintf(err, ENGINE_ERR_LEN, "program cache: %s", program_strerror(rc));
		return ENGINE_E_NOMEM;
	}
	if (o->program_cache && o->program_cache[0])
		program_cache_set_binary_dir(e->pc, o->program_cache, e->driver);
	int cmode = o->compile_mode == ENGINE_CMODE_PROCESS ? ENGINE_CMODE_AUTO : o->compile_mode;
	int thread = cmode == ENGINE_CMODE_THREAD ? ENGINE_COMPILE_ON
	             : cmode == ENGINE_CMODE_INLINE ? ENGINE_COMPILE_OFF
	                                           : o->compile_thread;
	if ((cmode == ENGINE_CMODE_PARALLEL ||
	     (cmode == ENGINE_CMODE_AUTO && o->compile_thread == ENGINE_COMPILE_AUTO)) &&
	    program_cache_parallel(e->pc, 1))
		log_sinkf(log, LOG_INFO, "programs compile in parallel on the GPU thread's context "
		          "(GL_KHR_parallel_shader_compile)");
	else if (cmode == ENGINE_CMODE_PARALLEL)
		thread = ENGINE_COMPILE_OFF;
	if (!program_cache_parallel(e->pc, -1) &&
	    (thread == ENGINE_COMPILE_ON || (thread == ENGINE_COMPILE_AUTO && !i->software))) {
		char cerr[EGL_ERR_LEN];
		if (egl_ctx_create_shared(e->egl, &e->compile_ctx, cerr) ||
		    program_cache_worker(e->pc, e->compile_ctx)) {
			log_sinkf(log, LOG_WARN, "no compile thread (idle work compiles on the GPU "
			          "thread): %s", e->compile_ctx ? "its context could not be made current "
			          "on it, or no thread" : cerr);
			egl_ctx_destroy(e->compile_ctx);
			e->compile_ctx = NULL;
		}
	}
	if (o->no_wisdom)
		return 0;
	if (fft_wisdom_create(or_empty(o->wisdom_file), e->driver, fft_wisdom_shipped, log,
	                      &e->wisdom) ||
	    fft_tuner_create(e->pc, i, e->wisdom, log, &e->tuner)) {
		snprintf(err, ENGINE_ERR_LEN, "FFT wisdom: out of memory");
		return ENGINE_E_NOMEM;
	}
	int mode = o->wisdom_measure;
	if (mode == FFT_WISDOM_MEASURE_IDLE && i->software && !o->idle_on_software)
		mode = FFT_WISDOM_MEASURE_NEVER;
	fft_wisdom_set_measure(e->wisdom, mode);
	return 0;
}

/* The bloom, spatial and deconv contexts asked for that are not built yet. */
static int make_parts(struct engine *e, unsigned parts, char err[ENGINE_ERR_LEN])
{
	const struct engine_opts *o = &e->opts;
	const struct log_sink *log = &e->log;
	const struct egl_info *info = egl_ctx_info(e->egl);
	if ((parts & ENGINE_BLOOM) && !e->bloom) {
		struct bloom_ctx_opts bo = {.kernel_cache_bytes = o->kernel_cache_bytes,
		                            .max_plans = o->max_plans, .wisdom = e->wisdom,
		                            .no_persistent_map = o->no_persistent_map,
		                            .frame_bytes = o->frame_bytes, .progress = o->progress,
		                            .progress_arg = o->progress_arg,
		                            .borrow_plans = o->borrow_plans,
		                            .upload_copy = o->upload_copy};
		char berr[BLOOM_ERR_LEN];
		if (bloom_ctx_create(e->pc, info, &bo, log, &e->bloom, berr)) {
			snprintf(err, ENGINE_ERR_LEN, "bloom: %.4000s", berr);
			return ENGINE_E_PART;
		}
	}
	if ((parts & (ENGINE_SPATIAL | ENGINE_DECONV)) && !e->spatial) {
		struct spatial_opts so = {.max_plans = o->max_plans, .frame_bytes = o->frame_bytes,
		                          .no_persistent_map = o->no_persistent_map};
		char serr[SPATIAL_ERR_LEN];
		if (spatial_ctx_create(e->pc, info, &so, log, &e->spatial, serr)) {
			snprintf(err, ENGINE_ERR_LEN, "spatial convolution: %s", serr);
			return ENGINE_E_PART;
		}
	}
	if ((parts & ENGINE_DECONV) && !e->deconv) {
		char derr[DECONV_ERR_LEN];
		if (deconv_ctx_create(e->pc, info, e->spatial, log, &e->deconv, derr)) {
			snprintf(err, ENGINE_ERR_LEN, "transposed convolution: %s", derr);
			return ENGINE_E_PART;
		}
	}
	if ((parts & ENGINE_RESAMPLE) && !e->resample) {
		char rerr[RESAMPLE_ERR_LEN];
		if (resample_ctx_create(e->pc, info->max_ssbo_size, log, &e->resample, rerr)) {
			snprintf(err, ENGINE_ERR_LEN, "resampler: %s", rerr);
			return ENGINE_E_PART;
		}
	}
	engine_set_cancel(e, e->cancel);
	return 0;
}

void engine_set_cancel(struct engine *e, struct gles_cancel *c)
{
	e->cancel = c;
	if (e->bloom)
		bloom_ctx_set_cancel(e->bloom, c);
	if (e->spatial)
		spatial_ctx_set_cancel(e->spatial, c);
	if (e->deconv)
		deconv_ctx_set_cancel(e->deconv, c);
}

int engine_create(const struct engine_opts *o, const struct log_sink *log, struct engine **out,
                  char err[ENGINE_ERR_LEN])
{
	*out = NULL;
	err[0] = 0;
	struct engine *e = calloc(1, sizeof *e);
	if (!e) {
		snprintf(err, ENGINE_ERR_LEN, "out of memory");
		return ENGINE_E_NOMEM;
	}
	e->opts = *o;
	if (log)
		e->log = *log;
	int rc = make_base(e, o, log, err);
	if (!rc)
		rc = make_parts(e, o->parts, err);
	if (rc) {
		engine_destroy(e);
		return rc;
	}
	*out = e;
	return 0;
}

void engine_destroy(struct engine *e)
{
	if (!e)
		return;
	resample_ctx_destroy(e->resample);
	deconv_ctx_destroy(e->deconv);
	spatial_ctx_destroy(e->spatial);
	bloom_ctx_destroy(e->bloom);
	fft_tuner_destroy(e->tuner);
	fft_wisdom_destroy(e->wisdom);
	program_cache_destroy(e->pc); /* stops the compile thread first */
	egl_ctx_destroy(e->compile_ctx);
	egl_ctx_destroy(e->egl);
	free(e);
}

int engine_want(struct engine *e, unsigned parts, char err[ENGINE_ERR_LEN])
{
	err[0] = 0;
	return make_parts(e, parts, err);
}

int engine_reset_status(struct engine *e)
{
	return egl_ctx_reset_status(e->egl);
}

struct egl_ctx *engine_egl(const struct engine *e)
{
	return e->egl;
}

const struct egl_info *engine_info(const struct engine *e)
{
	return egl_ctx_info(e->egl);
}

struct program_cache *engine_programs(const struct engine *e)
{
	return e->pc;
}

struct fft_wisdom *engine_wisdom(const struct engine *e)
{
	return e->wisdom;
}

const char *engine_wisdom_source(const struct engine *e)
{
	return e->wisdom ? fft_wisdom_source(e->wisdom) : "built-in rules";
}

/* Logs an idle step that held the GPU thread ENGINE_SLOW_STEP_MS or longer (a frame arriving
 * meanwhile waited that long); returns more. */
static int idle_logged(struct engine *e, double t0, int more, const char *what, const char *how)
{
	double ms = clock_ms() - t0;
	if (ms >= ENGINE_SLOW_STEP_MS)
		log_sinkf(&e->log, LOG_DEBUG, "idle step of %s%s: %.1f ms", what, how, ms);
	return more;
}

/* The program cache's part of an idle step: 1 (a program from a binary readied) or
 * ENGINE_IDLE_WAIT (compiles in flight), logged when slow; 0 when it has nothing to do. */
static int idle_programs(struct engine *e, double t0)
{
	if (program_cache_ready_step(e->pc))
		return idle_logged(e, t0, 1, "a program loaded from its binary readied", "");
	if (program_cache_compiling(e->pc))
		return idle_logged(e, t0, ENGINE_IDLE_WAIT, "polling the compiles in flight", "");
	return 0;
}

int engine_idle(struct engine *e)
{
	double t0 = clock_ms();
	int step = idle_programs(e, t0);
	if (step)
		return step;
	const char *what = "a wanted plan's (or its kernel spectrum's, or its rehearsal)", *how = "";
	int more = e->bloom && bloom_build_wanted(e->bloom, 0);
	if (!more && (more = fft_tuner_step(e->tuner))) {
		what = "measuring an FFT shape, ";
		how = fft_tuner_last(e->tuner);
	}
	if (!more && (more = e->bloom && bloom_ctx_refresh(e->bloom)))
		what = "a plan's rebuild with measured shapes";
	if (!more && (more = e->bloom && bloom_rows_tune_step(e->bloom, &how)))
		what = "measuring a plan's rows with their ends, ";
	return more ? idle_logged(e, t0, more, what, how) : 0;
}

int engine_idle_pending(const struct engine *e)
{
	return (e->bloom && bloom_idle_pending(e->bloom)) ||
	       (e->wisdom && fft_wisdom_measure(e->wisdom) == FFT_WISDOM_MEASURE_IDLE &&
	        fft_wisdom_pending_count(e->wisdom) > 0);
}

int engine_idle_plans(struct engine *e)
{
	double t0 = clock_ms();
	int step = idle_programs(e, t0);
	if (step)
		return step;
	int more = e->bloom && bloom_build_wanted(e->bloom, BLOOM_WANT_IDLE);
	return more ? idle_logged(e, t0, more, "a wanted plan's (or its kernel spectrum's, or its "
	                          "rehearsal)", "") : 0;
}

int engine_build_wanted(struct engine *e, int long_load)
{
	if (program_cache_compiling(e->pc))
		return ENGINE_IDLE_WAIT;
	return e->bloom &&
	       bloom_build_wanted(e->bloom, long_load ? BLOOM_WANT_LOAD : BLOOM_WANT_URGENT);
}

struct bloom_ctx *engine_bloom(const struct engine *e)
{
	return e->bloom;
}

struct spatial_ctx *engine_spatial(const struct engine *e)
{
	return e->spatial;
}

struct deconv_ctx *engine_deconv(const struct engine *e)
{
	return e->deconv;
}

struct resample_ctx *engine_resample(const struct engine *e)
{
	return e->resample;
}

const char *engine_driver(const struct engine *e)
{
	return e->driver;
}
