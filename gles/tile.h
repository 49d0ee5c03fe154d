/* Overlap-save tiles for an image operation that is a linear convolution with zero outside the
 * image, output at the image's size (the FFT bloom and convolve, the direct convolution): the
 * output is cut into tiles of at most tw x th pixels, and each tile is computed from the input
 * rectangle its taps reach, clipped to the image. With the kernel's centre (cx, cy) an output
 * pixel x reads inputs x - (kw - 1 - cx) .. x + cx, so a tile's input reaches kw - 1 - cx left,
 * cx right, kh - 1 - cy above and cy below it; what lies outside the image is outside the tile's
 * input too, so the operation treats it as the untiled run does.
 *
 * For an FFT of circular length n, a tile's outputs are exact when n >= tw + kw - 1 (and
 * th + kh - 1): the wrapped taps of the clipped border tiles then land in the zero padding; a
 * tile that is a whole side needs only the side's span (core/fft_size.h, fft_tile_span). One
 * length serves every tile of a grid, so one plan and one kernel spectrum serve them all.
 *
 * Pure C, no GL: the geometry, and the copies between an image and a tile. */
#ifndef FFTBLOOM_TILE_H
#define FFTBLOOM_TILE_H

#include "codec/image.h"

struct tile_rect {
	int x, y, w, h;
};

struct tile_grid {
	int w, h;             /* the image */
	int tw, th;           /* output tile size (the last column and row may be smaller) */
	int nx, ny;           /* tiles per row and column */
	int left, top;        /* halo: kw - 1 - cx, kh - 1 - cy */
	int right, bottom;    /* halo: cx, cy */
};

/* The cost of one tile of tw x th output pixels, in any unit shared by all sizes, or a negative
 * value when a tile that size cannot run (its buffers exceed a limit or a budget). */
typedef double (*tile_cost_fn)(void *ctx, int tw, int th);

/* Tiles own at least TILE_MIN_SIDE output pixels a side (or the whole side, where the image is
 * smaller): a kernel that only fits with smaller tiles would run as thousands of transforms. */
#define TILE_MIN_SIDE 32

/* The grid of w x h with a kw x kh kernel centred at (cx, cy) whose total cost (tiles x cost) is
 * least, among grids whose tiles are at most max_side a side (0: no bound) and at least
 * TILE_MIN_SIDE. The untiled grid (one tile) is taken whenever it runs. 0, or -1 when no tile
 * size runs. */
int tile_grid_choose(int w, int h, int kw, int kh, int cx, int cy, int max_side,
                     tile_cost_fn cost, void *ctx, struct tile_grid *g);

static inline int tile_count(const struct tile_grid *g)
{
	return g->nx * g->ny;
}

/* Tile i (row-major): the output rectangle it owns, and the input rectangle it reads (out
 * grown by the halo, clipped to the image). */
void tile_rects(const struct tile_grid *g, int i, struct tile_rect *out, struct tile_rect *in);

/* A copy of r of img (r inside img) into *out, sized r. *cap: the floats out's buffer holds
 * (0 with out zeroed, at the first tile); where they suffice the buffer is reused, else it is
 * allocated anew and *cap updated: a tiled frame crops every tile into one buffer, as a fresh
 * allocation a tile costs its pages' faults (a 61 MB crop took 2.7x as long into new memory as
 * into reused, on the development VM). The caller frees out with image_free. 0 or a negative
 * image_error (out then freed, *cap 0). */
int tile_crop(const struct image *img, const struct tile_rect *r, struct image *out, size_t *cap);

/* Bytes a thread copies at least (core/parallel.h): a tile's rows go to several threads
 * only where each moves this much, so that a thread's start is a small part of its piece. */
#define TILE_PAR_BYTES (4u << 20)

/* Copies the w x h rectangle at (sx, sy) of src to (dx, dy) of dst (same channels), in pieces of
 * rows on several threads where it is large (TILE_PAR_BYTES). */
void tile_paste(struct image *dst, int dx, int dy, const struct image *src, int sx, int sy, int w,
                int h);

#endif
