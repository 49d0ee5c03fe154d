/* The GPU engine: the one constructor of what a GL thread works with, so the daemon's GPU
 * threads and the CLI build it alike: the EGL context, the program cache with its folder of
 * binaries, the FFT wisdom, and the bloom, spatial and transposed-convolution contexts asked
 * for. A thin owner: it parses nothing; its options are numbers and paths.
 *
 * GL contract: engine_create makes the context current on the calling thread; that thread alone
 * uses the engine and its parts until engine_destroy, which releases the context. */
#ifndef FFTBLOOM_ENGINE_H
#define FFTBLOOM_ENGINE_H

#include <stddef.h>

#include "gles/bloom.h"
#include "gles/deconv.h"
#include "gles/egl.h"
#include "core/log.h"
#include "gles/program.h"
#include "gles/resample.h"
#include "gles/spatial.h"
#include "gles/wisdom.h"

#define ENGINE_ERR_LEN 4096
#define ENGINE_DRIVER_LEN 512

enum engine_error {
	ENGINE_OK = 0,
	ENGINE_E_CONTEXT = -1, /* no OpenGL ES 3.1 context (message: each platform tried) */
	ENGINE_E_NOMEM = -2,
	ENGINE_E_PART = -3,    /* a part asked for failed to build (message names it) */
};

/* The parts besides the context, the program cache and the wisdom (engine_opts.parts). */
enum engine_part {
	ENGINE_BLOOM = 1u,   /* bloom_ctx */
	ENGINE_SPATIAL = 2u, /* spatial_ctx (runs its probes: about 0.2 s on llvmpipe) */
	ENGINE_DECONV = 4u,  /* deconv_ctx, on the spatial context (which it implies) */
	ENGINE_RESAMPLE = 8u,/* resample_ctx (sized outputs; one program, no probe) */
};

struct engine_opts {
	int platform;              /* enum egl_platform */
	int device;                /* EGL device index for the device platform */
	int gl_debug;              /* KHR_debug context, its messages to the log */
	const char *shader_dir;    /* NULL or "": the embedded shaders; else NAME.comp from here */
	const char *program_cache; /* folder of persisted program binaries; NULL or "": none */
	const char *wisdom_file;   /* FFT wisdom file; NULL or "": the wisdom in memory only */
	int no_wisdom;             /* 1: no wisdom at all (neither file nor shipped): the built-in
	                              rule (fft_plan_rule) for every shape, nothing measured */
	int wisdom_measure;        /* enum fft_wisdom_measure: what a shape no wisdom holds gets
	                              (NEVER, the default: the rule; NOW: measured before its plan
	                              is built; IDLE: the rule, and measured by engine_idle) */
	int idle_on_software;      /* measure in idle time on a software renderer too (IDLE is
	                              NEVER there otherwise: its timings are the CPU's, and the
	                              measuring takes the cores requests need) */
	size_t kernel_cache_bytes; /* bloom_ctx_opts.kernel_cache_bytes (0: its default) */
	int max_plans;             /* the bloom's padded sizes and the spatial shapes kept (0: 8) */
	int no_persistent_map;     /* bloom_ctx_opts.no_persistent_map */
	unsigned parts;            /* enum engine_part, or-ed */
	size_t frame_bytes;        /* bloom_ctx_opts.frame_bytes and spatial_opts.frame_bytes: GPU
	                              memory one frame's pass may take before it runs in tiles */
	void (*progress)(void *arg, int done, int total); /* bloom_ctx_opts.progress */
	void *progress_arg;
	int borrow_plans;          /* bloom_ctx_opts.borrow_plans: a new padded size runs on a plan
	                              already built; its own is built by engine_idle */
	int compile_thread;        /* enum engine_compile: idle work's programs compiled by a thread
	                              with a context of its own (program_cache_worker) */
	int upload_copy;           /* bloom_ctx_opts.upload_copy */
	int compile_mode;          /* enum engine_compile_mode */
	int keep_display;          /* egl_opts.keep_display (libfftbloom's contexts) */
};

enum engine_compile_mode {
	ENGINE_CMODE_AUTO = 0,   /* parallel where the context has GL_KHR_parallel_shader_compile
	                            and compile_thread is AUTO, else as compile_thread */
	ENGINE_CMODE_PARALLEL,   /* program_cache_parallel (as AUTO, inline where it is missing) */
	ENGINE_CMODE_THREAD,     /* the compile thread (compile_thread ON) */
	ENGINE_CMODE_INLINE,     /* compiles on the engine's thread (compile_thread OFF) */
	ENGINE_CMODE_PROCESS,    /* as AUTO here: the daemon runs idle work in a successor process
	                            before it serves, and none in a serving one */
};

enum engine_compile {
	ENGINE_COMPILE_OFF = 0,  /* compiles on the engine's thread (the CLI: no idle work) */
	ENGINE_COMPILE_AUTO,     /* on a GPU; not on a software renderer (it compiles at a
	                            program's first dispatch, which the thread cannot take) */
	ENGINE_COMPILE_ON,
};

const char *engine_strerror(int code);

struct engine;

/* Builds the engine on the calling thread. 0, or a negative engine_error with err saying what
 * failed; nothing is left behind on failure. */
int engine_create(const struct engine_opts *o, const struct log_sink *log, struct engine **out,
                  char err[ENGINE_ERR_LEN]);
void engine_destroy(struct engine *e); /* NULL-safe; destroys the parts, then the context */

/* Builds the parts asked for that are not built yet (the spatial context's probes take a while,
 * so a daemon builds it on first use). 0, or ENGINE_E_PART with err naming the part. */
int engine_want(struct engine *e, unsigned parts, char err[ENGINE_ERR_LEN]);

/* The cancellation (gles/cancel.h) every part looks at between dispatches, parts built later
 * included: the spatial and transposed convolutions before each dispatch, a frame in tiles
 * before each tile; a run it stops returns its part's E_CANCELLED. NULL: none; not owned, it
 * must outlive the engine or be set again. */
void engine_set_cancel(struct engine *e, struct gles_cancel *c);

/* egl_ctx_reset_status of the engine's context: after a GPU reset (not EGL_RESET_NONE) the
 * engine and everything made in it are lost; only engine_destroy and a new engine help. */
int engine_reset_status(struct engine *e);

struct egl_ctx *engine_egl(const struct engine *e);
const struct egl_info *engine_info(const struct engine *e);
struct program_cache *engine_programs(const struct engine *e);
struct fft_wisdom *engine_wisdom(const struct engine *e);   /* NULL with no_wisdom */
/* fft_wisdom_source, or "built-in rules" with no_wisdom. */
const char *engine_wisdom_source(const struct engine *e);

/* One short piece of idle work, on the engine's thread between jobs: the plan of a padded size
 * a frame borrowed another's for (bloom_build_wanted), else a step of measuring a queued FFT
 * shape (fft_tuner_step), else the rebuild of one bloom plan whose shapes were measured since it
 * was built (bloom_ctx_refresh). Returns 1 while work remains, 0 when there is
 * none (then the caller may sleep until its next job), ENGINE_IDLE_WAIT while a program the
 * work needs compiles on the compile thread: nothing was done, and the caller waits a moment
 * (ENGINE_IDLE_WAIT_MS, or until a job comes) before the next call. */
int engine_idle(struct engine *e);

/* Whether engine_idle has work to do (bloom_idle_pending, or FFT shapes queued for measuring),
 * without doing any. */
int engine_idle_pending(const struct engine *e);
/* As engine_idle, the wanted plans' steps only (no FFT shape measured, no plan rebuilt): 1 while
 * a plan is wanted, 0 when none is, ENGINE_IDLE_WAIT as engine_idle. */
int engine_idle_plans(struct engine *e);
#define ENGINE_IDLE_WAIT 2
#define ENGINE_IDLE_WAIT_MS 2
#define ENGINE_SLOW_STEP_MS 5.0 /* idle steps this long are logged (debug) */

/* One step toward a plan a frame borrowed another's for (bloom_build_wanted: one program
 * compiled at most), the only idle work worth taking between jobs under load: until it is
 * built, frames of that size run on a borrowed plan, in tiles when it is smaller. Urgent
 * plans alone (BLOOM_WANT_URGENT), or with long_load any that evicts no plan
 * (BLOOM_WANT_LOAD). 1 when it took a step, 0 when none may be built, ENGINE_IDLE_WAIT as
 * engine_idle. */
int engine_build_wanted(struct engine *e, int long_load);
struct bloom_ctx *engine_bloom(const struct engine *e);     /* NULL unless ENGINE_BLOOM */
struct spatial_ctx *engine_spatial(const struct engine *e); /* NULL unless SPATIAL or DECONV */
struct deconv_ctx *engine_deconv(const struct engine *e);   /* NULL unless ENGINE_DECONV */
struct resample_ctx *engine_resample(const struct engine *e); /* NULL unless ENGINE_RESAMPLE */
/* "RENDERER / VERSION": what persisted program binaries and wisdom lines are kept per. */
const char *engine_driver(const struct engine *e);

#endif
