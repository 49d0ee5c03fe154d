/* An axis's shared-memory transform with the caller's loads or stores (gles/fft.h, fft_io_*). */
#include "gles/fft_internal.h"

#include <GLES3/gl31.h>
#include <stdio.h>
#include <stdlib.h>

struct fft_io {
	struct program_cache *pc;
	struct fft_plan plan;
	struct fft_prog prog;
	int max_group_x, tile_log;
};

int fft_io_flags_valid(int flags, int allowed)
{
	return !(flags & ~(allowed | FFT_IO_TILES(7))) && FFT_IO_TILE_LOG(flags) <= FFT_TILE_LOG_MAX;
}

int fft_io_create(struct program_cache *pc, const struct fft_axis *a, int inverse, int io,
                  const char *sources, int io_id, struct fft_io **out, char err[FFT_ERR_LEN])
{
	*out = NULL;
	const struct fft_plan *p = fft_axis_plan(a);
	int hooks = io & (FFT_IO_LOAD | FFT_IO_STORE), tile_log = FFT_IO_TILE_LOG(io);
	if (!p->shared || p->bluestein || p->npasses == 0 || fft_axis_adjacent(a) || !hooks ||
	    !fft_io_flags_valid(io, FFT_IO_LOAD | FFT_IO_STORE | FFT_IO_PAIRS) ||
	    ((io & (FFT_IO_PAIRS | FFT_IO_TILES(7))) && hooks == (FFT_IO_LOAD | FFT_IO_STORE)) ||
	    !sources || !sources[0]) {
		snprintf(err, FFT_ERR_LEN, "FFT io: needs an axis of rows of a native length, of the "
		         "shared technique, and hooks (the pair order or tiles with one of them)");
		return FFT_E_PLAN;
	}
	struct fft_io *f = calloc(1, sizeof *f);
	if (!f)
		return FFT_E_NOMEM;
	f->pc = pc;
	f->plan = *p;
	f->max_group_x = fft_axis_max_group_x(a);
	f->tile_log = tile_log;
	int rc = fft_prog_shared_io(pc, &f->plan, fft_axis_options(a), inverse, io, sources, io_id,
	                            &f->prog, err);
	if (rc) {
		free(f);
		return rc;
	}
	*out = f;
	return 0;
}

void fft_io_destroy(struct fft_io *f)
{
	if (!f)
		return;
	fft_prog_drop(f->pc, &f->prog);
	free(f);
}

unsigned fft_io_program(const struct fft_io *f)
{
	return f->prog.id;
}

int fft_io_execute(struct fft_io *f, unsigned buf, size_t offset, size_t sig_stride, int count)
{
	if (count < 1)
		return 0;
	if (f->tile_log && sig_stride < (size_t)count << f->tile_log)
		return FFT_E_ARG;
	fft_prog_use(&f->prog, offset, sig_stride, 1, count);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, FFT_B_DATA, buf);
	fft_dispatch_groups((unsigned)((count + f->plan.signals - 1) / f->plan.signals),
	                    f->max_group_x);
	return gl_check(NULL, "fft_io") ? FFT_E_GL : 0;
}
