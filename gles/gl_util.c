/* GL error names and checks, storage buffers made and grown; see gl_util.h. */
#include "gles/gl_util.h"

#include <GLES3/gl31.h>
#include <stdio.h>

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

int gl_buf_grow(unsigned *buf, size_t *have, size_t need, char err[GL_BUF_ERR_LEN])
{
	if (*buf && need <= *have)
		return 0;
	if (!*buf)
		glGenBuffers(1, buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, *buf);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(need ? need : 4), NULL, GL_DYNAMIC_COPY);
	GLenum e = glGetError();
	if (e != GL_NO_ERROR) {
		while (glGetError() != GL_NO_ERROR) {
		}
		*have = 0;
		snprintf(err, GL_BUF_ERR_LEN, "a buffer of %zu bytes: %s", need, gl_error_name(e));
		return e == GL_OUT_OF_MEMORY ? GL_BUF_E_OOM : GL_BUF_E_GPU;
	}
	*have = need;
	return 0;
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
