/* The GL plumbing every gles module shares: error names and checks; storage buffers made, grown
 * (plain or persistently mapped), mapped and read in one place, so that no allocation or map
 * goes unchecked; fences made, waited for and polled one way.
 *
 * GL contract: on the context's thread; gl_buf_new, gl_buf_grow, gl_buf_grow_mapped and
 * gl_buf_read leave the buffer bound to GL_SHADER_STORAGE_BUFFER, gl_buf_map_read to the target
 * it is given; a failure drains glGetError. Fences are GLsync values passed as void *. */
#ifndef FFTBLOOM_GL_UTIL_H
#define FFTBLOOM_GL_UTIL_H

#include <stddef.h>

#include "core/log.h"

#define GL_BUF_ERR_LEN 96

enum gl_buf_error {
	GL_BUF_OK = 0,
	GL_BUF_E_OOM = -1, /* GL_OUT_OF_MEMORY: the size does not fit the GPU now */
	GL_BUF_E_GPU = -2, /* any other GL error */
};

/* "GL_INVALID_OPERATION" and so on; "GL_UNKNOWN_ERROR" for a code it does not know. */
const char *gl_error_name(unsigned code);

/* Checks (and drains) glGetError; on an error logs "what: GL_..." and returns -1, else 0. */
int gl_check(const struct log_sink *log, const char *what);

/* A new storage buffer of bytes (at least 4), filled from data unless NULL, with usage: its
 * name, or 0 (nothing left behind; *gl_err, when given, holds the GL error). */
unsigned gl_buf_new(size_t bytes, const void *data, unsigned usage, unsigned *gl_err);

/* Makes *buf (a new buffer when 0) hold at least need bytes, re-specified (contents not kept)
 * with usage only when *have is smaller. 0, or GL_BUF_E_OOM / GL_BUF_E_GPU with "a buffer of N
 * bytes: GL_..." in err (NULL: not wanted) and *have 0. */
int gl_buf_grow(unsigned *buf, size_t *have, size_t need, unsigned usage,
                char err[GL_BUF_ERR_LEN]);

/* 1 when GL_EXT_buffer_storage's entry point is there (gl_buf_grow_mapped can work). */
int gl_buf_storage_available(void);
/* As gl_buf_grow for a buffer only the GPU writes and reads (shaders, buffer copies): with
 * immutable storage (GL_EXT_buffer_storage, `storage` 1 and the entry point there) and no
 * mapping or client-storage flag, which leaves the driver no reason to keep it in host memory,
 * made anew when *have is smaller; else gl_buf_grow with GL_DYNAMIC_COPY. Such a buffer refuses
 * glBufferSubData and mapping. Same returns as gl_buf_grow. */
int gl_buf_grow_device(unsigned *buf, size_t *have, size_t need, int storage,
                       char err[GL_BUF_ERR_LEN]);
/* As gl_buf_grow for a buffer kept mapped, persistent and coherent (GL_EXT_buffer_storage):
 * made anew when *have is smaller (deleting the old one unmaps it), *map its mapping. access:
 * GL_MAP_READ_BIT for the CPU reading it, GL_MAP_WRITE_BIT for writing, or both. 0, or
 * GL_BUF_E_OOM with *buf 0, *have 0 and *map NULL. */
int gl_buf_grow_mapped(unsigned *buf, size_t *have, unsigned char **map, size_t need,
                       unsigned access);

/* Binds buf to target and maps its first bytes for reading: the mapping, or NULL with the GL
 * error in *gl_err (when given). gl_buf_unmap(target) ends it while buf is bound there. */
const void *gl_buf_map_read(unsigned target, unsigned buf, size_t bytes, unsigned *gl_err);
void gl_buf_unmap(unsigned target);
/* The first bytes of buf copied into dst (mapped for reading, then unmapped). 0, or -1 with the
 * GL error in *gl_err (when given). */
int gl_buf_read(unsigned buf, void *dst, size_t bytes, unsigned *gl_err);

/* Host transfers of buffers only the GPU touches (gl_buf_grow_device). With `mapped` set by
 * the owner (GL_EXT_buffer_storage there) the staging buffers are mapped once, persistently
 * (gl_buf_grow_mapped), and kept at the largest size seen: an upload is a copy into the write
 * buffer, then a copy on the GPU into dst (fenced: the next upload waits for it before it
 * writes); a read-back a copy on the GPU into the read buffer, a fence waited for, a copy out.
 * Without it (or when such a buffer cannot be made) an upload is a GL_STREAM_DRAW buffer's data
 * copied on the GPU, a read-back a copy into a GL_STREAM_READ buffer then mapped. A driver's
 * GL_STREAM_DRAW data is new storage each call, and its read-back mapping may be uncached:
 * the mapped path measured faster on NVIDIA (bench/RESULTS.md, "Tensor transfers").
 * Zero-initialised; gl_stage_free deletes its buffers. */
struct gl_stage {
	int mapped;                      /* the owner's choice, above */
	unsigned up, down;
	size_t down_bytes;
	unsigned mup, mdown;             /* the mapped staging buffers */
	size_t mup_bytes, mdown_bytes;
	unsigned char *mup_map, *mdown_map;
	void *mup_fence;                 /* the last copy out of mup */
};
/* bytes of src into dst's first bytes (0 bytes: nothing). 0, or GL_BUF_E_OOM / GL_BUF_E_GPU
 * with "uploading N bytes: GL_..." in err (NULL: not wanted), or GL_BUF_E_GPU with "uploading
 * N bytes: the GPU did not finish within 60 s" when the last upload's copy out of the mapped
 * buffer never ended. */
int gl_stage_upload(struct gl_stage *st, unsigned dst, const void *src, size_t bytes,
                    char err[GL_BUF_ERR_LEN]);
/* src's first bytes into dst. Same returns, "reading back N bytes: GL_..." or "... the GPU
 * did not finish within 60 s" in err. */
int gl_stage_download(struct gl_stage *st, unsigned src, void *dst, size_t bytes,
                      char err[GL_BUF_ERR_LEN]);
void gl_stage_free(struct gl_stage *st);

/* The first bytes of src copied into dst on the GPU (no host copy), both buffer objects of the
 * current context's share group; binds them to GL_COPY_READ_BUFFER and GL_COPY_WRITE_BUFFER.
 * 0, or -1 when either is not a buffer or holds fewer than bytes (*have: src's or dst's size,
 * whichever is short; 0 for no buffer), or a GL error (in *gl_err when given). */
int gl_buf_copy(unsigned src, unsigned dst, size_t bytes, long long *have, unsigned *gl_err);

/* gl_buf_copy of a caller's buffer into (into 1) or out of an engine's, the failure said in err
 * (len bytes) naming the caller's buffer: 0, -1 for the caller's (too small, no buffer), -2
 * for a GL error. */
int gl_buf_copy_said(unsigned from, unsigned to, size_t bytes, int into, char *err, size_t len);

#define GL_FENCE_WAIT_MS 60000 /* gl_fence_wait gives up after this: a hung GPU */

/* A fence after every command issued so far, or NULL when none could be made (glFinish then,
 * where the caller would have waited for it later). */
void *gl_fence_new(void);
/* Waits for fence f, then deletes it: 1 when its commands completed, 0 after GL_FENCE_WAIT_MS
 * (or for f NULL). Blocks inside the driver rather than polling, which costs throughput
 * (bench/RESULTS.md, log of decisions: "fences polled"). */
int gl_fence_wait(void *f);
/* Polls fence f without waiting: 0 while its commands run, 1 once signalled (or when the wait
 * fails, as on a lost context: nothing more is read). */
int gl_fence_passed(void *f);
void gl_fence_free(void *f); /* deletes it; NULL-safe */

struct egl_info;
struct gles_cancel;

/* Groups a dispatch holds at most on a software renderer (llvmpipe), where a dispatch runs to
 * its end before the next call returns, unless one z layer alone holds more: the shared
 * convolution's groups are heavy (a 32x8 tile of several output planes), so a layer of 64 of
 * them, 128x128 by 128x3x3, takes about half a second on two cores, and a cancellation is seen
 * that soon. A GPU takes the device's largest z at once. */
#define GL_SOFT_DISPATCH_GROUPS 64

/* Dispatches gx x gy x nz groups in z slices (the device's largest z, or on a software renderer
 * slices of about GL_SOFT_DISPATCH_GROUPS groups), each told its first z through the uniform at
 * z0_loc; cancel (NULL: none) is looked at before each. 0, or -1 when cancelled. */
int gl_dispatch_z(const struct egl_info *info, struct gles_cancel *cancel, int z0_loc, int gx,
                  int gy, long nz);

/* A compute program from one source string, uncached (benchmarks' probes; the engine's programs
 * go through gles/program.h): its id, or 0 with the compiler's or linker's log in log. */
unsigned gl_compute_program(const char *src, char *log, size_t len);

#endif
