/* libfftbloom (lib/include/fftbloom.h): the public C API over both engines. A context owns one
 * GPU engine (gles/engine.h: the EGL context, program cache, wisdom, and the bloom, spatial and
 * transposed-convolution parts, each built on first use) with a cache of FFT plans, or one CPU
 * engine (cpu/engine.h); every call maps the public types onto the engine's and the engine's
 * codes onto enum fftbloom_status. */
#define FFTBLOOM_BUILDING 1 /* the header marks the API visible */
#include "lib/include/fftbloom.h"

#include <GLES3/gl31.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/image.h"
#include "core/checked.h"
#include "core/clock.h"
#include "cpu/conv.h"
#include "cpu/engine.h"
#include "cpu/resample.h"
#include "gles/bloom.h"
#include "gles/conv_shape.h"
#include "gles/convolve.h"
#include "gles/deconv.h"
#include "gles/engine.h"
#include "gles/fft.h"
#include "gles/spatial.h"

struct fftbloom_context {
	struct engine *engine;   /* the GPU engine, or NULL on the CPU engine */
	struct cpu_engine *cpu;  /* the CPU engine, or NULL on the GPU engine */
	struct fft_cache *ffts;  /* plans per (width, height, axes) */
	struct convolve_model model; /* convolve's method auto: the cost model, calibrated once */
	int technique;           /* fftbloom_context_opts.fft_technique */
	char driver[ENGINE_DRIVER_LEN];
	char msg[FFTBLOOM_MESSAGE_LEN];
};


static int fail(fftbloom_context *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(fftbloom_context *c, int status, const char *fmt, ...)
{
	if (c) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->msg, sizeof c->msg, fmt, ap);
		va_end(ap);
	}
	return status;
}

static void put_err(char *err, size_t err_len, const char *msg)
{
	if (err && err_len)
		snprintf(err, err_len, "%s", msg);
}

const char *fftbloom_strerror(int status)
{
	switch (status) {
	case FFTBLOOM_OK: return "success";
	case FFTBLOOM_E_ARG: return "bad argument";
	case FFTBLOOM_E_NOMEM: return "out of memory";
	case FFTBLOOM_E_CONTEXT: return "no OpenGL ES 3.1 context";
	case FFTBLOOM_E_GPU: return "GPU failure";
	case FFTBLOOM_E_TOO_LARGE: return "too large for this device";
	case FFTBLOOM_E_UNSUPPORTED: return "unsupported for this shape";
	case FFTBLOOM_E_FORMAT: return "unknown, corrupt or truncated image data";
	case FFTBLOOM_E_NOT_FINITE: return "NaN or infinite values";
	case FFTBLOOM_E_GPU_MEMORY: return "GPU memory exhausted";
	}
	return "unknown status";
}

const char *fftbloom_version(void)
{
#define STR_(x) #x
#define STR(x) STR_(x)
	return STR(FFTBLOOM_VERSION_MAJOR) "." STR(FFTBLOOM_VERSION_MINOR) "." STR(
		FFTBLOOM_VERSION_PATCH);
}

/* ---- the context ---- */

void fftbloom_context_opts_init(struct fftbloom_context_opts *o)
{
	memset(o, 0, sizeof *o);
}

int fftbloom_context_create(const struct fftbloom_context_opts *o, fftbloom_context **out,
                                char *err, size_t err_len)
{
	struct fftbloom_context_opts d;
	if (!o) {
		fftbloom_context_opts_init(&d);
		o = &d;
	}
	if (err && err_len)
		err[0] = 0;
	if (!out)
		return FFTBLOOM_E_ARG;
	*out = NULL;
	if (o->platform < FFTBLOOM_PLATFORM_AUTO || o->platform > FFTBLOOM_PLATFORM_CURRENT ||
	    o->gpu < 0 || o->max_plans < 0 || o->wisdom < FFTBLOOM_WISDOM_SHIPPED ||
	    o->wisdom > FFTBLOOM_WISDOM_RULES || o->fft_technique < 0 ||
	    o->fft_technique >= FFT_TECH_COUNT || o->engine < FFTBLOOM_ENGINE_AUTO ||
	    o->engine > FFTBLOOM_ENGINE_CPU) {
		if (err && err_len)
			snprintf(err, err_len, "platform %d, gpu %d, max_plans %d, wisdom %d, "
			         "fft_technique %d or engine %d out of range", o->platform, o->gpu,
			         o->max_plans, o->wisdom, o->fft_technique, o->engine);
		return FFTBLOOM_E_ARG;
	}
	fftbloom_context *c = calloc(1, sizeof *c);
	if (!c)
		return FFTBLOOM_E_NOMEM;
	_Static_assert((int)EGLP_AUTO == FFTBLOOM_PLATFORM_AUTO && (int)EGLP_DEVICE == FFTBLOOM_PLATFORM_DEVICE &&
	               (int)EGLP_SURFACELESS == FFTBLOOM_PLATFORM_SURFACELESS &&
	               (int)EGLP_CURRENT == FFTBLOOM_PLATFORM_CURRENT, "the platforms are the engine's");
	struct engine_opts eo = {.platform = o->platform, .device = o->gpu,
	                         .program_cache = o->program_cache, .max_plans = o->max_plans,
	                         .wisdom_file = o->wisdom_file, .shader_dir = o->shader_dir,
	                         .no_wisdom = o->wisdom == FFTBLOOM_WISDOM_RULES,
	                         .wisdom_measure = o->wisdom == FFTBLOOM_WISDOM_MEASURE ?
	                                           FFT_WISDOM_MEASURE_NOW : FFT_WISDOM_MEASURE_NEVER,
	                         .gl_debug = o->gl_debug, .frame_bytes = o->frame_bytes,
	                         .compile_thread = ENGINE_COMPILE_OFF, .keep_display = 1};
	c->technique = o->fft_technique;
	char *eerr = malloc(ENGINE_ERR_LEN);
	if (!eerr) {
		free(c);
		return FFTBLOOM_E_NOMEM;
	}
	int e = 0;
	if (o->engine != FFTBLOOM_ENGINE_CPU) {
		e = engine_create(&eo, NULL, &c->engine, eerr);
		/* auto: a software renderer, or no context at all, takes the CPU engine (the caller's
		 * own context stays: its buffers are what the *_gl functions are for) */
		int to_cpu = o->engine == FFTBLOOM_ENGINE_AUTO && o->platform != FFTBLOOM_PLATFORM_CURRENT &&
		             (e == ENGINE_E_CONTEXT || (!e && engine_info(c->engine)->software));
		if (to_cpu) {
			engine_destroy(c->engine);
			c->engine = NULL;
			e = 0;
		}
	}
	if (!e && c->engine && fft_cache_create(engine_programs(c->engine), engine_info(c->engine),
	                                        NULL, o->max_plans ? o->max_plans : 8, &c->ffts)) {
		snprintf(eerr, ENGINE_ERR_LEN, "out of memory");
		e = ENGINE_E_NOMEM;
	}
	if (!e && !c->engine) {
		char wisdom[4096] = "";
		if (o->wisdom_file && *o->wisdom_file && o->wisdom != FFTBLOOM_WISDOM_RULES)
			snprintf(wisdom, sizeof wisdom, "%s.fftw", o->wisdom_file);
		struct cpu_engine_opts co = {.wisdom_file = wisdom,
		                             .measure = o->wisdom == FFTBLOOM_WISDOM_MEASURE
		                                        ? CPU_MEASURE_NOW : CPU_MEASURE_NEVER,
		                             .max_plans = o->max_plans, .frame_bytes = o->frame_bytes};
		_Static_assert(CPU_ERR_LEN <= ENGINE_ERR_LEN, "the CPU engine's message fits");
		e = cpu_engine_create(&co, NULL, &c->cpu, eerr) ? ENGINE_E_NOMEM : 0;
	}
	if (e) {
		if (err && err_len)
			snprintf(err, err_len, "%s", eerr);
		free(eerr);
		fftbloom_context_destroy(c);
		return e == ENGINE_E_NOMEM ? FFTBLOOM_E_NOMEM : FFTBLOOM_E_CONTEXT;
	}
	free(eerr);
	snprintf(c->driver, sizeof c->driver, "%s",
	         c->engine ? engine_driver(c->engine) : cpu_engine_describe(c->cpu));
	*out = c;
	return 0;
}

void fftbloom_context_destroy(fftbloom_context *c)
{
	if (!c)
		return;
	fft_cache_destroy(c->ffts);
	engine_destroy(c->engine);
	cpu_engine_destroy(c->cpu);
	free(c);
}

const char *fftbloom_context_message(const fftbloom_context *c)
{
	return c ? c->msg : "";
}

const char *fftbloom_context_renderer(const fftbloom_context *c)
{
	return c ? c->driver : "";
}

const char *fftbloom_context_engine(const fftbloom_context *c)
{
	return !c ? "" : c->cpu ? "cpu" : "gpu";
}

int fftbloom_context_software(const fftbloom_context *c)
{
	return c && c->engine && engine_info(c->engine)->software;
}

void fftbloom_context_info(const fftbloom_context *c, struct fftbloom_device_info *out)
{
	memset(out, 0, sizeof *out);
	if (!c->engine) { /* the CPU engine: no GL context */
		snprintf(out->platform, sizeof out->platform, "cpu");
		snprintf(out->renderer, sizeof out->renderer, "%.200s", c->driver);
		out->device_index = -1;
		return;
	}
	const struct egl_info *i = engine_info(c->engine);
#define CP(f)                                                                                  \
	do {                                                                                   \
		_Static_assert(sizeof out->f == sizeof i->f, #f " is the engine's");          \
		memcpy(out->f, i->f, sizeof out->f);                                           \
	} while (0)
	CP(platform);
	CP(egl_vendor);
	CP(egl_version);
	CP(device_ext);
	CP(gl_vendor);
	CP(renderer);
	CP(version);
	CP(glsl_version);
	CP(max_group_size);
	CP(max_group_count);
#undef CP
	out->device_index = i->device_index, out->device_count = i->device_count;
	out->max_shared_memory = i->max_shared_memory, out->max_invocations = i->max_invocations;
	out->max_ssbo_size = i->max_ssbo_size, out->max_ssbo_bindings = i->max_ssbo_bindings;
	out->timer_query = i->timer_query, out->subgroup = i->subgroup;
	out->subgroup_size = i->subgroup_size, out->subgroup_shuffle = i->subgroup_shuffle;
	out->fp16 = i->fp16, out->debug_output = i->debug_output;
	out->buffer_storage = i->buffer_storage, out->robustness = i->robustness;
	out->reset_notification = i->reset_notification, out->software = i->software;
}

int fftbloom_context_make_current(fftbloom_context *c)
{
	if (c && c->cpu)
		return 0; /* nothing is current on the CPU engine */
	if (!c || egl_ctx_make_current(engine_egl(c->engine)))
		return fail(c, FFTBLOOM_E_CONTEXT, "eglMakeCurrent failed");
	return 0;
}

void fftbloom_context_release(fftbloom_context *c)
{
	if (c && c->engine)
		egl_ctx_release(engine_egl(c->engine));
}

/* The engine part asked for, built on first use. */
static int want(fftbloom_context *c, unsigned part)
{
	if (c->cpu)
		return 0; /* the CPU engine has no parts to build */
	char *err = malloc(ENGINE_ERR_LEN);
	if (!err)
		return fail(c, FFTBLOOM_E_NOMEM, "out of memory");
	int e = engine_want(c->engine, part, err);
	int status = !e ? 0 : e == ENGINE_E_NOMEM ? FFTBLOOM_E_NOMEM : FFTBLOOM_E_GPU;
	if (status)
		fail(c, status, "%s", err);
	free(err);
	return status;
}

/* ---- FFT ---- */

static int fft_status(int e)
{
	switch (e) {
	case FFT_E_NOMEM: return FFTBLOOM_E_NOMEM;
	case FFT_E_ARG: return FFTBLOOM_E_ARG;
	case FFT_E_PLAN: case FFT_E_LIMIT: return FFTBLOOM_E_TOO_LARGE;
	}
	return FFTBLOOM_E_GPU;
}

/* The plan for (width, height, axes) from the context's cache. */
static int fft_plan(fftbloom_context *c, int width, int height, int axes, struct fft **f)
{
	if (!c)
		return FFTBLOOM_E_ARG;
	c->msg[0] = 0;
	if (width < 1 || height < 1 || axes < FFTBLOOM_FFT_ROWS || axes > FFTBLOOM_FFT_BOTH)
		return fail(c, FFTBLOOM_E_ARG, "fft: %dx%d along axes %d: sizes >= 1 and axes 1-3 "
		            "expected", width, height, axes);
	_Static_assert((int)FFT_ROWS == FFTBLOOM_FFT_ROWS && (int)FFT_COLS == FFTBLOOM_FFT_COLS &&
	               (int)FFT_BOTH == FFTBLOOM_FFT_BOTH, "the axes are the engine's");
	struct fft_opts o = {.technique = c->technique, .components = 2,
	                     .wisdom = engine_wisdom(c->engine)};
	char err[FFT_ERR_LEN];
	int e = fft_cache_get(c->ffts, width, height, axes, &o, f, err);
	return e ? fail(c, fft_status(e), "fft %dx%d: %s", width, height, err) : 0;
}

/* The GL functions on the CPU engine: there is no GL context to take buffers from. */
static int no_gl(fftbloom_context *c, const char *what)
{
	return fail(c, FFTBLOOM_E_UNSUPPORTED, "%s: the CPU engine has no GL context for buffers "
	            "(engine gpu)", what);
}

static int cpu_status(int e)
{
	switch (e) {
	case CPU_E_ARG: return FFTBLOOM_E_ARG;
	case CPU_E_TOO_LARGE: return FFTBLOOM_E_TOO_LARGE;
	case CPU_E_NOMEM: return FFTBLOOM_E_NOMEM;
	}
	return FFTBLOOM_E_UNSUPPORTED;
}

int fftbloom_fft_gl(fftbloom_context *c, unsigned buffer, int width, int height, int axes,
                        int inverse)
{
	if (c && c->cpu)
		return no_gl(c, "fft_gl");
	struct fft *f;
	int e = fft_plan(c, width, height, axes, &f);
	if (e)
		return e;
	if (!buffer)
		return fail(c, FFTBLOOM_E_ARG, "fft: buffer 0");
	if (fft_execute(f, buffer, !!inverse) || glGetError() != GL_NO_ERROR)
		return fail(c, FFTBLOOM_E_GPU, "fft %dx%d: the GPU transform failed (is buffer %u "
		            "%dx%d complex float32 values?)", width, height, buffer, width, height);
	return 0;
}

/* fftbloom_fft on the CPU engine. */
static int fft_cpu_run(fftbloom_context *c, float *data, int width, int height, int axes,
                       int inverse)
{
	c->msg[0] = 0;
	if (width < 1 || height < 1 || axes < FFTBLOOM_FFT_ROWS || axes > FFTBLOOM_FFT_BOTH)
		return fail(c, FFTBLOOM_E_ARG, "fft: %dx%d along axes %d: sizes >= 1 and axes 1-3 "
		            "expected", width, height, axes);
	if (!data)
		return fail(c, FFTBLOOM_E_ARG, "fft: no data, or its size overflows");
	char err[CPU_ERR_LEN];
	int e = cpu_fft(c->cpu, data, width, height, axes, inverse, err);
	return e ? fail(c, cpu_status(e), "%s", err) : 0;
}

int fftbloom_fft(fftbloom_context *c, float *data, int width, int height, int axes,
                     int inverse)
{
	if (c && c->cpu)
		return fft_cpu_run(c, data, width, height, axes, inverse);
	struct fft *f;
	int e = fft_plan(c, width, height, axes, &f);
	if (e)
		return e;
	size_t bytes;
	if (!data || checked_mul_size((size_t)width * 8, (size_t)height, &bytes))
		return fail(c, FFTBLOOM_E_ARG, "fft: no data, or its size overflows");
	GLuint buf = 0;
	glGenBuffers(1, &buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)bytes, data, GL_DYNAMIC_COPY);
	if (glGetError() != GL_NO_ERROR) {
		glDeleteBuffers(1, &buf);
		return fail(c, FFTBLOOM_E_GPU, "fft %dx%d: no GPU buffer of %zu bytes", width, height,
		            bytes);
	}
	e = fftbloom_fft_gl(c, buf, width, height, axes, inverse);
	if (!e) {
		glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf); /* execute rebinds the generic binding */
		const void *p = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)bytes,
		                                 GL_MAP_READ_BIT);
		if (p) {
			memcpy(data, p, bytes);
			glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
		} else {
			e = fail(c, FFTBLOOM_E_GPU, "fft %dx%d: reading the result failed", width, height);
		}
	}
	glDeleteBuffers(1, &buf);
	return e;
}

/* ---- images ---- */

void fftbloom_image_free(struct fftbloom_image *img)
{
	if (!img)
		return;
	free(img->data);
	memset(img, 0, sizeof *img);
}

void fftbloom_free(void *p)
{
	free(p);
}

void fftbloom_preset_init(struct fftbloom_preset *p, int kind)
{
	memset(p, 0, sizeof *p);
	p->kind = kind;
	switch (kind) { /* api/kernel_preset.c's defaults */
	case FFTBLOOM_PRESET_GAUSSIAN:
		p->sigma = 8;
		break;
	case FFTBLOOM_PRESET_GLARE:
		p->core = 1.5, p->halo = 24, p->halo_gain = 0.02, p->streaks = 4, p->length = 1;
		p->size = 255;
		break;
	case FFTBLOOM_PRESET_APERTURE:
		p->blades = 6, p->radius = 0.2, p->size = 255;
		break;
	}
}

/* The engine's preset for p (NULL: the default aperture), sizes made as the parser does. */
static int preset_of(fftbloom_context *c, const struct fftbloom_preset *p,
                     struct kernel_preset *ks)
{
	struct fftbloom_preset d;
	if (!p) {
		fftbloom_preset_init(&d, FFTBLOOM_PRESET_APERTURE);
		p = &d;
	}
	_Static_assert((int)KERNEL_GAUSSIAN == FFTBLOOM_PRESET_GAUSSIAN &&
	               (int)KERNEL_GLARE == FFTBLOOM_PRESET_GLARE &&
	               (int)KERNEL_APERTURE == FFTBLOOM_PRESET_APERTURE, "the kinds are the engine's");
	memset(ks, 0, sizeof *ks);
	if (p->kind < FFTBLOOM_PRESET_GAUSSIAN || p->kind > FFTBLOOM_PRESET_APERTURE)
		return fail(c, FFTBLOOM_E_ARG, "preset kind %d: 1 gaussian, 2 glare, 3 aperture",
		            p->kind);
	*ks = (struct kernel_preset){p->kind, p->size, p->sigma, p->core, p->halo, p->halo_gain,
	                             p->streaks, p->length, p->rotation, p->blades, p->radius};
	if (p->kind == KERNEL_GAUSSIAN) {
		if (!(p->sigma >= 0.1 && p->sigma <= 1000))
			return fail(c, FFTBLOOM_E_ARG, "gaussian sigma %g: 0.1-1000", p->sigma);
		if (!ks->size)
			ks->size = 2 * (int)ceil(3 * ks->sigma) + 1;
	} else {
		ks->sigma = 0;
	}
	if (ks->size < 1 || ks->size > 4095)
		return fail(c, FFTBLOOM_E_ARG, "preset size %d: 1-4095", ks->size);
	ks->size |= 1;
	return 0;
}

static int bloom_status(int e)
{
	switch (e) {
	case BLOOM_E_ARG: return FFTBLOOM_E_ARG;
	case BLOOM_E_TOO_LARGE: return FFTBLOOM_E_TOO_LARGE;
	case BLOOM_E_NOMEM: return FFTBLOOM_E_NOMEM;
	case BLOOM_E_GPU_MEMORY: return FFTBLOOM_E_GPU_MEMORY;
	}
	return FFTBLOOM_E_GPU;
}

int fftbloom_preset_image(fftbloom_context *c, const struct fftbloom_preset *p,
                              struct fftbloom_image *out)
{
	if (!c || !out)
		return FFTBLOOM_E_ARG;
	c->msg[0] = 0;
	memset(out, 0, sizeof *out);
	struct kernel_preset ks;
	int e = preset_of(c, p, &ks);
	if (e || (e = want(c, ENGINE_BLOOM)))
		return e;
	struct image img = {0};
	char err[BLOOM_ERR_LEN];
	_Static_assert(CPU_ERR_LEN <= BLOOM_ERR_LEN, "the CPU engine's message fits");
	if (c->cpu && (e = cpu_kernel_preset(c->cpu, &ks, &img, err)))
		return fail(c, cpu_status(e), "preset: %s", err);
	if (!c->cpu && (e = bloom_kernel_preset(engine_bloom(c->engine), &ks, &img, err)))
		return fail(c, bloom_status(e), "preset: %s", err);
	*out = (struct fftbloom_image){img.width, img.height, img.channels, img.pixels};
	return 0;
}

void fftbloom_bloom_params_init(struct fftbloom_bloom_params *p, int convolve)
{
	memset(p, 0, sizeof *p); /* api/request.c's defaults for float input */
	p->threshold = 1;
	p->knee = 0.5;
	p->clamp_max = 65472;
	p->intensity = 1;
	p->mix = 0.5;
	p->normalize = convolve ? FFTBLOOM_NORMALIZE_NONE : FFTBLOOM_NORMALIZE_LUMINANCE;
}

/* The engine's parameters for p (NULL: op's defaults), checked against the CLI's bounds. */
static int params_of(fftbloom_context *c, int op, const struct fftbloom_bloom_params *p,
                     struct bloom_params *bp)
{
	struct fftbloom_bloom_params d;
	if (!p) {
		fftbloom_bloom_params_init(&d, op == BLOOM_OP_CONVOLVE);
		p = &d;
	}
	memset(bp, 0, sizeof *bp);
	if (!(p->threshold >= 0 && p->threshold <= 65504) || !(p->knee >= 0 && p->knee <= 65504) ||
	    !(p->clamp_max >= 1e-6 && p->clamp_max <= 3.4e38) ||
	    !(p->intensity >= 0 && p->intensity <= 1000) || !(p->mix >= 0 && p->mix <= 1) ||
	    !(p->kernel_scale >= 0 && p->kernel_scale <= 8))
		return fail(c, FFTBLOOM_E_ARG, "a parameter out of range: threshold and knee 0-65504, "
		            "clamp_max 1e-6-3.4e38, intensity 0-1000, mix 0-1, kernel_scale 0-8");
	if (p->composite < 0 || p->composite >= BLOOM_COMPOSITE_COUNT || p->normalize < 0 ||
	    p->normalize >= BLOOM_NORMALIZE_COUNT || p->precision < 0 ||
	    p->precision >= BLOOM_PRECISION_COUNT || p->method < 0 ||
	    p->method >= CONVOLVE_METHOD_COUNT || p->technique < 0 ||
	    p->technique >= FFT_TECH_COUNT)
		return fail(c, FFTBLOOM_E_ARG, "composite, normalize, precision, method or technique "
		            "out of range");
	_Static_assert((int)BLOOM_COMPOSITE_MIX == FFTBLOOM_COMPOSITE_MIX &&
	               (int)BLOOM_NORMALIZE_NONE == FFTBLOOM_NORMALIZE_NONE &&
	               (int)BLOOM_FP16 == FFTBLOOM_FP16 && (int)CONVOLVE_SPATIAL == FFTBLOOM_METHOD_SPATIAL,
	               "the enums are the engine's");
	bp->threshold = p->threshold, bp->knee = p->knee, bp->clamp_max = p->clamp_max;
	bp->intensity = p->intensity, bp->mix = p->mix, bp->kernel_scale = p->kernel_scale;
	bp->composite = p->composite, bp->normalize = p->normalize, bp->precision = p->precision;
	bp->method = op == BLOOM_OP_CONVOLVE ? p->method : CONVOLVE_FFT;
	bp->technique = p->technique;
	if (p->center_mode < FFTBLOOM_CENTER_DEFAULT || p->center_mode > FFTBLOOM_CENTER_UV)
		return fail(c, FFTBLOOM_E_ARG, "center_mode %d: 0 default, 1 pixel, 2 uv",
		            p->center_mode);
	_Static_assert((int)KERNEL_CENTER_PIXEL == FFTBLOOM_CENTER_PIXEL &&
	               (int)KERNEL_CENTER_UV == FFTBLOOM_CENTER_UV, "the centre modes are the engine's");
	bp->center = (struct kernel_center){p->center_mode, p->center_x, p->center_y};
	return preset_of(c, p->preset, &bp->preset);
}

static int image_in(fftbloom_context *c, const char *what, const struct fftbloom_image *i,
                    struct image *out)
{
	if (!i->data || i->width < 1 || i->height < 1 || i->channels < 1 || i->channels > 4)
		return fail(c, FFTBLOOM_E_ARG, "%s: %dx%d, %d channels: sizes >= 1, 1-4 channels and "
		            "data expected", what, i->width, i->height, i->channels);
	*out = (struct image){.width = i->width, .height = i->height, .channels = i->channels, .pixels = i->data};
	return 0;
}

/* run_op on the CPU engine: always the FFT (convolve's methods all give the same linear
 * convolution; the CPU engine has no direct path), its steps timed into the GPU's stage names
 * (prefilter, rows: the forward transform, multiply, irows: the inverse, composite). */
static int run_op_cpu(fftbloom_context *c, int op, const struct image *img,
                      const struct image *kimg, const struct bloom_params *bp, int timed,
                      struct fftbloom_image *out, struct fftbloom_bloom_stats *st)
{
	struct image res = {0};
	struct cpu_stats cs;
	char err[CPU_ERR_LEN];
	int e = cpu_bloom_run(c->cpu, op, img, kimg, NULL, bp, &res, &cs, err);
	if (e)
		return fail(c, e == CPU_E_ARG && strstr(err, "finite") ? FFTBLOOM_E_NOT_FINITE
		                                                       : cpu_status(e), "%s", err);
	if (st) {
		*st = (struct fftbloom_bloom_stats){
			.method = FFTBLOOM_METHOD_FFT, .padded_w = cs.padded_w, .padded_h = cs.padded_h,
			.tiles_x = cs.tiles_x, .tiles_y = cs.tiles_y, .gray_kernel = cs.gray_kernel,
			.kernel_cached = cs.kernel_cached, .timed = timed ? 2 : 0,
			.gpu_ms = timed ? cs.pack_ms + cs.forward_ms + cs.multiply_ms + cs.inverse_ms +
			              cs.composite_ms : 0,
			.wall_ms = cs.wall_ms};
		if (timed) {
			st->stage_ms[GPU_STAGE_KERNEL] = cs.setup_ms;
			st->stage_ms[GPU_STAGE_PREFILTER] = cs.pack_ms;
			st->stage_ms[GPU_STAGE_ROWS] = cs.forward_ms;
			st->stage_ms[GPU_STAGE_MULTIPLY] = cs.multiply_ms;
			st->stage_ms[GPU_STAGE_IROWS] = cs.inverse_ms;
			st->stage_ms[GPU_STAGE_COMPOSITE] = cs.composite_ms;
		}
	}
	*out = (struct fftbloom_image){res.width, res.height, res.channels, res.pixels};
	return 0;
}

/* bloom_run (or convolve's direct path) for op, as the CLI's frames run (cli/bloom.c). */
static int run_op(fftbloom_context *c, int op, const struct fftbloom_image *in,
                  const struct fftbloom_image *kernel, const struct fftbloom_bloom_params *p,
                  struct fftbloom_image *out, struct fftbloom_bloom_stats *st)
{
	if (!c || !in || !out)
		return FFTBLOOM_E_ARG;
	c->msg[0] = 0;
	memset(out, 0, sizeof *out);
	if (st)
		memset(st, 0, sizeof *st);
	int timed = p && p->time_stages;
	struct bloom_params bp;
	struct image img, kimg;
	int e = params_of(c, op, p, &bp);
	if (!e)
		e = image_in(c, "image", in, &img);
	if (!e && kernel)
		e = image_in(c, "kernel", kernel, &kimg);
	if (!e)
		e = want(c, ENGINE_BLOOM);
	if (e)
		return e;
	if (c->cpu)
		return run_op_cpu(c, op, &img, kernel ? &kimg : NULL, &bp, timed, out, st);
	struct bloom_ctx *b = engine_bloom(c->engine);
	struct image res = {0}, gen = {0};
	char err[BLOOM_ERR_LEN];
	int method = CONVOLVE_FFT;
	if (op == BLOOM_OP_CONVOLVE && bp.method != CONVOLVE_FFT) {
		if ((e = want(c, ENGINE_SPATIAL)))
			return e;
		struct spatial_ctx *s = engine_spatial(c->engine);
		const struct image *k = kernel ? &kimg : &gen;
		if (!kernel)
			e = bloom_kernel_preset(b, &bp.preset, &gen, err);
		if (!e)
			e = convolve_choose(b, s, &c->model, bp.method, img.width, img.height, k->width,
			                    k->height, &bp, &method, NULL, NULL, err);
		struct spatial_stats ss = {0};
		if (!e && method == CONVOLVE_SPATIAL)
			e = convolve_spatial(s, &img, k, &bp, &res, &ss, err);
		if (!e && method == CONVOLVE_SPATIAL && st)
			*st = (struct fftbloom_bloom_stats){.method = FFTBLOOM_METHOD_SPATIAL,
			                                    .wall_ms = ss.wall_ms};
		image_free(&gen);
	}
	if (!e && method == CONVOLVE_FFT) {
		struct bloom_kernel bk = {kernel ? &kimg : NULL, {0, 0}};
		struct bloom_stats bs;
		memset(&bs, 0, sizeof bs);
		e = bloom_run(b, op, &img, &bk, &bp, timed ? BLOOM_TIME_STAGES : 0, &res, &bs, err);
		if (!e && st) {
			_Static_assert(GPU_STAGE_COUNT <= FFTBLOOM_STAGES, "the stages fit the API's array");
			*st = (struct fftbloom_bloom_stats){
				.method = FFTBLOOM_METHOD_FFT, .padded_w = bs.padded_w,
				.padded_h = bs.padded_h, .tiles_x = bs.tiles_x, .tiles_y = bs.tiles_y,
				.gray_kernel = bs.gray_kernel, .kernel_cached = bs.kernel_cached,
				.timed = bs.timed == GPU_TIMING_QUERIES ? 1 : bs.timed == GPU_TIMING_WALL ? 2 : 0,
				.gpu_ms = bs.gpu_ms, .wall_ms = bs.wall_ms};
			for (int i = 0; i < GPU_STAGE_COUNT; i++)
				st->stage_ms[i] = bs.stage_ms[i];
		}
	}
	if (e) {
		int status = bloom_status(e);
		if (e == BLOOM_E_ARG && strstr(err, "finite"))
			status = FFTBLOOM_E_NOT_FINITE;
		return fail(c, status, "%s", err);
	}
	*out = (struct fftbloom_image){res.width, res.height, res.channels, res.pixels};
	return 0;
}

int fftbloom_bloom(fftbloom_context *c, const struct fftbloom_image *in,
                       const struct fftbloom_image *kernel, const struct fftbloom_bloom_params *p,
                       struct fftbloom_image *out, struct fftbloom_bloom_stats *st)
{
	return run_op(c, BLOOM_OP_BLOOM, in, kernel, p, out, st);
}

int fftbloom_convolve(fftbloom_context *c, const struct fftbloom_image *in,
                          const struct fftbloom_image *kernel,
                          const struct fftbloom_bloom_params *p, struct fftbloom_image *out,
                          struct fftbloom_bloom_stats *st)
{
	return run_op(c, BLOOM_OP_CONVOLVE, in, kernel, p, out, st);
}

int fftbloom_resize(fftbloom_context *c, const struct fftbloom_image *in,
                    const struct fftbloom_resize *r, struct fftbloom_image *out)
{
	if (!c || !in || !r || !out)
		return FFTBLOOM_E_ARG;
	c->msg[0] = 0;
	memset(out, 0, sizeof *out);
	struct image img;
	int e = image_in(c, "image", in, &img);
	if (!e && !c->cpu)
		e = want(c, ENGINE_RESAMPLE);
	if (e)
		return e;
	struct resample_geom g = {r->out_w, r->out_h, r->dst_x, r->dst_y, r->dst_w, r->dst_h,
	                          r->src_x, r->src_y, r->src_w, r->src_h};
	struct image res;
	char err[RESAMPLE_ERR_LEN];
	e = c->cpu ? cpu_resample(&img, &g, cpu_engine_threads(c->cpu), &res, err)
	           : resample_run(engine_resample(c->engine), &img, &g, &res, err);
	if (e)
		return fail(c, e == RESAMPLE_E_ARG || e == RESAMPLE_E_TOO_LARGE ? FFTBLOOM_E_ARG
		               : e == RESAMPLE_E_GPU_LIMIT ? FFTBLOOM_E_TOO_LARGE
		               : e == RESAMPLE_E_NOMEM ? FFTBLOOM_E_NOMEM
		               : e == RESAMPLE_E_GPU_MEMORY ? FFTBLOOM_E_GPU_MEMORY : FFTBLOOM_E_GPU,
		            "%s", err);
	*out = (struct fftbloom_image){res.width, res.height, res.channels, res.pixels};
	return 0;
}

const char *fftbloom_stage_name(int stage)
{
	return stage >= 0 && stage < GPU_STAGE_COUNT ? gpu_stage_names[stage] : NULL;
}

int fftbloom_bloom_gl(fftbloom_context *c, unsigned in_buf, unsigned out_buf, int width,
                          int height, int channels, const struct fftbloom_image *kernel,
                          const struct fftbloom_bloom_params *p)
{
	if (!c)
		return FFTBLOOM_E_ARG;
	c->msg[0] = 0;
	if (c->cpu)
		return no_gl(c, "bloom_gl");
	size_t bytes;
	if (!in_buf || !out_buf || width < 1 || height < 1 || channels < 1 || channels > 4 ||
	    checked_mul_size((size_t)width * (size_t)height, (size_t)channels * 4, &bytes))
		return fail(c, FFTBLOOM_E_ARG, "bloom_gl: buffers %u, %u, %dx%d, %d channels: "
		            "buffers, sizes >= 1 and 1-4 channels expected", in_buf, out_buf, width,
		            height, channels);
	struct fftbloom_image in = {width, height, channels, malloc(bytes)}, out = {0};
	if (!in.data)
		return fail(c, FFTBLOOM_E_NOMEM, "out of memory");
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	glBindBuffer(GL_COPY_READ_BUFFER, in_buf);
	const void *m = glMapBufferRange(GL_COPY_READ_BUFFER, 0, (GLsizeiptr)bytes, GL_MAP_READ_BIT);
	if (!m) {
		glBindBuffer(GL_COPY_READ_BUFFER, 0);
		free(in.data);
		return fail(c, FFTBLOOM_E_ARG, "bloom_gl: buffer %u cannot be read as %zu bytes",
		            in_buf, bytes);
	}
	memcpy(in.data, m, bytes);
	glUnmapBuffer(GL_COPY_READ_BUFFER);
	glBindBuffer(GL_COPY_READ_BUFFER, 0);
	int e = fftbloom_bloom(c, &in, kernel, p, &out, NULL);
	free(in.data);
	if (e)
		return e;
	glBindBuffer(GL_COPY_WRITE_BUFFER, out_buf);
	glBufferSubData(GL_COPY_WRITE_BUFFER, 0, (GLsizeiptr)bytes, out.data);
	glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
	fftbloom_image_free(&out);
	if (glGetError() != GL_NO_ERROR)
		return fail(c, FFTBLOOM_E_ARG, "bloom_gl: buffer %u cannot take %zu bytes", out_buf,
		            bytes);
	return 0;
}

/* ---- conv2d and conv2d_transpose ---- */

void fftbloom_conv_params_init(struct fftbloom_conv_params *p)
{
	memset(p, 0, sizeof *p);
	p->stride_h = p->stride_w = p->dilation_h = p->dilation_w = p->groups = 1;
	p->precision = SPATIAL_FP32;
}

/* The shapes checked and described (gles/conv_shape.h, as the CLI's conv2d and
 * conv2d-transpose describe theirs). */
static int conv_describe(fftbloom_context *c, int transpose, const int xs_[4], const int ws_[4],
                         int with_bias, const struct fftbloom_conv_params *p,
                         struct spatial_conv *sc, struct deconv_conv *dc, int out_shape[4])
{
	struct fftbloom_conv_params d;
	if (!p) {
		fftbloom_conv_params_init(&d);
		p = &d;
	}
	if (!xs_ || !ws_)
		return fail(c, FFTBLOOM_E_ARG, "no shape");
	size_t xs[4], ws[4], os[4] = {0};
	for (int i = 0; i < 4; i++) {
		if (xs_[i] < 1 || ws_[i] < 1)
			return fail(c, FFTBLOOM_E_ARG, "shapes (%d, %d, %d, %d) and (%d, %d, %d, %d): "
			            "sizes >= 1 expected", xs_[0], xs_[1], xs_[2], xs_[3], ws_[0], ws_[1],
			            ws_[2], ws_[3]);
		xs[i] = (size_t)xs_[i], ws[i] = (size_t)ws_[i];
	}
	if (p->precision < 0 || p->precision >= SPATIAL_PRECISION_COUNT || p->algorithm < 0 ||
	    p->algorithm >= SPATIAL_ALG_COUNT || p->method < 0 || p->method >= DECONV_METHOD_COUNT ||
	    p->padding_mode < 0 || p->padding_mode >= DECONV_PAD_MODE_COUNT || p->out_h < 0 ||
	    p->out_w < 0)
		return fail(c, FFTBLOOM_E_ARG, "precision 0-3, algorithm 0-%d, method 0-3, "
		            "padding_mode 0-2 and output sizes >= 0 expected", SPATIAL_ALG_COUNT - 1);
	struct conv_params cp = {.pad_h = p->pad_h, .pad_w = p->pad_w, .stride_h = p->stride_h,
	                         .stride_w = p->stride_w, .dil_h = p->dilation_h,
	                         .dil_w = p->dilation_w, .out_pad_h = p->output_pad_h,
	                         .out_pad_w = p->output_pad_w, .groups = p->groups,
	                         .precision = p->precision, .algorithm = p->algorithm,
	                         .method = p->method, .padding_mode = p->padding_mode,
	                         .out_h = p->out_h, .out_w = p->out_w};
	long blen = with_bias ? (long)(transpose ? ws[1] * (size_t)p->groups : ws[0]) : -1;
	char err[CONV_SHAPE_ERR_LEN];
	int ndim, e;
	struct spatial_conv s1;
	struct deconv_conv d1;
	if (transpose)
		e = deconv_describe(4, xs, ws, blen, &cp, dc ? dc : &d1, &ndim, os, err);
	else
		e = conv2d_describe(4, xs, ws, blen, &cp, sc ? sc : &s1, &ndim, os, err);
	if (e)
		return fail(c, FFTBLOOM_E_ARG, "%s", err);
	if (transpose)
		(dc ? dc : &d1)->time_stages = p->time_stages;
	else
		(sc ? sc : &s1)->time_stages = p->time_stages;
	for (int i = 0; i < 4; i++) {
		if (os[i] > 0x7fffffff)
			return fail(c, FFTBLOOM_E_ARG, "the output's shape overflows");
		out_shape[i] = (int)os[i];
	}
	return 0;
}

int fftbloom_conv_output(int transpose, const int in_shape[4], const int weight_shape[4],
                             const struct fftbloom_conv_params *p, int out_shape[4], char *err,
                             size_t err_len)
{
	put_err(err, err_len, "");
	if (!out_shape)
		return FFTBLOOM_E_ARG;
	/* a context of its own for the message: conv_describe writes only msg */
	fftbloom_context *c = calloc(1, sizeof *c);
	if (!c)
		return FFTBLOOM_E_NOMEM;
	int e = conv_describe(c, !!transpose, in_shape, weight_shape, 0, p, NULL, NULL, out_shape);
	if (e)
		put_err(err, err_len, c->msg);
	free(c);
	return e;
}

static int spatial_status(int e)
{
	switch (e) {
	case SPATIAL_E_ARG: return FFTBLOOM_E_ARG;
	case SPATIAL_E_TOO_LARGE: return FFTBLOOM_E_TOO_LARGE;
	case SPATIAL_E_UNSUPPORTED: return FFTBLOOM_E_UNSUPPORTED;
	case SPATIAL_E_NOMEM: return FFTBLOOM_E_NOMEM;
	}
	return FFTBLOOM_E_GPU;
}

const char *fftbloom_conv_algorithm_name(int algorithm)
{
	return spatial_algorithm_name(algorithm);
}

const char *fftbloom_conv_method_name(int method)
{
	return deconv_method_name(method);
}

/* conv2d (sc) or conv2d_transpose (dc) on the CPU engine: im2col or col2im over OpenBLAS
 * (cpu/conv.h), on the cores par_each gives. */
static int conv_cpu(fftbloom_context *c, const struct spatial_conv *sc,
                    const struct deconv_conv *dc, const float *in, const float *weight,
                    const float *bias, float *out, struct fftbloom_conv_stats *st)
{
	char err[CPU_CONV_ERR_LEN];
	_Static_assert(CPU_CONV_ERR_LEN <= SPATIAL_ERR_LEN && CPU_CONV_ERR_LEN <= DECONV_ERR_LEN,
	               "the messages fit");
	int oh, ow, top = 0, left = 0;
	double t0 = clock_ms();
	if (sc ? spatial_conv_output(sc, &oh, &ow, err) : deconv_output(dc, &oh, &ow, &top, &left, err))
		return fail(c, FFTBLOOM_E_ARG, "%s", err);
	int e = sc ? cpu_conv2d(sc, oh, ow, in, weight, bias, out, 0, err)
	           : cpu_conv2d_transpose(dc, oh, ow, top, left, in, weight, bias, out, 0, err);
	if (e)
		return fail(c, e == CPU_CONV_E_NOMEM ? FFTBLOOM_E_NOMEM : e == CPU_CONV_E_TOO_LARGE
		            ? FFTBLOOM_E_TOO_LARGE : FFTBLOOM_E_ARG, "%s", err);
	if (st)
		*st = (struct fftbloom_conv_stats){.wall_ms = clock_ms() - t0};
	return 0;
}

/* conv2d from host arrays (in, out) or GL buffers (in_gl, out_gl where in, out are NULL). */
static int conv2d_io(fftbloom_context *c, const float *in, unsigned in_gl, const int in_shape[4],
                     const float *weight, const int weight_shape[4], const float *bias,
                     const struct fftbloom_conv_params *p, float *out, unsigned out_gl,
                     struct fftbloom_conv_stats *st)
{
	if (!c)
		return FFTBLOOM_E_ARG;
	c->msg[0] = 0;
	struct spatial_conv sc;
	int os[4];
	int e = conv_describe(c, 0, in_shape, weight_shape, bias != NULL, p, &sc, NULL, os);
	if (e)
		return e;
	if ((!in && !in_gl) || !weight || (!out && !out_gl))
		return fail(c, FFTBLOOM_E_ARG, "conv2d: no input, weight or output %s",
		            in || out ? "array" : "buffer");
	if (c->cpu)
		return in ? conv_cpu(c, &sc, NULL, in, weight, bias, out, st) : no_gl(c, "conv2d_gl");
	if ((e = want(c, ENGINE_SPATIAL)))
		return e;
	char err[SPATIAL_ERR_LEN];
	struct spatial_stats ss = {0};
	struct spatial_ctx *sp = engine_spatial(c->engine);
	if ((e = in ? spatial_conv2d(sp, &sc, in, weight, bias, out, &ss, err)
	            : spatial_conv2d_gl(sp, &sc, in_gl, weight, bias, out_gl, &ss, err)))
		return fail(c, spatial_status(e), "%s", err);
	if (st)
		*st = (struct fftbloom_conv_stats){.algorithm = ss.algorithm,
		                                   .timed = ss.timed == GPU_TIMING_QUERIES,
		                                   .gpu_ms = ss.gpu_ms,
		                                   .conv_ms = ss.stage_ms[GPU_STAGE_CONV],
		                                   .wall_ms = ss.wall_ms};
	return 0;
}

int fftbloom_conv2d(fftbloom_context *c, const float *in, const int in_shape[4],
                        const float *weight, const int weight_shape[4], const float *bias,
                        const struct fftbloom_conv_params *p, float *out,
                        struct fftbloom_conv_stats *st)
{
	if (c && (!in || !out))
		return fail(c, FFTBLOOM_E_ARG, "conv2d: no input, weight or output array");
	return conv2d_io(c, in, 0, in_shape, weight, weight_shape, bias, p, out, 0, st);
}

int fftbloom_conv2d_gl(fftbloom_context *c, unsigned in_buf, const int in_shape[4],
                           const float *weight, const int weight_shape[4], const float *bias,
                           const struct fftbloom_conv_params *p, unsigned out_buf,
                           struct fftbloom_conv_stats *st)
{
	if (c && (!in_buf || !out_buf))
		return fail(c, FFTBLOOM_E_ARG, "conv2d: input or output buffer 0");
	return conv2d_io(c, NULL, in_buf, in_shape, weight, weight_shape, bias, p, NULL, out_buf, st);
}

/* conv2d_transpose from host arrays or GL buffers, as conv2d_io. */
static int transpose_io(fftbloom_context *c, const float *in, unsigned in_gl,
                        const int in_shape[4], const float *weight, const int weight_shape[4],
                        const float *bias, const struct fftbloom_conv_params *p, float *out,
                        unsigned out_gl, struct fftbloom_conv_stats *st)
{
	if (!c)
		return FFTBLOOM_E_ARG;
	c->msg[0] = 0;
	struct deconv_conv dc;
	int os[4];
	int e = conv_describe(c, 1, in_shape, weight_shape, bias != NULL, p, NULL, &dc, os);
	if (e)
		return e;
	if ((!in && !in_gl) || !weight || (!out && !out_gl))
		return fail(c, FFTBLOOM_E_ARG, "conv2d_transpose: no input, weight or output %s",
		            in || out ? "array" : "buffer");
	if (c->cpu)
		return in ? conv_cpu(c, NULL, &dc, in, weight, bias, out, st)
		          : no_gl(c, "conv2d_transpose_gl");
	if ((e = want(c, ENGINE_DECONV)))
		return e;
	char err[DECONV_ERR_LEN];
	struct deconv_stats ds = {0};
	struct deconv_ctx *d = engine_deconv(c->engine);
	if ((e = in ? deconv_run(d, &dc, in, weight, bias, out, &ds, err)
	            : deconv_run_gl(d, &dc, in_gl, weight, bias, out_gl, &ds, err)))
		return fail(c, spatial_status(e), "%s", err);
	if (st)
		*st = (struct fftbloom_conv_stats){
			.algorithm = ds.method == DECONV_OVERLAP_ADD ? 0 : ds.conv_algorithm,
			.method = ds.method, .timed = ds.timed == GPU_TIMING_QUERIES,
			.gpu_ms = ds.gpu_ms, .wall_ms = ds.wall_ms};
	return 0;
}

int fftbloom_conv2d_transpose(fftbloom_context *c, const float *in, const int in_shape[4],
                                  const float *weight, const int weight_shape[4],
                                  const float *bias, const struct fftbloom_conv_params *p,
                                  float *out, struct fftbloom_conv_stats *st)
{
	if (c && (!in || !out))
		return fail(c, FFTBLOOM_E_ARG, "conv2d_transpose: no input, weight or output array");
	return transpose_io(c, in, 0, in_shape, weight, weight_shape, bias, p, out, 0, st);
}

int fftbloom_conv2d_transpose_gl(fftbloom_context *c, unsigned in_buf, const int in_shape[4],
                                     const float *weight, const int weight_shape[4],
                                     const float *bias, const struct fftbloom_conv_params *p,
                                     unsigned out_buf, struct fftbloom_conv_stats *st)
{
	if (c && (!in_buf || !out_buf))
		return fail(c, FFTBLOOM_E_ARG, "conv2d_transpose: input or output buffer 0");
	return transpose_io(c, NULL, in_buf, in_shape, weight, weight_shape, bias, p, NULL, out_buf,
	                    st);
}

/* ---- codecs ---- */

static int image_status(int e)
{
	switch (e) {
	case IMAGE_E_ARG: case IMAGE_E_IO: case IMAGE_E_EMPTY: return FFTBLOOM_E_ARG;
	case IMAGE_E_NOMEM: return FFTBLOOM_E_NOMEM;
	case IMAGE_E_TOO_LARGE: return FFTBLOOM_E_TOO_LARGE;
	}
	return FFTBLOOM_E_FORMAT;
}

int fftbloom_image_decode(const void *bytes, size_t len, struct fftbloom_image *out,
                              char *err, size_t err_len)
{
	put_err(err, err_len, "");
	if (!out || !bytes)
		return FFTBLOOM_E_ARG;
	memset(out, 0, sizeof *out);
	struct image img = {0};
	char e_[IMAGE_ERR_LEN];
	int e = image_decode(bytes, len, NULL, &img, NULL, e_);
	if (e) {
		put_err(err, err_len, e_);
		return image_status(e);
	}
	*out = (struct fftbloom_image){img.width, img.height, img.channels, img.pixels};
	return 0;
}

int fftbloom_image_read(const char *path, struct fftbloom_image *out, char *err,
                            size_t err_len)
{
	put_err(err, err_len, "");
	if (!out || !path)
		return FFTBLOOM_E_ARG;
	memset(out, 0, sizeof *out);
	struct image img = {0};
	char e_[IMAGE_ERR_LEN];
	int e = image_read_file(path, NULL, &img, NULL, e_);
	if (e) {
		put_err(err, err_len, e_);
		return image_status(e);
	}
	*out = (struct fftbloom_image){img.width, img.height, img.channels, img.pixels};
	return 0;
}

int fftbloom_image_encode(const struct fftbloom_image *img, const char *format, int quality,
                              int bits, void **bytes, size_t *len, char *err, size_t err_len)
{
	put_err(err, err_len, "");
	if (!img || !format || !bytes || !len)
		return FFTBLOOM_E_ARG;
	*bytes = NULL, *len = 0;
	enum image_format f = image_format_from_name(format);
	if (f == IMAGE_FORMAT_UNKNOWN) {
		put_err(err, err_len, "unknown format (jpeg, png, exr, hdr, pfm, webp, avif, tiff)");
		return FFTBLOOM_E_ARG;
	}
	if (!img->data || img->width < 1 || img->height < 1 || img->channels < 1 ||
	    img->channels > 4) {
		put_err(err, err_len, "an image of sizes >= 1, 1-4 channels and data expected");
		return FFTBLOOM_E_ARG;
	}
	struct image im = {.width = img->width, .height = img->height, .channels = img->channels, .pixels = img->data};
	struct image_encode_opts eo = {.quality = quality, .bits = bits};
	unsigned char *b;
	size_t n;
	unsigned lost;
	char e_[IMAGE_ERR_LEN];
	int e = image_encode(&im, f, &eo, &b, &n, &lost, e_);
	if (e) {
		put_err(err, err_len, e_);
		return e == IMAGE_E_NOMEM ? FFTBLOOM_E_NOMEM : FFTBLOOM_E_ARG;
	}
	*bytes = b, *len = n;
	return 0;
}
