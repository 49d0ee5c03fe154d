/* Upload buffers a bloom context lends to decoders, so that a frame's planes are decoded where
 * the GPU reads them: made and grown by the context's thread as frames ask for them, taken and
 * given back from any thread (atomic states), fenced while the GPU reads them; see bloom.h
 * (bloom_upload_take) and bloom_internal.h (struct bloom_upload). */
#include "gles/bloom_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void bloom_uploads_init(struct bloom_ctx *b)
{
	atomic_init(&b->lent.need, 0);
	/* upload buffers to lend only where they can stay mapped; none made until asked for */
	b->lent.uploads =
		b->xfer.persistent ? calloc(BLOOM_UPLOAD_SLOTS, sizeof *b->lent.uploads) : NULL;
	for (int i = 0; b->lent.uploads && i < BLOOM_UPLOAD_SLOTS; i++) {
		b->lent.uploads[i].ctx = b;
		atomic_init(&b->lent.uploads[i].bytes, 0);
		atomic_init(&b->lent.uploads[i].state, 0);
	}
}

/* Sleeps 1 ms while *flag has any of bits, up to *waited < wait_ms in all; 1 if it still has. */
static int wait_clear(atomic_uint *flag, unsigned bits, int *waited, int wait_ms)
{
	for (; *waited < wait_ms && (atomic_load(flag) & bits); ++*waited)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	return (atomic_load(flag) & bits) != 0;
}

void bloom_uploads_free(struct bloom_ctx *b, int wait_ms, int waited)
{
	/* a decoder may still be writing one: they are waited for (up to wait_ms in all, waited
	 * of it spent already), and one that does not come back stays mapped with its record
	 * (never freed), so that its holder's late bloom_upload_return touches memory that still
	 * exists */
	int kept = 0;
	for (int i = 0; b->lent.uploads && i < BLOOM_UPLOAD_SLOTS; i++) {
		struct bloom_upload *u = &b->lent.uploads[i];
		gl_fence_free(u->fence);
		u->fence = 0;
		if (wait_clear(&u->state, UPLOAD_LENT, &waited, wait_ms))
			kept++;
		else if (u->buf)
			glDeleteBuffers(1, &u->buf);
	}
	if (kept)
		log_sinkf(&b->log, LOG_WARN, "bloom: %d lent upload buffer(s) not returned within "
		          "%d ms; left mapped", kept, wait_ms);
	else
		free(b->lent.uploads);
	b->lent.uploads = NULL;
}

struct bloom_upload *bloom_upload_take(struct bloom_ctx *b, size_t bytes)
{
	if (!b || !b->lent.uploads || !bytes)
		return NULL;
	/* the smallest free buffer that holds them; another taker may win it: look again */
	for (int tries = 0; tries < 8; tries++) {
		struct bloom_upload *fit = NULL;
		size_t fit_bytes = 0;
		for (int i = 0; i < BLOOM_UPLOAD_SLOTS; i++) {
			struct bloom_upload *u = &b->lent.uploads[i];
			size_t have = atomic_load_explicit(&u->bytes, memory_order_relaxed);
			if (have >= bytes && (!fit || have < fit_bytes) &&
			    !atomic_load_explicit(&u->state, memory_order_relaxed))
				fit = u, fit_bytes = have;
		}
		if (!fit)
			break;
		unsigned free_state = 0;
		if (!atomic_compare_exchange_strong_explicit(&fit->state, &free_state, UPLOAD_LENT,
		                                             memory_order_acquire,
		                                             memory_order_relaxed))
			continue;
		/* made anew between the look and the take (a failed growth leaves none) */
		if (atomic_load_explicit(&fit->bytes, memory_order_relaxed) >= bytes && fit->map)
			return fit;
		atomic_store_explicit(&fit->state, 0, memory_order_release);
	}
	return NULL;
}

void bloom_upload_want(struct bloom_ctx *b, size_t bytes)
{
	if (!b || !b->lent.uploads || !bytes || bytes > BLOOM_UPLOAD_MAX_ONE)
		return;
	size_t need = atomic_load_explicit(&b->lent.need, memory_order_relaxed);
	while (need < bytes && !atomic_compare_exchange_weak_explicit(&b->lent.need, &need, bytes,
	                                                             memory_order_relaxed,
	                                                             memory_order_relaxed)) {
	}
}

unsigned char *bloom_upload_map(const struct bloom_upload *u)
{
	return u ? u->map : NULL;
}

void bloom_upload_return(struct bloom_upload *u)
{
	if (u)
		atomic_fetch_and_explicit(&u->state, ~(unsigned)UPLOAD_LENT, memory_order_release);
}

int bloom_upload_tend(struct bloom_ctx *b)
{
	if (!b->lent.uploads)
		return 0;
	size_t total = 0;
	for (int i = 0; i < BLOOM_UPLOAD_SLOTS; i++) {
		struct bloom_upload *u = &b->lent.uploads[i];
		total += atomic_load_explicit(&u->bytes, memory_order_relaxed);
		if (!u->fence)
			continue;
		/* polled, never waited for: a failed wait (a lost context) reads nothing more */
		if (!gl_fence_passed(u->fence))
			continue;
		gl_fence_free(u->fence);
		u->fence = 0;
		atomic_fetch_and_explicit(&u->state, ~(unsigned)UPLOAD_FLIGHT, memory_order_release);
	}
	size_t need = atomic_exchange_explicit(&b->lent.need, 0, memory_order_relaxed);
	if (!need)
		return 0;
	if (need > ((size_t)-1) - BLOOM_UPLOAD_ROUND)
		return 0;
	need = (need + BLOOM_UPLOAD_ROUND - 1) / BLOOM_UPLOAD_ROUND * BLOOM_UPLOAD_ROUND;
	/* one free buffer smaller than asked (one not made yet first: it is the smallest), made
	 * anew at that size while all stay within BLOOM_UPLOAD_BYTES; a busy one waits for a
	 * later take to ask again */
	struct bloom_upload *g = NULL;
	size_t g_bytes = 0;
	for (int i = 0; i < BLOOM_UPLOAD_SLOTS; i++) {
		struct bloom_upload *u = &b->lent.uploads[i];
		size_t have = atomic_load_explicit(&u->bytes, memory_order_relaxed);
		if (have < need && (!g || have < g_bytes) &&
		    !atomic_load_explicit(&u->state, memory_order_relaxed))
			g = u, g_bytes = have;
	}
	unsigned free_state = 0;
	if (!g || total - g_bytes + need > BLOOM_UPLOAD_BYTES ||
	    !atomic_compare_exchange_strong_explicit(&g->state, &free_state, UPLOAD_GROWING,
	                                             memory_order_acquire, memory_order_relaxed))
		return 0;
	/* a decoder writes the planes, and the GPU reads them: mapped for writing only, which lets
	 * the driver keep them where the GPU reads fast (mapped for reading too, the unpack pass
	 * took 1.2 ms a 1080p frame on the H200 against 0.3-0.45); a frame run in tiles, converted
	 * on the CPU, reads them through bloom_upload_read */
	size_t have = g_bytes;
	int rc = bloom_grow_mapped(b, &g->buf, &have, &g->map, need, GL_MAP_WRITE_BIT);
	if (rc)
		log_sinkf(&b->log, LOG_WARN, "bloom: no upload buffer of %zu bytes to lend "
		          "(out of memory)", need);
	atomic_store_explicit(&g->bytes, have, memory_order_relaxed);
	atomic_store_explicit(&g->state, 0, memory_order_release);
	return !rc;
}

int bloom_upload_copy_out(struct bloom_ctx *b, const struct bloom_upload *lent, size_t used,
                          void *dst, char err[BLOOM_ERR_LEN])
{
	int rc = bloom_ystage_grow(b, used, err);
	if (rc)
		return rc;
	glBindBuffer(GL_COPY_READ_BUFFER, lent->buf);
	glBindBuffer(GL_COPY_WRITE_BUFFER, b->xfer.ystage);
	glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)used);
	glFinish();
	const unsigned char *m = b->xfer.ystage_map;
	if (!m) /* no persistent mapping: mapped for this read */
		m = gl_buf_map_read(GL_COPY_WRITE_BUFFER, b->xfer.ystage, used, NULL);
	if (!m) {
		snprintf(err, BLOOM_ERR_LEN, "the upload buffer could not be read");
		return BLOOM_E_GPU;
	}
	memcpy(dst, m, used);
	if (!b->xfer.ystage_map)
		gl_buf_unmap(GL_COPY_WRITE_BUFFER);
	return 0;
}

int bloom_upload_read(struct bloom_ctx *b, const struct bloom_frame *fin, struct yuv_image *copy,
                      char err[BLOOM_ERR_LEN])
{
	const struct yuv_image *y = fin->yuv;
	size_t used = yuv_image_used_bytes(y); /* of the data: what is read back */
	memset(copy, 0, sizeof *copy);
	if (!fin->upload || fin->upload->ctx != b)
		return 0;
	unsigned char *data = malloc(used);
	if (!data) {
		snprintf(err, BLOOM_ERR_LEN, "out of memory");
		return BLOOM_E_NOMEM;
	}
	char why[BLOOM_ERR_LEN];
	int rc = bloom_upload_copy_out(b, fin->upload, used, data, why);
	if (rc) {
		free(data);
		snprintf(err, BLOOM_ERR_LEN, "planes: %.200s", why);
		return rc;
	}
	*copy = *y;
	copy->release = NULL;
	copy->owner = NULL;
	copy->data = data;
	copy->bytes = used;
	return 0;
}
