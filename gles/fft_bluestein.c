/* Bluestein's algorithm for FFT lengths with a prime factor above FFT_MAX_PRIME (gles/fft.h,
 * fft_axis_bluestein_form): the chirp and filter tables, and the three forms an axis runs in
 * (one dispatch, two, or five around an inner native axis), built and run for fft_axis.c. */
#include "gles/fft_internal.h"

#include <GLES3/gl31.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/fft_cpu.h"

static GLuint upload_f32(const double *v, size_t count, const struct log_sink *log)
{
	float *f = malloc((count ? count : 1) * sizeof *f);
	if (!f)
		return 0;
	for (size_t i = 0; i < count; i++)
		f[i] = (float)v[i];
	GLuint b = fft_axis_buffer(count * sizeof *f, f, log);
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

/* bluestein_io's uniforms */
enum { BLU_N, BLU_M, BLU_OFF, BLU_SS, BLU_ES, BLU_INV, BLU_SCALE };
static const char *const blu_names[FFT_BL_UNIFORMS] = {"u_bn", "u_bm", "u_boff", "u_bss",
                                                       "u_bes", "u_binv", "u_bscale"};

/* prog's locations of bluestein_io's uniforms into u (-1 for those it lacks). */
static void bl_locations(GLuint prog, int u[FFT_BL_UNIFORMS])
{
	for (int i = 0; i < FFT_BL_UNIFORMS; i++)
		u[i] = glGetUniformLocation(prog, blu_names[i]);
}

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
		bl_locations(fft_io_program(a->blio[inv].io), a->blio[inv].u);
	}
	return 1;
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
	bl_locations(a->blf.id, a->blf_u);
	return 1;
}

/* Bluestein's parts (fft_bluestein_build): the chirp and filter tables, and the one-dispatch
 * form where it runs; else the inner native transform of length m on float32 work rows (tuned
 * like any axis), the work buffer and the programs: the two-dispatch form's where it can run,
 * else the three outer steps'. */
int fft_bluestein_build(struct fft_axis *a, char err[FFT_ERR_LEN])
{
	int rc = fft_axis_check_capacity(a, err);
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
	a->work = fft_axis_buffer(work * welem, NULL, &a->log);
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

void fft_bluestein_free(struct fft_axis *a)
{
	fft_axis_destroy(a->inner);
	a->inner = NULL;
	for (int inv = 0; inv < 2; inv++) {
		for (int i = 0; i < 3; i++)
			fft_prog_drop(a->pc, &a->bl[inv][i]);
		fft_io_destroy(a->blio[inv].io);
		a->blio[inv].io = NULL;
	}
	fft_prog_drop(a->pc, &a->blf);
	GLuint bufs[] = {a->work, a->chirp, a->filter[0], a->filter[1]};
	glDeleteBuffers((GLsizei)(sizeof bufs / sizeof bufs[0]), bufs); /* 0 names are ignored */
	a->work = a->chirp = a->filter[0] = a->filter[1] = 0;
}

int fft_axis_bluestein_form(const struct fft_axis *a)
{
	return !a->plan.bluestein ? 0 : a->blf.id ? 1 : a->blio[0].io ? 2 : 5;
}

/* bluestein_io's uniforms (u: their locations in prog, -1 for those it lacks) for cy signals
 * at o2. */
static void bl_uniforms(const struct fft_axis *a, GLuint prog, const GLint u[FFT_BL_UNIFORMS],
                        size_t o2, size_t sig_stride, size_t elem_stride, int inverse)
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

/* One outer step of the five-dispatch form: the signals' buffer, the work rows and the chirp
 * bound, prog run over len elements of cy signals at o2, then a storage barrier. */
static void bl_step(struct fft_axis *a, struct fft_prog *prog, unsigned buf, size_t o2,
                    size_t sig_stride, size_t elem_stride, int len, int cy)
{
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_DATA, buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_WORK, a->work);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_CHIRP, a->chirp);
	fft_prog_use(prog, o2, sig_stride, elem_stride, cy);
	glDispatchCompute((GLuint)(len + 63) / 64, (GLuint)cy, 1);
	fft_storage_barrier();
}

int fft_bluestein_run(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                      size_t elem_stride, int count, int inverse)
{
	const struct fft_plan *p = &a->plan;
	for (int s0 = 0; s0 < count; s0 += a->max_count) {
		int c = count - s0 < a->max_count ? count - s0 : a->max_count;
		size_t off = offset + (size_t)s0 * sig_stride;
		/* work rows are indexed by the signal within one dispatch (at most FFT_MAX_Y) */
		int step = c < FFT_MAX_Y ? c : FFT_MAX_Y;
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
			/* 1: chirp the input into the zero-padded work rows; 2: forward, times the
			 * filter spectrum, inverse; 3: chirp again into place */
			bl_step(a, &a->bl[inverse][0], buf, o2, sig_stride, elem_stride, p->m, cy);
			fft_axis_run_native(a->inner, a->work, 0, (size_t)p->m, 1, cy, 0);
			glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_FILTER, a->filter[inverse]);
			bl_step(a, &a->bl[inverse][1], buf, 0, 0, 0, p->m, cy);
			fft_axis_run_native(a->inner, a->work, 0, (size_t)p->m, 1, cy, 1);
			bl_step(a, &a->bl[inverse][2], buf, o2, sig_stride, elem_stride, p->n, cy);
		}
	}
	return 0;
}
