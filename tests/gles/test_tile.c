/* Overlap-save tile geometry (gles/tile.h), no GL: for random image and kernel sizes, centres
 * and tile bounds, the grid chosen has tiles within the bound, its output rectangles cover the
 * image exactly once, each input rectangle is its output grown by the kernel's reach (left
 * kw - 1 - cx, right cx, top kh - 1 - cy, bottom cy) and clipped to the image, and an image
 * that fits is one tile; crop and paste copy the rectangles they name, crops into one buffer
 * reusing it where it holds them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "gles/tile.h"
#include "tests/testutil.h"

struct bound {
	int kw, kh;
	long max_px; /* a tile's input, halo included, at most this many pixels */
	int calls;
};

static double cost(void *ctx, int tw, int th)
{
	struct bound *b = ctx;
	b->calls++;
	long px = (long)(tw + b->kw - 1) * (th + b->kh - 1);
	return px <= b->max_px ? (double)px + 1000 : -1;
}

static int rnd(int lo, int hi)
{
	return lo + (int)(tu_uniform() * (hi - lo + 1));
}

static void test_grid(void **state)
{
	(void)state;
	for (int c = 0; c < 400; c++) {
		int w = rnd(1, c < 200 ? 300 : 5000), h = rnd(1, c < 200 ? 300 : 5000);
		int kw = rnd(1, 40), kh = rnd(1, 40), cx = rnd(0, kw - 1), cy = rnd(0, kh - 1);
		int lw = w < TILE_MIN_SIDE ? w : TILE_MIN_SIDE, lh = h < TILE_MIN_SIDE ? h : TILE_MIN_SIDE;
		long least = (long)(lw + kw - 1) * (lh + kh - 1);
		struct bound b = {kw, kh, least + rnd(0, kw * kh * 64 + 40000), 0};
		struct tile_grid g;
		assert_int_equal(tile_grid_choose(w, h, kw, kh, cx, cy, 0, cost, &b, &g), 0);
		assert_true(b.calls < 160 * 160 + 1);
		assert_true((long)(g.tw + kw - 1) * (g.th + kh - 1) <= b.max_px);
		assert_true(g.tw >= (w < TILE_MIN_SIDE ? w : TILE_MIN_SIDE));
		assert_true(g.th >= (h < TILE_MIN_SIDE ? h : TILE_MIN_SIDE));
		assert_int_equal(g.nx, (w + g.tw - 1) / g.tw);
		assert_int_equal(g.ny, (h + g.th - 1) / g.th);
		if ((long)(w + kw - 1) * (h + kh - 1) <= b.max_px)
			assert_int_equal(tile_count(&g), 1);
		unsigned char *own = calloc((size_t)w * h, 1);
		for (int i = 0; i < tile_count(&g); i++) {
			struct tile_rect o, in;
			tile_rects(&g, i, &o, &in);
			assert_true(o.w >= 1 && o.h >= 1 && o.w <= g.tw && o.h <= g.th);
			for (int y = o.y; y < o.y + o.h; y++)
				for (int x = o.x; x < o.x + o.w; x++)
					own[(size_t)y * w + x]++;
			int x0 = o.x - (kw - 1 - cx), y0 = o.y - (kh - 1 - cy);
			int x1 = o.x + o.w + cx, y1 = o.y + o.h + cy;
			assert_int_equal(in.x, x0 < 0 ? 0 : x0);
			assert_int_equal(in.y, y0 < 0 ? 0 : y0);
			assert_int_equal(in.x + in.w, x1 > w ? w : x1);
			assert_int_equal(in.y + in.h, y1 > h ? h : y1);
		}
		for (size_t i = 0; i < (size_t)w * h; i++)
			if (own[i] != 1)
				fail_msg("%dx%d k %dx%d c %d,%d: pixel %zu owned by %d tiles", w, h, kw, kh, cx,
				         cy, i, own[i]);
		free(own);
	}
	/* nothing fits: refused */
	struct bound none = {5, 5, 30, 0};
	struct tile_grid g;
	assert_int_equal(tile_grid_choose(10, 10, 5, 5, 2, 2, 0, cost, &none, &g), -1);
	/* max_side bounds the tiles even where the whole image fits */
	struct bound all = {3, 3, 1L << 40, 0};
	assert_int_equal(tile_grid_choose(100, 70, 3, 3, 1, 1, 40, cost, &all, &g), 0);
	assert_true(g.tw <= 40 && g.th <= 40 && tile_count(&g) >= 6);
}

static void test_crop_paste(void **state)
{
	(void)state;
	struct image a, b, c;
	assert_int_equal(image_alloc(&a, 13, 7, 3), 0);
	assert_int_equal(image_alloc(&c, 13, 7, 3), 0);
	tu_fill_f32(a.pixels, 13 * 7 * 3, -1, 1);
	/* into one buffer: a smaller crop reuses it, a larger one reallocates */
	struct tile_rect big = {0, 0, 13, 7}, small = {3, 1, 2, 2}, r = {4, 2, 6, 5};
	size_t cap = 0;
	b = (struct image){0};
	assert_int_equal(tile_crop(&a, &small, &b, &cap), 0);
	assert_true(cap == 2 * 2 * 3 && b.width == 2 && b.height == 2 && b.channels == 3);
	assert_true(b.pixels[0] == a.pixels[(1 * 13 + 3) * 3]);
	assert_int_equal(tile_crop(&a, &big, &b, &cap), 0);
	assert_true(cap == 13 * 7 * 3);
	assert_memory_equal(b.pixels, a.pixels, sizeof(float) * 13 * 7 * 3);
	const float *held = b.pixels;
	assert_int_equal(tile_crop(&a, &r, &b, &cap), 0);
	assert_true(b.pixels == held && cap == 13 * 7 * 3);
	assert_int_equal(b.width, 6);
	assert_int_equal(b.height, 5);
	for (int y = 0; y < 5; y++)
		for (int x = 0; x < 6; x++)
			for (int k = 0; k < 3; k++)
				assert_true(b.pixels[(y * 6 + x) * 3 + k] == a.pixels[((y + 2) * 13 + x + 4) * 3 + k]);
	tile_paste(&c, 1, 1, &b, 2, 1, 3, 4);
	for (int y = 0; y < 4; y++)
		for (int x = 0; x < 3; x++)
			for (int k = 0; k < 3; k++)
				assert_true(c.pixels[((y + 1) * 13 + x + 1) * 3 + k] ==
				            b.pixels[((y + 1) * 6 + x + 2) * 3 + k]);
	assert_true(c.pixels[0] == 0);
	image_free(&a), image_free(&b), image_free(&c);
}

/* A crop and a paste past TILE_PAR_BYTES, which go to several threads where the host has more
 * than one core: the same pixels as a row-by-row copy, and nothing outside the rectangle. */
static void test_crop_paste_large(void **state)
{
	(void)state;
	const int W = 1500, H = 1400, ch = 4;
	struct image a, b = {0}, c;
	assert_int_equal(image_alloc(&a, W, H, ch), 0);
	assert_int_equal(image_alloc(&c, W, H, ch), 0);
	tu_fill_f32(a.pixels, (size_t)W * H * ch, -1, 1);
	struct tile_rect r = {rnd(0, 100), rnd(0, 100), rnd(1200, 1390), rnd(1200, 1290)};
	assert_true((size_t)r.w * r.h * ch * sizeof(float) > 2 * TILE_PAR_BYTES);
	size_t cap = 0;
	assert_int_equal(tile_crop(&a, &r, &b, &cap), 0);
	for (int y = 0; y < r.h; y++)
		assert_memory_equal(b.pixels + (size_t)y * r.w * ch,
		                    a.pixels + ((size_t)(r.y + y) * W + r.x) * ch,
		                    sizeof(float) * r.w * ch);
	int dx = rnd(0, W - r.w), dy = rnd(0, H - r.h);
	tile_paste(&c, dx, dy, &b, 0, 0, r.w, r.h);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			int inside = x >= dx && x < dx + r.w && y >= dy && y < dy + r.h;
			const float *got = c.pixels + ((size_t)y * W + x) * ch;
			for (int k = 0; k < ch; k++) {
				float want = inside ? a.pixels[((size_t)(r.y + y - dy) * W + r.x + x - dx) * ch + k]
				                    : 0.0f;
				if (got[k] != want)
					fail_msg("pixel (%d, %d) channel %d: %g, want %g", x, y, k, got[k], want);
			}
		}
	image_free(&a), image_free(&b), image_free(&c);
}

int main(void)
{
	tu_seed_from_clock();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grid),
		cmocka_unit_test(test_crop_paste),
		cmocka_unit_test(test_crop_paste_large),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
