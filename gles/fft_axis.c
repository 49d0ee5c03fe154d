/* FFT axes: the buffers and programs of one axis's plan (fft_plan), its execution (binds and
 * dispatches only), and the 2D transform made of a row and a column axis; see gles/fft.h.
 * Bluestein's axes are built and run by fft_bluestein.c. */
#include "gles/fft_internal.h"

#include <GLES3/gl31.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/gl_util.h"

struct fft {
	int width, height, axes;
	struct fft_axis *rows, *cols;
};

const char *fft_strerror(int code)
{
	switch (code) {
	case FFT_OK: return "ok";
	case FFT_E_PLAN: return "no FFT plan";
	case FFT_E_PROGRAM: return "FFT program failed to build";
	case FFT_E_GL: return "GL error";
	case FFT_E_NOMEM: return "out of memory";
	case FFT_E_ARG: return "bad FFT argument";
	case FFT_E_LIMIT: return "exceeds a device limit";
	}
	return "unknown error";
}

GLuint fft_axis_buffer(size_t bytes, const void *data, const struct log_sink *log)
{
	GLenum e;
	GLuint b = gl_buf_new(bytes ? bytes : 16, data, GL_STATIC_DRAW, &e);
	if (!b)
		log_sinkf(log, LOG_ERROR, "fft buffer: %s", gl_error_name(e));
	return b;
}

/* The programs of a native plan, both directions. */
static int build_programs(struct fft_axis *a, char err[FFT_ERR_LEN])
{
	const struct fft_plan *p = &a->plan;
	for (int inv = 0; inv < 2; inv++) {
		int rc = 0;
		if (p->blocked)
			for (int i = 0; !rc && i < p->nsweeps; i++)
				rc = fft_prog_sweep(a->pc, p, &a->opts, inv, i, &a->sweep[inv][i], err);
		else if (p->shared)
			rc = fft_prog_shared(a->pc, p, &a->opts, inv, 0, 0, 0, 0,
			                     fft_end_scale(&a->opts, inv, p->m), &a->shared[inv], err);
		else
			for (int i = 0; !rc && i < p->npasses; i++)
				rc = fft_prog_global(a->pc, p, &a->opts, a->adjacent, inv, i, &a->pass[inv][i],
				                     err);
		if (rc)
			return rc;
	}
	return 0;
}

int fft_axis_check_capacity(const struct fft_axis *a, char err[FFT_ERR_LEN])
{
	size_t elem = (size_t)a->opts.components * (a->opts.half ? 2 : 4);
	if (a->capacity * elem > (size_t)a->info->max_ssbo_size) {
		snprintf(err, FFT_ERR_LEN, "buffer of %zu bytes exceeds the storage-buffer limit of %lld",
		         a->capacity * elem, a->info->max_ssbo_size);
		return FFT_E_LIMIT;
	}
	return 0;
}

/* A native plan's programs and, for the global and multi-sweep blocked techniques, the
 * ping-pong buffer. */
static int build_native(struct fft_axis *a, char err[FFT_ERR_LEN])
{
	size_t elem = (size_t)a->opts.components * (a->opts.half ? 2 : 4);
	int rc = fft_axis_check_capacity(a, err);
	if (rc)
		return rc;
	if (a->plan.npasses == 0) /* n == 1: the identity */
		return 0;
	rc = build_programs(a, err);
	if (rc)
		return rc;
	if (!a->plan.shared && !(a->plan.blocked && a->plan.nsweeps == 1)) {
		a->scratch = fft_axis_buffer(a->capacity * elem, NULL, &a->log);
		if (!a->scratch) {
			snprintf(err, FFT_ERR_LEN, "length %d: scratch buffer of %zu bytes: out of GPU memory",
			         a->n, a->capacity * elem);
			return FFT_E_GL;
		}
	}
	return 0;
}

/* fft_axis_build, or with shape_only the plan alone (fft_axis_shape). */
static int axis_make(struct program_cache *pc, const struct egl_info *info, int n,
                     int signals_adjacent, size_t capacity, int max_count,
                     const struct fft_opts *o, const struct log_sink *log, int shape_only,
                     struct fft_axis **out, char err[FFT_ERR_LEN])
{
	*out = NULL;
	err[0] = 0;
	if (o->components != 2 && o->components != 4) {
		snprintf(err, FFT_ERR_LEN, "components must be 2 or 4, not %d", o->components);
		return FFT_E_ARG;
	}
	if (max_count < 1 || capacity < 1) {
		snprintf(err, FFT_ERR_LEN, "empty FFT batch");
		return FFT_E_ARG;
	}
	struct fft_axis *a = calloc(1, sizeof *a);
	if (!a)
		return FFT_E_NOMEM;
	a->pc = pc;
	a->opts = *o;
	a->opts.wisdom = NULL;
	a->n = n;
	a->adjacent = signals_adjacent;
	a->capacity = capacity;
	a->max_count = max_count;
	a->info = info;
	if (log)
		a->log = *log;
	struct fft_plan_opts po = {.technique = o->technique, .components = o->components,
	                           .shared_limit = info->max_shared_memory,
	                           .max_invocations = info->max_invocations,
	                           .signals_adjacent = signals_adjacent, .threads = o->threads,
	                           .signals = o->signals, .half = o->half, .pad_from = o->pad_from,
	                           .split = o->split};
	int rc = fft_plan_make(n, &po, &a->plan);
	a->shape_only = shape_only;
	if (rc) {
		snprintf(err, FFT_ERR_LEN, "length %d: %s", n, fft_plan_strerror(rc));
		rc = FFT_E_PLAN;
	} else if (shape_only) {
		rc = a->plan.bluestein ? FFT_E_PLAN : fft_axis_check_capacity(a, err);
		if (a->plan.bluestein)
			snprintf(err, FFT_ERR_LEN, "length %d: a shape alone is for native lengths", n);
	} else {
		a->opts.wisdom = o->wisdom; /* Bluestein's inner transform is tuned as any */
		rc = a->plan.bluestein ? fft_bluestein_build(a, err) : build_native(a, err);
		a->opts.wisdom = NULL;
	}
	if (rc) {
		fft_axis_destroy(a);
		return rc;
	}
	*out = a;
	return 0;
}

int fft_axis_build(struct program_cache *pc, const struct egl_info *info, int n,
                   int signals_adjacent, size_t capacity, int max_count,
                   const struct fft_opts *o, const struct log_sink *log,
                   struct fft_axis **out, char err[FFT_ERR_LEN])
{
	return axis_make(pc, info, n, signals_adjacent, capacity, max_count, o, log, 0, out, err);
}

int fft_axis_shape(struct program_cache *pc, const struct egl_info *info, int n,
                   size_t capacity, int max_count, const struct fft_opts *o,
                   struct fft_axis **out, char err[FFT_ERR_LEN])
{
	return axis_make(pc, info, n, 0, capacity, max_count, o, NULL, 1, out, err);
}

void fft_axis_destroy(struct fft_axis *a)
{
	if (!a)
		return;
	fft_bluestein_free(a);
	for (int inv = 0; inv < 2; inv++) {
		fft_prog_drop(a->pc, &a->shared[inv]);
		for (int i = 0; i < FFT_MAX_PASSES; i++) {
			fft_prog_drop(a->pc, &a->pass[inv][i]);
			fft_prog_drop(a->pc, &a->sweep[inv][i]);
		}
	}
	glDeleteBuffers(1, &a->scratch); /* 0 is ignored */
	free(a);
}

const struct fft_opts *fft_axis_options(const struct fft_axis *a)
{
	return &a->opts;
}

void fft_dispatch_groups(unsigned groups, int max_x)
{
	GLuint gx = groups, gy = 1, maxx = (GLuint)max_x;
	if (gx > maxx) {
		gx = maxx;
		gy = (groups + maxx - 1) / maxx;
	}
	glDispatchCompute(gx, gy, 1);
	fft_storage_barrier();
}

int fft_axis_adjacent(const struct fft_axis *a)
{
	return a->adjacent;
}

int fft_axis_max_group_x(const struct fft_axis *a)
{
	return a->info->max_group_count[0];
}

const struct fft_plan *fft_axis_plan(const struct fft_axis *a)
{
	return &a->plan;
}

void fft_axis_set_provisional(struct fft_axis *a)
{
	a->provisional = 1;
}

int fft_axis_io_unmeasured(const struct fft_axis *a)
{
	return a->io_unmeasured;
}

int fft_axis_provisional(const struct fft_axis *a)
{
	return a && (a->provisional || fft_axis_provisional(a->inner));
}

const struct fft_axis *fft_axis_inner(const struct fft_axis *a)
{
	return a->inner;
}

const struct fft_plan *fft_axis_run_plan(const struct fft_axis *a)
{
	return !a->plan.bluestein ? &a->plan : a->blf.id ? &a->blf_plan : &a->inner->plan;
}

void fft_storage_barrier(void)
{
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
}

/* Copies the region the signals occupy from buf to the scratch buffer (same offsets), so that
 * an odd count of ping-pong dispatches ends in buf. */
static void copy_to_scratch(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                            size_t elem_stride, int count)
{
	size_t first = offset, last = offset + (size_t)(count - 1) * sig_stride +
	                              (size_t)(a->plan.m - 1) * elem_stride + 1;
	size_t esz = (size_t)a->opts.components * (a->opts.half ? 2 : 4);
	glBindBuffer(GL_COPY_READ_BUFFER, buf);
	glBindBuffer(GL_COPY_WRITE_BUFFER, a->scratch);
	glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)(first * esz),
	                    (GLintptr)(first * esz), (GLsizeiptr)((last - first) * esz));
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
}

/* Blocked technique: a dispatch per sweep, ping-pong between buf and the scratch buffer so that
 * the last lands in buf (one sweep runs in place). A sweep's groups are (column group, set g),
 * the column group fastest, laid over x and y. */
static int run_blocked(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                       size_t elem_stride, int count, int inverse)
{
	const struct fft_plan *p = &a->plan;
	GLuint src = buf, dst = p->nsweeps == 1 ? buf : a->scratch;
	if (p->nsweeps > 1 && p->nsweeps % 2) {
		copy_to_scratch(a, buf, offset, sig_stride, elem_stride, count);
		src = a->scratch;
		dst = buf;
	}
	unsigned long long cgroups = (unsigned long long)(count + p->signals - 1) / p->signals;
	GLuint maxx = (GLuint)a->info->max_group_count[0];
	for (int i = 0; i < p->nsweeps; i++) {
		const struct fft_prog *pr = &a->sweep[inverse][i];
		unsigned long long total = cgroups * (unsigned long long)(p->m / p->sweep[i].len);
		GLuint gx = total < maxx ? (GLuint)total : maxx;
		unsigned long long gy = (total + gx - 1) / gx;
		if (gy > (unsigned long long)a->info->max_group_count[1])
			return FFT_E_LIMIT;
		fft_prog_use(pr, offset, sig_stride, elem_stride, count);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_DATA, src);
		if (dst != src)
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_DST, dst);
		glDispatchCompute(gx, (GLuint)gy, 1);
		fft_storage_barrier();
		GLuint t = src;
		src = dst;
		dst = t;
	}
	return 0;
}

int fft_axis_run_native(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                        size_t elem_stride, int count, int inverse)
{
	const struct fft_plan *p = &a->plan;
	if (p->npasses == 0)
		return 0;
	if (p->shared) {
		const struct fft_prog *pr = &a->shared[inverse];
		fft_prog_use(pr, offset, sig_stride, elem_stride, count);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_DATA, buf);
		fft_dispatch_groups((unsigned)((count + p->signals - 1) / p->signals),
		                    a->info->max_group_count[0]);
		return 0;
	}
	if (p->blocked)
		return run_blocked(a, buf, offset, sig_stride, elem_stride, count, inverse);
	/* global technique: ping-pong so that the last pass lands in buf */
	GLuint src = buf, dst = a->scratch;
	if (p->npasses % 2) {
		copy_to_scratch(a, buf, offset, sig_stride, elem_stride, count);
		src = a->scratch;
		dst = buf;
	}
	for (int i = 0; i < p->npasses; i++) {
		const struct fft_prog *pr = &a->pass[inverse][i];
		GLuint nb = (GLuint)(p->m / p->pass[i].radix);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_DATA, src);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_DST, dst);
		glUseProgram(pr->id);
		glUniform1ui(pr->u_sig_stride, (GLuint)sig_stride);
		glUniform1ui(pr->u_elem_stride, (GLuint)elem_stride);
		for (int s0 = 0; s0 < count; s0 += FFT_MAX_Y) {
			int c = count - s0 < FFT_MAX_Y ? count - s0 : FFT_MAX_Y;
			glUniform1ui(pr->u_offset, (GLuint)(offset + (size_t)s0 * sig_stride));
			glUniform1ui(pr->u_count, (GLuint)c);
			if (a->adjacent)
				glDispatchCompute((GLuint)(c + 63) / 64, nb, 1);
			else
				glDispatchCompute((nb + 63) / 64, (GLuint)c, 1);
		}
		fft_storage_barrier();
		GLuint t = src;
		src = dst;
		dst = t;
	}
	return 0;
}

int fft_axis_execute(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                     size_t elem_stride, int count, int inverse)
{
	if (count <= 0)
		return 0;
	if (a->shape_only)
		return FFT_E_ARG;
	inverse = inverse ? 1 : 0;
	int rc = a->plan.bluestein
	       ? fft_bluestein_run(a, buf, offset, sig_stride, elem_stride, count, inverse)
	       : fft_axis_run_native(a, buf, offset, sig_stride, elem_stride, count, inverse);
	if (!rc && gl_check(&a->log, "fft execute"))
		rc = FFT_E_GL;
	return rc;
}

int fft_create(struct program_cache *pc, const struct egl_info *info, int width, int height,
               int axes, const struct fft_opts *o, const struct log_sink *log,
               struct fft **out, char err[FFT_ERR_LEN])
{
	*out = NULL;
	if (width < 1 || height < 1 || axes < FFT_ROWS || axes > FFT_BOTH) {
		snprintf(err, FFT_ERR_LEN, "bad FFT shape %dx%d or axes %d", width, height, axes);
		return FFT_E_ARG;
	}
	struct fft *f = calloc(1, sizeof *f);
	if (!f)
		return FFT_E_NOMEM;
	f->width = width;
	f->height = height;
	f->axes = axes;
	size_t cap = (size_t)width * height;
	int rc = 0;
	if (axes & FFT_ROWS)
		rc = fft_axis_create(pc, info, width, 0, cap, height, o, log, &f->rows, err);
	if (!rc && (axes & FFT_COLS))
		rc = fft_axis_create(pc, info, height, 1, cap, width, o, log, &f->cols, err);
	if (rc) {
		fft_destroy(f);
		return rc;
	}
	*out = f;
	return 0;
}

void fft_destroy(struct fft *f)
{
	if (!f)
		return;
	fft_axis_destroy(f->rows);
	fft_axis_destroy(f->cols);
	free(f);
}

int fft_execute(struct fft *f, unsigned buf, int inverse)
{
	int rc = 0;
	if (f->rows)
		rc = fft_axis_execute(f->rows, buf, 0, (size_t)f->width, 1, f->height, inverse);
	if (!rc && f->cols)
		rc = fft_axis_execute(f->cols, buf, 0, 1, (size_t)f->width, f->width, inverse);
	return rc;
}

struct fft_axis *fft_rows(struct fft *f)
{
	return f->rows;
}

struct fft_axis *fft_cols(struct fft *f)
{
	return f->cols;
}
