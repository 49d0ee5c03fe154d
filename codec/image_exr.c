/* OpenEXR through the OpenEXRCore C API, reading from and writing to memory: the first part of a
 * file, scanline or tiled (level 0), any compression the library decodes, half / float / uint
 * channels Y, RGB, with or without A; written as one scanline part in half or float, ZIP unless
 * asked otherwise (none, RLE, ZIPS, PIZ). OpenEXRCore 3.1 cannot decode DWAA/DWAB (refused as
 * unsupported) and mis-decodes B44 with 32-bit channels (refused before decoding). The data
 * window is checked against the limits before any pixel buffer exists.
 * A frame's chunks are decoded and encoded on several threads (core/parallel.h's par_each: each
 * worker its own pipeline; OpenEXRCore's pipelines are safe across chunks), the encoded chunks
 * written in order as soon as those before them are; ZIP and ZIPS blocks are inflated and
 * deflated by libdeflate, several times faster than the library's zlib at about the same size. */
#include <libdeflate.h>
#include <OpenEXR/openexr.h>
#include <pthread.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/image_codec.h"
#include "core/parallel.h"

const char *const image_exr_compression_names[IMAGE_EXR_COMPRESSION_COUNT + 1] = {
	[IMAGE_EXR_ZIP] = "zip",   [IMAGE_EXR_NONE] = "none", [IMAGE_EXR_RLE] = "rle",
	[IMAGE_EXR_ZIPS] = "zips", [IMAGE_EXR_PIZ] = "piz",
};
_Static_assert(IMAGE_EXR_PIZ + 1 == IMAGE_EXR_COMPRESSION_COUNT, "one name per compression");

/* libdeflate's levels for ZIP blocks of half and of float samples. OpenEXRCore 3.1.5 deflates
 * with zlib's default (level 6: its default level is -1). On 1080p frames (bench/RESULTS.md,
 * 2026-11-28) libdeflate's level 1 deflates half samples in a ninth of zlib 6's time to blocks
 * 1-2% larger; float samples lose 6% there, so they take level 2 (within 1% of zlib 6's size,
 * a third of its time). */
#define EXR_DEFLATE_HALF 1
#define EXR_DEFLATE_FLOAT 2
/* Unpacked bytes a thread takes at least: a smaller frame is not worth a thread's start */
#define EXR_PAR_BYTES ((uint64_t)1 << 20)
/* Buffers the helper threads of one frame may hold together (each its chunk's buffers): a file
 * of huge tiles or lines is decoded on fewer threads, down to one, rather than multiplying
 * them past what the memory budget reserved for the frame */
#define EXR_PAR_MEM ((uint64_t)256 << 20)

#define EXR_CHUNK_MAX ((uint64_t)256 << 20) /* largest unpacked chunk we let the library build */
#define EXR_TILE_MAX 8192                    /* largest tile side accepted */

struct exr_io {
	const unsigned char *p; /* read: the file */
	size_t len;
	struct image_buf out;   /* write: the file being built */
	pthread_mutex_t lock;   /* guards msg: chunks fail on several threads */
	char msg[160];          /* the library's last error message */
};

static void on_error(exr_const_context_t ctxt, exr_result_t code, const char *msg)
{
	void *ud = NULL;
	(void)code;
	if (ctxt && exr_get_user_data(ctxt, &ud) == EXR_ERR_SUCCESS && ud) {
		struct exr_io *io = ud;
		pthread_mutex_lock(&io->lock);
		snprintf(io->msg, sizeof io->msg, "%s", msg);
		pthread_mutex_unlock(&io->lock);
	}
}

/* Threads for n chunks of chunk_bytes unpacked each, a worker holding worker_bytes of buffers:
 * asked (1 or more), or enough that each takes EXR_PAR_BYTES at least; either way no more
 * helpers than EXR_PAR_MEM holds */
static int exr_threads(int asked, size_t n, uint64_t chunk_bytes, uint64_t worker_bytes)
{
	int t = asked;
	if (t < 1) {
		uint64_t per = chunk_bytes ? (EXR_PAR_BYTES + chunk_bytes - 1) / chunk_bytes : 1;
		t = par_threads(n, (size_t)per);
	}
	uint64_t helpers = worker_bytes ? EXR_PAR_MEM / worker_bytes : (uint64_t)t;
	return (uint64_t)t > helpers + 1 ? (int)helpers + 1 : t;
}

/* ZIP's reordering before deflate: the even bytes, then the odd ones, each stored as the
 * difference from the one before it in that order plus 128 (OpenEXR's predictor). n bytes from
 * raw to t, each difference taken from raw directly (no carried value: loops that vectorise). */
static void zip_predict(uint8_t *t, const uint8_t *raw, size_t n)
{
	size_t h = (n + 1) / 2, m = n / 2; /* even bytes, odd bytes */
	if (!n)
		return;
	t[0] = raw[0];
	for (size_t k = 1; k < h; k++)
		t[k] = (uint8_t)(raw[2 * k] - raw[2 * k - 2] + 128);
	if (!m)
		return;
	t[h] = (uint8_t)(raw[1] - raw[2 * (h - 1)] + 128);
	for (size_t k = 1; k < m; k++)
		t[h + k] = (uint8_t)(raw[2 * k + 1] - raw[2 * k - 1] + 128);
}

/* The inverse of zip_predict: t (n bytes, changed) back into out. */
static void zip_unpredict(uint8_t *out, uint8_t *t, size_t n)
{
	for (size_t i = 1; i < n; i++)
		t[i] = (uint8_t)(t[i - 1] + t[i] - 128);
	const uint8_t *t1 = t, *t2 = t + (n + 1) / 2;
	size_t i = 0;
	for (; i + 1 < n; i += 2) {
		out[i] = *t1++;
		out[i + 1] = *t2++;
	}
	if (i < n)
		out[i] = *t1;
}

/* Grows *p to n bytes at least: 0 or -1 */
static int grow(uint8_t **p, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	uint8_t *q = realloc(*p, n);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

static int64_t mem_read(exr_const_context_t ctxt, void *ud, void *buffer, uint64_t sz,
			uint64_t offset, exr_stream_error_func_ptr_t error_cb)
{
	struct exr_io *io = ud;
	(void)ctxt;
	(void)error_cb;
	if (offset >= io->len)
		return 0;
	uint64_t n = io->len - offset < sz ? io->len - offset : sz;
	memcpy(buffer, io->p + offset, (size_t)n);
	return (int64_t)n;
}

static int64_t mem_size(exr_const_context_t ctxt, void *ud)
{
	(void)ctxt;
	return (int64_t)((struct exr_io *)ud)->len;
}

static int64_t mem_write(exr_const_context_t ctxt, void *ud, const void *buffer, uint64_t sz,
			 uint64_t offset, exr_stream_error_func_ptr_t error_cb)
{
	struct exr_io *io = ud;
	struct image_buf *b = &io->out;
	if (offset > (uint64_t)1 << 40 || sz > (uint64_t)1 << 40)
		return error_cb(ctxt, EXR_ERR_WRITE_IO, "write out of range"), -1;
	size_t end = (size_t)(offset + sz);
	/* grow through image_buf_put, zero-filling any gap */
	static const unsigned char zeros[4096];
	while (b->len < end) {
		size_t n = end - b->len < sizeof zeros ? end - b->len : sizeof zeros;
		if (image_buf_put(b, zeros, n))
			return error_cb(ctxt, EXR_ERR_OUT_OF_MEMORY, "out of memory"), -1;
	}
	memcpy(b->p + offset, buffer, (size_t)sz);
	return (int64_t)sz;
}

/* Our error code for an OpenEXR result, with the library's message. */
static int exr_error(exr_result_t rv, struct exr_io *io, const char *what, char *err)
{
	int code = rv == EXR_ERR_OUT_OF_MEMORY ? IMAGE_E_NOMEM
		   : rv == EXR_ERR_READ_IO ? IMAGE_E_TRUNCATED
		   : rv == EXR_ERR_FEATURE_NOT_IMPLEMENTED ? IMAGE_E_UNSUPPORTED
							    : IMAGE_E_CORRUPT;
	return image_fail(err, code, "exr: %s: %s%s%s", what, exr_get_error_code_as_string(rv),
			  io->msg[0] ? ": " : "", io->msg);
}

/* Which file channel feeds each output channel (-1: none, filled with 0 or 1). */
struct chan_map {
	int ch;     /* output channels */
	int src[4]; /* index in the file's channel list */
	int bits;   /* 16 if every used channel is half, else 32 */
};

static int find_chan(const exr_attr_chlist_t *cl, const char *name)
{
	for (int i = 0; i < cl->num_channels; i++)
		if (cl->entries[i].name.str && !strcmp(cl->entries[i].name.str, name))
			return i;
	return -1;
}

static int map_channels(const exr_attr_chlist_t *cl, struct chan_map *m, char *err)
{
	int r = find_chan(cl, "R"), g = find_chan(cl, "G"), b = find_chan(cl, "B");
	int y = find_chan(cl, "Y"), a = find_chan(cl, "A");
	if (r >= 0 || g >= 0 || b >= 0) {
		m->ch = a >= 0 ? 4 : 3;
		m->src[0] = r;
		m->src[1] = g;
		m->src[2] = b;
		m->src[3] = a;
	} else if (y >= 0) {
		m->ch = a >= 0 ? 2 : 1;
		m->src[0] = y;
		m->src[1] = a;
	} else if (cl->num_channels == 1) {
		m->ch = 1; /* a single channel of any name is gray */
		m->src[0] = 0;
	} else {
		char names[96] = "";
		for (int i = 0; i < cl->num_channels && strlen(names) < 60; i++)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
				 i ? " " : "", cl->entries[i].name.str ? cl->entries[i].name.str : "?");
		return image_fail(err, IMAGE_E_UNSUPPORTED,
				  "exr: no R/G/B or Y channels (channels: %s)", names);
	}
	m->bits = 16;
	for (int c = 0; c < m->ch; c++) {
		int i = m->src[c];
		if (i < 0)
			continue;
		const exr_attr_chlist_entry_t *e = &cl->entries[i];
		if (e->x_sampling != 1 || e->y_sampling != 1)
			return image_fail(err, IMAGE_E_UNSUPPORTED,
					  "exr: channel %s is subsampled (%dx%d), not supported",
					  e->name.str, e->x_sampling, e->y_sampling);
		if (e->pixel_type != EXR_PIXEL_HALF)
			m->bits = 32;
	}
	return 0;
}

/* Points every decoder channel at its own planar float scratch plane of cw x chh samples
 * (plane i for the pipeline's channel i). Planes rather than interleaved output keep OpenEXR
 * 3.1's interleaving fast paths (which assume the file's channel order) out of the way, and
 * decoding even the channels we drop avoids its NULL-pointer paths, which crash on some
 * corrupt B44 files (found by fuzz_exr). */
static void aim_decoder(exr_decode_pipeline_t *d, float *scratch, size_t cw, size_t chh)
{
	for (int i = 0; i < d->channel_count; i++) {
		exr_coding_channel_info_t *c = &d->channels[i];
		c->user_data_type = EXR_PIXEL_FLOAT;
		c->user_bytes_per_element = 4;
		c->user_pixel_stride = 4;
		c->user_line_stride = (int32_t)(cw * 4);
		c->decode_to_ptr = (uint8_t *)(scratch + (size_t)i * cw * chh);
	}
}

/* One decoding thread's state: its pipeline and buffers, kept from chunk to chunk. */
struct dec_worker {
	exr_decode_pipeline_t d;
	int started;   /* d is initialised */
	float *scratch; /* scratch_px samples a file channel */
	uint8_t *z;    /* ZIP: the inflated, still predicted bytes */
	size_t zcap;
	struct libdeflate_decompressor *inf;
	unsigned long long nonfinite; /* NaN or infinite samples it wrote */
};

/* decompress_fn for ZIP and ZIPS: libdeflate's inflate, then the predictor undone, as
 * OpenEXRCore's own (a chunk whose packed size is its unpacked one is stored raw). */
static exr_result_t inflate_chunk(exr_decode_pipeline_t *d)
{
	struct dec_worker *w = d->decoding_user_data;
	size_t packed = (size_t)d->chunk.packed_size, n = (size_t)d->chunk.unpacked_size;
	if (packed == 0)
		return EXR_ERR_SUCCESS;
	if (packed == n) {
		if (d->unpacked_buffer != d->packed_buffer)
			memcpy(d->unpacked_buffer, d->packed_buffer, n);
		return EXR_ERR_SUCCESS;
	}
	if (!w->inf && !(w->inf = libdeflate_alloc_decompressor()))
		return EXR_ERR_OUT_OF_MEMORY;
	if (grow(&w->z, &w->zcap, n))
		return EXR_ERR_OUT_OF_MEMORY;
	if (libdeflate_zlib_decompress(w->inf, d->packed_buffer, packed, w->z, n, NULL) !=
	    LIBDEFLATE_SUCCESS)
		return EXR_ERR_CORRUPT_CHUNK; /* bad data, or not exactly n bytes */
	zip_unpredict(d->unpacked_buffer, w->z, n);
	return EXR_ERR_SUCCESS;
}

/* Decodes one chunk whose top-left pixel is (x0, y0) in data-window coordinates: initialises the
 * worker's pipeline on its first chunk, updates it after, then interleaves the wanted planes into
 * out. w->scratch holds scratch_px samples per file channel. */
static exr_result_t run_chunk(exr_context_t ctxt, const exr_chunk_info_t *ci,
			      struct dec_worker *w, const exr_attr_chlist_t *cl,
			      const struct chan_map *m, struct image *out, size_t scratch_px,
			      int64_t x0, int64_t y0)
{
	exr_decode_pipeline_t *d = &w->d;
	float *scratch = w->scratch;
	exr_result_t rv;
	if (ci->width < 1 || ci->height < 1 || x0 < 0 || y0 < 0 || x0 + ci->width > out->width ||
	    y0 + ci->height > out->height || (size_t)ci->width * (size_t)ci->height > scratch_px)
		return EXR_ERR_CORRUPT_CHUNK; /* a chunk outside the data window */
	size_t cw = (size_t)ci->width, chh = (size_t)ci->height;
	if (!w->started) {
		rv = exr_decoding_initialize(ctxt, 0, ci, d);
		if (rv)
			return rv;
		w->started = 1;
		if (d->channel_count != cl->num_channels)
			return EXR_ERR_CORRUPT_CHUNK;
		aim_decoder(d, scratch, cw, chh);
		rv = exr_decoding_choose_default_routines(ctxt, 0, d);
		exr_compression_t comp = EXR_COMPRESSION_NONE;
		if (!rv && d->decompress_fn && !exr_get_compression(ctxt, 0, &comp) &&
		    (comp == EXR_COMPRESSION_ZIP || comp == EXR_COMPRESSION_ZIPS)) {
			d->decompress_fn = inflate_chunk;
			d->decoding_user_data = w;
		}
	} else {
		rv = exr_decoding_update(ctxt, 0, ci, d);
		aim_decoder(d, scratch, cw, chh);
	}
	if (!rv)
		rv = exr_decoding_run(ctxt, 0, d);
	if (rv)
		return rv;
	/* out holds the file's m->ch channels, or RGBA (lent memory): gray goes to R, G and B */
	int ch = m->ch, stride = out->channels, widen = stride != ch && ch <= 2;
	for (int k = 0; k < ch; k++) {
		if (m->src[k] < 0)
			continue; /* keeps the fill value */
		const char *name = cl->entries[m->src[k]].name.str;
		int plane = -1;
		for (int i = 0; i < d->channel_count; i++)
			if (d->channels[i].channel_name && !strcmp(d->channels[i].channel_name, name))
				plane = i;
		if (plane < 0)
			return EXR_ERR_CORRUPT_CHUNK;
		const float *src0 = scratch + (size_t)plane * cw * chh;
		int slot = widen && k == 1 ? 3 : k, copies = widen && k == 0 ? 3 : 1;
		for (size_t y = 0; y < chh; y++) {
			float *dst = out->pixels +
				     (((size_t)y0 + y) * (size_t)out->width + (size_t)x0) * stride + slot;
			const float *src = src0 + y * cw;
			for (size_t x = 0; x < cw; x++) {
				w->nonfinite += !isfinite(src[x]);
				for (int c = 0; c < copies; c++)
					dst[x * stride + c] = src[x];
			}
		}
	}
	return EXR_ERR_SUCCESS;
}

/* A frame's decoding, shared by its threads. */
struct dec_job {
	exr_context_t ctxt;
	const exr_attr_chlist_t *cl;
	const struct chan_map *m;
	struct image *out;
	int64_t ymin;             /* the data window's first line */
	int32_t lpc;              /* scanline files: lines a chunk */
	int tiled;
	uint32_t tw, th;          /* tiled files: the tile size */
	int64_t nx;               /* tiles across */
	size_t scratch_px, scratch_bytes;
	struct dec_worker w[PAR_MAX_THREADS];
};

/* par_each's item: chunk i (scanline chunks top down; tiles row by row), an exr_result_t. */
static int dec_item(void *ctx, int worker, size_t i)
{
	struct dec_job *J = ctx;
	struct dec_worker *w = &J->w[worker];
	exr_chunk_info_t ci;
	exr_result_t rv;
	int64_t x0, y0;
	if (!w->scratch && !(w->scratch = malloc(J->scratch_bytes)))
		return EXR_ERR_OUT_OF_MEMORY;
	if (!J->tiled) {
		rv = exr_read_scanline_chunk_info(J->ctxt, 0, (int)(J->ymin + (int64_t)i * J->lpc), &ci);
		x0 = 0;
		y0 = (int64_t)ci.start_y - J->ymin;
	} else {
		int64_t tx = (int64_t)(i % (size_t)J->nx), ty = (int64_t)(i / (size_t)J->nx);
		rv = exr_read_tile_chunk_info(J->ctxt, 0, (int)tx, (int)ty, 0, 0, &ci);
		x0 = tx * (int64_t)J->tw;
		y0 = ty * (int64_t)J->th;
	}
	if (!rv)
		rv = run_chunk(J->ctxt, &ci, w, J->cl, J->m, J->out, J->scratch_px, x0, y0);
	return rv;
}

int image_decode_exr(const unsigned char *buf, size_t len, const struct image_limits *lim,
		     struct image *out, struct image_info *info, char *err)
{
	return image_decode_exr_into(buf, len, lim, NULL, out, info, err);
}

int image_decode_exr_into(const unsigned char *buf, size_t len, const struct image_limits *lim,
			  const struct image_memory *mem, struct image *out,
			  struct image_info *info, char *err)
{
	struct exr_io io = { buf, len, { NULL, 0, 0 }, PTHREAD_MUTEX_INITIALIZER, "" };
	exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
	exr_context_t ctxt = NULL;
	int rc;
	exr_result_t rv;
	unsigned mw = lim->max_width ? lim->max_width : IMAGE_DEFAULT_MAX_WIDTH;
	unsigned mh = lim->max_height ? lim->max_height : IMAGE_DEFAULT_MAX_HEIGHT;
	init.user_data = &io;
	init.read_fn = mem_read;
	init.size_fn = mem_size;
	init.error_handler_fn = on_error;
	init.max_image_width = mw > 0x7fffffff ? 0x7fffffff : (int)mw;
	init.max_image_height = mh > 0x7fffffff ? 0x7fffffff : (int)mh;
	init.max_tile_width = EXR_TILE_MAX;
	init.max_tile_height = EXR_TILE_MAX;
	init.flags = EXR_CONTEXT_FLAG_DISABLE_CHUNK_RECONSTRUCTION;

	rv = exr_start_read(&ctxt, "<memory>", &init);
	if (rv) {
		/* a data window over the context's limits: report it as ours */
		if (rv == EXR_ERR_INVALID_ATTR && strstr(io.msg, "too large"))
			rc = image_fail(err, IMAGE_E_TOO_LARGE, "exr: header: %s", io.msg);
		else
			rc = exr_error(rv, &io, "header", err);
		goto done;
	}
	exr_storage_t storage;
	int parts = 0;
	if ((rv = exr_get_count(ctxt, &parts)) || parts < 1 ||
	    (rv = exr_get_storage(ctxt, 0, &storage))) {
		rc = exr_error(rv ? rv : EXR_ERR_FILE_BAD_HEADER, &io, "header", err);
		goto done;
	}
	if (storage != EXR_STORAGE_SCANLINE && storage != EXR_STORAGE_TILED) {
		rc = image_fail(err, IMAGE_E_UNSUPPORTED, "exr: deep data is not supported");
		goto done;
	}
	exr_attr_box2i_t dw;
	if ((rv = exr_get_data_window(ctxt, 0, &dw))) {
		rc = exr_error(rv, &io, "data window", err);
		goto done;
	}
	int64_t w = (int64_t)dw.max.x - dw.min.x + 1, h = (int64_t)dw.max.y - dw.min.y + 1;
	rc = image_check_limits(lim, w > 0 ? (unsigned long long)w : 0,
				h > 0 ? (unsigned long long)h : 0, "exr", err);
	if (rc)
		goto done;
	const exr_attr_chlist_t *cl;
	if ((rv = exr_get_channels(ctxt, 0, &cl)) || !cl) {
		rc = exr_error(rv ? rv : EXR_ERR_MISSING_REQ_ATTR, &io, "channels", err);
		goto done;
	}
	struct chan_map m;
	memset(&m, 0, sizeof m);
	rc = map_channels(cl, &m, err);
	if (rc)
		goto done;
	exr_compression_t comp;
	if ((rv = exr_get_compression(ctxt, 0, &comp))) {
		rc = exr_error(rv, &io, "compression", err);
		goto done;
	}
	if (comp == EXR_COMPRESSION_B44 || comp == EXR_COMPRESSION_B44A)
		for (int i = 0; i < cl->num_channels; i++)
			if (cl->entries[i].pixel_type != EXR_PIXEL_HALF) {
				/* OpenEXRCore 3.1 decodes these wrongly (silently); refuse them */
				rc = image_fail(err, IMAGE_E_UNSUPPORTED,
						"exr: B44 compression with 32-bit channels is not supported");
				goto done;
			}
	uint64_t chunk_bytes = 0;
	if ((rv = exr_get_chunk_unpacked_size(ctxt, 0, &chunk_bytes))) {
		rc = exr_error(rv, &io, "chunk size", err);
		goto done;
	}
	if (chunk_bytes > EXR_CHUNK_MAX) {
		rc = image_fail(err, IMAGE_E_TOO_LARGE,
				"exr: a chunk unpacks to %llu bytes (limit %llu)",
				(unsigned long long)chunk_bytes, (unsigned long long)EXR_CHUNK_MAX);
		goto done;
	}
	if (image_alloc_lent(mem, out, (int)w, (int)h)) {
		/* RGBA as image_alloc's zeroes and the fill below would widen to it: colours 0,
		 * alpha 1 where the file has none (written, never read: the chunks overwrite it) */
		float a = (m.ch == 2 || m.ch == 4) && m.src[m.ch - 1] >= 0 ? 0.0f : 1.0f;
		const float fill[4] = {0, 0, 0, a};
		size_t n = (size_t)w * (size_t)h;
		for (size_t i = 0; i < n; i++)
			memcpy(out->pixels + i * 4, fill, sizeof fill);
	} else if ((rc = image_alloc(out, (int)w, (int)h, m.ch))) {
		rc = image_fail(err, rc, "exr: cannot allocate %lldx%lld pixels", (long long)w,
				(long long)h);
		goto done;
	} else if (m.ch == 2 || m.ch == 4) { /* a missing alpha reads as opaque; absent colours 0 */
		size_t n = (size_t)w * (size_t)h;
		if (m.src[m.ch - 1] < 0)
			for (size_t i = 0; i < n; i++)
				out->pixels[i * m.ch + m.ch - 1] = 1.0f;
	}
	struct dec_job job;
	memset(&job, 0, sizeof job);
	job.ctxt = ctxt;
	job.cl = cl;
	job.m = &m;
	job.out = out;
	job.ymin = dw.min.y;
	size_t nchunks;
	if (storage == EXR_STORAGE_SCANLINE) {
		if ((rv = exr_get_scanlines_per_chunk(ctxt, 0, &job.lpc)) || job.lpc < 1) {
			rc = exr_error(rv ? rv : EXR_ERR_FILE_BAD_HEADER, &io, "lines per chunk", err);
			goto done;
		}
		job.scratch_px = (size_t)w * (size_t)(job.lpc < h ? job.lpc : h);
		nchunks = (size_t)((h + job.lpc - 1) / job.lpc);
	} else {
		exr_tile_level_mode_t lm;
		exr_tile_round_mode_t rm;
		if ((rv = exr_get_tile_descriptor(ctxt, 0, &job.tw, &job.th, &lm, &rm)) || !job.tw ||
		    !job.th) {
			rc = exr_error(rv ? rv : EXR_ERR_FILE_BAD_HEADER, &io, "tile description", err);
			goto done;
		}
		job.tiled = 1;
		job.nx = (w + job.tw - 1) / job.tw;
		int64_t ny = (h + job.th - 1) / job.th;
		job.scratch_px = (size_t)(job.tw < w ? job.tw : w) * (size_t)(job.th < h ? job.th : h);
		nchunks = (size_t)job.nx * (size_t)ny;
	}
	job.scratch_bytes = job.scratch_px * (size_t)cl->num_channels * sizeof(float);
	size_t failed = 0;
	/* a worker: its scratch planes, the chunk packed and unpacked, the inflated bytes */
	rv = par_each(nchunks, exr_threads(lim->threads, nchunks, chunk_bytes,
					   job.scratch_bytes + 3 * chunk_bytes), dec_item, &job,
		      &failed);
	for (int i = 0; i < PAR_MAX_THREADS; i++) {
		struct dec_worker *dw_ = &job.w[i];
		if (dw_->started)
			exr_decoding_destroy(ctxt, &dw_->d);
		free(dw_->scratch);
		free(dw_->z);
		if (dw_->inf)
			libdeflate_free_decompressor(dw_->inf);
	}
	if (rv) {
		char what[64];
		if (!job.tiled)
			snprintf(what, sizeof what, "scanline %lld",
				 (long long)(dw.min.y + (int64_t)failed * job.lpc));
		else
			snprintf(what, sizeof what, "tile %lld,%lld",
				 (long long)(failed % (size_t)job.nx), (long long)(failed / (size_t)job.nx));
		rc = rv == EXR_ERR_OUT_OF_MEMORY
			     ? image_fail(err, IMAGE_E_NOMEM, "exr: cannot allocate a chunk buffer")
			     : exr_error(rv, &io, what, err);
		goto done;
	}
	info->bits = m.bits;
	info->channels = m.ch;
	exr_attr_chromaticities_t cr;
	if (m.ch >= 3 && !exr_attr_get_chromaticities(ctxt, 0, "chromaticities", &cr)) {
		const float xy[8] = {cr.red_x, cr.red_y, cr.green_x, cr.green_y, cr.blue_x, cr.blue_y,
				     cr.white_x, cr.white_y};
		image_colour_set_chromaticities(info, xy);
	}
	for (int i = 0; i < PAR_MAX_THREADS; i++)
		info->nonfinite += job.w[i].nonfinite;
	info->float_format = 1;
	rc = 0;
done:
	if (ctxt)
		exr_finish(&ctxt);
	pthread_mutex_destroy(&io.lock);
	if (rc)
		image_free(out);
	return rc;
}

/* What writing f as a half float loses (IMAGE_LOST_RANGE: it rounds to infinity;
 * IMAGE_LOST_PRECISION: to another value; NaN and infinity lose nothing), from its bits: a half
 * keeps 11 significant bits down to 2^-14 and multiples of 2^-24 below. */
static unsigned half_loss(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	uint32_t a = u & 0x7fffffffu, ex = a >> 23, sig = (a & 0x7fffffu) | 0x800000u;
	if (ex == 0xff || a == 0)
		return 0;                    /* NaN, infinity, zero */
	if (a >= 0x477ff000u)                /* 65520 and up round to infinity */
		return IMAGE_LOST_RANGE;
	int e = (int)ex - 127;
	if (e >= -14)                        /* a normal half: 10 bits after the point */
		return (a & 0x1fffu) ? IMAGE_LOST_PRECISION : 0;
	if (ex == 0 || e < -24)              /* below half's smallest step */
		return IMAGE_LOST_PRECISION;
	return (sig & ((1u << (-e - 1)) - 1)) ? IMAGE_LOST_PRECISION : 0; /* multiples of 2^-24 */
}

/* half_loss over n samples: first a pass that only tells whether every sample is zero or in
 * half's normal range (most of an image; a loop without branches, which vectorises), then
 * sample by sample only where one is not. */
static unsigned half_losses(const float *v, size_t n)
{
	uint32_t low = 0, other = 0;
	for (size_t k = 0; k < n; k++) {
		uint32_t u;
		memcpy(&u, &v[k], sizeof u);
		uint32_t a = u & 0x7fffffffu;
		uint32_t normal = a - 0x38800000u < 0x477ff000u - 0x38800000u; /* 2^-14 to 65520 */
		low |= normal ? a & 0x1fffu : 0;
		other |= !normal & (a != 0);
	}
	if (!other)
		return low ? IMAGE_LOST_PRECISION : 0;
	unsigned l = 0;
	for (size_t k = 0; k < n; k++)
		l |= half_loss(v[k]);
	return l;
}

/* One encoded chunk, kept until the chunks before it are written. */
struct enc_chunk {
	uint8_t *p; /* malloc'd; freed once written */
	size_t n;
	int y;      /* its first line */
	int done;   /* encoded, waiting its turn (under enc_job.lock) */
};

/* One encoding thread's state: its pipeline and buffers, kept from chunk to chunk. */
struct enc_worker {
	exr_encode_pipeline_t e;
	int started;
	exr_result_t (*lib_compress)(exr_encode_pipeline_t *e); /* the library's own */
	struct enc_chunk *slot; /* where the chunk under way goes */
	uint8_t *t;             /* ZIP: predicted bytes; others: the packed bytes kept aside */
	size_t tcap;
	struct libdeflate_compressor *def;
	int level;              /* def's level */
	unsigned lost;          /* what the half samples of its chunks lost */
};

/* A frame's encoding, shared by its threads. */
struct enc_job {
	exr_context_t ctxt;
	int part, ch, bits, zip;
	int32_t lpc;
	const struct image *img;
	const char *const *names;
	struct enc_chunk *chunks;
	size_t nchunks;
	pthread_mutex_t lock; /* guards chunks[].done, written and the file's writing */
	size_t written;       /* chunks written to the file, in order */
	struct enc_worker w[PAR_MAX_THREADS];
};

/* Chunk i is encoded: it and every encoded chunk after it with none missing before are written
 * to the file (OpenEXR writes a scanline part's chunks in order), so a frame holds about one
 * encoded chunk a thread rather than all of them. An exr_result_t. */
static exr_result_t write_ready(struct enc_job *J, size_t i)
{
	exr_result_t rv = EXR_ERR_SUCCESS;
	pthread_mutex_lock(&J->lock);
	J->chunks[i].done = 1;
	while (!rv && J->written < J->nchunks && J->chunks[J->written].done) {
		struct enc_chunk *c = &J->chunks[J->written];
		rv = exr_write_scanline_chunk(J->ctxt, J->part, c->y, c->p, c->n);
		free(c->p);
		c->p = NULL;
		J->written++;
	}
	pthread_mutex_unlock(&J->lock);
	return rv;
}

/* compress_fn: the packed chunk compressed into the worker's slot. ZIP and ZIPS through
 * libdeflate (OpenEXR's predictor, then a zlib stream); others through the library. A chunk
 * that compression does not shrink is stored as its packed bytes, as the format says (a chunk
 * whose size is its unpacked size is raw): OpenEXRCore 3.1.5 writes a ZIP chunk that compresses
 * to exactly its packed size as it came out of zlib, which readers then take for raw bytes. */
static exr_result_t compress_chunk(exr_encode_pipeline_t *e)
{
	struct enc_worker *w = e->encoding_user_data;
	size_t n = (size_t)e->packed_bytes, m = 0;
	uint8_t *out = malloc(n ? n : 1);
	if (!out || grow(&w->t, &w->tcap, n)) {
		free(out);
		return EXR_ERR_OUT_OF_MEMORY;
	}
	if (w->lib_compress == NULL) { /* ZIP, ZIPS */
		if (!w->def && !(w->def = libdeflate_alloc_compressor(w->level))) {
			free(out);
			return EXR_ERR_OUT_OF_MEMORY;
		}
		zip_predict(w->t, e->packed_buffer, n);
		m = n > 1 ? libdeflate_zlib_compress(w->def, w->t, n, out, n - 1) : 0;
		if (!m) /* no smaller than the packed bytes */
			memcpy(out, e->packed_buffer, m = n);
	} else {
		memcpy(w->t, e->packed_buffer, n); /* the library may work in place */
		exr_result_t rv = w->lib_compress(e);
		if (rv) {
			free(out);
			return rv;
		}
		if (e->compressed_bytes < n)
			memcpy(out, e->compressed_buffer, m = (size_t)e->compressed_bytes);
		else
			memcpy(out, w->t, m = n);
	}
	w->slot->p = out;
	w->slot->n = m;
	return EXR_ERR_SUCCESS;
}

/* par_each's item: chunk i packed and compressed into J->chunks[i], an exr_result_t. */
static int enc_item(void *ctx, int worker, size_t i)
{
	struct enc_job *J = ctx;
	struct enc_worker *w = &J->w[worker];
	const struct image *img = J->img;
	int y = (int)i * J->lpc, ch = J->ch;
	exr_chunk_info_t ci;
	exr_result_t rv = exr_write_scanline_chunk_info(J->ctxt, J->part, y, &ci);
	if (rv)
		return rv;
	rv = w->started ? exr_encoding_update(J->ctxt, J->part, &ci, &w->e)
			: exr_encoding_initialize(J->ctxt, J->part, &ci, &w->e);
	if (rv)
		return rv;
	exr_encode_pipeline_t *e = &w->e;
	for (int c = 0; c < e->channel_count; c++) {
		exr_coding_channel_info_t *cc = &e->channels[c];
		int slot = 0;
		for (int k = 0; k < ch; k++)
			if (!strcmp(J->names[k], cc->channel_name))
				slot = k;
		cc->user_data_type = EXR_PIXEL_FLOAT;
		cc->user_bytes_per_element = 4;
		cc->user_pixel_stride = ch * 4;
		cc->user_line_stride = img->width * ch * 4;
		cc->encode_from_ptr =
		    (const uint8_t *)(img->pixels + (size_t)y * img->width * ch + slot);
	}
	if (!w->started) {
		w->started = 1;
		rv = exr_encoding_choose_default_routines(J->ctxt, J->part, e);
		if (rv)
			return rv;
		if (e->compress_fn) {
			w->lib_compress = J->zip ? NULL : e->compress_fn;
			e->compress_fn = compress_chunk;
		}
		/* write_ready writes the chunks, in order */
		e->yield_until_ready_fn = NULL;
		e->write_fn = NULL;
	}
	e->encoding_user_data = w;
	w->level = J->bits == 16 ? EXR_DEFLATE_HALF : EXR_DEFLATE_FLOAT;
	w->slot = &J->chunks[i];
	w->slot->y = y;
	rv = exr_encoding_run(J->ctxt, J->part, e);
	if (!rv && !w->slot->p) { /* uncompressed: the packed bytes */
		size_t n = (size_t)e->packed_bytes;
		if (!(w->slot->p = malloc(n ? n : 1)))
			return EXR_ERR_OUT_OF_MEMORY;
		memcpy(w->slot->p, e->packed_buffer, n);
		w->slot->n = n;
	}
	if (!rv && J->bits == 16) { /* what the chunk's samples lose as half */
		size_t a = (size_t)y * img->width * ch, b = (size_t)(y + ci.height) * img->width * ch;
		w->lost |= half_losses(img->pixels + a, b - a);
	}
	if (!rv)
		rv = write_ready(J, i);
	return rv;
}

int image_encode_exr(const struct image *img, const struct image_encode_opts *o,
		     unsigned char **out, size_t *out_len, unsigned *lost, char *err)
{
	int bits = o->bits ? o->bits : 16;
	if (bits != 16 && bits != 32)
		return image_fail(err, IMAGE_E_ARG, "exr: %d bits is not 16 (half) or 32 (float)", bits);
	static const exr_compression_t comps[IMAGE_EXR_COMPRESSION_COUNT] = {
		[IMAGE_EXR_ZIP] = EXR_COMPRESSION_ZIP,   [IMAGE_EXR_NONE] = EXR_COMPRESSION_NONE,
		[IMAGE_EXR_RLE] = EXR_COMPRESSION_RLE,   [IMAGE_EXR_ZIPS] = EXR_COMPRESSION_ZIPS,
		[IMAGE_EXR_PIZ] = EXR_COMPRESSION_PIZ,
	};
	if (o->exr_compression < 0 || o->exr_compression >= IMAGE_EXR_COMPRESSION_COUNT)
		return image_fail(err, IMAGE_E_ARG, "exr: no compression %d", o->exr_compression);
	exr_compression_t comp = comps[o->exr_compression];
	int ch = img->channels;
	static const char *names[5][4] = { { 0 }, { "Y" }, { "Y", "A" }, { "R", "G", "B" },
					   { "R", "G", "B", "A" } };

	struct exr_io io = { NULL, 0, { NULL, 0, 0 }, PTHREAD_MUTEX_INITIALIZER, "" };
	exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
	exr_context_t ctxt = NULL;
	struct enc_job job;
	memset(&job, 0, sizeof job);
	pthread_mutex_init(&job.lock, NULL);
	size_t nchunks = 0;
	int part, rc = 0;
	exr_result_t rv;
	init.user_data = &io;
	init.write_fn = mem_write;
	init.error_handler_fn = on_error;
	rv = exr_start_write(&ctxt, "<memory>", EXR_WRITE_FILE_DIRECTLY, &init);
	if (!rv)
		rv = exr_add_part(ctxt, NULL, EXR_STORAGE_SCANLINE, &part);
	if (!rv)
		rv = exr_initialize_required_attr_simple(ctxt, part, img->width, img->height, comp);
	for (int c = 0; c < ch && !rv; c++)
		rv = exr_add_channel(ctxt, part, names[ch][c],
				     bits == 16 ? EXR_PIXEL_HALF : EXR_PIXEL_FLOAT,
				     EXR_PERCEPTUALLY_LOGARITHMIC, 1, 1);
	if (!rv && o->colour && !o->colour->srgb && o->colour->chrm) {
		const float *xy = o->colour->xy;
		exr_attr_chromaticities_t cr = {xy[0], xy[1], xy[2], xy[3], xy[4], xy[5], xy[6], xy[7]};
		rv = exr_attr_set_chromaticities(ctxt, part, "chromaticities", &cr);
	}
	if (!rv)
		rv = exr_write_header(ctxt);
	if (!rv)
		rv = exr_get_scanlines_per_chunk(ctxt, part, &job.lpc);
	if (!rv && job.lpc < 1)
		rv = EXR_ERR_INVALID_ARGUMENT;
	if (!rv) {
		nchunks = (size_t)((img->height + job.lpc - 1) / job.lpc);
		if (!(job.chunks = calloc(nchunks, sizeof *job.chunks)))
			rv = EXR_ERR_OUT_OF_MEMORY;
	}
	if (!rv) {
		job.ctxt = ctxt;
		job.part = part;
		job.ch = ch;
		job.bits = bits;
		job.zip = comp == EXR_COMPRESSION_ZIP || comp == EXR_COMPRESSION_ZIPS;
		job.img = img;
		job.names = names[ch];
		job.nchunks = nchunks;
		uint64_t chunk_bytes = (uint64_t)img->width * (uint64_t)job.lpc * (uint64_t)ch *
				       (uint64_t)(bits / 8);
		/* a worker: the chunk packed, compressed, kept aside, and its bytes waiting */
		rv = par_each(nchunks, exr_threads(o->threads, nchunks, chunk_bytes, 4 * chunk_bytes),
			      enc_item, &job, NULL);
		if (!rv && job.written != nchunks)
			rv = EXR_ERR_INCORRECT_CHUNK;
	}
	for (int i = 0; i < PAR_MAX_THREADS; i++) {
		struct enc_worker *w = &job.w[i];
		if (w->started)
			exr_encoding_destroy(ctxt, &w->e);
		free(w->t);
		if (w->def)
			libdeflate_free_compressor(w->def);
		*lost |= w->lost;
	}
	for (size_t i = 0; job.chunks && i < nchunks; i++)
		free(job.chunks[i].p);
	free(job.chunks);
	pthread_mutex_destroy(&job.lock);
	exr_result_t frv = ctxt ? exr_finish(&ctxt) : EXR_ERR_SUCCESS;
	if (!rv)
		rv = frv;
	pthread_mutex_destroy(&io.lock);
	if (rv) {
		rc = image_fail(err, rv == EXR_ERR_OUT_OF_MEMORY ? IMAGE_E_NOMEM : IMAGE_E_ARG,
				"exr: encoding: %s%s%s", exr_get_error_code_as_string(rv),
				io.msg[0] ? ": " : "", io.msg);
		free(io.out.p);
		return rc;
	}
	*out = io.out.p;
	*out_len = io.out.len;
	return 0;
}
