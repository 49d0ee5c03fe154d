/* GPU stage timing; see gpu_timer.h. */
#include "gles/gpu_timer.h"
#include "core/clock.h"

#include <EGL/egl.h>
#include <GLES3/gl31.h>
#include <GLES2/gl2ext.h>
#include <stdlib.h>

const char *const gpu_stage_names[GPU_STAGE_COUNT] = {
	"upload", "kernel", "prefilter", "rows", "cols", "multiply", "icols", "transpose",
	"fused_cols", "transpose_back", "irows", "composite", "download", "pack", "conv", "deconv",
	"answer", "entropy", "huff_decode", "huff_sync", "huff_write",
};

struct gpu_timer {
	int gpu;
	GLuint q[GPU_TIMER_MAX_MARKS];      /* [0]: the start; [i]: the end of mark i's stage */
	double wall[GPU_TIMER_MAX_MARKS];
	int stage[GPU_TIMER_MAX_MARKS];     /* [i], i >= 1: the stage mark i closed */
	int n;                              /* timestamps taken, the start included */
	PFNGLQUERYCOUNTEREXTPROC counter;
	PFNGLGETQUERYOBJECTUI64VEXTPROC get64;
	PFNGLGETQUERYOBJECTUIVEXTPROC getu;
	PFNGLDELETEQUERIESEXTPROC del;
};

int gpu_timer_create(const struct egl_info *info, struct gpu_timer **out)
{
	struct gpu_timer *t = calloc(1, sizeof *t);
	if (!t)
		return -1;
	if (info->timer_query) {
		PFNGLGENQUERIESEXTPROC gen = (PFNGLGENQUERIESEXTPROC)eglGetProcAddress("glGenQueriesEXT");
		PFNGLGETQUERYIVEXTPROC getq = (PFNGLGETQUERYIVEXTPROC)eglGetProcAddress("glGetQueryivEXT");
		t->counter = (PFNGLQUERYCOUNTEREXTPROC)eglGetProcAddress("glQueryCounterEXT");
		t->get64 = (PFNGLGETQUERYOBJECTUI64VEXTPROC)eglGetProcAddress("glGetQueryObjectui64vEXT");
		t->getu = (PFNGLGETQUERYOBJECTUIVEXTPROC)eglGetProcAddress("glGetQueryObjectuivEXT");
		t->del = (PFNGLDELETEQUERIESEXTPROC)eglGetProcAddress("glDeleteQueriesEXT");
		GLint bits = 0;
		if (gen && getq && t->counter && t->get64 && t->getu && t->del) {
			getq(GL_TIMESTAMP_EXT, GL_QUERY_COUNTER_BITS_EXT, &bits);
			if (bits > 0) {
				gen(GPU_TIMER_MAX_MARKS, t->q);
				t->gpu = 1;
			}
		}
		while (glGetError() != GL_NO_ERROR) {
		}
	}
	*out = t;
	return 0;
}

void gpu_timer_destroy(struct gpu_timer *t)
{
	if (!t)
		return;
	if (t->gpu)
		t->del(GPU_TIMER_MAX_MARKS, t->q);
	free(t);
}

int gpu_timer_kind(const struct gpu_timer *t)
{
	return t->gpu ? GPU_TIMING_QUERIES : GPU_TIMING_WALL;
}

/* Takes timestamp n (the start or a stage's end). */
static void stamp(struct gpu_timer *t)
{
	if (t->gpu) {
		t->counter(t->q[t->n], GL_TIMESTAMP_EXT);
	} else {
		glFinish();
		t->wall[t->n] = clock_ms();
	}
	t->n++;
}

void gpu_timer_start(struct gpu_timer *t)
{
	t->n = 0;
	if (t->gpu)
		glGetIntegerv(GL_GPU_DISJOINT_EXT, &(GLint){0}); /* clears the disjoint flag */
	stamp(t);
}

void gpu_timer_mark(struct gpu_timer *t, int stage)
{
	if (t->n < 1 || t->n >= GPU_TIMER_MAX_MARKS || stage < 0 || stage >= GPU_STAGE_COUNT)
		return;
	t->stage[t->n] = stage;
	stamp(t);
}

int gpu_timer_read(struct gpu_timer *t, double ms[GPU_STAGE_COUNT])
{
	for (int s = 0; s < GPU_STAGE_COUNT; s++)
		ms[s] = 0;
	if (t->n < 2)
		return -1;
	if (!t->gpu) {
		for (int i = 1; i < t->n; i++)
			ms[t->stage[i]] += t->wall[i] - t->wall[i - 1];
		return 0;
	}
	GLuint64 prev = 0;
	for (int i = 0; i < t->n; i++) {
		GLuint64 v = 0;
		t->get64(t->q[i], GL_QUERY_RESULT_EXT, &v);
		if (i)
			ms[t->stage[i]] += (double)(v - prev) / 1e6;
		prev = v;
	}
	GLint disjoint = 0;
	glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);
	return disjoint ? -1 : 0;
}
