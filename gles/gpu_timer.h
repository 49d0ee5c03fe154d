/* Per-stage GPU times: timestamps from GL_EXT_disjoint_timer_query where the driver counts
 * them, else glFinish-bracketed wall time. Marks are cheap; reading waits for the GPU.
 *
 * GL contract: on the context's thread; owns its query objects; changes no other state. */
#ifndef FFTBLOOM_GPU_TIMER_H
#define FFTBLOOM_GPU_TIMER_H

#include "gles/egl.h"

#define GPU_TIMER_MAX_MARKS 32

struct gpu_timer;

int gpu_timer_create(const struct egl_info *info, struct gpu_timer **out); /* 0 or -1 */
void gpu_timer_destroy(struct gpu_timer *t);                                 /* NULL-safe */

/* 1 when the marks are GPU timestamps, 0 when they are wall-clock after glFinish. */
int gpu_timer_is_gpu(const struct gpu_timer *t);

/* Starts a new sequence: mark 0 is taken now. */
void gpu_timer_start(struct gpu_timer *t);
/* Records the time at which the GPU finishes all commands issued so far. */
void gpu_timer_mark(struct gpu_timer *t);
/* Waits and writes ms[i] = mark i+1 - mark i for the marks taken; returns their count - 1, or
 * -1 when the GPU reported a disjoint event (the times are then unreliable). */
int gpu_timer_read(struct gpu_timer *t, double *ms);

#endif
