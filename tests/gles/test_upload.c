/* Upload buffers a bloom context lends to decoders (bloom_upload_take): JPEG planes decoded
 * straight into one run bit for bit as the same planes copied in (and agree with the independent
 * CPU conversion, tests/yuv_ref.c), whole and in tiles; taken, filled and given back from other
 * threads; never lent again while the GPU may read them; grown by the context's thread when a
 * take found none large enough, within the byte budget; returned by a decode that fails after
 * taking one; waited for (bounded) by the context's destroy. Fresh random images. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <GLES3/gl31.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gles/bloom.h"
#include "tests/testutil.h"
#include "tests/yuv_ref.h"
#include "core/clock.h"

static struct program_cache *g_pc;

static int setup(void **state)
{
	(void)state;
	tu_seed_from_clock();
	return !tu_gl_context() || program_cache_create("", NULL, &g_pc) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	program_cache_destroy(g_pc);
	return 0;
}

static int g_upload_copy; /* bloom_ctx_opts.upload_copy of the contexts made */
static int g_coefs;       /* 1: frames decoded to their coefficients (the GPU's inverse DCT) */

static int decode(const unsigned char *jpeg, size_t len, const struct yuv_memory *mem,
                  struct yuv_image *y, char err[IMAGE_ERR_LEN])
{
	return (g_coefs ? image_decode_jpeg_coefs_into : image_decode_jpeg_yuv_into)(jpeg, len, NULL,
	                                                                             mem, y, NULL, err);
}

static struct bloom_ctx *new_ctx(int no_persistent_map, size_t frame_bytes, int destroy_wait_ms)
{
	struct bloom_ctx_opts o = {.no_persistent_map = no_persistent_map,
	                           .frame_bytes = frame_bytes, .destroy_wait_ms = destroy_wait_ms,
	                           .upload_copy = g_upload_copy};
	struct bloom_ctx *b;
	char err[BLOOM_ERR_LEN];
	if (bloom_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &o, NULL, &b, err))
		fail_msg("bloom_ctx_create: %s", err);
	return b;
}

static int lends(void)
{
	return egl_ctx_info(tu_gl_context())->buffer_storage;
}

/* A JPEG of fresh random pixels, w x h, gray or chroma subsampled sx x sy (malloc'd); with
 * g_coefs a random gradient with a little noise, whose coefficients mostly fit 8 bits. */
static unsigned char *rand_jpeg(int w, int h, int gray, int sx, int sy, size_t *len)
{
	struct image img;
	assert_int_equal(image_alloc(&img, w, h, gray ? 1 : 3), 0);
	tu_fill_f32(img.pixels, (size_t)w * h * img.channels, 0, 1);
	if (g_coefs) {
		float g[3];
		tu_fill_f32(g, 3, 0.2f, 0.8f);
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++)
				for (int c = 0; c < img.channels; c++) {
					float *v = &img.pixels[((size_t)y * w + x) * img.channels + c];
					*v = 0.1f * *v + g[c] * (float)(x + y) / (float)(w + h);
				}
	}
	struct yuv_image planes;
	unsigned lost = 0;
	unsigned char *jpeg;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(yuv_ref_from_image(&img, gray, sx, sy, 0, &planes, &lost), 0);
	assert_int_equal(image_encode_jpeg_yuv(&planes, 90, &jpeg, len, err), 0);
	yuv_image_free(&planes);
	image_free(&img);
	return jpeg;
}

/* a's samples are b's (the rows' padding past each plane's width is not written); for
 * coefficients, their words but the overflow regions' unused room. */
static void same_samples(const struct yuv_image *a, const struct yuv_image *b)
{
	assert_int_equal(a->bytes, b->bytes);
	assert_int_equal(a->coefs, b->coefs);
	if (a->coefs) {
		assert_memory_equal(a->data, b->data, a->cf[0].ovf);
		for (int p = 0; p < (a->gray ? 1 : 3); p++) {
			assert_int_equal(a->cf[p].novf, b->cf[p].novf);
			assert_memory_equal(a->data + a->cf[p].ovf, b->data + b->cf[p].ovf,
			                    (size_t)a->cf[p].novf * YUV_COEF_OVF_BYTES);
		}
		return;
	}
	for (int p = 0; p < 3; p++)
		for (int r = 0; r < a->ph[p]; r++)
			assert_memory_equal(a->data + a->offset[p] + (size_t)r * a->stride[p],
			                    b->data + b->offset[p] + (size_t)r * b->stride[p],
			                    (size_t)a->pw[p]);
}

/* yuv_memory's context for decodes into an upload buffer of b: what it took and gave back. */
struct taker {
	struct bloom_ctx *b;
	struct bloom_upload *u; /* the buffer taken, or NULL */
	int allocs, releases;
};

static void *take_alloc(void *ctx, size_t bytes, void **owner)
{
	struct taker *t = ctx;
	t->allocs++;
	t->u = bloom_upload_take(t->b, bytes);
	*owner = t;
	return bloom_upload_map(t->u);
}

static void take_release(void *owner)
{
	struct taker *t = owner;
	t->releases++;
	bloom_upload_return(t->u);
}

/* Decodes jpeg into an upload buffer of t->b, growing one first where none is large enough
 * (the context's thread only: the caller's). Fails the test unless the planes land in one. */
static void decode_lent(struct taker *t, const unsigned char *jpeg, size_t len, struct yuv_image *y)
{
	struct yuv_memory mem = {take_alloc, take_release, t};
	char err[IMAGE_ERR_LEN];
	for (int i = 0; i < 2; i++) {
		t->u = NULL;
		if (decode(jpeg, len, &mem, y, err))
			fail_msg("decoding into a lent buffer: %s", err);
		if (t->u)
			break;
		size_t need = y->bytes;
		yuv_image_free(y); /* malloc'd: the first take found no buffer; it decoded, so its
		                      size is asked for (as the daemon does) */
		bloom_upload_want(t->b, need);
		assert_int_equal(bloom_upload_tend(t->b), 1);
	}
	assert_non_null(t->u);
	assert_ptr_equal(y->data, bloom_upload_map(t->u));
	assert_ptr_equal(y->owner, t);
}

/* One frame's results: the float image, and the planes (4:2:0, lent from the read-back
 * buffers, copied here) or, in tiles, a float image again. */
struct results {
	struct image img, img2;
	struct yuv_image planes;
	struct bloom_stats st;  /* the float run's */
	struct bloom_stats st2; /* the planes run's: with lent planes out, the host copies are the
	                           upload's alone */
};

/* Planes y (read from the upload buffer u, or copied when NULL) as op with kernel k, twice:
 * asking for a float image, and for planes. */
static void run_planes(struct bloom_ctx *b, const struct yuv_image *y, struct bloom_upload *u,
                       const struct image *k, int op, struct results *out)
{
	memset(out, 0, sizeof *out);
	struct bloom_params p;
	tu_params(&p, op);
	p.normalize = BLOOM_NORMALIZE_NONE;
	struct bloom_frame f = {NULL, y, u, 0};
	struct bloom_kernel kr = {k, {0, 0}};
	struct bloom_result r;
	memset(&r, 0, sizeof r);
	char err[BLOOM_ERR_LEN];
	if (bloom_run_frame(b, op, &f, &kr, &p, 0, &r, &out->st, err))
		fail_msg("bloom_run_frame: %s", err);
	out->img = r.img;
	memset(&r, 0, sizeof r);
	r.want_yuv = 1, r.sub_x = r.sub_y = 2, r.lend = 1;
	if (bloom_run_frame(b, op, &f, &kr, &p, 0, &r, &out->st2, err))
		fail_msg("bloom_run_frame (planes out): %s", err);
	out->img2 = r.img;
	if (r.yuv.data) {
		out->planes = r.yuv;
		out->planes.data = malloc(r.yuv.bytes);
		assert_non_null(out->planes.data);
		memcpy(out->planes.data, r.yuv.data, r.yuv.bytes);
		if (r.lease)
			r.yuv.data = NULL;
		bloom_lease_return(r.lease);
		yuv_image_free(&r.yuv);
	}
}

static void results_free(struct results *r)
{
	image_free(&r->img), image_free(&r->img2);
	yuv_image_free(&r->planes);
}

/* a and b hold the same bits. */
static void same_results(const struct results *a, const struct results *b)
{
	const struct image *ia[2] = {&a->img, &a->img2}, *ib[2] = {&b->img, &b->img2};
	for (int i = 0; i < 2; i++) {
		assert_int_equal(ia[i]->width, ib[i]->width);
		assert_int_equal(ia[i]->height, ib[i]->height);
		assert_int_equal(ia[i]->channels, ib[i]->channels);
		if (ia[i]->pixels)
			assert_memory_equal(ia[i]->pixels, ib[i]->pixels, (size_t)ia[i]->width *
			                    ia[i]->height * ia[i]->channels * sizeof(float));
	}
	assert_int_equal(a->planes.bytes, b->planes.bytes);
	if (a->planes.data)
		assert_memory_equal(a->planes.data, b->planes.data, a->planes.bytes);
}

/* Largest difference between a and the reference ref (both linear), in sRGB 8-bit codes. */
static double code_diff(const struct image *a, const struct image *ref)
{
	double m = 0;
	size_t n = (size_t)a->width * a->height * a->channels;
	for (size_t i = 0; i < n; i++) {
		double x = a->pixels[i], r = ref->pixels[i];
		double sx = x <= 0.0031308 ? 12.92 * x : 1.055 * pow(x, 1 / 2.4) - 0.055;
		double sr = r <= 0.0031308 ? 12.92 * r : 1.055 * pow(r, 1 / 2.4) - 0.055;
		double d = fabs(sx - sr) * 255;
		if (!(d <= m))
			m = d;
	}
	return m;
}

/* Planes decoded into a lent upload buffer and read there by the GPU give, bit for bit, what the
 * same planes give copied in (gray, 4:4:4, 4:2:2, 4:2:0; odd sizes; bloom and convolve; whole
 * and in tiles, whose planes the CPU converts from the lent buffer), with no host copy counted;
 * through an identity kernel they agree with the CPU conversion (yuv_ref_to_image, double) to
 * 0.01 codes. A context without persistent mapping lends none. */
static void test_same_bits(void **state)
{
	(void)state;
	if (!lends()) {
		print_message("no GL_EXT_buffer_storage: nothing is lent, the copy path is the only one\n");
		struct bloom_ctx *b = new_ctx(0, 0, 0);
		assert_null(bloom_upload_take(b, 100));
		bloom_ctx_destroy(b);
		return;
	}
	static const struct {
		int w, h, gray, sx, sy, op, tiled;
	} cases[] = {
		{37, 23, 0, 1, 1, BLOOM_OP_BLOOM, 0},    {64, 33, 0, 2, 2, BLOOM_OP_CONVOLVE, 0},
		{130, 7, 0, 2, 1, BLOOM_OP_BLOOM, 0},    {3, 40, 1, 1, 1, BLOOM_OP_CONVOLVE, 0},
		{1, 1, 0, 1, 2, BLOOM_OP_BLOOM, 0},      {300, 170, 0, 2, 2, BLOOM_OP_BLOOM, 1},
	};
	struct bloom_ctx *b = new_ctx(0, 0, 0), *tiles = new_ctx(0, (size_t)3 << 19, 0);
	struct image one;
	assert_int_equal(image_alloc(&one, 1, 1, 1), 0);
	one.pixels[0] = 1;
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct bloom_ctx *on = cases[c].tiled ? tiles : b;
		size_t len;
		unsigned char *jpeg = rand_jpeg(cases[c].w, cases[c].h, cases[c].gray, cases[c].sx,
		                                cases[c].sy, &len);
		struct image k;
		assert_int_equal(image_alloc(&k, 7, 5, 3), 0);
		tu_fill_f32(k.pixels, (size_t)7 * 5 * 3, 0, 1);
		struct yuv_image copied, lent;
		char err[IMAGE_ERR_LEN];
		assert_int_equal(decode(jpeg, len, NULL, &copied, err), 0);
		assert_int_equal(copied.coefs, g_coefs);
		struct taker t = {on, NULL, 0, 0};
		decode_lent(&t, jpeg, len, &lent);
		same_samples(&lent, &copied);
		struct bloom_cache_stats s0, s1, s2;
		struct results ra, rb;
		bloom_ctx_stats(on, &s0);
		run_planes(on, &copied, NULL, &k, cases[c].op, &ra);
		bloom_ctx_stats(on, &s1);
		run_planes(on, &lent, t.u, &k, cases[c].op, &rb);
		bloom_ctx_stats(on, &s2);
		print_message("%dx%d gray %d sub %dx%d %s: tiles %dx%d; host copies of the planes run "
		              "%.4f ms copied, %.4f ms lent\n", cases[c].w, cases[c].h, cases[c].gray,
		              cases[c].sx, cases[c].sy, cases[c].op == BLOOM_OP_BLOOM ? "bloom" :
		              "convolve", rb.st.tiles_x, rb.st.tiles_y, ra.st2.copy_ms, rb.st2.copy_ms);
		same_results(&ra, &rb);
		if (cases[c].tiled) { /* converted on the CPU from the lent buffer, tile by tile */
			assert_true(rb.st.tiles_x * rb.st.tiles_y > 1);
			assert_non_null(rb.img2.pixels);
		} else { /* the float and the planes run: two frames each way */
			assert_int_equal(s1.uploads_copied - s0.uploads_copied, 2);
			assert_int_equal(s1.uploads_lent - s0.uploads_lent, 0);
			assert_int_equal(s2.uploads_lent - s1.uploads_lent, 2);
			assert_int_equal(s2.uploads_copied - s1.uploads_copied, 0);
			assert_non_null(rb.planes.data);
			assert_true(rb.st2.copy_ms == 0); /* nothing copied: planes in place, lent out */
		}
		assert_true(s2.upload_buffers >= 1 && s2.upload_bytes >= lent.bytes);
		/* the identity kernel against the CPU's conversion of the same planes */
		struct results id;
		struct image ref;
		run_planes(on, &lent, t.u, &one, BLOOM_OP_CONVOLVE, &id);
		struct yuv_image cpu; /* coefficients: the CPU's inverse DCT, within 1 of the GPU's */
		assert_int_equal(g_coefs ? yuv_coefs_to_planes(&lent, &cpu) : 0, 0);
		assert_int_equal(yuv_ref_to_image(g_coefs ? &cpu : &lent, &ref), 0);
		if (g_coefs)
			yuv_image_free(&cpu);
		assert_int_equal(ref.width, id.img.width);
		assert_int_equal(ref.height, id.img.height);
		assert_int_equal(ref.channels, id.img.channels);
		/* in tiles the planes are converted on the CPU as libjpeg does, rounding to codes */
		/* coefficients: a sample 1 off between the inverse DCTs moves R, G, B up to 1 + 1.772 */
		double d = code_diff(&id.img, &ref),
		       tol = id.st.tiles_x * id.st.tiles_y > 1 ? 1.51 : g_coefs ? 2.8 : 0.01;
		print_message("  lent planes through an identity kernel (tiles %dx%d): %.4f codes from "
		              "the CPU reference (tolerance %.2f)\n", id.st.tiles_x, id.st.tiles_y, d,
		              tol);
		assert_true(d <= tol);
		assert_int_equal(t.releases, 0);
		yuv_image_free(&lent); /* gives the buffer back */
		assert_int_equal(t.releases, 1);
		yuv_image_free(&copied);
		results_free(&ra), results_free(&rb), results_free(&id);
		image_free(&ref), image_free(&k);
		free(jpeg);
	}
	image_free(&one);
	bloom_ctx_destroy(b);
	bloom_ctx_destroy(tiles);
	/* no persistent mapping: nothing to lend, however often asked */
	struct bloom_ctx *plain = new_ctx(1, 0, 0);
	for (int i = 0; i < 3; i++) {
		assert_null(bloom_upload_take(plain, 4096));
		assert_int_equal(bloom_upload_tend(plain), 0);
	}
	bloom_ctx_destroy(plain);
}

/* The same with the planes copied into GPU memory before the unpack pass reads them (what a GPU
 * does; a software renderer reads them in place unless told). */
static void test_same_bits_gpu_copy(void **state)
{
	g_upload_copy = 1;
	test_same_bits(state);
	g_upload_copy = 0;
}

/* The same with frames decoded to their coefficients, the planes made by the GPU's inverse DCT
 * (jpeg_idct): lent and copied alike bit for bit; through the identity kernel within a sample
 * of the CPU's inverse DCT (2.8 codes: one step of Y and of Cb or Cr), and in tiles (the CPU
 * converting) as the planes are; in place and copied into GPU memory first. */
static void test_coefs_same_bits(void **state)
{
	g_coefs = 1;
	test_same_bits(state);
	g_upload_copy = 1;
	test_same_bits(state);
	g_upload_copy = 0;
	g_coefs = 0;
}

/* A decoder thread: takes a buffer, decodes into it; the test's thread runs the frame. */
struct decoder {
	struct taker t;
	const unsigned char *jpeg;
	size_t len;
	struct yuv_image y;
	int rc;
};

static void *decode_thread(void *arg)
{
	struct decoder *d = arg;
	struct yuv_memory mem = {take_alloc, take_release, &d->t};
	char err[IMAGE_ERR_LEN];
	d->rc = image_decode_jpeg_yuv_into(d->jpeg, d->len, NULL, &mem, &d->y, NULL, err);
	return NULL;
}

static void *free_thread(void *arg)
{
	yuv_image_free(arg); /* returns its buffer */
	return NULL;
}

/* Taken and filled on one thread, run on the context's, given back on a third; while the GPU
 * may read a buffer (its fence not yet seen signalled by bloom_upload_tend) no take gets it,
 * even after its holder gave it back; once tended, it is lent again. A frame whose buffer is
 * of another context is copied (and still right). */
static void test_threads_and_flight(void **state)
{
	(void)state;
	if (!lends()) {
		print_message("no GL_EXT_buffer_storage\n");
		skip();
	}
	struct bloom_ctx *b = new_ctx(0, 0, 0), *other = new_ctx(0, 0, 0);
	size_t len;
	unsigned char *jpeg = rand_jpeg(96, 64, 0, 1, 1, &len);
	struct yuv_image ref;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(image_decode_jpeg_yuv(jpeg, len, NULL, &ref, NULL, err), 0);
	/* the first take finds none (nothing made yet) and notes the size; the context's thread
	 * makes one */
	assert_null(bloom_upload_take(b, ref.bytes));
	bloom_upload_want(b, ref.bytes);
	assert_int_equal(bloom_upload_tend(b), 1);
	struct decoder d = {{b, NULL, 0, 0}, jpeg, len, {0}, -1};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, decode_thread, &d), 0);
	pthread_join(th, NULL);
	assert_int_equal(d.rc, 0);
	assert_non_null(d.t.u);
	same_samples(&d.y, &ref);
	struct bloom_upload *u = d.t.u;
	/* the only buffer made is lent: a second take finds none */
	assert_null(bloom_upload_take(b, ref.bytes));
	struct image k;
	assert_int_equal(image_alloc(&k, 5, 5, 3), 0);
	tu_fill_f32(k.pixels, 75, 0, 1);
	struct results ra, rc;
	run_planes(b, &ref, NULL, &k, BLOOM_OP_BLOOM, &ra);
	run_planes(b, &d.y, u, &k, BLOOM_OP_BLOOM, &rc);
	same_results(&ra, &rc);
	results_free(&rc);
	/* given back from a third thread while the GPU may still read it: not lent again before
	 * the context's thread has seen its fence signalled (a second buffer may have been made
	 * meanwhile, for the take above that found none) */
	assert_int_equal(pthread_create(&th, NULL, free_thread, &d.y), 0);
	pthread_join(th, NULL);
	assert_int_equal(d.t.releases, 1);
	struct bloom_upload *held[3];
	for (int i = 0; i < 3; i++) {
		held[i] = bloom_upload_take(b, ref.bytes);
		assert_true(held[i] != u);
	}
	for (int i = 0; i < 3; i++)
		bloom_upload_return(held[i]);
	glFinish();
	int tends = 0;
	struct bloom_upload *again = NULL;
	while (!again && tends++ < 50) {
		bloom_upload_tend(b);
		for (int i = 0; i < 3; i++)
			if ((held[i] = bloom_upload_take(b, ref.bytes)) == u)
				again = u;
		for (int i = 0; i < 3; i++)
			if (held[i] != u)
				bloom_upload_return(held[i]);
	}
	print_message("the buffer lent again after %d tend(s)\n", tends);
	assert_ptr_equal(again, u);
	bloom_upload_return(again);
	/* planes in a buffer of another context: copied, and the same answer */
	struct taker t = {other, NULL, 0, 0};
	struct yuv_image oy;
	decode_lent(&t, jpeg, len, &oy);
	struct bloom_cache_stats s0, s1;
	bloom_ctx_stats(b, &s0);
	run_planes(b, &oy, t.u, &k, BLOOM_OP_BLOOM, &rc);
	bloom_ctx_stats(b, &s1);
	assert_int_equal(s1.uploads_lent - s0.uploads_lent, 0);
	assert_int_equal(s1.uploads_copied - s0.uploads_copied, 2);
	same_results(&ra, &rc);
	yuv_image_free(&oy);
	results_free(&ra), results_free(&rc);
	image_free(&k), yuv_image_free(&ref);
	free(jpeg);
	bloom_ctx_destroy(b);
	bloom_ctx_destroy(other);
}

/* Growth: a take larger than every buffer is NULL, and asks for nothing; once a frame of that
 * size asks (bloom_upload_want), the context's thread grows one (one a tend); sizes past
 * BLOOM_UPLOAD_MAX_ONE or BLOOM_UPLOAD_BYTES are never lent; the buffers made stay within the
 * budget; at most BLOOM_UPLOAD_SLOTS are out at once. */
static void test_grow(void **state)
{
	(void)state;
	if (!lends()) {
		print_message("no GL_EXT_buffer_storage\n");
		skip();
	}
	struct bloom_ctx *b = new_ctx(0, 0, 0);
	struct bloom_cache_stats s;
	size_t small = 1000 + (size_t)(tu_uniform() * 5000), big = (size_t)5 << 20;
	assert_null(bloom_upload_take(b, small));
	assert_int_equal(bloom_upload_tend(b), 0); /* a take that found none asks for nothing */
	bloom_upload_want(b, small);
	assert_int_equal(bloom_upload_tend(b), 1);
	assert_int_equal(bloom_upload_tend(b), 0); /* nothing more asked */
	struct bloom_upload *u = bloom_upload_take(b, small);
	assert_non_null(u);
	memset(bloom_upload_map(u), 0xa5, small); /* the whole size is there to write */
	bloom_upload_return(u);
	assert_null(bloom_upload_take(b, big)); /* larger than the one made */
	bloom_ctx_stats(b, &s);
	assert_int_equal(s.upload_buffers, 1);
	bloom_upload_want(b, big);
	assert_int_equal(bloom_upload_tend(b), 1);
	u = bloom_upload_take(b, big);
	assert_non_null(u);
	unsigned char *m = bloom_upload_map(u);
	m[0] = 1, m[big - 1] = 2;
	bloom_ctx_stats(b, &s);
	print_message("after growing: %zu buffers, %zu bytes\n", s.upload_buffers, s.upload_bytes);
	assert_int_equal(s.upload_buffers, 2);
	assert_true(s.upload_bytes >= big + small && s.upload_bytes <= BLOOM_UPLOAD_BYTES);
	/* the small one is still lendable for small takes while the big one is out */
	struct bloom_upload *v = bloom_upload_take(b, small);
	assert_non_null(v);
	assert_true(v != u);
	bloom_upload_return(v);
	bloom_upload_return(u);
	/* past one buffer's bound or the budget: never */
	bloom_upload_want(b, BLOOM_UPLOAD_MAX_ONE + 1);
	assert_int_equal(bloom_upload_tend(b), 0);
	bloom_upload_want(b, BLOOM_UPLOAD_BYTES + 1);
	assert_int_equal(bloom_upload_tend(b), 0);
	assert_null(bloom_upload_take(b, BLOOM_UPLOAD_BYTES + 1));
	/* every buffer lent: BLOOM_UPLOAD_SLOTS at most, all different, within the budget */
	struct bloom_upload *out[BLOOM_UPLOAD_SLOTS + 1];
	int n = 0;
	for (int i = 0; i < 4 * BLOOM_UPLOAD_SLOTS && n <= BLOOM_UPLOAD_SLOTS; i++) {
		struct bloom_upload *x = bloom_upload_take(b, small);
		if (x) {
			out[n++] = x;
		} else {
			bloom_upload_want(b, small);
			bloom_upload_tend(b);
		}
	}
	bloom_ctx_stats(b, &s);
	print_message("lent at once: %d; %zu buffers, %zu bytes\n", n, s.upload_buffers,
	              s.upload_bytes);
	assert_int_equal(n, BLOOM_UPLOAD_SLOTS);
	assert_true(s.upload_bytes <= BLOOM_UPLOAD_BYTES);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			assert_true(out[i] != out[j] && bloom_upload_map(out[i]) != bloom_upload_map(out[j]));
	for (int i = 0; i < n; i++)
		bloom_upload_return(out[i]);
	bloom_ctx_destroy(b);
}

/* A decode that fails after it took a buffer (the data cut short after the header, and a
 * corrupt scan) gives it back: the next take gets it. */
static void test_failed_decode(void **state)
{
	(void)state;
	if (!lends()) {
		print_message("no GL_EXT_buffer_storage\n");
		skip();
	}
	struct bloom_ctx *b = new_ctx(0, 0, 0);
	size_t len;
	unsigned char *jpeg = rand_jpeg(120, 80, 0, 2, 2, &len);
	struct yuv_image y;
	struct taker t = {b, NULL, 0, 0};
	decode_lent(&t, jpeg, len, &y);
	struct bloom_upload *u = t.u;
	yuv_image_free(&y);
	char err[IMAGE_ERR_LEN];
	struct yuv_memory mem = {take_alloc, take_release, &t};
	/* cut in the scan data: libjpeg finds it after the planes were taken */
	for (int pass = 0; pass < 2; pass++) {
		unsigned char *bad = malloc(len);
		memcpy(bad, jpeg, len);
		size_t n = pass ? len : len * 2 / 3;
		if (pass) /* the scan's second half replaced by restart markers none declared */
			for (size_t i = len / 2; i + 1 < len; i += 2)
				bad[i] = 0xff, bad[i + 1] = 0xd3;
		t.allocs = t.releases = 0;
		t.u = NULL;
		int rc = image_decode_jpeg_yuv_into(bad, n, NULL, &mem, &y, NULL, err);
		print_message("%s: %s (rc %d): alloc %d, release %d\n", pass ? "corrupt" : "truncated",
		              rc ? err : "decoded", rc, t.allocs, t.releases);
		assert_true(rc != 0);
		assert_int_equal(t.allocs, 1);
		assert_int_equal(t.releases, 1);
		assert_ptr_equal(t.u, u);
		assert_null(y.data);
		free(bad);
		struct bloom_upload *x = bloom_upload_take(b, y.bytes ? y.bytes : 1);
		assert_ptr_equal(x, u); /* never fenced: free at once */
		bloom_upload_return(x);
	}
	free(jpeg);
	bloom_ctx_destroy(b);
}

static void *return_later(void *arg)
{
	nanosleep(&(struct timespec){0, 200000000}, NULL);
	bloom_upload_return(arg);
	return NULL;
}

static struct bloom_upload *g_kept; /* a buffer its context's destroy gave up waiting for */

/* Destroy with a buffer lent: waits for it to come back (here 200 ms later, from another
 * thread); one that never comes back within the wait is left mapped, its record kept, so its
 * holder can still write and give it back. */
static void test_destroy_waits(void **state)
{
	(void)state;
	if (!lends()) {
		print_message("no GL_EXT_buffer_storage\n");
		skip();
	}
	struct bloom_ctx *b = new_ctx(0, 0, 5000);
	assert_null(bloom_upload_take(b, 4096));
	bloom_upload_want(b, 4096);
	bloom_upload_tend(b);
	struct bloom_upload *u = bloom_upload_take(b, 4096);
	assert_non_null(u);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, return_later, u), 0);
	double t0 = clock_ms();
	bloom_ctx_destroy(b);
	double waited = clock_ms() - t0;
	pthread_join(th, NULL);
	print_message("destroy waited %.0f ms for a buffer given back after 200 ms\n", waited);
	assert_true(waited >= 150 && waited < 4000);
	/* never given back in time */
	b = new_ctx(0, 0, 100);
	assert_null(bloom_upload_take(b, 4096));
	bloom_upload_want(b, 4096);
	bloom_upload_tend(b);
	g_kept = bloom_upload_take(b, 4096);
	assert_non_null(g_kept);
	t0 = clock_ms();
	bloom_ctx_destroy(b);
	waited = clock_ms() - t0;
	print_message("destroy gave up after %.0f ms (wait 100 ms)\n", waited);
	assert_true(waited >= 90 && waited < 2000);
	memset(bloom_upload_map(g_kept), 0x5a, 4096); /* still mapped */
	bloom_upload_return(g_kept);
}

int main(void)
{
	tu_test_filter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_bits),
		cmocka_unit_test(test_same_bits_gpu_copy),
		cmocka_unit_test(test_coefs_same_bits),
		cmocka_unit_test(test_threads_and_flight),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_failed_decode),
		cmocka_unit_test(test_destroy_waits),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
