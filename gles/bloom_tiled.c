/* A frame in overlap-save tiles (bloom.h): the grid chosen by cost, each tile's input cut from
 * the float frame and run at one padded size (bloom_frame_once), its own rectangle pasted into
 * the result, its non-finite samples counted as the GPU counts a whole frame's. */
#include "gles/bloom_internal.h"
#include "gles/tile.h"
#include "core/parallel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int bloom_fits(const struct bloom_fit *f, int pw, int ph)
{
	return (size_t)pw * ph * 16 <= (size_t)f->b->info->max_ssbo_size &&
	       (!f->budget || bloom_plan_bytes(pw, ph, f->half) <= f->budget);
}

/* A tile's cost: its transform's n log n, and a fixed part for its dispatches and copies (about
 * a 256 x 256 transform's). */
static double tile_cost(void *ctx, int tw, int th)
{
	const struct bloom_fit *f = ctx;
	int pw, ph;
	bloom_tile_padded(f, tw, th, f->ki->kw, f->ki->kh, f->ki->cx, f->ki->cy, &pw, &ph);
	if (pw < 1 || ph < 1 || !bloom_fits(f, pw, ph))
		return -1;
	double n = (double)pw * ph;
	return n * log2(n) + 65536.0 * 16;
}

/* Result samples in r (tile rect o, at (ox, oy) of r) that are not finite where the input
 * pixel's samples all are: what the composite counts on the GPU for a whole frame. */
struct nonfinite {
	const struct image *r, *in;
	const struct tile_rect *o;
	int ox, oy;
	_Atomic unsigned long long n;
};

static void nonfinite_rows(void *ctx, size_t y0, size_t y1)
{
	struct nonfinite *c = ctx;
	const struct image *r = c->r, *in = c->in;
	const struct tile_rect *o = c->o;
	unsigned long long n = 0;
	for (size_t y = y0; y < y1; y++)
		for (int x = 0; x < o->w; x++) {
			const float *s = r->pixels + ((c->oy + y) * r->width + c->ox + x) * r->channels;
			const float *i = in->pixels + ((o->y + y) * in->width + o->x + x) * in->channels;
			int bad = 0, in_ok = 1;
			for (int k = 0; k < r->channels; k++)
				bad += !isfinite(s[k]);
			for (int k = 0; k < in->channels; k++)
				in_ok &= isfinite(i[k]) != 0;
			n += in_ok ? (unsigned long long)bad : 0;
		}
	c->n += n;
}

static unsigned long long count_nonfinite(const struct image *r, int ox, int oy,
                                          const struct image *in, const struct tile_rect *o)
{
	struct nonfinite c = {r, in, o, ox, oy, 0};
	size_t w = o->w > 0 ? (size_t)o->w : 1;
	par_for((size_t)o->h, (BLOOM_PAR_PIXELS + w - 1) / w, nonfinite_rows, &c);
	return c.n;
}

static void add_stats(struct bloom_stats *sum, const struct bloom_stats *t)
{
	for (int s = 0; s < GPU_STAGE_COUNT; s++)
		sum->stage_ms[s] += t->stage_ms[s];
	sum->gpu_ms += t->gpu_ms;
	sum->prepare_ms += t->prepare_ms, sum->readback_ms += t->readback_ms;
	sum->copy_ms += t->copy_ms, sum->wait_ms += t->wait_ms;
	sum->setup_ms += t->setup_ms;
	sum->padded_w = t->padded_w, sum->padded_h = t->padded_h;
	sum->gray_kernel = t->gray_kernel, sum->fused = t->fused, sum->timed = t->timed;
	sum->ends_in_rows = t->ends_in_rows;
	sum->column_pairs = t->column_pairs;
	sum->column_multiply = t->column_multiply;
	sum->row_pitch = t->row_pitch;
	sum->tile_columns = t->tile_columns;
	sum->row_threads = t->row_threads;
}

/* The frame in overlap-save tiles whose plan fits `budget` (0: the buffer limit only), or in
 * those of a borrowed plan (bw, else NULL): each tile's input cut from the float frame (planes
 * converted on the CPU first), run at one padded size, its own rectangle kept. The result is a
 * float image even when planes were asked. *plan_bytes: the tiles' plan size (for a retry in
 * smaller ones). */
int bloom_run_tiled(struct bloom_ctx *b, int op, const struct bloom_frame *fin, int w, int h,
                    struct kinfo *ki, const struct bloom_params *p, size_t budget,
                    const struct borrow *bw, unsigned flags, struct bloom_result *res,
                    struct bloom_stats *st, size_t *plan_bytes, char err[BLOOM_ERR_LEN])
{
	struct image conv = {0}, out = {0};
	const struct image *img = fin->img;
	char ierr[IMAGE_ERR_LEN];
	if (!img && fin->yuv->scan) {
		snprintf(err, BLOOM_ERR_LEN, "a JPEG scan in tiles: libjpeg decodes it");
		return BLOOM_E_ENTROPY;
	}
	if (img && fin->upload) { /* pixels decoded into a lent buffer: read back by the GPU */
		int lrc = bloom_upload_read_pixels(b, fin, &conv, err);
		if (lrc)
			return lrc;
		if (conv.pixels) {
			b->st.uploads_lent++;
			img = &conv;
		}
	} else if (!img) {
		struct yuv_image lent;
		int lrc = bloom_upload_read(b, fin, &lent, err);
		if (lrc)
			return lrc;
		if (lent.data)
			b->st.uploads_lent++; /* decoded into a lent buffer, read back by the GPU */
		int irc = image_from_yuv(lent.data ? &lent : fin->yuv, &conv, ierr);
		yuv_image_free(&lent);
		if (irc) {
			snprintf(err, BLOOM_ERR_LEN, "tiles: converting the planes: %s", ierr);
			return irc == IMAGE_E_NOMEM ? BLOOM_E_NOMEM : BLOOM_E_ARG;
		}
		img = &conv;
	}
	struct bloom_fit f = {b, ki, p->precision == BLOOM_FP16, budget, w, h};
	struct tile_grid g;
	if (bw) {
		g = bw->g;
	} else if (tile_grid_choose(w, h, ki->kw, ki->kh, ki->cx, ki->cy, 0, tile_cost, &f, &g)) {
		int tw = w < TILE_MIN_SIDE ? w : TILE_MIN_SIDE, th = h < TILE_MIN_SIDE ? h : TILE_MIN_SIDE;
		/* the fewest samples such tiles transform at */
		int kw = fft_smallest_size(fft_tile_span(w, tw, ki->kw, ki->cx));
		int kh = fft_smallest_size(fft_tile_span(h, th, ki->kh, ki->cy));
		size_t need = bloom_plan_bytes(kw, kh, f.half);
		if ((size_t)kw * kh * 16 > (size_t)b->info->max_ssbo_size)
			snprintf(err, BLOOM_ERR_LEN, "the %dx%d kernel needs a %dx%d transform even for "
			         "%dx%d tiles, whose buffer exceeds this GPU's storage-buffer limit (%lld "
			         "MiB); use a smaller kernel or kernel_scale", ki->kw, ki->kh, kw, kh, tw, th,
			         b->info->max_ssbo_size >> 20);
		else
			snprintf(err, BLOOM_ERR_LEN, "the %dx%d kernel needs %.1f MiB of GPU memory even "
			         "for %dx%d tiles (a %dx%d transform), more than a frame may take (%.1f "
			         "MiB); use a smaller kernel or kernel_scale", ki->kw, ki->kh,
			         need / 1048576.0, tw, th, kw, kh, budget / 1048576.0);
		image_free(&conv);
		return BLOOM_E_TOO_LARGE;
	}
	int pw = bw ? bw->pw : 0, ph = bw ? bw->ph : 0;
	if (!bw)
		bloom_tile_padded(&f, g.tw, g.th, ki->kw, ki->kh, ki->cx, ki->cy, &pw, &ph);
	*plan_bytes = bloom_plan_bytes(pw, ph, f.half);
	int n = tile_count(&g), rc = 0;
	log_sinkf(&b->log, LOG_DEBUG, "bloom: %dx%d in %dx%d tiles of %dx%d (padded %dx%d)",
	          w, h, g.nx, g.ny, g.tw, g.th, pw, ph);
	struct image sub = {0}; /* every tile's input, in one buffer */
	size_t sub_cap = 0;
	for (int i = 0; !rc && i < n; i++) {
		struct tile_rect o, in;
		tile_rects(&g, i, &o, &in);
		if (gles_cancelled(b->cancel)) {
			snprintf(err, BLOOM_ERR_LEN, "tiles: cancelled after %d of %d tiles", i, n);
			rc = BLOOM_E_CANCELLED;
			break;
		}
		if (tile_crop(img, &in, &sub, &sub_cap)) {
			rc = BLOOM_E_NOMEM;
			break;
		}
		struct bloom_frame sf = {&sub, NULL, NULL, 0};
		struct bloom_result r;
		memset(&r, 0, sizeof r);
		struct bloom_stats ts;
		memset(&ts, 0, sizeof ts);
		rc = bloom_frame_once(b, op, &sf, in.w, in.h, img->channels, ki, p, pw, ph, !bw,
		                      flags & ~BLOOM_DEFER, &r, &ts, err);
		if (!rc && !out.pixels && image_alloc(&out, w, h, r.channels))
			rc = BLOOM_E_NOMEM;
		if (!rc) {
			tile_paste(&out, o.x, o.y, &r.img, o.x - in.x, o.y - in.y, o.w, o.h);
			res->nonfinite += count_nonfinite(&r.img, o.x - in.x, o.y - in.y, img, &o);
			res->channels = r.channels;
			add_stats(st, &ts);
			if (!i)
				st->kernel_cached = ts.kernel_cached;
		}
		image_free(&r.img);
		if (!rc && b->opts.progress)
			b->opts.progress(b->opts.progress_arg, i + 1, n);
	}
	image_free(&sub);
	if (rc == BLOOM_E_NOMEM && !err[0])
		snprintf(err, BLOOM_ERR_LEN, "tiles: out of memory");
	if (!rc) {
		res->img = out;
		st->tiles_x = g.nx, st->tiles_y = g.ny;
	} else {
		image_free(&out);
	}
	image_free(&conv);
	return rc;
}
