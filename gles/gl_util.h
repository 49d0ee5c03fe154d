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

#endif
