/* GL error names and checks, storage buffers made, grown and mapped, fences; see gl_util.h. */
#include "gles/gl_util.h"

#include <EGL/egl.h>
#include <GLES3/gl31.h>
#include <GLES2/gl2ext.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gles/cancel.h"
#include "gles/egl.h"

const char *gl_error_name(unsigned code)
{
	switch (code) {
	case GL_NO_ERROR: return "GL_NO_ERROR";
	case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
	case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
	case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
	case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
	case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
	}
	return "GL_UNKNOWN_ERROR";
}

int gl_check(const struct log_sink *log, const char *what)
{
	GLenum e = glGetError();
	if (e == GL_NO_ERROR)
		return 0;
	log_sinkf(log, LOG_ERROR, "%s: %s", what, gl_error_name(e));
	while (glGetError() != GL_NO_ERROR) {
	}
	return -1;
}

unsigned gl_buf_new(size_t bytes, const void *data, unsigned usage, unsigned *gl_err)
{
	GLuint id = 0;
	glGenBuffers(1, &id);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, id);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(bytes < 4 ? 4 : bytes), data, usage);
	GLenum e = glGetError();
	if (gl_err)
		*gl_err = e;
	if (e != GL_NO_ERROR) {
		while (glGetError() != GL_NO_ERROR) {
		}
		glDeleteBuffers(1, &id);
		return 0;
	}
	return id;
}

int gl_buf_grow(unsigned *buf, size_t *have, size_t need, unsigned usage,
                char err[GL_BUF_ERR_LEN])
{
	if (*buf && need <= *have)
		return 0;
	if (!*buf)
		glGenBuffers(1, buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, *buf);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(need ? need : 4), NULL, usage);
	GLenum e = glGetError();
	if (e != GL_NO_ERROR) {
		while (glGetError() != GL_NO_ERROR) {
		}
		*have = 0;
		if (err)
			snprintf(err, GL_BUF_ERR_LEN, "a buffer of %zu bytes: %s", need, gl_error_name(e));
		return e == GL_OUT_OF_MEMORY ? GL_BUF_E_OOM : GL_BUF_E_GPU;
	}
	*have = need;
	return 0;
}

static PFNGLBUFFERSTORAGEEXTPROC buffer_storage;
static pthread_once_t buffer_storage_once = PTHREAD_ONCE_INIT;

static void buffer_storage_resolve(void)
{
	buffer_storage = (PFNGLBUFFERSTORAGEEXTPROC)eglGetProcAddress("glBufferStorageEXT");
}

int gl_buf_storage_available(void)
{
	pthread_once(&buffer_storage_once, buffer_storage_resolve);
	return buffer_storage != NULL;
}

int gl_buf_grow_device(unsigned *buf, size_t *have, size_t need, int storage,
                       char err[GL_BUF_ERR_LEN])
{
	if (!storage || !gl_buf_storage_available())
		return gl_buf_grow(buf, have, need, GL_DYNAMIC_COPY, err);
	if (*buf && need <= *have)
		return 0;
	if (*buf)
		glDeleteBuffers(1, buf);
	*have = 0;
	glGenBuffers(1, buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, *buf);
	buffer_storage(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(need ? need : 4), NULL, 0);
	GLenum e = glGetError();
	if (e != GL_NO_ERROR) {
		while (glGetError() != GL_NO_ERROR) {
		}
		glDeleteBuffers(1, buf);
		*buf = 0;
		if (err)
			snprintf(err, GL_BUF_ERR_LEN, "a device buffer of %zu bytes: %s", need,
			         gl_error_name(e));
		return e == GL_OUT_OF_MEMORY ? GL_BUF_E_OOM : GL_BUF_E_GPU;
	}
	*have = need;
	return 0;
}

int gl_buf_grow_mapped(unsigned *buf, size_t *have, unsigned char **map, size_t need,
                       unsigned access)
{
	if (need <= *have && *buf)
		return 0;
	if (*buf)
		glDeleteBuffers(1, buf); /* unmaps it */
	*buf = 0, *have = 0, *map = NULL;
	if (!gl_buf_storage_available())
		return GL_BUF_E_GPU;
	GLbitfield f = access | GL_MAP_PERSISTENT_BIT_EXT | GL_MAP_COHERENT_BIT_EXT;
	glGenBuffers(1, buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, *buf);
	buffer_storage(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)need, NULL, f);
	if (glGetError() == GL_NO_ERROR)
		*map = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)need, f);
	if (!*map) {
		glDeleteBuffers(1, buf);
		*buf = 0;
		while (glGetError() != GL_NO_ERROR) {
		}
		return GL_BUF_E_OOM;
	}
	*have = need;
	return 0;
}

const void *gl_buf_map_read(unsigned target, unsigned buf, size_t bytes, unsigned *gl_err)
{
	glBindBuffer(target, buf);
	const void *m = glMapBufferRange(target, 0, (GLsizeiptr)bytes, GL_MAP_READ_BIT);
	if (!m) {
		GLenum e = glGetError();
		while (glGetError() != GL_NO_ERROR) {
		}
		if (gl_err)
			*gl_err = e;
	}
	return m;
}

void gl_buf_unmap(unsigned target)
{
	glUnmapBuffer(target);
}

int gl_buf_read(unsigned buf, void *dst, size_t bytes, unsigned *gl_err)
{
	const void *m = gl_buf_map_read(GL_SHADER_STORAGE_BUFFER, buf, bytes, gl_err);
	if (!m)
		return -1;
	memcpy(dst, m, bytes);
	glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
	return 0;
}

/* The GL error drained, said in err after what: GL_BUF_E_OOM or GL_BUF_E_GPU. */
static int stage_failed(GLenum e, const char *what, size_t bytes, char err[GL_BUF_ERR_LEN])
{
	while (glGetError() != GL_NO_ERROR) {
	}
	if (err)
		snprintf(err, GL_BUF_ERR_LEN, "%s %zu bytes: %s", what, bytes, gl_error_name(e));
	return e == GL_OUT_OF_MEMORY ? GL_BUF_E_OOM : GL_BUF_E_GPU;
}

/* A transfer whose fence did not pass within GL_FENCE_WAIT_MS: GL_BUF_E_GPU, said in err. */
static int stage_timeout(const char *what, size_t bytes, char err[GL_BUF_ERR_LEN])
{
	if (err)
		snprintf(err, GL_BUF_ERR_LEN, "%s %zu bytes: the GPU did not finish within %d s", what,
		         bytes, GL_FENCE_WAIT_MS / 1000);
	return GL_BUF_E_GPU;
}

/* bytes into a mapped staging buffer of st (grown as needed); 0, or -1 when none can be made
 * (the caller goes the unmapped way). */
static int stage_mapped(struct gl_stage *st, int up, size_t bytes)
{
	if (!st->mapped || !gl_buf_storage_available())
		return -1;
	if (up)
		return gl_buf_grow_mapped(&st->mup, &st->mup_bytes, &st->mup_map, bytes, GL_MAP_WRITE_BIT)
		       ? -1 : 0;
	return gl_buf_grow_mapped(&st->mdown, &st->mdown_bytes, &st->mdown_map, bytes,
	                          GL_MAP_READ_BIT) ? -1 : 0;
}

/* bytes of buffer src copied into buffer dst on the GPU (bound to the copy targets). */
static void stage_copy(unsigned src, unsigned dst, size_t bytes)
{
	glBindBuffer(GL_COPY_READ_BUFFER, src);
	glBindBuffer(GL_COPY_WRITE_BUFFER, dst);
	glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)bytes);
}

int gl_stage_upload(struct gl_stage *st, unsigned dst, const void *src, size_t bytes,
                    char err[GL_BUF_ERR_LEN])
{
	while (glGetError() != GL_NO_ERROR) { /* an earlier call's error is not this one's */
	}
	if (!bytes)
		return 0; /* nothing to copy (a pending fence stays with its buffer) */
	if (st->mup_fence) { /* the last copy out of the mapped buffer ends before it is written */
		int done = gl_fence_wait(st->mup_fence);
		st->mup_fence = NULL;
		if (!done) { /* a copy still reads it: the next upload gets a buffer of its own */
			glDeleteBuffers(1, &st->mup);
			st->mup = 0, st->mup_bytes = 0, st->mup_map = NULL;
			return stage_timeout("uploading", bytes, err);
		}
	}
	if (!stage_mapped(st, 1, bytes)) {
		memcpy(st->mup_map, src, bytes);
		stage_copy(st->mup, dst, bytes);
		st->mup_fence = gl_fence_new();
		GLenum e = glGetError();
		return e == GL_NO_ERROR && st->mup_fence ? 0 : stage_failed(e, "uploading", bytes, err);
	}
	if (!st->up)
		glGenBuffers(1, &st->up);
	glBindBuffer(GL_COPY_READ_BUFFER, st->up);
	glBufferData(GL_COPY_READ_BUFFER, (GLsizeiptr)bytes, src, GL_STREAM_DRAW);
	stage_copy(st->up, dst, bytes);
	GLenum e = glGetError();
	return e == GL_NO_ERROR ? 0 : stage_failed(e, "uploading", bytes, err);
}

int gl_stage_download(struct gl_stage *st, unsigned src, void *dst, size_t bytes,
                      char err[GL_BUF_ERR_LEN])
{
	while (glGetError() != GL_NO_ERROR) {
	}
	if (bytes && !stage_mapped(st, 0, bytes)) {
		stage_copy(src, st->mdown, bytes);
		glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT_EXT);
		GLenum e = glGetError();
		void *f = e == GL_NO_ERROR ? gl_fence_new() : NULL;
		if (!f)
			return stage_failed(e != GL_NO_ERROR ? e : glGetError(), "reading back", bytes, err);
		if (!gl_fence_wait(f))
			return stage_timeout("reading back", bytes, err);
		memcpy(dst, st->mdown_map, bytes);
		return 0;
	}
	int rc = gl_buf_grow(&st->down, &st->down_bytes, bytes, GL_STREAM_READ, err);
	if (rc)
		return rc;
	stage_copy(src, st->down, bytes);
	GLenum e = glGetError();
	unsigned gl_err = 0;
	if (e == GL_NO_ERROR && !gl_buf_read(st->down, dst, bytes, &gl_err))
		return 0;
	return stage_failed(e != GL_NO_ERROR ? e : gl_err, "reading back", bytes, err);
}

void gl_stage_free(struct gl_stage *st)
{
	gl_fence_free(st->mup_fence);
	unsigned b[4] = {st->up, st->down, st->mup, st->mdown};
	glDeleteBuffers(4, b); /* deleting unmaps; 0 names are ignored */
	int mapped = st->mapped;
	memset(st, 0, sizeof *st);
	st->mapped = mapped;
}

int gl_buf_copy(unsigned src, unsigned dst, size_t bytes, long long *have, unsigned *gl_err)
{
	GLint64 ssz = 0, dsz = 0;
	while (glGetError() != GL_NO_ERROR) {
	}
	if (!src || !dst || !glIsBuffer(src) || !glIsBuffer(dst)) {
		if (have)
			*have = 0;
		return -1;
	}
	glBindBuffer(GL_COPY_READ_BUFFER, src);
	glBindBuffer(GL_COPY_WRITE_BUFFER, dst);
	glGetBufferParameteri64v(GL_COPY_READ_BUFFER, GL_BUFFER_SIZE, &ssz);
	glGetBufferParameteri64v(GL_COPY_WRITE_BUFFER, GL_BUFFER_SIZE, &dsz);
	if ((unsigned long long)ssz < bytes || (unsigned long long)dsz < bytes) {
		if (have)
			*have = (long long)((unsigned long long)ssz < bytes ? ssz : dsz);
		return -1;
	}
	glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)bytes);
	GLenum e = glGetError();
	if (e != GL_NO_ERROR) {
		if (gl_err)
			*gl_err = e;
		if (have)
			*have = -1;
		return -1;
	}
	return 0;
}

int gl_buf_copy_said(unsigned from, unsigned to, size_t bytes, int into, char *err, size_t len)
{
	long long have = 0;
	unsigned gl_err = 0;
	if (!gl_buf_copy(from, to, bytes, &have, &gl_err))
		return 0;
	const char *what = into ? "input" : "output";
	if (have > 0)
		snprintf(err, len, "the %s buffer %u is too small (%lld bytes; the tensor needs %zu)",
		         what, into ? from : to, have, bytes);
	else if (!have)
		snprintf(err, len, "the %s buffer %u is not a buffer object of this context", what,
		         into ? from : to);
	else
		snprintf(err, len, "copying the %s buffer: %s", what, gl_error_name(gl_err));
	return have >= 0 ? -1 : -2;
}

void *gl_fence_new(void)
{
	return glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
}

int gl_fence_wait(void *f)
{
	if (!f)
		return 0;
	GLenum w = GL_TIMEOUT_EXPIRED;
	for (int i = 0; i < GL_FENCE_WAIT_MS / 100 && w == GL_TIMEOUT_EXPIRED; i++)
		w = glClientWaitSync(f, GL_SYNC_FLUSH_COMMANDS_BIT, 100000000ull); /* 100 ms */
	glDeleteSync(f);
	return w == GL_ALREADY_SIGNALED || w == GL_CONDITION_SATISFIED;
}

int gl_fence_passed(void *f)
{
	return glClientWaitSync(f, 0, 0) != GL_TIMEOUT_EXPIRED;
}

void gl_fence_free(void *f)
{
	if (f)
		glDeleteSync(f);
}

int gl_dispatch_z(const struct egl_info *info, struct gles_cancel *cancel, int z0_loc, int gx,
                  int gy, long nz)
{
	long step = info->max_group_count[2] > 0 ? info->max_group_count[2] : 65535;
	long layer = (long)gx * gy;
	if (info->software && layer > 0 && GL_SOFT_DISPATCH_GROUPS / layer < step)
		step = GL_SOFT_DISPATCH_GROUPS / layer > 0 ? GL_SOFT_DISPATCH_GROUPS / layer : 1;
	for (long z0 = 0; z0 < nz; z0 += step) {
		if (gles_cancelled(cancel))
			return -1;
		glUniform1i(z0_loc, (int)z0);
		glDispatchCompute((GLuint)gx, (GLuint)gy, (GLuint)(nz - z0 < step ? nz - z0 : step));
	}
	return 0;
}

unsigned gl_compute_program(const char *src, char *log, size_t len)
{
	GLuint sh = glCreateShader(GL_COMPUTE_SHADER), p = glCreateProgram();
	glShaderSource(sh, 1, &src, NULL);
	glCompileShader(sh);
	GLint ok = 0;
	glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
	if (len)
		log[0] = 0;
	if (ok) {
		glAttachShader(p, sh);
		glLinkProgram(p);
		glGetProgramiv(p, GL_LINK_STATUS, &ok);
		if (!ok && len)
			glGetProgramInfoLog(p, (GLsizei)len, NULL, log);
	} else if (len) {
		glGetShaderInfoLog(sh, (GLsizei)len, NULL, log);
	}
	glDeleteShader(sh);
	if (!ok) {
		glDeleteProgram(p);
		return 0;
	}
	return p;
}
