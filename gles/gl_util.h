/* The GL plumbing every gles module shares: error names and checks, and storage buffers made and
 * grown in one place, so that no allocation goes unchecked.
 *
 * GL contract: on the context's thread; gl_buf_new and gl_buf_grow leave the buffer bound to
 * GL_SHADER_STORAGE_BUFFER; the checks drain glGetError. */
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
 * only when *have is smaller, with usage GL_DYNAMIC_COPY. 0, or GL_BUF_E_OOM / GL_BUF_E_GPU with
 * "a buffer of N bytes: GL_..." in err and *have 0. */
int gl_buf_grow(unsigned *buf, size_t *have, size_t need, char err[GL_BUF_ERR_LEN]);

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

#endif
