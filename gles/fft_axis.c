/* FFT axes: the buffers and programs of one axis's plan (fft_plan), its execution (binds and
 * dispatches only), and the 2D transform made of a row and a column axis; see gles/fft.h. */
#include "gles/fft_internal.h"

#include <GLES3/gl31.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/fft_cpu.h"
#include "gles/gl_util.h"

struct fft_axis {
	struct program_cache *pc;                /* holds the axis's programs (program_hold) */
	struct fft_plan plan;
	struct fft_opts opts;
	int n, adjacent, max_count;
	size_t capacity;
	const struct egl_info *info;
	struct log_sink log;
	struct fft_prog shared[2];               /* [inverse] */
	struct fft_prog pass[2][FFT_MAX_PASSES]; /* global technique, [inverse][pass] */
	struct fft_prog sweep[2][FFT_MAX_PASSES];/* blocked technique, [inverse][sweep] */
	GLuint scratch;                          /* global and blocked techniques' ping-pong buffer */
	/* Bluestein */
	struct fft_prog blf;                     /* the one-dispatch form (bluestein_io, CONV) */
	struct fft_plan blf_plan;                /* its inner transform's shape */
	GLint blf_u[7];                          /* BLU_* */
	struct fft_axis *inner;                  /* native length-m transforms on the work rows */
	struct fft_prog bl[2][3];                /* [inverse][mode-1] (the five-dispatch form) */
	struct bl_io {                           /* the two-dispatch form: [inner inverse] */
		struct fft_io *io;
		GLint u[7];                          /* BLU_* */
	} blio[2];
	GLuint work, chirp, filter[2];
	int provisional;                         /* fft_axis_provisional */
};

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

/* A storage buffer of `bytes` bytes, optionally filled from data; 0 on failure. */
static GLuint make_buffer(size_t bytes, const void *data, const struct log_sink *log)
{
	GLenum e;
	GLuint b = gl_buf_new(bytes ? bytes : 16, data, GL_STATIC_DRAW, &e);
	if (!b)
		log_sinkf(log, LOG_ERROR, "fft buffer: %s", gl_error_name(e));
	return b;
}

static GLuint upload_f32(const double *v, size_t count, const struct log_sink *log)
{
	float *f = malloc((count ? count : 1) * sizeof *f);
	if (!f)
		return 0;
	for (size_t i = 0; i < count; i++)
		f[i] = (float)v[i];
	GLuint b = make_buffer(count * sizeof *f, f, log);
	free(f);
	return b;
}

/* Bluestein tables: chirp c_n = exp(-i*pi*n^2/N); filter spectra FFT_M(b) for both directions
 * with b_m = conj(c_m) (forward) or c_m (inverse) at m and M-m. */
static int make_bluestein_tables(struct fft_axis *a)
{
	int n = a->plan.n, m = a->plan.m;
	double *c = malloc((size_t)n * 2 * sizeof *c), *bb = calloc((size_t)m * 2, sizeof *bb),
	       *spec = malloc((size_t)m * 2 * sizeof *spec);
	int rc = FFT_E_NOMEM;
	if (!c || !bb || !spec)
		goto out;
	for (long long i = 0; i < n; i++) {
		long long e = i * i % (2LL * n);
		double ang = -M_PI * (double)e / n;
		c[2 * i] = cos(ang);
		c[2 * i + 1] = sin(ang);
	}
	a->chirp = upload_f32(c, (size_t)n * 2, &a->log);
	for (int dir = 0; dir < 2; dir++) {
		memset(bb, 0, (size_t)m * 2 * sizeof *bb);
		for (int i = 0; i < n; i++) {
			double re = c[2 * i], im = dir ? c[2 * i + 1] : -c[2 * i + 1];
			bb[2 * i] = re, bb[2 * i + 1] = im;
			if (i)
				bb[2 * (m - i)] = re, bb[2 * (m - i) + 1] = im;
		}
		if (fft_cpu(bb, 1, spec, m, -1))
			goto out;
		a->filter[dir] = upload_f32(spec, (size_t)m * 2, &a->log);
	}
	rc = a->chirp && a->filter[0] && a->filter[1] ? 0 : FFT_E_GL;
out:
	free(c), free(bb), free(spec);
	return rc;
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
			rc = fft_prog_shared(a->pc, p, &a->opts, inv, 0, 0,
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

/* bluestein_io's uniforms */
enum { BLU_N, BLU_M, BLU_OFF, BLU_SS, BLU_ES, BLU_INV, BLU_SCALE };
static const char *const blu_names[7] = {"u_bn", "u_bm", "u_boff", "u_bss", "u_bes", "u_binv",
                                         "u_bscale"};

/* The two-dispatch form (bluestein_io: the chirps and the filter as the inner transforms' loads
 * and stores) where the inner transform runs in shared memory and the signals are float32;
 * 1 when it is there, 0 when the five dispatches run instead. */
static int build_bluestein_io(struct fft_axis *a)
{
	if (a->opts.half)
		return 0;
	for (int inv = 0; inv < 2; inv++) {
		char ierr[FFT_ERR_LEN];
		if (fft_io_create(a->pc, a->inner, inv, FFT_IO_LOAD | FFT_IO_STORE, "bluestein_io", 1,
		                  &a->blio[inv].io, ierr)) {
			for (int j = 0; j < 2; j++) {
				fft_io_destroy(a->blio[j].io);
				a->blio[j].io = NULL;
			}
			return 0;
		}
		GLuint prog = fft_io_program(a->blio[inv].io);
		for (int u = 0; u < 7; u++)
			a->blio[inv].u[u] = glGetUniformLocation(prog, blu_names[u]);
	}
	return 1;
}

/* The axis's buffer within the storage-buffer limit: 0, or FFT_E_LIMIT. */
static int check_capacity(const struct fft_axis *a, char err[FFT_ERR_LEN])
{
	size_t elem = (size_t)a->opts.components * (a->opts.half ? 2 : 4);
	if (a->capacity * elem > (size_t)a->info->max_ssbo_size) {
		snprintf(err, FFT_ERR_LEN, "buffer of %zu bytes exceeds the storage-buffer limit of %lld",
		         a->capacity * elem, a->info->max_ssbo_size);
		return FFT_E_LIMIT;
	}
	return 0;
}

/* The one-dispatch form (bluestein_io as a fused convolution: the inner forward, the filter
 * multiply and the inner inverse in one program of the shared technique) where a float32 signal
 * of the inner length goes through shared memory whole (vec2) or at most in vec2 rounds (vec4):
 * its shape is the plan's own, on a GPU with fft_bluestein_fused_threads' invocations, unless
 * the axis was asked for one (fft_opts threads, signals, split: measuring options; vec2 in float
 * rounds, global passes and float16 storage leave it to the other forms). 1 when it is there,
 * 0 when another form runs, -1 when a compile budget refused its program (the axis is deferred
 * then, not built in a slower form). */
static int build_bluestein_fused(struct fft_axis *a)
{
	if (a->opts.half || (a->opts.components == 2 && a->opts.split) ||
	    a->opts.technique == FFT_TECH_GLOBAL)
		return 0;
	int t = a->opts.threads;
	if (!t && !a->info->software)
		t = fft_bluestein_fused_threads(a->plan.m, a->opts.signals, a->info->max_invocations,
		                                a->info->max_group_size[1]);
	struct fft_plan_opts po = {.technique = FFT_TECH_SHARED, .components = a->opts.components,
	                           .shared_limit = a->info->max_shared_memory,
	                           .max_invocations = a->info->max_invocations, .threads = t,
	                           .signals = a->opts.signals, .pad_from = a->opts.pad_from,
	                           .split = a->opts.split};
	char err[FFT_ERR_LEN];
	struct fft_plan *p = &a->blf_plan;
	if (fft_plan_make(a->plan.m, &po, p) || !p->shared)
		return 0;
	if (p->split > 1) { /* vec4 rows in four float rounds: the multiply needs vec2 rounds, */
		p->split = 1; /* which take twice the float rounds' shared memory: fewer signals a group
		               * where more were asked for */
		fft_plan_exchanges(p, &po);
		while ((long long)p->shared_bytes > a->info->max_shared_memory && p->signals > 1) {
			p->signals /= 2;
			fft_plan_exchanges(p, &po);
		}
		if ((long long)p->shared_bytes > a->info->max_shared_memory)
			return 0;
	}
	int refused = program_cache_refused(a->pc);
	if (fft_prog_bluestein_fused(a->pc, p, &a->opts, &a->blf, err)) {
		if (!refused && program_cache_refused(a->pc))
			return -1;
		log_sinkf(&a->log, LOG_WARN, "FFT length %d: Bluestein in one dispatch: %s; the "
		          "inner transform's form instead", a->n, err);
		return 0;
	}
	for (int u = 0; u < 7; u++)
		a->blf_u[u] = glGetUniformLocation(a->blf.id, blu_names[u]);
	return 1;
}

/* Bluestein's parts: the chirp and filter tables, and the one-dispatch form where it runs; else
 * the inner native transform of length m on float32 work rows (tuned like any axis), the work
 * buffer and the programs: the two-dispatch form's where it can run, else the three outer
 * steps'. */
static int build_bluestein(struct fft_axis *a, char err[FFT_ERR_LEN])
{
	int rc = check_capacity(a, err);
	if (rc)
		return rc;
	rc = make_bluestein_tables(a);
	if (rc) {
		snprintf(err, FFT_ERR_LEN, "length %d: Bluestein tables: %s", a->n, fft_strerror(rc));
		return rc;
	}
	int fused = build_bluestein_fused(a);
	if (fused > 0)
		return 0;
	if (fused < 0) {
		snprintf(err, FFT_ERR_LEN, "length %d: Bluestein's program deferred (compile budget)",
		         a->n);
		return FFT_E_PROGRAM;
	}
	size_t work = (size_t)a->max_count * a->plan.m, welem = (size_t)a->opts.components * 4;
	if (work * welem > (size_t)a->info->max_ssbo_size) {
		snprintf(err, FFT_ERR_LEN, "Bluestein work buffer of %zu bytes exceeds the "
		         "storage-buffer limit of %lld", work * welem, a->info->max_ssbo_size);
		return FFT_E_LIMIT;
	}
	/* the inner transform is native (m is 7-smooth) and runs on the float32 work rows */
	struct fft_opts io = a->opts;
	io.half = 0;
	io.norm_forward = 0;
	io.threads = 0;
	rc = fft_axis_create(a->pc, a->info, a->plan.m, 0, work, a->max_count, &io, &a->log,
	                     &a->inner, err);
	if (rc)
		return rc;
	a->work = make_buffer(work * welem, NULL, &a->log);
	if (!a->work) {
		snprintf(err, FFT_ERR_LEN, "length %d: Bluestein work buffer: %s", a->n,
		         fft_strerror(FFT_E_GL));
		return FFT_E_GL;
	}
	if (build_bluestein_io(a))
		return 0;
	for (int inv = 0; inv < 2; inv++)
		for (int mode = 1; mode <= 3; mode++)
			if ((rc = fft_prog_bluestein(a->pc, &a->plan, &a->opts, inv, mode,
			                             &a->bl[inv][mode - 1], err)))
				return rc;
	return 0;
}

/* A native plan's programs and, for the global and multi-sweep blocked techniques, the
 * ping-pong buffer. */
static int build_native(struct fft_axis *a, char err[FFT_ERR_LEN])
{
	size_t elem = (size_t)a->opts.components * (a->opts.half ? 2 : 4);
	int rc = check_capacity(a, err);
	if (rc)
		return rc;
	if (a->plan.npasses == 0) /* n == 1: the identity */
		return 0;
	rc = build_programs(a, err);
	if (rc)
		return rc;
	if (!a->plan.shared && !(a->plan.blocked && a->plan.nsweeps == 1)) {
		a->scratch = make_buffer(a->capacity * elem, NULL, &a->log);
		if (!a->scratch) {
			snprintf(err, FFT_ERR_LEN, "length %d: scratch buffer of %zu bytes: out of GPU memory",
			         a->n, a->capacity * elem);
			return FFT_E_GL;
		}
	}
	return 0;
}

int fft_axis_build(struct program_cache *pc, const struct egl_info *info, int n,
                   int signals_adjacent, size_t capacity, int max_count,
                   const struct fft_opts *o, const struct log_sink *log,
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
	if (rc) {
		snprintf(err, FFT_ERR_LEN, "length %d: %s", n, fft_plan_strerror(rc));
		rc = FFT_E_PLAN;
	} else {
		a->opts.wisdom = o->wisdom; /* Bluestein's inner transform is tuned as any */
		rc = a->plan.bluestein ? build_bluestein(a, err) : build_native(a, err);
		a->opts.wisdom = NULL;
	}
	if (rc) {
		fft_axis_destroy(a);
		return rc;
	}
	*out = a;
	return 0;
}

void fft_axis_destroy(struct fft_axis *a)
{
	if (!a)
		return;
	fft_axis_destroy(a->inner);
	for (int inv = 0; inv < 2; inv++) {
		fft_prog_drop(a->pc, &a->shared[inv]);
		for (int i = 0; i < FFT_MAX_PASSES; i++) {
			fft_prog_drop(a->pc, &a->pass[inv][i]);
			fft_prog_drop(a->pc, &a->sweep[inv][i]);
		}
		for (int i = 0; i < 3; i++)
			fft_prog_drop(a->pc, &a->bl[inv][i]);
		fft_io_destroy(a->blio[inv].io);
	}
	fft_prog_drop(a->pc, &a->blf);
	GLuint bufs[] = {a->scratch, a->work, a->chirp, a->filter[0], a->filter[1]};
	glDeleteBuffers((GLsizei)(sizeof bufs / sizeof bufs[0]), bufs); /* 0 names are ignored */
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
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
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

int fft_axis_provisional(const struct fft_axis *a)
{
	return a && (a->provisional || fft_axis_provisional(a->inner));
}

int fft_axis_bluestein_form(const struct fft_axis *a)
{
	return !a->plan.bluestein ? 0 : a->blf.id ? 1 : a->blio[0].io ? 2 : 5;
}

const struct fft_axis *fft_axis_inner(const struct fft_axis *a)
{
	return a->inner;
}

const struct fft_plan *fft_axis_run_plan(const struct fft_axis *a)
{
	return !a->plan.bluestein ? &a->plan : a->blf.id ? &a->blf_plan : &a->inner->plan;
}

static void barrier(void)
{
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
}

/* Signals per dispatch where the signal index runs over work-group y. */
#define MAX_Y 65535

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
		barrier();
		GLuint t = src;
		src = dst;
		dst = t;
	}
	return 0;
}

static int run_native(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
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
		for (int s0 = 0; s0 < count; s0 += MAX_Y) {
			int c = count - s0 < MAX_Y ? count - s0 : MAX_Y;
			glUniform1ui(pr->u_offset, (GLuint)(offset + (size_t)s0 * sig_stride));
			glUniform1ui(pr->u_count, (GLuint)c);
			if (a->adjacent)
				glDispatchCompute((GLuint)(c + 63) / 64, nb, 1);
			else
				glDispatchCompute((nb + 63) / 64, (GLuint)c, 1);
		}
		barrier();
		GLuint t = src;
		src = dst;
		dst = t;
	}
	return 0;
}

/* bluestein_io's uniforms (u: their locations in prog, -1 for those it lacks) for cy signals
 * at o2. */
static void bl_uniforms(const struct fft_axis *a, GLuint prog, const GLint u[7], size_t o2,
                        size_t sig_stride, size_t elem_stride, int inverse)
{
	glProgramUniform1ui(prog, u[BLU_N], (GLuint)a->plan.n);
	glProgramUniform1ui(prog, u[BLU_M], (GLuint)a->plan.m);
	glProgramUniform1ui(prog, u[BLU_OFF], (GLuint)o2);
	glProgramUniform1ui(prog, u[BLU_SS], (GLuint)sig_stride);
	glProgramUniform1ui(prog, u[BLU_ES], (GLuint)elem_stride);
	glProgramUniform1ui(prog, u[BLU_INV], (GLuint)inverse);
	glProgramUniform1f(prog, u[BLU_SCALE], (float)fft_end_scale(&a->opts, inverse, a->plan.n));
}

/* The two-dispatch form on cy signals at o2: the inner forward (chirped loads, filtered stores
 * into the work rows), then the inner inverse (chirped, scaled stores into the signals). */
static void run_bluestein_io(struct fft_axis *a, unsigned buf, size_t o2, size_t sig_stride,
                             size_t elem_stride, int cy, int inverse)
{
	const struct fft_plan *p = &a->plan;
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_BL_DATA, buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_WORK, a->work);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_CHIRP, a->chirp);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_FILTER, a->filter[inverse]);
	for (int inner = 0; inner < 2; inner++) {
		const struct bl_io *b = &a->blio[inner];
		bl_uniforms(a, fft_io_program(b->io), b->u, o2, sig_stride, elem_stride, inverse);
		fft_io_execute(b->io, a->work, 0, (size_t)p->m, cy); /* ends in a storage barrier */
	}
}

/* The one-dispatch form on cy signals at o2. */
static void run_bluestein_fused(struct fft_axis *a, unsigned buf, size_t o2, size_t sig_stride,
                                size_t elem_stride, int cy, int inverse)
{
	const struct fft_plan *p = &a->plan;
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_DATA, buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_BL_DATA, buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_CHIRP, a->chirp);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_KERNEL, a->filter[inverse]);
	fft_prog_use(&a->blf, 0, (size_t)p->m, 1, cy);
	bl_uniforms(a, a->blf.id, a->blf_u, o2, sig_stride, elem_stride, inverse);
	int sig = a->blf_plan.signals;
	fft_dispatch_groups((unsigned)((cy + sig - 1) / sig), a->info->max_group_count[0]);
}

static int run_bluestein(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                         size_t elem_stride, int count, int inverse)
{
	const struct fft_plan *p = &a->plan;
	for (int s0 = 0; s0 < count; s0 += a->max_count) {
		int c = count - s0 < a->max_count ? count - s0 : a->max_count;
		size_t off = offset + (size_t)s0 * sig_stride;
		/* work rows are indexed by the signal within one dispatch (at most MAX_Y) */
		int step = c < MAX_Y ? c : MAX_Y;
		for (int y0 = 0; y0 < c; y0 += step) {
			int cy = c - y0 < step ? c - y0 : step;
			size_t o2 = off + (size_t)y0 * sig_stride;
			if (a->blf.id) {
				run_bluestein_fused(a, buf, o2, sig_stride, elem_stride, cy, inverse);
				continue;
			}
			if (a->blio[0].io) {
				run_bluestein_io(a, buf, o2, sig_stride, elem_stride, cy, inverse);
				continue;
			}
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_DATA, buf);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_WORK, a->work);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_CHIRP, a->chirp);
			/* 1: chirp the input into the zero-padded work rows; 2: forward, times the
			 * filter spectrum, inverse; 3: chirp again into place */
			fft_prog_use(&a->bl[inverse][0], o2, sig_stride, elem_stride, cy);
			glDispatchCompute((GLuint)(p->m + 63) / 64, (GLuint)cy, 1);
			barrier();
			run_native(a->inner, a->work, 0, (size_t)p->m, 1, cy, 0);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_WORK, a->work);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_FILTER, a->filter[inverse]);
			fft_prog_use(&a->bl[inverse][1], 0, 0, 0, cy);
			glDispatchCompute((GLuint)(p->m + 63) / 64, (GLuint)cy, 1);
			barrier();
			run_native(a->inner, a->work, 0, (size_t)p->m, 1, cy, 1);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_DATA, buf);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_WORK, a->work);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_CHIRP, a->chirp);
			fft_prog_use(&a->bl[inverse][2], o2, sig_stride, elem_stride, cy);
			glDispatchCompute((GLuint)(p->n + 63) / 64, (GLuint)cy, 1);
			barrier();
		}
	}
	return 0;
}

int fft_axis_execute(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                     size_t elem_stride, int count, int inverse)
{
	if (count <= 0)
		return 0;
	inverse = inverse ? 1 : 0;
	int rc = a->plan.bluestein
	       ? run_bluestein(a, buf, offset, sig_stride, elem_stride, count, inverse)
	       : run_native(a, buf, offset, sig_stride, elem_stride, count, inverse);
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
