/* OpenEXR through the OpenEXRCore C API, reading from and writing to memory: the first part of a
 * file, scanline or tiled (level 0), any compression the library decodes, half / float / uint
 * channels Y, RGB, with or without A; written as one ZIP-compressed scanline part in half or
 * float. OpenEXRCore 3.1 cannot decode DWAA/DWAB (refused as unsupported) and mis-decodes B44
 * with 32-bit channels (refused before decoding). The data window is checked against the limits before any pixel buffer exists. */
#include <math.h>
#include <OpenEXR/openexr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/image_codec.h"

#define EXR_CHUNK_MAX ((uint64_t)256 << 20) /* largest unpacked chunk we let the library build */
#define EXR_TILE_MAX 8192                    /* largest tile side accepted */

struct exr_io {
	const unsigned char *p; /* read: the file */
	size_t len;
	struct image_buf out;   /* write: the file being built */
	char msg[160];          /* the library's last error message */
};

static void on_error(exr_const_context_t ctxt, exr_result_t code, const char *msg)
{
	void *ud = NULL;
	(void)code;
	if (ctxt && exr_get_user_data(ctxt, &ud) == EXR_ERR_SUCCESS && ud)
		snprintf(((struct exr_io *)ud)->msg, sizeof ((struct exr_io *)ud)->msg, "%s", msg);
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

/* Decodes one chunk whose top-left pixel is (x0, y0) in data-window coordinates: initialises the
 * pipeline on the first chunk, updates it after, then interleaves the wanted planes into out.
 * scratch holds scratch_px samples per file channel. */
static exr_result_t run_chunk(exr_context_t ctxt, const exr_chunk_info_t *ci,
			      exr_decode_pipeline_t *d, int *started, const exr_attr_chlist_t *cl,
			      const struct chan_map *m, struct image *out, float *scratch,
			      size_t scratch_px, int64_t x0, int64_t y0)
{
	exr_result_t rv;
	if (ci->width < 1 || ci->height < 1 || x0 < 0 || y0 < 0 || x0 + ci->width > out->width ||
	    y0 + ci->height > out->height || (size_t)ci->width * (size_t)ci->height > scratch_px)
		return EXR_ERR_CORRUPT_CHUNK; /* a chunk outside the data window */
	size_t cw = (size_t)ci->width, chh = (size_t)ci->height;
	if (!*started) {
		rv = exr_decoding_initialize(ctxt, 0, ci, d);
		if (rv)
			return rv;
		*started = 1;
		if (d->channel_count != cl->num_channels)
			return EXR_ERR_CORRUPT_CHUNK;
		aim_decoder(d, scratch, cw, chh);
		rv = exr_decoding_choose_default_routines(ctxt, 0, d);
	} else {
		rv = exr_decoding_update(ctxt, 0, ci, d);
		aim_decoder(d, scratch, cw, chh);
	}
	if (!rv)
		rv = exr_decoding_run(ctxt, 0, d);
	if (rv)
		return rv;
	int ch = m->ch;
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
		for (size_t y = 0; y < chh; y++) {
			float *dst = out->pixels + (((size_t)y0 + y) * (size_t)out->width + (size_t)x0) * ch + k;
			const float *src = src0 + y * cw;
			for (size_t x = 0; x < cw; x++)
				dst[x * ch] = src[x];
		}
	}
	return EXR_ERR_SUCCESS;
}

int image_decode_exr(const unsigned char *buf, size_t len, const struct image_limits *lim,
		     struct image *out, struct image_info *info, char *err)
{
	struct exr_io io = { buf, len, { NULL, 0, 0 }, "" };
	exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
	exr_context_t ctxt = NULL;
	exr_decode_pipeline_t dec = EXR_DECODE_PIPELINE_INITIALIZER;
	float *scratch = NULL;
	size_t scratch_px = 0;
	int started = 0, rc;
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
	rc = image_alloc(out, (int)w, (int)h, m.ch);
	if (rc) {
		rc = image_fail(err, rc, "exr: cannot allocate %lldx%lld pixels", (long long)w,
				(long long)h);
		goto done;
	}
	if (m.ch == 2 || m.ch == 4) { /* a missing alpha reads as opaque; absent colours as 0 */
		size_t n = (size_t)w * (size_t)h;
		if (m.src[m.ch - 1] < 0)
			for (size_t i = 0; i < n; i++)
				out->pixels[i * m.ch + m.ch - 1] = 1.0f;
	}
	exr_chunk_info_t ci;
	if (storage == EXR_STORAGE_SCANLINE) {
		int32_t lpc = 0;
		if ((rv = exr_get_scanlines_per_chunk(ctxt, 0, &lpc)) || lpc < 1) {
			rc = exr_error(rv ? rv : EXR_ERR_FILE_BAD_HEADER, &io, "lines per chunk", err);
			goto done;
		}
		scratch_px = (size_t)w * (size_t)(lpc < h ? lpc : h);
		scratch = malloc(scratch_px * (size_t)cl->num_channels * sizeof(float));
		if (!scratch) {
			rc = image_fail(err, IMAGE_E_NOMEM, "exr: cannot allocate a chunk buffer");
			goto done;
		}
		for (int64_t y = dw.min.y; y <= dw.max.y; y += lpc) {
			rv = exr_read_scanline_chunk_info(ctxt, 0, (int)y, &ci);
			if (!rv)
				rv = run_chunk(ctxt, &ci, &dec, &started, cl, &m, out, scratch,
					       scratch_px, 0, (int64_t)ci.start_y - dw.min.y);
			if (rv) {
				char what[64];
				snprintf(what, sizeof what, "scanline %lld", (long long)y);
				rc = exr_error(rv, &io, what, err);
				goto done;
			}
		}
	} else {
		uint32_t tw, th;
		exr_tile_level_mode_t lm;
		exr_tile_round_mode_t rm;
		if ((rv = exr_get_tile_descriptor(ctxt, 0, &tw, &th, &lm, &rm)) || !tw || !th) {
			rc = exr_error(rv ? rv : EXR_ERR_FILE_BAD_HEADER, &io, "tile description", err);
			goto done;
		}
		int64_t nx = (w + tw - 1) / tw, ny = (h + th - 1) / th;
		scratch_px = (size_t)(tw < w ? tw : w) * (size_t)(th < h ? th : h);
		scratch = malloc(scratch_px * (size_t)cl->num_channels * sizeof(float));
		if (!scratch) {
			rc = image_fail(err, IMAGE_E_NOMEM, "exr: cannot allocate a tile buffer");
			goto done;
		}
		for (int64_t ty = 0; ty < ny; ty++)
			for (int64_t tx = 0; tx < nx; tx++) {
				rv = exr_read_tile_chunk_info(ctxt, 0, (int)tx, (int)ty, 0, 0, &ci);
				if (!rv)
					rv = run_chunk(ctxt, &ci, &dec, &started, cl, &m, out,
						       scratch, scratch_px, tx * (int64_t)tw,
						       ty * (int64_t)th);
				if (rv) {
					char what[64];
					snprintf(what, sizeof what, "tile %lld,%lld", (long long)tx,
						 (long long)ty);
					rc = exr_error(rv, &io, what, err);
					goto done;
				}
			}
	}
	info->bits = m.bits;
	info->channels = m.ch;
	info->float_format = 1;
	rc = 0;
done:
	if (started)
		exr_decoding_destroy(ctxt, &dec);
	if (ctxt)
		exr_finish(&ctxt);
	free(scratch);
	if (rc)
		image_free(out);
	return rc;
}

/* Float -> half -> float with round-to-nearest-even, for reporting what a half file loses. */
static float through_half(float f)
{
	if (!isfinite(f) || f == 0)
		return f;
	float a = fabsf(f);
	if (a >= 65520.0f) /* rounds to infinity */
		return copysignf(INFINITY, f);
	int e;
	frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
	int q = e - 11; /* half keeps 11 significant bits */
	if (q < -24)
		q = -24; /* subnormal half spacing is 2^-24 */
	float step = ldexpf(1.0f, q);
	return copysignf(nearbyintf(a / step) * step, f);
}

/* The packed chunk of the encode in progress on this thread, kept by compress_keeping_raw. */
static _Thread_local struct {
	void *p;
	size_t cap;
	exr_result_t (*compress)(exr_encode_pipeline_t *e); /* the library's own */
} raw_copy;

/* The library's compression, except that a chunk compression cannot shrink is stored as its
 * packed bytes: OpenEXRCore 3.1.5 writes such a ZIP chunk of 32-bit channels with the packed
 * size but other bytes (a reader then sees garbage), so the packed bytes are kept aside first
 * and put back where the library fell back to them. */
static exr_result_t compress_keeping_raw(exr_encode_pipeline_t *e)
{
	size_t n = (size_t)e->packed_bytes;
	if (n > raw_copy.cap) {
		void *q = realloc(raw_copy.p, n);
		if (!q)
			return EXR_ERR_OUT_OF_MEMORY;
		raw_copy.p = q;
		raw_copy.cap = n;
	}
	memcpy(raw_copy.p, e->packed_buffer, n);
	exr_result_t rv = raw_copy.compress(e);
	if (rv == EXR_ERR_SUCCESS && e->compressed_bytes >= n) {
		memcpy(e->packed_buffer, raw_copy.p, n);
		if (e->compressed_buffer && e->compressed_alloc_size >= n)
			memcpy(e->compressed_buffer, raw_copy.p, n);
		e->compressed_bytes = n;
	}
	return rv;
}

int image_encode_exr(const struct image *img, const struct image_encode_opts *o,
		     unsigned char **out, size_t *out_len, unsigned *lost, char *err)
{
	int bits = o->bits ? o->bits : 16;
	if (bits != 16 && bits != 32)
		return image_fail(err, IMAGE_E_ARG, "exr: %d bits is not 16 (half) or 32 (float)", bits);
	int ch = img->channels;
	static const char *names[5][4] = { { 0 }, { "Y" }, { "Y", "A" }, { "R", "G", "B" },
					   { "R", "G", "B", "A" } };
	size_t n = (size_t)img->width * (size_t)img->height * (size_t)ch;
	if (bits == 16)
		for (size_t i = 0; i < n; i++) {
			float v = img->pixels[i], hv = through_half(v);
			if (isinf(hv) && !isinf(v))
				*lost |= IMAGE_LOST_RANGE;
			else if (hv != v && !(isnan(v)))
				*lost |= IMAGE_LOST_PRECISION;
		}

	struct exr_io io = { NULL, 0, { NULL, 0, 0 }, "" };
	exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
	exr_context_t ctxt = NULL;
	exr_encode_pipeline_t enc = EXR_ENCODE_PIPELINE_INITIALIZER;
	int started = 0, part, rc = 0;
	exr_result_t rv;
	init.user_data = &io;
	init.write_fn = mem_write;
	init.error_handler_fn = on_error;
	rv = exr_start_write(&ctxt, "<memory>", EXR_WRITE_FILE_DIRECTLY, &init);
	if (!rv)
		rv = exr_add_part(ctxt, NULL, EXR_STORAGE_SCANLINE, &part);
	if (!rv)
		rv = exr_initialize_required_attr_simple(ctxt, part, img->width, img->height,
							 EXR_COMPRESSION_ZIP);
	for (int c = 0; c < ch && !rv; c++)
		rv = exr_add_channel(ctxt, part, names[ch][c],
				     bits == 16 ? EXR_PIXEL_HALF : EXR_PIXEL_FLOAT,
				     EXR_PERCEPTUALLY_LOGARITHMIC, 1, 1);
	if (!rv)
		rv = exr_write_header(ctxt);
	int32_t lpc = 0;
	if (!rv)
		rv = exr_get_scanlines_per_chunk(ctxt, part, &lpc);
	for (int y = 0; !rv && y < img->height; y += lpc) {
		exr_chunk_info_t ci;
		rv = exr_write_scanline_chunk_info(ctxt, part, y, &ci);
		if (rv)
			break;
		rv = started ? exr_encoding_update(ctxt, part, &ci, &enc)
			     : exr_encoding_initialize(ctxt, part, &ci, &enc);
		if (rv)
			break;
		for (int i = 0; i < enc.channel_count; i++) {
			exr_coding_channel_info_t *c = &enc.channels[i];
			int slot = 0;
			for (int k = 0; k < ch; k++)
				if (!strcmp(names[ch][k], c->channel_name))
					slot = k;
			c->user_data_type = EXR_PIXEL_FLOAT;
			c->user_bytes_per_element = 4;
			c->user_pixel_stride = ch * 4;
			c->user_line_stride = img->width * ch * 4;
			c->encode_from_ptr = (const uint8_t *)(img->pixels +
							       (size_t)y * img->width * ch + slot);
		}
		if (!started) {
			started = 1;
			rv = exr_encoding_choose_default_routines(ctxt, part, &enc);
			if (rv)
				break;
			if (enc.compress_fn) {
				raw_copy.compress = enc.compress_fn;
				enc.compress_fn = compress_keeping_raw;
			}
		}
		rv = exr_encoding_run(ctxt, part, &enc);
	}
	if (started)
		exr_encoding_destroy(ctxt, &enc);
	free(raw_copy.p);
	memset(&raw_copy, 0, sizeof raw_copy);
	exr_result_t frv = ctxt ? exr_finish(&ctxt) : EXR_ERR_SUCCESS;
	if (!rv)
		rv = frv;
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
