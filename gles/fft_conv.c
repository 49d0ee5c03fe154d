/* The fused convolution: forward transform, spectrum multiply and inverse in one dispatch of
 * the shared technique, two signals (rows or columns) a work group (gles/fft.h, fft_conv_*). */
#include "gles/fft_internal.h"

#include <GLES3/gl31.h>
#include <stdio.h>
#include <stdlib.h>

#define FFT_CONV_WIDE 2048 /* longer signals get 512 invocations (the rule gives 256) */

struct fft_conv {
	struct program_cache *pc;
	struct fft_plan plan;   /* two signals a group */
	struct fft_prog prog;
	int count, gray, pairs, tile_log;
	const struct egl_info *info;
};

int fft_conv_create(struct program_cache *pc, const struct egl_info *info, int n, int count,
                    int gray, int layout, const struct fft_opts *o, struct fft_conv **out,
                    char err[FFT_ERR_LEN])
{
	*out = NULL;
	int pairs = (layout & FFT_IO_PAIRS) != 0, tile_log = FFT_IO_TILE_LOG(layout);
	if (!fft_io_flags_valid(layout, FFT_IO_PAIRS)) {
		snprintf(err, FFT_ERR_LEN, "fused convolution: the layout takes FFT_IO_PAIRS and "
		         "FFT_IO_TILES(1 to %d) only", FFT_TILE_LOG_MAX);
		return FFT_E_ARG;
	}
	if (o->components != 4 || n < 2 || count < 1 || !fft_is_native(n)) {
		snprintf(err, FFT_ERR_LEN, "fused convolution: needs vec4 rows of a native length >= 2");
		return FFT_E_ARG;
	}
	if (pairs && gray) { /* its groups take neighbours, which the natural order has */
		snprintf(err, FFT_ERR_LEN, "fused convolution: the pair order is for colour kernels");
		return FFT_E_ARG;
	}
	struct fft_conv *c = calloc(1, sizeof *c);
	if (!c)
		return FFT_E_NOMEM;
	c->pc = pc;
	c->count = count;
	c->gray = gray;
	c->pairs = pairs;
	c->tile_log = tile_log;
	c->info = info;
	/* The shape, measured on the H200 (bench/RESULTS.md, "The fused columns in place, their
	 * shape"): two vec2 exchange rounds (half the shared memory a group) beat whole vec4 from
	 * 1176 up (FFT_ROUNDS_ABOVE), and 512 invocations a signal beat 256 past 2048 */
	int threads = o->threads ? o->threads : n > FFT_CONV_WIDE ? 512 : 0;
	if (2 * threads > info->max_invocations)
		threads = 0;
	struct fft_plan_opts po = {.technique = FFT_TECH_SHARED, .components = 4,
	                           .shared_limit = info->max_shared_memory,
	                           .max_invocations = info->max_invocations, .threads = threads,
	                           .half = o->half, .pad_from = o->pad_from};
	int rc = fft_plan_make(n, &po, &c->plan);
	struct fft_plan *p = &c->plan;
	/* two signals a group: vec2 rounds past FFT_ROUNDS_ABOVE or where whole vec4 do not
	 * fit */
	long long limit = info->max_shared_memory;
	p->split = 2LL * n * 16 > limit || n > FFT_ROUNDS_ABOVE || o->split;
	if (rc || (p->split && 2LL * n * 8 > limit) || 2 * p->threads > info->max_invocations) {
		snprintf(err, FFT_ERR_LEN, "fused convolution: two rows of %d do not fit shared memory", n);
		free(c);
		return FFT_E_PLAN;
	}
	p->signals = 2;
	fft_plan_exchanges(p, &po); /* the padding for two signals a group */
	rc = fft_prog_shared(pc, p, o, 0, c->pairs ? 2 : 1, gray, info->subgroup_pairs, tile_log,
	                     1.0 / n, &c->prog, err);
	if (rc) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void fft_conv_destroy(struct fft_conv *c)
{
	if (!c)
		return;
	fft_prog_drop(c->pc, &c->prog);
	free(c);
}

const struct fft_plan *fft_conv_plan(const struct fft_conv *c)
{
	return &c->plan;
}

int fft_conv_execute(struct fft_conv *c, unsigned buf, unsigned kernel, int columns, int valid,
                     int pitch)
{
	size_t n = (size_t)c->plan.m, count = (size_t)c->count;
	if (valid < 0 || (size_t)valid > n)
		valid = (int)n;
	if (((c->pairs || c->tile_log) && !columns) || pitch < 0 ||
	    (c->tile_log ? (size_t)pitch < n << c->tile_log : pitch && (size_t)pitch < count))
		return FFT_E_ARG;
	if (c->tile_log) /* tile_at: tiles pitch apart */
		fft_prog_use(&c->prog, 0, (size_t)pitch, 1, c->count);
	else if (columns)
		fft_prog_use(&c->prog, 0, 1, pitch ? (size_t)pitch : count, c->count);
	else
		fft_prog_use(&c->prog, 0, n, 1, c->count);
	glUniform1ui(c->prog.u_valid, (GLuint)valid);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_DATA, buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_KERNEL, kernel);
	/* pairs k, count - k for k = 0..count/2; gray: neighbours */
	fft_dispatch_groups((unsigned)(c->gray ? (c->count + 1) / 2 : c->count / 2 + 1),
	                    c->info->max_group_count[0]);
	return gl_check(NULL, "fft_conv") ? FFT_E_GL : 0;
}
