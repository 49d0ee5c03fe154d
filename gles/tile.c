/* Overlap-save tile geometry and copies; see tile.h. */
#include "gles/tile.h"

#include <string.h>

#include "core/parallel.h"

/* The tile sizes tried along an axis of n: n / k rounded up for every k to 64, then k growing
 * by an eighth, each size once (the sizes fall as k grows), none below TILE_MIN_SIDE (or n). */
static int candidates(int n, int max_side, int *out, int cap)
{
	int count = 0, last = 0, least = n < TILE_MIN_SIDE ? n : TILE_MIN_SIDE;
	for (long k = 1; k <= n && count < cap; k = k < 64 ? k + 1 : k + k / 8) {
		int t = (int)((n + k - 1) / k);
		if (t < least)
			break;
		if (max_side > 0 && t > max_side)
			continue;
		if (t != last)
			out[count++] = last = t;
	}
	if (count < cap && last != least && (max_side <= 0 || least <= max_side))
		out[count++] = least;
	return count;
}

int tile_grid_choose(int w, int h, int kw, int kh, int cx, int cy, int max_side,
                     tile_cost_fn cost, void *ctx, struct tile_grid *g)
{
	memset(g, 0, sizeof *g);
	g->w = w, g->h = h;
	g->left = kw - 1 - cx, g->top = kh - 1 - cy, g->right = cx, g->bottom = cy;
	if (w < 1 || h < 1)
		return -1;
	enum { CAP = 160 };
	int xs[CAP], ys[CAP];
	int nxs = candidates(w, max_side, xs, CAP), nys = candidates(h, max_side, ys, CAP);
	double best = -1;
	for (int i = 0; i < nxs; i++)
		for (int j = 0; j < nys; j++) {
			double c = cost(ctx, xs[i], ys[j]);
			if (c < 0)
				continue;
			int nx = (w + xs[i] - 1) / xs[i], ny = (h + ys[j] - 1) / ys[j];
			double total = c * nx * ny;
			if (best < 0 || total < best || (i == 0 && j == 0)) {
				best = total;
				g->tw = xs[i], g->th = ys[j], g->nx = nx, g->ny = ny;
			}
			if (i == 0 && j == 0)
				return 0; /* untiled (or the largest tiles max_side allows) runs */
		}
	return best < 0 ? -1 : 0;
}

void tile_rects(const struct tile_grid *g, int i, struct tile_rect *out, struct tile_rect *in)
{
	int tx = i % g->nx, ty = i / g->nx;
	out->x = tx * g->tw, out->y = ty * g->th;
	out->w = g->w - out->x < g->tw ? g->w - out->x : g->tw;
	out->h = g->h - out->y < g->th ? g->h - out->y : g->th;
	int x0 = out->x - g->left, y0 = out->y - g->top;
	int x1 = out->x + out->w + g->right, y1 = out->y + out->h + g->bottom;
	x0 = x0 < 0 ? 0 : x0, y0 = y0 < 0 ? 0 : y0;
	x1 = x1 > g->w ? g->w : x1, y1 = y1 > g->h ? g->h : y1;
	in->x = x0, in->y = y0, in->w = x1 - x0, in->h = y1 - y0;
}

int tile_crop(const struct image *img, const struct tile_rect *r, struct image *out, size_t *cap)
{
	size_t need = (size_t)r->w * r->h * img->channels;
	if (!out->pixels || *cap < need) {
		image_free(out);
		*cap = 0;
		int rc = image_alloc(out, r->w, r->h, img->channels);
		if (rc)
			return rc;
		*cap = need;
	}
	out->width = r->w, out->height = r->h, out->channels = img->channels;
	tile_paste(out, 0, 0, img, r->x, r->y, r->w, r->h);
	return 0;
}

struct paste {
	struct image *dst;
	const struct image *src;
	int dx, dy, sx, sy, w;
};

static void paste_rows(void *ctx, size_t y0, size_t y1)
{
	const struct paste *p = ctx;
	size_t ch = (size_t)p->src->channels, row = (size_t)p->w * ch * sizeof(float);
	for (size_t y = y0; y < y1; y++)
		memcpy(p->dst->pixels + (((size_t)p->dy + y) * p->dst->width + p->dx) * ch,
		       p->src->pixels + (((size_t)p->sy + y) * p->src->width + p->sx) * ch, row);
}

void tile_paste(struct image *dst, int dx, int dy, const struct image *src, int sx, int sy, int w,
                int h)
{
	struct paste p = {dst, src, dx, dy, sx, sy, w};
	size_t row = (size_t)w * src->channels * sizeof(float);
	par_for((size_t)h, row ? (TILE_PAR_BYTES + row - 1) / row : 1, paste_rows, &p);
}
