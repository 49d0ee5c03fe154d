/* Per-stage GPU times: timestamps from GL_EXT_disjoint_timer_query where the driver counts
 * them, else glFinish-bracketed wall time. Each mark closes a named stage (enum gpu_stage), so
 * a figure says what it times: the names are the ones bench JSON and the daemon's Server-Timing
 * print. Marks are cheap with timer queries; reading waits for the GPU.
 *
 * GL contract: on the context's thread; owns its query objects; changes no other GL state. */
#ifndef FFTBLOOM_GPU_TIMER_H
#define FFTBLOOM_GPU_TIMER_H

#include "gles/egl.h"

#define GPU_TIMER_MAX_MARKS 32

/* The GPU work a time belongs to. */
enum gpu_stage {
	GPU_STAGE_UPLOAD = 0,      /* bloom: the frame into GPU memory (planes: and converted) */
	GPU_STAGE_KERNEL,          /* bloom: a kernel's spectrum computed (a cache miss) */
	GPU_STAGE_PREFILTER,       /* bloom: the image packed into the padded buffer, prefiltered */
	GPU_STAGE_ROWS,            /* forward row transforms */
	GPU_STAGE_COLS,            /* forward column transforms */
	GPU_STAGE_MULTIPLY,        /* bloom: the spectrum times the kernel's */
	GPU_STAGE_ICOLS,           /* inverse column transforms */
	GPU_STAGE_TRANSPOSE,       /* bloom, fused columns: the row spectra transposed */
	GPU_STAGE_FUSED_COLS,      /* bloom, fused columns: forward, multiply, inverse in one pass */
	GPU_STAGE_TRANSPOSE_BACK,  /* bloom, fused columns: transposed back */
	GPU_STAGE_IROWS,           /* inverse row transforms */
	GPU_STAGE_COMPOSITE,       /* bloom: the result composited into the output image */
	GPU_STAGE_DOWNLOAD,        /* the result read back to the host */
	GPU_STAGE_PACK,            /* spatial: the input packed into its texture */
	GPU_STAGE_CONV,            /* spatial: the convolution */
	GPU_STAGE_DECONV,          /* transposed convolution: the method's work */
	GPU_STAGE_ANSWER,          /* bloom, planes asked: the planes (or DCT coefficients) made */
	GPU_STAGE_ENTROPY,         /* bloom, coefficients coded on the GPU: the scan made */
	GPU_STAGE_HUFF_DECODE,     /* JPEG entropy decoding: each chunk from its guessed start */
	GPU_STAGE_HUFF_SYNC,       /* ... the chunks' true starts found (sync rounds) */
	GPU_STAGE_HUFF_WRITE,      /* ... the prefix sum, the coefficients written, the DC sums */
	GPU_STAGE_COUNT
};

/* "upload", "kernel", "prefilter", "rows", "cols", "multiply", "icols", "transpose",
 * "fused_cols", "transpose_back", "irows", "composite", "download", "pack", "conv", "deconv",
 * "answer", "entropy". */
extern const char *const gpu_stage_names[GPU_STAGE_COUNT];

/* How a sequence's times were taken. */
enum gpu_timing { GPU_TIMING_NONE = 0, GPU_TIMING_QUERIES = 1, GPU_TIMING_WALL = 2 };

struct gpu_timer;

int gpu_timer_create(const struct egl_info *info, struct gpu_timer **out); /* 0 or -1 */
void gpu_timer_destroy(struct gpu_timer *t);                                 /* NULL-safe */

/* GPU_TIMING_QUERIES when the marks are GPU timestamps, GPU_TIMING_WALL when each mark waits
 * for the GPU (glFinish) and reads the host clock. */
int gpu_timer_kind(const struct gpu_timer *t);

/* Starts a new sequence: its first stage begins now. */
void gpu_timer_start(struct gpu_timer *t);
/* Closes a stage: the commands issued since the last mark (or the start) are `stage`'s. A stage
 * marked twice in a sequence adds up. Marks past GPU_TIMER_MAX_MARKS are dropped. */
void gpu_timer_mark(struct gpu_timer *t, int stage);
/* Waits for the sequence's times and writes ms[stage] for every stage (0 for those not marked).
 * Returns 0, or -1 when nothing was marked or the GPU reported a disjoint event (the times are
 * then unreliable). */
int gpu_timer_read(struct gpu_timer *t, double ms[GPU_STAGE_COUNT]);

#endif
