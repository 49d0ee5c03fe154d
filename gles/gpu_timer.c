/* GPU stage timing; see gpu_timer.h. */
#include "gles/gpu_timer.h"

#include <EGL/egl.h>
#include <GLES3/gl31.h>
#include <GLES2/gl2ext.h>
#include <stdlib.h>
#include <time.h>

struct gpu_timer {
	int gpu;
	GLuint q[GPU_TIMER_MAX_MARKS];
	double wall[GPU_TIMER_MAX_MARKS];
	int n;
	PFNGLQUERYCOUNTEREXTPROC counter;
	PFNGLGETQUERYOBJECTUI64VEXTPROC get64;
	PFNGLGETQUERYOBJECTUIVEXTPROC getu;
	PFNGLDELETEQUERIESEXTPROC del;
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

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

int gpu_timer_is_gpu(const struct gpu_timer *t)
{
	return t->gpu;
}

void gpu_timer_start(struct gpu_timer *t)
{
	t->n = 0;
	if (t->gpu)
		glGetIntegerv(GL_GPU_DISJOINT_EXT, &(GLint){0}); /* clears the disjoint flag */
	gpu_timer_mark(t);
}

void gpu_timer_mark(struct gpu_timer *t)
{
	if (t->n >= GPU_TIMER_MAX_MARKS)
		return;
	if (t->gpu) {
		t->counter(t->q[t->n], GL_TIMESTAMP_EXT);
	} else {
		glFinish();
		t->wall[t->n] = now_ms();
	}
	t->n++;
}

int gpu_timer_read(struct gpu_timer *t, double *ms)
{
	if (t->n < 2)
		return 0;
	if (!t->gpu) {
		for (int i = 0; i + 1 < t->n; i++)
			ms[i] = t->wall[i + 1] - t->wall[i];
		return t->n - 1;
	}
	GLuint64 prev = 0;
	for (int i = 0; i < t->n; i++) {
		GLuint64 v = 0;
		t->get64(t->q[i], GL_QUERY_RESULT_EXT, &v);
		if (i)
			ms[i - 1] = (double)(v - prev) / 1e6;
		prev = v;
	}
	GLint disjoint = 0;
	glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);
	return disjoint ? -1 : t->n - 1;
}
